"""Gradient norms per block at initialisation, before any step (IT 3.10, NORM-03).

The chapter reports, for 12 blocks at width 128, each block's gradient norm at initialisation
under pre- and post-norm, and states none of the measurement's settings. ``grad_norms``
measures them under one choice of each: which batch the loss is taken on, which inits the model
starts from; every reduction (over which parameters a block's norm is taken) is read from the
same gradients.
"""
import torch

from experiments.configs import shakespeare_config
from experiments.data import split
from experiments.train import token_batches
from model.gpt import GPT

BATCH, N_LAYER = 64, 12
BATCHES = ("real", "random", "mean8")  # the first batch a run sees; uniform random tokens; 8 averaged
REDUCTIONS = {"block": lambda name: True,  # a block's parameters, all or one sub-layer's
              "attention": lambda name: name.startswith("mix."),
              "mlp": lambda name: name.startswith("ff.")}


def grad_norms(tokens, seeds, batch: str = "real", init: str = "torch") -> dict:
    """reduction -> norm ("pre", "post") -> per seed, the 12 blocks' gradient norms of the mean
    cross-entropy at initialisation.

    ``batch``: ``"real"`` is the first batch of 64 windows a full-scale run of that seed would
    see; ``"random"`` is 64 windows of uniform random tokens; ``"mean8"`` averages the gradient
    over the first 8 real batches. ``init``: model/gpt.py's INITS. The model of seed s is built
    after ``torch.manual_seed(s)``."""
    if batch not in BATCHES:
        raise ValueError(f"batch must be one of {BATCHES}, got {batch!r}")
    train = torch.as_tensor(split(tokens)[0])
    out = {r: {"pre": [], "post": []} for r in REDUCTIONS}
    for norm in ("pre", "post"):
        cfg = shakespeare_config(n_layer=N_LAYER, norm=norm, init=init)
        for seed in seeds:
            if batch == "random":
                g = torch.Generator().manual_seed(seed)
                w = torch.randint(cfg.vocab_size, (1, BATCH, cfg.block_size + 1), generator=g)  # (1, B, T+1)
                batches = [(w[..., :-1], w[..., 1:])]
            else:
                draw = token_batches(train, (seed,), BATCH, cfg.block_size, "cpu")
                batches = [draw(i + 1) for i in range(8 if batch == "mean8" else 1)]  # each (1, B, T)
            torch.manual_seed(seed)
            model = GPT(cfg)
            for x, y in batches:  # the mean loss over the batches: the averaged gradient
                (model(x[0], y[0])[1] / len(batches)).backward()
            for r, keep in REDUCTIONS.items():
                out[r][norm].append([torch.sqrt(sum((p.grad ** 2).sum() for n, p in b.named_parameters()
                                                    if keep(n))).item() for b in model.blocks])
    return out
