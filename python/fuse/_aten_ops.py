"""The ATen op table: how each ATen op becomes fuse ops.

Each handler gets the converter `cx`, the FX node and the node's arguments
(SSA Values, Consts, or plain Python objects) with ATen's parameter names and
defaults, and returns the node's result(s). Shapes and dtypes of results come
from PyTorch's own metadata (`cx.node_type()`), so a handler never has to
re-derive ATen's broadcasting or type promotion; it only has to bring its
operands there (`operand`). Ops that the dialect has whole (layer norm,
softmax, attention, cross entropy, embedding) map one to one; the rest become
primitives.
"""

import math

import torch

from ._mlir_text import TensorType, Value, format_float, int_list
from ._values import Const, Unsupported, element_of

HANDLERS = {}

# ATen ops whose presence means the graph itself cannot be exported, with why.
REJECTED = {
    "aten._local_scalar_dense.default":
        "data-dependent value: the model reads a tensor's value in Python (.item(), bool(), an "
        "if on a tensor), which would bake one input's value into the graph",
    "aten.sym_size.int": "dynamic shape: the graph asks for a tensor's size at run time; "
                         "export with concrete sizes",
    "aten.nonzero.default": "data-dependent shape (nonzero): fuse graphs have static shapes",
    "aten.masked_select.default": "data-dependent shape (masked_select): fuse graphs have "
                                  "static shapes",
}


def handles(*targets):
    def register(fn):
        for target in targets:
            HANDLERS[target] = fn
        return fn
    return register


# -- operand preparation ------------------------------------------------------

def cast(cx, value, element):
    if value.element == element:
        return value
    type_ = value.type.with_element(element)
    return cx.emit(f"fuse.cast {{0}} : {value.type} to {type_}", [value], [type_])


def broadcast(cx, value, shape):
    shape = tuple(shape)
    if value.shape == shape:
        return value
    offset = len(shape) - value.type.rank
    if offset < 0 or any(d not in (1, shape[offset + i]) for i, d in enumerate(value.shape)):
        raise Unsupported(f"cannot broadcast {value.type} to shape {list(shape)}")
    type_ = value.type.with_shape(shape)
    dims = int_list(range(offset, len(shape)))
    return cx.emit(f"fuse.broadcast_in_dim {{0}}, dims = {dims} : ({value.type}) -> {type_}",
                   [value], [type_])


def reshape(cx, value, shape):
    shape = tuple(shape)
    if value.shape == shape:
        return value
    type_ = value.type.with_shape(shape)
    return cx.emit(f"fuse.reshape {{0}} : ({value.type}) -> {type_}", [value], [type_])


def transpose(cx, value, permutation):
    permutation = [int(p) for p in permutation]
    if value.permutation_of is not None:
        source, first = value.permutation_of
        return transpose(cx, source, [first[p] for p in permutation])
    if permutation == list(range(len(permutation))):
        return value
    type_ = value.type.with_shape([value.shape[p] for p in permutation])
    result = cx.emit(f"fuse.transpose {{0}}, permutation = {int_list(permutation)} : "
                     f"({value.type}) -> {type_}", [value], [type_])
    result.permutation_of = (value, permutation)
    rank = len(permutation)
    if rank >= 2 and permutation == list(range(rank - 2)) + [rank - 1, rank - 2]:
        result.transpose_of = value
    return result


def operand(cx, x, shape, element):
    """`x` (a Value, a Const or a Python scalar) as a Value of `shape` and
    `element`: cast, then broadcast as ATen would."""
    type_ = TensorType(shape, element)
    if isinstance(x, Value):
        return broadcast(cx, cast(cx, x, element), shape)
    if isinstance(x, Const):
        scalar = x.scalar()
        if scalar is not None:
            return cx.splat(scalar, type_)
        return broadcast(cx, cx.constant(x, element), shape)
    if isinstance(x, (bool, int, float)):
        return cx.splat(x, type_)
    raise Unsupported(f"operand {x!r} is not a tensor or a number")


def element_type(x):
    """Element type of a tensor-like argument, None for a Python number."""
    if isinstance(x, Value):
        return x.element
    if isinstance(x, Const):
        return "f32" if x.dtype == torch.float64 else x.element
    return None


def promoted_element(*xs):
    """ATen's type promotion for comparisons (where the result type says
    nothing about the operands): tensors decide unless a Python float meets
    integer tensors."""
    tensors = [x for x in xs if isinstance(x, (Value, Const)) and len(x.shape) > 0]
    tensors = tensors or [x for x in xs if isinstance(x, (Value, Const))]
    elements = [element_type(x) for x in tensors]
    floats = [e for e in elements if e in ("f32", "f16", "bf16")]
    if floats:
        return "f32" if "f32" in floats or len(set(floats)) > 1 else floats[0]
    if any(isinstance(x, float) for x in xs):
        return "f32"
    if "i64" in elements:
        return "i64"
    if "i32" in elements:
        return "i32"
    if elements and all(e == "i1" for e in elements):
        return "i1"
    return "i64"


def normalize_dim(dim, rank):
    dim = int(dim)
    return dim + rank if dim < 0 else dim


def normalize_dims(dims, rank):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted(normalize_dim(d, rank) for d in dims)


