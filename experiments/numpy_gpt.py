"""The Polish lab's tiny GPT written by hand in numpy: forward, backward and Adam.

Every layer is a pair ``forward(...) -> (out, cache)`` and ``backward(dout, cache) -> grads``
(after llm.c's layernorm.py), in float64. A model is a dict of arrays named like the torch
``GPT(tiny_lab_config())`` parameters, so the two can start from the same weights and be
compared step for step (TINY-10). It also counts its passes: one per window trained on, one
per character written (TINY-04…06).
"""
import math

import numpy as np

EPS = 1e-5  # LayerNorm's, as torch's default


# ---- layers -----------------------------------------------------------------------------

def layernorm_forward(x, g, b):
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    rstd = 1.0 / np.sqrt((xc * xc).mean(-1, keepdims=True) + EPS)
    xhat = xc * rstd
    return xhat * g + b, (xhat, rstd, g)


def layernorm_backward(dout, cache):
    xhat, rstd, g = cache
    dg = (dout * xhat).reshape(-1, xhat.shape[-1]).sum(0)
    db = dout.reshape(-1, xhat.shape[-1]).sum(0)
    dxhat = dout * g
    dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    return dx, dg, db


def linear_forward(x, W, b=None):
    out = x @ W.T
    return (out + b if b is not None else out), (x, W)


def linear_backward(dout, cache, bias=True):
    x, W = cache
    d = W.shape[0]
    dW = dout.reshape(-1, d).T @ x.reshape(-1, x.shape[-1])
    db = dout.reshape(-1, d).sum(0) if bias else None
    return dout @ W, dW, db


def gelu_forward(x):
    """The exact GELU, x Phi(x), as torch's nn.GELU() computes it."""
    from scipy.special import erf  # here, not at import: scipy costs half a second of every collection
    cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    return x * cdf, (x, cdf)


def gelu_backward(dout, cache):
    x, cdf = cache
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return dout * (cdf + x * pdf)


