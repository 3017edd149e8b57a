"""ATen shape, indexing and reduction ops as fuse ops."""

import math

import torch

from ._aten_common import (Const, HANDLERS, TensorType, Unsupported, Value, as_bool, broadcast, cast, element_type,
                           finish, handles, index_operand, int_list, normalize_dim, normalize_dims, operand, reduce,
                           reshape, transpose)


# -- shapes -----------------------------------------------------------------------

@handles("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
         "aten.view_copy.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default",
         "aten.unsqueeze.default", "aten.flatten.using_ints", "aten.unflatten.int",
         "aten._reshape_alias.default", "prims.squeeze.default")
def view(cx, node, x, *args):
    out = cx.node_type()
    return reshape(cx, operand(cx, x, x.shape, out.element), out.shape)


@handles("aten.permute.default")
def permute(cx, node, x, dims):
    return transpose(cx, x, [normalize_dim(d, x.type.rank) for d in dims])


@handles("aten.transpose.int")
def transpose_int(cx, node, x, dim0, dim1):
    rank = x.type.rank
    permutation = list(range(rank))
    a, b = normalize_dim(dim0, rank), normalize_dim(dim1, rank)
    permutation[a], permutation[b] = permutation[b], permutation[a]
    return transpose(cx, x, permutation)


@handles("aten.t.default", "aten.numpy_T.default")
def t(cx, node, x):
    return transpose(cx, x, list(reversed(range(x.type.rank))))


@handles("aten.expand.default", "aten.expand_copy.default", "aten.broadcast_to.default")
def expand(cx, node, x, size, implicit=False):
    out = cx.node_type()
    return operand(cx, x, out.shape, out.element)


