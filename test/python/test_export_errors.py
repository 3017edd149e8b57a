"""Bad input to the exporter: one clear error that says what and where."""

import subprocess
import sys

import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from fuse.export import ExportError, export_graph, export_module


class Unmapped(nn.Module):
    def forward(self, x):
        y = torch.cumprod(x, 0) + torch.sort(x, dim=1).values
        return torch.cumprod(y, 1)


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


class UpdatesInput(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


def test_every_unmapped_op_is_listed_once_with_its_count_and_first_line():
    with pytest.raises(ExportError) as error:
        export_module(Unmapped(), (torch.randn(3, 4),))
    message = str(error.value)
    assert "2 ATen op(s) with no mapping" in message and "(3 node(s))" in message
    assert "aten.cumprod.default  x2  first at " in message
    assert "aten.sort.default  x1  first at " in message
    source = open(__file__).read().splitlines()
    first = 1 + next(i for i, l in enumerate(source) if "torch.cumprod(x, 0)" in l)
    assert f"test_export_errors.py:{first} (node cumprod)" in message


def test_data_dependent_control_flow_is_reported_where_it_happens():
    with pytest.raises(ExportError) as error:
        export_module(DataDependent(), (torch.randn(3, 4),))
    assert "data-dependent" in str(error.value)
    assert "test_export_errors.py:" in str(error.value)


def test_in_place_update_of_an_input_names_the_input():
    with pytest.raises(ExportError) as error:
        export_module(UpdatesInput(), (torch.randn(3, 4),))
    assert "updates the input 'x' in place" in str(error.value)


def test_dynamic_shapes_are_rejected():
    from torch.fx.experimental.proxy_tensor import make_fx
    graph = make_fx(lambda x: x * 2, tracing_mode="symbolic")(torch.randn(3, 4))
    with pytest.raises(ExportError) as error:
        export_graph(graph, retrace=False)
    assert "dynamic shape" in str(error.value)


def test_training_needs_a_loss():
    with pytest.raises(ValueError, match="loss_fn"):
        export_module(nn.Linear(2, 2), (torch.randn(1, 2),), mode="train")
    with pytest.raises(ValueError, match="mode"):
        export_module(nn.Linear(2, 2), (torch.randn(1, 2),), mode="eval")


def _cli(*args):
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "fuse.export", *args], capture_output=True, text=True,
                          env=env)


def test_command_line_rejects_bad_arguments():
    result = _cli("gpt3", "-o", "/dev/null")
    assert result.returncode == 2 and "invalid choice: 'gpt3'" in result.stderr
    result = _cli("gpt2", "--mode", "infer", "--with-optimizer", "-o", "/dev/null")
    assert result.returncode == 2 and "--with-optimizer needs --mode train" in result.stderr
    result = _cli("gpt2")
    assert result.returncode == 2 and "-o/--output" in result.stderr


def test_command_line_help_lists_models_and_modes():
    result = _cli("--help")
    assert result.returncode == 0
    for word in ("gpt2", "bert", "llama", "--config", "tiny", "full", "--mode", "--with-optimizer",
                 "--save-io"):
        assert word in result.stdout


def test_command_line_without_transformers_says_so(tmp_path):
    import importlib.util
    if importlib.util.find_spec("transformers") is not None:
        pytest.skip("transformers is installed here; the message is for machines without it")
    result = _cli("gpt2", "-o", str(tmp_path / "g.mlir"))
    assert result.returncode == 1
    assert "fuse.export: error:" in result.stderr and "transformers is not importable" in result.stderr
    assert "Traceback" not in result.stderr
