"""Shared helpers for the exporter tests: run fuse-opt and fuse-run on what
the exporter writes, and compare with PyTorch on the same inputs."""

import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from fuse import reference  # noqa: E402
from fuse._compat import TORCH_2  # noqa: E402

BIN = pathlib.Path(os.environ.get("FUSE_BIN_DIR", ROOT / "build" / "bin"))
# The C API library of the same build as the tools (ctest sets FUSE_BIN_DIR).
if "FUSE_LIBRARY" not in os.environ and (BIN.parent / "lib" / "libFuseC.so").exists():
    os.environ["FUSE_LIBRARY"] = str(BIN.parent / "lib" / "libFuseC.so")


def pytest_sessionstart(session):
    """Most of these tests compile through libFuseC.so, which the build
    makes only with NVIDIA's CUDA toolkit: say so once, up front, rather than
    fail test by test."""
    from fuse.runtime import _capi
    from fuse.errors import FuseError
    try:
        _capi.library()
    except FuseError as error:
        pytest.exit(f"libFuseC.so cannot be loaded ({error}); it is built only where the CUDA toolkit "
                    "12+ is (scripts/setup.sh says what is missing)", returncode=1)


requires_torch2 = pytest.mark.skipif(
    not TORCH_2, reason=f"needs torch 2.x (run on the GPU machine); this is torch {torch.__version__}")


def _run(args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)


def verify(text, tmp_path, name="graph"):
    """Parses and verifies exported text with fuse-opt; returns its path."""
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    result = _run([BIN / "fuse-opt", path, "-o", os.devnull])
    assert result.returncode == 0, f"fuse-opt rejected the export:\n{result.stderr}\n{text[:4000]}"
    return path


def matches_torch(step, text, tmp_path, name="graph"):
    """Runs the exported graph on the CPU reference interpreter with the
    step's own inputs and checks every result against PyTorch's."""
    path = verify(text, tmp_path, name)
    # PyTorch's reference without oneDNN: Debian's torch 1.13 returns zero
    # gradients from its f32 oneDNN convolution backward when the output
    # gradient is not contiguous (a Whisper-style conv1d -> GELU -> permute),
    # where the native path and f64 agree with each other (and with Fuse).
    with torch.backends.mkldnn.flags(enabled=False):
        inputs, expected = reference.save_io(step, str(tmp_path / name))
    result = _run([BIN / "fuse-run", path, "--inputs", inputs, "--expected", expected])
    assert result.returncode == 0 and "expected: PASS" in result.stdout, \
        f"fuse-run disagrees with PyTorch:\n{result.stdout[-6000:]}\n{result.stderr}"
    return result.stdout


def real_like(example, seed=0):
    """Real tensors of `example`'s shapes and dtypes (seeded; normal floats,
    zero integers): inputs for a graph whose compiler saw fake tensors
    (AOTAutograd's on torch 2)."""
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(tuple(t.shape), generator=generator).to(t.dtype) if t.dtype.is_floating_point
            else torch.zeros(tuple(t.shape), dtype=t.dtype) for t in example]


def graph_matches_torch(graph, inputs, tmp_path, name="graph", example=None, retrace=True):
    """Exports the FX graph `graph` (retraced on `example`, by default on
    `inputs`; or as it is), runs it on the CPU reference interpreter with
    `inputs` (real float32 tensors) and checks every result against `graph`
    run by PyTorch on them. Returns fuse-run's report."""
    import numpy as np
    from fuse.export import export_graph
    names = [f"in{i}" for i in range(len(inputs))]
    text = export_graph(graph, example if example is not None else inputs, arg_names=names, name=name,
                        retrace=retrace)
    path = verify(text, tmp_path, name)
    with torch.no_grad():
        results = graph(*inputs)
    # None results (AOTAutograd's gradients of inputs that need none) are
    # not exported; the others keep their position's name.
    results = {f"out{i}": t for i, t in enumerate(results if isinstance(results, (list, tuple)) else [results])
               if t is not None}
    np.savez(tmp_path / f"{name}.in.npz", **{n: reference.to_numpy(t) for n, t in zip(names, inputs)})
    np.savez(tmp_path / f"{name}.out.npz", **{n: reference.to_numpy(t) for n, t in results.items()})
    result = _run([BIN / "fuse-run", path, "--inputs", tmp_path / f"{name}.in.npz",
                   "--expected", tmp_path / f"{name}.out.npz"])
    assert result.returncode == 0 and "expected: PASS" in result.stdout, \
        f"fuse-run disagrees with PyTorch:\n{result.stdout[-6000:]}\n{result.stderr}"
    return result.stdout


