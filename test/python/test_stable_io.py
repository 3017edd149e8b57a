"""The backend's stable addresses (fuse/runtime/_stable_io.py) on the CPU:
the calls of one step get the same tensors in the same order every step,
and the inputs that move are copied only while they are new. Whether a
tensor is free is torch's storage use count on torch 2.x; here a stand-in
counts the holders the test declares."""

import types

import pytest
import torch

from fuse.runtime import _stable_io


class _Holders:
    """Storage use counts the test controls: a pooled tensor is free when
    no holder is declared for it."""

    def __init__(self):
        self.count = {}

    def key(self, tensor):
        return id(tensor), 0

    def use_count(self, key):
        return self.count.get(key, 0)

    def hold(self, tensor):
        self.count[id(tensor)] = self.count.get(id(tensor), 0) + 1

    def release_all(self):
        self.count.clear()


@pytest.fixture
def holders(monkeypatch):
    fake = _Holders()
    monkeypatch.setattr(_stable_io, "_use_count", fake.use_count)
    monkeypatch.setattr(_stable_io, "_storage_key", fake.key)
    return fake


def _compiled(output_shapes):
    specs = [types.SimpleNamespace(index=i, shape=shape, torch_dtype=lambda: torch.float32)
             for i, shape in enumerate(output_shapes)]
    return types.SimpleNamespace(_aliases={}, outputs=specs, device=torch.device("cpu"))


def test_a_layer_graphs_calls_take_the_same_tensors_every_step(holders):
    io = _stable_io.StableIO(_compiled([(4, 8)]))
    steps = []
    for _ in range(3):
        addresses = []
        for _layer in range(6):  # each output held (saved, passed on) until the step ends
            (out,) = io.outputs([])
            holders.hold(out)
            addresses.append(out.data_ptr())
        holders.release_all()  # the backward ran, the graph freed its values
        steps.append(addresses)
    assert len(set(steps[0])) == 6 and steps[1] == steps[0] and steps[2] == steps[0]
    assert io.counters["allocated"] == 6 and io.counters["reused"] == 12


def test_a_pool_of_large_outputs_keeps_two(holders, monkeypatch):
    # Outputs as large as the pool's budget (logits a loop keeps): the pool
    # remembers two, the rest belong to their holders alone.
    monkeypatch.setattr(_stable_io, "POOL_BYTES", 200)
    assert _stable_io.pool_limit(4 * 8 * 4) == 2
    io = _stable_io.StableIO(_compiled([(4, 8)]))
    for _ in range(5):
        (out,) = io.outputs([])
        holders.hold(out)
    assert io.counters["allocated"] == 5 and len(io.pool[0]) == 2


def test_an_output_held_across_one_call_does_not_pin_a_second_copy(holders):
    # A first step's logits kept to check them while the next call runs,
    # then every call's result dropped at once (the harness, an eval loop):
    # the second tensor the pool made is let go once it has been passed
    # over on as many calls in a row as the pool has tensors (two).
    io = _stable_io.StableIO(_compiled([(4, 8)]))
    (first,) = io.outputs([])
    holders.hold(first)
    (second,) = io.outputs([])
    assert second is not first and len(io.pool[0]) == 2
    holders.release_all()
    for _ in range(2):
        assert len(io.pool[0]) == 2
        (out,) = io.outputs([])
        assert out is first
    assert [entry[0] for entry in io.pool[0]] == [first]
    assert io.counters["allocated"] == 2


def test_outputs_used_in_turn_stay_pooled(holders):
    # Two micro-batches a step, each forward's output held until its
    # backward; and a loop that keeps each result until the next returns.
    io = _stable_io.StableIO(_compiled([(4, 8)]))
    for _ in range(6):
        (a,) = io.outputs([])
        holders.hold(a)
        (b,) = io.outputs([])
        holders.hold(b)
        holders.release_all()
    assert len(io.pool[0]) == 2 and io.counters["allocated"] == 2
    kept = None
    for _ in range(6):
        (out,) = io.outputs([])
        holders.release_all()
        holders.hold(out)
        assert out is not kept
        kept = out
    assert len(io.pool[0]) == 2 and io.counters["allocated"] == 2


def test_inputs_that_come_back_are_passed_new_ones_copied_while_new(holders):
    io = _stable_io.StableIO(_compiled([]))
    weights = [torch.randn(16) for _ in range(3)]  # a layer graph's bias, per layer
    seen = []
    for step in range(3):
        for weight in weights:
            (given,) = io.inputs([weight])
            assert torch.equal(given, weight)
            seen.append((step, given is weight))
    # The first step copies the two addresses it has not seen; later steps
    # pass every weight as it is.
    assert [passed for step, passed in seen if step == 0] == [True, False, False]
    assert all(passed for step, passed in seen if step > 0)
    fresh_copies, alive = set(), []
    for _ in range(4):  # a small input at a new address every call (all kept: no address reused)
        fresh = torch.randn(16)
        alive.append(fresh)
        (given,) = io.inputs([fresh])
        assert torch.equal(given, fresh) and given is not fresh
        fresh_copies.add(given.data_ptr())
    assert len(fresh_copies) == 1  # always the graph's own buffer: one address


def test_a_large_input_at_a_new_address_is_passed_as_it_is(holders):
    io = _stable_io.StableIO(_compiled([]))
    size = _stable_io.STAGED_INPUT_BYTES // 4 + 1
    first, second = torch.zeros(size), torch.ones(size)
    assert io.inputs([first])[0] is first and io.inputs([second])[0] is second
    assert io.counters["staged"] == 0
