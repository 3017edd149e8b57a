"""ATen matrix multiplication, normalisation, softmax, losses, attention and
randomness as fuse ops (the composites map to fuse's whole ops)."""

import math

import torch

from ._mlir_text import format_float
from ._aten_common import (Const, HANDLERS, TensorType, Unsupported, Value, as_bool, binary, broadcast, cast,
                           element_type, finish, handles, index_operand, normalize_dim, operand, reduce, reshape,
                           transpose)


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


def _kept_labels(cx, target, ignore_index):
    """i1, target's shape: the label is not ignore_index."""
    ignored = cx.splat(int(ignore_index), target.type)
    return cx.emit(f"fuse.compare ne, {{0}}, {{1}} : {target.type}", [target, ignored],
                   [target.type.with_element("i1")])


def _class_mask(cx, target, type_, ignore_index):
    """i1 [N, C]: class c of row i is row i's label, and that label is not
    ignore_index."""
    labels = broadcast(cx, reshape(cx, target, target.shape + (1,)), type_.shape)
    classes = cx.emit(f"fuse.iota dim = {type_.rank - 1} : {labels.type}", [], [labels.type], hint="classes")
    is_label = cx.emit(f"fuse.compare eq, {{0}}, {{1}} : {labels.type}", [labels, classes],
                       [type_.with_element("i1")])
    kept = broadcast(cx, reshape(cx, _kept_labels(cx, target, ignore_index), target.shape + (1,)),
                     type_.shape)
    return cx.emit(f"fuse.and {{0}}, {{1}} : {is_label.type}", [is_label, kept], [is_label.type])


def _counted(cx, target, ignore_index, element):
    """How many labels are not ignore_index, as a 0-d tensor of `element`."""
    as_float = cast(cx, _kept_labels(cx, target, ignore_index), element)
    return reduce(cx, "sum", as_float, list(range(target.type.rank)), False, TensorType((), element))


@handles("aten.nll_loss_forward.default")
def nll_loss_forward(cx, node, logp, target, weight, reduction, ignore_index):
    if weight is not None:
        raise Unsupported("class weights")
    loss_type = cx.node_type(index=0)
    target = index_operand(cx, target)
    count = _counted(cx, target, ignore_index, logp.element)
    total_weight = finish(cx, count, 1)
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
    return cx.emit(f"fuse.div {{0}}, {{1}} : {loss_type}", [total, count], [loss_type]), total_weight


def _negated_row_scale(cx, grad, total_weight, reduction, target, element, shape):
    """-d(loss)/d(log-probability of the label), per row, broadcast to
    `shape` (the row's classes): the incoming gradient, over the count of
    kept labels for a mean."""
    scale = operand(cx, grad, grad.shape, element)
    if reduction == 1:
        scale = cx.emit(f"fuse.div {{0}}, {{1}} : {scale.type}",
                        [scale, operand(cx, total_weight, grad.shape, element)], [scale.type])
    rows = target.shape + (1,) if reduction == 0 else ()
    scale = broadcast(cx, reshape(cx, scale, rows) if reduction == 0 else scale, shape)
    return cx.emit(f"fuse.neg {{0}} : {scale.type}", [scale], [scale.type])


@handles("aten.nll_loss_backward.default")
def nll_loss_backward(cx, node, grad, logp, target, weight, reduction, ignore_index, total_weight):
    if weight is not None:
        raise Unsupported("class weights")
    out = cx.node_type()
    target = index_operand(cx, target)
    negative = _negated_row_scale(cx, grad, total_weight, reduction, target, out.element, out.shape)
    picked = _class_mask(cx, target, out, ignore_index)
    zero = cx.splat(0, out)
    return cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {picked.type}, {out}", [picked, negative, zero], [out])


_CASTS = ("aten._to_copy.default", "prims.convert_element_type.default")


