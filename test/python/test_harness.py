"""The benchmark harness's bookkeeping (python/fuse/harness), without a GPU:
judging rows against eager autocast's error, continuing a run, the row
order, the child processes, the report and the command line's errors. The
measurements themselves run on the GPU machine (test_jit_gpu.py runs the
harness end to end on tiny models)."""

import json
import os
import subprocess
import sys

import pytest

from fuse.harness import cli, report, runner, workloads


def _row(model="gpt2", mode="train", system="fuse-step", **extra):
    row = {field: None for field in runner.ROW_FIELDS}
    row.update(model=model, batch=8, seq=1024, mode=mode, system=system, ms=10.0, peak_gib=1.0, kernels=100)
    row.update(extra)
    return row


def _eager(loss=2e-4, grad=2e-3):
    return _row(system="eager", loss_rel_err=loss, grad_rel_err=grad)


def test_a_compiled_row_fails_past_twice_eager_autocasts_error():
    ok = runner.judge(_row(loss_rel_err=3e-4, grad_rel_err=3e-3), _eager())
    assert ok["error"] is None and ok["eager_loss_rel_err"] == 2e-4
    bad = runner.judge(_row(loss_rel_err=5e-4), _eager())
    assert "loss_rel_err 5.00e-04 exceeds 2x eager autocast's (2.00e-04" in bad["error"]
    bad = runner.judge(_row(grad_rel_err=9e-3), _eager(grad=4e-3))
    assert bad["error"].startswith(runner.JUDGED + "grad_rel_err 9.00e-03 exceeds")


def test_an_eager_error_under_the_floor_counts_as_the_floor():
    floor = runner.ERROR_FLOOR["loss_rel_err"]
    assert runner.judge(_row(loss_rel_err=1.5 * floor), _eager(loss=floor / 100))["error"] is None
    assert runner.judge(_row(loss_rel_err=3 * floor), _eager(loss=floor / 100))["error"] is not None


def test_a_verdict_is_revised_but_other_errors_are_kept():
    row = runner.judge(_row(loss_rel_err=5e-4), _eager())
    assert runner.judge(row, _eager(loss=3e-4))["error"] is None  # judged again against a new eager row
    crashed = _row(error="RuntimeError: x", loss_rel_err=1.0)
    assert runner.judge(crashed, _eager())["error"] == "RuntimeError: x"
    assert runner.judge(_row(system="eager", loss_rel_err=1.0), _eager(loss=1e-6))["error"] is None


def test_a_group_is_judged_against_its_own_eager_row():
    rows = [_eager(loss=1e-3), _row(loss_rel_err=1.5e-3), _row(mode="infer", system="eager", loss_rel_err=1e-4),
            _row(mode="infer", loss_rel_err=1.5e-3)]
    runner.judge_group(rows, "gpt2", "train")
    runner.judge_group(rows, "gpt2", "infer")
    assert rows[1]["error"] is None and rows[3]["error"].startswith(runner.JUDGED)


def test_failed_rows_are_measured_again_and_rows_keep_their_order():
    results = {"rows": [_row(system="eager"), _row(system="inductor", error="timed out after 900 s")]}
    assert runner.measured(results) == {("gpt2", "train", "eager")}
    order = runner.row_order(["gpt2", "bert-b4"], ["train", "infer"], list(runner.SYSTEMS))
    rows = [_row("bert-b4", "train", "eager"), _row("gpt2", "infer", "fuse-step"), _row("gpt2", "train", "fuse-step"),
            _row("gpt2", "train", "eager")]
    assert [(r["model"], r["mode"], r["system"]) for r in sorted(rows, key=order)] == [
        ("gpt2", "train", "eager"), ("gpt2", "train", "fuse-step"), ("gpt2", "infer", "fuse-step"),
        ("bert-b4", "train", "eager")]


def test_continuing_needs_the_same_gpu_torch_and_config(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"gpu": "NVIDIA H200", "torch": "2.11.0", "config": "full", "rows": []}))
    fresh = {"gpu": "NVIDIA H100 80GB HBM3", "torch": "2.11.0", "config": "full"}
    with pytest.raises(SystemExit, match="measured with gpu NVIDIA H200, this run has NVIDIA H100 80GB HBM3"):
        cli.previous_results(str(path), fresh)
    assert cli.previous_results(str(path), dict(fresh, gpu="NVIDIA H200"))["rows"] == []


