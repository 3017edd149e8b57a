"""Rewrites of AOTAutograd's joint forward + backward graph, made before its
minimum-cut partition decides what the forward saves for the backward.

The partition saves every forward value a backward node reads, priced by
its bytes, and recomputes only what its allow-list calls cheap. Two things
it cannot see cost a language model's step gigabytes:

- An operand read for its shape alone. `nll_loss_backward(grad, self,
  target, ...)` reads `self` (the log-probabilities) only for its shape:
  HF's loss upcasts the logits, so GPT-2's forward saved an f32 copy of
  its log-probabilities, 1.65 GB at B8 T1024, that the backward never
  read. Such an operand is replaced by an uninitialised tensor of the same
  shape made in the backward (`empty_strided`, which the exporter keeps as
  a lazy constant that costs nothing while no op reads its values).
- A log-softmax whose output the backward reads. The partition bans
  recomputing it (not on its allow-list), so the forward saves the
  log-probabilities, in f32 where the loss upcast the logits, rather than
  the bf16 logits they come from. It is written out as x - logsumexp(x):
  the logsumexp (one number per row) tagged to be saved, the subtraction
  to be recomputed (the tags activation checkpointing uses). The forward
  then saves the logits and the per-row logsumexp, and the backward's loss
  gradient, exp(x - lse) * sum(grad) subtracted from grad, reduces nothing
  over the logits: one pass that reads them, where recomputing the whole
  log-softmax there (this rewrite's first form) read them for the
  reductions again (0.9 ms of GPT-2's step on an H200).
"""

import torch

__all__ = ["prepare_joint", "SHAPE_ONLY_OPERANDS"]

# ATen ops and the positions of operands they read only for shape, dtype
# and device.
SHAPE_ONLY_OPERANDS = {
    "aten.nll_loss_backward.default": (1,),
    "aten.nll_loss2d_backward.default": (1,),
}

_LOG_SOFTMAX = {"aten._log_softmax.default"}
_LOG_SOFTMAX_BACKWARD = {"aten._log_softmax_backward_data.default"}


def prepare_joint(joint):
    """Rewrites `joint` (an fx.GraphModule) in place; returns how many
    operands were detached and how many log-softmaxes tagged."""
    graph = joint.graph
    detached = _detach_shape_only_operands(graph)
    tagged = save_log_sum_exp(graph, _checkpoint_policy())
    if detached or tagged:
        graph.lint()
        joint.recompile()
    return {"shape_only_operands": detached, "log_softmax_from_saved_logsumexp": tagged}


def _static_layout(value):
    """(shape, stride) as ints, or None for a symbolic or unknown layout."""
    if not isinstance(value, torch.Tensor):
        return None
    shape, stride = tuple(value.shape), tuple(value.stride())
    if not all(type(d) is int for d in shape + stride):
        return None
    return list(shape), list(stride)


def _detach_shape_only_operands(graph):
    count = 0
    for node in list(graph.nodes):
        positions = SHAPE_ONLY_OPERANDS.get(str(node.target)) if node.op == "call_function" else None
        for position in positions or ():
            operand = node.args[position] if position < len(node.args) else None
            if not isinstance(operand, torch.fx.Node) or str(operand.target) == "aten.empty_strided.default":
                continue
            value = operand.meta.get("val")
            layout = _static_layout(value)
            if layout is None:
                continue
            with graph.inserting_before(node):
                stand_in = graph.call_function(torch.ops.aten.empty_strided.default, tuple(layout),
                                               {"dtype": value.dtype, "device": value.device})
            stand_in.meta["val"] = value.new_empty_strided(*layout)
            if "tensor_meta" in operand.meta:
                stand_in.meta["tensor_meta"] = operand.meta["tensor_meta"]
            args = list(node.args)
            args[position] = stand_in
            node.args = tuple(args)
            count += 1
    return count