def _nll_gradient_row_sums(cx, grad, out, dim):
    """The sums over dimension `dim` of `grad` (a Value) where it is
    nll_loss_backward's result, or a cast of it, shaped [rows, 1] in `out`'s
    element type and computed without reading the classes; else None.
    nll's result is -scale at the row's label and 0 elsewhere, so a row
    sums to -scale where its label is kept and to 0 where it is
    ignore_index (a label outside the classes is an error in torch's
    forward); a cast rounds that one value as the sum would."""
    target, node = cx.producer(grad)
    if target in _CASTS and isinstance(node.args[0], torch.fx.Node):
        target, node = cx.producer(cx.env.get(node.args[0]))
    if target != "aten.nll_loss_backward.default":
        return None
    nll_grad, _, labels, weight, reduction, ignore_index, total_weight = [
        cx.env.get(a, a) if isinstance(a, torch.fx.Node) else a for a in node.args]
    computed = cx.node_type(node)
    if weight is not None or out.rank != 2 or dim != 1 or computed.shape != out.shape:
        return None
    labels = index_operand(cx, labels)
    rows = computed.with_shape((out.shape[0], 1))
    negative = _negated_row_scale(cx, nll_grad, total_weight, reduction, labels, rows.element, rows.shape)
    kept = reshape(cx, _kept_labels(cx, labels, ignore_index), rows.shape)
    zero = cx.splat(0, rows)
    sums = cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {kept.type}, {rows}", [kept, negative, zero], [rows])
    return sums if rows.element == out.element else cast(cx, sums, out.element)


@handles("aten._log_softmax_backward_data.default")
def log_softmax_backward(cx, node, grad, output, dim, input_dtype):
    out = cx.node_type()
    target, nll = cx.producer(grad)
    logits = _log_softmax_source(cx, output, dim)
    if (target == "aten.nll_loss_backward.default" and logits is not None
            and cx.node_type(nll) == out):
        # d(cross_entropy)/d(logits) in one op. nll_loss_backward reads its
        # log-probabilities for their shape alone (the torch.compile backend
        # gives it a stand-in, dynamo/_joint_rewrites.py), so its result is
        # -onehot * scale whatever they are; the same shape says it is this
        # log-softmax's gradient, not a view's.
        grad_loss, _, labels, _, reduction, ignore_index, _ = [cx.env.get(a, a) if isinstance(a, torch.fx.Node)
                                                               else a for a in nll.args]
        labels = index_operand(cx, labels)
        grad_loss = operand(cx, grad_loss, grad_loss.shape, out.element)
        options = f" ignore_index = {int(ignore_index)}" if int(ignore_index) != -100 else ""
        if reduction != 1:
            options += f" reduction = {_REDUCTIONS[reduction]}"
        return cx.emit(f"fuse.cross_entropy_backward {{0}}, {{1}}, {{2}}{options} : ({grad_loss.type}, "
                       f"{logits.type}, {labels.type}) -> {out}", [grad_loss, logits, labels], [out])
    # grad - exp(output) * sum(grad, dim). Where grad is nll_loss's (the
    # log-probabilities are logits less a saved logsumexp, which the
    # backend's joint rewrite makes), its sums need no pass over the
    # classes: the gradient is then one elementwise pass over the logits.
    dim = normalize_dim(dim, out.rank)
    sums = _nll_gradient_row_sums(cx, grad, out, dim)
    grad = operand(cx, grad, out.shape, out.element)
    output = operand(cx, output, out.shape, out.element)
    if sums is None:
        kept = out.with_shape(out.shape[:dim] + (1,) + out.shape[dim + 1:])
        sums = reduce(cx, "sum", grad, [dim], True, kept)
    total = broadcast(cx, sums, out.shape)
    probabilities = cx.emit(f"fuse.exp {{0}} : {out}", [output], [out])
    product = cx.emit(f"fuse.mul {{0}}, {{1}} : {out}", [probabilities, total], [out])
    return cx.emit(f"fuse.sub {{0}}, {{1}} : {out}", [grad, product], [out])


# -- attention ------------------------------------------------------------------------

