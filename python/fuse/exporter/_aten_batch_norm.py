"""ATen batch norm and its backward as fuse ops (Conformer-style speech
models, convolutional stems): statistics over every dimension but the
channels (dim 1), in f32.

Inference (`training=False`) normalises with the running statistics.
Training normalises with the batch's; when the module also tracks running
statistics, torch updates those buffers in place as a side effect, which a
fuse graph (whose buffers are constants) cannot express: that is refused
with a message, rather than exported as a graph that silently never updates
them. `track_running_stats=False` trains.
"""

from ._aten_common import TensorType, Unsupported, cast, handles, operand, reduce

_REFUSED_UPDATE = ("batch norm in training mode updates running_mean and running_var in place (module "
                   "buffers), which a fuse graph cannot; train with track_running_stats=False, or run the "
                   "module in eval() mode")


def _broadcast_channels(cx, value, shape):
    """`value` ([C] or [C, 1, ...]) broadcast to `shape` along dim 1."""
    kept = value.type.with_shape((value.shape[0],))
    if value.shape != kept.shape:
        value = cx.emit(f"fuse.reshape {{0}} : ({value.type}) -> {kept}", [value], [kept])
    out = value.type.with_shape(shape)
    return cx.emit(f"fuse.broadcast_in_dim {{0}}, dims = [1] : ({value.type}) -> {out}", [value], [out])


def _elementwise(cx, name, a, b):
    return cx.emit(f"fuse.{name} {{0}}, {{1}} : {a.type}", [a, b], [a.type])


def _statistics(cx, x, eps):
    """(mean [C], invstd [C]) of x over every dimension but 1, in f32."""
    dims = [0] + list(range(2, x.type.rank))
    channels = TensorType((x.shape[1],), "f32")
    mean = reduce(cx, "mean", x, dims, False, channels)
    centred = _elementwise(cx, "sub", x, _broadcast_channels(cx, mean, x.shape))
    variance = reduce(cx, "mean", _elementwise(cx, "mul", centred, centred), dims, False, channels)
    shifted = _elementwise(cx, "add", variance, cx.splat(float(eps), channels))
    invstd = cx.emit(f"fuse.rsqrt {{0}} : {channels}", [shifted], [channels])
    return mean, invstd


def _running_invstd(cx, running_var, eps, channels):
    var = operand(cx, running_var, channels.shape, "f32")
    shifted = _elementwise(cx, "add", var, cx.splat(float(eps), channels))
    return cx.emit(f"fuse.rsqrt {{0}} : {channels}", [shifted], [channels])


def _normalise(cx, x, mean, invstd, weight, bias):
    scale = invstd
    channels = mean.type
    if weight is not None:
        scale = _elementwise(cx, "mul", scale, operand(cx, weight, channels.shape, "f32"))
    y = _elementwise(cx, "mul", _elementwise(cx, "sub", x, _broadcast_channels(cx, mean, x.shape)),
                     _broadcast_channels(cx, scale, x.shape))
    if bias is not None:
        y = _elementwise(cx, "add", y, _broadcast_channels(cx, operand(cx, bias, channels.shape, "f32"), x.shape))
    return y


def _forward(cx, x, weight, bias, running_mean, running_var, training, eps, saved_types):
    out = cx.node_type(index=0)
    value = operand(cx, x, x.shape, "f32")
    channels = TensorType((x.shape[1],), "f32")
    if training:
        mean, invstd = _statistics(cx, value, eps)
    else:
        if running_mean is None:
            raise Unsupported("batch norm in eval mode without running statistics")
        mean = operand(cx, running_mean, channels.shape, "f32")
        invstd = _running_invstd(cx, running_var, eps, channels)
    y = cast(cx, _normalise(cx, value, mean, invstd, weight, bias), out.element)
    saved = []
    for statistic, type_ in zip((mean, invstd), saved_types):
        if type_.numel == 0:  # inference returns empty statistics
            saved.append(cx.splat(0, type_))
        else:
            saved.append(cast(cx, statistic, type_.element))
    return (y, *saved)


@handles("aten.native_batch_norm.default", "aten._native_batch_norm_legit.default")
def native_batch_norm(cx, node, x, weight, bias, running_mean, running_var, training, momentum, eps):
    if training and running_mean is not None:
        raise Unsupported(_REFUSED_UPDATE)
    return _forward(cx, x, weight, bias, running_mean, running_var, training, eps,
                    (cx.node_type(index=1), cx.node_type(index=2)))


@handles("aten._native_batch_norm_legit.no_stats")
def native_batch_norm_no_stats(cx, node, x, weight, bias, training, momentum, eps):
    return _forward(cx, x, weight, bias, None, None, True, eps, (cx.node_type(index=1), cx.node_type(index=2)))


@handles("aten._native_batch_norm_legit_no_training.default")
def native_batch_norm_no_training(cx, node, x, weight, bias, running_mean, running_var, momentum, eps):
    return _forward(cx, x, weight, bias, running_mean, running_var, False, eps,
                    (cx.node_type(index=1), cx.node_type(index=2)))


@handles("aten.native_batch_norm_backward.default")
def native_batch_norm_backward(cx, node, grad, x, weight, running_mean, running_var, save_mean, save_invstd,
                               train, eps, output_mask):
    """grad_input, grad_weight, grad_bias. Training, with N the elements a
    channel: xhat = (x - mean)·invstd; dbias = Σg, dweight = Σ g·xhat;
    dx = weight·invstd/N · (N·g − Σg − xhat·Σ g·xhat). Inference: the
    statistics are constants, dx = g·weight·invstd."""
    x_value = operand(cx, x, x.shape, "f32")
    g = operand(cx, grad, x.shape, "f32")
    channels = TensorType((x.shape[1],), "f32")
    dims = [0] + list(range(2, x.type.rank))
    if train:
        mean = operand(cx, save_mean, channels.shape, "f32")
        invstd = operand(cx, save_invstd, channels.shape, "f32")
    else:
        mean = operand(cx, running_mean, channels.shape, "f32")
        invstd = _running_invstd(cx, running_var, eps, channels)
    xhat = _elementwise(cx, "mul", _elementwise(cx, "sub", x_value, _broadcast_channels(cx, mean, x.shape)),
                        _broadcast_channels(cx, invstd, x.shape))
    grad_bias = reduce(cx, "sum", g, dims, False, channels)
    grad_weight = reduce(cx, "sum", _elementwise(cx, "mul", g, xhat), dims, False, channels)
    scale = invstd if weight is None else _elementwise(cx, "mul", invstd, operand(cx, weight, channels.shape, "f32"))
    if train:
        count = x.type.numel // x.shape[1]
        mean_g = _elementwise(cx, "mul", grad_bias, cx.splat(1.0 / count, channels))
        mean_gx = _elementwise(cx, "mul", grad_weight, cx.splat(1.0 / count, channels))
        inner = _elementwise(cx, "sub", g, _broadcast_channels(cx, mean_g, x.shape))
        inner = _elementwise(cx, "sub", inner, _elementwise(cx, "mul", xhat,
                                                             _broadcast_channels(cx, mean_gx, x.shape)))
        grad_input = _elementwise(cx, "mul", inner, _broadcast_channels(cx, scale, x.shape))
    else:
        grad_input = _elementwise(cx, "mul", g, _broadcast_channels(cx, scale, x.shape))
    results = []
    for index, (value, wanted) in enumerate(zip((grad_input, grad_weight, grad_bias), output_mask)):
        results.append(cast(cx, value, cx.node_type(index=index).element) if wanted else None)
    return tuple(results)
