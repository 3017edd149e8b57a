"""Saved values that are views (fuse/dynamo/_saved_views.py), on the CPU: the
forward returns their base, and replaying the recorded view ops on the base
gives the values back."""

import torch

from fuse.dynamo._saved_views import replay, store_as_viewed, strip
from fuse.exporter._tracing import trace


def saved_views(x, w):
    h = torch.tanh(x @ w)                                    # computed: a base
    return (h.sum(),                                         # the user's
            h.t(),                                           # a transpose
            h.view(4, 3, 2)[:, 1:, :].permute(2, 0, 1),      # reshape, slice, permute
            torch.split(h, [2, 4], dim=1)[1].t(),            # a split's second part
            x.t(),                                           # a view of an input
            h.unsqueeze(0).expand(2, 4, 6),                  # broadcast
            torch.cat([torch.zeros(4, 0), h], dim=1).t())    # h after an empty cache, transposed


def _results(gm, args):
    # Walked as the backend walks a re-traced graph: strip() edits the graph
    # without regenerating its Python code.
    return list(torch.fx.Interpreter(gm).run(*args))


def test_views_of_a_computed_value_are_returned_as_it_and_replayed():
    args = [torch.randn(4, 5), torch.randn(5, 6)]
    gm = trace(saved_views, args)
    expected = _results(gm, args)
    chains = strip(gm, {1, 2, 3, 4, 5, 6}, computed=lambda node: True)
    assert sorted(chains) == [1, 2, 3, 5, 6]  # x.t() keeps its chain: x is an input
    assert str(chains[6][0][0]) == "aten.alias.default"  # the cat, then the transpose
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


def test_an_aot_autograd_step_with_saved_views_stored_as_bases_matches_torch():
    """The backend's flow on an AOTAutograd forward and backward: the
    forward's saved views returned as their bases and run on Fuse's
    interpreter, the backward replaying the views on them; the gradients
    equal torch's."""
    def step(x, w1, w2):
        a = torch.tanh(x @ w1.t())
        return (a.t() @ w2).square().sum()  # the backward of w2 reads a.t()

    args = [torch.randn(8, 16), torch.randn(12, 16), torch.randn(8, 5)]
    forward, backward, expected, returned, positions = _aot_graphs(step, args)
    chains = strip(forward, positions, computed=lambda node: True)
    assert chains, "the forward saves a view of a computed value"
    _check_gradients_through_fuse(forward, backward, returned, chains, args, expected)


def test_a_saved_value_read_through_views_that_move_data_is_stored_as_their_end():
    """The attention output's case: the forward reads `o` ([B, H, T, D])
    only as o.transpose(1, 2).contiguous().view(B, T, H*D) for a GEMM, and
    the backward needs `o` itself. The forward stores the view it computes
    anyway (no copy between the two layouts); the backward gets `o` back by
    the inverse views; the gradients through Fuse's interpreter equal
    torch's."""
    def step(x, w1, w2):
        o = torch.tanh(x @ w1).view(2, 6, 2, 4).transpose(1, 2) * 2.0  # [B, H, T, D], computed
        y = o.transpose(1, 2).contiguous().view(2, 6, 8) @ w2           # the projection reads it so
        return y.square().sum() + o.square().sum()                      # the backward needs o itself

    args = [torch.randn(2, 6, 8), torch.randn(8, 8), torch.randn(8, 5)]
    forward, backward, expected, returned, positions = _aot_graphs(step, args)
    o_position = next(p for p in positions if _shape_of(returned[p]) == (2, 2, 6, 4))
    chains = store_as_viewed(forward, positions, computed=lambda node: True)
    assert list(chains) == [o_position], chains
    stored = list(next(n for n in forward.graph.nodes if n.op == "output").args[0])[o_position]
    assert _shape_of(stored) != (2, 2, 6, 4) and "transpose" not in str(stored.target)
    # Nothing is stored in the value's own layout any more: no transpose of
    # it is written by the forward.
    ops = [str(op[0]) for op in chains[o_position]]
    assert ops[-1] == "aten.transpose.int" and set(ops[:-1]) == {"aten.reshape.default"}, ops
    _check_gradients_through_fuse(forward, backward, returned, chains, args, expected)


