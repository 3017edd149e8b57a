"""Measuring one system on one workload and mode, in the current process
(the runner gives every such row a process of its own).

Every system is measured by the same code:
  compile  the wall time of the first three steps (compilation, CUDA graph
           capture, lazy initialisation: everything until the steady state)
           less three steady steps
  ms       CUDA events around each step, with a synchronize after it;
           the median of `steps` (20) timed steps after `warmup` (5)
  throughput_ms  `throughput_steps` (50) steps back to back between two
           CUDA events, one synchronize at the end, divided by their number
  peak     device memory in use (cudaMemGetInfo: total less free) above the
           idle baseline taken before the model reaches the GPU (once the
           reading stops changing: memory of the row before may still be
           going back to the driver), sampled
           after every timed step; torch's allocator cache is emptied once
           before timing, so memory a compiler only used while compiling is
           not counted, while everything a system holds during its steps is
           (the model, torch's cached blocks, CUDA graph pools, Fuse's arena)
  kernels  GPU kernels of one step from the torch profiler's trace (CUPTI
           activity records: kernels replayed from a CUDA graph count too;
           memcpy and memset do not); kernel_ms is their summed duration
  compile_phases  where Fuse's compile time went (fuse.compile's and the
           backend's timings: AOTAutograd's tracing and partition (the
           backend), re-trace, export, pipeline and code generation, kernel
           load); the rest of a first step is dynamo's
  errors   against f32 eager (TF32 off) on the same weights and batch: the
           loss's relative error and the gradients' as one global relative
           norm ‖g − g32‖/‖g32‖ over all parameters (training), or the
           logits' ‖y − y32‖/‖y32‖ (inference), from the first step; a
           training step that draws random numbers (a workload with dropout,
           "stochastic" in the row) draws other masks than the reference
           did, so its errors are recorded but not judged
  recipe   a workload whose step is a whole optimizer step (workloads.Recipe:
           bert-hf) is compared by its first update, taken right after the
           first step (outside the compile time): the loss is the mean over
           its micro-batches; the gradients are those the update used
           (summed over the micro-batches and clipped), read back from the
           optimizer's state (Recipe.applied_gradients: AdamW's first moment
           is (1 − β1)·g after one update), against the f32 eager step's
           with the same recipe, from the same weights, on the same
           micro-batches; update_rel_err is the parameters' change,
           ‖Δp − Δp32‖/‖Δp32‖ over all parameters (recorded, not judged: a
           first Adam update is about lr·sign(g), so it mostly counts the
           gradient elements whose sign rounding flipped). FLOPs and MFU
           count every micro-batch of the step
"""

import math
import statistics
import time

STEPS, THROUGHPUT_STEPS, WARMUP = 20, 50, 5
FIRST_STEPS = 3
# A parameter whose f32 gradient norm is under this fraction of the largest
# (BERT's attention key bias: the softmax cancels it exactly) has no
# meaningful relative error of its own; it still counts in the global norm.
NEAR_ZERO = 1e-6


def used_device_bytes():
    import torch
    free, total = torch.cuda.mem_get_info()
    return total - free


def idle_device_bytes(settle_s=3.0, interval_s=0.05):
    """used_device_bytes() once it has stopped changing (or after
    `settle_s`): the process of the row before, just exited, may still be
    giving its memory back, which would count in the baseline and make the
    peak read low (a row once read -7.5 GiB)."""
    last = used_device_bytes()
    deadline = time.monotonic() + settle_s
    while time.monotonic() < deadline:
        time.sleep(interval_s)
        now = used_device_bytes()
        if now == last:
            return now
        last = now
    return last


def _release_cached_memory():
    import gc
    import torch
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()


def step_flops(built, mode):
    """FLOPs of one step: per token, times the tokens of every micro-batch
    a training step runs (a recipe's accumulation_steps of them)."""
    if mode == "train":
        return built.train_flops_per_token * built.tokens * built.accumulation_steps
    return built.infer_flops_per_token * built.tokens


