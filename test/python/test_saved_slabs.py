"""The slabs that hold a forward's saved values (fuse/dynamo/_saved_slabs.py), on
the CPU: layouts, reuse once nothing holds a slab, and the address lookup
the backward makes."""

import gc

import pytest
import torch

from fuse.dynamo import _saved_slabs
from fuse.dynamo._saved_slabs import ALIGNMENT, Layout, SavedValues, SlabPool


def test_a_layout_aligns_each_value_and_stores_a_value_saved_twice_once():
    layout = Layout.packed([(3, 10, ["a"]), (5, ALIGNMENT, ["b", "b_view"]), (7, 1, ["c"])])
    assert layout.output_offsets == {3: 0, 5: ALIGNMENT, 7: 2 * ALIGNMENT}
    assert layout.offsets == {"a": 0, "b": ALIGNMENT, "b_view": ALIGNMENT, "c": 2 * ALIGNMENT}
    assert layout.nbytes == 3 * ALIGNMENT
    assert Layout.packed([]).nbytes == ALIGNMENT  # never an empty allocation


# Reuse reads torch's storage use count (torch >= 2, where the backend runs).
needs_use_count = pytest.mark.skipif(getattr(torch._C, "_storage_Use_Count", None) is None,
                                     reason=f"torch {torch.__version__} has no storage use count "
                                            "(the torch.compile backend needs torch >= 2)")


@needs_use_count
def test_a_slab_is_reused_once_its_holder_lets_go_and_never_while_held():
    saved = SavedValues()
    pool = SlabPool(Layout.packed([(0, 1000, ["x"])]), torch.device("cpu"), saved)
    first = pool.take()
    held = first.detach()  # what autograd keeps while the backward may come
    second = pool.take()
    assert second.data_ptr() != first.data_ptr()  # the first is still held
    del held
    gc.collect()
    assert pool.take().data_ptr() in (first.data_ptr(), second.data_ptr())
    assert len(pool.free) <= _saved_slabs.pool_limit(1000)


@needs_use_count
def test_gradients_left_in_a_slab_move_out_when_a_forward_needs_it_back():
    saved = SavedValues()
    pool = SlabPool(Layout.packed([(0, 1024, ["x"])]), torch.device("cpu"), saved)
    slab = pool.take()
    address = slab.data_ptr()
    weight = torch.nn.Parameter(torch.zeros(4, 4))
    # What a backward hands autograd (its results in the slab), and what
    # autograd keeps in param.grad: an alias of it.
    result = _saved_slabs.result_view(slab.detach(), 256, torch.float32, (4, 4))
    result.copy_(torch.arange(16.0).view(4, 4))
    assert result._base is None
    weight.grad = result.detach()
    del result
    # The next micro-batch's forward: only the gradient holds the slab.
    again = pool.take([weight])
    assert again.data_ptr() == address and len(pool.free) == 1
    assert not address <= weight.grad.data_ptr() < address + 1024  # memory of its own
    assert torch.equal(weight.grad, torch.arange(16.0).view(4, 4))
    # A slab nothing holds: no gradient is touched.
    grad = weight.grad
    assert pool.take([weight]).data_ptr() == address and weight.grad is grad


@needs_use_count
def test_a_result_view_is_the_arenas_memory_in_its_shape():
    arena = torch.arange(64, dtype=torch.uint8)
    tensor = _saved_slabs.result_view(arena, 16, torch.int32, (2, 3))
    assert tensor.shape == (2, 3) and tensor.stride() == (3, 1) and tensor.dtype == torch.int32
    assert tensor.data_ptr() == arena.data_ptr() + 16
    assert torch.equal(tensor.view(torch.uint8).flatten(), arena[16:40])


@pytest.mark.skipif(not hasattr(torch.Tensor, "untyped_storage"),
                    reason=f"torch {torch.__version__} has no untyped_storage (the backend needs torch >= 2)")
def test_arena_results_made_once_give_every_call_the_same_layout():
    arena = torch.zeros(256, dtype=torch.uint8)
    where = [_saved_slabs.ArenaResult(0, torch.float32, (2, 0, 3)),  # empty: strides still dense
             _saved_slabs.ArenaResult(64, torch.bfloat16, ()),
             _saved_slabs.ArenaResult(128, torch.int64, (3, 2))]
    storage = arena.untyped_storage()
    for _ in range(2):  # the same layout from the same specs, call after call
        empty, scalar, pairs = (w.view(storage, arena.device) for w in where)
        assert empty.shape == (2, 0, 3) and empty.stride() == (3, 3, 1)
        assert scalar.shape == () and scalar.data_ptr() == arena.data_ptr() + 64
        assert pairs.stride() == (2, 1) and pairs.data_ptr() == arena.data_ptr() + 128
        pairs.copy_(torch.arange(6).view(3, 2))
        assert pairs._base is None
    assert torch.equal(arena[128:176].view(torch.int64), torch.arange(6))