def _aot_graphs(step, args):
    """AOTAutograd's forward and backward of `step` (default partition), the
    gradients torch computes, the forward's results and the positions of
    those the backward reads (saved)."""
    import warnings

    from functorch.compile import aot_function, default_partition

    from conftest import keeping_compilers
    from fuse.dynamo._saved_slabs import SavedValues

    graphs, capture = keeping_compilers()
    leaves = [a.clone().requires_grad_() for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        aot_function(step, fw_compiler=capture("forward"), bw_compiler=capture("backward"),
                     partition_fn=default_partition)(*leaves).backward()
    forward, backward = graphs["forward"], graphs["backward"]
    saved = SavedValues()
    saved.note_partition(backward, num_fwd_outputs=1)
    returned = list(next(n for n in forward.graph.nodes if n.op == "output").args[0])
    return forward, backward, [leaf.grad for leaf in leaves], returned, saved.saved_positions(returned)


def _check_gradients_through_fuse(forward, backward, returned, chains, args, expected):
    """Runs the rewritten forward on Fuse's interpreter and the backward,
    with `chains` replayed on what the forward stored, traced and run there
    too; the gradients equal torch's."""
    from fuse.dynamo import _graph_rng
    from test_partition import InterpreterGraph, relative_error

    names = [n.name for n in returned]
    chained = {names[p]: ops for p, ops in chains.items()}

    def export(gm):
        placeholder_names = [str(n.target) for n in gm.graph.nodes if n.op == "placeholder"]
        return InterpreterGraph(_graph_rng.export(gm, placeholder_names, "graph")[0])

    by_name = dict(zip(names, export(forward)(args)))
    placeholders = [n.name for n in backward.graph.nodes if n.op == "placeholder"]

    def backward_step(*inputs):
        inputs = [replay(t, chained[n]) if n in chained else t for n, t in zip(placeholders, inputs)]
        return tuple(torch.fx.Interpreter(backward).run(*inputs))

    values = [by_name[n] if n in by_name else torch.ones(()) for n in placeholders]  # tangents_1: d(loss) = 1
    gradients = export(trace(backward_step, values))(values)
    assert len(gradients) == len(expected)
    for got, want in zip(gradients, expected):
        assert relative_error(got, want) < 1e-5


def _shape_of(node):
    value = node.meta.get("val", node.meta.get("tensor_meta"))
    return tuple(value.shape)


def test_views_stored_as_their_base_and_the_base_stored_as_its_readers_view_compose():
    """A value saved itself and through a view of it (one stored value after
    strip()), which the forward reads as a flattened transpose: both
    positions become that view, and replaying the inverse views, then
    strip()'s, gives each saved value back."""
    def forward(x, w):
        o = torch.tanh(x).view(2, 3, 2, 4).transpose(1, 2) * 2.0   # [B, H, T, D]
        y = o.transpose(1, 2).contiguous().view(6, 8) @ w
        return y.sum(), o.permute(0, 2, 1, 3)[:, :2], o

    args = [torch.randn(2, 3, 8), torch.randn(8, 5)]
    gm = trace(forward, args)
    expected = _results(gm, args)
    stripped = strip(gm, {1, 2}, computed=lambda node: True)
    assert sorted(stripped) == [1]
    viewed = store_as_viewed(gm, {1, 2}, computed=lambda node: True)
    assert sorted(viewed) == [1, 2]
    got = _results(gm, args)
    assert got[1].shape == got[2].shape == (6, 8)  # one stored value: the projection's operand
    for position in (1, 2):
        ops = viewed[position] + stripped.get(position, [])
        assert torch.equal(replay(got[position], ops), expected[position]), position
    # Nothing in the forward transposes o for storing: the only transposes
    # left are the model's own (into heads, and out of them for the GEMM).
    transposes = [n for n in gm.graph.nodes if str(n.target) in ("aten.transpose.int", "aten.permute.default")]
    assert len(transposes) == 2, [str(n) for n in transposes]


def test_a_saved_cast_of_repeated_heads_is_stored_as_the_cast_heads():
    """Grouped-query attention's saved keys as AOTAutograd traces them under
    autocast: repeat_kv's views (unsqueeze, expand, a reshape that clones),
    then a cast. Stored as the cast of the heads before the repeat (G times
    fewer bytes); replaying the chain gives the saved value back."""
    from fuse.dynamo._saved_views import hoist_casts

    def forward(x, w):
        k = torch.tanh(x @ w).view(2, 5, 2, 4).transpose(1, 2)            # [B, Hkv, T, D]
        repeated = k[:, :, None].expand(2, 2, 3, 5, 4).reshape(2, 6, 5, 4)  # [B, Hkv * G, T, D]
        saved = repeated.to(torch.bfloat16)
        return saved.float().sum(), saved

    # Values through a cache of a wider dtype first (Llama's): bf16 heads
    # promoted to f32 by the cat, repeated, cast back to bf16.
    def through_cache(x, w):
        v = torch.tanh(x @ w).to(torch.bfloat16).view(2, 5, 2, 4).transpose(1, 2)
        cached = torch.cat([torch.zeros(2, 2, 0, 4), v], dim=2)
        saved = cached[:, :, None].expand(2, 2, 3, 5, 4).reshape(2, 6, 5, 4).to(torch.bfloat16)
        return saved.float().sum(), saved

    args = [torch.randn(10, 8), torch.randn(8, 8)]
    for step in (forward, through_cache):
        gm = trace(step, args)
        expected = _results(gm, args)
        assert hoist_casts(gm, {1}, computed=lambda node: True) == 1, step.__name__
        chains = strip(gm, {1}, computed=lambda node: True)
        got = _results(gm, args)
        assert got[1].dtype == torch.bfloat16 and got[1].numel() == expected[1].numel() // 3, step.__name__
        assert torch.equal(replay(got[1], chains[1]), expected[1]), step.__name__
        assert torch.equal(got[0], expected[0]), step.__name__
    # A cast of views that repeat nothing is left alone (no bytes to save).
    gm = trace(lambda x, w: (x.sum(), torch.tanh(x @ w).t().to(torch.bfloat16)), args)
    assert hoist_casts(gm, {1}, computed=lambda node: True) == 0


def test_a_concatenation_onto_an_empty_cache_of_a_wider_dtype_is_a_cast_back():
    """An f32 cache promotes bf16 keys: the cat is an exact widening cast,
    not an alias. The bf16 operand is stored (half the bytes) and the
    backward casts it back, so it gets the dtype it was traced with."""
    def forward(x, w):
        h = torch.tanh(x @ w).to(torch.bfloat16)
        return h.float().sum(), torch.cat([torch.zeros(4, 0), h], dim=1)

    args = [torch.randn(4, 5), torch.randn(5, 6)]
    gm = trace(forward, args)
    expected = _results(gm, args)
    chains = strip(gm, {1}, computed=lambda node: True)
    got = _results(gm, args)
    assert got[1].dtype == torch.bfloat16 and [str(op[0]) for op in chains[1]] == ["aten._to_copy.default"]
    assert replay(got[1], chains[1]).dtype == torch.float32
    assert torch.equal(replay(got[1], chains[1]), expected[1])


def test_a_saved_view_that_the_user_also_gets_keeps_its_chain():
    """AOTAutograd returns one node at two positions when the user gets a
    value the backward also reads (an encoder-decoder's encoder output,
    viewed for the cross attention's projections): stored as its base, the
    saved value and the user's view of the same base would become one
    output, which the slab cannot hold (whisper and t5 through the backend
    failed so). The chain is kept; a view of a base nobody else gets is
    still stripped."""
    def returns_a_view_twice(x, w):
        h = torch.tanh(x @ w)
        g = torch.sigmoid(x @ w)
        shared = h.view(2, 2, 6)
        return shared, shared, g.t()

    args = [torch.randn(4, 5), torch.randn(5, 6)]
    gm = trace(returns_a_view_twice, args)
    expected = _results(gm, args)
    results = list(next(n for n in gm.graph.nodes if n.op == "output").args[0])
    assert results[0] is results[1]  # one node at the user's and the saved position
    chains = strip(gm, {1, 2}, computed=lambda node: True)
    assert sorted(chains) == [2]
    got = _results(gm, args)
    assert torch.equal(got[1], expected[1]) and torch.equal(got[0], expected[0])
    assert torch.equal(replay(got[2], chains[2]), expected[2])
