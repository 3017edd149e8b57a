"""Constants the exporter writes and the backend's handling of values that
depend on no input, on the CPU: a constant repeated along some dimensions
is written at the size of what it holds and broadcast in the graph (a
causal mask materialised per batch entry must not become B x H x T x T of
text), and the backend computes results that depend on no input in torch
instead of in the Fuse graph."""

import operator

import torch

from conftest import matches_torch, ops_in

from fuse import backend
from fuse.exporter._fx_to_mlir import _REPEAT_CHECK_ELEMENTS, _without_repeats
from fuse.exporter._steps import Step
from fuse.export import export_step


def test_repeats_are_narrowed_and_broadcast_back():
    mask = torch.ones(64, 64, dtype=torch.bool).tril()
    repeated = mask.expand(4, 3, 64, 64).clone()  # materialised, not a view
    compact = _without_repeats(repeated)
    assert compact.shape == (1, 1, 64, 64)
    assert torch.equal(compact.broadcast_to(repeated.shape), repeated)
    view = torch.arange(256.0).reshape(1, 256).expand(32, 256)  # an expanded view: stride 0
    assert _without_repeats(view).shape == (1, 256)
    varied = torch.randn(32, 256)
    assert _without_repeats(varied).shape == (32, 256)
    small = torch.zeros(4, 4)  # under the size worth checking: as it is
    assert small.numel() <= _REPEAT_CHECK_ELEMENTS and _without_repeats(small) is small