@needs_use_count
def test_gradients_stay_where_anything_else_holds_their_slab_too():
    saved = SavedValues()
    pool = SlabPool(Layout.packed([(0, 1024, ["x"])]), torch.device("cpu"), saved)
    slab = pool.take()
    weight = torch.nn.Parameter(torch.zeros(16))
    weight.grad = _saved_slabs.result_view(slab, 256, torch.float32, (16,))
    graph_holds = slab.detach()  # the autograd graph (retain_graph=True) still holds it
    second = pool.take([weight])
    assert second.data_ptr() != slab.data_ptr()  # a new slab: the old one is still held
    del graph_holds


def test_pools_keep_a_layer_graphs_calls_but_not_many_large_tensors():
    assert _saved_slabs.pool_limit(3 << 20) == 32  # a layer's saved values, once per layer
    assert _saved_slabs.pool_limit(800 << 20) == 2  # logits: a pool keeps two
    assert _saved_slabs.pool_limit(0) == 32


@needs_use_count
def test_a_slab_still_held_stays_known_when_the_pool_lets_it_go():
    # More forwards than pooled slabs before any backward (one dynamo graph
    # run for every layer): each backward must still find its slab.
    saved = SavedValues()
    layout = Layout.packed([(0, 64, ["x"])])
    pool = SlabPool(layout, torch.device("cpu"), saved)
    limit = _saved_slabs.pool_limit(layout.nbytes)
    held = [pool.take().detach() for _ in range(limit + 3)]
    gc.collect()
    assert len({h.data_ptr() for h in held}) == len(held)
    assert all(saved.layout_at(h) is layout for h in held)
    addresses = [h.data_ptr() for h in held]
    del held
    gc.collect()
    pool.take()  # lets go of the retired slabs nothing holds any more
    gc.collect()
    assert not pool.retired and len(saved.by_address) <= limit + 1
    assert sum(a in saved.by_address for a in addresses) <= limit


@needs_use_count
def test_the_backward_finds_a_slabs_layout_by_its_address_and_nothing_else():
    saved = SavedValues()
    layout = Layout.packed([(0, 64, ["x"])])
    pool = SlabPool(layout, torch.device("cpu"), saved)
    slab = pool.take()
    assert saved.layout_at(slab.detach()) is layout
    assert saved.layout_at(torch.empty(layout.nbytes, dtype=torch.uint8)) is None
    assert saved.layout_at(torch.empty(4)) is None and saved.layout_at(None) is None


@needs_use_count
def test_a_dead_slab_is_forgotten():
    saved = SavedValues()
    pool = SlabPool(Layout.packed([(0, 64, ["x"])]), torch.device("cpu"), saved)
    pool.free.clear()
    address = pool.take().data_ptr()
    pool.free.clear()  # the pool lets go: nothing holds the slab
    gc.collect()
    assert address not in saved.by_address


def test_saved_positions_come_from_the_partition_by_name():
    graph = torch.fx.Graph()
    saved_a = graph.placeholder("mm_1")
    graph.placeholder("tangents_1")
    graph.output(saved_a)
    saved = SavedValues()
    assert saved.saved_positions([]) == frozenset()  # no partition seen: nothing is a slab
    saved.note_partition(torch.fx.GraphModule(torch.nn.Module(), graph), num_fwd_outputs=1)
    forward = torch.fx.Graph()
    x = forward.placeholder("x")
    mm = forward.call_function(torch.mm, (x, x))
    mm.name = "mm_1"
    loss = forward.call_function(torch.sum, (mm,))
    # The loss is the user's; mm_1 is saved; mm_1 returned as the user's
    # output too would not count at position 0.
    assert saved.saved_positions([loss, mm]) == frozenset({1})
    assert saved.saved_positions([mm, mm]) == frozenset({1})


class _Placeholder:
    """What unpack reads of a backward graph's placeholder."""

    def __init__(self, name, traced=None):
        self.name, self.meta = name, ({"val": traced} if traced is not None else {})