def unary(cx, name, x, element=None):
    out = cx.node_type()
    value = operand(cx, x, out.shape, element or out.element)
    return cx.emit(f"fuse.{name} {{0}} : {value.type}", [value], [value.type])


def binary(cx, name, a, b, element=None):
    """A fuse elementwise binary op on ATen-broadcast operands; the result
    type is the op's own (`element`, default the node's)."""
    out = cx.node_type()
    element = element or out.element
    lhs, rhs = operand(cx, a, out.shape, element), operand(cx, b, out.shape, element)
    return cx.emit(f"fuse.{name} {{0}}, {{1}} : {lhs.type}", [lhs, rhs], [lhs.type])


def finish(cx, value, index=None):
    """Casts a computed value to the dtype PyTorch gives the node."""
    return cast(cx, value, cx.node_type(index=index).element)


def scaled(cx, x, alpha):
    if alpha == 1:
        return x
    if isinstance(x, (int, float)):
        return x * alpha
    out = cx.node_type()
    return binary(cx, "mul", x, alpha, out.element)


# -- creation (also used by constant folding) ---------------------------------

_SPLAT_CREATION = {
    "aten.full.default": lambda args, kw: args[1],
    "aten.full_like.default": lambda args, kw: args[1],
    "aten.zeros.default": lambda args, kw: 0,
    "aten.zeros_like.default": lambda args, kw: 0,
    "aten.ones.default": lambda args, kw: 1,
    "aten.ones_like.default": lambda args, kw: 1,
    "aten.empty.memory_format": lambda args, kw: 0,
    "aten.empty_like.default": lambda args, kw: 0,
    "aten.empty_strided.default": lambda args, kw: 0,
    "aten.new_zeros.default": lambda args, kw: 0,
    "aten.new_ones.default": lambda args, kw: 1,
    "aten.new_empty.default": lambda args, kw: 0,
    "aten.new_full.default": lambda args, kw: args[2],
    "aten.scalar_tensor.default": lambda args, kw: args[0],
    "aten.fill.Scalar": lambda args, kw: args[1],
}


def splat_creation(cx, node, target, args, kwargs):
    """A lazy splat Const for ops that fill a tensor with one value; None for
    other ops (and for fills whose value is itself a tensor)."""
    fill = _SPLAT_CREATION.get(target)
    if fill is None:
        return None
    value = fill(args, kwargs)
    if isinstance(value, Const):
        value = value.scalar()
    if not isinstance(value, (bool, int, float)):
        return None
    type_ = cx.node_type()
    from ._values import ELEMENT_TO_TORCH
    return Const(splat=value, shape=type_.shape, dtype=ELEMENT_TO_TORCH[type_.element])


def _splat_handler(cx, node, *args, **kwargs):
    const = splat_creation(cx, node, str(node.target), args, kwargs)
    if const is None:
        raise Unsupported("fill value is not a number")
    return const


for _target in _SPLAT_CREATION:
    HANDLERS[_target] = _splat_handler


@handles("aten.arange.start_step", "aten.arange.default", "aten.arange.start")
def arange(cx, node, *args, **kwargs):
    # Only reached when an argument is a graph value (never for static sizes,
    # which constant folding evaluates).
    raise Unsupported("arange with a size computed in the graph")


# -- elementwise ----------------------------------------------------------------

@handles("aten.add.Tensor", "aten.add.Scalar")
def add(cx, node, a, b, alpha=1):
    return binary(cx, "add", a, scaled(cx, b, alpha))


@handles("aten.sub.Tensor", "aten.sub.Scalar")
def sub(cx, node, a, b, alpha=1):
    return binary(cx, "sub", a, scaled(cx, b, alpha))


@handles("aten.rsub.Scalar", "aten.rsub.Tensor")
def rsub(cx, node, a, b, alpha=1):
    return binary(cx, "sub", b, scaled(cx, a, alpha))


@handles("aten.mul.Tensor", "aten.mul.Scalar")
def mul(cx, node, a, b):
    return binary(cx, "mul", a, b)


@handles("aten.div.Tensor", "aten.div.Scalar")
def div(cx, node, a, b):
    return binary(cx, "div", a, b)


@handles("aten.div.Tensor_mode", "aten.div.Scalar_mode")
def div_mode(cx, node, a, b, rounding_mode=None):
    if rounding_mode is not None:
        raise Unsupported(f"rounding_mode='{rounding_mode}'")
    return binary(cx, "div", a, b)


@handles("aten.maximum.default")
def maximum(cx, node, a, b):
    return binary(cx, "maximum", a, b)


@handles("aten.minimum.default")
def minimum(cx, node, a, b):
    return binary(cx, "minimum", a, b)


@handles("aten.clamp_min.default", "aten.clamp_min.Tensor")
def clamp_min(cx, node, x, low):
    return binary(cx, "maximum", x, low)


@handles("aten.clamp_max.default", "aten.clamp_max.Tensor")
def clamp_max(cx, node, x, high):
    return binary(cx, "minimum", x, high)


