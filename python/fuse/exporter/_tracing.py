"""Tracing PyTorch code into graphs of ATen ops, on torch 1.13 and 2.x.

Everything the exporter traces goes through `trace`: make_fx with the
decomposition table below and stack traces recorded, so that every node knows
the model source line it came from. The training step is traced as one
function (forward, `torch.autograd.grad`, optionally gradient clipping,
accumulation and an optimizer update: fuse.exporter._steps, fuse.exporter._optimizers),
giving a single graph in which later passes see the whole step.
"""

import contextlib
import functools

import torch
from torch.fx.experimental import proxy_tensor
from torch.fx.experimental.proxy_tensor import make_fx

from .._compat import TORCH_2
from ._source import is_user_frame

aten = torch.ops.aten

def _ops(*names):
    """The ATen overload packets among `names` that this torch has."""
    return [getattr(aten, n) for n in names if hasattr(aten, n)]


# Ops the fuse dialect has whole (or that the converter maps by a pattern, or
# maps itself the same on every torch: linalg_vector_norm, which torch 1.13
# would decompose into prims): PyTorch's decompositions must leave them alone.
KEPT_WHOLE = _ops(
    "native_layer_norm", "layer_norm", "_softmax", "softmax", "_log_softmax", "log_softmax",
    "_log_softmax_backward_data", "nll_loss_forward", "nll_loss_backward", "gelu", "silu",
    "sigmoid", "tanh", "relu", "embedding", "embedding_dense_backward", "addmm", "mm", "bmm",
    "rsqrt", "rms_norm", "linalg_vector_norm", "native_dropout", "native_dropout_backward",
    "scaled_dot_product_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_backward")

# On torch 1.13, which has no core ATen decomposition set, the composites that
# appear in transformer graphs and their backward.
_DECOMPOSED_ON_TORCH_1 = _ops(
    "native_layer_norm_backward", "_softmax_backward_data", "gelu_backward", "silu_backward",
    "tanh_backward", "sigmoid_backward", "threshold_backward", "var_mean", "var", "std",
    "addcmul", "addcdiv", "lerp", "t", "transpose", "hardtanh", "leaky_relu",
    "leaky_relu_backward", "elu", "elu_backward", "mse_loss", "mse_loss_backward",
    "_unsafe_view", "expand_as", "masked_fill", "rsub", "squeeze", "unbind", "split",
    "native_group_norm", "native_group_norm_backward", "binary_cross_entropy",
    "binary_cross_entropy_backward", "logsumexp", "clamp_min", "clamp_max", "repeat",
    "huber_loss", "smooth_l1_loss", "norm")


def _norm_dims(v, dim):
    return [d for d in range(v.dim()) if d != dim] if dim != -1 else list(range(v.dim()))


def _weight_norm_interface(v, g, dim=0):
    """torch.nn.utils.weight_norm's fused op (w = g * v / ||v||, the norm
    over every dimension but `dim`), as the ops it is made of."""
    norm = v.pow(2).sum(_norm_dims(v, dim), keepdim=True).sqrt()
    return v * (g / norm), norm


def _weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    dims = _norm_dims(saved_v, dim)
    grad_g = (grad_w * saved_v).sum(dims, keepdim=True) / saved_norms
    grad_v = (saved_g / saved_norms) * (grad_w - saved_v * (grad_g / saved_norms))
    return grad_v, grad_g


