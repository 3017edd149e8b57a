"""The CUDA graph capture count (fuse.backend.graph_captures and
CompiledGraph.graph_captures), a diagnostic of host time: on the CPU, the
sum over the backend's graphs and a graph without a session; the GPU
counts themselves are tested in FuseRuntimeGpuTests."""

import types

import pytest

import fuse
from fuse import backend

GRAPH = """
func.func @double(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fuse.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_a_graph_without_a_session_has_captured_nothing():
    compiled = fuse.compile(GRAPH, arch="sm_90a", cache_dir=False)
    if compiled.session is not None:
        pytest.skip("a GPU is here: the session exists (its counts: FuseRuntimeGpuTests)")
    assert compiled.graph_captures == 0


def test_the_backend_sums_the_captures_of_the_graphs_it_holds(monkeypatch):
    class Graph:
        def __init__(self, captures):
            self.graph_captures = captures
    monkeypatch.setattr(backend, "_COMPILED", __import__("weakref").WeakSet())
    held = [Graph(3), Graph(4)]
    for graph in held:
        backend._COMPILED.add(graph)
    assert backend.graph_captures() == 7
    del held[0]
    assert backend.graph_captures() == 4  # a graph let go no longer counts


def test_the_session_report_carries_the_count(monkeypatch):
    compiled = fuse.compile(GRAPH, arch="sm_90a", cache_dir=False)
    session = types.SimpleNamespace(compile_report=lambda: {"graph_captures": 5, "cached_graphs": 2})
    monkeypatch.setattr(compiled, "session", session)
    assert compiled.graph_captures == 5


GRAPH_PARAMETER = """
func.func @scale(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fuse.mul %x, %w : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_each_layers_parameters_are_checked_once_not_every_call(monkeypatch):
    # A graph that is one layer runs with each layer's weight in turn: every
    # weight is checked on its first call only (host time per call).
    import torch
    from fuse import compiler
    compiled = fuse.compile(GRAPH_PARAMETER, arch="sm_90a", cache_dir=False)
    monkeypatch.setattr(compiled, "_require_session", lambda: None)
    monkeypatch.setattr(compiled, "device", torch.device("cpu"))
    calls = []
    original = compiler.check_tensor

    def counting(spec, tensor, device, contiguous_copy=False):
        calls.append(spec.name)
        return original(spec, tensor, device, contiguous_copy)
    monkeypatch.setattr(compiler, "check_tensor", counting)
    weights = [torch.nn.Parameter(torch.randn(4)) for _ in range(6)]
    for _step in range(3):
        for weight in weights:
            assert compiled.check_inputs([torch.randn(4), weight])[1] is weight
    # The activation every call; each weight on its first call alone.
    assert calls.count("arg1") == 6 and calls.count("arg0") == 18
    with pytest.raises(ValueError, match="expected f32 \\[4\\], got f32 \\[5\\]"):
        compiled.check_inputs([torch.randn(4), torch.nn.Parameter(torch.randn(5))])
