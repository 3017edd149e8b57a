"""What every ATen op handler shares: the registry, and bringing operands to
the shapes and types ATen gives them.

Each handler gets the converter `cx`, the FX node and the node's arguments
(SSA Values, Consts, or plain Python objects) with ATen's parameter names and
defaults, and returns the node's result(s). Shapes and dtypes of results come
from PyTorch's own metadata (`cx.node_type()`), so a handler never has to
re-derive ATen's broadcasting or type promotion; it only has to bring its
operands there (`operand`). Ops that the dialect has whole (layer norm,
softmax, attention, cross entropy, embedding) map one to one; the rest become
primitives.
"""

import torch

from ._mlir_text import TensorType, Value, int_list
from ._values import Const, Unsupported

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


def as_bool(cx, x, shape):
    """A tensor as i1 (nonzero is true), as ATen's logical ops read it."""
    if isinstance(x, Value) and x.element != "i1":
        zero = cx.splat(0, x.type.with_shape(shape))
        value = broadcast(cx, x, shape)
        return cx.emit(f"fuse.compare ne, {{0}}, {{1}} : {value.type}", [value, zero],
                       [value.type.with_element("i1")])
    return operand(cx, x, shape, "i1")


def index_operand(cx, indices):
    if isinstance(indices, Value):
        return indices
    element = "i64" if indices.dtype == torch.int64 else "i32"
    return cx.constant(indices, element)


def reduce(cx, kind, value, dims, keepdim, out):
    keep = " keepdim" if keepdim else ""
    return cx.emit(f"fuse.reduce {kind} {{0}}, dims = {int_list(dims)}{keep} : ({value.type}) -> {out}",
                   [value], [out])