class _MaskedScores(torch.nn.Module):
    """Adds a bias that is the same for every batch entry, built in the
    module from a buffer (the exporter folds it to a constant)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("rows", torch.randn(1, 96, 96))

    def forward(self, x):
        bias = self.rows.expand(8, 96, 96).contiguous() * 2.0
        return x + bias


def test_a_repeated_constant_is_written_once_and_broadcast(tmp_path):
    module, x = _MaskedScores(), torch.randn(8, 96, 96)
    step = Step(module, {"x": x})
    text = export_step(step)
    ops = ops_in(text)
    assert ops["fuse.constant"] == 1 and ops["fuse.broadcast_in_dim"] >= 1
    # 96 x 96 f32 values as hex: about 74 KB of text; all 8 copies would be 590 KB.
    assert len(text) < 150_000, len(text)
    matches_torch(step, text, tmp_path)


class _ManualCausalScores(torch.nn.Module):
    """Attention scores masked as minGPT and nanoGPT's eager path mask them:
    each layer slices the same lower-triangular buffer (a boolean constant
    of its own per layer, equal contents)."""

    def __init__(self, layers=3, t=200):
        super().__init__()
        self.layers = layers
        self.register_buffer("bias", torch.tril(torch.ones(t, t)).view(1, 1, t, t))

    def forward(self, x):
        t = x.shape[-1]
        for _ in range(self.layers):
            x = torch.softmax(x.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf")), dim=-1) * 2.0
        return x


def test_a_boolean_mask_each_layer_slices_is_written_once(tmp_path):
    import time
    module, x = _ManualCausalScores(), torch.randn(2, 2, 200, 200)
    step = Step(module, {"x": x})
    started = time.perf_counter()
    text = export_step(step)
    seconds = time.perf_counter() - started
    # One 200 x 200 i1 literal (about 260 KB of text), not one per layer:
    # the mask, -inf and 2.0 are the graph's only constants.
    assert ops_in(text)["fuse.constant"] == 3, ops_in(text)
    assert text.count("dense<[[") == 1
    assert len(text) < 400_000, len(text)
    print(f"exported in {seconds:.2f} s, {len(text)} characters")
    matches_torch(step, text, tmp_path)


def test_boolean_literals_are_nested_as_the_element_by_element_writer_nests_them():
    import numpy as np
    from fuse.exporter import _mlir_text
    generator = np.random.default_rng(0)
    for shape in [(1,), (5,), (2, 3), (2, 3, 4), (4, 1, 2), (1, 1, 65)]:
        array = generator.random(shape) > 0.5
        words = np.where(array.reshape(-1), "true", "false").tolist()
        assert _mlir_text._nested_words(array.shape, words) == _mlir_text._nested(array, "i1"), shape
    assert _mlir_text.dense_attr(np.array([[True, False], [False, True]]), "i1") == \
        "dense<[[true, false], [false, true]]>"


def test_results_that_depend_on_no_input_are_computed_in_torch():
    def f(x):
        mask = torch.ones(4, 4).tril() * 2.0
        return x + 1.0, mask, (x * 3.0).sum()

    traced = torch.fx.symbolic_trace(f)
    output = next(n for n in traced.graph.nodes if n.op == "output")
    free = backend._input_free_nodes(traced)
    input_free = [node in free for node in output.args[0]]
    assert input_free == [False, True, False]
    values, kept = backend._split_input_free(traced, input_free)
    assert torch.equal(values[1], torch.ones(4, 4).tril() * 2.0)
    assert kept == {0: 0, 2: 1}
    x = torch.randn(4, 4)
    # The backend only walks the graph after the split (no Python code regenerated).
    first, total = torch.fx.Interpreter(traced).run(x)
    assert torch.equal(first, x + 1.0) and torch.allclose(total, (x * 3.0).sum())


def test_results_that_are_inputs_as_they_came_are_handed_back_not_computed():
    def f(weight, x, saved):
        return x * weight, weight, saved, x

    traced = torch.fx.symbolic_trace(f)
    # `saved` (input 2) is bound in a slab: it stays a result.
    passed, kept = backend._split_returned_inputs(traced, exclude={2})
    assert passed == {1: 0, 3: 1}
    assert kept == {0: 0, 2: 1}
    weight, x, saved = torch.randn(3), torch.randn(3), torch.randn(3)
    product, same = torch.fx.Interpreter(traced).run(weight, x, saved)
    assert torch.equal(product, x * weight) and same is saved


def test_a_graph_run_eagerly_after_fuse_takes_views_as_reshapes():
    def f(x):
        return torch.ops.aten.view.default(torch.ops.aten.permute.default(x, [0, 2, 1, 3]), [2, 5, 12])

    traced = torch.fx.symbolic_trace(f)
    saved = torch.randn(2, 3, 5, 4)  # contiguous, where the graph was traced on [B, T, H, D] memory
    eager = backend._with_reshapes(traced)
    assert not any(n.target is torch.ops.aten.view.default for n in eager.graph.nodes)
    assert torch.equal(eager(saved), saved.permute(0, 2, 1, 3).reshape(2, 5, 12))
    assert all(n.target is not operator.getitem for n in eager.graph.nodes)


def test_a_constant_attention_mask_is_classified_by_what_it_keeps():
    """The exporter's reading of a constant attention mask: the causal
    pattern becomes the `causal` flag, a mask that keeps everything is
    dropped, anything else (a float bias, a padding pattern) stays a mask.
    Expanded masks (every head sharing one [B, 1, T, T] mask through a zero
    stride) are read once per distinct element and classified the same."""
    from fuse.exporter._aten_nn import _constant_mask_pattern
    t = 16
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    minimum = torch.finfo(torch.float32).min
    additive = torch.zeros(2, 1, t, t).masked_fill(~causal, minimum)
    assert _constant_mask_pattern(causal, t, t) == "causal"
    assert _constant_mask_pattern(causal.expand(2, 12, t, t), t, t) == "causal"
    assert _constant_mask_pattern(additive, t, t) == "causal"
    assert _constant_mask_pattern(additive.expand(2, 12, t, t), t, t) == "causal"
    assert _constant_mask_pattern(torch.ones(1, 1, 1, t, dtype=torch.bool), t, t) == "all"
    assert _constant_mask_pattern(torch.zeros(2, 1, t, t), t, t) == "all"
    bias = additive.clone()
    bias[1, 0, 5, 3] = 0.5  # a learned or relative-position bias: not a keep/drop pattern
    assert _constant_mask_pattern(bias, t, t) is None
    padded = causal.clone()
    padded[:, -2:] = False  # the last two keys padded away
    assert _constant_mask_pattern(padded, t, t) is None
    assert _constant_mask_pattern(causal.t(), t, t) is None  # anti-causal