def _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
                                 proj_bias, mask=None, need_weights=True, average_attn_weights=True,
                                 mask_type=None):
    """nn.MultiheadAttention's inference fast path (eval mode) as the math
    it fuses: the packed projections, softmax(q·kᵀ/√d + mask)·v per head,
    the output projection. mask_type 0 is an [L, S] attention mask, 1 a
    [B, S] key padding mask, 2 one already merged to [B, H, L, S]; a
    boolean mask hides where it is true."""
    import math
    import torch.nn.functional as F
    batch, length, _ = query.shape
    source = key.shape[1]
    head = embed_dim // num_head
    (wq, wk, wv), (bq, bk, bv) = qkv_weight.chunk(3), qkv_bias.chunk(3)

    def heads(x, weight, bias, rows):
        return F.linear(x, weight, bias).view(batch, rows, num_head, head).transpose(1, 2)

    q, k, v = heads(query, wq, bq, length), heads(key, wk, bk, source), heads(value, wv, bv, source)
    scores = q @ k.transpose(-1, -2) / math.sqrt(head)
    if mask is not None:
        shaped = {0: (1, 1, length, source), 1: (batch, 1, 1, source)}.get(mask_type)
        mask = mask.view(shaped) if shaped else mask
        scores = scores.masked_fill(mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
    probabilities = torch.softmax(scores, dim=-1)
    out = F.linear((probabilities @ v).transpose(1, 2).reshape(batch, length, embed_dim), proj_weight, proj_bias)
    if not need_weights:
        return out, query.new_empty(0)
    return out, probabilities.mean(dim=1) if average_attn_weights else probabilities


def _histc(x, bins=100, min=0, max=0):
    """torch.histc as comparisons and a sum: element e counts in bin
    floor((e - min) · bins / (max - min)), one equal to max in the last,
    one outside [min, max] in none; min = max means the data's own range.
    A mixture of experts counts the tokens routed to each expert with it
    (on integer ids, which histc's CPU kernel, run by a CPU trace, lacks)."""
    values = x.reshape(-1).to(torch.float32)
    low, high = float(min), float(max)
    if min == max:  # as torch: the data's range, widened by 1 each way if it is one value
        low, high = values.min(), values.max()
        flat = high == low
        low, high = torch.where(flat, low - 1, low), torch.where(flat, high + 1, high)
    index = ((values - low) * bins / (high - low)).floor().to(torch.int64)
    index = torch.where(values == high, bins - 1, index)
    inside = (values >= low) & (values <= high)
    bin_ids = torch.arange(bins, device=x.device)
    hits = (index[:, None] == bin_ids[None, :]) & inside[:, None]
    return hits.to(torch.int64).sum(0).to(x.dtype)


# The largest k topk takes apart (_topk): k passes over the data each.
TOPK_PASSES = 16


def _topk(x, k, dim=-1, largest=True, sorted=True):
    """torch.topk for a small k (a mixture of experts' router: top 2 of 8)
    as k passes of reductions: the largest value not yet taken, the first
    position holding it, the value gathered there (the gradient flows back
    through the gather alone). NaN counts as the largest, as in torch, and
    comes last with largest=False; ties go to the lower index. The result is sorted whatever `sorted` says
    (torch leaves the order unspecified then). A larger k stays torch.topk
    (an op Fuse does not map: it runs in torch)."""
    if x.dim() == 0 or k > TOPK_PASSES or not x.dtype.is_floating_point:
        return NotImplemented
    dim = dim % x.dim()
    shape = [1] * x.dim()
    shape[dim] = x.shape[dim]
    positions = torch.arange(x.shape[dim], device=x.device).view(shape)
    # Smallest first is largest of -x, NaN still last (torch's order).
    work = x if largest else torch.where(x.isnan(), float("-inf"), -x)
    taken = torch.zeros_like(x, dtype=torch.bool)
    values, indices = [], []
    for _ in range(k):
        remaining = work.masked_fill(taken, float("-inf"))
        best = remaining.amax(dim, keepdim=True)
        candidate = ((remaining == best) | (remaining.isnan() & best.isnan())) & ~taken
        index = candidate.to(torch.float32).argmax(dim, keepdim=True)
        values.append(x.gather(dim, index))
        indices.append(index)
        taken = taken | (positions == index)
    return torch.cat(values, dim), torch.cat(indices, dim)


# Fused ops with no fuse op and no PyTorch decomposition on every version.
_OWN_DECOMPOSITIONS = {
    "topk": _topk,
    "histc": _histc,
    "_native_multi_head_attention": _native_multi_head_attention,
    "_weight_norm_interface": _weight_norm_interface,
    "_weight_norm_interface_backward": _weight_norm_interface_backward,
}


def decomposition_table():
    """PyTorch's core ATen decompositions, less the ops fuse has whole, and
    Fuse's own for fused ops PyTorch leaves whole: a fresh dict each call
    (callers may add to it) over a table built once per process (building
    it walks every overload of every op: a quarter of a second)."""
    return dict(_decomposition_table())


@functools.lru_cache(maxsize=None)
def _decomposition_table():
    kept = set()
    for packet in KEPT_WHOLE:
        kept.update(getattr(packet, o) for o in packet.overloads())
    if hasattr(torch._decomp, "core_aten_decompositions"):
        table = dict(torch._decomp.core_aten_decompositions())
    else:
        table = torch._decomp.get_decompositions(_DECOMPOSED_ON_TORCH_1)
    for name, fn in _OWN_DECOMPOSITIONS.items():
        if hasattr(aten, name):
            table[getattr(aten, name).default] = fn
    return {op: fn for op, fn in table.items() if op not in kept}


@contextlib.contextmanager
def _stack_traces_on_torch_1():
    tracer = proxy_tensor.PythonKeyTracer
    before = getattr(tracer, "record_stack_traces", False)
    tracer.record_stack_traces = True
    try:
        yield
    finally:
        tracer.record_stack_traces = before


def trace(fn, example_args, tracing_mode=None, stack_traces=True):
    """make_fx of `fn` on `example_args` (tensors, or dicts/lists of them).
    Fake tensors by default on torch 2 (no compute: a 124M-parameter step
    traces in seconds); real ones on torch 1.13, whose fake mode is young.
    `stack_traces=False` records none (on torch 2: a caller re-tracing a
    graph whose nodes carry their source already, under
    torch.fx.traceback.preserve_node_meta, which copies it)."""
    tracing_mode = tracing_mode or ("fake" if TORCH_2 else "real")
    table = decomposition_table()
    try:
        if TORCH_2:
            # Module buffers and tensors the model makes itself stay real
            # (constants the exporter folds).
            return make_fx(fn, decomposition_table=table, tracing_mode=tracing_mode,
                           record_stack_traces=stack_traces, _allow_non_fake_inputs=True)(*example_args)
        with _stack_traces_on_torch_1():
            return make_fx(fn, decomposition_table=table, tracing_mode=tracing_mode)(*example_args)
    except Exception as error:  # turned into an ExportError with the user's line
        raise TracingError(error) from error


class TracingError(Exception):
    """PyTorch could not trace the model (data-dependent control flow,
    dynamic shapes...); the message says why and where."""

    def __init__(self, error):
        self.original = error
        super().__init__(_describe_tracing_failure(error))


def _describe_tracing_failure(error):
    import traceback
    frames = traceback.extract_tb(error.__traceback__)
    user = [f for f in frames if is_user_frame(f.filename)]
    where = f" at {user[-1].filename}:{user[-1].lineno}" if user else ""
    name = type(error).__name__
    text = str(error).strip().splitlines()[0] if str(error).strip() else name
    hint = ""
    lowered = (name + " " + str(error)).lower()
    if "data-dependent" in lowered or "datadependent" in lowered or "guard" in lowered:
        hint = (" (data-dependent control flow or a value read from a tensor: fuse graphs are "
                "static; move the decision out of the model or make it a tensor op)")
    elif "dynamic" in lowered or "symbolic" in lowered:
        hint = " (dynamic shapes: export with concrete sizes)"
    elif "nested" in lowered:
        hint = (" (nn.TransformerEncoder's inference fast path packs a padded batch into nested tensors, "
                "which cannot be traced: on torch 2.x Fuse turns that fast path off while it traces; on "
                "older torch export with gradients enabled or without src_key_padding_mask)")
    return f"tracing failed{where}: {name}: {text}{hint}"
