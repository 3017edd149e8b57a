"""Each transformer family's distinctive ops (zoo_blocks.py: RoBERTa,
DistilBERT, T5, Gemma, GPT-NeoX, ViT, Whisper), exported through fuse.export
and checked against PyTorch on the CPU reference interpreter: inference
logits, and a training step's loss and every gradient (f32, the
interpreter's tolerance). An unseen model fails here first when it brings
an op or a pattern the exporter does not take."""

import pytest
import torch

from conftest import matches_torch, relative_error
from fuse.exporter._steps import Step
from fuse.export import export_step

import zoo_blocks


def _block(name):
    torch.manual_seed(0)
    return zoo_blocks.BLOCKS[name]()


@pytest.mark.parametrize("name", sorted(zoo_blocks.BLOCKS))
def test_inference_matches_torch(name, tmp_path):
    model = _block(name).eval()
    inputs, _, _ = zoo_blocks.batch_for(name)
    step = Step(model, inputs)
    text = export_step(step)
    assert "1 of 1 outputs match" in matches_torch(step, text, tmp_path, "infer")


@pytest.mark.parametrize("name", sorted(zoo_blocks.BLOCKS))
def test_training_step_matches_torch(name, tmp_path):
    model = _block(name).train()
    inputs, targets, loss_fn = zoo_blocks.batch_for(name)
    step = Step(model, inputs, mode="train", loss_fn=loss_fn, targets=() if targets is None else (targets,))
    text = export_step(step)
    results = 1 + sum(1 for p in model.parameters() if p.requires_grad)
    assert f"{results} of {results} outputs match" in matches_torch(step, text, tmp_path, "train")


@pytest.mark.parametrize("name", sorted(zoo_blocks.UNMAPPED))
def test_an_op_without_a_mapping_is_named(name):
    from fuse.export import ExportError
    block, op = zoo_blocks.UNMAPPED[name]
    torch.manual_seed(0)
    inputs, targets, loss_fn = zoo_blocks.batch_for(name)
    step = Step(block().train(), inputs, mode="train", loss_fn=loss_fn, targets=() if targets is None else (targets,))
    with pytest.raises(ExportError, match=op.replace(".", r"\.")):
        export_step(step)


def _export_with_inputs(name, tmp_path):
    """(the step, its graph's path, PyTorch's inputs as .npz, f32 outputs)."""
    from fuse import reference
    model = _block(name).train()
    inputs, targets, loss_fn = zoo_blocks.batch_for(name)
    step = Step(model, inputs, mode="train", loss_fn=loss_fn, targets=() if targets is None else (targets,))
    path = tmp_path / f"{name}.mlir"
    path.write_text(export_step(step))
    # PyTorch's inputs (weights as the modules initialise them): on N(0, 1)
    # weights the f32 step itself is too ill-conditioned for a bf16
    # comparison.
    with torch.backends.mkldnn.flags(enabled=False):
        arrays, _ = reference.save_io(step, str(tmp_path / name))
        expected = step.run_eager()
    return step, path, arrays, expected


class _layer_norm_in_f32:
    """CUDA autocast's policy for layer norm (run in f32, whatever comes in)
    on the CPU, where torch 1.13's autocast passes a bf16 input through and
    layer_norm then refuses its f32 weight."""

    def __enter__(self):
        import torch.nn.functional as F
        self.original = F.layer_norm
        F.layer_norm = lambda x, *args, **kwargs: self.original(x.float(), *args, **kwargs)

    def __exit__(self, *exc):
        import torch.nn.functional as F
        F.layer_norm = self.original


def _plan(path, pipeline):
    from conftest import BIN, _run
    plan = _run([BIN / "fuse-translate", path, f"--pipeline={pipeline}", "--emit-plan"])
    assert plan.returncode == 0 and " launch fuse_" in plan.stdout, plan.stderr[-3000:]


@pytest.mark.parametrize("name", sorted(zoo_blocks.BLOCKS))
def test_f32_pipeline_keeps_the_training_steps_numbers_and_compiles(name, tmp_path):
    """The whole pipeline (fusion, rematerialization, memory planning) at
    f32 keeps every result within the f32 tolerance on the interpreter, and
    the CUDA code generator takes every fusion it forms."""
    from conftest import BIN, _run
    _, path, arrays, _ = _export_with_inputs(name, tmp_path)
    check = _run([BIN / "fuse-run", path, "--inputs", arrays, "--check-pipeline=fuse-pipeline{amp=none}"])
    assert check.returncode == 0 and "check-pipeline: PASS" in check.stdout, check.stdout[-3000:] + check.stderr
    _plan(path, "fuse-pipeline{amp=none}")


# On torch 2, F.normalize reaches the exporter as linalg_vector_norm (kept
# whole), and CLIP's logit-scale gradient lands at 3x autocast's error
# (1.4e-2 against 4.6e-3 on torch 2.11; within 2x on torch 1.13, whose
# normalize is aten.norm): open, under the model-zoo issue.
_BF16_OPEN = {"clip": pytest.mark.xfail(torch.__version__ >= "2", strict=False,
                                        reason="CLIP's logit-scale gradient at 3x autocast's error on torch 2")}


