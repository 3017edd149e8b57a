"""Dropout through torch.compile(backend="fuse") with fallback="error":
AOTAutograd's `native_dropout` (its mask saved for the backward) becomes
Fuse's Philox `fuse.random`, fed a fresh seed and offset from torch's CUDA
generator every call (python/fuse/dynamo/_graph_rng.py). Checked: the kept
fraction and the 1/(1-p) scale, the backward using the forward's mask, two
calls drawing different masks, torch.manual_seed reproducing a call, and a
BERT-style layer (hidden dropout 0.1) whose loss and gradients, averaged over
many calls, agree with eager's within their sampling error (the bits are
Fuse's own, not torch's, so single calls cannot be compared), and attention
dropout whose backward drops the forward's units (the forward hands its
Philox state to the backward graph). The exporter mapping is tested on the
CPU in test_export_dropout.py.

Needs torch 2.x and a CUDA GPU (the GPU machine): skipped, with the reason,
elsewhere.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from conftest import requires_cuda, requires_torch2

from fuse import backend

pytestmark = [pytest.mark.gpu, requires_torch2, requires_cuda, pytest.mark.usefixtures("exact_f32")]


def _options(cache):
    return {"amp": None, "fallback": "error", "cache_dir": cache}


class Probe(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.dropout = torch.nn.Dropout(p)

    def forward(self, x):
        return self.dropout(x * 2.0) + 0.0


def test_the_mask_keeps_one_minus_p_scaled_and_the_backward_reuses_it(cache):
    p = 0.1
    compiled = torch.compile(Probe(p).cuda(), backend="fuse", options=_options(cache))
    before = backend.stats["compiled"]
    x = torch.ones(1024, 1024, device="cuda", requires_grad=True)
    y = compiled(x)
    y.backward(torch.ones_like(y))
    assert backend.stats["compiled"] - before == 2  # forward and backward, no fallback
    kept = y != 0
    fraction = kept.float().mean().item()
    assert abs(fraction - (1 - p)) < 6 * math.sqrt(p * (1 - p) / y.numel()), fraction
    assert torch.equal(y[kept], torch.full_like(y[kept], 2.0 / (1 - p)))
    # d(y)/dx is 2/(1-p) where the forward kept a unit, 0 where it dropped it.
    assert torch.equal(x.grad != 0, kept)
    assert torch.equal(x.grad[kept], torch.full_like(x.grad[kept], 2.0 / (1 - p)))


def test_calls_draw_fresh_masks_and_manual_seed_reproduces_them(cache):
    compiled = torch.compile(Probe(0.5).cuda(), backend="fuse", options=_options(cache))
    x = torch.ones(64, 256, device="cuda")
    first, second = compiled(x), compiled(x)
    assert not torch.equal(first != 0, second != 0), "two calls drew the same mask"
    torch.manual_seed(1234)
    again = compiled(x)
    eager_draw = torch.rand(4, device="cuda")  # torch's own stream moves on past Fuse's counters
    torch.manual_seed(1234)
    assert torch.equal(compiled(x), again)
    assert torch.equal(torch.rand(4, device="cuda"), eager_draw)


class BertLayer(torch.nn.Module):
    """A BERT encoder layer: self-attention (no attention dropout), hidden
    dropout 0.1 after the attention projection and after the feed-forward,
    post-norm residuals."""

    def __init__(self, width=128, heads=4, p=0.1):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.norm1 = torch.nn.LayerNorm(width)
        self.fc1 = torch.nn.Linear(width, 4 * width)
        self.fc2 = torch.nn.Linear(4 * width, width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.dropout = torch.nn.Dropout(p)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=-1)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        attention = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, c)
        x = self.norm1(x + self.dropout(self.proj(attention)))
        return self.norm2(x + self.dropout(self.fc2(F.gelu(self.fc1(x)))))


def _samples(model, step, calls):
    losses, grads = [], []
    for _ in range(calls):
        model.zero_grad(set_to_none=True)
        loss = step()
        loss.backward()
        losses.append(loss.detach().double())
        grads.append(torch.cat([p.grad.detach().double().flatten() for p in model.parameters()]))
    return torch.stack(losses), torch.stack(grads)


def _agree(ours, theirs, what):
    """The means of two sets of samples agree within their sampling error:
    ‖mean_a − mean_b‖ ≤ 4·sqrt(Σ var_a/n + Σ var_b/n) (for a vector, the norm
    of the difference concentrates near that root-sum, so 4 is a wide margin)."""
    n = ours.shape[0]
    difference = float((ours.mean(0) - theirs.mean(0)).norm())
    noise = math.sqrt(float(ours.var(0).sum() + theirs.var(0).sum()) / n)
    assert difference <= 4 * noise + 1e-6, f"{what}: means differ by {difference:.3e}, sampling error {noise:.3e}"


def test_bert_style_dropout_matches_eager_in_distribution(cache):
    torch.manual_seed(0)
    model = BertLayer().cuda().train()
    x = torch.randn(4, 64, 128, device="cuda")
    target = torch.randn(4, 64, 128, device="cuda")
    compiled = torch.compile(model, backend="fuse", options=_options(cache))
    fallbacks = backend.stats["fallbacks"]
    calls = 48
    ours = _samples(model, lambda: F.mse_loss(compiled(x), target), calls)
    theirs = _samples(model, lambda: F.mse_loss(model(x), target), calls)
    assert backend.stats["fallbacks"] == fallbacks
    # Whole gradients, not losses: 48 losses within 0.3% of each other may
    # share a float by chance; gradients of different masks do not.
    assert torch.unique(ours[1], dim=0).shape[0] == calls, "calls repeated a mask"
    _agree(ours[0][:, None], theirs[0][:, None], "loss")
    _agree(ours[1], theirs[1], "gradients")
    # Without dropout the same layer matches eager call for call.
    model.eval()
    with torch.no_grad():
        assert float((compiled(x) - model(x)).norm() / model(x).norm()) <= 1e-4


class DroppedAttention(torch.nn.Module):
    """Attention with dropout whose values are the identity: its output is
    the dropped, rescaled probabilities themselves, so the gradient of the
    values is output^T @ incoming gradient exactly when the backward drops
    the forward's units."""

    def __init__(self, t):
        super().__init__()
        self.q = torch.nn.Parameter(torch.randn(2, 4, t, t))
        self.k = torch.nn.Parameter(torch.randn(2, 4, t, t))
        self.v = torch.nn.Parameter(torch.eye(t).expand(2, 4, t, t).contiguous())

    def forward(self):
        return F.scaled_dot_product_attention(self.q, self.k, self.v, dropout_p=0.5)


def test_attention_dropout_backward_drops_the_forwards_units(cache):
    torch.manual_seed(0)
    model = DroppedAttention(64).cuda()
    compiled = torch.compile(model, backend="fuse", options=_options(cache))
    fallbacks = backend.stats["fallbacks"]
    outputs = []
    for _ in range(2):
        model.zero_grad(set_to_none=True)
        out = compiled()
        grad = torch.randn_like(out)
        out.backward(grad)
        assert 0.4 < (out == 0).float().mean().item() < 0.6  # p = 0.5 of the probabilities dropped
        expected = out.detach().transpose(-1, -2) @ grad
        assert (model.v.grad - expected).norm() <= 1e-4 * expected.norm()
        outputs.append(out.detach())
    assert backend.stats["fallbacks"] == fallbacks
    assert not torch.equal(outputs[0], outputs[1])  # each call its own mask
