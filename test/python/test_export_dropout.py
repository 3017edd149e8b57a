"""Dropout as AOTAutograd hands it to the torch.compile backend, on the CPU:
`aten.native_dropout` (a node with two results; its mask a result of the
forward, read by the backward's `native_dropout_backward`), its torch 2
decomposition (`rand_like(x) > p`, a select, a scale) and torch 1.13's CPU
form (`bernoulli_` on an empty tensor) export to `fuse.random` drawing from
`rng.seed`/`rng.offset`, and the backend's GraphRandomness feeds those
(python/fuse/dynamo/_graph_rng.py). Graphs are compiled by Fuse for sm_90a and run
on the CPU reference interpreter (test_partition.InterpreterGraph); the
torch.compile path on the GPU is test_dropout_gpu.py.

The bits are Fuse's Philox, not torch's, so results are checked against
eager PyTorch computed with Fuse's own mask (1e-5 relative), and the mask
against its distribution: the kept fraction within 6 standard deviations
of 1 - p."""

import math
import operator
import warnings

import pytest
import torch

from fuse.dynamo import _graph_rng
from fuse.exporter._tracing import decomposition_table, trace
from fuse.exporter._values import ExportError
from test_partition import InterpreterGraph, relative_error


def _export(gm):
    names = [str(n.target) for n in gm.graph.nodes if n.op == "placeholder"]
    text, counters = _graph_rng.export(gm, names, "graph")
    return InterpreterGraph(text), text, counters


def _run(graph, tensors, seed, offset):
    """The graph on the interpreter with this seed and offset."""
    names = [s.name for s in graph.inputs]
    full = list(tensors)
    for name, value in sorted(((n, v) for n, v in zip(_graph_rng.RNG_INPUTS, (seed, offset))),
                              key=lambda pair: names.index(pair[0])):
        full.insert(names.index(name), torch.tensor(value, dtype=torch.int64))
    return graph(full)


def _kept_fraction_ok(mask, p):
    fraction = mask.float().mean().item()
    return abs(fraction - (1 - p)) <= 6 * math.sqrt(p * (1 - p) / mask.numel()), fraction


def native(x, w):
    return torch.ops.aten.native_dropout(x @ w, 0.1, True)


def test_native_dropout_draws_a_mask_and_scales_the_kept_units():
    """The node has two results: the handler must not read the node's type
    as one tensor (AttributeError: 'tuple' object has no attribute 'shape'
    on torch 2.11's AOTAutograd graphs)."""
    x, w = torch.randn(256, 64), torch.randn(64, 128) / 8
    graph, text, counters = _export(trace(native, [x, w]))
    assert "fuse.random bernoulli" in text and counters == 256 * 128 // 4 + 1
    assert [s.name for s in graph.inputs][-2:] == list(_graph_rng.RNG_INPUTS)
    out, mask = _run(graph, [x, w], seed=7, offset=0)
    assert mask.dtype == torch.bool
    ok, fraction = _kept_fraction_ok(mask, 0.1)
    assert ok, fraction
    expected = torch.where(mask, (x @ w) / 0.9, torch.zeros(()))
    assert relative_error(out, expected) <= 1e-5
    again, _ = _run(graph, [x, w], seed=7, offset=0)
    assert torch.equal(again, out), "the same seed and offset must give the same bits"
    other_seed = _run(graph, [x, w], seed=8, offset=0)[1]
    other_offset = _run(graph, [x, w], seed=7, offset=counters)[1]
    assert not torch.equal(other_seed, mask) and not torch.equal(other_offset, mask)


def decomposed(x):
    """torch 2's decomposition of native_dropout (torch/_decomp)."""
    keep = torch.rand_like(x) > 0.25
    return keep * x * (1.0 / 0.75), keep


def cpu_dropout(x):
    """What F.dropout traces to on torch 1.13's CPU: bernoulli_ on an empty
    tensor, a division and a product."""
    return torch.nn.functional.dropout(x * 1.0, 0.25, True)


@pytest.mark.parametrize("fn", [decomposed, cpu_dropout])
def test_the_other_forms_of_dropout_export_too(fn):
    x = torch.rand(128, 128) + 0.5  # no zeros, so the mask shows in the result
    graph, text, counters = _export(trace(fn, [x]))
    assert "fuse.random" in text and counters > 0
    results = _run(graph, [x], seed=3, offset=0)
    out = results[0]
    kept = out != 0
    ok, fraction = _kept_fraction_ok(kept, 0.25)
    assert ok, fraction
    assert relative_error(out[kept], x[kept] / 0.75) <= 1e-5
    if fn is decomposed:
        assert torch.equal(results[1], kept)


