"""bench/convergence/run.py's plumbing on the CPU (eager only: the Fuse
side needs the GPU machine, where the script runs for real): the data, the
loop, the JSON schema and its refusals."""

import importlib.util
import json

import pytest

from conftest import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("convergence_run", ROOT / "bench" / "convergence" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_tiny_eager_run_writes_the_schema_and_learns(tmp_path):
    out = tmp_path / "conv.json"
    assert _script().main(["--runs", "gpt", "--config", "tiny", "--steps", "60", "--systems", "eager",
                           "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert {"gpu", "date", "torch", "command", "runs"} <= set(data)
    run = data["runs"][0]
    assert {"name", "steps", "eager_loss", "fuse_loss", "eager_final_metric", "fuse_final_metric"} <= set(run)
    assert run["steps"] == 60 and len(run["eager_loss"]) == 60 and run["fuse_loss"] is None
    # Bytes of Python source: a model that learns anything beats uniform (ln 256 = 5.55) soon.
    assert run["eager_loss"][0] > 5.0 and run["eager_final_metric"] < 4.6
    assert run["eager_f32_loss"] is None


def test_the_f32_yardstick_is_the_same_loop_without_autocast(tmp_path):
    out = tmp_path / "conv.json"
    assert _script().main(["--runs", "gpt", "--config", "tiny", "--steps", "5", "--systems", "eager,eager-f32",
                           "-o", str(out)]) == 0
    run = json.loads(out.read_text())["runs"][0]
    assert len(run["eager_f32_loss"]) == 5 and run["eager_f32_final_metric"] is not None
    # Same weights and batches: the first step's losses differ by bf16's rounding alone.
    assert run["eager_loss"][0] != run["eager_f32_loss"][0]
    assert abs(run["eager_loss"][0] - run["eager_f32_loss"][0]) < 0.05


def test_the_stdlib_text_and_the_batches_are_the_same_every_time():
    script = _script()
    data = script.stdlib_bytes(1 << 16)
    assert len(data) == 1 << 16 and b"def " in bytes(data.numpy())
    first = list(script.text_batches(data, 2, 3, 16, seed=1))
    again = list(script.text_batches(data, 2, 3, 16, seed=1))
    assert all((a[0] == b[0]).all() and (a[1] == b[1]).all() for a, b in zip(first, again))
    inputs, targets = first[0]
    assert (inputs[:, 1:] == targets[:, :-1]).all()  # the targets are the next bytes


def test_bad_names_and_fuse_without_a_gpu_are_refused():
    script = _script()
    with pytest.raises(SystemExit):
        script.main(["--runs", "gtp"])
    with pytest.raises(SystemExit):
        script.main(["--systems", "inductor"])
