"""The same device addresses for a compiled graph from call to call, so the
runtime replays a CUDA graph it captured instead of capturing anew.

The runtime captures a step once per set of input and output pointers and
keeps up to 32 such graphs, replaying the one whose pointers a call brings
(new pointers mean a capture: enqueueing every kernel and cuBLASLt call
again, hundreds of microseconds of host time). A dynamo graph that is one
layer of a model runs once per layer every step, each time with its
layer's weights, activations and saved values: what must hold still is
each call's set from one step to the next, not one set for all calls.

- Inputs. Parameters keep their memory; so do the values a forward saved
  for its backward and the outputs handed from graph to graph (outputs,
  below). An input at an address this position has not had recently (the
  batch, or a gradient autograd makes afresh for a scalar loss) is copied,
  if small, into a buffer of this graph's own (one small copy on the
  stream); an address seen recently (a layer's weights, an allocation the
  caching allocator hands back every step) is passed as it is. A large
  input at a new address is passed as it is (a capture).
- Outputs. Each output keeps a list of its past tensors, and a call takes
  the first that nothing else holds any more (torch's storage use count
  tells): in a training loop the backward frees the forward's saved
  values and `zero_grad()` (set_to_none) the gradients, so the calls of
  one step take the same tensors, in the same order, every step. Memory
  still held (a second micro-batch's forward before the first backward, a
  gradient autograd keeps in `param.grad`) is left to its holder, and a new
  tensor joins the list. Callers get an alias (`detach()`, or a view), so
  that the use count sees them; outputs of a few elements (a loss the
  loop keeps to log it) they get as a copy, which pins nothing.
  A pooled tensor that was free but passed over (an earlier one was free
  too) on as many calls in a row as the pool has tensors is let go: a
  caller that held one call's output across the next once (a first step's
  logits kept to check them) would otherwise pin a second copy of the
  output for good (2.1 GB of a 256000-word vocabulary's logits). Calls
  that cycle through the pool (a layer graph's calls of one step, two
  micro-batches, each call's result kept until the next returns) take
  each tensor once per cycle, having passed it over fewer times than that.
"""

import torch

# Inputs up to this size that arrive at changing addresses are copied into
# a buffer of the graph's own (a copy of at most a few microseconds).
STAGED_INPUT_BYTES = 1 << 20

# Addresses remembered per input position (as recently seen, so passed as
# they are), and tensors remembered per output: a layer graph's calls per
# step, as many as the runtime keeps captured graphs.
RECENT = 32
# Pooled tensors of one output together hold at most this much memory
# (though always two): what a holder lets go of stays in the pool, and a
# loop that keeps every step's logits must not leave 32 of them there.
POOL_BYTES = 1 << 30


def pool_limit(nbytes):
    """How many tensors of `nbytes` a pool keeps."""
    return max(2, min(RECENT, POOL_BYTES // max(nbytes, 1)))

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
        self.recent = {}  # input index -> {address: None}, in the order first seen
        self.staged = {}
        # Per output: [[tensor, (storage key, its baseline use count), calls passed over while free]]
        self.pool = [[] for _ in compiled.outputs]
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

    def inputs(self, tensors, indices=None):
        """The checked inputs, small ones at new addresses copied to fixed
        buffers; with `indices`, only those are looked at (the others as
        they are)."""
        result = list(tensors)
        for index in range(len(tensors)) if indices is None else indices:
            tensor = tensors[index]
            if index in self.donated_inputs or index in self.skipped_inputs:
                continue  # the graph writes it (it must be the caller's memory), or the caller binds it
            address = tensor.data_ptr()
            recent = self.recent.get(index)
            if recent is None:
                recent = self.recent[index] = {}
            elif address in recent:
                continue
            # Remembered (the oldest let go): if it comes back (the
            # allocator's same block next step, a layer's weight), it is
            # passed as it is. The first address is passed as it is too.
            first = not recent
            if len(recent) >= RECENT:
                del recent[next(iter(recent))]
            recent[address] = None
            if first or tensor.numel() * tensor.element_size() > STAGED_INPUT_BYTES:
                continue
            buffer = self.staged.get(index)
            if buffer is None:
                buffer = self.staged[index] = torch.empty_like(tensor, memory_format=torch.contiguous_format)
            buffer.copy_(tensor)
            self.counters["staged"] += 1
            result[index] = buffer
        return result

    def _take(self, index, spec):
        """The first pooled tensor of output `index` that nothing holds,
        else a new one, remembered (up to pool_limit). Free tensors after
        the one taken are passed over, and let go when passed over on as
        many calls in a row as the pool has tensors."""
        pool = self.pool[index]
        idle_calls = len(pool)
        taken, kept = None, []
        for entry in pool:
            tensor, (key, baseline), _ = entry
            if _use_count is None or _use_count(key) != baseline:
                entry[2] = 0  # held: its holder will let it go
            elif taken is None:
                taken, entry[2] = tensor, 0
            else:
                entry[2] += 1
                if entry[2] >= idle_calls:
                    continue
            kept.append(entry)
        pool[:] = kept
        if taken is not None:
            self.counters["reused"] += 1
            return taken
        tensor = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=self.compiled.device)
        self.counters["allocated"] += 1
        if len(pool) >= pool_limit(tensor.numel() * tensor.element_size()):
            pool.pop(0)  # its holder keeps it; the next steps settle on the others
        pool.append([tensor, _storage_key(tensor), 0])
        return tensor

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
            outputs[spec.index] = self._take(spec.index, spec)
        return outputs


def hand_out(tensor, shape=None):
    """What a caller gets of a pooled output: a copy of a small one (a loss
    the caller still holds at the next call must not keep the pool from
    reusing its memory), else a view or an alias, never the pooled tensor
    itself (its use count must see every holder)."""
    if tensor.numel() <= COPIED_OUTPUT_ELEMENTS:
        tensor = tensor.clone()
    return tensor.detach() if shape is None else tensor.view(shape)