def ops_in(text):
    """The fuse op names used by a graph, with their counts."""
    import collections
    import re
    return collections.Counter(re.findall(r"= (fuse\.[a-z_]+)", text))


class AotGraphs(dict):
    """AOTAutograd's forward and backward graphs of a function, as its
    compilers receive them: {"forward": (gm, example inputs), "backward":
    ...}. `aot_function(f, fw_compiler=graphs.compiler("forward"),
    bw_compiler=graphs.compiler("backward"))` fills it when called."""

    def compiler(self, kind):
        def capture(gm, example_inputs):
            self[kind] = (gm, list(example_inputs))
            return gm
        return capture


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU and torch 2.x (the GPU machine); skipped, "
                                       "with the reason, elsewhere")


# A small graph (matmul, bias, GELU) for the C API and JIT tests.
MLP = textwrap.dedent("""\
    func.func @mlp(%x: tensor<4x32xf32> {fuse.name = "x"},
                   %w: tensor<64x32xf32> {fuse.name = "w"},
                   %b: tensor<64xf32> {fuse.name = "b"})
        -> (tensor<4x64xf32> {fuse.name = "y"}) {
      %h = fuse.matmul %x, %w transpose_rhs : (tensor<4x32xf32>, tensor<64x32xf32>) -> tensor<4x64xf32>
      %bb = fuse.broadcast_in_dim %b, dims = [1] : (tensor<64xf32>) -> tensor<4x64xf32>
      %s = fuse.add %h, %bb : tensor<4x64xf32>
      %y = fuse.gelu %s, approximate = tanh : tensor<4x64xf32>
      return %y : tensor<4x64xf32>
    }
    """)


@pytest.fixture
def exact_f32():
    """For GPU tests (`pytest.mark.usefixtures("exact_f32")`): TF32 off
    while the test runs, so f32 references are exact, and dynamo's caches
    reset after it, so one test's compiled graphs do not serve the next."""
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
    if TORCH_2:
        torch._dynamo.reset()


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A Fuse compile cache of the test module's own."""
    return tmp_path_factory.mktemp("fuse-cache")


@pytest.fixture
def compiled_texts(monkeypatch):
    """The graph texts fuse.compiler.compile is given while the test runs
    (the torch.compile backend's forward and backward graphs), in order."""
    import fuse.compiler
    texts = []
    original = fuse.compiler.compile

    def recording(text, **kwargs):
        texts.append(text)
        return original(text, **kwargs)
    monkeypatch.setattr(fuse.compiler, "compile", recording)
    return texts


requires_transformers = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None,
    reason="HuggingFace transformers is not installed here (the GPU machine has it): the tests that "
           "build its model classes run there")


def load_file_module(name, path):
    """The Python file `path` as module `name` (loaded once per process):
    for the bench/ scripts the tests import, which are no package."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                   reason="needs a CUDA GPU (the GPU machine runs these)")


def relative_error(actual, expected):
    """‖a − b‖ / ‖b‖ in f64 on the CPU; NaN or inf in `actual` fails."""
    actual, expected = actual.detach().double().cpu(), expected.detach().double().cpu()
    assert torch.isfinite(actual).all(), "NaN or inf in the result"
    return float((actual - expected).norm() / expected.norm().clamp_min(1e-30))


def source_line(path, text):
    """The number of the first line of `path` that contains `text` (and is
    not the line asking): where a warning or an error should point."""
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if text in line and "line_of(" not in line:
                return number
    raise AssertionError(f"{text!r} is in no line of {path}")


def keeping_compilers():
    """AOTAutograd compilers that keep the graphs they are given and run
    them as they are: (graphs by kind, compiler_for(kind))."""
    graphs = {}

    def compiler_for(kind):
        def compile(gm, example_inputs):
            graphs[kind] = gm
            return gm
        return compile
    return graphs, compiler_for