def _f32_update(built):
    """The f32 eager optimizer step of `built`'s recipe from the model's
    weights, which it leaves as they were: {"value": mean loss, "grads":
    the gradients the update used, "updates": {name: Δp}, "initial":
    {name: p}}, all on the host."""
    import torch
    from .workloads import call_arguments, target_arguments
    model, recipe = built.model, built.recipe
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    initial = {n: p.detach().clone() for n, p in named}
    optimizer = recipe.build_optimizer(model)
    batches = built.training_batches()
    for _, p in named:
        p.grad = None
    total = None
    for inputs, targets in batches:
        args, kwargs = call_arguments(inputs)
        loss = built.loss_fn(model(*args, **kwargs), *target_arguments(targets)) / len(batches)
        loss.backward()
        total = loss.detach() if total is None else total + loss.detach()
    if recipe.max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_([p for _, p in named], recipe.max_grad_norm)
    optimizer.step()
    grads = {n: g.cpu() for n, g in (recipe.applied_gradients(optimizer, model) or {}).items()}
    updates = {n: (p.detach() - initial[n]).float().cpu() for n, p in named}
    with torch.no_grad():
        for n, p in named:
            p.copy_(initial[n])
            p.grad = None
    del optimizer
    return {"value": total.float().cpu(), "grads": grads, "updates": updates,
            "initial": {n: t.cpu() for n, t in initial.items()}}


def _reference_in_child(workload, mode, seed):
    """f32_reference of `workload` built with `seed`, in a process of its
    own (runner.run_in_child): torch kept a 1.5 GiB segment of the f32
    step's logits reserved after empty_cache in the measuring process (GPT-2,
    H200), which the systems that allocate in one piece outside torch's
    segments (Fuse's arena and slabs) paid for in their peak and the others,
    reusing it, did not."""
    import io
    import torch
    torch.cuda.init()
    reference = f32_reference(workload.build(seed, device="cuda"), mode)
    # By value: torch would pass the tensors as file descriptors that
    # die with this process.
    buffer = io.BytesIO()
    torch.save(reference, buffer)
    return {"reference": buffer.getvalue()}


def f32_reference(built, mode):
    """The f32 eager step (TF32 off) on `built`: {"value": loss or logits,
    "grads": {name: gradient}} on the host; a recipe's step adds
    "updates" and "initial" (_f32_update)."""
    import torch
    from .workloads import call_arguments, target_arguments
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    model = built.model
    try:
        if mode == "train" and built.recipe is not None:
            model.train()
            return _f32_update(built)
        if mode == "train":
            model.train()
            for p in model.parameters():
                p.grad = None
            args, kwargs = call_arguments(built.train_inputs)
            loss = built.loss_fn(model(*args, **kwargs), *target_arguments(built.train_targets))
            loss.backward()
            grads = {n: p.grad.detach().float().cpu() for n, p in model.named_parameters() if p.grad is not None}
            for p in model.parameters():
                p.grad = None
            return {"value": loss.detach().float().cpu(), "grads": grads}
        model.eval()
        args, kwargs = call_arguments(built.infer_inputs)
        with torch.no_grad():
            return {"value": built.logits(model(*args, **kwargs)).detach().float().cpu(), "grads": {}}
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _relative(actual, expected):
    """(‖a − e‖², ‖e‖²) in float64 on the device of `actual`."""
    import torch
    expected = expected.to(actual.device, dtype=torch.float64)
    actual = actual.detach().double()
    return float((actual - expected).norm()) ** 2, float(expected.norm()) ** 2


