"""What a training graph's forward saves for its backward, in one block of
device memory per call (a slab) instead of one torch tensor per value.

AOTAutograd's partition makes the forward return every value the backward
needs (hundreds for a transformer: activations, bf16 weights) and hands them
back to the backward as inputs. As torch tensors that costs host time per
value and per call on both sides (allocating or pooling, aliasing, checking,
binding) for memory that only Fuse reads. Here the forward writes all the
values it alone computes into one slab, at offsets fixed when it is compiled
(`Layout`), and returns that one slab (an alias of it) for every saved value;
autograd keeps it with the graph, so it lives exactly as long as the backward
may still come, and the backward binds each value at the slab's address
plus its offset.

Slabs are pooled per forward (`SlabPool`): one that nothing holds any more (the
backward ran and autograd dropped the graph) is reused, so addresses repeat
and the CUDA graphs replay; one still held (a second micro-batch's forward
before the first backward, `retain_graph=True`) is left to its holder and a
new one allocated. The backward finds the layout of the slab it is given by
its address (`SavedValues.layout_at`), so it never confuses the slabs of two
specializations of the forward.

The backward leaves its results (the gradients) in the slab too, where the
saved values it has read for the last time were, and hands them out as
tensors on its memory (`result_view`): no memory of their own is held next
to the whole slab. A
gradient that autograd keeps in `param.grad` then holds the slab. With
`zero_grad(set_to_none=True)` (torch's default) it lets go before the next
forward. If it is still held when a forward needs a slab (a second
micro-batch before the optimizer step, `set_to_none=False`), the pool
moves the gradients of that forward's parameters into memory of their own
(`move_gradients`: one copy; `param.grad` becomes a new tensor with the
same values) and takes the slab back if nothing else holds it.
"""

import math
import weakref

import torch

from ..runtime._stable_io import _storage_key, _use_count, pool_limit

# Offsets within a slab: Fuse binds tensors at 16-byte boundaries; 256 keeps
# each value on its own cache lines and suits every vector width.
ALIGNMENT = 256

# Slabs a forward keeps for reuse: one per call of a step (a layer's graph
# runs once per layer; micro-batches run several forwards before their
# backwards), bounded by memory (runtime/_stable_io.py's pool_limit).


