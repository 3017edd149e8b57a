"""The same device addresses for a compiled graph from call to call, so the
runtime replays the CUDA graph it captured instead of capturing anew.

The runtime captures a step once per set of input and output pointers and
replays it while they stay the same; new pointers mean a new capture
(enqueueing every kernel and cuBLASLt call again, then cudaGraphExecUpdate):
milliseconds of host time for a transformer step. Called from AOTAutograd,
a graph gets new pointers at every call unless someone keeps them still:

- Inputs. Parameters keep their memory, and so do the values a forward
  saved for its backward (outputs, below). What arrives at a new address
  each call is small: the batch, or the gradient autograd makes afresh for
  a scalar loss. Once an input has arrived at a second address it is
  copied, from then on, into a buffer of this graph's own (one small copy
  on the stream). A large input at a new address is passed as it is.
- Outputs. Each output's memory is kept here and reused at the next call
  once nothing else holds it, which torch's storage use count tells: in a
  training loop the backward frees the forward's saved values, and
  `zero_grad()` (set_to_none) the gradients the backward handed out. Memory
  still held (a second micro-batch's forward before the first backward, a
  gradient autograd keeps in `param.grad`) is left to its holder and a
  fresh output allocated. Callers get an alias (`detach()`, or a view), so
  that the use count sees them; outputs of a few elements (a loss the
  loop keeps to log it) they get as a copy, which pins nothing.
"""

import torch

# Inputs up to this size that arrive at changing addresses are copied into
# a buffer of the graph's own (a copy of at most a few microseconds).
STAGED_INPUT_BYTES = 1 << 20

# Outputs of at most this many elements are handed out as copies: a loss
# or a norm that a training loop keeps (to log it) would otherwise pin its
# memory. Larger ones (a forward's saved values among them) are not: a copy
# would move them and the backward's inputs with them.
COPIED_OUTPUT_ELEMENTS = 16

_use_count = getattr(torch._C, "_storage_Use_Count", None)


def _storage_key(tensor):
    """(storage, its use count while only `tensor` holds it). The baseline
    is measured, not assumed: asking for the storage gives it a Python
    object that torch keeps alive with it, one more use on torch 2.11."""
    key = tensor.untyped_storage()._cdata
    return key, (_use_count(key) if _use_count is not None else None)


class StableIO:
    """Input staging and an output pool for one compiled graph (a
    fuse.compiler.CompiledGraph). `counters` (a dict) counts, over every
    graph that shares it, outputs "reused" and "allocated" and inputs
    "staged" (copied)."""

    def __init__(self, compiled, counters=None):
        self.compiled = compiled
        self.donated_inputs = frozenset(compiled._aliases.values())
        self.last_address = {}
        self.staged = {}
        self.pool = [None] * len(compiled.outputs)
        self.pool_storage = [None] * len(compiled.outputs)
        self.counters = counters if counters is not None else {}
        for key in ("reused", "allocated", "staged"):
            self.counters.setdefault(key, 0)
        self.skipped_inputs = frozenset()
        self.output_specs = list(compiled.outputs)

    def skip_inputs(self, indices):
        """Inputs bound by the caller (saved values in a slab): left as they are."""
        self.skipped_inputs = frozenset(indices)

    def skip_outputs(self, indices):
        """Outputs placed by the caller (in a slab): None in `outputs()`."""
        self.output_specs = [spec for spec in self.compiled.outputs if spec.index not in indices]

    def inputs(self, tensors):
        """The checked inputs, small ones that move copied to fixed buffers."""
        result = list(tensors)
        for index, tensor in enumerate(tensors):
            if index in self.donated_inputs or index in self.skipped_inputs:
                continue  # the graph writes it (it must be the caller's memory), or the caller binds it
            buffer = self.staged.get(index)
            if buffer is None:
                address = tensor.data_ptr()
                previous = self.last_address.setdefault(index, address)
                if previous == address or tensor.numel() * tensor.element_size() > STAGED_INPUT_BYTES:
                    continue
                buffer = self.staged[index] = torch.empty_like(tensor, memory_format=torch.contiguous_format)
            buffer.copy_(tensor)
            self.counters["staged"] += 1
            result[index] = buffer
        return result

    def _free(self, index):
        tensor = self.pool[index]
        if tensor is None or _use_count is None:
            return False
        key, baseline = self.pool_storage[index]
        return _use_count(key) == baseline

    def outputs(self, inputs):
        """Output tensors: donated ones in their input's memory, the others
        in this graph's pooled memory where nothing holds it any more (None
        for the outputs skipped)."""
        outputs = [None] * len(self.compiled.outputs)
        for spec in self.output_specs:
            source = self.compiled._aliases.get(spec.index)
            if source is not None:
                outputs[spec.index] = inputs[source].view(spec.shape)
                continue
            if self._free(spec.index):
                self.counters["reused"] += 1
            else:
                tensor = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=self.compiled.device)
                self.pool[spec.index], self.pool_storage[spec.index] = tensor, _storage_key(tensor)
                self.counters["allocated"] += 1
            outputs[spec.index] = self.pool[spec.index]
        return outputs


def hand_out(tensor, shape=None):
    """What a caller gets of a pooled output: a copy of a small one (a loss
    the caller still holds at the next call must not keep the pool from
    reusing its memory), else a view or an alias, never the pooled tensor
    itself (its use count must see every holder)."""
    if tensor.numel() <= COPIED_OUTPUT_ELEMENTS:
        tensor = tensor.clone()
    return tensor.detach() if shape is None else tensor.view(shape)
