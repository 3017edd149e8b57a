"""Fuse's C API through the Python bindings (fuse.runtime._capi, fuse.compile,
fuse.compile_step), with no GPU: graphs compile for sm_90a (NVRTC is not
needed to build an executable), the signature and plan come back, an
executable survives a save/load round trip, the compile cache is hit the
second time, and every failure arrives as FuseError carrying the library's
message. Runs in CI (Debian's torch 1.13) and anywhere libFuseC.so is built.
"""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from conftest import MLP, ROOT

import fuse
from fuse.runtime import _capi
from fuse.compiler import pipeline_string



def _has_gpu():
    try:
        _capi.device_info()
        return True
    except fuse.FuseError:
        return False


HAS_GPU = _has_gpu()


def test_library_loads_and_reports_its_version():
    assert _capi.api_version() == _capi.API_VERSION == "fuse-c/3"
    assert _capi.library_path().endswith("libFuseC.so")


def test_compile_gives_the_signature_and_plan():
    executable = _capi.Executable.compile(MLP, arch="sm_90a", source_name="mlp.mlir")
    signature = executable.describe()
    assert signature["entry"] == "mlp" and signature["arch"] == "sm_90a"
    assert [(t["name"], t["dtype"], t["shape"], t["bytes"]) for t in signature["inputs"]] == [
        ("x", "f32", [4, 32], 512), ("w", "f32", [64, 32], 8192), ("b", "f32", [64], 256)]
    assert [(t["name"], t["dtype"], t["shape"]) for t in signature["outputs"]] == [("y", "f32", [4, 64])]
    assert signature["gemms"] == 1 and signature["kernels"] >= 1 and signature["launches"] >= 1
    assert signature["donated"] == []
    assert signature["flops"] >= 2 * 4 * 64 * 32
    plan = executable.plan_text()
    assert plan.startswith("executable @mlp for sm_90a")
    assert "x: 4x32xf32" in plan
    executable.close()
    executable.close()  # twice is harmless
    with pytest.raises(fuse.FuseError, match="closed"):
        executable.describe()


def test_save_and_load_round_trip(tmp_path):
    executable = _capi.Executable.compile(MLP, arch="sm_90a")
    path = tmp_path / "mlp.fuseexe"
    executable.save(path)
    loaded = _capi.Executable.load(path)
    assert loaded.describe() == executable.describe()
    assert loaded.plan_text() == executable.plan_text()


def test_malformed_graph_names_line_and_column():
    text = MLP.replace("fuse.add %h, %bb", "fuse.bogus %h, %bb")
    with pytest.raises(fuse.FuseError) as error:
        _capi.Executable.compile(text, arch="sm_90a", source_name="broken.mlir")
    message = str(error.value)
    assert "broken.mlir:7:" in message and "fuse.bogus" in message, message
    # The last error is per call: the next success clears it.
    _capi.Executable.compile(MLP, arch="sm_90a")
    assert _capi.last_error() == ""


def test_type_error_in_the_graph_names_where():
    text = MLP.replace("%s = fuse.add %h, %bb : tensor<4x64xf32>", "%s = fuse.add %h, %b : tensor<4x64xf32>")
    with pytest.raises(fuse.FuseError, match=r"<graph>:7:\d+"):
        _capi.Executable.compile(text, arch="sm_90a")


def test_unknown_pass_option_is_reported():
    with pytest.raises(fuse.FuseError) as error:
        _capi.Executable.compile(MLP, arch="sm_90a", pipeline="fuse-pipeline{no-such-option=1}")
    assert "bad pipeline 'fuse-pipeline{no-such-option=1}'" in str(error.value)


def test_unknown_entry_lists_the_functions():
    with pytest.raises(fuse.FuseError, match=r"no function @nope in the graph \(it has: @mlp\)"):
        _capi.Executable.compile(MLP, arch="sm_90a", entry="nope")


def test_missing_and_corrupt_executable_files(tmp_path):
    missing = tmp_path / "missing.fuseexe"
    with pytest.raises(fuse.FuseError) as error:
        _capi.Executable.load(missing)
    assert str(missing) in str(error.value)
    corrupt = tmp_path / "corrupt.fuseexe"
    corrupt.write_bytes(b"not an executable")
    with pytest.raises(fuse.FuseError) as error:
        _capi.Executable.load(corrupt)
    assert str(error.value)
    with pytest.raises(fuse.FuseError):
        _capi.Executable.compile(MLP, arch="sm_90a").save(tmp_path / "no" / "such" / "dir" / "x.fuseexe")


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU message; this machine has a GPU")
def test_without_a_gpu_sessions_and_device_queries_say_so():
    with pytest.raises(fuse.FuseError, match="no CUDA device"):
        _capi.device_info()
    executable = _capi.Executable.compile(MLP, arch="sm_90a")
    with pytest.raises(fuse.FuseError, match="no CUDA device"):
        _capi.Session.create(executable)
    with pytest.raises(fuse.FuseError, match="no CUDA device"):
        _capi.Scratch.create()
    assert _capi.library().fuseScratchBytes(None) == -1
    # With no arch the current GPU's is wanted: the message says how to go on.
    with pytest.raises(fuse.FuseError, match=r"no CUDA device.*arch=\"sm_90a\""):
        fuse.compile(MLP, cache_dir=False)
    compiled = fuse.compile(MLP, arch="sm_90a", cache_dir=False)
    with pytest.raises(fuse.FuseError, match="no CUDA device: @mlp was compiled for sm_90a"):
        compiled(torch.randn(4, 32), torch.randn(64, 32), torch.randn(64))


