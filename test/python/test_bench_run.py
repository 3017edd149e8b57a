"""bench/run.py's bookkeeping for a run continued over several calls
(--append): which rows a file holds, which GPU and torch measured it, and
the table order. No GPU needed."""

import importlib.util
import json
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


@pytest.fixture(scope="module")
def run():
    spec = importlib.util.spec_from_file_location("bench_run", os.path.join(ROOT, "bench", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(model, config, mode, system="fuse", **extra):
    return dict(system=system, model=model, config=config, mode=mode, **extra)


def test_previous_run_needs_the_same_gpu_and_torch(run, tmp_path):
    path = tmp_path / "run.json"
    assert run.previous_run(str(path), "NVIDIA H100 80GB HBM3", "2.11.0") is None
    path.write_text(json.dumps(dict(device="NVIDIA H200", torch="2.11.0", results=[])))
    with pytest.raises(SystemExit, match="measured with GPU NVIDIA H200, this is NVIDIA H100 80GB HBM3"):
        run.previous_run(str(path), "NVIDIA H100 80GB HBM3", "2.11.0")
    with pytest.raises(SystemExit, match="measured with torch 2.11.0, this is 2.12.0"):
        run.previous_run(str(path), "NVIDIA H200", "2.12.0")
    assert run.previous_run(str(path), "NVIDIA H200", "2.11.0")["device"] == "NVIDIA H200"


def test_rows_that_failed_are_measured_again(run):
    data = dict(results=[_row("gpt2", "B8 T1024", "train", system=s) for s in ("eager", "inductor", "fuse")]
                + [_row("bert", "B4 T512", "train", system="all", error="RuntimeError: out of memory")])
    assert run.measured_rows(data) == {("gpt2", "B8 T1024", "train")}


def test_rows_follow_the_configurations_then_train_before_infer(run):
    appended = [_row("llama", "B8 T1024", "infer"), _row("gpt2", "B8 T1024", "infer"),
                _row("bert", "B32 T512", "train", system="eager"), _row("bert", "B32 T512", "train"),
                _row("bert", "B4 T512", "train"), _row("gpt2", "B8 T1024", "train")]
    ordered = [(r["model"], r["config"], r["mode"], r["system"]) for r in run.in_table_order(appended)]
    assert ordered == [("gpt2", "B8 T1024", "train", "fuse"), ("gpt2", "B8 T1024", "infer", "fuse"),
                       ("bert", "B4 T512", "train", "fuse"), ("bert", "B32 T512", "train", "eager"),
                       ("bert", "B32 T512", "train", "fuse"), ("llama", "B8 T1024", "infer", "fuse")]


@pytest.mark.parametrize("flag,value", [("--models", "gpt2,gpt3"), ("--modes", "train,fly"),
                                        ("--systems", "eager,jax")])
def test_unknown_names_are_usage_errors(run, capsys, flag, value):
    with pytest.raises(SystemExit) as exit_info:
        run.main([flag, value])
    assert exit_info.value.code == 2
    assert f"unknown {flag} value(s) {value.split(',')[1]}; choose from" in capsys.readouterr().err
