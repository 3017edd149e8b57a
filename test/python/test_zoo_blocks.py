"""Each transformer family's distinctive ops (zoo_blocks.py: RoBERTa,
DistilBERT, T5, Gemma, GPT-NeoX, ViT, Whisper), exported through fuse.export
and checked against PyTorch on the CPU reference interpreter: inference
logits, and a training step's loss and every gradient (f32, the
interpreter's tolerance). An unseen model fails here first when it brings
an op or a pattern the exporter does not take."""

import pytest
import torch

from conftest import matches_torch
from fuse._steps import Step
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
    step = Step(model, inputs, mode="train", loss_fn=loss_fn, targets=(targets,))
    text = export_step(step)
    results = 1 + sum(1 for p in model.parameters() if p.requires_grad)
    assert f"{results} of {results} outputs match" in matches_torch(step, text, tmp_path, "train")
