"""Saved values that are views (fuse/_saved_views.py), on the CPU: the
forward returns their base, and replaying the recorded view ops on the base
gives the values back."""

import torch

from fuse._saved_views import replay, strip
from fuse._tracing import trace


def saved_views(x, w):
    h = torch.tanh(x @ w)                                    # computed: a base
    return (h.sum(),                                         # the user's
            h.t(),                                           # a transpose
            h.view(4, 3, 2)[:, 1:, :].permute(2, 0, 1),      # reshape, slice, permute
            torch.split(h, [2, 4], dim=1)[1].t(),            # a split's second part
            x.t(),                                           # a view of an input
            h.unsqueeze(0).expand(2, 4, 6))                  # broadcast


def _results(gm, args):
    return list(gm(*args))


def test_views_of_a_computed_value_are_returned_as_it_and_replayed():
    args = [torch.randn(4, 5), torch.randn(5, 6)]
    gm = trace(saved_views, args)
    expected = _results(gm, args)
    chains = strip(gm, {1, 2, 3, 4, 5}, computed=lambda node: True)
    assert sorted(chains) == [1, 2, 3, 5]  # x.t() keeps its chain: x is an input
    got = _results(gm, args)
    base = torch.tanh(args[0] @ args[1])
    for position, ops in chains.items():
        assert torch.allclose(got[position], base), position  # the base itself comes out
        assert torch.equal(replay(got[position], ops), expected[position]), position
    assert torch.equal(got[4], expected[4]) and torch.equal(got[0], expected[0])
    # The stripped views are gone from the graph; x.t()'s stays.
    views = [n for n in gm.graph.nodes if str(n.target) in ("aten.permute.default", "aten.t.default")]
    assert all(n.args[0].op == "placeholder" for n in views), [str(n.args[0]) for n in views]


def test_a_base_the_user_also_gets_or_that_is_constant_keeps_its_views():
    def returns_base(x, w):
        h = x @ w
        return h, h.t()

    args = [torch.randn(4, 5), torch.randn(5, 6)]
    assert strip(trace(returns_base, args), {1}, computed=lambda node: True) == {}
    assert strip(trace(saved_views, args), {1, 2}, computed=lambda node: False) == {}