def test_a_backward_that_runs_in_torch_gets_its_saved_values_out_of_the_slab():
    # What a backward that falls back to torch (eagerly, or in a split's
    # torch parts) receives: tensors, not the slab.
    saved = SavedValues()
    layout = Layout.packed([(0, 2 * 3 * 4, ["x"]), (1, 4 * 2 * 2, ["w_t"])])
    layout.bases.update({"x": ((2, 3), torch.float32), "w_t": ((2, 4), torch.bfloat16)})
    layout.chains["w_t"] = [(torch.ops.aten.permute.default, ([1, 0],), {}, None)]
    slab = torch.empty(layout.nbytes, dtype=torch.uint8)
    saved._register(slab, layout)  # as SlabPool.take does (whose reuse needs torch 2)
    x, w = torch.randn(2, 3), torch.randn(2, 4).to(torch.bfloat16)
    slab[layout.offsets["x"]:layout.offsets["x"] + x.numel() * 4].view(torch.float32).copy_(x.reshape(-1))
    slab[layout.offsets["w_t"]:layout.offsets["w_t"] + w.numel() * 2].view(torch.bfloat16).copy_(w.reshape(-1))
    alias, tangent = slab.detach(), torch.randn(3)
    placeholders = [_Placeholder("x"), _Placeholder("w_t", torch.empty(4, 2)), _Placeholder("tangents_1")]
    got = _saved_slabs.unpack(saved, placeholders, [alias, alias, tangent])
    assert torch.equal(got[0], x)
    assert got[1].dtype == torch.float32 and torch.equal(got[1], w.t().float())  # replayed, cast as traced
    assert got[2] is tangent
    assert _saved_slabs.unpack(saved, placeholders, [x, w, tangent])[0] is x  # nothing in a slab: as given


def test_a_layout_takes_the_offsets_the_forwards_memory_plan_chose():
    # The slab is the forward's arena: values lie where its plan left them.
    layout = Layout([(2, 4096, ["h"]), (0, 0, ["logits", "logits_view"])], nbytes=10_000)
    assert layout.output_offsets == {2: 4096, 0: 0}
    assert layout.offsets == {"h": 4096, "logits": 0, "logits_view": 0}
    assert layout.nbytes == 10_240  # rounded up to the alignment


@needs_use_count
def test_slabs_made_before_the_layout_grew_are_not_handed_out_again():
    # The backward runs in the slab: once it is compiled, the layout grows
    # to its arena, and a free slab of the old size would be too small.
    saved = SavedValues()
    layout = Layout.packed([(0, 64, ["x"])])
    pool = SlabPool(layout, torch.device("cpu"), saved)
    small = pool.take()
    small_address = small.data_ptr()
    del small
    gc.collect()
    layout.nbytes = 4 * ALIGNMENT
    grown = pool.take()
    assert grown.numel() == 4 * ALIGNMENT
    assert all(slab.numel() >= layout.nbytes for slab, _ in pool.free)
    assert saved.layout_at(grown) is layout
    del grown
    assert small_address is not None


class _Compiled:
    def __init__(self, arena_bytes):
        self.arena_bytes = arena_bytes


def _backward_arena(slab, need, keep_graph, monkeypatch):
    # _Specialized._backward_arena on a stand-in that has only what it reads.
    from fuse import backend
    monkeypatch.setattr(torch._C._autograd, "_get_current_graph_task_keep_graph", lambda: keep_graph,
                        raising=False)
    stand_in = type("Backward", (), {"compiled": _Compiled(need)})()
    return backend._Specialized._backward_arena(stand_in, slab)


def test_the_backward_runs_in_the_slab_when_autograd_will_not_run_it_again(monkeypatch):
    slab = torch.arange(4 * ALIGNMENT, dtype=torch.int64).to(torch.uint8)
    assert _backward_arena(slab, 4 * ALIGNMENT, False, monkeypatch) is slab


def test_retain_graph_or_a_small_slab_gets_a_copy_that_keeps_the_saved_bytes(monkeypatch):
    # retain_graph=True: the backward must leave the saved values as they
    # are for the next one; a slab made before the layout grew is too small.
    slab = torch.arange(4 * ALIGNMENT, dtype=torch.int64).to(torch.uint8)
    for need, keep_graph in ((4 * ALIGNMENT, True), (6 * ALIGNMENT, False)):
        arena = _backward_arena(slab, need, keep_graph, monkeypatch)
        assert arena.data_ptr() != slab.data_ptr()
        assert arena.numel() == max(need, slab.numel())
        assert torch.equal(arena[:slab.numel()], slab)
