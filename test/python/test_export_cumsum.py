"""aten.cumsum (RoBERTa's position ids, float prefix sums and their backward,
which AOTAutograd writes as flip, cumsum, flip) and aten.flip: exported and
checked against PyTorch on the CPU reference interpreter."""

import subprocess

import torch
import torch.nn as nn

from conftest import AotGraphs, BIN, matches_torch, ops_in, verify
from fuse.exporter._steps import Step
from fuse.export import export_graph, export_step


class RobertaPositions(nn.Module):
    """Position ids as RoBERTa makes them (padding positions keep the padding
    index), looked up in an embedding."""

    def __init__(self, padding_idx=1, width=8):
        super().__init__()
        self.padding_idx = padding_idx
        self.positions = nn.Embedding(40, width, padding_idx=padding_idx)

    def forward(self, input_ids):
        mask = input_ids.ne(self.padding_idx).int()
        incremental = torch.cumsum(mask, dim=1).type_as(mask) * mask
        position_ids = incremental.long() + self.padding_idx
        return self.positions(position_ids), position_ids


class FloatScan(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        return torch.cumsum(h, dim=-1) + torch.cumsum(h, dim=1)


def _ids():
    ids = torch.randint(2, 30, (3, 10))
    ids[0, 6:] = 1  # right padding
    ids[2, :2] = 1  # left padding
    return ids


def test_roberta_position_ids_match_torch(tmp_path):
    step = Step(RobertaPositions(), {"input_ids": _ids()})
    text = export_step(step, index_bounds={"input_ids": 30})
    assert ops_in(text)["fuse.cumsum"] == 1
    # torch sums an int32 mask in int64.
    assert "fuse.cumsum %cumsum, dim = 1 : tensor<3x10xi64>" in text
    assert "2 of 2 outputs match" in matches_torch(step, text, tmp_path)
    plan = subprocess.run([str(BIN / "fuse-translate"), str(tmp_path / "graph.mlir"), "--emit-plan"],
                          capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    assert "launch fuse_cumsum_0" in plan.stdout and "block=(32,8,1)" in plan.stdout


def test_float_cumsum_training_step_gives_torch_gradients(tmp_path):
    # The backward of each cumsum is flip, cumsum, flip: two gathers at
    # reversed indices around a cumsum.
    step = Step(FloatScan(), (torch.randn(2, 4, 6),), mode="train", loss_fn=lambda y: (y * y).mean())
    text = export_step(step)
    ops = ops_in(text)
    assert ops["fuse.cumsum"] == 4 and ops["fuse.gather"] == 4
    assert "3 of 3 outputs match" in matches_torch(step, text, tmp_path)


class Conversions(nn.Module):
    """cumsum's dtype argument and promotion of integers and booleans to
    i64, a negative dim, a 0-d input, and flip over several dimensions."""

    def forward(self, x, ids):
        as_float = torch.cumsum(ids, -1, dtype=torch.float32) * x
        counts = torch.cumsum(ids > 3, 0)
        total = torch.cumsum(x.sum(), 0)
        return as_float, counts, total, torch.flip(x, [0, -1])


def test_cumsum_dtypes_and_flip_match_torch(tmp_path):
    step = Step(Conversions(), (torch.randn(3, 7), torch.randint(0, 6, (3, 7), dtype=torch.int32)))
    text = export_step(step, index_bounds={"ids": 6})
    assert "fuse.cumsum %cumsum, dim = 1 : tensor<3x7xf32>" in text
    # ids > 3 is i1: promoted to i64 before the sum, as torch does.
    assert "to tensor<3x7xi64>" in text and ": tensor<3x7xi64>" in text
    assert ops_in(text)["fuse.cumsum"] == 2  # none for the 0-d input
    assert "4 of 4 outputs match" in matches_torch(step, text, tmp_path)


def test_aot_autograd_graphs_with_cumsum_export(tmp_path):
    from functorch.compile import aot_function
    graphs = AotGraphs()

    def f(x, w):
        return torch.cumsum(x @ w, dim=1).pow(2).sum()

    compiled = aot_function(f, fw_compiler=graphs.compiler("forward"), bw_compiler=graphs.compiler("backward"))
    compiled(torch.randn(4, 6), torch.randn(6, 5, requires_grad=True)).backward()
    for kind, (gm, example) in graphs.items():
        text = export_graph(gm, example, name=f"scan_{kind}")
        verify(text, tmp_path, kind)
        assert "fuse.cumsum" in text
    assert "fuse.gather" in export_graph(*graphs["backward"], name="scan_backward")
