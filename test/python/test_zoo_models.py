"""The model zoo (bench/zoo: HuggingFace models from their configs, measured
by the harness) without a GPU: every tiny model builds and runs a forward
where `transformers` is installed (skipped, saying so, where it is not);
bench/zoo/run.py's command line and defaults (Fuse with fallback "error",
the zoo's systems), the harness knobs it rests on (custom workloads'
declared shapes and preload hook, --fuse-fallback threaded to
torch.compile's options) and bench/zoo/report.py's README section."""

import json
import math
import pathlib
import subprocess
import sys

import pytest
import torch

from conftest import load_file_module, requires_transformers
from fuse.harness import cli, runner, systems, workloads

ROOT = pathlib.Path(__file__).resolve().parents[2]
ZOO = ROOT / "bench" / "zoo"


zoo_run = load_file_module("zoo_run", ZOO / "run.py")
zoo_report = load_file_module("zoo_report", ZOO / "report.py")
zoo_models = zoo_run.load_models()
NAMES = sorted(zoo_models.MODELS)
# The models whose config's default dropout is above 0 (what models.py's
# docstring and the README say).
WITH_DROPOUT = {"gpt2", "bert", "roberta", "distilbert", "t5", "bart"}


def test_the_zoo_has_the_models_it_promises():
    assert set(NAMES) >= {"gpt2", "bert", "roberta", "distilbert", "vit", "t5", "llama", "mistral", "qwen2",
                          "gemma", "gpt-neox", "bart", "whisper", "mixtral"}
    for name, function in zoo_models.MODELS.items():
        shapes = getattr(zoo_models, function).shapes
        assert set(shapes) == {"full", "tiny"}, name
        assert all(isinstance(n, int) and n > 0 for n in shapes["full"] + shapes["tiny"]), name


@pytest.mark.parametrize("name", NAMES)
def test_each_model_is_a_harness_workload_with_its_shape(name):
    workload = workloads.custom(f"zoo_models:{zoo_models.MODELS[name]}", "full", name=name)
    assert workload.name == name
    assert (workload.batch, workload.seq) == getattr(zoo_models, zoo_models.MODELS[name]).shapes["full"]
    assert workload.preload is zoo_models.preload


@requires_transformers
@pytest.mark.parametrize("name", NAMES)
def test_each_tiny_model_builds_and_runs_a_forward(name):
    workload = workloads.custom(f"zoo_models:{zoo_models.MODELS[name]}", "tiny", name=name)
    built = workload.build(seed=0)
    model = built.model
    assert all(p.dtype == torch.float32 and p.device.type == "cpu" for p in model.parameters())
    # A config field the class ignored would leave its default, full-sized,
    # in place: the tiny models are small only if every field took.
    params = sum(p.numel() for p in model.parameters())
    assert params < 3e6, f"{name} tiny has {params / 1e6:.1f}M parameters: a size field did not take"
    inputs = built.train_inputs
    assert isinstance(inputs, dict) and "labels" in inputs and built.train_targets == ()
    assert next(iter(inputs.values())).shape[0] == workload.batch
    assert "labels" not in built.infer_inputs
    assert built.tokens == workload.batch * workload.seq and built.train_flops_per_token > 0
    assert built.stochastic == (name in WITH_DROPOUT), built.description

    model.train()
    args, kwargs = workloads.call_arguments(inputs)
    loss = built.loss_fn(model(*args, **kwargs), *workloads.target_arguments(built.train_targets))
    assert loss.dim() == 0 and math.isfinite(float(loss))
    loss.backward()
    assert any(p.grad is not None for p in model.parameters())

    model.eval()
    args, kwargs = workloads.call_arguments(built.infer_inputs)
    with torch.no_grad():
        logits = built.logits(model(*args, **kwargs))
    assert logits.shape[0] == workload.batch and torch.isfinite(logits).all()

    # The same seed builds the same model and batch (every harness process
    # builds its own).
    again = workload.build(seed=0)
    assert all(torch.equal(a, b) for a, b in zip(again.model.parameters(), model.parameters()))
    assert all(torch.equal(again.train_inputs[k], v) for k, v in inputs.items())


