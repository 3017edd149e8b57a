"""The joint-graph rewrites made before AOTAutograd's partition
(fuse/dynamo/_joint_rewrites.py), on the CPU: the shape-only operand of
nll_loss_backward stops being a saved value, the gradients stay torch's,
and Fuse's exporter still makes the loss gradient one op."""

import warnings

import pytest
import torch
import torch.nn.functional as F

from fuse.dynamo import _joint_rewrites
from fuse.exporter._tracing import decomposition_table, trace


def hf_style_loss(logits, target):
    # HF's causal-LM loss: the logits upcast, then cross entropy.
    return F.cross_entropy(logits.float(), target)


def upcast_log_probs_loss(logits, target):
    # GPT-2's step under autocast: log-probabilities in bf16, upcast for nll.
    return F.nll_loss(torch.log_softmax(logits, -1).float(), target)


def _joint(loss_fn):
    def joint(logits, target, tangent):
        loss = loss_fn(logits, target)
        (grad,) = torch.autograd.grad(loss, logits, tangent)
        return loss, grad
    return joint


def _example():
    torch.manual_seed(0)
    logits = torch.randn(6, 11, requires_grad=True)
    target = torch.randint(0, 11, (6,))
    target[2] = -100  # an ignored label
    return logits, target, torch.ones(())


def _traced_joint(loss_fn=hf_style_loss, example=None):
    # As AOTAutograd traces it: fake tensors (each node's "val"), the
    # incoming gradient's shape check decomposed away.
    from torch._decomp import decomposition_table as torch_decompositions
    from torch.fx.experimental.proxy_tensor import make_fx
    same_size = torch.ops.aten.is_same_size.default
    table = {**decomposition_table(), same_size: torch_decompositions[same_size]}
    return make_fx(_joint(loss_fn), decomposition_table=table, tracing_mode="fake")(*(example or _example()))


def _nll_backward(gm):
    return next(n for n in gm.graph.nodes if str(n.target) == "aten.nll_loss_backward.default")


def test_the_log_probabilities_nll_reads_for_their_shape_become_a_stand_in():
    gm = _traced_joint()
    before = [t.clone() for t in gm(*_example())]
    log_probs = _nll_backward(gm).args[1]
    counts = _joint_rewrites.prepare_joint(gm)
    assert counts["shape_only_operands"] == 1
    stand_in = _nll_backward(gm).args[1]
    assert str(stand_in.target) == "aten.empty_strided.default"
    assert not any(isinstance(a, torch.fx.Node) for a in stand_in.args)  # made from nothing
    assert list(stand_in.args[0]) == list(log_probs.meta["val"].shape)
    assert _nll_backward(gm) not in log_probs.users  # the forward value no longer reaches it
    after = gm(*_example())
    for want, got in zip(before, after):
        torch.testing.assert_close(got, want)
    # Done once: a second pass finds nothing to change.
    assert _joint_rewrites.prepare_joint(gm)["shape_only_operands"] == 0


def test_a_symbolic_or_unknown_layout_is_left_alone():
    gm = _traced_joint()
    nll = _nll_backward(gm)
    del nll.args[1].meta["val"]
    assert _joint_rewrites.prepare_joint(gm)["shape_only_operands"] == 0
    assert str(_nll_backward(gm).args[1].target) != "aten.empty_strided.default"


def _shape(node):
    meta = node.meta.get("val", node.meta.get("tensor_meta"))
    return tuple(meta.shape) if meta is not None and hasattr(meta, "shape") else None


def test_the_partition_no_longer_saves_the_upcast_log_probabilities(monkeypatch):
    from functorch.compile import aot_function, default_partition
    try:
        from functorch.compile import config
    except ImportError:
        from torch._functorch import config
    if hasattr(config, "use_fake_tensor"):  # torch 1.13: fake tensors, as torch 2 always
        monkeypatch.setattr(config, "use_fake_tensor", True)

    from conftest import keeping_compilers
    graphs, capture = keeping_compilers()

    def rewritten_partition(joint, inputs, **kwargs):
        _joint_rewrites.prepare_joint(joint)
        return default_partition(joint, inputs, **kwargs)

    logits, target, _ = _example()
    logits = logits.detach().to(torch.bfloat16).requires_grad_()
    expected = torch.autograd.grad(upcast_log_probs_loss(logits, target), logits)[0]
    saved = {}
    for name, partition in (("plain", default_partition), ("rewritten", rewritten_partition)):
        leaf = logits.detach().clone().requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss = aot_function(upcast_log_probs_loss, fw_compiler=capture("forward"), bw_compiler=capture("backward"),
                                partition_fn=partition, decompositions=decomposition_table())(leaf, target)
            loss.backward()
        # bf16 gradients: within a rounding of torch's (the rewritten
        # log-softmax reduces in f32 as torch's kernel does, in other steps).
        torch.testing.assert_close(leaf.grad, expected, atol=5e-4, rtol=1.6e-2)
        saved[name] = [n.name for n in graphs["backward"].graph.nodes
                       if n.op == "placeholder" and "tangents" not in n.name and _shape(n) == tuple(logits.shape)]
    # Without the rewrite the backward takes logits-sized values twice: the
    # log-probabilities (log_softmax's output) and their f32 copy, nll's
    # shape operand; with it, once.
    assert len(saved["rewritten"]) == 1, saved
    assert len(saved["plain"]) == 2, saved


