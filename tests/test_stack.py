"""Seeds trained side by side (model/stack.py) follow the paths they follow alone.

Every family's CI runs are stacks, so every family's configuration is checked here: in
float64, a stack of two seeds and their two single runs, through the one training loop, end
within 1e-12 of each other, weights and logits. (In float32 they round differently, which is
why the run cache keys a run by the seeds it was stacked with.)
"""
from dataclasses import replace

import pytest
import torch

from suite.catalogue import DEPTH_CI, LADDER_CI, NORM_CI, POS_CI, SQRT_CI
from experiments.train import fit, token_batches
from experiments.winograd import fixed_task, model_config
from model import GPT
from experiments.configs import tiny_lab_config
from model.stack import Stack

SEEDS = (0, 1)  # two are a stack; more cost time and test nothing new


def _small(cfg):
    """The family's configuration at a size the fast tier can train in a blink."""
    return replace(cfg, vocab_size=40, d_model=16, block_size=8, n_layer=min(cfg.n_layer, 2),
                   n_positions=None if cfg.n_positions is None else 16,
                   d_head=None if cfg.d_head is None else min(cfg.d_head, 32))


# Every code path the families train: the ladder's rungs that add a module (the others only
# switch one on again), the undivided head, post-norm, and every positional scheme.
LADDER_PATHS = ("no-context", "mean+positions", "head-replacing", "4-heads", "+layernorm", "2-blocks")
CONFIGS = {
    **{f"ladder/{k}": _small({**LADDER_CI.arms, **DEPTH_CI.arms}[k]) for k in LADDER_PATHS},
    "sqrt/nodiv-1024": _small(SQRT_CI.arms["nodiv-1024"]),
    "norm/post": _small(NORM_CI.arms["post"]),
    **{f"positions/{k}": _small(POS_CI.arms[k]) for k in ("sinusoidal", "rope", "alibi")},
    "winograd/2-blocks": model_config(fixed_task(), "2-blocks", d_model=16),
    "winograd/bag": model_config(fixed_task(), "bag", d_model=16),
    "polish-lab": tiny_lab_config(),
}


def _train(cfg, seeds, tokens, steps=3):
    stack = Stack(cfg, seeds, dtype=torch.float64)
    opt = torch.optim.AdamW(stack.parameters(), lr=1e-2, weight_decay=0.1)
    fit(stack, opt, token_batches(tokens, seeds, 4, cfg.block_size, "cpu"), steps, lr=lambda s: 1e-2 * s / steps)
    return stack


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
@pytest.mark.parametrize("name", CONFIGS)
def test_a_stack_of_seeds_follows_each_single_run(name):
    cfg = CONFIGS[name]
    tokens = torch.randint(cfg.vocab_size, (500,), generator=torch.Generator().manual_seed(0))
    stacked = _train(cfg, SEEDS, tokens)
    x = tokens[:2 * cfg.block_size].view(2, cfg.block_size)  # (2, T)
    together = stacked.eval().logits(x)  # (M, 2, T, V)
    for m, seed in enumerate(SEEDS):
        alone = _train(cfg, (seed,), tokens)
        for k, p in alone.params.items():
            torch.testing.assert_close(stacked.params[k][m], p, rtol=0, atol=1e-12, msg=f"{name}: {k}, seed {seed}")
        torch.testing.assert_close(together[m], alone.eval().logits(x)[0], rtol=0, atol=1e-12)
        torch.testing.assert_close(stacked.model(m).double()(x), together[m], rtol=0, atol=1e-12)


@pytest.mark.fast
def test_stacked_seeds_start_from_their_own_single_initialisation():
    cfg = CONFIGS["ladder/+layernorm"]
    stacked = Stack(cfg, SEEDS)
    for m, seed in enumerate(SEEDS):
        torch.manual_seed(seed)
        for k, p in GPT(cfg).named_parameters():
            assert torch.equal(stacked.params[k][m], p), k


def _dropout_cfg():
    return replace(CONFIGS["ladder/2-blocks"], dropout=0.5)


@pytest.mark.fast
@pytest.mark.parametrize("seeds", [(0,), SEEDS], ids=["single", "stacked"])
def test_train_and_eval_switch_dropout_in_every_member(seeds):
    """train() and eval() act as on a module: every member's dropout on, then off."""
    stack = Stack(_dropout_cfg(), seeds)
    x = torch.randint(40, (2, 8), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        stack.eval()
        assert torch.equal(stack.logits(x), stack.logits(x))  # dropout off: deterministic
        assert all(not stack.model(m).training for m in range(len(seeds)))
        stack.train()  # no argument: training mode, as nn.Module.train()
        for m in range(len(seeds)):
            one = stack.model(m)
            assert one.training and not torch.equal(one(x), one(x))  # dropout on: passes differ
        # a stack draws its dropout under vmap: each member its own masks, call after call
        assert not torch.equal(stack.logits(x), stack.logits(x))
        assert torch.isfinite(stack.loss(x.expand(len(seeds), -1, -1), x.expand(len(seeds), -1, -1))).all()


@pytest.mark.fast
@pytest.mark.parametrize("seeds", [(0,), SEEDS], ids=["single", "stacked"])
def test_the_weights_live_once_on_the_device_asked_for(seeds):
    """Training runs on a GPU (the meta device stands in where there is none), and M seeds
    cost M models' memory: the module that only carries the code holds no weights."""
    stack = Stack(CONFIGS["ladder/2-blocks"], seeds, device="meta")
    assert {p.device.type for p in stack.parameters()} == {"meta"}
    if len(seeds) > 1:
        assert all(t.is_meta for t in [*stack.base.parameters(), *stack.base.buffers()])


@pytest.mark.fast
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_member_comes_back_on_the_stacks_device():
    stack = Stack(CONFIGS["ladder/2-blocks"], SEEDS, device="cuda")
    one = stack.model(1)
    for k, p in one.named_parameters():
        assert p.is_cuda and torch.equal(p, stack.params[k][1]), k
