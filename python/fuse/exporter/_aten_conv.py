"""ATen convolution and its backward as existing fuse ops (no convolution op
in the dialect): an image-to-columns rewrite around one (batched) GEMM.

A 1-D convolution is the 2-D one of height 1. For input x [N, C, H, W] and
weight w [O, C/G, KH, KW] with G groups:

- zero padding: `fuse.concat` of zero splats along H and W;
- windows: each spatial axis of padded length P becomes two axes [out, k]
  that address position out*stride + k*dilation. Where windows do not
  overlap (stride >= kernel, with dilation 1 or a kernel of 1: ViT's patch
  embedding, 1x1 convolutions) that is a reshape of the axis to
  [out, stride] and a slice of the first `kernel` entries; otherwise a
  `fuse.gather` along the axis at a constant [out, k] index table (the two
  axes are gathered separately, so the tables stay out x k small);
- the columns [N, C, OH, KH, OW, KW] are rearranged to
  [G, N*OH*OW, C/G*KH*KW] and multiplied by the weight viewed as
  [G, O/G, C/G*KH*KW] (transposed): one `fuse.matmul`, groups as its batch
  dimension (a plain 2-D GEMM when G = 1), bias added to the [.., N*L, O]
  product as a linear layer's is, and the result brought back to
  [N, O, OH, OW].

The backward reuses the same pieces: grad_weight is dY^T x columns,
grad_bias a sum over batch and spatial dimensions, and grad_input the
adjoint of the columns applied to dY x W: `fuse.scatter_add` at the same
index tables (or the inverse reshape where the windows do not overlap),
then the padding sliced off.

The columns are materialised: KH*KW times the input's size for a
stride-1 convolution (performance note in the tests' docstring).
"""

import torch

from ._aten_common import TensorType, Unsupported, Value, broadcast, handles, operand, reduce, reshape, transpose
from ._aten_shapes import concat, gather, scatter_add, slice_value
from ._values import Const


# -- geometry -------------------------------------------------------------------------

class _Axis:
    """One spatial axis: input size, kernel, stride, dilation, padding before
    and after, and the output size."""

    def __init__(self, size, kernel, stride, dilation, before, after):
        self.size, self.kernel, self.stride, self.dilation = size, kernel, stride, dilation
        self.before, self.after = before, after
        self.padded = size + before + after
        span = dilation * (kernel - 1) + 1
        if self.padded < span:
            raise Unsupported(f"the kernel (extent {span} with dilation) is larger than the padded "
                              f"input ({self.padded})")
        self.out = (self.padded - span) // stride + 1

    @property
    def non_overlapping(self):
        """Windows that tile the axis without overlap: a reshape, no gather."""
        return (self.kernel == 1 or self.dilation == 1) and self.stride >= self.kernel

    def indices(self):
        """[out, kernel] positions in the padded axis."""
        o = torch.arange(self.out, dtype=torch.int64).unsqueeze(1)
        k = torch.arange(self.kernel, dtype=torch.int64).unsqueeze(0)
        return o * self.stride + k * self.dilation


def _ints(value, count, what):
    if isinstance(value, (list, tuple)):
        values = list(value)
    else:
        values = [value]
    if len(values) == 1:
        values = values * count
    if len(values) != count or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise Unsupported(f"{what} {value!r} is not {count} static integer(s) (dynamic shapes are "
                          "not supported: export with concrete sizes)")
    return values