def attention_forward(qkv, n_head):
    """qkv (B, T, 3C) -> (B, T, C): causal softmax attention, scores divided by sqrt(hs)."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    hs = C // n_head
    q, k, v = (t.reshape(B, T, n_head, hs).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, axis=-1))  # (B, nh, T, hs)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hs)  # (B, nh, T, T)
    s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    y = (w @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    return y, (q, k, v, w, n_head)


def attention_backward(dy, cache):
    q, k, v, w, n_head = cache
    B, nh, T, hs = q.shape
    dy = dy.reshape(B, T, nh, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)
    dw = dy @ v.transpose(0, 1, 3, 2)
    dv = w.transpose(0, 1, 3, 2) @ dy
    ds = w * (dw - (dw * w).sum(-1, keepdims=True)) / math.sqrt(hs)  # softmax backward; masked w = 0
    dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
    merge = lambda t: t.transpose(0, 2, 1, 3).reshape(B, T, nh * hs)  # noqa: E731
    return np.concatenate([merge(dq), merge(dk), merge(dv)], axis=-1)


def cross_entropy_forward(logits, targets):
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, targets[..., None], -1)[..., 0]
    return nll.mean(), (logp, targets)


def cross_entropy_backward(cache):
    logp, targets = cache
    d = np.exp(logp)
    np.put_along_axis(d, targets[..., None], np.take_along_axis(d, targets[..., None], -1) - 1, -1)
    return d / targets.size


# ---- the model ---------------------------------------------------------------------------

class TinyLab:
    """The lab's model and its Adam, by hand. ``params``: name -> float64 array."""

    def __init__(self, params: dict, n_head: int = 1, positions: bool = True, lr: float = 1e-3,
                 betas=(0.9, 0.999), eps: float = 1e-8):
        self.p = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
        self.n_head, self.positions = n_head, positions
        self.lr, self.betas, self.eps = lr, betas, eps
        self.m = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.t = 0
        self.passes = 0        # windows pushed through the block
        self.predictions = 0   # next-character predictions made

    def forward(self, idx, targets=None):
        """idx (B, T) ints -> logits (B, T, V), and (loss, caches) with targets."""
        p = self.p
        B, T = idx.shape
        self.passes += B
        self.predictions += B * T
        x = p["tok.weight"][idx] + (p["pos.table.weight"][:T] if self.positions else 0.0)
        h, c_ln1 = layernorm_forward(x, p["blocks.0.ln_mix_in.weight"], p["blocks.0.ln_mix_in.bias"])
        qkv, c_qkv = linear_forward(h, p["blocks.0.mix.qkv.weight"])
        y, c_att = attention_forward(qkv, self.n_head)
        o, c_proj = linear_forward(y, p["blocks.0.mix.proj.weight"])
        x1 = x + o
        h2, c_ln2 = layernorm_forward(x1, p["blocks.0.ln_ff_in.weight"], p["blocks.0.ln_ff_in.bias"])
        f, c_fc = linear_forward(h2, p["blocks.0.ff.fc.weight"], p["blocks.0.ff.fc.bias"])
        gl, c_gelu = gelu_forward(f)
        mo, c_fp = linear_forward(gl, p["blocks.0.ff.proj.weight"], p["blocks.0.ff.proj.bias"])
        x2 = x1 + mo
        xf, c_lnf = layernorm_forward(x2, p["ln_f.weight"], p["ln_f.bias"])
        logits, c_head = linear_forward(xf, p["head.weight"], p["head.bias"])
        if targets is None:
            return logits
        loss, c_ce = cross_entropy_forward(logits, targets)
        return logits, loss, (idx, c_ln1, c_qkv, c_att, c_proj, c_ln2, c_fc, c_gelu, c_fp, c_lnf, c_head, c_ce)

    def backward(self, cache) -> dict:
        idx, c_ln1, c_qkv, c_att, c_proj, c_ln2, c_fc, c_gelu, c_fp, c_lnf, c_head, c_ce = cache
        g = {}
        dlogits = cross_entropy_backward(c_ce)
        dxf, g["head.weight"], g["head.bias"] = linear_backward(dlogits, c_head)
        dx2, g["ln_f.weight"], g["ln_f.bias"] = layernorm_backward(dxf, c_lnf)
        dgl, g["blocks.0.ff.proj.weight"], g["blocks.0.ff.proj.bias"] = linear_backward(dx2, c_fp)
        dh2, g["blocks.0.ff.fc.weight"], g["blocks.0.ff.fc.bias"] = linear_backward(gelu_backward(dgl, c_gelu), c_fc)
        dx1_ln, g["blocks.0.ln_ff_in.weight"], g["blocks.0.ln_ff_in.bias"] = layernorm_backward(dh2, c_ln2)
        dx1 = dx2 + dx1_ln  # the residual carries the gradient past the MLP
        dy, g["blocks.0.mix.proj.weight"], _ = linear_backward(dx1, c_proj, bias=False)
        dh, g["blocks.0.mix.qkv.weight"], _ = linear_backward(attention_backward(dy, c_att), c_qkv, bias=False)
        dx_ln, g["blocks.0.ln_mix_in.weight"], g["blocks.0.ln_mix_in.bias"] = layernorm_backward(dh, c_ln1)
        dx = dx1 + dx_ln
        V, d = self.p["tok.weight"].shape
        g["tok.weight"] = np.zeros((V, d))
        np.add.at(g["tok.weight"], idx, dx)
        if self.positions:
            g["pos.table.weight"] = np.zeros_like(self.p["pos.table.weight"])
            g["pos.table.weight"][: idx.shape[1]] = dx.sum(0)
        return g

    def adam_step(self, grads):
        """Adam as torch.optim.Adam computes it (no weight decay)."""
        self.t += 1
        b1, b2 = self.betas
        bc1, bc2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for k, gk in grads.items():
            self.m[k] = b1 * self.m[k] + (1 - b1) * gk
            self.v[k] = b2 * self.v[k] + (1 - b2) * gk * gk
            denom = np.sqrt(self.v[k]) / math.sqrt(bc2) + self.eps
            self.p[k] = self.p[k] - (self.lr / bc1) * self.m[k] / denom

    def train_step(self, windows) -> float:
        """One Adam step on a batch of (T+1)-character windows; returns the loss."""
        _, loss, cache = self.forward(windows[:, :-1], windows[:, 1:])
        self.adam_step(self.backward(cache))
        return loss

    def generate(self, context, n, rng):
        """Write n characters, one pass each: the next character needs the one before it."""
        out = list(context)
        T = self.p["pos.table.weight"].shape[0]
        for _ in range(n):
            logits = self.forward(np.array([out[-T:]]))[0, -1]
            prob = np.exp(logits - logits.max())
            out.append(int(rng.choice(len(prob), p=prob / prob.sum())))
        return out[len(context):]


def params_from_torch(model) -> dict:
    """The torch model's initial weights as float64 numpy arrays, by parameter name."""
    return {k: v.detach().double().numpy().copy() for k, v in model.named_parameters()}


# ---- the torch twin (TINY-10) ----------------------------------------------------------------

def torch_twin(seed: int, lr: float):
    """(the numpy lab, its torch autograd twin in float64, the twin's Adam), both from the twin's
    N(0, 0.02) weights drawn after ``torch.manual_seed(seed)``."""
    import torch

    from experiments.configs import tiny_lab_config
    from model import GPT
    torch.manual_seed(seed)
    twin = GPT(tiny_lab_config()).double()
    return TinyLab(params_from_torch(twin), lr=lr), twin, torch.optim.Adam(twin.parameters(), lr=lr)


def mirror(seed: int, windows, lr: float, every: int = 100) -> dict:
    """Train the numpy lab and its torch twin on the same windows, step for step: the largest
    relative difference of their losses (``worst``), and the lab's loss every ``every`` steps."""
    import torch
    lab, twin, opt = torch_twin(seed, lr)
    worst, losses = 0.0, []
    for step, w in enumerate(windows, 1):
        ours = lab.train_step(w)
        wt = torch.from_numpy(w)
        _, loss = twin(wt[:, :-1], wt[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        worst = max(worst, abs(ours - loss.item()) / loss.item())
        if step % every == 0:
            losses.append(ours)
    return {"worst": worst, "losses": losses}