def test_run_py_help_lists_the_models_and_the_zoo_defaults():
    result = subprocess.run([sys.executable, str(ZOO / "run.py"), "--help"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    for name in NAMES:
        assert name in text
    assert "--fuse-fallback {eager,error}" in text and "default error" in text
    assert "eager,inductor-reduce-overhead,fuse-compile" in text


@pytest.mark.parametrize("argv, message", [
    (["resnet50"], "unknown model(s) resnet50; choose from gpt2, bert"),
    (["bert,nope"], "unknown model(s) nope"),
    (["bert", "--systems", "eager,xla"], "unknown --systems value(s) xla"),
    (["bert", "--fuse-fallback", "maybe"], "invalid choice: 'maybe'"),
    (["bert", "--modes", "serve"], "unknown --modes value(s) serve"),
])
def test_run_py_bad_arguments_are_usage_errors(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(runner, "gpu_name", lambda: "a GPU")
    monkeypatch.setattr(workloads, "preload", lambda chosen: None)
    with pytest.raises(SystemExit) as exit_:
        zoo_run.main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def _fake_run(calls):
    def run(chosen, modes, systems_, results, *, save=None, devices=None):
        calls.append(dict(models=[w.name for w in chosen], modes=modes, systems=systems_, results=results))
        if save:
            save(results)
        return results
    return run


def test_run_py_measures_every_model_with_fuse_not_falling_back(tmp_path, monkeypatch):
    calls = []
    # Both probes stubbed: the real ones fork a child, which a process that
    # has touched CUDA (an earlier GPU test in the same pytest run) cannot.
    monkeypatch.setattr(runner, "gpu_name", lambda: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(runner, "gpu_count", lambda: 1)
    monkeypatch.setattr(workloads, "preload", lambda chosen: None)
    monkeypatch.setattr(runner, "run", _fake_run(calls))
    monkeypatch.setattr(zoo_run, "LATEST", str(tmp_path / "latest.json"))
    output = tmp_path / "out.json"
    assert zoo_run.main(["-o", str(output)]) == 0
    (call,) = calls
    assert call["models"] == list(zoo_models.MODELS)
    assert call["systems"] == ["eager", "inductor-reduce-overhead", "fuse-compile"]
    assert call["modes"] == ["train", "infer"]
    saved = json.loads(output.read_text())
    assert saved["settings"]["fuse_fallback"] == "error"
    assert '"fallback": "error"' in saved["method"]["fuse_compile"]
    assert json.loads((tmp_path / "latest.json").read_text()) == saved  # a full run is the latest

    calls.clear()
    assert zoo_run.main(["gpt-neox,bert", "--modes", "train", "--systems", "eager,fuse-step", "--fuse-fallback",
                         "eager", "--config", "tiny", "-o", str(tmp_path / "tiny.json")]) == 0
    assert calls[0]["models"] == ["gpt-neox", "bert"] and calls[0]["systems"] == ["eager", "fuse-step"]
    assert calls[0]["results"]["settings"]["fuse_fallback"] == "eager"


def test_continuing_needs_the_same_fallback_policy(tmp_path):
    path = tmp_path / "run.json"
    fresh = {"gpu": "NVIDIA H100", "torch": "2.11.0", "config": "full", "settings": {"fuse_fallback": "error"}}
    path.write_text(json.dumps(dict(fresh, settings={"steps": 20}, rows=[])))  # written before the option
    with pytest.raises(SystemExit, match="measured with --fuse-fallback eager, this run has error"):
        cli.previous_results(str(path), fresh)
    path.write_text(json.dumps(dict(fresh, rows=[])))
    assert cli.previous_results(str(path), fresh)["rows"] == []


def test_the_fuse_compile_system_passes_the_fallback_option(monkeypatch):
    compiled = []
    monkeypatch.setattr(torch, "compile", lambda function, **kwargs: compiled.append(kwargs) or function,
                        raising=False)
    step = systems._torch_compiled(lambda: None, "fuse-compile", "error")
    assert step() is None and compiled[-1] == {"backend": "fuse", "options": {"fallback": "error"}}
    systems._torch_compiled(lambda: None, "fuse-compile")
    assert compiled[-1] == {"backend": "fuse"}  # the backend's own default, as before
    systems._torch_compiled(lambda: None, "inductor", "error")
    assert compiled[-1] == {}
    with pytest.raises(ValueError, match="fuse_fallback must be 'eager' or 'error'"):
        systems.prepare("fuse-compile", "train", None, fuse_fallback="never")


def test_a_training_row_with_dropout_is_recorded_but_not_judged():
    def row(system, **extra):
        fields = {field: None for field in runner.ROW_FIELDS}
        fields.update(model="bert", batch=32, seq=128, mode="train", system=system, ms=10.0, **extra)
        return fields
    eager = row("eager", loss_rel_err=1e-3, grad_rel_err=1e-2, stochastic=True)
    noisy = row("fuse-compile", loss_rel_err=5e-2, grad_rel_err=0.5, stochastic=True)
    assert runner.judge(noisy, eager)["error"] is None and noisy["eager_grad_rel_err"] == 1e-2
    assert runner.judge(row("fuse-compile", loss_rel_err=5e-2), eager)["error"].startswith(runner.JUDGED)
    from fuse.harness import report
    text = report.markdown({"gpu": "NVIDIA H100", "date": "2026-12-01", "torch": "2.11", "command": "x",
                            "rows": [eager, noisy]})
    assert "recorded but not judged (each system draws masks of its own): bert B32 T128." in text


def test_a_custom_workload_without_shapes_counts_its_first_input(monkeypatch):
    module = type(sys)("zoo_test_plain")

    def plain(config="full"):
        model = torch.nn.Linear(4, 4)
        return {"model": model, "batch": ((torch.zeros(3, 5, 4),), ()), "loss_fn": lambda out: out.sum()}
    module.plain = plain
    monkeypatch.setitem(sys.modules, "zoo_test_plain", module)
    workload = workloads.custom("zoo_test_plain:plain")
    assert (workload.name, workload.batch, workload.seq, workload.preload) == ("zoo_test_plain:plain", None, None,
                                                                               None)
    built = workload.build()
    assert built.tokens == 15 and built.train_flops_per_token == 6 * 20


def test_the_runner_calls_a_custom_modules_preload_once(monkeypatch):
    calls = []
    monkeypatch.setattr(zoo_models, "preload", lambda: calls.append(1))
    chosen = [workloads.custom(f"zoo_models:{zoo_models.MODELS[n]}", name=n) for n in ("bert", "gpt2")]
    workloads.preload(chosen)
    assert calls == [1]


def test_the_readme_section_is_pending_until_a_run_writes_latest(tmp_path):
    assert zoo_report.section(str(tmp_path / "missing.json")).startswith("Results pending")
    readme = (ZOO / "README.md").read_text()
    assert zoo_report.BEGIN in readme and zoo_report.END in readme
    if not (ZOO / "latest.json").exists():
        assert "Results pending" in readme.split(zoo_report.BEGIN)[1].split(zoo_report.END)[0]

    row = {field: None for field in runner.ROW_FIELDS}
    row.update(model="bert", batch=32, seq=128, mode="train", system="eager", ms=12.5)
    results = tmp_path / "latest.json"
    results.write_text(json.dumps({"gpu": "NVIDIA H100", "date": "2026-12-01", "torch": "2.11",
                                   "command": "bench/zoo/run.py", "rows": [row]}))
    copy = tmp_path / "README.md"
    copy.write_text(readme)
    zoo_report.write_readme(zoo_report.section(str(results)), str(copy))
    written = copy.read_text()
    assert "| bert B32 T128 | train | 12.5 |" in written and "Results pending" not in written
    assert written.split(zoo_report.BEGIN)[0] == readme.split(zoo_report.BEGIN)[0]
    assert written.split(zoo_report.END)[1] == readme.split(zoo_report.END)[1]