_CHILD_SCRIPT = """
import json, os, sys
from fuse.harness import runner

def returns(value):
    return {"value": value, "cache": os.environ.get("FUSE_CACHE_DIR")}

def raises():
    raise ValueError("the step broke")

def dies():
    os._exit(3)

print(json.dumps([runner.run_in_child(returns, 4, env={"FUSE_CACHE_DIR": "/cold"}),
                  os.environ.get("FUSE_CACHE_DIR"), runner.run_in_child(raises), runner.run_in_child(dies)]))
"""


def test_a_child_returns_its_row_or_says_why_it_has_none():
    # In a fresh interpreter: the runner refuses to fork from a process that
    # has used CUDA, as this test process may have (GPU tests run in it).
    result = subprocess.run([sys.executable, "-c", _CHILD_SCRIPT], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert result.returncode == 0, result.stderr
    returned, cache, raised, died = json.loads(result.stdout.strip().splitlines()[-1])
    assert returned == {"value": 4, "cache": "/cold"}
    assert cache != "/cold"  # the runner's own environment is left alone
    assert raised == {"error": "ValueError: the step broke"}
    assert died == {"error": "the measuring process died (exit code 3)"}


def test_results_are_saved_whole(tmp_path):
    path = tmp_path / "deep" / "results.json"
    runner.save_json({"rows": [_row()]}, str(path))
    assert json.loads(path.read_text())["rows"][0]["system"] == "fuse-step"


def test_the_report_marks_failed_rows_and_compares_with_the_best_inductor_mode():
    results = {"gpu": "NVIDIA H100", "date": "2026-11-27", "torch": "2.11", "command": "bench/run.py",
               "rows": [_row(system="eager", ms=30.0), _row(system="inductor", ms=24.0),
                        _row(system="inductor-reduce-overhead", ms=20.0), _row(system="fuse-compile", error="boom"),
                        _row(system="fuse-step", ms=16.0)]}
    text = report.markdown(results)
    assert "| gpt2 B8 T1024 | train | 30.0 | 24.0 | 20.0 | failed | 16.0 | - | 1.25x |" in text
    assert "- gpt2 B8 T1024 train fuse-compile: boom" in text


def test_workload_names_are_checked():
    assert workloads.resolve("bert-b32").batch == 32
    assert workloads.resolve("nanogpt", "tiny").seq == 64
    with pytest.raises(ValueError, match="unknown model 'gpt3'"):
        workloads.resolve("gpt3")
    with pytest.raises(ValueError, match="config must be 'full' or 'tiny'"):
        workloads.resolve("gpt2", "huge")


@pytest.mark.parametrize("argv, message", [
    (["gpt2", "--systems", "eager,xla"], "unknown --systems value(s) xla"),
    (["gpt2", "--modes", "serve"], "unknown --modes value(s) serve"),
    (["gpt3"], "unknown model 'gpt3'"),
    (["gpt2", "--steps", "0"], "--steps must be at least 1"),
    (["gpt2", "--append"], "--append needs an existing --output file"),
])
def test_bad_command_lines_are_usage_errors(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(runner, "gpu_name", lambda: "a GPU")
    monkeypatch.setattr(workloads, "preload", lambda chosen: None)
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv, prog="compare", description="")
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_a_missing_transformers_is_a_clear_error(capsys, monkeypatch):
    def no_transformers(chosen):
        raise ImportError("No module named 'transformers'")
    monkeypatch.setattr(workloads, "preload", no_transformers)
    assert cli.main(["gpt2,bert-b4"], prog="compare", description="") == 2
    assert "compare: gpt2, bert-b4 needs HuggingFace transformers" in capsys.readouterr().err


def test_results_say_which_code_they_measured():
    commit = runner.source_commit()
    assert commit is None or (len(commit.split("+")[0]) >= 7 and commit.split("+")[0].isalnum())
    results = {"gpu": "NVIDIA H100", "date": "2026-11-27", "torch": "2.11", "command": "bench/run.py",
               "commit": "abc1234", "rows": [_row(system="eager", ms=30.0), _row(system="fuse-step", ms=16.0)]}
    assert "torch 2.11, commit abc1234) by `bench/run.py`" in report.markdown(results)
