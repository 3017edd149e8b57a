"""Results that do not depend on the inputs (torch.ones(...) * 3, an arange
table, a constant mask), as AOTAutograd's forward graphs of Gemma and T5
return them: the exporter folds them to constants, the reference interpreter
reproduces PyTorch's values, and the CUDA code generator writes them into the
caller's outputs (planned here without a GPU)."""

import subprocess

import torch
import torch.nn as nn

from conftest import BIN, matches_torch
from fuse.exporter._steps import Step
from fuse.export import export_graph, export_step


class ConstantBeside(nn.Module):
    """A real output next to constants of several dtypes, one of them also
    used by the real output."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)

    def forward(self, x):
        scale = torch.ones(3, 6) * 3
        return (self.fc(x) * scale, scale, torch.arange(5) * 2,
                torch.ones(2, 2, dtype=torch.bool), torch.full((4, 8), 0.5, dtype=torch.float16))


def _plan(path):
    result = subprocess.run([str(BIN / "fuse-translate"), str(path), "--emit-plan"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_constant_results_match_torch_and_compile(tmp_path):
    step = Step(ConstantBeside(), (torch.randn(3, 4),))
    text = export_step(step)
    assert "fuse.constant dense<3.0> : tensor<3x6xf32>" in text
    output = matches_torch(step, text, tmp_path)
    assert "5 of 5 outputs match" in output
    plan = _plan(tmp_path / "graph.mlir")
    # The splats are written by fill kernels, the arange table copied from
    # the constant pool.
    assert "fill result 1 with 0x1.8p+1f" in plan
    assert "fill result 3 with true" in plan
    assert "fill result 4 with 0x1p-1f" in plan
    assert "copy constant 0 (constant0) -> output 2" in plan


def test_make_fx_graph_returning_only_a_constant(tmp_path):
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x):
        return x.relu(), torch.full((2, 3), 7, dtype=torch.int32)

    graph = make_fx(f)(torch.randn(4))
    text = export_graph(graph, arg_names=["x"], result_names=["y", "seven"])
    path = tmp_path / "graph.mlir"
    path.write_text(text)
    assert "fill result 1 with (7LL)" in _plan(path)