def _constant_mask_pattern(tensor, tq, tk):
    """What a constant attention mask does: "all" (masks nothing), "causal"
    (the causal pattern) or None (anything else, a float bias among them)."""
    # An expanded mask (HF's [B, 1, T, T] broadcast to every head) is read
    # once per distinct element: a dimension of stride 0 repeats its first row.
    tensor = tensor[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in tensor.stride())]
    keep = tensor if tensor.dtype == torch.bool else tensor > torch.finfo(torch.float32).min / 2
    if tensor.dtype != torch.bool and not bool(((tensor == 0) | ~keep).all()):
        return None  # a float bias, not a keep/drop pattern
    rows = keep.broadcast_to(keep.shape[:-2] + (tq, tk))
    if bool(rows.all()):
        return "all"
    causal = torch.ones(tq, tk, dtype=torch.bool, device=rows.device).tril()
    return "causal" if torch.equal(rows, causal.expand_as(rows)) else None


def _attention_mask(cx, mask, query, key):
    """How an ATen attention mask enters fuse: (causal, mask Value or None).
    A constant mask that is the causal pattern becomes the `causal` flag; one
    that masks nothing is dropped. Every layer of a model reads the same
    constant mask: it is classified once per graph (a full pass over a
    B x T x T tensor each time cost GPT-2's export over a second)."""
    if mask is None:
        return False, None
    tq, tk = query.shape[-2], key.shape[-2]
    if isinstance(mask, Const):
        memo = (id(mask), tq, tk)
        if memo not in cx.mask_patterns:  # the Const is kept with its result, so its id stays its own
            cx.mask_patterns[memo] = (mask, _constant_mask_pattern(mask.tensor, tq, tk))
        pattern = cx.mask_patterns[memo][1]
        if pattern == "all":
            return False, None
        if pattern == "causal":
            return True, None
    rank = len(mask.shape)
    shape = (1,) * (4 - rank) + tuple(mask.shape)
    element = "i1" if element_type(mask) == "i1" else query.element
    value = operand(cx, mask, mask.shape, element)
    return False, reshape(cx, value, shape)


def _attention_options(cx, mask, causal, scale, dropout_p, query, operands, numel, rng=None):
    """The op's options text; with dropout, its (seed, offset) operands are
    `rng`, else a fresh range of the graph's Philox stream."""
    text = ""
    if mask is not None:
        text += f" mask({{{len(operands)}}})"
        operands.append(mask)
    if dropout_p:
        seed, offset = rng if rng is not None else cx.rng(numel // 4 + 1)
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
    """(output, log-sum-exp, seed, offset): the last two the Philox state its
    dropout drew from (None without dropout), which the backward must draw
    its mask from again: recorded by the log-sum-exp for a backward in the
    same graph, and returned for one in another (the torch.compile
    backend's, which receives it as the forward's RNG-state results)."""
    q, k, v = [operand(cx, x, x.shape, out.element) for x in (q, k, v)]
    mask_causal, mask = _attention_mask(cx, mask, q, k)
    lse = TensorType(q.shape[:-1], "f32")
    operands = [q, k, v]
    numel = q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2]
    options = _attention_options(cx, mask, is_causal or mask_causal, scale, dropout_p, q, operands, numel)
    types = ", ".join(str(x.type) for x in operands)
    output, lse = cx.emit(f"fuse.scaled_dot_product_attention {{0}}, {{1}}, {{2}}{options} : ({types}) -> "
                          f"({out}, {lse})", operands, [out, lse])
    rng = tuple(operands[-2:]) if dropout_p else (None, None)
    if dropout_p:
        cx.attention_rng[id(lse)] = rng
    return (output, lse) + rng


def _rng_state(cx, seed, offset):
    """The forward's Philox state as the backward receives it (the RNG-state
    results of CUDA's attention ops), as operands; None if it is not there."""
    if seed is None or offset is None or isinstance(seed, Const) or isinstance(offset, Const):
        return None
    return tuple(operand(cx, x, (), "i64") for x in (seed, offset))


