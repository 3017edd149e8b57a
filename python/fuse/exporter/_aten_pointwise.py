"""ATen elementwise ops, comparisons, casts and identities as fuse ops."""

from ._aten_common import (Const, HANDLERS, Unsupported, Value, as_bool, binary, cast, finish, handles, operand,
                           promoted_element, scaled, unary)


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


def _rounded(cx, node, x, direction):
    """floor (direction -1), ceil (+1) or trunc (0) of a float tensor: the
    value truncated toward zero through i64 (right for magnitudes below
    2^63; f32 values above 2^24 are integers already, but past 2^63 the
    cast overflows), then moved by one where truncation went the wrong way.
    Stochastic depth draws its keep mask as floor(rand + keep)."""
    out = cx.node_type()
    x = operand(cx, x, x.shape, out.element)
    if not out.element.startswith(("f", "bf")):
        return x
    truncated = cast(cx, cast(cx, x, "i64"), out.element)
    if direction == 0:
        return truncated
    flags = x.type.with_element("i1")
    wrong = "gt" if direction < 0 else "lt"
    moved = cx.emit(f"fuse.compare {wrong}, {{0}}, {{1}} : {x.type}", [truncated, x], [flags])
    step = cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {flags}, {x.type}",
                   [moved, cx.splat(1.0, x.type), cx.splat(0.0, x.type)], [x.type])
    op = "sub" if direction < 0 else "add"
    return cx.emit(f"fuse.{op} {{0}}, {{1}} : {x.type}", [truncated, step], [x.type])


@handles("aten.floor.default")
def floor(cx, node, x):
    return _rounded(cx, node, x, -1)


@handles("aten.ceil.default")
def ceil(cx, node, x):
    return _rounded(cx, node, x, 1)


@handles("aten.trunc.default")
def trunc(cx, node, x):
    return _rounded(cx, node, x, 0)


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
                     ("tanh", "tanh"), ("sin", "sin"), ("cos", "cos"), ("erf", "erf"), ("sqrt", "sqrt"),
                     ("rsqrt", "rsqrt"),
                     ("reciprocal", "reciprocal"), ("sigmoid", "sigmoid"), ("relu", "relu"),
                     ("silu", "silu")]:
    HANDLERS[f"aten.{_aten}.default"] = (lambda name: lambda cx, node, x: unary(cx, name, x))(_fuse)


@handles("aten.sign.default", "aten.sgn.default")
def sign(cx, node, x):
    """(x > 0) - (x < 0) in x's type: 0 for zeros and NaN, as ATen on the
    CPU (a norm's backward: sgn(x) * grad)."""
    out = cx.node_type()
    value = operand(cx, x, out.shape, out.element)
    if out.element == "i1":
        return value
    flags = value.type.with_element("i1")
    zero = cx.splat(0, value.type)
    positive, negative = (cast(cx, cx.emit(f"fuse.compare {direction}, {{0}}, {{1}} : {value.type}", [value, zero],
                                           [flags]), out.element) for direction in ("gt", "lt"))
    return cx.emit(f"fuse.sub {{0}}, {{1}} : {out}", [positive, negative], [out])


@handles("aten.isnan.default")
def isnan(cx, node, x):
    out = cx.node_type()
    if not isinstance(x, Value) or not x.type.is_float:
        return cx.splat(False, out)
    return cx.emit(f"fuse.compare ne, {{0}}, {{0}} : {x.type}", [x], [out])


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


def _logical(name):
    def handler(cx, node, a, b):
        out = cx.node_type()
        lhs, rhs = as_bool(cx, a, out.shape), as_bool(cx, b, out.shape)
        return finish(cx, cx.emit(f"fuse.{name} {{0}}, {{1}} : {lhs.type}", [lhs, rhs], [lhs.type]))
    return handler


HANDLERS["aten.logical_and.default"] = HANDLERS["aten.bitwise_and.Tensor"] = _logical("and")
HANDLERS["aten.logical_or.default"] = HANDLERS["aten.bitwise_or.Tensor"] = _logical("or")


@handles("aten.logical_not.default", "aten.bitwise_not.default")
def logical_not(cx, node, x):
    out = cx.node_type()
    value = as_bool(cx, x, out.shape)
    return finish(cx, cx.emit(f"fuse.not {{0}} : {value.type}", [value], [value.type]))


@handles("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar")
def where(cx, node, condition, a, b):
    out = cx.node_type()
    cond = as_bool(cx, condition, out.shape)
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
