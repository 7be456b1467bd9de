"""The Winograd toy task, in its leaky form and its fixed form.

    the {x} did not cross the {y} because it was too {adj} , so the {ref} waited .

Crosser adjectives make "it" the one that crosses (ref = x); crossed adjectives make it the
thing crossed (ref = y). A model is trained as an ordinary next-token predictor and scored
only on the word after "so the".

* leaky: x is always an animal and y a place, so the adjective's *category* names the
  referent, and a bag of words (which nouns, which adjective) answers without any order.
* fixed: one pool of 16 nouns, each allowed in either slot, and a held-out set made of pairs
  whose *reversed* order was in training. Anything that knows which two nouns are present but
  not which came first must answer backwards there.
"""
import random
from dataclasses import dataclass
from itertools import permutations

import torch

from model.gpt import GPT, GPTConfig
from model.stack import Stack
from model.attention_maps import capture_attention

from .train import FIRST_LOSSES, fit

TEMPLATE = "the {x} did not cross the {y} because it was too {adj} , so the {ref} waited ."
CROSSER = ("tired", "scared", "slow", "weak")   # "it" crosses: ref = x
CROSSED = ("wet", "wide", "busy", "steep")      # "it" is crossed: ref = y
ADJECTIVES = CROSSER + CROSSED
NOUNS = ("animal", "street", "dog", "river", "horse", "road", "child", "bridge",
         "farmer", "field", "soldier", "square", "bird", "hill", "cat", "park")
ANIMALS = ("animal", "dog", "horse", "bird", "cat", "cow", "fox", "goat")
PLACES = ("street", "river", "road", "bridge", "field", "square", "hill", "park")
X_AT, Y_AT, ADJ_AT, REF_AT = 1, 6, 11, 15  # word positions in the 18-word sentence
QUERY_AT = REF_AT - 1                       # the referent is predicted from "the" at 14
WORDS = len(TEMPLATE.split())               # 18: one sentence is one window
PREDICTIONS = WORDS - 1                     # next-word predictions per training sentence
BATCH = 64                                  # training sentences per step


@dataclass(frozen=True)
class Example:
    x: str
    y: str
    adj: str

    @property
    def ref(self) -> str:
        return self.x if self.adj in CROSSER else self.y

    @property
    def other(self) -> str:
        return self.y if self.ref == self.x else self.x

    def words(self) -> list[str]:
        return TEMPLATE.format(x=self.x, y=self.y, adj=self.adj, ref=self.ref).split()


@dataclass(frozen=True)
class Task:
    name: str
    train: tuple[Example, ...]
    held_out: tuple[Example, ...]

    @property
    def vocab(self) -> tuple[str, ...]:
        words = {w for ex in self.train + self.held_out for w in ex.words()}
        return tuple(sorted(words))

    def encode(self, examples) -> torch.Tensor:
        index = {w: i for i, w in enumerate(self.vocab)}
        return torch.tensor([[index[w] for w in ex.words()] for ex in examples])  # (N, 18)


def _with_adjectives(pairs):
    return tuple(Example(x, y, a) for x, y in pairs for a in ADJECTIVES)


def all_fixed_sentences() -> tuple[Example, ...]:
    """Every sentence of the fixed design: 16 x 15 ordered pairs x 8 adjectives."""
    return _with_adjectives(permutations(NOUNS, 2))


# Held-out sizes whose counts can give the chapter's figures (docs/reference/setup-audit.md §5): 92.7 % and
# 27.9 % (IT L219, L239) are k/n for no n = 8 x pairs below 344 (43 pairs: 319 and 96); 91.7 %
# (L209) is 110/120 (15 pairs). Round sizes such as 40 and 16 pairs can give neither.
FIXED_HELD_PAIRS, LEAKY_HELD_PAIRS = 43, 15


def fixed_task(held_pairs: int = FIXED_HELD_PAIRS, seed: int = 0) -> Task:
    """Hold out one order of ``held_pairs`` unordered pairs; train on the reversed order, and
    on both orders of every other pair."""
    rng = random.Random(seed)
    unordered = sorted({tuple(sorted(p)) for p in permutations(NOUNS, 2)})
    held = [tuple(rng.sample(p, 2)) for p in rng.sample(unordered, held_pairs)]  # random orientation
    held_set = set(held)
    train = [p for p in permutations(NOUNS, 2) if p not in held_set]
    return Task("fixed", _with_adjectives(train), _with_adjectives(held))


def leaky_task(held_pairs: int = LEAKY_HELD_PAIRS, seed: int = 0) -> Task:
    """Animals cross places; whole (animal, place) pairs are held out."""
    rng = random.Random(seed)
    pairs = [(a, p) for a in ANIMALS for p in PLACES]
    held = set(rng.sample(pairs, held_pairs))
    return Task("leaky", _with_adjectives([p for p in pairs if p not in held]), _with_adjectives(sorted(held)))


