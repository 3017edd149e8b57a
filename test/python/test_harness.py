"""The benchmark harness's bookkeeping (python/fuse/harness), without a GPU:
judging rows against eager autocast's error, continuing a run, the row
order, the child processes, the report and the command line's errors; and
workloads whose step is a whole optimizer step (a Recipe: bert-hf), with a
plain-PyTorch stand-in model: the recipe's parameter groups, the step each
system builds from it (eager, the torch.compile systems' loop, fuse-step's
compile_step call per micro-batch, run on the CPU interpreter), the f32
reference and errors of a first update, FLOPs. The measurements themselves
run on the GPU machine (test_jit_gpu.py runs the harness end to end on tiny
models)."""

import contextlib
import copy
import importlib.util
import inspect
import json
import os
import pathlib
import subprocess
import sys
import warnings

import pytest
import torch
import torch.nn.functional as F

from conftest import requires_transformers
from fuse.harness import cli, measure, report, runner, systems, workloads

ROOT = pathlib.Path(__file__).resolve().parents[2]


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
    (["gpt2", "--devices", "3"], "--devices '3': distinct GPU indices from 0 to 1 (this process sees 2 GPU(s))"),
    (["gpt2", "--devices", "0,0"], "distinct GPU indices from 0 to 1"),
    (["gpt2", "--devices", "1,2"], "distinct GPU indices from 0 to 1"),
    (["gpt2", "--devices", "first"], "comma-separated GPU indices or 'all'"),
])
def test_bad_command_lines_are_usage_errors(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(runner, "gpu_name", lambda: "a GPU")
    monkeypatch.setattr(runner, "gpu_count", lambda: 2)
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


# -- whole optimizer steps (workloads.Recipe) ---------------------------------------------------------


class MyRMSNorm(torch.nn.Module):
    """A normalisation layer torch does not know (named as HF names its own)."""

    def __init__(self, width):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Classifier(torch.nn.Module):
    """A plain stand-in for BertForSequenceClassification: token embeddings,
    a LayerNorm, a hidden layer, the mean over the attention mask, a
    linear head. Returns the logits."""

    def __init__(self, vocab=32, width=8, labels=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.norm = torch.nn.LayerNorm(width)
        self.hidden = torch.nn.Linear(width, width)
        self.head = torch.nn.Linear(width, labels)

    def forward(self, input_ids, attention_mask):
        h = torch.tanh(self.hidden(self.norm(self.embed(input_ids))))
        mask = attention_mask.unsqueeze(-1).to(h.dtype)
        return self.head((h * mask).sum(1) / mask.sum(1))


RECIPE = dict(optimizer="adamw", lr=1e-2, weight_decay=0.01, no_decay=True, max_grad_norm=0.5,
              accumulation_steps=4, options={"betas": (0.9, 0.999), "eps": 1e-8})


def standin_workload(config="tiny"):
    """A custom workload (module:function) with a recipe: 4 right-padded
    micro-batches of 3x6 tokens."""
    model = Classifier()
    generator = torch.Generator().manual_seed(1)
    micro_batches = []
    for _ in range(RECIPE["accumulation_steps"]):
        ids, mask = workloads.padded_tokens(3, 6, 32, 0, generator)
        micro_batches.append(({"input_ids": ids, "attention_mask": mask},
                              {"labels": torch.randint(0, 2, (3,), generator=generator)}))
    return {"model": model, "batch": micro_batches[0], "loss_fn": F.cross_entropy, "recipe": RECIPE, "micro_batches": micro_batches, "flops_per_token": 100.0}


standin_workload.shapes = {"tiny": (3, 6), "full": (3, 6)}


def _standin(seed=0):
    return workloads.custom(f"{__name__}:standin_workload", "tiny", name="standin").build(seed)


@pytest.fixture
def no_autocast(monkeypatch):
    """The systems' step function autocasts on CUDA; torch 1.13 without
    CUDA refuses that: here it is a no-op (everything stays f32)."""
    monkeypatch.setattr(torch, "autocast", lambda *args, **kwargs: contextlib.nullcontext())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _user_loop(model, recipe, micro_batches):
    """What a user writes: the micro-batches' (loss / N).backward(), clip,
    optimizer.step(), zero_grad. Returns the mean loss."""
    optimizer = recipe.build_optimizer(model)
    total = 0.0
    for inputs, targets in micro_batches:
        loss = F.cross_entropy(model(**inputs), targets["labels"]) / len(micro_batches)
        loss.backward()
        total += float(loss)
    torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.max_grad_norm)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return total


@pytest.mark.parametrize("fields, message", [
    (dict(optimizer="lamb"), "optimizer is one of adamw, adam, sgd, not 'lamb'"),
    (dict(lr=0), "lr must be a positive number"),
    (dict(weight_decay=-1), "weight_decay must be a non-negative number"),
    (dict(max_grad_norm=0.0), "max_grad_norm must be a positive number or None"),
    (dict(accumulation_steps=0), "accumulation_steps must be a positive integer"),
    (dict(accumulation_steps=True), "accumulation_steps must be a positive integer"),
    (dict(options={"lr": 1.0}), "options may not set lr"),
])
def test_a_recipe_checks_its_fields(fields, message):
    with pytest.raises(ValueError, match=message):
        workloads.Recipe(**fields)
    with pytest.raises(TypeError, match="a recipe is a fuse.harness.workloads.Recipe or a dict"):
        workloads.Recipe.of(["adamw"])


def test_a_recipe_exempts_biases_and_norm_weights_from_decay():
    model = torch.nn.Sequential(Classifier(), MyRMSNorm(2))
    exempt = {"0.embed.weight": False, "0.norm.weight": True, "0.norm.bias": True, "0.hidden.weight": False,
              "0.hidden.bias": True, "0.head.weight": False, "0.head.bias": True, "1.weight": True}
    assert workloads.Recipe.no_decay_names(model) == {n for n, e in exempt.items() if e}
    recipe = workloads.HF_RECIPE
    groups = recipe.param_groups(model)
    names = {id(p): n for n, p in model.named_parameters()}
    assert [[names[id(p)] for p in g["params"]] for g in groups] == [
        [n for n, e in exempt.items() if not e], [n for n, e in exempt.items() if e]]
    assert [g["weight_decay"] for g in groups] == [0.01, 0.0]
    optimizer = recipe.build_optimizer(model)
    assert type(optimizer) is torch.optim.AdamW and not optimizer.defaults.get("fused")  # fused: CUDA only
    assert [(g["lr"], tuple(g["betas"]), g["eps"]) for g in optimizer.param_groups] == [(5e-5, (0.9, 0.999), 1e-8)] * 2
    # Without no_decay: one group, every parameter decaying.
    plain = workloads.Recipe(weight_decay=0.1).param_groups(model)
    assert len(plain) == 1 and plain[0]["weight_decay"] == 0.1 and len(plain[0]["params"]) == len(exempt)


def test_hf_recipe_is_the_trainers_defaults_with_clipping_and_accumulation():
    recipe = workloads.HF_RECIPE
    assert (recipe.optimizer, recipe.lr, recipe.weight_decay, recipe.no_decay, recipe.max_grad_norm,
            recipe.accumulation_steps) == ("adamw", 5e-5, 0.01, True, 1.0, 4)
    assert json.loads(json.dumps(recipe.as_dict()))["options"] == {"betas": [0.9, 0.999], "eps": 1e-8}
    assert recipe.describe() == ("AdamW lr 5e-05, betas (0.9, 0.999), eps 1e-08, weight decay 0.01 (none on biases "
                                 "and norm weights), clip at 1, fused where torch has it; 4 micro-batches per update")


def test_bert_hf_is_a_training_only_builtin_of_four_micro_batches():
    assert "bert-hf" in workloads.MODEL_NAMES
    full, tiny = workloads.resolve("bert-hf"), workloads.resolve("bert-hf", "tiny")
    assert (full.batch, full.seq, full.modes) == (4, 512, ("train",))
    assert (tiny.batch, tiny.seq, tiny.modes) == (2, 32, ("train",))
    assert full.preload is not None  # transformers imported once, in the runner


def test_a_custom_workload_declares_a_recipe_and_its_micro_batches():
    built = _standin()
    assert isinstance(built.recipe, workloads.Recipe) and built.recipe.max_grad_norm == 0.5
    assert built.accumulation_steps == 4 and len(built.training_batches()) == 4
    assert built.train_inputs is built.micro_batches[0][0]
    ids = [b[0]["input_ids"] for b in built.micro_batches]
    assert not torch.equal(ids[0], ids[1])  # four different micro-batches
    for inputs, _ in built.micro_batches:  # right-padded: the first row full, the others shorter
        lengths = inputs["attention_mask"].sum(1)
        assert lengths[0] == 6 and (lengths[1:] < 6).all() and (lengths >= 3).all()
        assert (inputs["input_ids"][inputs["attention_mask"] == 0] == 0).all()
    assert built.tokens == 18 and "a step: AdamW lr 0.01" in built.description
    # FLOPs and so MFU count every micro-batch of the step.
    assert measure.step_flops(built, "train") == 100.0 * 18 * 4
    assert measure.step_flops(built, "infer") == 100.0 / 3 * 18


def test_micro_batches_must_match_the_recipe():
    built = _standin()
    wrong_count = dataclasses_replace(built, micro_batches=built.micro_batches[:3])
    with pytest.raises(ValueError, match="3 micro-batches for a recipe of 4 accumulation steps"):
        wrong_count.check()
    inputs, targets = built.micro_batches[1]
    longer = {"input_ids": torch.zeros(3, 7, dtype=torch.long), "attention_mask": inputs["attention_mask"]}
    wrong_shape = dataclasses_replace(built, micro_batches=[built.micro_batches[0], (longer, targets)]
                                      + built.micro_batches[2:])
    with pytest.raises(ValueError, match="micro-batch 1 is .*'input input_ids', 'int64', \\[3, 7\\]"):
        wrong_shape.check()
    with pytest.raises(ValueError, match="micro_batches need a recipe"):
        dataclasses_replace(built, recipe=None).check()


def dataclasses_replace(built, **changes):
    import dataclasses
    return dataclasses.replace(built, **changes)


def test_the_eager_recipe_step_is_the_loop_a_user_writes(no_autocast):
    built = _standin()
    mine = copy.deepcopy(built.model)
    prepared = systems.prepare("eager", "train", built)
    assert isinstance(prepared.optimizer, torch.optim.AdamW) and len(prepared.optimizer.param_groups) == 2
    loss = prepared.step()
    expected = _user_loop(mine, built.recipe, built.micro_batches)
    assert float(loss) == pytest.approx(expected, rel=1e-6)
    for p, q in zip(built.model.parameters(), mine.parameters()):
        assert torch.allclose(p, q, rtol=0, atol=1e-7) and p.grad is None


def test_reduce_overhead_keeps_the_gradients_and_marks_every_micro_batch(no_autocast, monkeypatch):
    """CUDA graph trees overwrite a gradient autograd kept from a micro-batch
    (torch issue 169545): the step keeps them allocated and zeroes them."""
    marks = []
    monkeypatch.setattr(systems, "_torch_compiled", lambda function, system, fallback="eager": function)
    monkeypatch.setattr(systems, "_step_marker", lambda system: lambda: marks.append(system))
    built = _standin()
    mine = copy.deepcopy(built.model)
    prepared = systems.prepare("inductor-reduce-overhead", "train", built)
    assert all(p.grad is not None and not p.grad.any() for p in built.model.parameters())
    prepared.step()
    _user_loop(mine, built.recipe, built.micro_batches)
    assert marks == ["inductor-reduce-overhead"] * 4
    for p, q in zip(built.model.parameters(), mine.parameters()):
        assert torch.allclose(p, q, rtol=0, atol=1e-7)
        assert p.grad is not None and not p.grad.any()  # zeroed, not dropped
    eager = systems.prepare("inductor", "train", _standin())
    eager.step()
    assert all(p.grad is None for p in eager.optimizer.param_groups[0]["params"])


class _FakeStep:
    """Stands in for fuse.compile_step's TrainStep: records its calls."""

    def __init__(self, model, loss_fn, batch, optimizer=None, **options):
        self.model, self.batch, self.optimizer, self.options = model, batch, optimizer, options
        self.calls, self.updated, self.micro_step, self.timings = [], False, 0, {"export": 1.0}

    def __call__(self, batch):
        self.calls.append(batch)
        self.micro_step = (self.micro_step + 1) % self.options["accumulation_steps"]
        self.updated = self.micro_step == 0
        return torch.tensor(float(len(self.calls)))

    def close(self):
        pass


def test_fuse_step_compiles_the_recipe_and_calls_it_once_per_micro_batch(monkeypatch):
    import fuse
    made = []
    monkeypatch.setattr(fuse, "compile_step", lambda *args, **kwargs: made.append(_FakeStep(*args, **kwargs))
                        or made[-1])
    built = _standin()
    prepared = systems.prepare("fuse-step", "train", built, cache_dir="/cache")
    (step,) = made
    assert step.model is built.model and step.batch is built.micro_batches[0]
    assert step.optimizer is prepared.optimizer and isinstance(step.optimizer, torch.optim.AdamW)
    assert [g["weight_decay"] for g in step.optimizer.param_groups] == [0.01, 0.0]
    assert step.options == {"amp": "bf16", "cache_dir": "/cache", "max_grad_norm": 0.5, "accumulation_steps": 4}
    assert float(prepared.step()) == pytest.approx((1 + 2 + 3 + 4) / 4)  # the micro-batches' mean loss
    assert step.calls == built.micro_batches and prepared.phases() == {"export": 1.0}
    step.micro_step = 1  # out of step with the recipe: said, not measured
    with pytest.raises(RuntimeError, match="did not update after 4 micro-batches"):
        prepared.step()


def test_fuse_step_runs_the_recipe_as_the_eager_loop_does(no_autocast, monkeypatch, tmp_path):
    """The real compile_step (AdamW in two groups, clipping, 4 micro-batches
    accumulated) on the CPU reference interpreter, against eager f32."""
    import fuse
    from step_interpreter import on_interpreter
    compile_step = fuse.compile_step

    def on_the_cpu(model, loss_fn, batch, optimizer=None, **options):
        options.update(arch="sm_90a", cache_dir=False)
        return on_interpreter(compile_step(model, loss_fn, batch, optimizer=optimizer, **options), tmp_path)

    monkeypatch.setattr(fuse, "compile_step", on_the_cpu)
    built = _standin()
    reference = measure.f32_reference(built, "train")
    prepared = systems.prepare("fuse-step", "train", built)
    loss = prepared.step()
    row = measure.errors("train", loss.detach().float(), built.model, reference, built.recipe, prepared.optimizer)
    assert "error" not in row
    assert row["loss_rel_err"] < 1e-5 and row["grad_rel_err"] < 1e-5 and row["update_rel_err"] < 1e-4
    assert all(p.grad is None for p in built.model.parameters())  # the update ran in the graph


def test_a_recipe_step_is_judged_by_its_first_update(no_autocast):
    built = _standin()
    before = {n: p.detach().clone() for n, p in built.model.named_parameters()}
    reference = measure.f32_reference(built, "train")
    assert set(reference) == {"value", "grads", "updates", "initial"}
    for name, p in built.model.named_parameters():  # the reference leaves the weights as they were
        assert torch.equal(p, before[name]) and p.grad is None
    prepared = systems.prepare("eager", "train", built)
    loss = prepared.step()
    row = measure.errors("train", loss.detach().float(), built.model, reference, built.recipe, prepared.optimizer)
    assert row["loss_rel_err"] < 1e-6 and row["grad_rel_err"] < 1e-6 and row["update_rel_err"] < 1e-5
    # The gradients are read back from AdamW's first moment, as every system leaves it.
    exp_avg = prepared.optimizer.state[built.model.head.weight]["exp_avg"]
    assert torch.allclose(exp_avg / 0.1, reference["grads"]["head.weight"], atol=1e-6)
    with torch.no_grad():
        built.model.head.weight.add_(1e-2)
    worse = measure.errors("train", loss.detach().float(), built.model, reference, built.recipe, prepared.optimizer)
    assert worse["update_rel_err"] > 0.1
    with torch.no_grad():
        built.model.head.bias.fill_(float("nan"))
    broken = measure.errors("train", loss.detach().float(), built.model, reference, built.recipe,
                            prepared.optimizer)
    assert broken["error"] == "NaN or inf in head.bias after the first update"


def test_the_runner_measures_only_the_modes_a_workload_has(monkeypatch):
    measured = []

    def fake_row(workload, mode, system, settings=None, device=None):
        measured.append((workload.name, mode, system))
        return dict(_row(workload.name, mode, system), error=None)

    monkeypatch.setattr(runner, "measure_row", fake_row)
    log = __import__("io").StringIO()
    results = {"rows": []}
    runner.run([workloads.resolve("bert-hf", "tiny"), workloads.resolve("nanogpt", "tiny")], ["train", "infer"],
               ["eager"], results, log=log)
    assert measured == [("bert-hf", "train", "eager"), ("nanogpt", "train", "eager"), ("nanogpt", "infer", "eager")]
    assert "bert-hf infer: not a mode of this workload (it has train)" in log.getvalue()


def test_devices_are_indices_one_alone_included():
    parser = cli.parser_for("run.py", "", "gpt2")
    assert cli.device_list(parser, "0", 1) == [0]
    assert cli.device_list(parser, "1", 2) == [1]
    assert cli.device_list(parser, "0,2", 4) == [0, 2]
    assert cli.device_list(parser, "all", 3) == [0, 1, 2]
    assert cli.device_list(parser, None, 3) is None


def test_rows_spread_over_devices_run_side_by_side_one_per_gpu(monkeypatch):
    import threading
    import time as time_
    running, seen, lock = {}, [], threading.Lock()

    def fake_row(workload, mode, system, settings=None, device=None):
        with lock:
            assert device not in running, f"two rows at once on GPU {device}"
            running[device] = system
            seen.append((system, device, len(running)))
        time_.sleep(0.05)
        with lock:
            del running[device]
        return dict(_row(workload.name, mode, system), error=None)

    monkeypatch.setattr(runner, "measure_row", fake_row)
    saved = []
    results = {"rows": []}
    runner.run([workloads.resolve("nanogpt", "tiny")], ["train", "infer"], ["eager", "inductor", "fuse-compile"],
               results, log=__import__("io").StringIO(), devices=[0, 3], save=lambda r: saved.append(len(r["rows"])))
    assert len(results["rows"]) == 6 and saved[-1] == 6
    assert {device for _, device, _ in seen} == {0, 3}
    assert max(concurrent for _, _, concurrent in seen) == 2
    # Sorted as a serial run would leave them, whatever order they ended in.
    assert [(r["mode"], r["system"]) for r in results["rows"]] == [
        (m, s) for m in ("train", "infer") for s in ("eager", "inductor", "fuse-compile")]
    assert "2 rows at a time" in runner.method(dict(runner.DEFAULT_SETTINGS, devices=2))["processes"]


def test_a_continued_run_keeps_the_models_it_holds_in_their_places(monkeypatch):
    monkeypatch.setattr(runner, "measure_row",
                        lambda workload, mode, system, settings=None, device=None:
                        dict(_row(workload.name, mode, system), error=None))
    results = {"rows": [_row("gpt2", "train", "eager"), _row("gpt2", "infer", "eager"),
                        _row("nanogpt", "train", "eager")]}
    runner.run([workloads.resolve("nanogpt", "tiny"), workloads.resolve("gpt2", "tiny")], ["infer", "train"],
               ["eager", "inductor"], results, log=__import__("io").StringIO())
    assert [(r["model"], r["mode"], r["system"]) for r in results["rows"]] == [
        ("gpt2", "train", "eager"), ("gpt2", "train", "inductor"), ("gpt2", "infer", "eager"),
        ("gpt2", "infer", "inductor"), ("nanogpt", "train", "eager"), ("nanogpt", "train", "inductor"),
        ("nanogpt", "infer", "eager"), ("nanogpt", "infer", "inductor")]


def test_a_row_on_a_device_sees_only_that_gpu(monkeypatch):
    envs = []

    def child(function, *args, env=None, **kwargs):
        envs.append(dict(env))
        return {"ms": 1.0}
    monkeypatch.setattr(runner, "run_in_child", child)
    runner.measure_row(workloads.resolve("nanogpt", "tiny"), "train", "eager", device=2)
    assert envs[0]["CUDA_VISIBLE_DEVICES"] == "2" and "FUSE_CACHE_DIR" in envs[0]


def test_the_report_says_which_rows_are_whole_optimizer_steps():
    recipe = workloads.HF_RECIPE.as_dict()
    rows = [_row("bert-hf", system="eager", batch=4, seq=512, ms=80.0, recipe=recipe, stochastic=True),
            _row("bert-hf", system="fuse-step", batch=4, seq=512, error="FuseError: boom")]
    results = {"gpu": "NVIDIA H100", "date": "2026-12-01", "torch": "2.11", "command": "bench/run.py", "rows": rows}
    text = report.markdown(results)
    assert "| bert-hf B4 T512 x4 | train | 80.0 | failed |" in text
    assert "- bert-hf B4 T512 x4 train fuse-step: FuseError: boom" in text
    assert ("bert-hf B4 T512 x4: AdamW lr 5e-05, betas (0.9, 0.999), eps 1e-08, weight decay 0.01 (none on biases "
            "and norm weights), clip at 1, fused where torch has it; 4 micro-batches per update.") in text
    assert "not judged (each system draws masks of its own): bert-hf B4 T512 x4." in text
    assert "recipe" in runner.EXTRA_FIELDS and "update_rel_err" in runner.EXTRA_FIELDS
    assert "micro-batch" in runner.method(runner.DEFAULT_SETTINGS)["recipe"]


def test_bench_run_help_lists_bert_hf():
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--help"], capture_output=True,
                            text=True, timeout=120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert result.returncode == 0, result.stderr
    assert "bert-hf" in result.stdout


@requires_transformers
def test_bert_hf_tiny_is_hf_bert_with_its_default_dropout_and_a_padded_batch(no_autocast):
    built = workloads.resolve("bert-hf", "tiny").build()
    model, config = built.model, built.model.config
    assert type(model).__name__ == "BertForSequenceClassification"
    assert config.hidden_dropout_prob == 0.1 and config.attention_probs_dropout_prob == 0.1
    assert getattr(config, "_attn_implementation", "sdpa") == "sdpa"
    assert built.stochastic and built.recipe is workloads.HF_RECIPE and len(built.micro_batches) == 4
    for inputs, targets in built.micro_batches:
        assert set(inputs) == {"input_ids", "attention_mask"} and tuple(inputs["input_ids"].shape) == (2, 32)
        lengths = inputs["attention_mask"].sum(1)
        assert lengths[0] == 32 and lengths[1] < 32
        assert tuple(targets["labels"].shape) == (2,)
    exempt = workloads.Recipe.no_decay_names(model)
    assert "bert.embeddings.LayerNorm.weight" in exempt and "classifier.bias" in exempt
    assert "classifier.weight" not in exempt and "bert.embeddings.word_embeddings.weight" not in exempt
    before = model.classifier.weight.detach().clone()
    prepared = systems.prepare("eager", "train", built)
    loss = prepared.step()
    assert torch.isfinite(loss) and not torch.equal(before, model.classifier.weight)


def test_no_warm_compile_skips_the_second_process_and_says_so(monkeypatch):
    calls = []

    def child(function, *args, env=None, **kwargs):
        inspect.signature(function).bind(*args, **kwargs)  # the child would call it with these
        calls.append(function.__name__)
        return {"compile_warm_s": 0.5} if function.__name__ == "measure_warm_compile" else {"ms": 1.0}
    monkeypatch.setattr(runner, "run_in_child", child)
    workload = workloads.resolve("nanogpt", "tiny")
    row = runner.measure_row(workload, "train", "fuse-compile")
    assert calls == ["measure", "measure_warm_compile"] and row["compile_warm_s"] == 0.5
    calls.clear()
    row = runner.measure_row(workload, "train", "fuse-compile", settings={"warm_compile": False})
    assert calls == ["measure"] and row["compile_warm_s"] is None
    assert "not measured" in runner.method(dict(runner.DEFAULT_SETTINGS, warm_compile=False))["compile"]
    assert "--no-warm-compile" in cli.parser_for("run.py", "", "nanogpt").format_help()


def test_compile_collect_keeps_the_newest_row_and_says_what_is_left(tmp_path):
    spec = importlib.util.spec_from_file_location("compile_collect", ROOT / "bench" / "compile" / "collect.py")
    collect = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(collect)

    def results(rows):
        return {"gpu": "G", "date": "D", "torch": "T", "rows": [dict(model="m", mode="train", **r) for r in rows]}
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(results([
        {"system": "inductor", "compile_cold_s": 30.0, "compile_warm_s": 25.0},
        {"system": "fuse-compile", "compile_cold_s": 20.0, "compile_warm_s": 18.0},
        {"system": "eager", "compile_cold_s": None}])))
    new.write_text(json.dumps(results([
        {"system": "fuse-compile", "compile_cold_s": 12.0, "compile_warm_s": None,
         "compile_phases": {"retrace": 2.0, "load": 1.0}},
        {"system": "fuse-step", "compile_cold_s": 4.0, "compile_warm_s": 0.4}])))
    out = tmp_path / "latest.json"
    assert collect.main([str(old), str(new), "-o", str(out)]) == 0
    rows = {r["system"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"inductor", "fuse-compile", "fuse-step"}
    fuse = rows["fuse-compile"]
    assert fuse["cold_s"] == 12.0 and fuse["outside_fuse_s"] == 9.0
    assert "cold 12.0 s > 5 s" in fuse["left"] and "warm not measured" in fuse["left"] and "2.5x" in fuse["left"]
    assert rows["fuse-step"]["left"] == ""  # 4 s cold, 0.4 s warm, 7.5x Inductor's
    table = collect.markdown(json.loads(out.read_text()))
    assert "| m | train | 30.0 / 25.0 | - | 12.0 / - | 4.0 / 0.4 | retrace 2.0, load 1.0; outside them 9.0 |" in table


def test_the_idle_baseline_waits_until_the_device_memory_settles(monkeypatch):
    # The row before may still be giving its memory back: the baseline is the
    # reading once it stops changing, not the first one.
    from fuse.harness import measure
    readings = iter([9, 7, 5, 5, 5])
    monkeypatch.setattr(measure, "used_device_bytes", lambda: next(readings))
    assert measure.idle_device_bytes(settle_s=5.0, interval_s=0.0) == 5
    readings = iter(range(1000))  # never settles: the last reading when time is up
    assert measure.idle_device_bytes(settle_s=0.01, interval_s=0.0) > 0
