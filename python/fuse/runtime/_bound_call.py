"""A compiled graph's bindings kept from call to call: a call rebinds only
what changed since the last one.

The torch.compile backend calls each graph once a step (or once per layer)
with hundreds of tensors, nearly all of them parameters: the same objects at
the same addresses, step after step. Checking each one (dtype, shape,
device, contiguity, alignment), deciding whether to stage it
(`_stable_io.py`) and writing its address into the C array that fuseRun
takes cost about a millisecond of host time per GPT-2 forward. All of it
comes before the forward's first kernel, while the GPU waits.

Here a parameter that the last call bound at a position as it was (not
staged), and that comes back as the same object at the same address, is
left bound: its checks, the staging decision and its address all still
hold. Anything else is checked and staged as before: a new batch, a tensor
that autograd made, a CPU scalar, a staged input (whose buffer must be
refilled).

Only parameters are remembered. Holding any other tensor past its call
would keep its memory from the pools that reuse it (a slab of saved values,
a gradient).
"""

import operator

import torch

from ._capi import Addresses

__all__ = ["BoundCall"]


class BoundCall:
    """The input and output addresses of `compiled`'s last call, with the
    parameters behind them. `io` is the graph's _stable_io.StableIO; inputs
    at `skip` are bound by the caller (address 0: found in the arena)."""

    def __init__(self, compiled, io, skip=frozenset()):
        self.compiled, self.io, self.skip = compiled, io, frozenset(skip)
        count = len(compiled.inputs)
        self.kept = [None] * count  # the parameter bound as it was at each input, else None
        self.kept_addresses = [0] * count
        self.addresses = Addresses([0] * count, [0] * len(compiled.outputs))

    def changed(self, tensors):
        """Indices of `tensors` (the graph's inputs, in order) that are not
        the parameter bound there last call, at the same address."""
        kept, addresses = self.kept, self.kept_addresses
        return [k for k, tensor in enumerate(tensors)
                if kept[k] is not tensor or addresses[k] != tensor.data_ptr()]

    def is_kept(self, index, tensor):
        """Whether `tensor` is the parameter bound at input `index`, at the
        same address (so its dtype, shape and device were checked)."""
        return self.kept[index] is tensor and self.kept_addresses[index] == tensor.data_ptr()

    def keeps_all(self, inputs_of, tensors):
        """Whether each of `tensors` is the parameter bound at its input, at
        the same address; `inputs_of` (an operator.itemgetter of input
        indices, in the order of `tensors`) picks those inputs' entries.
        C loops (map) rather than is_kept per tensor: a step checks
        hundreds of parameters before its first kernel."""
        return (all(map(operator.is_, inputs_of(self.kept), tensors))
                and tuple(map(torch.Tensor.data_ptr, tensors)) == tuple(inputs_of(self.kept_addresses)))

    def bind_inputs(self, tensors, changed):
        """Checks and stages the inputs at `changed` (indices into
        `tensors`, the full list) and returns every input as bound (an
        unchanged one is a kept parameter, bound as it is)."""
        if len(tensors) != len(self.kept):
            self.compiled.check_inputs(tensors)  # raises the arity error
        if not changed:
            return tensors
        checked = self.compiled.check_inputs(tensors, skip=self.skip, indices=changed)
        bound = self.io.inputs(checked, indices=changed)
        parameter = torch.nn.Parameter
        pointers = self.addresses.inputs
        for k in changed:
            tensor = tensors[k]
            kept = type(tensor) is parameter and bound[k] is tensor and k not in self.skip
            self.kept[k] = tensor if kept else None
            self.kept_addresses[k] = tensor.data_ptr() if kept else 0
            pointers[k] = None if k in self.skip else (bound[k].data_ptr() or None)
        return bound

    def run(self, outputs, arena=None):
        """Enqueues the call with the inputs bound and `outputs` (tensors;
        None for those left in the arena)."""
        pointers = self.addresses.outputs
        for k, tensor in enumerate(outputs):
            pointers[k] = None if tensor is None else (tensor.data_ptr() or None)
        self.compiled.run_addresses(self.addresses, arena=arena)
