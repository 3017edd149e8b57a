"""The joint-graph rewrites made before AOTAutograd's partition
(fuse/dynamo/_joint_rewrites.py), on the CPU: the shape-only operand of
nll_loss_backward stops being a saved value, the gradients stay torch's,
and Fuse's exporter still makes the loss gradient one op."""

import warnings

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


def _traced_joint():
    # As AOTAutograd traces it: fake tensors (each node's "val"), the
    # incoming gradient's shape check decomposed away.
    from torch._decomp import decomposition_table as torch_decompositions
    from torch.fx.experimental.proxy_tensor import make_fx
    same_size = torch.ops.aten.is_same_size.default
    table = {**decomposition_table(), same_size: torch_decompositions[same_size]}
    return make_fx(_joint(hf_style_loss), decomposition_table=table, tracing_mode="fake")(*_example())


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
        torch.testing.assert_close(leaf.grad, expected)
        saved[name] = [n.name for n in graphs["backward"].graph.nodes
                       if n.op == "placeholder" and "tangents" not in n.name and _shape(n) == tuple(logits.shape)]
    # Without the rewrite the backward takes logits-sized values twice: the
    # log-probabilities (log_softmax's output) and their f32 copy, nll's
    # shape operand; with it, once.
    assert len(saved["rewritten"]) == 1, saved
    assert len(saved["plain"]) == 2, saved


def test_the_loss_gradient_stays_one_fused_op_with_the_stand_in():
    from fuse.dynamo import _graph_rng
    from test_partition import InterpreterGraph, relative_error

    gm = _traced_joint()
    _joint_rewrites.prepare_joint(gm)
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    text = _graph_rng.export(trace(gm, list(_example())), names, "joint")[0]
    assert "fuse.cross_entropy_backward" in text
    loss, grad = InterpreterGraph(text)([t.detach() for t in _example()])
    logits, target, _ = _example()
    want_loss = hf_style_loss(logits, target)
    want_grad = torch.autograd.grad(want_loss, logits)[0]
    assert relative_error(loss, want_loss.detach()) < 1e-5
    assert relative_error(grad, want_grad) < 1e-5


def test_log_softmax_read_by_the_backward_is_tagged_for_recomputation_where_torch_has_tags():
    gm = _traced_joint()
    counts = _joint_rewrites.prepare_joint(gm)
    log_softmax = next(n for n in gm.graph.nodes if str(n.target) == "aten._log_softmax.default")
    policy = _joint_rewrites._checkpoint_policy()
    if policy is None:
        # torch < 2.4 has no recompute tags; the partition saves the output
        # as before.
        print(f"torch {torch.__version__}: no CheckpointPolicy, nothing tagged")
        assert counts["recomputed_log_softmax"] == 0 and "recompute" not in log_softmax.meta
    else:
        assert counts["recomputed_log_softmax"] == 1
        assert log_softmax.meta["recompute"] == policy.MUST_RECOMPUTE


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
