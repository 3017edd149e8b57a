"""Reflection and replication padding (F.pad's "reflect" and "replicate",
Conv's padding_mode) in 1, 2 and 3 dimensions, asymmetric and cropping:
exported as a fuse.gather per padded dimension at positions computed from
an iota (reflect n-1 - |n-1 - |i - before||, replicate clamp(i - before, 0,
n-1)), the backward as a scatter_add back at the same positions (border
elements are read more than once), and checked against PyTorch on the CPU
reference interpreter. torch 2.x's decompositions turn the same ops into
index ops before the exporter sees them; the results are checked the
same way."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import BIN, _run, matches_torch, ops_in, verify
from fuse.exporter._steps import Step
from fuse.export import export_step


class Pad(nn.Module):
    def __init__(self, pad, mode):
        super().__init__()
        self.pad, self.mode = pad, mode

    def forward(self, x):
        return F.pad(x, self.pad, mode=self.mode)


class PadOfParameter(nn.Module):
    """F.pad of a learnt tensor, so that a training step returns the pad's
    input gradient; the loss <pad(x), dy> makes dy the output gradient."""

    def __init__(self, shape, pad, mode):
        super().__init__()
        self.x = nn.Parameter(torch.randn(shape))
        self.pad, self.mode = pad, mode

    def forward(self, dy):
        return (F.pad(self.x, self.pad, mode=self.mode) * dy).sum()


CASES = {
    "1d": ((2, 3, 7), (2, 3)),
    "2d": ((2, 3, 5, 6), (1, 3, 2, 0)),
    "3d": ((1, 2, 4, 3, 5), (1, 2, 0, 2, 3, 1)),
    "crop": ((2, 3, 5, 6), (-1, 2, 3, -2)),
}


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_padding_and_its_gradient_match_torch(mode, case, tmp_path):
    shape, pad = CASES[case]
    torch.manual_seed(0)
    model = PadOfParameter(shape, pad, mode)
    with torch.no_grad():
        padded = F.pad(model.x, pad, mode=mode)
    infer = Step(Pad(pad, mode), (model.x.detach().clone(),))
    infer_text = export_step(infer)
    assert "1 of 1 outputs match" in matches_torch(infer, infer_text, tmp_path, "infer")
    step = Step(model, (torch.randn(padded.shape),), mode="train", loss_fn=lambda loss: loss)
    text = export_step(step)
    assert "2 of 2 outputs match" in matches_torch(step, text, tmp_path, "train")
    padded_dims = sum(1 for i in range(0, len(pad), 2) if pad[i] or pad[i + 1])
    assert ops_in(infer_text)["fuse.gather"] == padded_dims


def test_padding_graphs_go_through_the_pipeline_and_code_generator(tmp_path):
    """The compiler's passes keep the interpreter's answer on a reflection
    and a replication padding's training step, and the code generator
    plans them."""
    for mode in ("reflect", "replicate"):
        shape, pad = CASES["2d"]
        step = Step(PadOfParameter(shape, pad, mode), (torch.randn(2, 3, 7, 10),), mode="train",
                    loss_fn=lambda loss: loss)
        path = verify(export_step(step), tmp_path, mode)
        for pipeline in ["fuse-pipeline", "fuse-pipeline{amp=none}"]:
            result = _run([BIN / "fuse-run", path, "--device=cpu", f"--check-pipeline={pipeline}"])
            assert result.returncode == 0 and "check-pipeline: PASS (2 of 2 outputs match)" in result.stdout, \
                result.stdout + result.stderr
        plan = _run([BIN / "fuse-translate", path, "--emit-plan"])
        # The backward is a scatter-add where the padding op reaches the
        # exporter whole (torch 1.13), gathers where torch 2 decomposes it.
        planned = "launch fuse_scatter_add" in plan.stdout or "gather" in plan.stdout
        assert plan.returncode == 0 and planned, plan.stdout + plan.stderr
