"""M GPTs of one config, trained side by side: their weights stacked on a leading axis.

Each model is initialised from its own seed, exactly as ``torch.manual_seed(s); GPT(config)``
would make it, then ``torch.func.vmap`` runs all M at once, so a step does a few large matmuls
instead of M rounds of small ones. The models share no weight, and Adam(W) works element by
element, so each follows the path it would follow alone (up to float rounding: in float64 the
stacked and single runs agree to 1e-12, see claims/test_stack.py).

With one model there is nothing to stack: the plain module runs, on PyTorch's ordinary path.
"""
import torch
from torch.func import functional_call, stack_module_state, vmap

from .gpt import GPT, GPTConfig


class Stack:
    def __init__(self, config: GPTConfig, seeds, *, device="cpu", dtype=torch.float32):
        self.config, self.seeds = config, tuple(seeds)
        models = []
        for s in self.seeds:
            torch.manual_seed(s)
            models.append(GPT(config).to(dtype))  # initialised on the CPU: the same weights anywhere
        models = [m.to(device) for m in models]
        if len(models) == 1:
            self.single = models[0]
            self.params, self.buffers = dict(self.single.named_parameters()), {}
        else:
            self.single = None
            self.params, self.buffers = stack_module_state(models)  # name -> (M, *shape)
            self.base = GPT(config).to("meta")  # the code; the weights come from the stack
            for p in self.params.values():
                p.requires_grad_(True)

    def __len__(self):
        return len(self.seeds)

    def parameters(self) -> list[torch.Tensor]:
        return list(self.params.values())

    def train(self, mode: bool = True) -> "Stack":
        (self.single if self.single is not None else self.base).train(mode)
        return self

    def eval(self) -> "Stack":
        return self.train(False)

    def _call(self, args, dims):
        f = lambda p, b, *a: functional_call(self.base, (p, b), a)  # noqa: E731
        # randomness="different": each model draws its own dropout masks, as it would alone
        return vmap(f, in_dims=(0, 0, *dims), randomness="different")(self.params, self.buffers, *args)

    def loss(self, x, y) -> torch.Tensor:
        """x, y (M, B, T): each model's own batch -> (M,) mean cross-entropies."""
        if self.single is not None:
            return self.single(x[0], y[0])[1][None]
        return self._call((x, y), (0, 0))[1]

    def logits(self, x) -> torch.Tensor:
        """x (M, B, T), or (B, T) shared by every model -> (M, B, T, V)."""
        shared = x.dim() == 2
        if self.single is not None:
            return self.single(x if shared else x[0])[None]
        return self._call((x,), (None if shared else 0,))

    def model(self, m: int) -> GPT:
        """Model m as an ordinary module (for a stack, a copy of its current weights)."""
        if self.single is not None:
            return self.single
        like = next(iter(self.params.values()))
        one = GPT(self.config).to(like.dtype)
        kept = one.state_dict()  # persistent entries; the rest the constructor remakes alike
        one.load_state_dict({k: v[m].detach() for k, v in {**self.params, **self.buffers}.items() if k in kept})
        return one.to(like.device).train(self.base.training)