def _runs_in_fuse_as_in_torch(gm):
    """Exports the joint graph `gm`, runs it on Fuse's CPU interpreter and
    checks the loss and its gradient against torch's; returns the text."""
    from fuse.dynamo import _graph_rng
    from test_partition import InterpreterGraph, relative_error

    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    text = _graph_rng.export(trace(gm, list(_example())), names, "joint")[0]
    loss, grad = InterpreterGraph(text)([t.detach() for t in _example()])
    logits, target, _ = _example()
    want_loss = hf_style_loss(logits, target)
    want_grad = torch.autograd.grad(want_loss, logits)[0]
    assert relative_error(loss, want_loss.detach()) < 1e-5
    assert relative_error(grad, want_grad) < 1e-5
    return text


def test_the_loss_gradient_stays_one_fused_op_with_the_stand_in():
    gm = _traced_joint()
    _joint_rewrites.prepare_joint(gm)
    text = _runs_in_fuse_as_in_torch(gm)
    if _joint_rewrites._checkpoint_policy() is None:
        # Without tags the log-softmax stays whole, and the loss gradient
        # one op; with them it is the logits less a saved logsumexp (next).
        assert "fuse.cross_entropy_backward" in text


def test_the_log_softmax_the_backward_reads_is_found_through_aliases():
    # AOTAutograd saves log_softmax's result for its backward as an alias.
    gm = _traced_joint()
    log_softmax = next(n for n in gm.graph.nodes if str(n.target) == "aten._log_softmax.default")
    backward = next(n for n in gm.graph.nodes if str(n.target) == "aten._log_softmax_backward_data.default")
    assert _joint_rewrites.log_softmaxes_read_by_backward(gm.graph) == [log_softmax]
    with gm.graph.inserting_after(log_softmax):
        alias = gm.graph.call_function(torch.ops.aten.alias.default, (log_softmax,))
    backward.replace_input_with(log_softmax, alias)
    assert _joint_rewrites.log_softmaxes_read_by_backward(gm.graph) == [log_softmax]
    # A log-softmax only the forward reads (an inference graph) is left alone.
    from torch.fx.experimental.proxy_tensor import make_fx
    logits, target, _ = _example()
    forward_only = make_fx(hf_style_loss, decomposition_table=decomposition_table(),
                           tracing_mode="fake")(logits.detach(), target)
    assert _joint_rewrites.log_softmaxes_read_by_backward(forward_only.graph) == []


class _Policy:
    """torch's CheckpointPolicy where torch has none (before 2.4)."""
    MUST_SAVE, MUST_RECOMPUTE = "must_save", "must_recompute"


def _rewritten_joint(policy):
    gm = _traced_joint()
    count = _joint_rewrites.save_log_sum_exp(gm.graph, policy)
    gm.graph.lint()
    gm.recompile()
    return gm, count


def test_log_softmax_read_by_the_backward_becomes_logits_less_a_saved_logsumexp():
    policy = _joint_rewrites._checkpoint_policy() or _Policy
    before = [t.detach() for t in _traced_joint()(*_example())]
    gm, count = _rewritten_joint(policy)
    assert count == 1
    assert not [n for n in gm.graph.nodes if str(n.target) == "aten._log_softmax.default"]
    saved = [n for n in gm.graph.nodes if n.meta.get("recompute") == policy.MUST_SAVE]
    recomputed = [n for n in gm.graph.nodes if n.meta.get("recompute") == policy.MUST_RECOMPUTE]
    # The logsumexp, one number per row, is what the forward saves.
    assert [str(n.target) for n in saved] == ["aten.add.Tensor"] and _shape(saved[0]) == (6, 1)
    assert [str(n.target) for n in recomputed] == ["aten.sub.Tensor"] and _shape(recomputed[0]) == (6, 11)
    assert all(n.meta.get("ac_graph_id") == 0 for n in saved + recomputed)
    after = gm(*_example())
    for old, new in zip(before, after):
        torch.testing.assert_close(new, old)
    # Torch without tags: nothing rewritten.
    assert _joint_rewrites.save_log_sum_exp(_traced_joint().graph, None) == 0


