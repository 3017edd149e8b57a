"""torch.compile(backend="fuse") on graphs Fuse can take only in part: the
ops it cannot map run in torch, the rest in Fuse (python/fuse/dynamo/_partition.py),
with one warning per graph that names each such op and its source line;
fallback="error" raises naming every one. The split itself is tested on the
CPU in test_partition.py.

Tolerances as in test_jit_gpu.py: relative error ≤ 1e-4 on the f32 path
(amp=None, TF32 off on both sides). Needs torch 2.x and a CUDA GPU (the GPU
machine): skipped, with the reason, elsewhere.
"""

import functools
import os
import warnings

import pytest
import torch
import torch.nn.functional as F

from conftest import relative_error, requires_cuda, requires_torch2, source_line

from fuse import backend

pytestmark = [pytest.mark.gpu, requires_torch2, requires_cuda, pytest.mark.usefixtures("exact_f32")]

THIS_FILE = os.path.basename(__file__)
line_of = functools.partial(source_line, __file__)


class Routed(torch.nn.Module):
    """Top-k routing between supported layers (a k too large for Fuse's
    decomposition of top-k), and a sort further on."""

    def __init__(self, width=64, k=20):
        super().__init__()
        self.k = k
        self.fc1 = torch.nn.Linear(width, width)
        self.fc2 = torch.nn.Linear(k, width)
        self.fc3 = torch.nn.Linear(width, width)

    def forward(self, x):
        h = F.gelu(self.fc1(x)) * 1.5
        values, _ = torch.topk(h, self.k, dim=-1)
        g = torch.tanh(self.fc2(values)) + values.mean(-1, keepdim=True)
        ordered, _ = torch.sort(g * 2.0 - 1.0, dim=-1)
        return torch.tanh(self.fc3(F.relu(ordered)))


def _ours(caught):
    return [str(w.message) for w in caught if str(w.message).startswith("fuse:")]


def test_unsupported_ops_run_in_torch_and_the_rest_in_fuse(cache):
    torch.manual_seed(0)
    model = Routed().cuda()
    x = torch.randn(32, 64, device="cuda")
    expected = model(x)
    expected.square().mean().backward()
    expected_grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    before = dict(backend.stats)
    compiled = torch.compile(model, backend="fuse", options={"amp": None, "cache_dir": cache})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):  # the second call runs what the first compiled
            model.zero_grad(set_to_none=True)
            got = compiled(x)
            got.square().mean().backward()
    assert relative_error(got, expected) <= 1e-4
    for n, p in model.named_parameters():
        assert relative_error(p.grad, expected_grads[n]) <= 1e-4, n
    # The forward splits; the backward (the scatters of top-k's and sort's
    # gradients, which map) compiles whole.
    assert backend.stats["split"] - before["split"] == 1
    assert backend.stats["compiled"] - before["compiled"] >= 3  # the forward's three Fuse graphs, at least
    assert backend.stats["fallbacks"] == before["fallbacks"]
    messages = _ours(caught)
    forward = [m for m in messages if "the forward graph runs" in m]
    assert len(forward) == 1 and not [m for m in messages if "the backward graph runs" in m], messages
    lines = forward[0].splitlines()
    assert any("aten.topk.default at " in l and f"{THIS_FILE}:{line_of('torch.topk(h, self.k')} " in l for l in lines), lines
    assert any("aten.sort.default at " in l and f"{THIS_FILE}:{line_of('torch.sort(g * 2.0')} " in l for l in lines), lines


def test_inference_graph_splits_too(cache):
    torch.manual_seed(1)
    model = Routed().cuda().eval()
    x = torch.randn(8, 64, device="cuda")
    compiled = torch.compile(model, backend="fuse", options={"amp": None, "cache_dir": cache})
    before = backend.stats["split"]
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(x)
        got = compiled(x)
        expected = model(x)
    assert relative_error(got, expected) <= 1e-4
    assert backend.stats["split"] == before + 1
    assert len([m for m in _ours(caught) if "the inference graph runs" in m]) == 1


def test_fallback_error_names_every_unsupported_op(cache):
    model = Routed().cuda()
    compiled = torch.compile(model, backend="fuse", options={"fallback": "error", "cache_dir": cache})
    with pytest.raises(Exception) as caught:
        with torch.no_grad():
            compiled(torch.randn(8, 64, device="cuda"))
    text = str(caught.value)
    assert "aten.topk.default" in text and "aten.sort.default" in text, text
