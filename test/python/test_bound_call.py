"""A compiled graph's bindings kept from call to call
(fuse/runtime/_bound_call.py), on the CPU: a parameter bound as it was is
not checked again while it comes back unchanged; everything else is, and
the address array fuseRun reads always holds what the call binds."""

import ctypes
import types

import pytest
import torch

from fuse import compiler
from fuse.runtime import _bound_call


class _Graph:
    """The parts of a CompiledGraph a BoundCall uses: the real input checks,
    counted, and a run that records the addresses it was given."""

    def __init__(self, shapes, outputs=1):
        entries = [{"name": f"x{i}", "dtype": "f32", "shape": list(s), "bytes": 4 * int(torch.tensor(s).prod())}
                   for i, s in enumerate(shapes)]
        self.inputs = [compiler.TensorSpec(i, e, "input") for i, e in enumerate(entries)]
        self.input_names = [e["name"] for e in entries]
        self.outputs = [None] * outputs
        self.signature = {"entry": "graph"}
        self.device, self.contiguous_copy = torch.device("cpu"), True
        self._checked_parameters = {}
        self.checked, self.runs = [], []

    def _require_session(self):
        return self

    def check_inputs(self, inputs, skip=(), indices=None):
        self.checked.append(None if indices is None else list(indices))
        return compiler.CompiledGraph.check_inputs(self, inputs, skip=skip, indices=indices)

    def run_addresses(self, addresses, arena=None):
        read = lambda array, n: [array[i] or 0 for i in range(n)]
        self.runs.append((read(addresses.inputs, addresses.n_inputs),
                          read(addresses.outputs, addresses.n_outputs), arena))


class _Staging:
    """StableIO's input staging as the test decides it: inputs at `staged`
    are copied into a buffer, the rest passed as they are."""

    def __init__(self, staged=()):
        self.staged, self.seen = set(staged), []

    def inputs(self, tensors, indices=None):
        self.seen.append(list(indices))
        result = list(tensors)
        for k in indices:
            if k in self.staged:
                result[k] = tensors[k].clone()
        return result


def _params(*shapes):
    return [torch.nn.Parameter(torch.randn(*s)) for s in shapes]


def test_unchanged_parameters_are_bound_once_and_new_tensors_every_call():
    graph = _Graph([(4, 4), (4,), (2, 4)])
    call = _bound_call.BoundCall(graph, _Staging())
    weight, bias = _params((4, 4), (4,))
    for step in range(3):
        batch = torch.randn(2, 4)  # a new batch every step
        tensors = [weight, bias, batch]
        changed = call.changed(tensors)
        assert changed == ([0, 1, 2] if step == 0 else [2])
        bound = call.bind_inputs(tensors, changed)
        assert bound[0] is weight and bound[2] is batch
        out = torch.empty(3)
        call.run([out])
        inputs, outputs, _ = graph.runs[-1]
        assert inputs == [weight.data_ptr(), bias.data_ptr(), batch.data_ptr()]
        assert outputs == [out.data_ptr()]
    assert graph.checked == [[0, 1, 2], [2], [2]]


def test_a_parameter_given_new_memory_is_checked_and_bound_again():
    graph = _Graph([(4,)])
    call = _bound_call.BoundCall(graph, _Staging())
    (weight,) = _params((4,))
    call.bind_inputs([weight], call.changed([weight]))
    assert call.changed([weight]) == []
    weight.data = torch.randn(4)  # same object, another address
    assert call.changed([weight]) == [0] and not call.is_kept(0, weight)
    call.bind_inputs([weight], [0])
    call.run([])
    assert graph.runs[-1][0] == [weight.data_ptr()]
    weight.data = torch.randn(5)  # the wrong shape is refused, not skipped
    with pytest.raises(ValueError, match="x0"):
        call.bind_inputs([weight], call.changed([weight]))


def test_staged_parameters_and_plain_tensors_are_never_kept():
    graph = _Graph([(4,), (4,)])
    staging = _Staging(staged={0})
    call = _bound_call.BoundCall(graph, staging)
    (weight,) = _params((4,))
    plain = torch.randn(4)
    for _ in range(2):
        tensors = [weight, plain]
        bound = call.bind_inputs(tensors, call.changed(tensors))
        assert bound[0] is not weight  # the buffer, refilled every call
    assert staging.seen == [[0, 1], [0, 1]]


def test_inputs_the_caller_binds_are_null_and_never_kept():
    graph = _Graph([(4,), (4,)])
    call = _bound_call.BoundCall(graph, _Staging(), skip={1})
    weight, slab_value = _params((4,), (4,))
    for _ in range(2):
        tensors = [weight, slab_value]
        call.bind_inputs(tensors, call.changed(tensors))
        call.run([None], arena=(1024, 4096))
    inputs, outputs, arena = graph.runs[-1]
    assert inputs == [weight.data_ptr(), 0] and outputs == [0] and arena == (1024, 4096)
    assert call.changed([weight, slab_value]) == [1]


def test_nothing_but_the_kept_parameters_outlives_its_call():
    import gc
    import weakref
    graph = _Graph([(4,), (4,)])
    call = _bound_call.BoundCall(graph, _Staging(), skip={1})
    (weight,) = _params((4,))
    slab, batch = torch.randn(4), torch.randn(4)
    tensors = [weight, slab]
    call.bind_inputs(tensors, call.changed(tensors))
    call.run([batch])
    gone = [weakref.ref(slab), weakref.ref(batch)]
    del tensors, slab, batch
    gc.collect()
    # A slab or an output held here would never return to its pool.
    assert all(ref() is None for ref in gone)


def test_a_wrong_number_of_inputs_is_refused_by_name():
    graph = _Graph([(4,), (4,)])
    call = _bound_call.BoundCall(graph, _Staging())
    with pytest.raises(TypeError, match="takes 2 inputs"):
        call.bind_inputs([torch.randn(4)], [0])


def test_the_address_arrays_are_c_pointer_arrays():
    call = _bound_call.BoundCall(_Graph([(4,)], outputs=2), _Staging())
    assert isinstance(call.addresses.inputs, ctypes.Array) and call.addresses.n_outputs == 2


def test_keeps_all_checks_every_parameter_at_once():
    import operator
    graph = _Graph([(4,), (4,), (4,)])
    call = _bound_call.BoundCall(graph, _Staging())
    weights = _params((4,), (4,))
    batch = torch.randn(4)
    call.bind_inputs(weights + [batch], call.changed(weights + [batch]))
    inputs_of = operator.itemgetter(0, 1)
    assert call.keeps_all(inputs_of, tuple(weights))
    assert not call.keeps_all(inputs_of, (weights[1], weights[0]))  # each at its own input
    weights[1].data = torch.randn(4)  # another address
    assert not call.keeps_all(inputs_of, tuple(weights))
    assert not call.keeps_all(operator.itemgetter(2, 0), (batch, weights[0]))  # a batch is never kept