class Layout:
    """Where the saved values of one forward specialization lie in its
    slabs. Built from [(Fuse output index, byte offset, names of the saved
    values it holds)] (a value saved under several names, or as reshapes of
    one result, is stored once) and the slab's size: `output_offsets`
    {output index: byte offset}, `offsets` {value name: byte offset},
    `nbytes`. The slab is the forward's arena, and the offsets are where its
    memory plan left the values (`fuse.in_arena`); the backward runs in it
    too, so `nbytes` grows to the larger of the two arenas."""

    def __init__(self, values, nbytes):
        # Saved values stored as their base (_saved_views.py): name -> the
        # view ops the backward replays, and the base's (shape, dtype).
        self.chains, self.bases = {}, {}
        self.output_offsets, self.offsets = {}, {}
        for output, offset, names in values:
            self.output_offsets[output] = int(offset)
            for name in names:
                self.offsets[name] = int(offset)
        self.nbytes = max(-(-int(nbytes) // ALIGNMENT) * ALIGNMENT, ALIGNMENT)

    @classmethod
    def packed(cls, values):
        """A layout of [(output, bytes, names)] one after the other."""
        placed, total = [], 0
        for output, nbytes, names in values:
            placed.append((output, total, names))
            total += -(-int(nbytes) // ALIGNMENT) * ALIGNMENT
        return cls(placed, total)


class SavedValues:
    """One dynamo graph's saved values: their names (the partition's: a
    forward result and the backward input it becomes share a name), the
    number of the forward's results that are the user's (the saved ones
    follow), and the live slabs by address."""

    def __init__(self):
        self.names, self.user_outputs = frozenset(), None
        self.by_address = {}

    def note_partition(self, backward, num_fwd_outputs):
        """Records what the partition saved (the backward's inputs other than
        the incoming gradients)."""
        self.names = frozenset(n.name for n in backward.graph.nodes
                               if n.op == "placeholder" and not n.name.startswith("tangents"))
        self.user_outputs = int(num_fwd_outputs)

    def saved_positions(self, returned):
        """Positions among a forward graph's results that are saved values."""
        if self.user_outputs is None:
            return frozenset()
        return frozenset(i for i, node in enumerate(returned)
                         if i >= self.user_outputs and getattr(node, "name", None) in self.names)

    def layout_at(self, tensor):
        """The layout of the slab `tensor` aliases, or None if it is no slab."""
        if not isinstance(tensor, torch.Tensor) or tensor.dtype != torch.uint8 or tensor.dim() != 1:
            return None
        return self.by_address.get(tensor.data_ptr())

    def _register(self, slab, layout):
        address = slab.data_ptr()
        self.by_address[address] = layout
        # Forgotten when the slab dies (its memory may then hold another).
        weakref.finalize(slab, self._forget, address, layout)

    def _forget(self, address, layout):
        if self.by_address.get(address) is layout:
            del self.by_address[address]


class SlabPool:
    """The slabs of one forward specialization."""

    def __init__(self, layout, device, saved):
        self.layout, self.device, self.saved = layout, device, saved
        self.free = []  # [(slab, storage key)]
        # Slabs out of the pool that a backward to come still holds (through
        # an alias): kept, and so their addresses known, until let go. A
        # forward called more than pool_limit times before its backwards
        # (one dynamo graph run for every layer, as after a graph break)
        # would otherwise drop a slab whose backward then cannot find it.
        self.retired = []

    def take(self, parameters=()):
        """A slab nothing else holds: a pooled one, else a new one.
        `parameters` (the forward's): a pooled slab that only their
        gradients hold gets them moved out (move_gradients) and is taken."""
        if self.retired:
            self.retired = [(slab, (key, baseline)) for slab, (key, baseline) in self.retired
                            if _use_count is not None and _use_count(key) != baseline]
        # Slabs made before the layout grew (a backward's arena larger than
        # its forward's) are let go.
        self.free = [entry for entry in self.free if entry[0].numel() >= self.layout.nbytes]
        for slab, (key, baseline) in self.free:
            if _use_count is not None and _use_count(key) == baseline:
                return slab
        # A slab held by the gradients its backward left in it: they move
        # out (one copy) rather than a second slab being allocated.
        for slab, (key, baseline) in self.free:
            if (_use_count is not None and move_gradients(parameters, key)
                    and _use_count(key) == baseline):
                return slab
        slab = torch.empty(self.layout.nbytes, dtype=torch.uint8, device=self.device)
        self.saved._register(slab, self.layout)
        if len(self.free) >= pool_limit(self.layout.nbytes):
            self.retired.append(self.free.pop(0))
        self.free.append((slab, _storage_key(slab)))
        return slab


def move_gradients(parameters, key):
    """Gives each of `parameters` whose gradient lies in the storage
    `key` (a slab) a copy of it in memory of its own, so that the slab can
    be reused: the gradient keeps its values, shape and dtype, but
    `param.grad` becomes a new tensor (autograd keeps its own alias of what
    a backward returned, which cannot be moved in place). Returns whether
    any moved."""
    moved = False
    for parameter in parameters:
        grad = getattr(parameter, "grad", None)
        if grad is not None and not grad.is_sparse and grad.untyped_storage()._cdata == key:
            parameter.grad = grad.clone()
            moved = True
    return moved


class ArenaResult:
    """A result a backward leaves at a byte offset of its arena, with what
    making its tensor needs computed once (dtype, element offset, shape,
    contiguous strides): a backward hands out one per gradient every call,
    where recomputing them cost several microseconds each."""

    __slots__ = ("dtype", "element_offset", "shape", "stride")

    def __init__(self, offset, dtype, shape):
        self.dtype = dtype
        self.element_offset = offset // torch.empty(0, dtype=dtype).element_size()
        self.shape = [int(d) for d in shape]
        self.stride = [1] * len(self.shape)
        for i in range(len(self.shape) - 2, -1, -1):
            self.stride[i] = self.stride[i + 1] * max(self.shape[i + 1], 1)

    def view(self, storage, device):
        """The result as a dense tensor on `storage` (the arena's, fetched
        once a call) that shares its memory without being a view of the
        arena: a view would keep the arena tensor alive through its `_base`
        as well as the storage."""
        return torch.empty(0, dtype=self.dtype, device=device).set_(
            storage, self.element_offset, self.shape, self.stride)


def result_view(arena, offset, dtype, shape):
    """A dense tensor of `dtype` and `shape` at byte `offset` of `arena`
    (a uint8 tensor that owns its storage) that shares its memory without
    being a view of it (ArenaResult.view)."""
    return ArenaResult(offset, dtype, shape).view(arena.untyped_storage(), arena.device)


def unpack(saved, placeholders, args):
    """`args` (a backward graph's) with each saved value that arrives in a
    slab as the torch tensor it stands for: a view of the slab at its
    offset in the shape and dtype the forward stored, its view ops replayed
    (_saved_views.py) and cast to the dtype traced for it. What a backward
    gets where it runs in torch rather than in Fuse (eagerly, or in the
    torch parts of a split), whose ops cannot read a slab."""
    from ._saved_views import replay
    unpacked = list(args)
    for position, value in enumerate(args):
        layout = saved.layout_at(value)
        if layout is None or position >= len(placeholders):
            continue
        name = placeholders[position].name
        if name not in layout.offsets:
            continue
        shape, dtype = layout.bases[name]
        # The slab's bytes from the offset on are whole elements (offsets and
        # size are multiples of ALIGNMENT).
        tensor = value[layout.offsets[name]:].view(dtype)[:math.prod(shape)].view(shape)
        if name in layout.chains:
            tensor = replay(tensor, layout.chains[name])
        traced = placeholders[position].meta.get("val")
        if traced is not None and tensor.dtype != traced.dtype:
            tensor = tensor.to(traced.dtype)
        unpacked[position] = tensor
    return unpacked