def test_aot_autograd_backward_reuses_the_forwards_mask():
    """AOTAutograd's forward returns the mask; the backward's
    native_dropout_backward reads it and draws nothing."""
    from functorch.compile import aot_function
    from conftest import keeping_compilers
    graphs, capture = keeping_compilers()

    def step(x, w):
        return (native(x, w)[0] * 2.0).sum()

    x, w = torch.randn(32, 16), (torch.randn(16, 64) / 4).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        aot_function(step, fw_compiler=capture("forward"), bw_compiler=capture("backward"),
                     decompositions=decomposition_table())(x, w).backward()
    forward, forward_text, forward_counters = _export(graphs["forward"])
    backward, backward_text, backward_counters = _export(graphs["backward"])
    assert forward_counters > 0 and backward_counters == 0 and "fuse.random" not in backward_text
    saved = _run(forward, [x, w.detach()], seed=11, offset=4)
    masks = [t for t in saved if t.dtype == torch.bool]
    assert len(masks) == 1
    mask = masks[0]
    assert _kept_fraction_ok(mask, 0.1)[0]
    # The backward graph takes what the forward saved and the loss's tangent.
    placeholders = [n for n in graphs["backward"].graph.nodes if n.op == "placeholder"]
    forward_outputs = list(next(n for n in graphs["forward"].graph.nodes if n.op == "output").args[0])
    by_name = {node.name: value for node, value in zip(forward_outputs, saved) if isinstance(node, torch.fx.Node)}
    inputs = [by_name[p.name] if p.name in by_name else None for p in placeholders]
    tangent = [i for i, value in enumerate(inputs) if value is None]
    for i in tangent:
        inputs[i] = torch.ones(())
    (grad_w,) = [g for g in backward(inputs) if g.shape == w.shape]
    # Eager with Fuse's mask: d/dw sum(2 * (x @ w) * mask / 0.9) = x^T (2 * mask / 0.9).
    expected = x.t() @ (2.0 * mask.float() / 0.9)
    assert relative_error(grad_w, expected) <= 1e-5


def test_graph_randomness_feeds_fresh_reproducible_values():
    randomness = _graph_rng.GraphRandomness([1, 3], counters=100)
    a, b = torch.zeros(2), torch.ones(2)
    torch.manual_seed(5)
    first = randomness.inputs([a, b], torch.device("cpu"))
    assert first[0] is a and first[2] is b and first[1].dtype == torch.int64 and first[1].dim() == 0
    seed_buffer, offset_buffer = first[1], first[3]
    seeds = [int(seed_buffer)]
    for _ in range(3):
        again = randomness.inputs([a, b], torch.device("cpu"))
        assert again[1] is seed_buffer and again[3] is offset_buffer  # the same buffers: fixed addresses
        seeds.append(int(seed_buffer))
    assert len(set(seeds)) == 4, seeds
    torch.manual_seed(5)
    randomness.inputs([a, b], torch.device("cpu"))
    assert int(seed_buffer) == seeds[0] and randomness.last == (seeds[0], 0)


def test_graphs_without_rng_inputs_bind_nothing():
    class Compiled:
        input_names = ["x", "w"]

    assert _graph_rng.bind(Compiled(), 0) is None
    Compiled.input_names = ["x", "rng.seed", "rng.offset"]
    assert _graph_rng.bind(Compiled(), 10).positions == [1, 2]


def _cuda_op(name):
    """A stand-in FX target named as CUDA's ATen op (torch 1.13 has none of
    them; the exporter dispatches on the name)."""
    def op(*args, **kwargs):
        raise RuntimeError("a stand-in: never run")
    op.__module__, op.__name__ = "aten", f"{name}.default"
    return op


_B, _H, _T = 1, 2, 16


