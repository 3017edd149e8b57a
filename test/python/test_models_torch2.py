"""The built-in HuggingFace models (tiny configs), exported and checked
against PyTorch. Needs torch 2.x and transformers: runs on the GPU machine."""

import pytest

from conftest import matches_torch, ops_in, requires_torch2, requires_transformers
from fuse import models
from fuse.exporter._steps import Step
from fuse.export import AdamW, export_step



@requires_torch2
@requires_transformers
@pytest.mark.parametrize("name", ["gpt2", "bert", "llama"])
@pytest.mark.parametrize("mode", ["train", "infer"])
def test_tiny_model_matches_torch(name, mode, tmp_path):
    spec = models.build(name, "tiny")
    step = Step(spec.module, spec.inputs, mode, spec.loss_fn if mode == "train" else None,
                spec.targets if mode == "train" else None)
    text = export_step(step, index_bounds=spec.index_bounds, name=f"{name}_{mode}")
    ops = ops_in(text)
    assert ops["fuse.scaled_dot_product_attention"] == 2  # one per layer, kept whole
    if mode == "train":
        assert ops["fuse.scaled_dot_product_attention_backward"] == 2
        assert ops["fuse.cross_entropy"] == 1 and ops["fuse.cross_entropy_backward"] == 1
    # Model code lines, not torch internals, locate the ops.
    assert f"modeling_{name}.py" in text
    matches_torch(step, text, tmp_path, f"{name}_{mode}")


@requires_torch2
@requires_transformers
def test_tiny_gpt2_adamw_step_matches_torch(tmp_path):
    spec = models.build("gpt2", "tiny")
    step = Step(spec.module, spec.inputs, "train", spec.loss_fn, spec.targets, AdamW())
    text = export_step(step, index_bounds=spec.index_bounds)
    matches_torch(step, text, tmp_path)