def errors(mode, value, model, reference, recipe=None, optimizer=None):
    """{"loss_rel_err", "grad_rel_err", "worst_param", "worst_param_rel_err"}
    of a system's first step against the f32 reference; a non-finite value
    or a missing gradient is an "error" entry. With a recipe (a reference
    with "updates"), right after the first update: the gradients are those
    `optimizer` applied (Recipe.applied_gradients) and "update_rel_err" is
    the parameters' change against the reference's."""
    import torch
    result = {"loss_rel_err": None, "grad_rel_err": None, "worst_param": None, "worst_param_rel_err": None}
    value = value.detach()
    if not bool(torch.isfinite(value).all()):
        result["error"] = "NaN or inf in the " + ("loss" if mode == "train" else "logits")
        return result
    diff2, norm2 = _relative(value.reshape(reference["value"].shape), reference["value"])
    result["loss_rel_err"] = math.sqrt(diff2 / max(norm2, 1e-300))
    if mode != "train":
        return result
    params = dict(model.named_parameters())
    if "updates" in reference:
        result["update_rel_err"] = None
        diff2 = norm2 = 0.0
        for name, expected in reference["updates"].items():
            p = params[name].detach()
            if not bool(torch.isfinite(p).all()):
                result["error"] = f"NaN or inf in {name} after the first update"
                return result
            change = p.double() - reference["initial"][name].to(p.device, dtype=torch.float64)
            d2, n2 = _relative(change, expected)
            diff2, norm2 = diff2 + d2, norm2 + n2
        result["update_rel_err"] = math.sqrt(diff2 / max(norm2, 1e-300))
        applied = recipe.applied_gradients(optimizer, model) or {}
        gradients = {name: applied.get(name) for name in reference["grads"]}
    else:
        gradients = {name: params[name].grad for name in reference["grads"]}
    if not reference["grads"]:
        return result
    largest = max((float(g.norm()) for g in reference["grads"].values()), default=0.0)
    total_diff2 = total_norm2 = 0.0
    for name, expected in reference["grads"].items():
        got = gradients[name]
        if got is None:
            result["error"] = f"no gradient for {name}"
            return result
        if not bool(torch.isfinite(got).all()):
            result["error"] = f"NaN or inf in the gradient of {name}"
            return result
        d2, n2 = _relative(got, expected)
        total_diff2, total_norm2 = total_diff2 + d2, total_norm2 + n2
        if math.sqrt(n2) > NEAR_ZERO * largest:
            relative = math.sqrt(d2 / n2)
            if result["worst_param_rel_err"] is None or relative > result["worst_param_rel_err"]:
                result["worst_param"], result["worst_param_rel_err"] = name, relative
    result["grad_rel_err"] = math.sqrt(total_diff2 / max(total_norm2, 1e-300))
    return result


def time_steps(step, count, after_each=lambda: None):
    """Median ms of `count` steps, each between CUDA events and followed by
    a synchronize."""
    import torch
    times = []
    for _ in range(count):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
        after_each()
    return statistics.median(times)


def time_throughput(step, count):
    """ms per step of `count` steps back to back (one synchronize)."""
    import torch
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(count):
        step()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / count


def kernel_events(step):
    """The kernels of one step: the torch profiler's trace events (name,
    ts and dur in us) of every CUPTI kernel record, those replayed from
    CUDA graphs too."""
    import json
    import os
    import tempfile
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    handle, path = tempfile.mkstemp(suffix=".json")
    os.close(handle)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    finally:
        os.unlink(path)
    return [e for e in events if e.get("cat") == "kernel"]


def count_kernels(step):
    """(kernels, their summed ms) of one step (kernel_events)."""
    kernels = kernel_events(step)
    return len(kernels), sum(float(e.get("dur", 0)) for e in kernels) / 1e3


