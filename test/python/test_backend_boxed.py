"""The backend's graphs take AOTAutograd's boxed calling convention (one
list of arguments, which AOTAutograd may then release), on the CPU: the
flag survives the functools.wraps wrapper that dynamo puts around a
backward (torch._dynamo.disable), and a call works boxed or not."""

import functools

import torch

from fuse import backend


def _graph():
    def f(x, y):
        return x + y
    return torch.fx.symbolic_trace(f)


def test_the_boxed_flag_survives_a_functools_wraps_wrapper():
    graph = backend._FuseGraph(_graph(), "backward", backend._DynamoGraph({}))

    @functools.wraps(graph)
    def wrapper(*args, **kwargs):  # what torch._dynamo.disable makes of it
        return graph(*args, **kwargs)

    assert getattr(graph, "_boxed_call", False)
    assert getattr(wrapper, "_boxed_call", False)


def test_a_graph_takes_its_arguments_boxed_or_not(monkeypatch):
    graph = backend._FuseGraph(_graph(), "forward", backend._DynamoGraph({}))
    seen = []
    monkeypatch.setattr(graph, "_key", lambda args: seen.append(list(args)) or "key")
    graph.specialized["key"] = lambda args: ("ran", len(args))
    x, y = torch.ones(2), torch.ones(2)
    assert graph([x, y]) == ("ran", 2)
    assert graph(x, y) == ("ran", 2)
    assert all(len(args) == 2 for args in seen)