class _Geometry:
    """A convolution's sizes, with a 1-D convolution as a 2-D one of height 1."""

    def __init__(self, input_shape, weight_shape, stride, padding, dilation, groups, transposed=False,
                 output_padding=None):
        spatial = len(weight_shape) - 2
        if transposed:
            raise Unsupported("transposed convolution (ConvTranspose) is not supported")
        if spatial not in (1, 2):
            raise Unsupported(f"{spatial}-D convolution is not supported (1-D and 2-D are)")
        self.spatial = spatial
        self.batched = len(input_shape) == spatial + 2
        if len(input_shape) not in (spatial + 1, spatial + 2):
            raise Unsupported(f"input of shape {list(input_shape)} for a {spatial}-D convolution")
        shape = list(input_shape) if self.batched else [1] + list(input_shape)
        if not isinstance(groups, int) or groups < 1:
            raise Unsupported(f"groups={groups!r}")
        self.input_shape, self.weight_shape = tuple(input_shape), tuple(weight_shape)
        self.n, self.c = shape[0], shape[1]
        self.o, self.g = weight_shape[0], groups
        if self.c % groups or self.o % groups or weight_shape[1] != self.c // groups:
            raise Unsupported(f"input channels {self.c}, weight {list(weight_shape)} and groups={groups} "
                              "do not agree")
        stride = _ints(stride, spatial, "stride")
        dilation = _ints(dilation, spatial, "dilation")
        kernel = list(weight_shape[2:])
        if isinstance(padding, str):
            if padding == "valid":
                pads = [(0, 0)] * spatial
            elif padding == "same":
                if any(s != 1 for s in stride):
                    raise Unsupported("padding='same' with a stride other than 1")
                totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
                # ATen puts the odd element of the padding after the input.
                pads = [(t // 2, t - t // 2) for t in totals]
            else:
                raise Unsupported(f"padding={padding!r}")
        else:
            pads = [(p, p) for p in _ints(padding, spatial, "padding")]
        if any(p < 0 for pair in pads for p in pair) or any(s < 1 for s in stride) or any(
                d < 1 for d in dilation):
            raise Unsupported(f"stride {stride}, padding {pads}, dilation {dilation}")
        sizes = shape[2:]
        if spatial == 1:
            sizes, kernel, stride, dilation, pads = ([1] + sizes, [1] + kernel, [1] + stride,
                                                     [1] + dilation, [(0, 0)] + pads)
        self.h, self.w = (_Axis(sizes[i], kernel[i], stride[i], dilation[i], *pads[i]) for i in range(2))

    @property
    def output_shape(self):
        spatial = (self.h.out, self.w.out) if self.spatial == 2 else (self.w.out,)
        return ((self.n,) if self.batched else ()) + (self.o,) + spatial

    @property
    def rows(self):  # N * OH * OW: the GEMM's M
        return self.n * self.h.out * self.w.out

    @property
    def depth(self):  # C/G * KH * KW: the GEMM's K
        return self.c // self.g * self.h.kernel * self.w.kernel


# -- building blocks ----------------------------------------------------------------

def _zeros_along(cx, value, axis, count):
    shape = list(value.shape)
    shape[axis] = count
    return cx.splat(0, TensorType(shape, value.element))


def _pad(cx, value, axis, before, after):
    if before == 0 and after == 0:
        return value
    pieces = ([_zeros_along(cx, value, axis, before)] if before else []) + [value] + (
        [_zeros_along(cx, value, axis, after)] if after else [])
    shape = list(value.shape)
    shape[axis] += before + after
    return concat(cx, pieces, axis, TensorType(shape, value.element))


def _fit(cx, value, axis, length):
    """`value` cut or zero-padded at the end of `axis` to `length`."""
    size = value.shape[axis]
    if size > length:
        return slice_value(cx, value, axis, 0, length)
    return _pad(cx, value, axis, 0, length - size)


def _index_table(cx, ax):
    return cx.constant(Const(ax.indices()), "i64")


def _windows(cx, value, axis, ax):
    """Axis `axis` (the padded length) as two axes [out, kernel]: element
    [o, k] is position o*stride + k*dilation."""
    shape = value.shape
    if ax.non_overlapping:
        value = _fit(cx, value, axis, ax.out * ax.stride)
        value = reshape(cx, value, shape[:axis] + (ax.out, ax.stride) + shape[axis + 1:])
        return slice_value(cx, value, axis + 1, 0, ax.kernel)
    out = value.type.with_shape(shape[:axis] + (ax.out, ax.kernel) + shape[axis + 1:])
    return gather(cx, value, _index_table(cx, ax), axis, out)


def _unwindows(cx, value, axis, ax):
    """The adjoint of `_windows`: axes [out, kernel] summed back into the
    positions they were taken from (the padded length)."""
    shape = value.shape
    merged = shape[:axis] + (ax.padded,) + shape[axis + 2:]
    if ax.non_overlapping:
        value = _pad(cx, value, axis + 1, 0, ax.stride - ax.kernel)
        value = reshape(cx, value, shape[:axis] + (ax.out * ax.stride,) + shape[axis + 2:])
        return _fit(cx, value, axis, ax.padded)
    type_ = value.type.with_shape(merged)
    return scatter_add(cx, cx.splat(0, type_), _index_table(cx, ax), value, axis, type_)


# [N, G, C/G, OH, KH, OW, KW] -> [G, N, OH, OW, C/G, KH, KW]
_COLUMNS_ORDER = [1, 0, 3, 5, 2, 4, 6]
_COLUMNS_INVERSE = [_COLUMNS_ORDER.index(i) for i in range(7)]


def _matrix_shape(geo, last):
    return (geo.rows, last) if geo.g == 1 else (geo.g, geo.rows, last)


def _columns(cx, geo, image):
    """im2col: the image [N, C, H, W] as the GEMM operand [G, N*OH*OW, C/G*KH*KW]
    (no G dimension when G = 1)."""
    h, w = geo.h, geo.w
    padded = _pad(cx, _pad(cx, image, 2, h.before, h.after), 3, w.before, w.after)
    cols = _windows(cx, _windows(cx, padded, 2, h), 4, w)  # [N, C, OH, KH, OW, KW]
    cols = reshape(cx, cols, (geo.n, geo.g, geo.c // geo.g, h.out, h.kernel, w.out, w.kernel))
    cols = transpose(cx, cols, _COLUMNS_ORDER)
    return reshape(cx, cols, _matrix_shape(geo, geo.depth))


def _image_of_columns(cx, geo, cols):
    """col2im, the adjoint of `_columns`: [G, N*L, C/G*KH*KW] back to
    [N, C, H, W], overlapping windows summed."""
    h, w = geo.h, geo.w
    cols = reshape(cx, cols, (geo.g, geo.n, h.out, w.out, geo.c // geo.g, h.kernel, w.kernel))
    cols = transpose(cx, cols, _COLUMNS_INVERSE)
    cols = reshape(cx, cols, (geo.n, geo.c, h.out, h.kernel, w.out, w.kernel))
    padded = _unwindows(cx, _unwindows(cx, cols, 4, w), 2, h)  # [N, C, Hp, Wp]
    image = slice_value(cx, padded, 2, h.before, h.before + h.size)
    return slice_value(cx, image, 3, w.before, w.before + w.size)


def _weight_matrix(cx, geo, weight):
    """The weight [O, C/G, (KH,) KW] as [G, O/G, C/G*KH*KW] (no G when G = 1)."""
    shape = (geo.o, geo.depth) if geo.g == 1 else (geo.g, geo.o // geo.g, geo.depth)
    return reshape(cx, weight, shape)


def _output_matrix(cx, geo, grad_output):
    """[N, O, OH, OW] as the GEMM's result layout [G, N*OH*OW, O/G]."""
    h, w = geo.h, geo.w
    value = reshape(cx, grad_output, (geo.n, geo.g, geo.o // geo.g, h.out * w.out))
    value = transpose(cx, value, [1, 0, 3, 2])  # [G, N, L, O/G]
    return reshape(cx, value, _matrix_shape(geo, geo.o // geo.g))


def _matmul(cx, lhs, rhs, out_shape, flags=""):
    type_ = lhs.type.with_shape(out_shape)
    return cx.emit(f"fuse.matmul {{0}}, {{1}}{flags} : ({lhs.type}, {rhs.type}) -> {type_}",
                   [lhs, rhs], [type_])


def _float_element(cx, x):
    element = x.element if isinstance(x, (Value, Const)) else None
    if element not in ("f32", "f16", "bf16"):
        raise Unsupported(f"convolution of {element} tensors (float32, float16 and bfloat16 are "
                          "supported)")
    return element


# -- forward ------------------------------------------------------------------------

def _convolution(cx, x, weight, bias, geo):
    out = cx.node_type()
    if out.shape != geo.output_shape:
        raise Unsupported(f"computed output shape {list(geo.output_shape)} differs from PyTorch's "
                          f"{list(out.shape)}")
    if not out.is_float:
        raise Unsupported(f"convolution of {out.element} tensors")
    x = operand(cx, x, geo.input_shape, out.element)
    weight = operand(cx, weight, geo.weight_shape, out.element)
    image = reshape(cx, x, (geo.n, geo.c, geo.h.size, geo.w.size))
    cols = _columns(cx, geo, image)
    og = geo.o // geo.g
    product = _matmul(cx, cols, _weight_matrix(cx, geo, weight), _matrix_shape(geo, og),
                      " transpose_rhs")
    if bias is not None:
        # Added to the GEMM's [.., N*L, O/G] result, as a linear layer's bias.
        bias = operand(cx, bias, (geo.o,), out.element)
        bias = broadcast(cx, reshape(cx, bias, (geo.o,) if geo.g == 1 else (geo.g, 1, og)), product.shape)
        product = cx.emit(f"fuse.add {{0}}, {{1}} : {product.type}", [product, bias], [product.type])
    # [G, N, OH, OW, O/G] -> [N, G, O/G, OH, OW]
    value = reshape(cx, product, (geo.g, geo.n, geo.h.out, geo.w.out, og))
    value = transpose(cx, value, [1, 0, 4, 2, 3])
    return reshape(cx, value, out.shape)


@handles("aten.convolution.default")
def convolution(cx, node, x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    geo = _Geometry(x.shape, weight.shape, stride, padding, dilation, groups, transposed, output_padding)
    return _convolution(cx, x, weight, bias, geo)


@handles("aten._convolution.default", "aten._convolution.deprecated")
def convolution_private(cx, node, x, weight, bias, stride, padding, dilation, transposed, output_padding,
                        groups, *flags):
    return convolution(cx, node, x, weight, bias, stride, padding, dilation, transposed, output_padding,
                       groups)


@handles("aten.conv1d.default", "aten.conv2d.default", "aten.conv1d.padding", "aten.conv2d.padding")
def conv_nd(cx, node, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    expected = 1 if "conv1d" in str(node.target) else 2
    if len(weight.shape) != expected + 2:
        raise Unsupported(f"weight of shape {list(weight.shape)} for a {expected}-D convolution")
    geo = _Geometry(x.shape, weight.shape, stride, padding, dilation, groups)
    return _convolution(cx, x, weight, bias, geo)


# -- backward -----------------------------------------------------------------------

@handles("aten.convolution_backward.default")
def convolution_backward(cx, node, grad_output, x, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    """(grad_input, grad_weight, grad_bias), None where output_mask says the
    gradient is not wanted."""
    geo = _Geometry(x.shape, weight.shape, stride, padding, dilation, groups, transposed, output_padding)
    if tuple(grad_output.shape) != geo.output_shape:
        raise Unsupported(f"grad_output of shape {list(grad_output.shape)} for an output of shape "
                          f"{list(geo.output_shape)}")
    element = _float_element(cx, grad_output)
    want_input, want_weight, want_bias = (bool(m) for m in output_mask)
    dy = operand(cx, grad_output, grad_output.shape, element)
    grad_input = grad_weight = grad_bias = None
    if want_input or want_weight:
        dy_matrix = _output_matrix(cx, geo, dy)  # [G, N*L, O/G]
    if want_weight:
        x_value = operand(cx, x, geo.input_shape, element)
        cols = _columns(cx, geo, reshape(cx, x_value, (geo.n, geo.c, geo.h.size, geo.w.size)))
        og = geo.o // geo.g
        shape = (og, geo.depth) if geo.g == 1 else (geo.g, og, geo.depth)
        grad_weight = reshape(cx, _matmul(cx, dy_matrix, cols, shape, " transpose_lhs"), geo.weight_shape)
    if want_input:
        w_matrix = _weight_matrix(cx, geo, operand(cx, weight, geo.weight_shape, element))
        grad_cols = _matmul(cx, dy_matrix, w_matrix, _matrix_shape(geo, geo.depth))
        grad_input = reshape(cx, _image_of_columns(cx, geo, grad_cols), geo.input_shape)
    if want_bias:
        dims = [d for d in range(dy.type.rank) if d != (1 if geo.batched else 0)]
        grad_bias = reduce(cx, "sum", dy, dims, False, TensorType((geo.o,), element))
    return grad_input, grad_weight, grad_bias