def test_narrow_logits_are_reduced_in_f32_and_the_log_probabilities_keep_their_type():
    from torch.fx.experimental.proxy_tensor import make_fx
    logits, target, tangent = _example()
    narrow = logits.detach().to(torch.bfloat16).requires_grad_()
    gm = make_fx(_joint(upcast_log_probs_loss), decomposition_table=decomposition_table(),
                 tracing_mode="fake")(narrow, target, tangent)
    want = gm(narrow.detach(), target, tangent)
    assert _joint_rewrites.save_log_sum_exp(gm.graph, _Policy) == 1
    gm.recompile()
    casts = [n for n in gm.graph.nodes if n.meta.get("recompute") == _Policy.MUST_RECOMPUTE
             and str(n.target) == "aten._to_copy.default"]
    assert sorted(str(n.kwargs["dtype"]) for n in casts) == ["torch.bfloat16", "torch.float32"]
    for old, new in zip(want, gm(narrow.detach(), target, tangent)):
        # bf16 results: within a rounding of torch's (which also reduces in f32).
        torch.testing.assert_close(new, old, atol=5e-4, rtol=1.6e-2)


def test_the_rewritten_loss_and_its_gradient_run_in_fuse_as_in_torch():
    gm, _ = _rewritten_joint(_Policy)
    assert "fuse.cross_entropy_backward" not in _runs_in_fuse_as_in_torch(gm)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_the_rewritten_loss_gradient_sums_no_classes(reduction):
    # With the log-probabilities written as logits less a saved logsumexp,
    # log-softmax's backward sums nll's gradient over each row's classes:
    # that sum is the row's scale where its label is kept and 0 where it is
    # ignored, so the exporter writes it per row, and the loss gradient is
    # one elementwise pass over the logits (no reduction over the classes).
    from fuse.dynamo import _graph_rng
    from test_partition import InterpreterGraph, relative_error

    def loss_fn(logits, target):
        return F.cross_entropy(logits.float(), target, reduction=reduction)
    logits, target, _ = _example()
    tangent = torch.rand(6) + 0.5 if reduction == "none" else torch.tensor(0.75)
    example = [logits, target, tangent]
    gm = _traced_joint(loss_fn, example)
    assert _joint_rewrites.save_log_sum_exp(gm.graph, _Policy) == 1
    gm.recompile()
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    text = _graph_rng.export(trace(gm, example), names, "joint")[0]
    class_sums = [line for line in text.splitlines() if "fuse.reduce" in line and "(tensor<6x11xf32>)" in line]
    # The forward's logsumexp (max, sum of exponentials) and the loss's
    # pick of each label; nothing from the backward.
    assert len(class_sums) == 3, class_sums
    assert not any("_log_softmax_backward_data" in line for line in class_sums)
    loss, grad = InterpreterGraph(text)([logits.detach(), target, tangent])
    want_loss = loss_fn(logits, target)
    want_grad = torch.autograd.grad(want_loss, logits, tangent)[0]
    assert relative_error(loss, want_loss.detach()) < 1e-5
    assert relative_error(grad, want_grad) < 1e-5
    assert grad[2].abs().max() == 0  # the ignored label's row


def test_a_cast_between_nll_and_the_log_softmax_backward_still_sums_no_classes():
    # GPT-2's step under autocast: log-probabilities in bf16, upcast for nll,
    # so the backward casts nll's gradient to bf16 before log-softmax's
    # backward. The rows' sums are still known without the classes. (The
    # logits come in f32 and are narrowed inside: the interpreter's inputs
    # travel as numpy arrays, which have no bf16.)
    from fuse.dynamo import _graph_rng
    from test_partition import InterpreterGraph

    def narrowed_loss(logits, target):
        return upcast_log_probs_loss(logits.to(torch.bfloat16), target)
    example = list(_example())
    gm = _traced_joint(narrowed_loss, example)
    assert _joint_rewrites.save_log_sum_exp(gm.graph, _Policy) == 1
    gm.recompile()
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    text = _graph_rng.export(trace(gm, example), names, "joint")[0]
    class_sums = [line for line in text.splitlines() if "fuse.reduce" in line and "x11x" in line.split("->")[0]]
    assert not any("_log_softmax_backward_data" in line for line in class_sums), class_sums
    assert "tensor<6x1xf32> to tensor<6x1xbf16>" in text  # the rows' sums, rounded as the cast rounds
    loss, grad = InterpreterGraph(text)([t.detach() for t in example])
    want_loss, want_grad = gm(*[t.detach() for t in example])
    torch.testing.assert_close(loss, want_loss, atol=1e-5, rtol=1e-5)
    # bf16 gradients (widened): within a rounding of torch's.
    torch.testing.assert_close(grad, want_grad, atol=5e-4, rtol=1.6e-2)
    assert grad[2].abs().max() == 0  # the ignored label's row
