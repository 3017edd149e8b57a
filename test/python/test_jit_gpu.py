"""Fuse from Python on the GPU: fuse.compile, torch.compile(backend="fuse")
(inference and training through AOTAutograd), fuse.compile_step (gradients,
and 50 AdamW steps of GPT-2 tiny against eager's loss curve), the profiler's
report, and bad calls that must raise clear exceptions, not crash.

Tolerances, as every Fuse check sets them (include/fuse/Support/Comparison.h;
docs/ARCHITECTURE.md says why): relative error ‖a − b‖/‖b‖ ≤ 1e-4 on the
f32 path (amp=None, TF32 off on both sides), ≤ 2e-2 with bf16 mixed
precision; NaN never passes. Needs torch 2.x and a CUDA GPU (the GPU
machine), the model tests also HuggingFace transformers: skipped, with the
reason, elsewhere.
"""

import copy
import json
import math
import re
import warnings

import pytest
import torch

from conftest import MLP, relative_error, requires_cuda, requires_torch2, requires_transformers

import fuse
from fuse import backend, models

pytestmark = [pytest.mark.gpu, requires_torch2, requires_cuda, pytest.mark.usefixtures("exact_f32")]

TOLERANCE = {None: 1e-4, "bf16": 2e-2}


def assert_close(actual, expected, tolerance, what=""):
    """‖a − b‖ ≤ tolerance·‖b‖, or ≤ 1e-4·tolerance for references that are
    zero up to rounding (a gradient that vanishes mathematically, such as
    attention's key bias), as fuse-run --check-pipeline judges."""
    error = relative_error(actual, expected)
    difference = float((actual.detach().double() - expected.detach().double()).norm())
    assert error <= tolerance or difference <= 1e-4 * tolerance, \
        f"{what}: relative error {error:.3e} (difference {difference:.3e}) over {tolerance:g}"


def _mlp_inputs():
    return (torch.randn(4, 32, device="cuda"), torch.randn(64, 32, device="cuda") / 6,
            torch.randn(64, device="cuda"))


# -- fuse.compile ---------------------------------------------------------------------

@pytest.mark.parametrize("amp", [None, "bf16"])
def test_compiled_text_matches_torch(amp, cache):
    compiled = fuse.compile(MLP, amp=amp, cache_dir=cache)
    x, w, b = _mlp_inputs()
    expected = torch.nn.functional.gelu(x.double() @ w.double().t() + b.double(), approximate="tanh")
    assert relative_error(compiled(x, w, b), expected) <= TOLERANCE[amp]
    # Into given outputs, poisoned first: every element is written.
    out = torch.full((4, 64), float("nan"), device="cuda")
    compiled.run([x, w, b], [out])
    assert relative_error(out, expected) <= TOLERANCE[amp]
    # On a side stream: the step follows torch's current stream.
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        y = compiled(x, w, b)
    stream.synchronize()
    assert relative_error(y, expected) <= TOLERANCE[amp]


def test_second_compile_comes_from_the_cache(cache):
    first = fuse.compile(MLP, amp=None, cache_dir=cache)
    second = fuse.compile(MLP, amp=None, cache_dir=cache)
    assert second.cache_hit and second.session_report["compiled"] == 0
    x, w, b = _mlp_inputs()
    assert torch.equal(first(x, w, b), second(x, w, b))


def test_bad_calls_raise_clear_errors(cache):
    compiled = fuse.compile(MLP, amp=None, cache_dir=cache)
    x, w, b = _mlp_inputs()
    with pytest.raises(ValueError, match=r"input 'x' \(#0\): is on cpu, but the compiled graph runs on cuda:0"):
        compiled(x.cpu(), w, b)
    with pytest.raises(TypeError, match=r"input 'x' \(#0\): expected f32 \[4, 32\], got bf16 \[4, 32\]"):
        compiled(x.bfloat16(), w, b)
    with pytest.raises(ValueError, match=r"input 'w' \(#1\): expected f32 \[64, 32\], got f32 \[32, 64\]"):
        compiled(x, w.t().contiguous(), b)
    with pytest.raises(ValueError, match=r"input 'w' \(#1\): is not contiguous \(strides \(1, 64\)"):
        compiled(x, torch.randn(32, 64, device="cuda").t(), b)
    with pytest.raises(TypeError, match=r"takes 3 inputs \(x, w, b\); 2 were given"):
        compiled(x, w)
    with pytest.raises(TypeError, match=r"input 'b' \(#2\): expected a torch.Tensor"):
        compiled(x, w, 1.0)
    with pytest.raises(TypeError, match=r"output 'y' \(#0\): expected f32 \[4, 64\], got f16"):
        compiled.run([x, w, b], [torch.empty(4, 64, device="cuda", dtype=torch.float16)])
    expected = torch.nn.functional.gelu(x @ w.t() + b, approximate="tanh")
    assert relative_error(compiled(x, w, b), expected) <= 1e-4  # still fine afterwards