def test_pipeline_options():
    assert pipeline_string() == "fuse-pipeline{amp=bf16}"
    assert pipeline_string(None) == "fuse-pipeline{amp=none}"
    assert pipeline_string("f16", memory_budget=1 << 30) == "fuse-pipeline{amp=f16 remat-budget=1073741824}"
    assert pipeline_string("bf16", memory_budget=0.5) == "fuse-pipeline{amp=bf16 remat-fraction=0.5}"
    assert pipeline_string("bf16", max_arena_bytes=1024) == "fuse-pipeline{amp=bf16 max-arena-bytes=1024}"
    with pytest.raises(ValueError, match="amp"):
        pipeline_string("int8")
    with pytest.raises(ValueError, match="fraction"):
        pipeline_string("bf16", memory_budget=1.5)
    assert pipeline_string("bf16", amp_results=True) == "fuse-pipeline{amp=bf16 narrow-results=true}"
    with pytest.raises(ValueError, match="needs amp"):
        pipeline_string(None, amp_results=True)
    # Every option string the helper makes is one the pipeline accepts.
    for text in (pipeline_string(None, 0.5, 1 << 40), pipeline_string("f16", 1 << 30),
                 pipeline_string("f16", amp_results=True)):
        _capi.Executable.compile(MLP, arch="sm_90a", pipeline=text)


def test_amp_results_come_back_in_the_amp_type():
    # Logits straight from a matmul: bf16 with amp_results, as autocast
    # returns them; f32 otherwise. The MLP's GELU output is f32 either way.
    logits = textwrap.dedent("""\
        func.func @head(%x: tensor<8x32xf32> {fuse.name = "x"}, %w: tensor<64x32xf32> {fuse.name = "w"})
            -> (tensor<2x4x64xf32> {fuse.name = "logits"}) {
          %0 = fuse.matmul %x, %w transpose_rhs : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
          %1 = fuse.reshape %0 : (tensor<8x64xf32>) -> tensor<2x4x64xf32>
          return %1 : tensor<2x4x64xf32>
        }
        """)
    def output_dtypes(text, amp_results):
        executable = _capi.Executable.compile(text, arch="sm_90a",
                                              pipeline=pipeline_string("bf16", amp_results=amp_results))
        dtypes = [(t["name"], t["dtype"], t["shape"]) for t in executable.describe()["outputs"]]
        executable.close()
        return dtypes
    assert output_dtypes(logits, True) == [("logits", "bf16", [2, 4, 64])]
    assert output_dtypes(logits, False) == [("logits", "f32", [2, 4, 64])]
    assert output_dtypes(MLP, True) == [("y", "f32", [4, 64])]


def test_compile_uses_the_disk_cache(tmp_path):
    first = fuse.compile(MLP, arch="sm_90a", cache_dir=tmp_path)
    assert not first.cache_hit
    entries = list((tmp_path / "executables").iterdir())
    assert len(entries) == 1 and entries[0].suffix == ".fuseexe"
    second = fuse.compile(MLP, arch="sm_90a", cache_dir=tmp_path)
    assert second.cache_hit and second.signature == first.signature and second.plan == first.plan
    # Other options are another entry.
    assert not fuse.compile(MLP, arch="sm_90a", amp=None, cache_dir=tmp_path).cache_hit
    assert len(list((tmp_path / "executables").iterdir())) == 2
    # A corrupt entry is compiled again and replaced, with a warning.
    entries[0].write_bytes(b"garbage")
    with pytest.warns(UserWarning, match="cannot be read"):
        again = fuse.compile(MLP, arch="sm_90a", cache_dir=tmp_path)
    assert not again.cache_hit
    assert fuse.compile(MLP, arch="sm_90a", cache_dir=tmp_path).cache_hit
    assert not list((tmp_path / "executables").glob("*.tmp"))


def test_compiled_graph_attributes():
    compiled = fuse.compile(MLP, arch="sm_90a", amp="bf16", cache_dir=False)
    assert compiled.input_names == ["x", "w", "b"] and compiled.output_names == ["y"]
    # Mixed precision stays inside: the signature keeps the graph's dtypes.
    assert [s.dtype for s in compiled.inputs] == ["f32", "f32", "f32"]
    assert compiled.pipeline == "fuse-pipeline{amp=bf16}"
    assert compiled.compile_seconds > 0 and "compile" in compiled.timings
    assert "@mlp sm_90a" in repr(compiled)


