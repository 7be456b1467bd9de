"""The Polish lab's training step, M tiny GPTs at once: our Stack under torch.func.vmap against
the same weights as hand-batched (M, ...) tensors with one bmm per layer.
Prints figures; asserts no time.

    PYTHONPATH=. CLAIMS_DATA_DIR=... python benchmarks/lab_batching.py [--steps 30] [--threads 1]

A step is what experiments.train.fit does for the lab: forward, loss.sum().backward() and the
lab's Adam (lr 3e-3), both arms through fit itself (so denormals are flushed alike). Before any
timing, float64 runs of both arms from the same weights on the same batches must give the same
losses. Random tokens stand in for the excerpts (a step's time does not depend on them); the
checkpoint evaluations are left out. The hand forward lives here only: it covers the lab's config.
"""
import argparse
import math
import statistics
from dataclasses import replace

import torch
import torch.nn.functional as F

from suite import settings

settings.exit_on_problem(settings.load())  # an entry point: CLAIMS_* read before the catalogue

from experiments.train import fit  # noqa: E402
from model.mask import causal_mask  # noqa: E402
from model.stack import Stack  # noqa: E402
from suite.catalogue import TINY_LAB  # noqa: E402

LAB = TINY_LAB.config


class Batched:
    """The Stack's weights, one (M, ...) tensor per name, and a forward of bmm's over them.
    Duck-types what fit uses of a Stack: train(), loss(x, y), parameters() (its device too)."""

    def __init__(self, stack: Stack):
        c = self.c = stack.config
        assert (c.mixer, c.norm, c.gelu, c.positions in ("learned", "none"), c.dropout, c.tie_weights,
                c.qkv_bias, c.o_bias, c.w_o, c.mlp, c.residual, c.ln_f, c.causal, c.scale_scores) == \
            ("attention", "pre", "exact", True, 0.0, False, False, False, True, True, True, True, True, True), c
        self.p = {k: v.detach().clone().requires_grad_(True) for k, v in stack.params.items()}

    def parameters(self):
        return list(self.p.values())

    def train(self, mode=True):
        return self

    def _ln(self, x, name):  # F.layer_norm takes one weight; each model has its own
        return F.layer_norm(x, x.shape[-1:]) * self.p[name + ".weight"][:, None] + self.p[name + ".bias"][:, None]

    def _lin(self, x, name):  # x (M, N, in) @ W^T (M, in, out) [+ b]: nn.Linear, M at once
        w, b = self.p[name + ".weight"].transpose(1, 2), self.p.get(name + ".bias")
        return torch.bmm(x, w) if b is None else torch.baddbmm(b[:, None], x, w)

    def loss(self, x, y):
        """x, y (M, B, T) -> (M,) mean cross-entropies, as Stack.loss."""
        c, p = self.c, self.p
        M, B, T = x.shape
        nh, hs = c.n_head, c.head_width
        h = p["tok.weight"][torch.arange(M)[:, None], x.reshape(M, -1)]  # (M, B*T, d)
        if c.positions == "learned":
            h = (h.view(M, B, T, -1) + p["pos.table.weight"][:, None, :T]).view(M, B * T, -1)  # (M, B*T, d)
        for i in range(c.n_layer):
            pre = f"blocks.{i}."
            q, k, v = self._lin(self._ln(h, pre + "ln_mix_in"), pre + "mix.qkv").split(nh * hs, -1)  # 3 x (M, B*T, nh*hs)
            q, k, v = (t.reshape(M * B, T, nh, hs).transpose(1, 2).reshape(M * B * nh, T, hs) for t in (q, k, v))  # (M*B*nh, T, hs)
            s = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(hs)  # (M*B*nh, T, T); divided, as attend does
            s = s.masked_fill(~causal_mask(T, x.device), float("-inf")).softmax(-1)
            a = torch.bmm(s, v).view(M * B, nh, T, hs).transpose(1, 2).reshape(M, B * T, nh * hs)  # (M, B*T, nh*hs)
            h = h + self._lin(a, pre + "mix.proj")
            f = F.gelu(self._lin(self._ln(h, pre + "ln_ff_in"), pre + "ff.fc"))
            h = h + self._lin(f, pre + "ff.proj")
        logits = self._lin(self._ln(h, "ln_f"), "head")  # (M, B*T, V)
        return F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").view(M, -1).mean(1)


def _data(M, steps, cfg, gen):
    """steps batches (x, y), each (M, B, T): made before the clock starts."""
    w = torch.randint(cfg.vocab_size, (steps, M, LAB.batch, cfg.block_size + 1), generator=gen)
    return lambda step: (w[(step - 1) % steps, ..., :-1], w[(step - 1) % steps, ..., 1:])


def _arms(M, cfg, dtype):
    stack = Stack(cfg, range(1, M + 1), dtype=dtype)
    return [(arm, torch.optim.Adam(arm.parameters(), lr=LAB.lr)) for arm in (stack, Batched(stack))]


def agreement(cfg, M=20, steps=5):
    """Largest |loss difference| over ``steps`` float64 steps of both arms, from the same weights."""
    batch, losses = _data(M, steps, cfg, torch.Generator().manual_seed(0)), ([], [])
    for (arm, opt), seen in zip(_arms(M, cfg, torch.float64), losses):
        fit(arm, opt, batch, steps, hooks=(lambda _, loss, seen=seen: seen.append(loss),))
    return max((a - b).abs().max().item() for a, b in zip(*losses)), losses[0][-1].mean().item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3, help="alternating timed rounds; the median is shown")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", default=f"20,{len(TINY_LAB.seeds) * TINY_LAB.excerpts},200")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    per_stack = len(TINY_LAB.seeds) * TINY_LAB.excerpts
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); lab: {LAB.steps} Adam steps, "
          f"batch {LAB.batch}, window 16, {per_stack} models per stack, 2 stacks (with/without positions)")
    for pe in ("learned", "none"):
        worst, mean = agreement(replace(LAB.model(), positions=pe))
        print(f"float64, positions={pe}: 5 steps x 20 models, max |loss vmap - loss bmm| = {worst:.1e} "
              f"(losses ~{mean:.3f})")
    cfg = LAB.model()
    print(f"\nfloat32, positions=learned; ms per step of the whole stack (median of {args.repeats} x {args.steps})")
    print(f"{'M':>5} {'vmap':>9} {'bmm':>9} {'speedup':>8}")
    ms = {}
    for M in map(int, args.models.split(",")):
        batch = _data(M, 16, cfg, torch.Generator().manual_seed(M))
        arms = _arms(M, cfg, torch.float32)
        times = [[], []]
        for arm, opt in arms:
            fit(arm, opt, batch, args.warmup)
        for _ in range(args.repeats):  # alternate, so that load on the other core hits both arms
            for t, (arm, opt) in zip(times, arms):
                t.append(1e3 * fit(arm, opt, batch, args.steps) / args.steps)
        ms[M] = a, b = statistics.median(times[0]), statistics.median(times[1])
        print(f"{M:>5} {a:>9.2f} {b:>9.2f} {a / b:>7.2f}x", flush=True)
    if per_stack in ms:
        a, b = ms[per_stack]
        print(f"\nthe lab's training, 2 stacks x {per_stack} models x {LAB.steps} steps (evaluations excluded): "
              f"vmap {2 * LAB.steps * a / 1e3:.0f} s, bmm {2 * LAB.steps * b / 1e3:.0f} s")


if __name__ == "__main__":
    main()