# ---- models and training ----------------------------------------------------------------

def model_config(task: Task, kind: str, d_model: int = 64) -> GPTConfig:
    """"bag" is the uniform causal average (embedding -> mean -> linear); "1-block" and
    "2-blocks" are pre-norm transformer blocks of 4 heads with learned positions."""
    base = GPTConfig(vocab_size=len(task.vocab), block_size=WORDS, d_model=d_model, n_head=4)
    if kind == "bag":
        return GPTConfig(vocab_size=len(task.vocab), block_size=WORDS, d_model=d_model, n_layer=1,
                         mixer="mean", residual=False, mlp=False, norm="none", ln_f=False,
                         positions="none", n_head=1, w_o=False)
    layers = {"1-block": 1, "2-blocks": 2}
    if kind not in layers:
        raise ValueError(f"unknown Winograd model {kind!r}; choose bag, 1-block or 2-blocks")
    return GPTConfig(**{**base.__dict__, "n_layer": layers[kind]})


@torch.no_grad()
def score(model: GPT, task: Task, examples) -> dict:
    """Accuracy at the word after "so the": over the whole vocabulary, and between the pair."""
    model.eval()
    idx = task.encode(examples)
    logits = model(idx[:, :QUERY_AT + 1])[:, QUERY_AT]  # (N, V)
    index = {w: i for i, w in enumerate(task.vocab)}
    ref = torch.tensor([index[e.ref] for e in examples])
    other = torch.tensor([index[e.other] for e in examples])
    pred = logits.argmax(-1)
    model.train()
    return {
        "accuracy": (pred == ref).double().mean().item(),
        "wrong_noun": (pred == other).double().mean().item(),           # the other noun of the pair
        "pair_accuracy": (logits.gather(1, ref[:, None]) > logits.gather(1, other[:, None])).double().mean().item(),
    }


def halves(examples: tuple[Example, ...]) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
    """Held-out sentences in two halves by pair, a pair's eight adjectives always together: the
    first, third, ... pair to choose a checkpoint on, the second, fourth, ... to report it on."""
    pairs = list(dict.fromkeys((e.x, e.y) for e in examples))
    select = set(pairs[0::2])
    return (tuple(e for e in examples if (e.x, e.y) in select),
            tuple(e for e in examples if (e.x, e.y) not in select))


def train_task(task: Task, kind: str, *, steps: int, seeds, lr: float = 3e-3, batch: int = BATCH,
               eval_every: int = 250, d_model: int = 64, progress=None,
               first_losses: list | None = None, select_apart: bool = False) -> tuple[Stack, list[list[dict]]]:
    """Next-token prediction on whole training sentences, one model per seed side by side;
    each model's held-out scores every ``eval_every`` steps and at the end. ``first_losses``,
    if given, receives each step's (M,) training losses for the first FIRST_LOSSES steps (a
    record's replay check). With ``select_apart``, each evaluation also scores the two
    ``halves`` of the held-out set ("select", "report"): scoring trains nothing, so the runs are
    the same."""
    stack = Stack(model_config(task, kind, d_model), seeds)
    opt = torch.optim.AdamW(stack.parameters(), lr=lr)
    data = task.encode(task.train)  # (N, 18)
    gens = [torch.Generator().manual_seed(s) for s in stack.seeds]

    def sentences(step):
        w = torch.stack([data[torch.randint(len(data), (batch,), generator=g)] for g in gens])  # (M, B, 18)
        return w[..., :-1], w[..., 1:]

    curves = [[] for _ in stack.seeds]
    parts = dict(zip(("select", "report"), halves(task.held_out))) if select_apart else {}

    def evaluate(step, _):
        if step % eval_every == 0 or step == steps:
            for m, curve in enumerate(curves):
                curve.append({"step": step, **score(stack.model(m), task, task.held_out),
                              **{k: score(stack.model(m), task, xs) for k, xs in parts.items()}})

    def keep(step, losses):
        if first_losses is not None and step <= FIRST_LOSSES:
            first_losses.append(losses.tolist())

    fit(stack, opt, sentences, steps, hooks=(evaluate, keep), progress=progress)
    return stack, curves


@torch.no_grad()
def attention_rows(model: GPT, task: Task, example: Example) -> list[torch.Tensor]:
    """Per block, the head-averaged attention row at the position that names the referent."""
    model.eval()
    idx = task.encode([example])[:, :QUERY_AT + 1]
    with capture_attention(model) as maps:
        model(idx)
    model.train()
    return [m.weights[0, :, QUERY_AT, :].mean(0) for m in maps]  # per block: (15,)


def format_row(words, row) -> str:
    """The chapter's print: token:weight for each visible token."""
    return " ".join(f"{w}:{x:.2f}" for w, x in zip(words, row.tolist()))