@handles("aten.clamp.default", "aten.clamp.Tensor")
def clamp(cx, node, x, min=None, max=None):
    out = cx.node_type()
    value = operand(cx, x, out.shape, out.element)
    if min is not None:
        low = operand(cx, min, out.shape, out.element)
        value = cx.emit(f"fuse.maximum {{0}}, {{1}} : {out}", [value, low], [out])
    if max is not None:
        high = operand(cx, max, out.shape, out.element)
        value = cx.emit(f"fuse.minimum {{0}}, {{1}} : {out}", [value, high], [out])
    return value


@handles("aten.pow.Tensor_Scalar")
def pow_scalar(cx, node, x, exponent):
    out = cx.node_type()
    if not out.is_float:
        raise Unsupported("integer pow")
    if isinstance(exponent, Const):
        exponent = exponent.scalar()
    simple = {1: None, 0.5: "sqrt", -0.5: "rsqrt", -1: "reciprocal"}
    if exponent in simple:
        return operand(cx, x, out.shape, out.element) if exponent == 1 else unary(cx, simple[exponent], x)
    value = operand(cx, x, out.shape, out.element)
    if exponent == 2:
        return cx.emit(f"fuse.mul {{0}}, {{0}} : {out}", [value], [out])
    if exponent == 3:
        square = cx.emit(f"fuse.mul {{0}}, {{0}} : {out}", [value], [out])
        return cx.emit(f"fuse.mul {{0}}, {{1}} : {out}", [square, value], [out])
    return binary(cx, "pow", value, exponent)


@handles("aten.pow.Tensor_Tensor", "aten.pow.Scalar")
def pow_tensor(cx, node, base, exponent):
    if not cx.node_type().is_float:
        raise Unsupported("integer pow")
    return binary(cx, "pow", base, exponent)


for _aten, _fuse in [("neg", "neg"), ("abs", "abs"), ("exp", "exp"), ("log", "log"),
                     ("tanh", "tanh"), ("erf", "erf"), ("sqrt", "sqrt"), ("rsqrt", "rsqrt"),
                     ("reciprocal", "reciprocal"), ("sigmoid", "sigmoid"), ("relu", "relu"),
                     ("silu", "silu")]:
    HANDLERS[f"aten.{_aten}.default"] = (lambda name: lambda cx, node, x: unary(cx, name, x))(_fuse)


@handles("aten.gelu.default")
def gelu(cx, node, x, approximate="none"):
    out = cx.node_type()
    value = operand(cx, x, out.shape, out.element)
    mode = {"none": "erf", "tanh": "tanh"}.get(approximate)
    if mode is None:
        raise Unsupported(f"approximate='{approximate}'")
    return cx.emit(f"fuse.gelu {{0}}, approximate = {mode} : {out}", [value], [out])


_COMPARE = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}


def _compare(direction):
    def handler(cx, node, a, b):
        out = cx.node_type()
        element = promoted_element(a, b)
        lhs, rhs = operand(cx, a, out.shape, element), operand(cx, b, out.shape, element)
        return cx.emit(f"fuse.compare {direction}, {{0}}, {{1}} : {lhs.type}", [lhs, rhs],
                       [out.with_element("i1")])
    return handler


for _name, _direction in _COMPARE.items():
    HANDLERS[f"aten.{_name}.Tensor"] = HANDLERS[f"aten.{_name}.Scalar"] = _compare(_direction)


def _as_bool(cx, x, shape):
    """A tensor as i1 (nonzero is true), as ATen's logical ops read it."""
    if isinstance(x, Value) and x.element != "i1":
        zero = cx.splat(0, x.type.with_shape(shape))
        value = broadcast(cx, x, shape)
        return cx.emit(f"fuse.compare ne, {{0}}, {{1}} : {value.type}", [value, zero],
                       [value.type.with_element("i1")])
    return operand(cx, x, shape, "i1")


def _logical(name):
    def handler(cx, node, a, b):
        out = cx.node_type()
        lhs, rhs = _as_bool(cx, a, out.shape), _as_bool(cx, b, out.shape)
        return finish(cx, cx.emit(f"fuse.{name} {{0}}, {{1}} : {lhs.type}", [lhs, rhs], [lhs.type]))
    return handler


HANDLERS["aten.logical_and.default"] = HANDLERS["aten.bitwise_and.Tensor"] = _logical("and")
HANDLERS["aten.logical_or.default"] = HANDLERS["aten.bitwise_or.Tensor"] = _logical("or")


@handles("aten.logical_not.default", "aten.bitwise_not.default")
def logical_not(cx, node, x):
    out = cx.node_type()
    value = _as_bool(cx, x, out.shape)
    return finish(cx, cx.emit(f"fuse.not {{0}} : {value.type}", [value], [value.type]))


@handles("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar")
def where(cx, node, condition, a, b):
    out = cx.node_type()
    cond = _as_bool(cx, condition, out.shape)
    lhs, rhs = operand(cx, a, out.shape, out.element), operand(cx, b, out.shape, out.element)
    return cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {cond.type}, {out}", [cond, lhs, rhs], [out])


