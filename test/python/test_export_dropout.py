"""Dropout as AOTAutograd hands it to the torch.compile backend, on the CPU:
`aten.native_dropout` (a node with two results; its mask a result of the
forward, read by the backward's `native_dropout_backward`), its torch 2
decomposition (`rand_like(x) > p`, a select, a scale) and torch 1.13's CPU
form (`bernoulli_` on an empty tensor) export to `fuse.random` drawing from
`rng.seed`/`rng.offset`, and the backend's GraphRandomness feeds those
(python/fuse/_graph_rng.py). Graphs are compiled by Fuse for sm_90a and run
on the CPU reference interpreter (test_partition.InterpreterGraph); the
torch.compile path on the GPU is test_dropout_gpu.py.

The bits are Fuse's Philox, not torch's, so results are checked against
eager PyTorch computed with Fuse's own mask (1e-5 relative), and the mask
against its distribution: the kept fraction within 6 standard deviations
of 1 - p."""

import math
import warnings

import pytest
import torch

from fuse import _graph_rng
from fuse._tracing import decomposition_table, trace
from fuse._values import ExportError
from test_partition import InterpreterGraph, relative_error


def _export(gm, kind="inference"):
    names = [str(n.target) for n in gm.graph.nodes if n.op == "placeholder"]
    text, counters = _graph_rng.export(gm, names, "graph", kind)
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
    graphs = {}

    def capture(kind):
        def compile(gm, example_inputs):
            graphs[kind] = gm
            return gm
        return compile

    def step(x, w):
        return (native(x, w)[0] * 2.0).sum()

    x, w = torch.randn(32, 16), (torch.randn(16, 64) / 4).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        aot_function(step, fw_compiler=capture("forward"), bw_compiler=capture("backward"),
                     decompositions=decomposition_table())(x, w).backward()
    forward, forward_text, forward_counters = _export(graphs["forward"], "forward")
    backward, backward_text, backward_counters = _export(graphs["backward"], "backward")
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


def test_attention_dropout_in_a_training_graph_is_refused():
    line = ("%out, %lse = fuse.scaled_dot_product_attention %q, %k, %v rng(%s, %o) scale = 1.250000e-01 "
            "dropout_p = 1.000000e-01 : (tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)")
    assert _graph_rng._ATTENTION_DROPOUT.search(line)
    assert not _graph_rng._ATTENTION_DROPOUT.search(line.replace(" dropout_p = 1.000000e-01", ""))

    class Refusing:
        def __init__(self, *args):
            pass

        def run(self):
            class Builder:
                def render(self):
                    return line

            return Builder()

    original = _graph_rng.Converter
    _graph_rng.Converter = Refusing
    try:
        Refusing._rng_counter = 17
        assert _graph_rng.export(None, [], "g", "inference")[1] == 17
        with pytest.raises(ExportError, match="attention dropout in the forward_part1 graph"):
            _graph_rng.export(None, [], "g", "forward_part1")
    finally:
        _graph_rng.Converter = original