def test_a_parameter_checked_once_is_checked_again_when_it_changes(cache):
    """Parameters that passed are not checked again while they are the same
    object at the same address; a parameter whose data is replaced is."""
    compiled = fuse.compile(MLP, amp=None, cache_dir=cache)
    x, w, b = _mlp_inputs()
    weight = torch.nn.Parameter(w)
    expected = torch.nn.functional.gelu(x @ w.t() + b, approximate="tanh")
    for _ in range(2):
        assert relative_error(compiled(x, weight, b), expected) <= 1e-4
    weight.data = w.t().contiguous()  # the same object, another address and shape
    with pytest.raises(ValueError, match=r"input 'w' \(#1\): expected f32 \[64, 32\], got f32 \[32, 64\]"):
        compiled(x, weight, b)
    weight.data = w.clone()
    assert relative_error(compiled(x, weight, b), expected) <= 1e-4


def test_profile_report(cache, tmp_path):
    compiled = fuse.compile(MLP, amp="bf16", cache_dir=cache)
    x, w, b = _mlp_inputs()
    report = fuse.profile(compiled, x, w, b, iterations=5)
    assert isinstance(report, fuse.Profile)
    assert report.step_ms > 0 and report.kernels >= 1 and report.gemms == 1
    assert report.steps and all(s.time_ms is None or s.time_ms >= 0 for s in report.steps)
    assert "ms" in str(report) and len(str(report).splitlines()) > 3
    assert json.loads(report.to_json())["schema"] == "fuse-profile/1"
    trace = tmp_path / "trace.json"
    report.save_trace(trace)
    assert json.loads(trace.read_text())
    # The inputs are untouched by the profiling runs.
    expected = torch.nn.functional.gelu(x @ w.t() + b, approximate="tanh")
    assert relative_error(compiled(x, w, b), expected) <= 2e-2


# -- torch.compile(backend="fuse") ----------------------------------------------------

def _tiny(name, mode):
    spec = models.build(name, "tiny")
    model = spec.module.cuda()
    model.train(mode == "train")
    inputs = {k: v.cuda() for k, v in spec.inputs.items()}
    targets = [v.cuda() for v in spec.targets.values()]
    return model, inputs, targets, spec.loss_fn


def test_backend_is_registered():
    assert "fuse" in torch._dynamo.list_backends(exclude_tags=())


@requires_transformers
@pytest.mark.parametrize("name", ["gpt2", "bert", "llama"])
def test_backend_inference_matches_eager(name, cache):
    model, inputs, _, _ = _tiny(name, "infer")
    with torch.no_grad():
        expected = model(**inputs).logits
        before = backend.stats["compiled"]
        compiled = torch.compile(model, backend="fuse", options={"amp": None, "fallback": "error", "cache_dir": cache})
        got = compiled(**inputs).logits
    assert backend.stats["compiled"] > before
    assert relative_error(got, expected) <= TOLERANCE[None]


@requires_transformers
@pytest.mark.parametrize("name,amp", [("gpt2", None), ("bert", None),
                                      ("llama", None), ("gpt2", "bf16")])
def test_backend_training_matches_eager(name, amp, cache):
    model, inputs, targets, loss_fn = _tiny(name, "train")
    loss = loss_fn(model(**inputs), *targets)
    loss.backward()
    expected_loss = loss.detach()
    expected_grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    compiled = torch.compile(model, backend="fuse", options={"amp": amp, "fallback": "error", "cache_dir": cache})
    for _ in range(2):  # the second call replays what the first compiled
        model.zero_grad(set_to_none=True)
        loss = loss_fn(compiled(**inputs), *targets)
        loss.backward()
    assert relative_error(loss, expected_loss) <= TOLERANCE[amp]
    for n, p in model.named_parameters():
        assert_close(p.grad, expected_grads[n], TOLERANCE[amp], n)