def first_steps_seconds(make_step, after_first=None):
    """(prepared system, wall seconds of creating it and running its first
    FIRST_STEPS steps, the first step's value). after_first(prepared,
    value), when given, runs after the first step, outside the time (a
    recipe's errors are read from the first update's state)."""
    import torch
    torch.cuda.synchronize()
    started = time.perf_counter()
    prepared = make_step()
    value = prepared.step()
    first = value.detach().float().clone() if hasattr(value, "detach") else value
    if after_first is not None:
        torch.cuda.synchronize()
        paused = time.perf_counter()
        after_first(prepared, first)
        torch.cuda.synchronize()
        started += time.perf_counter() - paused
    for _ in range(FIRST_STEPS - 1):
        prepared.step()
    torch.cuda.synchronize()
    return prepared, time.perf_counter() - started, first


def measure(workload, mode, system, *, seed=0, cache_dir=None, steps=STEPS,
            throughput_steps=THROUGHPUT_STEPS, warmup=WARMUP, peak_tflops=989.0, fuse_fallback="eager"):
    """One row of the harness's schema (runner.ROW_FIELDS), measured here.
    fuse_fallback: the fuse-compile system's "fallback" option."""
    import io
    import torch
    from .runner import run_in_child
    from .systems import prepare
    child = run_in_child(_reference_in_child, workload, mode, seed)
    if "reference" not in child:
        raise RuntimeError(f"the f32 reference step failed: {child.get('error')}")
    reference = torch.load(io.BytesIO(child.pop("reference")))
    torch.cuda.init()
    baseline = idle_device_bytes()
    built = workload.build(seed, device="cuda")
    _release_cached_memory()

    recipe = built.recipe if mode == "train" else None
    first_update = {}

    def read_first_update(prepared, value, reference=reference):
        first_update.update(errors(mode, value, built.model, reference, recipe, prepared.optimizer))

    prepared, first_s, first_value = first_steps_seconds(
        lambda: prepare(system, mode, built, cache_dir, fuse_fallback=fuse_fallback),
        read_first_update if recipe is not None else None)
    row = first_update if recipe is not None else errors(mode, first_value, built.model, reference)
    if recipe is not None:
        row["recipe"] = recipe.as_dict()
    if mode == "train" and built.stochastic:
        row["stochastic"] = True  # dropout: recorded, not judged
    row["compile_phases"] = {phase: round(seconds, 3) for phase, seconds in prepared.phases().items()} or None
    del reference, first_value, read_first_update  # the reference's host copies
    _release_cached_memory()
    for _ in range(warmup):
        prepared.step()
    torch.cuda.synchronize()
    _release_cached_memory()
    torch.cuda.reset_peak_memory_stats()
    samples = [used_device_bytes()]
    ms = time_steps(prepared.step, steps, lambda: samples.append(used_device_bytes()))
    throughput_ms = time_throughput(prepared.step, throughput_steps)
    samples.append(used_device_bytes())
    kernels, kernel_ms = count_kernels(prepared.step)
    flops = step_flops(built, mode)
    row.update(ms=ms, throughput_ms=throughput_ms, peak_gib=(max(samples) - baseline) / 2**30,
               kernels=kernels, kernel_ms=kernel_ms, mfu=flops / (ms * 1e-3) / (peak_tflops * 1e12),
               compile_cold_s=(None if system == "eager" else max(first_s - FIRST_STEPS * ms / 1e3, 0.0)),
               fallbacks=prepared.fallbacks(), description=built.description,
               torch_allocated_peak_gib=torch.cuda.max_memory_allocated() / 2**30)
    prepared.close()
    return row


def measure_warm_compile(workload, mode, system, steady_ms, *, seed=0, cache_dir=None, fuse_fallback="eager"):
    """compile_warm_s: the first three steps of a new process whose caches
    the cold run filled, less three steady steps of the cold run."""
    from .systems import prepare
    import torch
    torch.cuda.init()
    built = workload.build(seed, device="cuda")
    prepared, first_s, _ = first_steps_seconds(
        lambda: prepare(system, mode, built, cache_dir, fuse_fallback=fuse_fallback))
    prepared.close()
    return {"compile_warm_s": max(first_s - FIRST_STEPS * steady_ms / 1e3, 0.0)}
