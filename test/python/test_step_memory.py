"""bench/memory/step_memory.py, where a GPU is not needed: its arguments are
checked before anything runs, and without a GPU it says so and fails."""

import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "memory", "step_memory.py")


def _run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=120)


def test_an_unknown_system_is_refused_with_the_known_ones():
    result = _run("gpt2", "--systems", "inductor,nope")
    assert result.returncode == 2
    assert "unknown system(s) ['nope']" in result.stderr
    assert "fuse-compile" in result.stderr


def test_without_a_gpu_it_says_so():
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the script would measure (run it by hand)")
    result = _run("gpt2", "--systems", "fuse-step")
    assert result.returncode == 1
    assert "no CUDA device" in result.stderr


def test_an_unknown_mode_is_refused():
    result = _run("gpt2", "--mode", "serve")
    assert result.returncode == 2
    assert "invalid choice: 'serve'" in result.stderr


def test_the_inference_row_of_a_pooled_output_counts_its_result():
    # The inference figures, from a stand-in step whose result is a tensor
    # (no GPU: torch.cuda's counters are replaced by the stand-in's).
    import importlib.util
    import types
    import torch
    spec = importlib.util.spec_from_file_location("step_memory", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = torch.zeros(4, 8, dtype=torch.bfloat16)
    closed = []
    prepared = types.SimpleNamespace(step=lambda: result, close=lambda: closed.append(True))
    built = types.SimpleNamespace(model=torch.nn.Linear(8, 8))
    counters = {"reset_peak_memory_stats": lambda: None, "memory_allocated": lambda: 100,
                "max_memory_allocated": lambda: 300, "synchronize": lambda: None,
                "mem_get_info": lambda: (1000, 2000)}
    original = {name: getattr(torch.cuda, name) for name in counters}
    try:
        for name, stand_in in counters.items():
            setattr(torch.cuda, name, stand_in)
        row = module._measure_infer("models:x", "eager", built, prepared, free_at_start=1500)
    finally:
        for name, value in original.items():
            setattr(torch.cuda, name, value)
    assert row["output_bytes"] == 4 * 8 * 2 and row["device_used"] == 500
    assert row["allocated_peak"] == 300 and row["parameter_bytes"] == (8 * 8 + 8) * 4
    assert closed == [True]