def attention_backward(cx, grad, q, k, v, out, lse, mask, dropout_p, is_causal, scale, rng=None):
    """The gradients of q, k and v. With dropout the mask is drawn again from
    the forward's Philox state: `rng`, or the one recorded by `lse`'s
    forward in this graph."""
    types = [cx.node_type(index=i) for i in range(3)]
    grad, q, k, v, out = [operand(cx, x, x.shape, types[0].element) for x in (grad, q, k, v, out)]
    if not isinstance(lse, Value) or lse.shape != q.shape[:-1]:
        raise Unsupported("the log-sum-exp does not come from a fuse attention forward")
    mask_causal, mask = _attention_mask(cx, mask, q, k)
    operands = [grad, q, k, v, out, lse]
    numel = q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2]
    if dropout_p:
        rng = rng or cx.attention_rng.get(id(lse))
        if rng is None:
            raise Unsupported("attention dropout's backward without the random state of its forward "
                              "(its mask could not be drawn again)")
    options = _attention_options(cx, mask, is_causal or mask_causal, scale, dropout_p, q, operands, numel, rng)
    names = ", ".join(str(x.type) for x in operands)
    results = ", ".join(str(t) for t in types)
    return tuple(cx.emit(f"fuse.scaled_dot_product_attention_backward {{0}}, {{1}}, {{2}}, {{3}}, {{4}}, "
                         f"{{5}}{options} : ({names}) -> ({results})", operands, types))


@handles("aten._scaled_dot_product_flash_attention_for_cpu.default")
def sdpa_cpu(cx, node, q, k, v, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    return attention_forward(cx, cx.node_type(index=0), q, k, v, attn_mask, dropout_p, is_causal, scale)[:2]


@handles("aten._scaled_dot_product_flash_attention_for_cpu_backward.default")
def sdpa_cpu_backward(cx, node, grad, q, k, v, out, lse, dropout_p, is_causal, *, attn_mask=None, scale=None):
    return attention_backward(cx, grad, q, k, v, out, lse, attn_mask, dropout_p, is_causal, scale)


@handles("aten.scaled_dot_product_attention.default")
def sdpa(cx, node, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False):
    return attention_forward(cx, cx.node_type(), q, k, v, attn_mask, dropout_p, is_causal, scale)[0]


@handles("aten._scaled_dot_product_efficient_attention.default")
def sdpa_efficient(cx, node, q, k, v, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, *,
                   scale=None):
    # Results 2 and 3: the Philox seed and offset (CUDA's own are uint64).
    return attention_forward(cx, cx.node_type(index=0), q, k, v, attn_bias, dropout_p, is_causal, scale)


@handles("aten._scaled_dot_product_efficient_attention_backward.default")
def sdpa_efficient_backward(cx, node, grad, q, k, v, attn_bias, out, lse, philox_seed, philox_offset,
                            dropout_p, grad_input_mask, is_causal=False, *, scale=None):
    return attention_backward(cx, grad, q, k, v, out, lse, attn_bias, dropout_p, is_causal, scale,
                              _rng_state(cx, philox_seed, philox_offset)) + (None,)


@handles("aten._scaled_dot_product_flash_attention.default")
def sdpa_flash(cx, node, q, k, v, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
    output, lse, seed, offset = attention_forward(cx, cx.node_type(index=0), q, k, v, None, dropout_p, is_causal,
                                                  scale)
    # Results 6 and 7: the Philox seed and offset.
    return (output, lse, None, None, None, None, seed, offset, None)


@handles("aten._scaled_dot_product_flash_attention_backward.default")
def sdpa_flash_backward(cx, node, grad, q, k, v, out, lse, cum_q, cum_k, max_q, max_k, dropout_p,
                        is_causal, philox_seed, philox_offset, *, scale=None):
    return attention_backward(cx, grad, q, k, v, out, lse, None, dropout_p, is_causal, scale,
                              _rng_state(cx, philox_seed, philox_offset))


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
    # Scaled in f32, as torch's kernel does (not `binary`, which reads the
    # node's type: this node has two results).
    wide = out.with_element("f32")
    scaled_value = cx.emit(f"fuse.mul {{0}}, {{1}} : {wide}",
                           [cast(cx, value, "f32"), cx.splat(1.0 / (1.0 - p), wide)], [wide])
    scaled_value = cast(cx, scaled_value, out.element)
    zero = cx.splat(0, out)
    dropped = cx.emit(f"fuse.select {{0}}, {{1}}, {{2}} : {keep.type}, {out}", [keep, scaled_value, zero], [out])
    return dropped, keep


@handles("aten.native_dropout_backward.default")
def native_dropout_backward(cx, node, grad, mask, scale):
    out = cx.node_type()
    grad = operand(cx, grad, out.shape, out.element)
    keep = as_bool(cx, mask, out.shape)
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
