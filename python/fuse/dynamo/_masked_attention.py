"""Attention with a mask that comes from an input, as one op for Fuse.

Under torch.compile, HuggingFace's models always hand scaled_dot_product_
attention a materialised mask (their mask helpers skip it only when not
tracing), and for an encoder's padding mask, which depends on an input, the
dispatcher picked SDPA's math form while AOTAutograd traced (batched
matmuls around `_safe_softmax`, the probabilities saved in f32): Fuse then
never saw an attention op and could not use its flash kernels.

`route(gm)` rewrites a dynamo graph's SDPA calls that have such a mask to
call the memory-efficient attention op directly, with the mask as an
additive bias in the query's dtype, which the exporter maps to Fuse's
attention (its mask operand) and its backward. Calls it cannot take as
they are (no mask, grouped-query attention, a mask that needs a gradient
(T5's learned position bias), tensors not on a CUDA device, other ranks)
keep SDPA. The bias is laid out as SDPA lays it out for that kernel
(expanded to every head, its last dimension padded to a multiple of 16
and sliced back), so that the graph also runs eagerly if Fuse gives it up.

`routing()` does the same where no dynamo graph is rewritten: while
fuse.export traces a module or a training step (compile_step), SDPA calls
go through `masked_attention` (a TorchFunctionMode). Without it, HF's BERT
trained with its padding mask and dropout reached compile_step as batched
matmuls, a safe softmax and a Bernoulli mask per layer (452 ms a
4-micro-batch step on an H200, 90% of it in those row reductions).
"""

import warnings

import torch
import torch.nn.functional as F

__all__ = ["route", "routing"]

# The memory-efficient kernel reads the bias in rows of 16 elements.
_BIAS_ALIGNMENT = 16


def _sdpa_targets():
    return {getattr(F, "scaled_dot_product_attention", None),
            getattr(torch._C._nn, "scaled_dot_product_attention", None)} - {None}


def route(gm):
    """Rewrites `gm` (a dynamo graph) in place; returns how many calls now
    take the memory-efficient op."""
    targets = _sdpa_targets()
    routed = 0
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in targets:
            node.target = masked_attention
            routed += 1
    if routed:
        gm.recompile()
    return routed


class _Routing(torch.overrides.TorchFunctionMode):
    """SDPA calls through `masked_attention` (the mode is off while it
    handles a call, so the SDPA it falls back to is SDPA itself)."""

    def __init__(self):
        super().__init__()
        self.targets = _sdpa_targets()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in self.targets:
            return masked_attention(*args, _any_device=True, **kwargs)
        return func(*args, **kwargs)


def routing():
    """A context in which SDPA calls that `_takes` go to the memory-efficient
    op with their mask as a bias (fuse.export traces modules in it); none
    where torch has no SDPA (torch 1.x), so tracing is left as it was. The
    exporter traces a CPU copy of the model on fake tensors (compile_step
    does too), so here the op is taken on any device: only its meta
    function runs, and a Fuse graph has no device."""
    import contextlib
    return _Routing() if _sdpa_targets() else contextlib.nullcontext()


def _autocast_dtype(device_type):
    """The dtype autocast gives SDPA's operands on `device_type`, or None
    where autocast is off (the op called directly is not in its lists)."""
    try:
        if not torch.is_autocast_enabled(device_type):
            return None
        return torch.get_autocast_dtype(device_type)
    except TypeError:  # torch before 2.4: CUDA only, other names
        if device_type != "cuda" or not torch.is_autocast_enabled():
            return None
        return torch.get_autocast_gpu_dtype()


def _takes(query, key, value, attn_mask, is_causal, enable_gqa, any_device=False):
    if attn_mask is None or is_causal or enable_gqa or not isinstance(attn_mask, torch.Tensor):
        return False
    if attn_mask.requires_grad or attn_mask.dim() > 4:
        return False
    tensors = (query, key, value)
    if any(t.dim() != 4 for t in tensors):
        return False
    if not any_device and not (all(t.is_cuda for t in tensors) and attn_mask.is_cuda):
        return False
    dtype = query.dtype
    return dtype in (torch.float16, torch.bfloat16, torch.float32) and key.dtype == dtype and value.dtype == dtype


def _bias(attn_mask, query, key):
    """The mask as the additive bias the memory-efficient kernel reads."""
    if attn_mask.dtype == torch.bool:
        bias = torch.zeros(attn_mask.shape, dtype=query.dtype, device=query.device)
        bias = bias.masked_fill(attn_mask.logical_not(), float("-inf"))
    else:
        bias = attn_mask.to(query.dtype)
    shape = (query.shape[0], query.shape[1], query.shape[2], key.shape[2])
    bias = bias.expand(shape)
    tail = -shape[-1] % _BIAS_ALIGNMENT
    if tail:
        bias = F.pad(bias, (0, tail))[..., :shape[-1]]
    return bias


def masked_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                     enable_gqa=False, _any_device=False):
    """F.scaled_dot_product_attention, through the memory-efficient op where
    `_takes` says Fuse should see it whole."""
    if not _takes(query, key, value, attn_mask, is_causal, enable_gqa, _any_device):
        extra = {"enable_gqa": True} if enable_gqa else {}
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                              is_causal=is_causal, scale=scale, **extra)
    # What autocast would have done to SDPA's operands.
    dtype = _autocast_dtype(query.device.type)
    if dtype is not None:
        query, key, value = (t.to(dtype) for t in (query, key, value))
    log_sumexp = torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value))
    try:
        return torch.ops.aten._scaled_dot_product_efficient_attention(
            query, key, value, _bias(attn_mask, query, key), log_sumexp, dropout_p, is_causal, scale=scale)[0]
    except (RuntimeError, TypeError, ValueError) as error:  # this torch's op refuses them: SDPA, as before
        global _refused
        if not _refused:
            _refused = True
            warnings.warn(f"fuse: attention with a mask stays in SDPA's form ({type(error).__name__}: {error})",
                          stacklevel=2)
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                              is_causal=is_causal, scale=scale)


_refused = False
