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
