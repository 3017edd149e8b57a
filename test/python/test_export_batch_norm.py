"""Batch norm (Conformer-style speech models, convolutional stems) exported
and checked against PyTorch on the CPU reference interpreter: inference with
the running statistics, training with the batch's (track_running_stats=False),
and the running-statistics update that a fuse graph cannot express refused
with a message instead of silently dropped."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import matches_torch, ops_in
from fuse.exporter._steps import Step
from fuse.export import ExportError, export_step


class ConvBlock(nn.Module):
    def __init__(self, norm):
        super().__init__()
        # No bias before a batch norm (its gradient is zero: the norm
        # removes any per-channel shift), as models write it.
        self.conv = nn.Conv1d(4, 8, 3, padding=1, bias=False)
        self.norm = norm
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(F.relu(self.norm(self.conv(x))).mean(-1))


def _with_statistics(norm):
    with torch.no_grad():  # running statistics that are not the defaults
        norm.running_mean.uniform_(-0.5, 0.5)
        norm.running_var.uniform_(0.5, 2.0)
    return norm


def test_inference_uses_the_running_statistics(tmp_path):
    torch.manual_seed(0)
    model = ConvBlock(_with_statistics(nn.BatchNorm1d(8))).eval()
    step = Step(model, (torch.randn(2, 4, 10),))
    assert "1 of 1 outputs match" in matches_torch(step, export_step(step), tmp_path, "infer")


@pytest.mark.parametrize("norm", [lambda: nn.BatchNorm1d(8, track_running_stats=False),
                                  lambda: nn.BatchNorm1d(8, affine=False, track_running_stats=False)],
                         ids=["affine", "no-affine"])
def test_training_with_batch_statistics(norm, tmp_path):
    torch.manual_seed(0)
    model = ConvBlock(norm()).train()
    step = Step(model, (torch.randn(3, 4, 10),), mode="train", loss_fn=F.cross_entropy,
                targets=(torch.randint(0, 3, (3,)),))
    text = export_step(step)
    results = 1 + len(list(model.parameters()))
    assert f"{results} of {results} outputs match" in matches_torch(step, text, tmp_path, "train")
    assert ops_in(text)["fuse.rsqrt"] >= 1
    # Through the whole pipeline the numbers hold, and the GPU gets kernels.
    from conftest import BIN, _run
    path = tmp_path / "bn.mlir"
    path.write_text(text)
    check = _run([BIN / "fuse-run", path, "--check-pipeline=fuse-pipeline{amp=none}"])
    assert check.returncode == 0 and "check-pipeline: PASS" in check.stdout, check.stdout[-2000:]
    plan = _run([BIN / "fuse-translate", path, "--pipeline=fuse-pipeline", "--emit-plan"])
    assert plan.returncode == 0 and " launch fuse_" in plan.stdout, plan.stderr[-2000:]


def test_batch_norm_2d_in_training(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1, bias=False), nn.BatchNorm2d(6, track_running_stats=False),
                          nn.ReLU(), nn.Flatten(), nn.Linear(6 * 5 * 5, 2)).train()
    step = Step(model, (torch.randn(2, 3, 5, 5),), mode="train", loss_fn=F.cross_entropy,
                targets=(torch.tensor([0, 1]),))
    results = 1 + len(list(model.parameters()))
    assert f"{results} of {results} outputs match" in matches_torch(step, export_step(step), tmp_path, "train")


def test_training_that_would_update_running_statistics_is_refused():
    model = ConvBlock(nn.BatchNorm1d(8)).train()
    step = Step(model, (torch.randn(2, 4, 10),), mode="train", loss_fn=F.cross_entropy,
                targets=(torch.randint(0, 3, (2,)),))
    with pytest.raises(ExportError, match="updates running_mean and running_var in place"):
        export_step(step)