def test_fx_graph_module_compiles():
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x, w):
        return torch.nn.functional.gelu(x @ w.t(), approximate="tanh") * 2

    x, w = torch.randn(4, 32), torch.randn(16, 32)
    graph = make_fx(f)(x, w)
    compiled = fuse.compile(graph, (x, w), arch="sm_90a", cache_dir=False)
    assert [(s.name, s.shape) for s in compiled.inputs] == [("x_1", (4, 32)), ("w_1", (16, 32))]
    assert [s.shape for s in compiled.outputs] == [(4, 16)]
    assert compiled.signature["gemms"] == 1


def _mlp_and_batch():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8))
    batch = (torch.randn(4, 32), torch.randint(0, 8, (4,)))
    return model, batch, lambda out, target: torch.nn.functional.cross_entropy(out, target)


def test_compile_step_signature_without_optimizer(tmp_path):
    model, batch, loss_fn = _mlp_and_batch()
    step = fuse.compile_step(model, loss_fn, batch, arch="sm_90a", cache_dir=tmp_path)
    assert step.compiled.input_names == ["0.weight", "0.bias", "2.weight", "2.bias", "input", "target0"]
    assert step.compiled.output_names == ["loss", "grad.0.weight", "grad.0.bias", "grad.2.weight", "grad.2.bias"]
    assert set(step.timings) >= {"export", "compile"}
    if not HAS_GPU:
        with pytest.raises(fuse.FuseError, match="no CUDA device"):
            step(batch)


def test_compile_step_with_adamw_binds_the_optimizer_state():
    model, batch, loss_fn = _mlp_and_batch()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=1e-3)
    step = fuse.compile_step(model, loss_fn, batch, optimizer=optimizer, arch="sm_90a", cache_dir=False)
    names = step.compiled.input_names
    assert names[:6] == ["0.weight", "0.bias", "2.weight", "2.bias", "input", "target0"]
    assert names[6:10] == ["exp_avg.0.weight", "exp_avg.0.bias", "exp_avg.2.weight", "exp_avg.2.bias"]
    # One learning rate per parameter group, then the weights' bf16 copies.
    assert names[-5:] == ["lr.0", "lr.1", "step", "amp_weight.0.weight", "amp_weight.2.weight"]
    outputs = step.compiled.output_names
    assert outputs[0] == "loss" and outputs[1:5] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert outputs[-3:] == ["step", "amp_weight.0.weight", "amp_weight.2.weight"]
    # Parameters, moments and copies are donated: the matrices' updates and
    # their copies are planned in the memory they replace, and bound there.
    kinds = dict(zip(outputs, (k for k, _ in step._out_plan)))
    assert kinds["0.weight"] == "in_place" and kinds["exp_avg.0.weight"] == "in_place"
    assert kinds["amp_weight.0.weight"] == "in_place" and kinds["amp_weight.2.weight"] == "in_place"
    assert all(kinds[n] in ("in_place", "copy_back") for n in outputs[1:-3])


def test_compile_step_rejects_what_it_cannot_compile():
    model, batch, loss_fn = _mlp_and_batch()
    # An optimizer the graph cannot run is stepped after it, which rules
    # out the options that need the update in the graph.
    rmsprop = torch.optim.RMSprop(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="max_grad_norm needs the optimizer's update inside.*RMSprop"):
        fuse.compile_step(model, loss_fn, batch, optimizer=rmsprop, max_grad_norm=1.0, arch="sm_90a")
    with pytest.raises(ValueError, match="amsgrad"):
        fuse.compile_step(model, loss_fn, batch, arch="sm_90a",
                          optimizer=torch.optim.AdamW(model.parameters(), amsgrad=True))
    with pytest.raises(TypeError, match=r"\(inputs, targets\)"):
        fuse.compile_step(model, loss_fn, batch[0], arch="sm_90a")


def test_import_fuse_is_cheap_and_needs_no_torch():
    # A fresh interpreter: importing the package loads neither torch nor
    # the library; the lazy names resolve; fuse.profile stays callable
    # after its submodule is imported.
    code = textwrap.dedent("""
        import sys
        import fuse
        assert "torch" not in sys.modules and "fuse.runtime._capi" not in sys.modules
        assert fuse.FuseError.__name__ == "FuseError"
        import fuse.profile
        assert callable(fuse.profile) and fuse.profile.Profile is fuse.Profile
        print("ok")
        """)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_backend_module_imports_on_any_torch():
    from fuse import backend
    from fuse._compat import TORCH_2
    if not TORCH_2:
        with pytest.raises(RuntimeError, match="torch >= 2"):
            backend.register()


def test_missing_library_is_a_clear_error(tmp_path):
    code = "import fuse.runtime._capi as c\ntry:\n    c.library()\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), FUSE_LIBRARY=str(tmp_path / "libFuseC.so"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.stdout.startswith("FuseError FUSE_LIBRARY=") and "does not exist" in result.stdout


def test_the_executable_cache_is_created_owner_only(tmp_path):
    import stat
    root = tmp_path / "a" / "b"
    fuse.compile(MLP, arch="sm_90a", cache_dir=root)
    for directory in (tmp_path / "a", root, root / "executables"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