def slice_value(cx, x, dim, start, end, step=1):
    shape = x.shape
    if start == 0 and end == shape[dim] and step == 1:
        return x
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[dim], limits[dim], strides[dim] = start, end, step
    size = max(0, -(-(end - start) // step))
    type_ = x.type.with_shape(shape[:dim] + (size,) + shape[dim + 1:])
    return cx.emit(f"fuse.slice {{0}}, start = {int_list(starts)}, limit = {int_list(limits)}, "
                   f"stride = {int_list(strides)} : ({x.type}) -> {type_}", [x], [type_])


def _slice_bounds(size, start, end):
    start = 0 if start is None else int(start)
    end = size if end is None else int(end)
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end


@handles("aten.slice.Tensor", "aten.slice_copy.Tensor")
def slice_tensor(cx, node, x, dim=0, start=None, end=None, step=1):
    dim = normalize_dim(dim, x.type.rank)
    start, end = _slice_bounds(x.shape[dim], start, end)
    return slice_value(cx, x, dim, start, end, int(step))


@handles("aten.select.int", "aten.select_copy.int")
def select_int(cx, node, x, dim, index):
    dim = normalize_dim(dim, x.type.rank)
    index = int(index) + (x.shape[dim] if int(index) < 0 else 0)
    return reshape(cx, slice_value(cx, x, dim, index, index + 1), cx.node_type().shape)


def concat(cx, values, dim, out):
    values = [v for v in values if v.type.numel > 0 or len(values) == 1]
    if len(values) == 1:
        return values[0]
    types = ", ".join(str(v.type) for v in values)
    fields = ", ".join("{%d}" % i for i in range(len(values)))
    return cx.emit(f"fuse.concat dim({dim}) {fields} : ({types}) -> {out}", values, [out])


@handles("aten.cat.default")
def cat(cx, node, tensors, dim=0):
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    values = []
    for x in tensors:
        if isinstance(x, (Value, Const)) and len(x.shape) == 1 and x.shape[0] == 0 and out.rank > 1:
            continue  # torch.cat skips empty 1-D tensors
        values.append(operand(cx, x, x.shape, out.element))
    return concat(cx, values, dim, out)


@handles("aten.split.Tensor", "aten.split_with_sizes.default", "aten.split_with_sizes_copy.default",
         "aten.split.sizes")
def split(cx, node, x, sizes, dim=0):
    dim = normalize_dim(dim, x.type.rank)
    total = x.shape[dim]
    if isinstance(sizes, int):
        sizes = [min(sizes, total - start) for start in range(0, total, sizes)]
    pieces, start = [], 0
    for size in sizes:
        pieces.append(slice_value(cx, x, dim, start, start + int(size)))
        start += int(size)
    return pieces


@handles("aten.unbind.int")
def unbind(cx, node, x, dim=0):
    dim = normalize_dim(dim, x.type.rank)
    shape = x.shape[:dim] + x.shape[dim + 1:]
    return [reshape(cx, slice_value(cx, x, dim, i, i + 1), shape) for i in range(x.shape[dim])]


def _scatter_slice(cx, base, source, dim, start, step, out, fill=0):
    """`out`: `base` with `source` written along `dim` at start, start +
    step, ... (slice_scatter, select_scatter); with `base` None, `fill`
    (zeros: the gradient of a slice or a select). Concatenations and reshapes, no
    scatter: with a step, each element of `source` followed by the step - 1
    elements of `base` after its place, as one run (GPT-J's interleaved
    rotary pairs, x[..., ::2] and x[..., 1::2])."""
    size, count = out.shape[dim], source.shape[dim]

    def part(low, high):
        if base is None:
            shape = list(out.shape)
            shape[dim] = high - low
            return cx.splat(fill, TensorType(shape, out.element))
        return slice_value(cx, base, dim, low, high)

    source = operand(cx, source, source.shape, out.element)
    if step == 1 or count <= 1:
        middle, stop = source, start + count
    else:
        # The run covers count * step elements from start, cropped where it
        # passes the end of the dimension.
        stop = min(start + count * step, size)
        outer, inner = list(out.shape[:dim]), list(out.shape[dim + 1:])
        grouped = TensorType(outer + [count, step] + inner, out.element)
        if base is None:
            gaps = cx.splat(fill, grouped.with_shape(outer + [count, step - 1] + inner))
        else:
            region = part(start, stop)
            if stop - start < count * step:
                padding = cx.splat(0, TensorType(outer + [count * step - (stop - start)] + inner, out.element))
                region = concat(cx, [region, padding], dim,
                                TensorType(outer + [count * step] + inner, out.element))
            gaps = slice_value(cx, reshape(cx, region, grouped.shape), dim + 1, 1, step)
        column = reshape(cx, source, outer + [count, 1] + inner)
        run = reshape(cx, concat(cx, [column, gaps], dim + 1, grouped), outer + [count * step] + inner)
        middle = slice_value(cx, run, dim, 0, stop - start)
    pieces = [part(0, start) if start > 0 else None, middle, part(stop, size) if stop < size else None]
    return concat(cx, [p for p in pieces if p is not None], dim, out)


@handles("aten.slice_scatter.default")
def slice_scatter(cx, node, base, source, dim=0, start=None, end=None, step=1):
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    start, _ = _slice_bounds(out.shape[dim], start, end)
    if int(step) < 1:
        raise Unsupported(f"slice_scatter with step {step}")
    if isinstance(base, Const) and base.splat is not None:
        # torch 2.x's slice_backward: slice_scatter into new_zeros.
        return _scatter_slice(cx, None, source, dim, start, int(step), out, fill=base.splat)
    base = operand(cx, base, out.shape, out.element)
    return _scatter_slice(cx, base, source, dim, start, int(step), out)


def _selected_slice(cx, value, out, dim, index):
    """(dim, index, `value` as the one-wide slice a select took at `index`
    of `out`'s shape): what select's scatter and backward put back."""
    dim = normalize_dim(dim, out.rank)
    index = int(index) + (out.shape[dim] if int(index) < 0 else 0)
    shape = list(out.shape)
    shape[dim] = 1
    return dim, index, reshape(cx, operand(cx, value, value.shape, out.element), shape)


@handles("aten.select_scatter.default")
def select_scatter(cx, node, base, source, dim, index):
    dim, index, source = _selected_slice(cx, source, cx.node_type(), dim, index)
    return slice_scatter(cx, node, base, source, dim, index, index + 1)


@handles("aten.slice_backward.default")
def slice_backward(cx, node, grad, input_sizes, dim, start, end, step):
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    start, _ = _slice_bounds(out.shape[dim], start, end)
    return _scatter_slice(cx, None, grad, dim, start, int(step), out)


@handles("aten.roll.default")
def roll(cx, node, x, shifts, dims=()):
    """torch.roll (Swin's cyclic shift) as two slices concatenated per
    rolled dimension; with no dims, of the flattened tensor."""
    out = cx.node_type()
    value = operand(cx, x, x.shape, out.element)
    shifts = [int(s) for s in (shifts if isinstance(shifts, (list, tuple)) else [shifts])]
    dims = [int(d) for d in (dims if isinstance(dims, (list, tuple)) else [dims])]
    if not dims:
        flat = reshape(cx, value, [math.prod(out.shape)])
        return reshape(cx, _roll_one(cx, flat, shifts[0], 0), out.shape)
    for shift, dim in zip(shifts, dims):
        value = _roll_one(cx, value, shift, normalize_dim(dim, out.rank))
    return value


def _roll_one(cx, value, shift, dim):
    size = value.shape[dim]
    shift = shift % size if size else 0
    if shift == 0:
        return value
    return concat(cx, [slice_value(cx, value, dim, size - shift, size), slice_value(cx, value, dim, 0, size - shift)],
                  dim, value.type)


@handles("aten.select_backward.default")
def select_backward(cx, node, grad, input_sizes, dim, index):
    out = cx.node_type()
    dim, index, grad = _selected_slice(cx, grad, out, dim, index)
    return _scatter_slice(cx, None, grad, dim, index, 1, out)


@handles("aten.stack.default")
def stack(cx, node, tensors, dim=0):
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    pieces = []
    for x in tensors:
        shape = list(x.shape)
        shape.insert(dim, 1)
        pieces.append(reshape(cx, operand(cx, x, x.shape, out.element), shape))
    return concat(cx, pieces, dim, out)


@handles("aten.constant_pad_nd.default")
def constant_pad_nd(cx, node, x, pad, value=0):
    out = cx.node_type()
    current = operand(cx, x, x.shape, out.element)
    for pair in range(len(pad) // 2):
        dim = out.rank - 1 - pair
        before, after = int(pad[2 * pair]), int(pad[2 * pair + 1])
        # Negative padding crops (the backward of a pad, padding='same' of an
        # even convolution kernel).
        if before < 0 or after < 0:
            size = current.shape[dim]
            current = slice_value(cx, current, dim, max(-before, 0), size - max(-after, 0))
            before, after = max(before, 0), max(after, 0)
        pieces = []
        for size in (before, None, after):
            if size is None:
                pieces.append(current)
            elif size > 0:
                shape = list(current.shape)
                shape[dim] = size
                pieces.append(cx.splat(value, TensorType(shape, out.element)))
        shape = list(current.shape)
        shape[dim] += before + after
        current = concat(cx, pieces, dim, TensorType(shape, out.element))
    return current


def _padded_positions(cx, mode, before, size, after):
    """For reflection or replication padding of one dimension of `size` by
    `before` and `after` (negative crops): i64 [before + size + after], the
    input position each output element reads, computed from an iota as
    PyTorch's decomposition does (kernels compute it inline, as flip's):
    reflect n-1 - |n-1 - |i - before||, replicate clamp(i - before, 0,
    n-1)."""
    length = before + size + after
    index_type = TensorType((length,), "i64")

    def emit(op, *values):
        return cx.emit(f"fuse.{op} " + ", ".join("{%d}" % i for i in range(len(values))) + f" : {index_type}",
                       list(values), [index_type], hint="positions")

    splat = lambda n: cx.splat(n, index_type)
    positions = emit("sub", cx.emit(f"fuse.iota dim = 0 : {index_type}", [], [index_type], hint="positions"),
                     splat(before))
    if mode == "reflect":
        folded = emit("abs", emit("sub", splat(size - 1), emit("abs", positions)))
        return emit("sub", splat(size - 1), folded)
    return emit("minimum", emit("maximum", positions, splat(0)), splat(size - 1))


def _padded_dims(padding, rank):
    """(dim, before, after) for ATen's padding list (last dimension first)."""
    return [(rank - 1 - pair, int(padding[2 * pair]), int(padding[2 * pair + 1]))
            for pair in range(len(padding) // 2)]


def _index_padding(mode):
    """reflection_padNd / replication_padNd: a gather per padded dimension."""
    def handler(cx, node, x, padding):
        out = cx.node_type()
        value = operand(cx, x, x.shape, out.element)
        for dim, before, after in _padded_dims(padding, out.rank):
            if before == 0 and after == 0:
                continue
            positions = _padded_positions(cx, mode, before, value.shape[dim], after)
            shape = list(value.shape)
            shape[dim] = positions.shape[0]
            value = gather(cx, value, positions, dim, TensorType(shape, out.element))
        return value
    return handler


def _index_padding_backward(mode):
    """The backward of a reflection or replication padding: each padded
    dimension's gradient added back at the positions its gather read (a
    scatter_add per dimension, the border elements read twice or more)."""
    def handler(cx, node, grad, x, padding):
        out = cx.node_type()
        value = operand(cx, grad, grad.shape, out.element)
        for dim, before, after in _padded_dims(padding, out.rank):
            if before == 0 and after == 0:
                continue
            positions = _padded_positions(cx, mode, before, out.shape[dim], after)
            shape = list(value.shape)
            shape[dim] = out.shape[dim]
            type_ = TensorType(shape, out.element)
            value = scatter_add(cx, cx.splat(0, type_), positions, value, dim, type_)
        return value
    return handler


for _mode, _aten in (("reflect", "reflection"), ("replicate", "replication")):
    for _rank in (1, 2, 3):
        HANDLERS[f"aten.{_aten}_pad{_rank}d.default"] = _index_padding(_mode)
        HANDLERS[f"aten.{_aten}_pad{_rank}d_backward.default"] = _index_padding_backward(_mode)


# -- indexing -----------------------------------------------------------------------

def gather(cx, x, indices, dim, out):
    return cx.emit(f"fuse.gather {{0}}[{{1}}], dim = {dim} : ({x.type}, {indices.type}) -> {out}",
                   [x, indices], [out])


@handles("aten.embedding.default")
def embedding(cx, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    out = cx.node_type()
    return gather(cx, operand(cx, weight, weight.shape, out.element), index_operand(cx, indices), 0, out)


@handles("aten.index_select.default")
def index_select(cx, node, x, dim, indices):
    out = cx.node_type()
    dim = normalize_dim(dim, len(x.shape))
    return gather(cx, operand(cx, x, x.shape, out.element), index_operand(cx, indices), dim, out)


def _wrapped_index(cx, index, size):
    """An advanced index as an operand, negative entries counted from the
    end as torch counts them (x[:, [-2]] is x[:, [size - 2]]): folded for a
    constant, a select for a computed index."""
    if isinstance(index, Const):
        tensor = index.tensor
        if (tensor < 0).any():
            index = Const(torch.where(tensor < 0, tensor + size, tensor))
        return index_operand(cx, index)
    value = index_operand(cx, index)
    flags = value.type.with_element("i1")
    negative = cx.emit(f"fuse.compare lt, {{0}}, {{1}} : {value.type}", [value, cx.splat(0, value.type)], [flags])
    shifted = cx.emit(f"fuse.add {{0}}, {{1}} : {value.type}", [value, cx.splat(size, value.type)], [value.type])
    return cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {flags}, {value.type}", [negative, shifted, value],
                   [value.type])


def _joint_index(cx, x_shape, indices):
    """Index tensors on consecutive dimensions (x[arange(B), ids.argmax(-1)],
    CLIP's pooling) as one index into those dimensions merged: (first
    dimension, how many, the i64 position within the merged dimension, of
    the indices' broadcast shape). One index tensor is itself."""
    used = [(d, i) for d, i in enumerate(indices) if i is not None]
    dims = [d for d, _ in used]
    if dims != list(range(dims[0], dims[0] + len(dims))):
        raise Unsupported("advanced indexing with index tensors on dimensions that are not adjacent")
    for _, idx in used:
        if isinstance(idx, (Value, Const)) and element_type(idx) == "i1":
            raise Unsupported("boolean mask indexing (data-dependent shape)")
    values = [_wrapped_index(cx, i, x_shape[d]) for d, i in used]
    if len(values) == 1:
        return dims[0], 1, values[0]
    rank = max(len(v.shape) for v in values)
    shape = [1] * rank
    for v in values:
        for i, size in enumerate(v.shape):
            at = rank - len(v.shape) + i
            shape[at] = max(shape[at], size)
    index_type = TensorType(shape, "i64")
    terms = [(broadcast(cx, cast(cx, v, "i64"), shape), math.prod(x_shape[d] for d in dims[position + 1:]))
             for position, v in enumerate(values)]
    total = _position_sum(cx, terms, index_type)
    return dims[0], len(dims), total


def _merged(shape, dim, count):
    return list(shape[:dim]) + [math.prod(shape[dim:dim + count])] + list(shape[dim + count:])


@handles("aten.index.Tensor")
def index_tensor(cx, node, x, indices):
    out = cx.node_type()
    dim, count, idx = _joint_index(cx, x.shape, indices)
    value = operand(cx, x, x.shape, out.element)
    if count > 1:
        value = reshape(cx, value, _merged(x.shape, dim, count))
    return gather(cx, value, idx, dim, out)


def _position_sum(cx, terms, index_type):
    """Σ value·stride over (i64 value of `index_type`, stride) pairs: a
    row-major position from per-dimension coordinates."""
    total = None
    for value, stride in terms:
        if stride != 1:
            value = cx.emit(f"fuse.mul {{0}}, {{1}} : {index_type}", [value, cx.splat(stride, index_type)],
                            [index_type], hint="position")
        total = value if total is None else cx.emit(f"fuse.add {{0}}, {{1}} : {index_type}", [total, value],
                                                    [index_type], hint="position")
    return total


def _flat_positions(cx, x_shape, index, dim):
    """For torch.gather/scatter_add along `dim` with a same-rank `index`:
    the position in x flattened (row-major) of every element `index` names,
    i64 of index's shape: index * stride[dim] plus, along every other
    dimension, the element's own coordinate (an iota) * that stride."""
    shape = tuple(index.shape)
    index_type = TensorType(shape, "i64")
    strides = [math.prod(x_shape[d + 1:]) for d in range(len(x_shape))]
    terms = [(cast(cx, index, "i64"), strides[dim])]
    for d in range(len(shape)):
        if d != dim and shape[d] != 1:
            iota = cx.emit(f"fuse.iota dim = {d} : {index_type}", [], [index_type], hint="coordinate")
            terms.append((iota, strides[d]))
    return _position_sum(cx, terms, index_type)


@handles("aten.gather.default")
def gather_elements(cx, node, x, dim, index, sparse_grad=False):
    """torch.gather: out[..i..] = x[..index[..i..] along dim..], as a take
    from x flattened at computed positions (one fuse.gather, dim 0)."""
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    x = operand(cx, x, x.shape, out.element)
    positions = _flat_positions(cx, x.shape, index_operand(cx, index), dim)
    flat = reshape(cx, x, [math.prod(x.shape)])
    return gather(cx, flat, positions, 0, out)


def _sources(cx, src, index, element):
    """A scatter's sources as an operand, read over `index`'s shape only (as
    torch reads them)."""
    updates = operand(cx, src, src.shape, element)
    for d, size in enumerate(index.shape):
        if updates.shape[d] != size:
            updates = slice_value(cx, updates, d, 0, size)
    return updates


@handles("aten.scatter_add.default")
def scatter_add_elements(cx, node, x, dim, index, src):
    """torch.scatter_add: x with src[..i..] added at index[..i..] along dim
    (src read over index's shape only), as one fuse.scatter_add into x
    flattened at computed positions."""
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    index = index_operand(cx, index)
    dest = reshape(cx, operand(cx, x, x.shape, out.element), [math.prod(out.shape)])
    updates = _sources(cx, src, index, out.element)
    positions = _flat_positions(cx, out.shape, index, dim)
    flat = scatter_add(cx, dest, positions, updates, 0, TensorType(dest.shape, out.element))
    return reshape(cx, flat, out.shape)


@handles("aten.scatter.src", "aten.scatter.value")
def scatter_elements(cx, node, x, dim, index, src):
    """torch.scatter: x with src[..i..] (or one value) written at
    index[..i..] along dim. The backward of topk, max.dim, sort and the
    like, whose indices never repeat along dim. As scatter_adds into zeros
    (of the sources, and of ones: where something landed), and a select
    between them and x where x is not zeros. Where an index repeats along
    dim, Fuse sums the sources that land there; torch keeps one of them,
    unspecified which."""
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    index = index_operand(cx, index)
    index_type = TensorType(tuple(index.shape), out.element)
    updates = _sources(cx, src, index, out.element) if isinstance(src, (Value, Const)) else cx.splat(src, index_type)
    positions = _flat_positions(cx, out.shape, index, dim)
    flat_type = TensorType((math.prod(out.shape),), out.element)

    def landed(values):
        flat = scatter_add(cx, cx.splat(0, flat_type), positions, values, 0, flat_type)
        return reshape(cx, flat, out.shape)
    written = landed(updates)
    if isinstance(x, Const) and x.scalar() == 0:
        return written
    hits = landed(cx.splat(1, index_type))
    flags = out.with_element("i1")
    hit = cx.emit(f"fuse.compare gt, {{0}}, {{1}} : {out}", [hits, cx.splat(0, out)], [flags])
    base = operand(cx, x, x.shape, out.element)
    return cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {flags}, {out}", [hit, written, base], [out])


@handles("aten.index_add.default")
def index_add(cx, node, x, dim, index, source, alpha=1):
    """x.index_add(dim, index, source): fuse.scatter_add's own semantics
    (slices of source added at index along dim); repeat_interleave's
    backward."""
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    updates = operand(cx, source, source.shape, out.element)
    if alpha != 1:
        updates = cx.emit(f"fuse.mul {{0}}, {{1}} : {updates.type}", [updates, cx.splat(alpha, updates.type)],
                          [updates.type])
    return scatter_add(cx, operand(cx, x, x.shape, out.element), index_operand(cx, index), updates, dim, out)


@handles("aten.flip.default")
def flip(cx, node, x, dims):
    """A gather of each flipped dimension at the reversed indices n-1-iota,
    which kernels compute inline (no index tensor is stored): how the
    backward of cumsum (flip, cumsum, flip) reaches the dialect."""
    out = cx.node_type()
    value = operand(cx, x, x.shape, out.element)
    for dim in sorted(set(normalize_dims(dims, out.rank))):
        size = out.shape[dim]
        if size <= 1:
            continue
        index_type = TensorType((size,), "i64")
        iota = cx.emit(f"fuse.iota dim = 0 : {index_type}", [], [index_type], hint="positions")
        last = cx.splat(size - 1, index_type)
        reversed_ = cx.emit(f"fuse.sub {{0}}, {{1}} : {index_type}", [last, iota], [index_type],
                            hint="reversed")
        value = gather(cx, value, reversed_, dim, value.type)
    return value


def scatter_add(cx, dest, indices, updates, dim, out):
    return cx.emit(f"fuse.scatter_add {{0}}[{{1}}], {{2}}, dim = {dim} : ({dest.type}, "
                   f"{indices.type}, {updates.type}) -> {out}", [dest, indices, updates], [out])


@handles("aten.embedding_dense_backward.default")
def embedding_dense_backward(cx, node, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    if scale_grad_by_freq:
        raise Unsupported("scale_grad_by_freq=True")
    out = cx.node_type()
    indices = index_operand(cx, indices)
    updates = operand(cx, grad, grad.shape, out.element)
    if padding_idx is not None and int(padding_idx) >= 0:
        pad = cx.splat(int(padding_idx), indices.type)
        is_pad = cx.emit(f"fuse.compare eq, {{0}}, {{1}} : {indices.type}", [indices, pad],
                         [indices.type.with_element("i1")])
        mask = broadcast(cx, reshape(cx, is_pad, indices.shape + (1,) * (updates.type.rank - indices.type.rank)),
                         updates.shape)
        zero = cx.splat(0, updates.type)
        updates = cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {mask.type}, {updates.type}",
                          [mask, zero, updates], [updates.type])
    return scatter_add(cx, cx.splat(0, out), indices, updates, 0, out)


@handles("aten.index_put.default")
def index_put(cx, node, x, indices, values, accumulate=False):
    if not accumulate:
        raise Unsupported("index_put other than an accumulating update")
    out = cx.node_type()
    dim, count, idx = _joint_index(cx, out.shape, indices)
    merged = _merged(out.shape, dim, count)
    dest = reshape(cx, operand(cx, x, out.shape, out.element), merged)
    shape = merged[:dim] + list(idx.shape) + merged[dim + 1:]
    updated = scatter_add(cx, dest, idx, operand(cx, values, shape, out.element), dim,
                          TensorType(merged, out.element))
    return reshape(cx, updated, out.shape)


# -- reductions -----------------------------------------------------------------------

def _reduction(kind):
    def handler(cx, node, x, dim=None, keepdim=False, dtype=None):
        out = cx.node_type()
        dims = normalize_dims(dim, len(x.shape))
        element = out.element if kind in ("sum", "mean") else element_type(x)
        value = operand(cx, x, x.shape, element)
        if value.element == "i1":
            value = cast(cx, value, "i32")
        return finish(cx, reduce(cx, kind, value, dims, keepdim, out.with_element(value.element)))
    return handler


HANDLERS["aten.sum.dim_IntList"] = HANDLERS["aten.sum.default"] = _reduction("sum")
HANDLERS["aten.mean.dim"] = HANDLERS["aten.mean.default"] = _reduction("mean")
HANDLERS["aten.amax.default"] = HANDLERS["aten.max.default"] = _reduction("max")
HANDLERS["aten.amin.default"] = HANDLERS["aten.min.default"] = _reduction("min")
# Some of PyTorch's own decompositions (torch._refs) leave primitives:
# prims.sum(x, dims) drops the dimensions it sums.
HANDLERS["prims.sum.default"] = _reduction("sum")


@handles("aten.linalg_vector_norm.default")
def linalg_vector_norm(cx, node, x, ord=2, dim=None, keepdim=False, dtype=None):
    """torch.linalg.vector_norm (F.normalize on torch 2.x): (Σ|x|^p)^(1/p)
    over `dim` (None: every dimension), in f32 whatever the input (as
    ATen's accumulator), cast to the result's dtype. ord 2 is sqrt(Σx·x),
    1 is Σ|x|, inf and -inf are max and min of |x|, 0 counts the nonzero
    elements."""
    out = cx.node_type()
    if not out.is_float:
        raise Unsupported("vector norm with an integer result")
    if isinstance(ord, Const):
        ord = ord.scalar()
    ord = float(ord)
    value = operand(cx, x, x.shape, "f32")
    dims = normalize_dims(dim, len(x.shape))
    reduced = out.with_element("f32")

    def elementwise(op, *operands):
        text = ", ".join("{%d}" % i for i in range(len(operands)))
        return cx.emit(f"fuse.{op} {text} : {operands[0].type}", list(operands), [operands[0].type])

    def total(kind, terms):
        if not dims:  # a 0-d tensor is its own reduction
            return terms
        return reduce(cx, kind, terms, dims, keepdim, reduced)

    if ord == 0:
        flags = cx.emit(f"fuse.compare ne, {{0}}, {{1}} : {value.type}", [value, cx.splat(0, value.type)],
                        [value.type.with_element("i1")])
        return finish(cx, total("sum", cast(cx, flags, "f32")))
    if ord == 2:
        return finish(cx, elementwise("sqrt", total("sum", elementwise("mul", value, value))))
    magnitude = elementwise("abs", value)
    if math.isinf(ord):
        return finish(cx, total("max" if ord > 0 else "min", magnitude))
    if ord == 1:
        return finish(cx, total("sum", magnitude))
    powered = elementwise("pow", magnitude, cx.splat(ord, value.type))
    summed = total("sum", powered)
    return finish(cx, elementwise("pow", summed, cx.splat(1.0 / ord, summed.type)))


@handles("prims.broadcast_in_dim.default")
def prims_broadcast_in_dim(cx, node, x, shape, broadcast_dimensions):
    out = cx.node_type()
    value = operand(cx, x, x.shape, out.element)
    dims = int_list(int(d) for d in broadcast_dimensions)
    return cx.emit(f"fuse.broadcast_in_dim {{0}}, dims = {dims} : ({value.type}) -> {out}", [value], [out])


def _any_all(kind):
    def handler(cx, node, x, dim=None, keepdim=False):
        out = cx.node_type()
        dims = normalize_dims(dim, len(x.shape))
        # 0/1 as f32: the reduction kernels reduce floats (exact for 0 and 1).
        flags = cast(cx, as_bool(cx, x, x.shape), "f32")
        reduced = reduce(cx, kind, flags, dims, keepdim, out.with_element("f32"))
        zero = cx.splat(0, reduced.type)
        return cx.emit(f"fuse.compare ne, {{0}}, {{1}} : {reduced.type}", [reduced, zero],
                       [out.with_element("i1")])
    return handler


HANDLERS["aten.any.dim"] = HANDLERS["aten.any.default"] = HANDLERS["aten.any.dims"] = _any_all("max")
HANDLERS["aten.all.dim"] = HANDLERS["aten.all.default"] = HANDLERS["aten.all.dims"] = _any_all("min")


@handles("aten.cumsum.default")
def cumsum(cx, node, x, dim, dtype=None):
    # The node's dtype is ATen's: `dtype` if given, else i64 for integer and
    # boolean inputs, else the input's. ATen converts before summing.
    out = cx.node_type()
    value = operand(cx, x, x.shape, out.element)
    if out.rank == 0:
        return value  # a 0-d tensor is its own prefix sum
    dim = normalize_dim(dim, out.rank)
    return cx.emit(f"fuse.cumsum {{0}}, dim = {dim} : {value.type}", [value], [value.type])


@handles("aten.argmax.default")
def argmax(cx, node, x, dim=None, keepdim=False):
    out = cx.node_type()
    if dim is None:
        x = reshape(cx, x, (math.prod(x.shape),))
        dim = 0
    dim = normalize_dim(dim, len(x.shape))
    keep = " keepdim" if keepdim else ""
    return cx.emit(f"fuse.argmax {{0}}, dim = {dim}{keep} : ({x.type}) -> {out}", [x], [out])


@handles("aten.max.dim")
def max_dim(cx, node, x, dim, keepdim=False):
    values_type, indices_type = cx.node_type(index=0), cx.node_type(index=1)
    dim = normalize_dim(dim, len(x.shape))
    values = reduce(cx, "max", x, [dim], keepdim, values_type)
    keep = " keepdim" if keepdim else ""
    indices = cx.emit(f"fuse.argmax {{0}}, dim = {dim}{keep} : ({x.type}) -> {indices_type}", [x],
                      [indices_type])
    return values, indices