@pytest.mark.parametrize("amp", [None, "bf16"])
def test_backend_trains_a_plain_sdpa_module(amp, cache):
    """A hand-written nanoGPT-style module through the backend with no
    fallback: its backward takes the SDPA output saved with [B, T, H, D]
    memory (a view of its permutation must re-trace) and the attention's
    uint64 RNG state (which Fuse's attention does not read)."""
    from fuse.harness.nanogpt import SIZES, NanoGPT
    torch.manual_seed(0)
    model = NanoGPT(SIZES["tiny"]).cuda()
    idx = torch.randint(0, SIZES["tiny"].vocab_size, (2, 64), device="cuda")
    targets = torch.randint(0, SIZES["tiny"].vocab_size, (2, 64), device="cuda")
    expected_loss = model(idx, targets)
    expected_loss.backward()
    expected_grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    before = backend.stats["fallbacks"]
    compiled = torch.compile(model, backend="fuse", options={"amp": amp, "fallback": "error", "cache_dir": cache})
    for _ in range(2):
        model.zero_grad(set_to_none=True)
        loss = compiled(idx, targets)
        loss.backward()
    assert backend.stats["fallbacks"] == before
    assert relative_error(loss, expected_loss) <= TOLERANCE[amp]
    for n, p in model.named_parameters():
        assert_close(p.grad, expected_grads[n], TOLERANCE[amp], n)


class _TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = torch.nn.Linear(32, 64), torch.nn.Linear(64, 32)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x))).square().mean()


def test_backend_graphs_name_the_models_source_lines(cache, compiled_texts):
    """The backend's Fuse graphs carry the model's source lines (dynamo's,
    copied through the re-trace), in both the forward and the backward."""
    texts = compiled_texts
    model = _TwoLayers().cuda()
    compiled = torch.compile(model, backend="fuse", options={"amp": None, "fallback": "error", "cache_dir": cache})
    compiled(torch.randn(8, 32, device="cuda")).backward()
    assert len(texts) == 2
    # The path is as the exporter shortens it: relative to the working
    # directory where it lies below it (pytest run from the repository or
    # from test/python), else absolute (ctest's build directory).
    located = re.compile(r'"(?:[^"]*/)?test_jit_gpu\.py":\d+:')
    for text in texts:
        assert located.search(text), text[-2000:]


@requires_transformers
def test_backend_recompiles_for_a_new_shape(cache):
    model, inputs, _, _ = _tiny("gpt2", "infer")
    compiled = torch.compile(model, backend="fuse", options={"amp": None, "fallback": "error", "cache_dir": cache})
    with torch.no_grad(), warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        for batch, length in ((2, 32), (3, 32), (2, 16), (1, 24)):
            ids = inputs["input_ids"][:1].repeat(batch, 1)[:, :length].contiguous()
            assert relative_error(compiled(input_ids=ids).logits, model(input_ids=ids).logits) <= 1e-4


def test_backend_falls_back_to_eager_with_one_warning(cache):
    class Unmapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(16, 16)

        def forward(self, x):
            return torch.cumprod(self.linear(x), dim=1)

    model = Unmapped().cuda()
    x = torch.randn(4, 16, device="cuda")
    compiled = torch.compile(model, backend="fuse", options={"cache_dir": cache})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.no_grad():
            got = compiled(x)
            got = compiled(x)
    ours = [w for w in caught if "fuse:" in str(w.message)]
    assert len(ours) == 1 and "aten.cumprod" in str(ours[0].message), [str(w.message) for w in caught]
    assert torch.allclose(got, model(x))
    compiled = torch.compile(model, backend="fuse", options={"fallback": "error", "cache_dir": cache})
    with pytest.raises(Exception, match="cumprod"):
        with torch.no_grad():
            compiled(torch.randn(5, 16, device="cuda"))


# -- fuse.compile_step ------------------------------------------------------------------

