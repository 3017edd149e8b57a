"""A backward graph the torch.compile backend cannot compile after its
forward compiled (its saved values then sit in the forward's slab), on the
GPU: run eagerly, or split at the node whose re-trace failed, it gets its
saved values out of the slab and matches eager. The failure is injected
(the backward's compile raises), since every op of nanoGPT maps.

Tolerance: relative error <= 1e-4 on the f32 path (amp=None, TF32 off).
Needs torch 2.x and a CUDA GPU: skipped, with the reason, elsewhere.
"""

import warnings

import pytest
import torch

from conftest import relative_error, requires_cuda, requires_torch2

from fuse import backend
from fuse.exporter._tracing import TracingError
from fuse.exporter._values import ExportError

pytestmark = [pytest.mark.gpu, requires_torch2, requires_cuda, pytest.mark.usefixtures("exact_f32")]


def _failing_backward(monkeypatch, make_error):
    original = backend._Specialized.__init__

    def init(self, gm, args, options, kind, *rest, **kwargs):
        if kind == "backward":
            raise make_error(gm)
        return original(self, gm, args, options, kind, *rest, **kwargs)
    monkeypatch.setattr(backend._Specialized, "__init__", init)


def _check_against_eager(cache):
    from fuse.harness.nanogpt import SIZES, NanoGPT
    torch.manual_seed(0)
    model = NanoGPT(SIZES["tiny"]).cuda()
    vocab = SIZES["tiny"].vocab_size
    idx, targets = (torch.randint(0, vocab, (2, 64), device="cuda") for _ in range(2))
    model(idx, targets).backward()
    expected = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    compiled = torch.compile(model, backend="fuse", options={"amp": None, "cache_dir": cache})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            model.zero_grad(set_to_none=True)
            compiled(idx, targets).backward()
    for name, p in model.named_parameters():
        assert relative_error(p.grad, expected[name]) <= 1e-4, name


def test_a_backward_run_eagerly_reads_its_saved_values_out_of_the_slab(monkeypatch, cache):
    _failing_backward(monkeypatch, lambda gm: ExportError("injected: the backward does not compile"))
    fallbacks = backend.stats["fallbacks"]
    _check_against_eager(cache)
    assert backend.stats["fallbacks"] == fallbacks + 1


def test_a_backward_split_at_its_failing_node_reads_its_saved_values_out_of_the_slab(monkeypatch, cache):
    def failure(gm):
        node = next(n for n in gm.graph.nodes if n.op == "call_function")
        error = TracingError(RuntimeError(f"injected\n\nWhile executing %{node.name} : ..."))
        return error
    original = backend._Specialized.__init__
    calls = []

    def init(self, gm, args, options, kind, *rest, **kwargs):
        calls.append(kind)
        if kind == "backward" and calls.count("backward") == 1:  # the whole graph fails, its parts compile
            raise failure(gm)
        return original(self, gm, args, options, kind, *rest, **kwargs)
    monkeypatch.setattr(backend._Specialized, "__init__", init)
    split, fallbacks = backend.stats.get("split", 0), backend.stats["fallbacks"]
    _check_against_eager(cache)
    assert backend.stats.get("split", 0) == split + 1 and backend.stats["fallbacks"] == fallbacks