@pytest.mark.parametrize("name", [pytest.param(n, marks=_BF16_OPEN.get(n, ())) for n in sorted(zoo_blocks.BLOCKS)])
def test_bf16_pipeline_is_within_twice_autocast_error(name, tmp_path):
    """bf16 mixed precision (the default pipeline) on the interpreter: the
    loss and each gradient within twice eager bf16 autocast's error against
    f32, and a launch plan for the GPU. The floor is bf16's unit roundoff,
    2^-8: a loss over these blocks' 12-24 tokens carries the rounding of its
    few logits, and which of two bf16 computations lands closer to f32 is
    then a coin toss (over seeds 0-2 Fuse's BLOOM loss error is 6e-4, 3e-4,
    5e-5 where autocast's is 1.4e-4, 1.1e-3, 7.5e-5)."""
    import numpy as np
    from conftest import BIN, _run
    step, path, arrays, expected = _export_with_inputs(name, tmp_path)
    with torch.backends.mkldnn.flags(enabled=False), torch.autocast("cpu", dtype=torch.bfloat16), \
            _layer_norm_in_f32():
        autocast = step.run_eager()
    planned = tmp_path / "planned.mlir"
    opt = _run([BIN / "fuse-opt", path, "--pass-pipeline=builtin.module(fuse-pipeline{amp=bf16})", "-o", planned])
    assert opt.returncode == 0, opt.stderr[-3000:]
    dumped = tmp_path / "bf16.npz"
    run = _run([BIN / "fuse-run", planned, "--inputs", arrays, "--dump-outputs", dumped])
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    fuse = np.load(dumped)
    for key, f32 in expected.items():
        reference = f32.detach().double()
        norm = float(reference.norm()) or 1.0
        ours = float((torch.from_numpy(fuse[key].astype(np.float64)) - reference).norm()) / norm
        theirs = float((autocast[key].detach().double() - reference).norm()) / norm
        assert ours <= 2 * max(theirs, 2.0 ** -8), f"{name} {key}: {ours:.2e} against autocast's {theirs:.2e}"
    _plan(path, "fuse-pipeline{amp=bf16}")


def test_stochastic_depth_draws_fuse_random_bits(tmp_path):
    """ConvNeXt's drop path in training: torch.rand per sample becomes a
    fuse.random op (the graph then takes rng.seed and rng.offset)."""
    from conftest import ops_in
    torch.manual_seed(0)
    model = zoo_blocks.ConvNeXtBlock(drop_path=True).train()
    inputs, targets, loss_fn = zoo_blocks.batch_for("convnext")
    text = export_step(Step(model, inputs, mode="train", loss_fn=loss_fn, targets=(targets,)))
    assert ops_in(text)["fuse.random"] == 1 and '"rng.seed"' in text


def test_a_transformer_encoder_trains_and_its_fast_path_says_why_it_cannot_trace(tmp_path):
    """nn.TransformerEncoder (what a user writes without HuggingFace):
    training exports and matches PyTorch; inference with a padding mask on
    torch 1.13 takes the nested-tensor fast path, which cannot be traced,
    and the error says so and what to do (torch 2.x: Fuse turns the fast
    path off while tracing)."""
    from fuse.export import ExportError

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(zoo_blocks.VOCAB, zoo_blocks.D)
            layer = torch.nn.TransformerEncoderLayer(zoo_blocks.D, zoo_blocks.HEADS, 2 * zoo_blocks.D,
                                                     dropout=0.0, batch_first=True)
            self.encoder = torch.nn.TransformerEncoder(layer, 2)
            self.head = torch.nn.Linear(zoo_blocks.D, zoo_blocks.VOCAB)

        def forward(self, ids):
            return self.head(self.encoder(self.embed(ids), src_key_padding_mask=ids.eq(zoo_blocks.PAD)))

    torch.manual_seed(0)
    ids, _ = zoo_blocks.token_batch()
    model = Encoder()
    train = Step(model.train(), (ids,), mode="train", loss_fn=lambda y: y.square().mean())
    results = 1 + len(list(model.parameters()))
    assert f"{results} of {results} outputs match" in matches_torch(train, export_step(train), tmp_path, "train")
    infer = Step(model.eval(), (ids,))
    mha = getattr(torch.backends, "mha", None)
    if hasattr(mha, "set_fastpath_enabled"):
        # Against PyTorch's own slow path, which the export traces: the fast
        # path packs the batch into a nested tensor and writes zeros at the
        # padded positions, where the slow path computes (unused) values.
        text = export_step(infer)
        enabled = mha.get_fastpath_enabled()
        mha.set_fastpath_enabled(False)
        try:
            assert "1 of 1 outputs match" in matches_torch(infer, text, tmp_path, "infer")
        finally:
            mha.set_fastpath_enabled(enabled)
        with torch.no_grad():
            fast = model(ids)
        kept = ~ids.eq(zoo_blocks.PAD)
        with torch.no_grad():
            mha.set_fastpath_enabled(False)
            try:
                slow = model(ids)
            finally:
                mha.set_fastpath_enabled(enabled)
        assert relative_error(slow[kept], fast[kept]) < 1e-4  # where the tokens are, the two paths agree
    else:
        with pytest.raises(ExportError, match="nn.TransformerEncoder's inference fast path"):
            export_step(infer)