@requires_transformers
@pytest.mark.parametrize("name,amp", [("gpt2", None), ("bert", None), ("llama", None), ("gpt2", "bf16")])
def test_compile_step_gradients_match_eager(name, amp, cache):
    model, inputs, targets, loss_fn = _tiny(name, "train")
    loss = loss_fn(model(**inputs), *targets)
    loss.backward()
    expected_loss = loss.detach()
    expected_grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    for p in model.parameters():
        p.grad = torch.full_like(p, float("nan"))  # poisoned: the step must set every element
    step = fuse.compile_step(model, loss_fn, (inputs, targets), amp=amp, cache_dir=cache)
    loss = step(inputs, targets)
    assert relative_error(loss, expected_loss) <= TOLERANCE[amp]
    for n, p in model.named_parameters():
        assert_close(p.grad, expected_grads[n], TOLERANCE[amp], n)
    # grads set to None are allocated once and reused.
    model.zero_grad(set_to_none=True)
    step((inputs, targets))
    first = [p.grad for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    step((inputs, targets))
    assert all(a is b for a, b in zip(first, (p.grad for p in model.parameters())))


@requires_transformers
def test_compile_step_follows_moved_parameters_and_gradients(cache):
    # A call reuses the last call's bindings while the memory stays put; a
    # parameter moved to new memory, or a gradient tensor the caller swapped
    # in, is bound again (and checked).
    model, inputs, targets, loss_fn = _tiny("gpt2", "train")
    step = fuse.compile_step(model, loss_fn, (inputs, targets), amp=None, cache_dir=cache)
    step(inputs, targets)
    step(inputs, targets)
    for p in model.parameters():
        p.data = p.data * 0.5  # new memory, new values
    own = {n: torch.full_like(p, float("nan")) for n, p in model.named_parameters()}
    for n, p in model.named_parameters():
        p.grad = own[n]
    loss = step(inputs, targets)
    reference = copy.deepcopy(model)
    for p in reference.parameters():
        p.grad = None
    expected_loss = loss_fn(reference(**inputs), *targets)
    expected_loss.backward()
    assert relative_error(loss, expected_loss.detach()) <= TOLERANCE[None]
    for n, p in reference.named_parameters():
        assert model.get_parameter(n).grad is own[n]
        assert_close(own[n], p.grad, TOLERANCE[None], n)
    # A gradient tensor the step cannot bind is refused, naming the parameter.
    name, matrix = next((n, p) for n, p in model.named_parameters() if p.dim() == 2)
    matrix.grad = torch.empty(matrix.shape[::-1], device=matrix.device).t()
    with pytest.raises(ValueError, match=f"'grad.{re.escape(name)}'.*not contiguous"):
        step(inputs, targets)


@requires_transformers
def test_compile_step_binds_a_reloaded_optimizer_state(cache):
    # load_state_dict gives the optimizer new moment tensors: the next call
    # must update those, not the ones the step bound first.
    model, inputs, targets, loss_fn = _tiny("gpt2", "train")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step = fuse.compile_step(model, loss_fn, (inputs, targets), optimizer=optimizer, cache_dir=cache)
    step(inputs, targets)
    saved = copy.deepcopy(optimizer.state_dict())
    step(inputs, targets)
    optimizer.load_state_dict(saved)
    first = next(model.parameters())
    before = optimizer.state[first]["exp_avg"].clone()
    step(inputs, targets)
    state = optimizer.state[first]
    assert float(state["step"]) == 2
    assert not torch.equal(state["exp_avg"], before)


@requires_transformers
def test_fifty_adamw_steps_track_eager_gpt2_tiny(cache):
    torch.manual_seed(0)
    spec = models.build("gpt2", "tiny")
    eager_model = spec.module.cuda().train()
    fuse_model = models.build("gpt2", "tiny").module.cuda().train()
    fuse_model.load_state_dict(eager_model.state_dict())

    def adamw(model):
        decay = [p for p in model.parameters() if p.dim() >= 2]
        other = [p for p in model.parameters() if p.dim() < 2]
        return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                                 lr=1e-3, betas=(0.9, 0.95))

    eager_opt, fuse_opt = adamw(eager_model), adamw(fuse_model)
    generator = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(4):
        ids = torch.randint(0, 512, (2, 33), generator=generator).cuda()
        batches.append(({"input_ids": ids[:, :-1].contiguous()}, [ids[:, 1:].contiguous()]))
    step = fuse.compile_step(fuse_model, spec.loss_fn, batches[0], optimizer=fuse_opt, amp="bf16", cache_dir=cache)
    eager_losses, fuse_losses = [], []
    for i in range(50):
        inputs, targets = batches[i % len(batches)]
        eager_opt.zero_grad(set_to_none=True)
        loss = spec.loss_fn(eager_model(**inputs), *targets)
        loss.backward()
        eager_opt.step()
        eager_losses.append(float(loss.detach()))
        fuse_losses.append(float(step(inputs, targets)))
    assert eager_losses[-1] < eager_losses[0] - 0.5, "the eager run should learn the 4 batches"
    worst = max(abs(f - e) / abs(e) for f, e in zip(fuse_losses, eager_losses))
    assert worst <= 0.02, list(zip(eager_losses, fuse_losses))
    # The optimizer's own state was updated in place.
    state = fuse_opt.state[next(fuse_model.parameters())]
    assert float(state["step"]) == 50 and float(state["exp_avg_sq"].abs().sum()) > 0
    # The weights moved together (all of them as one vector; single small
    # vectors such as a layer norm's bias drift further under bf16).
    flat = lambda m: torch.cat([p.detach().flatten() for p in m.parameters()])
    assert relative_error(flat(fuse_model), flat(eager_model)) <= 2e-2