def _attention_graphs(split):
    """CUDA's memory-efficient attention with dropout 0.5 and its backward,
    as AOTAutograd writes them: in one graph (`split` False: out, dv), or
    as a forward returning (out, lse, seed, offset) and a backward taking
    them with the incoming gradient (returning dv)."""
    forward_op = _cuda_op("_scaled_dot_product_efficient_attention")
    backward_op = _cuda_op("_scaled_dot_product_efficient_attention_backward")
    f32 = lambda *shape: torch.empty(shape)
    state = lambda: torch.empty((), dtype=torch.int64)

    def placeholder(graph, name, value):
        node = graph.placeholder(name)
        node.meta["val"] = value
        return node

    def getitems(graph, node, values):
        items = []
        for i, value in enumerate(values):
            item = graph.call_function(operator.getitem, (node, i))
            item.meta["val"] = value
            items.append(item)
        return items

    qkv = f32(_B, _H, _T, _T)
    forward = torch.fx.Graph()
    q, k, v = (placeholder(forward, n, qkv) for n in ("q", "k", "v"))
    results = (qkv, f32(_B, _H, _T), state(), state())
    attention = forward.call_function(forward_op, (q, k, v, None, True, 0.5, False))
    attention.meta["val"] = results
    out, lse, seed, offset = getitems(forward, attention, results)
    if split:
        forward.output((out, lse, seed, offset))
        backward = torch.fx.Graph()
        grad = placeholder(backward, "grad", qkv)
        q, k, v, out = (placeholder(backward, n, qkv) for n in ("q", "k", "v", "out"))
        lse = placeholder(backward, "lse", results[1])
        seed, offset = placeholder(backward, "seed", state()), placeholder(backward, "offset", state())
    else:
        backward, grad = forward, placeholder(forward, "grad", qkv)
    gradients = backward.call_function(backward_op, (grad, q, k, v, None, out, lse, seed, offset, 0.5,
                                                     [True, True, True, False], False))
    gradients.meta["val"] = (qkv, qkv, qkv, None)
    dv = getitems(backward, gradients, (qkv, qkv, qkv))[2]
    backward.output((out, dv) if not split else (dv,))
    module = lambda graph: torch.fx.GraphModule(torch.nn.Module(), graph)
    return (module(forward), module(backward)) if split else module(forward)


def _dropped_probabilities_transposed_times(out, grad):
    """With V the identity, the output is the dropped, rescaled attention
    probabilities themselves; the gradient of V is then out^T @ grad."""
    return out.transpose(-1, -2) @ grad


def test_attention_dropout_backward_draws_its_forwards_mask_again_in_one_graph():
    """compile_step's case: forward and backward in one graph; the backward's
    attention reuses the forward's (seed, offset) operands."""
    text_graph, text, counters = _export(_attention_graphs(split=False))
    attention = [l for l in text.splitlines() if "fuse.scaled_dot_product_attention" in l]
    rng = [l[l.index("rng("):].split(")")[0] for l in attention]
    assert len(attention) == 2 and rng[0] == rng[1], attention
    q, k = torch.randn(2, _B, _H, _T, _T)
    eye = torch.eye(_T).expand(_B, _H, _T, _T).contiguous()
    grad = torch.randn(_B, _H, _T, _T)
    names = [s.name for s in text_graph.inputs]
    values = {"q": q, "k": k, "v": eye, "grad": grad}
    out, dv = _run(text_graph, [values[n] for n in names if n in values], 3, 17)
    assert (out == 0).float().mean().item() > 0.3  # units dropped (p = 0.5)
    assert relative_error(dv, _dropped_probabilities_transposed_times(out, grad)) < 1e-5


def test_attention_dropout_backward_takes_the_forwards_random_state_across_graphs():
    """The torch.compile backend's case: the forward returns the Philox seed
    and offset as the attention op's RNG-state results; the backward graph
    takes them and draws the same mask."""
    forward_gm, backward_gm = _attention_graphs(split=True)
    forward, _, counters = _export(forward_gm)
    backward, backward_text, backward_counters = _export(backward_gm)
    assert counters > 0 and backward_counters == 0  # the backward draws nothing of its own
    assert [s.name for s in backward.inputs][-2:] == ["seed", "offset"]
    q, k = torch.randn(2, _B, _H, _T, _T)
    eye = torch.eye(_T).expand(_B, _H, _T, _T).contiguous()
    out, lse, seed, offset = _run(forward, [q, k, eye], 5, 40)
    assert seed.item() == 5 and offset.item() == 40
    grad = torch.randn(_B, _H, _T, _T)
    (dv,) = backward([grad, q, k, eye, out, lse, seed, offset])
    assert relative_error(dv, _dropped_probabilities_transposed_times(out, grad)) < 1e-5
    # Another forward call's state draws another mask.
    other, *_ = _run(forward, [q, k, eye], 5, 40 + counters)
    assert not torch.equal(other, out)


def test_attention_dropout_backward_without_its_forwards_state_is_refused():
    forward_gm, backward_gm = _attention_graphs(split=True)
    for node in backward_gm.graph.nodes:
        if node.op == "call_function" and "backward" in getattr(node.target, "__name__", ""):
            node.args = node.args[:7] + (None, None) + node.args[9:]
    backward_gm.recompile()
    with pytest.raises(ExportError, match="without the random state of its forward"):
        _export(backward_gm)