def _checkpoint_policy():
    try:
        from torch.utils.checkpoint import CheckpointPolicy
    except ImportError:  # torch < 2.4: no tags the partition reads
        return None
    return CheckpointPolicy


# Ops through which the backward reads a forward value unchanged (AOTAutograd
# saves log_softmax's result as an alias of it).
_SAME_VALUE = {"aten.alias.default", "aten.detach.default"}


def log_softmaxes_read_by_backward(graph):
    """The `_log_softmax` nodes whose result a `_log_softmax_backward_data`
    reads as its output operand, directly or through aliases."""
    found = []
    for node in graph.nodes:
        if node.op != "call_function" or str(node.target) not in _LOG_SOFTMAX_BACKWARD or len(node.args) < 2:
            continue
        source = node.args[1]
        while (isinstance(source, torch.fx.Node) and source.op == "call_function"
               and str(source.target) in _SAME_VALUE and source.args):
            source = source.args[0]
        if (isinstance(source, torch.fx.Node) and source.op == "call_function"
                and str(source.target) in _LOG_SOFTMAX and source not in found):
            found.append(source)
    return found


def save_log_sum_exp(graph, policy):
    """Writes each log-softmax the backward reads as x - logsumexp(x), the
    logsumexp tagged MUST_SAVE and the subtraction MUST_RECOMPUTE under
    `policy` (torch's CheckpointPolicy; None, before torch 2.4: nothing is
    rewritten). A log-softmax the user's checkpointing tagged is left
    alone. Returns how many were rewritten."""
    if policy is None:
        return 0
    aten = torch.ops.aten
    count = 0
    for node in log_softmaxes_read_by_backward(graph):
        if "recompute" in node.meta:  # the user's own checkpointing decides
            continue
        x, dim, half_to_float = node.args[:3]
        made = []

        def emit(op, *args):
            new = graph.call_function(op, args)
            values = [a.meta.get("val") if isinstance(a, torch.fx.Node) else a for a in args]
            if all(v is not None for v in values):
                new.meta["val"] = op(*values)
            made.append(new)
            return new

        def cast(value, dtype):
            new = graph.call_function(aten._to_copy.default, (value,), {"dtype": dtype})
            if "val" in value.meta:
                new.meta["val"] = value.meta["val"].to(dtype)
            made.append(new)
            return new

        narrow = getattr(x.meta.get("val"), "dtype", None) in (torch.bfloat16, torch.float16)
        with graph.inserting_before(node):
            # Reduced in f32, as torch's kernel accumulates a narrow input.
            source = cast(x, torch.float32) if narrow else x
            peak = emit(aten.amax.default, source, [dim], True)
            total = emit(aten.sum.dim_IntList, emit(aten.exp.default, emit(aten.sub.Tensor, source, peak)),
                         [dim], True)
            log_sum_exp = emit(aten.add.Tensor, emit(aten.log.default, total), peak)
            difference = result = emit(aten.sub.Tensor, source, log_sum_exp)
            if narrow and not half_to_float:  # the log-probabilities in the input's type
                result = cast(difference, x.meta["val"].dtype)
        for new in made:
            for key in ("stack_trace", "nn_module_stack", "source_fn_stack"):
                if key in node.meta:
                    new.meta[key] = node.meta[key]
        log_sum_exp.meta["recompute"] = policy.MUST_SAVE
        # The backward recomputes the log-probabilities from the logits and
        # the saved logsumexp: the subtraction and the casts around it.
        recomputed = {source, difference, result} - {x}
        for tagged in recomputed:
            tagged.meta["recompute"] = policy.MUST_RECOMPUTE
        for tagged in recomputed | {log_sum_exp}:
            # What checkpointed regions carry; the partition compares it
            # between a tagged node and its tagged users.
            tagged.meta.setdefault("ac_graph_id", 0)
        node.replace_all_uses_with(result)
        graph.erase_node(node)
        count += 1
    return count
