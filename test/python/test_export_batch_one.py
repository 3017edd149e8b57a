"""A training step at batch size 1: its bias gradients reduce over a batch
dimension of size 1, which the pipeline must turn into a reshape (no kernel
template takes a reduction of one element inside a fusion); the step then
compiles and matches PyTorch on the interpreter."""

import torch

from conftest import BIN, _run, matches_torch
from fuse.exporter._steps import Step
from fuse.export import export_step


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.position = torch.nn.Parameter(torch.randn(1, 16, 32) / 4)
        self.up, self.down = torch.nn.Linear(32, 64), torch.nn.Linear(64, 32)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x + self.position)))


def test_a_batch_one_training_step_compiles_and_matches_torch(tmp_path):
    torch.manual_seed(0)
    model = TwoLayers().train()
    step = Step(model, (torch.randn(1, 16, 32),), mode="train", loss_fn=lambda y: y.square().mean())
    text = export_step(step)
    results = 1 + len(list(model.parameters()))
    assert f"{results} of {results} outputs match" in matches_torch(step, text, tmp_path, "batch_one")
    path = tmp_path / "batch_one.mlir"
    path.write_text(text)
    for pipeline in ("fuse-pipeline", "fuse-pipeline{amp=none}"):
        plan = _run([BIN / "fuse-translate", path, f"--pipeline={pipeline}", "--emit-plan"])
        assert plan.returncode == 0 and " launch fuse_" in plan.stdout, plan.stderr[-3000:]