@handles("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def masked_fill(cx, node, x, mask, value):
    return where(cx, node, mask, value, x)


# -- casts and identities ---------------------------------------------------------

@handles("aten._to_copy.default", "prims.convert_element_type.default", "aten.to.dtype",
         "aten.type_as.default", "aten._to_copy", "aten.to.dtype_layout")
def to_copy(cx, node, x, *args, **kwargs):
    out = cx.node_type()
    if not isinstance(x, Value):
        return operand(cx, x, out.shape, out.element)
    return cast(cx, x, out.element)


@handles("aten.clone.default", "aten.alias.default", "aten.detach.default",
         "aten.lift_fresh_copy.default", "aten.contiguous.default", "aten.lift_fresh.default")
def identity(cx, node, x, *args, **kwargs):
    return x


@handles("aten._assert_tensor_metadata.default", "aten._assert_async.msg")
def no_op(cx, node, *args, **kwargs):
    return None


@handles("aten.copy.default")
def copy(cx, node, destination, source, non_blocking=False):
    out = cx.node_type()
    return operand(cx, source, out.shape, out.element)


# -- shapes -----------------------------------------------------------------------

@handles("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
         "aten.view_copy.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default",
         "aten.unsqueeze.default", "aten.flatten.using_ints", "aten.unflatten.int",
         "aten._reshape_alias.default")
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


@handles("aten.slice_scatter.default")
def slice_scatter(cx, node, base, source, dim=0, start=None, end=None, step=1):
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    start, end = _slice_bounds(out.shape[dim], start, end)
    if int(step) != 1:
        raise Unsupported("slice_scatter with a step")
    base = operand(cx, base, out.shape, out.element)
    source = operand(cx, source, source.shape, out.element)
    pieces = [slice_value(cx, base, dim, 0, start), source,
              slice_value(cx, base, dim, end, out.shape[dim])]
    return concat(cx, [p for p in pieces if p.shape[dim] > 0], dim, out)


@handles("aten.select_scatter.default")
def select_scatter(cx, node, base, source, dim, index):
    out = cx.node_type()
    dim = normalize_dim(dim, out.rank)
    index = int(index) + (out.shape[dim] if int(index) < 0 else 0)
    shape = list(out.shape)
    shape[dim] = 1
    source = reshape(cx, operand(cx, source, source.shape, out.element), shape)
    return slice_scatter(cx, node, base, source, dim, index, index + 1)


@handles("aten.constant_pad_nd.default")
def constant_pad_nd(cx, node, x, pad, value=0):
    out = cx.node_type()
    current = operand(cx, x, x.shape, out.element)
    for pair in range(len(pad) // 2):
        dim = out.rank - 1 - pair
        before, after = int(pad[2 * pair]), int(pad[2 * pair + 1])
        if before < 0 or after < 0:
            raise Unsupported("negative padding")
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


# -- indexing -----------------------------------------------------------------------

def gather(cx, x, indices, dim, out):
    return cx.emit(f"fuse.gather {{0}}[{{1}}], dim = {dim} : ({x.type}, {indices.type}) -> {out}",
                   [x, indices], [out])


def index_operand(cx, indices):
    if isinstance(indices, Value):
        return indices
    element = "i64" if indices.dtype == torch.int64 else "i32"
    return cx.constant(indices, element)


@handles("aten.embedding.default")
def embedding(cx, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    out = cx.node_type()
    return gather(cx, operand(cx, weight, weight.shape, out.element), index_operand(cx, indices), 0, out)


@handles("aten.index_select.default")
def index_select(cx, node, x, dim, indices):
    out = cx.node_type()
    dim = normalize_dim(dim, len(x.shape))
    return gather(cx, operand(cx, x, x.shape, out.element), index_operand(cx, indices), dim, out)


@handles("aten.index.Tensor")
def index_tensor(cx, node, x, indices):
    used = [(d, i) for d, i in enumerate(indices) if i is not None]
    if len(used) != 1:
        raise Unsupported("advanced indexing with more than one index tensor")
    dim, idx = used[0]
    if isinstance(idx, (Value, Const)) and element_type(idx) == "i1":
        raise Unsupported("boolean mask indexing (data-dependent shape)")
    out = cx.node_type()
    return gather(cx, operand(cx, x, x.shape, out.element), index_operand(cx, idx), dim, out)


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
    used = [(d, i) for d, i in enumerate(indices) if i is not None]
    if not accumulate or len(used) != 1:
        raise Unsupported("index_put other than an accumulating update along one dimension")
    dim, idx = used[0]
    out = cx.node_type()
    idx = index_operand(cx, idx)
    shape = out.shape[:dim] + idx.shape + out.shape[dim + 1:]
    return scatter_add(cx, operand(cx, x, out.shape, out.element), idx,
                       operand(cx, values, shape, out.element), dim, out)


# -- reductions -----------------------------------------------------------------------

def reduce(cx, kind, value, dims, keepdim, out):
    keep = " keepdim" if keepdim else ""
    return cx.emit(f"fuse.reduce {kind} {{0}}, dims = {int_list(dims)}{keep} : ({value.type}) -> {out}",
                   [value], [out])


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


def _any_all(kind):
    def handler(cx, node, x, dim=None, keepdim=False):
        out = cx.node_type()
        dims = normalize_dims(dim, len(x.shape))
        flags = cast(cx, _as_bool(cx, x, x.shape), "i32")
        reduced = reduce(cx, kind, flags, dims, keepdim, out.with_element("i32"))
        zero = cx.splat(0, reduced.type)
        return cx.emit(f"fuse.compare ne, {{0}}, {{1}} : {reduced.type}", [reduced, zero],
                       [out.with_element("i1")])
    return handler


HANDLERS["aten.any.dim"] = HANDLERS["aten.any.default"] = HANDLERS["aten.any.dims"] = _any_all("max")
HANDLERS["aten.all.dim"] = HANDLERS["aten.all.default"] = HANDLERS["aten.all.dims"] = _any_all("min")


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


# -- matrix multiplication ------------------------------------------------------------

def matmul(cx, a, b, out):
    """fuse.matmul, taking a transpose of the last two dimensions of an
    operand as a flag instead of a separate op."""
    flags = []
    if a.transpose_of is not None:
        a, flags = a.transpose_of, flags + ["transpose_lhs"]
    if b.transpose_of is not None:
        b, flags = b.transpose_of, flags + ["transpose_rhs"]
    text = " ".join(["fuse.matmul {0}, {1}"] + flags)
    return cx.emit(f"{text} : ({a.type}, {b.type}) -> {out}", [a, b], [out])


def _float_operands(cx, out, *xs):
    if not out.is_float:
        raise Unsupported("integer matrix multiplication")
    return [operand(cx, x, x.shape, out.element) for x in xs]


@handles("aten.mm.default", "aten.bmm.default")
def mm(cx, node, a, b):
    out = cx.node_type()
    a, b = _float_operands(cx, out, a, b)
    return matmul(cx, a, b, out)


@handles("aten.matmul.default")
def matmul_general(cx, node, a, b):
    out = cx.node_type()
    a, b = _float_operands(cx, out, a, b)
    if a.type.rank < 2 or b.type.rank < 2 or (b.type.rank != 2 and a.shape[:-2] != b.shape[:-2]):
        raise Unsupported(f"matmul of {a.type} and {b.type} (needs matrices with equal batch "
                          "dimensions or a shared 2-D right operand)")
    return matmul(cx, a, b, out)


def _add_bias(cx, product, bias, beta, out):
    if bias is None or beta == 0:
        return product
    bias = operand(cx, bias, out.shape, out.element)
    if beta != 1:
        bias = binary(cx, "mul", bias, beta)
    return cx.emit(f"fuse.add {{0}}, {{1}} : {out}", [product, bias], [out])


@handles("aten.addmm.default", "aten.baddbmm.default")
def addmm(cx, node, bias, a, b, beta=1, alpha=1):
    out = cx.node_type()
    a, b = _float_operands(cx, out, a, b)
    product = matmul(cx, a, b, out)
    if alpha != 1:
        product = binary(cx, "mul", product, alpha)
    return _add_bias(cx, product, bias, beta, out)


@handles("aten.linear.default")
def linear(cx, node, x, weight, bias=None):
    out = cx.node_type()
    x, weight = _float_operands(cx, out, x, weight)
    transposed = transpose(cx, weight, [1, 0]) if weight.type.rank == 2 else None
    if transposed is None:
        raise Unsupported("linear with a weight that is not a matrix")
    return _add_bias(cx, matmul(cx, x, transposed, out), bias, 1, out)


# -- normalisation, softmax, losses ---------------------------------------------------

def _layer_norm(cx, x, normalized_shape, weight, bias, eps, out):
    """fuse.layer_norm: (output, mean, rstd), statistics in f32."""
    axis = out.rank - len(normalized_shape)
    value = operand(cx, x, out.shape, out.element)
    stats = TensorType(out.shape[:axis] + (1,) * (out.rank - axis), "f32")
    operands, text = [value], "fuse.layer_norm {0}"
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None:
            text += f" {name}({{{len(operands)}}})"
            operands.append(operand(cx, param, out.shape[axis:], out.element))
    types = ", ".join(str(v.type) for v in operands)
    return cx.emit(f"{text} axis = {axis} epsilon = {format_float(eps)} : ({types}) -> "
                   f"({out}, {stats}, {stats})", operands, [out, stats, stats])


@handles("aten.native_layer_norm.default")
def native_layer_norm(cx, node, x, normalized_shape, weight, bias, eps):
    output, mean, rstd = _layer_norm(cx, x, normalized_shape, weight, bias, eps, cx.node_type(index=0))
    return output, finish(cx, mean, 1), finish(cx, rstd, 2)


@handles("aten.layer_norm.default")
def layer_norm(cx, node, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _layer_norm(cx, x, normalized_shape, weight, bias, eps, cx.node_type())[0]


@handles("aten.rms_norm.default")
def rms_norm(cx, node, x, normalized_shape, weight=None, eps=None):
    out = cx.node_type()
    axis = out.rank - len(normalized_shape)
    if eps is None:
        eps = torch.finfo(torch.float32 if out.element == "f32" else torch.bfloat16
                          if out.element == "bf16" else torch.float16).eps
    value = operand(cx, x, out.shape, out.element)
    operands, text = [value], "fuse.rms_norm {0}"
    if weight is not None:
        text += " weight({1})"
        operands.append(operand(cx, weight, out.shape[axis:], out.element))
    types = ", ".join(str(v.type) for v in operands)
    return cx.emit(f"{text} axis = {axis} epsilon = {format_float(eps)} : ({types}) -> {out}",
                   operands, [out])


def _softmax_like(name):
    def handler(cx, node, x, dim, half_to_float_or_dtype=None):
        out = cx.node_type()
        value = operand(cx, x, out.shape, out.element)
        dim = normalize_dim(dim, out.rank)
        return cx.emit(f"fuse.{name} {{0}}, dim = {dim} : {out}", [value], [out])
    return handler


HANDLERS["aten._softmax.default"] = HANDLERS["aten.softmax.int"] = _softmax_like("softmax")
HANDLERS["aten._log_softmax.default"] = HANDLERS["aten.log_softmax.int"] = _softmax_like("log_softmax")


def _log_softmax_source(cx, value, dim):
    """The logits `x` if `value` is log_softmax(x) over its last dimension."""
    target, node = cx.producer(value)
    if target not in ("aten._log_softmax.default", "aten.log_softmax.int"):
        return None
    if normalize_dim(dim, value.type.rank) != value.type.rank - 1:
        return None
    logits = cx.env[node.args[0]] if isinstance(node.args[0], torch.fx.Node) else None
    return logits if isinstance(logits, Value) and logits.type == value.type else None


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _class_mask(cx, target, type_, ignore_index):
    """i1 [N, C]: class c of row i is row i's label (and the label is not
    ignore_index)."""
    labels = broadcast(cx, reshape(cx, target, target.shape + (1,)), type_.shape)
    classes = cx.emit(f"fuse.iota dim = {type_.rank - 1} : {labels.type}", [], [labels.type], hint="classes")
    return cx.emit(f"fuse.compare eq, {{0}}, {{1}} : {labels.type}", [labels, classes],
                   [type_.with_element("i1")])


def _counted(cx, target, ignore_index, element):
    """How many labels are not ignore_index, as a 0-d tensor of `element`."""
    ignored = cx.splat(int(ignore_index), target.type)
    keep = cx.emit(f"fuse.compare ne, {{0}}, {{1}} : {target.type}", [target, ignored],
                   [target.type.with_element("i1")])
    as_float = cast(cx, keep, element)
    return reduce(cx, "sum", as_float, list(range(target.type.rank)), False, TensorType((), element))


@handles("aten.nll_loss_forward.default")
def nll_loss_forward(cx, node, logp, target, weight, reduction, ignore_index):
    if weight is not None:
        raise Unsupported("class weights")
    loss_type, weight_type = cx.node_type(index=0), cx.node_type(index=1)
    target = index_operand(cx, target)
    total_weight = finish(cx, _counted(cx, target, ignore_index, logp.element), 1)
    logits = _log_softmax_source(cx, logp, -1)
    options = f" ignore_index = {int(ignore_index)}" if int(ignore_index) != -100 else ""
    if reduction != 1:
        options += f" reduction = {_REDUCTIONS[reduction]}"
    if logits is not None:
        loss = cx.emit(f"fuse.cross_entropy {{0}}, {{1}}{options} : ({logits.type}, {target.type}) -> "
                       f"{loss_type}", [logits, target], [loss_type])
        return loss, total_weight
    # log-probabilities from elsewhere: -sum of the picked entries.
    picked = _class_mask(cx, target, logp.type, ignore_index)
    zero = cx.splat(0, logp.type)
    chosen = cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {picked.type}, {logp.type}",
                     [picked, logp, zero], [logp.type])
    per_row = reduce(cx, "sum", chosen, [logp.type.rank - 1], False, target.type.with_element(logp.element))
    per_row = cx.emit(f"fuse.neg {{0}} : {per_row.type}", [per_row], [per_row.type])
    if reduction == 0:
        return per_row, total_weight
    total = reduce(cx, "sum", per_row, list(range(per_row.type.rank)), False, loss_type)
    if reduction == 2:
        return total, total_weight
    count = _counted(cx, target, ignore_index, logp.element)
    return cx.emit(f"fuse.div {{0}}, {{1}} : {loss_type}", [total, count], [loss_type]), total_weight


@handles("aten.nll_loss_backward.default")
def nll_loss_backward(cx, node, grad, logp, target, weight, reduction, ignore_index, total_weight):
    if weight is not None:
        raise Unsupported("class weights")
    out = cx.node_type()
    target = index_operand(cx, target)
    scale = operand(cx, grad, grad.shape, out.element)
    if reduction == 1:
        scale = cx.emit(f"fuse.div {{0}}, {{1}} : {scale.type}",
                        [scale, operand(cx, total_weight, grad.shape, out.element)], [scale.type])
    shape = target.shape + (1,) if reduction == 0 else ()
    scale = broadcast(cx, reshape(cx, scale, shape) if reduction == 0 else scale, out.shape)
    negative = cx.emit(f"fuse.neg {{0}} : {out}", [scale], [out])
    picked = _class_mask(cx, target, out, ignore_index)
    ignored = cx.splat(int(ignore_index), target.type)
    counted = cx.emit(f"fuse.compare ne, {{0}}, {{1}} : {target.type}", [target, ignored],
                      [target.type.with_element("i1")])
    counted = broadcast(cx, reshape(cx, counted, target.shape + (1,)), out.shape)
    both = cx.emit(f"fuse.and {{0}}, {{1}} : {picked.type}", [picked, counted], [picked.type])
    zero = cx.splat(0, out)
    return cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {both.type}, {out}", [both, negative, zero], [out])


@handles("aten._log_softmax_backward_data.default")
def log_softmax_backward(cx, node, grad, output, dim, input_dtype):
    out = cx.node_type()
    target, nll = cx.producer(grad)
    logits = _log_softmax_source(cx, output, dim)
    if (target == "aten.nll_loss_backward.default" and logits is not None
            and cx.env.get(nll.args[1]) is output):
        # d(cross_entropy)/d(logits) in one op.
        grad_loss, _, labels, _, reduction, ignore_index, _ = [cx.env.get(a, a) if isinstance(a, torch.fx.Node)
                                                               else a for a in nll.args]
        labels = index_operand(cx, labels)
        grad_loss = operand(cx, grad_loss, grad_loss.shape, out.element)
        options = f" ignore_index = {int(ignore_index)}" if int(ignore_index) != -100 else ""
        if reduction != 1:
            options += f" reduction = {_REDUCTIONS[reduction]}"
        return cx.emit(f"fuse.cross_entropy_backward {{0}}, {{1}}, {{2}}{options} : ({grad_loss.type}, "
                       f"{logits.type}, {labels.type}) -> {out}", [grad_loss, logits, labels], [out])
    # grad - exp(output) * sum(grad, dim)
    dim = normalize_dim(dim, out.rank)
    grad = operand(cx, grad, out.shape, out.element)
    output = operand(cx, output, out.shape, out.element)
    kept = out.with_shape(out.shape[:dim] + (1,) + out.shape[dim + 1:])
    total = broadcast(cx, reduce(cx, "sum", grad, [dim], True, kept), out.shape)
    probabilities = cx.emit(f"fuse.exp {{0}} : {out}", [output], [out])
    product = cx.emit(f"fuse.mul {{0}}, {{1}} : {out}", [probabilities, total], [out])
    return cx.emit(f"fuse.sub {{0}}, {{1}} : {out}", [grad, product], [out])


# -- attention ------------------------------------------------------------------------

def _attention_mask(cx, mask, query, key):
    """How an ATen attention mask enters fuse: (causal, mask Value or None).
    A constant mask that is the causal pattern becomes the `causal` flag; one
    that masks nothing is dropped."""
    if mask is None:
        return False, None
    tq, tk = query.shape[-2], key.shape[-2]
    if isinstance(mask, Const):
        tensor = mask.tensor
        keep = tensor if tensor.dtype == torch.bool else tensor > torch.finfo(torch.float32).min / 2
        if tensor.dtype != torch.bool and not bool(((tensor == 0) | ~keep).all()):
            keep = None  # a float bias, not a keep/drop pattern
        if keep is not None:
            rows = keep.broadcast_to(keep.shape[:-2] + (tq, tk)).reshape(-1, tq, tk)
            if bool(rows.all()):
                return False, None
            causal = torch.ones(tq, tk, dtype=torch.bool).tril()
            if bool((rows == causal).all()):
                return True, None
    rank = len(mask.shape)
    shape = (1,) * (4 - rank) + tuple(mask.shape)
    element = "i1" if element_type(mask) == "i1" else query.element
    value = operand(cx, mask, mask.shape, element)
    return False, reshape(cx, value, shape)


def _attention_options(cx, mask, causal, scale, dropout_p, query, operands, numel):
    text = ""
    if mask is not None:
        text += f" mask({{{len(operands)}}})"
        operands.append(mask)
    if dropout_p:
        seed, offset = cx.rng(numel // 4 + 1)
        text += f" rng({{{len(operands)}}}, {{{len(operands) + 1}}})"
        operands += [seed, offset]
    if causal:
        text += " causal"
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    text += f" scale = {format_float(scale)}"
    if dropout_p:
        text += f" dropout_p = {format_float(dropout_p)}"
    return text


def attention_forward(cx, out, q, k, v, mask, dropout_p, is_causal, scale):
    q, k, v = [operand(cx, x, x.shape, out.element) for x in (q, k, v)]
    mask_causal, mask = _attention_mask(cx, mask, q, k)
    lse = TensorType(q.shape[:-1], "f32")
    operands = [q, k, v]
    numel = q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2]
    options = _attention_options(cx, mask, is_causal or mask_causal, scale, dropout_p, q, operands, numel)
    types = ", ".join(str(x.type) for x in operands)
    return cx.emit(f"fuse.scaled_dot_product_attention {{0}}, {{1}}, {{2}}{options} : ({types}) -> "
                   f"({out}, {lse})", operands, [out, lse])


def attention_backward(cx, grad, q, k, v, out, lse, mask, dropout_p, is_causal, scale):
    types = [cx.node_type(index=i) for i in range(3)]
    grad, q, k, v, out = [operand(cx, x, x.shape, types[0].element) for x in (grad, q, k, v, out)]
    if not isinstance(lse, Value) or lse.shape != q.shape[:-1]:
        raise Unsupported("the log-sum-exp does not come from a fuse attention forward")
    mask_causal, mask = _attention_mask(cx, mask, q, k)
    operands = [grad, q, k, v, out, lse]
    numel = q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2]
    options = _attention_options(cx, mask, is_causal or mask_causal, scale, dropout_p, q, operands, numel)
    names = ", ".join(str(x.type) for x in operands)
    results = ", ".join(str(t) for t in types)
    return tuple(cx.emit(f"fuse.scaled_dot_product_attention_backward {{0}}, {{1}}, {{2}}, {{3}}, {{4}}, "
                         f"{{5}}{options} : ({names}) -> ({results})", operands, types))


@handles("aten._scaled_dot_product_flash_attention_for_cpu.default")
def sdpa_cpu(cx, node, q, k, v, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    return tuple(attention_forward(cx, cx.node_type(index=0), q, k, v, attn_mask, dropout_p, is_causal, scale))


@handles("aten._scaled_dot_product_flash_attention_for_cpu_backward.default")
def sdpa_cpu_backward(cx, node, grad, q, k, v, out, lse, dropout_p, is_causal, *, attn_mask=None, scale=None):
    return attention_backward(cx, grad, q, k, v, out, lse, attn_mask, dropout_p, is_causal, scale)


@handles("aten.scaled_dot_product_attention.default")
def sdpa(cx, node, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False):
    return attention_forward(cx, cx.node_type(), q, k, v, attn_mask, dropout_p, is_causal, scale)[0]


@handles("aten._scaled_dot_product_efficient_attention.default")
def sdpa_efficient(cx, node, q, k, v, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, *,
                   scale=None):
    output, lse = attention_forward(cx, cx.node_type(index=0), q, k, v, attn_bias, dropout_p, is_causal, scale)
    return output, lse, None, None


@handles("aten._scaled_dot_product_efficient_attention_backward.default")
def sdpa_efficient_backward(cx, node, grad, q, k, v, attn_bias, out, lse, philox_seed, philox_offset,
                            dropout_p, grad_input_mask, is_causal=False, *, scale=None):
    return attention_backward(cx, grad, q, k, v, out, lse, attn_bias, dropout_p, is_causal, scale) + (None,)


@handles("aten._scaled_dot_product_flash_attention.default")
def sdpa_flash(cx, node, q, k, v, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
    output, lse = attention_forward(cx, cx.node_type(index=0), q, k, v, None, dropout_p, is_causal, scale)
    return (output, lse) + (None,) * 7


@handles("aten._scaled_dot_product_flash_attention_backward.default")
def sdpa_flash_backward(cx, node, grad, q, k, v, out, lse, cum_q, cum_k, max_q, max_k, dropout_p,
                        is_causal, philox_seed, philox_offset, *, scale=None):
    return attention_backward(cx, grad, q, k, v, out, lse, None, dropout_p, is_causal, scale)


# -- randomness -------------------------------------------------------------------------

def _random(cx, distribution, type_, p=None):
    counters = type_.numel // (2 if distribution == "normal" else 4) + 1
    seed, offset = cx.rng(counters)
    extra = f", p = {format_float(p)}" if p is not None else ""
    return cx.emit(f"fuse.random {distribution}, {{0}}, {{1}}{extra} : {type_}", [seed, offset], [type_])


@handles("aten.native_dropout.default")
def native_dropout(cx, node, x, p, train):
    out = cx.node_type(index=0)
    value = operand(cx, x, out.shape, out.element)
    if not train or p == 0:
        return value, cx.splat(True, out.with_element("i1"))
    if p >= 1:
        return cx.splat(0, out), cx.splat(False, out.with_element("i1"))
    keep = _random(cx, "bernoulli", out.with_element("i1"), 1.0 - p)
    scaled_value = binary(cx, "mul", value, 1.0 / (1.0 - p), out.element)
    zero = cx.splat(0, out)
    dropped = cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {keep.type}, {out}", [keep, scaled_value, zero], [out])
    return dropped, keep


@handles("aten.native_dropout_backward.default")
def native_dropout_backward(cx, node, grad, mask, scale):
    out = cx.node_type()
    grad = operand(cx, grad, out.shape, out.element)
    keep = _as_bool(cx, mask, out.shape)
    scaled_grad = binary(cx, "mul", grad, scale, out.element)
    zero = cx.splat(0, out)
    return cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {keep.type}, {out}", [keep, scaled_grad, zero], [out])


@handles("aten.rand_like.default", "aten.rand.default")
def rand(cx, node, *args, **kwargs):
    return _random(cx, "uniform", cx.node_type())


@handles("aten.randn_like.default", "aten.randn.default")
def randn(cx, node, *args, **kwargs):
    return _random(cx, "normal", cx.node_type())


@handles("aten.bernoulli.p")
def bernoulli(cx, node, x, p=0.5, generator=None):
    out = cx.node_type()
    keep = _random(cx, "bernoulli", out.with_element("i1"), p)
    return cast(cx, keep, out.element)


# -- Python-level ---------------------------------------------------------------------

@handles("getitem")
def getitem(cx, node, container, index):
    return container[index]