@requires_transformers
def test_compile_step_rejects_a_batch_of_another_shape(cache):
    model, inputs, targets, loss_fn = _tiny("gpt2", "train")
    step = fuse.compile_step(model, loss_fn, (inputs, targets), amp=None, cache_dir=cache)
    longer = {"input_ids": torch.cat([inputs["input_ids"]] * 2)}
    with pytest.raises(ValueError, match=r"input 'input_ids' \(#\d+\): expected i64 \[2, 32\], got i64 \[4, 32\].*"
                                         r"compiled for the example batch"):
        step(longer, [torch.cat(targets * 2)])
    with pytest.raises(ValueError, match="is on cpu"):
        step({"input_ids": inputs["input_ids"].cpu()}, targets)
    with pytest.raises(TypeError, match="batch tensors"):
        step(inputs, [])
    assert math.isfinite(float(step(inputs, targets)))


@requires_transformers
def test_compile_step_f16_carries_the_loss_scale(cache):
    model, inputs, targets, loss_fn = _tiny("gpt2", "train")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    step = fuse.compile_step(model, loss_fn, (inputs, targets), optimizer=optimizer, amp="f16", cache_dir=cache)
    losses = [float(step(inputs, targets)) for _ in range(3)]
    assert all(math.isfinite(x) for x in losses)
    # found_inf says whether the last step overflowed (and so changed nothing).
    assert step.found_inf is not None and step.found_inf.dtype == torch.bool


@requires_transformers
def test_compile_step_profile_leaves_the_model_alone(cache):
    model, inputs, targets, loss_fn = _tiny("gpt2", "train")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step = fuse.compile_step(model, loss_fn, (inputs, targets), optimizer=optimizer, cache_dir=cache)
    before = [p.detach().clone() for p in model.parameters()]
    report = step.profile(inputs, targets, iterations=3)
    assert report.step_ms > 0
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))


@requires_transformers
def test_the_harness_measures_every_system(tmp_path):
    """The benchmark harness end to end on GPT-2 tiny (each row in a child
    process, so it runs as its own command: this process has used CUDA)."""
    import subprocess
    import sys
    out = tmp_path / "results.json"
    command = [sys.executable, "-m", "fuse.compare", "gpt2", "--config", "tiny", "--modes", "train,infer",
               "--systems", "eager,fuse-compile,fuse-step", "--steps", "3", "--throughput-steps", "3",
               "--warmup", "1", "-o", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    rows = {(r["mode"], r["system"]): r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {(m, s) for m in ("train", "infer") for s in ("eager", "fuse-compile", "fuse-step")}
    for (mode, system), row in rows.items():
        assert row["error"] is None, (mode, system, row["error"])
        assert row["ms"] > 0 and row["throughput_ms"] > 0 and row["kernels"] > 0 and row["peak_gib"] > 0
        assert row["loss_rel_err"] is not None and (row["grad_rel_err"] is not None) == (mode == "train")
        assert (row["compile_cold_s"] is None) == (system == "eager")
        assert row["fallbacks"] == 0


@requires_transformers
def test_the_harness_measures_a_whole_optimizer_step(tmp_path):
    """bert-hf tiny (HF's BERT with dropout, a padded batch, AdamW in decay
    groups, clipping, 4 micro-batches a step) through the harness: every
    system builds the recipe's step, and its first update is compared with
    f32's (recorded, not judged: dropout)."""
    import subprocess
    import sys
    out = tmp_path / "results.json"
    systems = ("eager", "inductor-reduce-overhead", "fuse-compile", "fuse-step")
    command = [sys.executable, "-m", "fuse.compare", "bert-hf", "--config", "tiny", "--systems", ",".join(systems),
               "--steps", "3", "--throughput-steps", "3", "--warmup", "1", "-o", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-4000:]
    rows = {(r["mode"], r["system"]): r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {("train", s) for s in systems}  # training only
    for (mode, system), row in rows.items():
        assert row["error"] is None, (system, row["error"])
        assert row["stochastic"] and row["recipe"]["accumulation_steps"] == 4, system
        assert row["loss_rel_err"] is not None and row["grad_rel_err"] is not None, system
        assert row["update_rel_err"] is not None and row["mfu"] > 0, system
