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
           idle baseline taken before the model reaches the GPU, sampled
           after every timed step; torch's allocator cache is emptied once
           before timing, so memory a compiler only used while compiling is
           not counted, while everything a system holds during its steps is
           (the model, torch's cached blocks, CUDA graph pools, Fuse's arena)
  kernels  GPU kernels of one step from the torch profiler's trace (CUPTI
           activity records: kernels replayed from a CUDA graph count too;
           memcpy and memset do not); kernel_ms is their summed duration
  compile_phases  where Fuse's compile time went (fuse.compile's and the
           backend's timings: re-trace, export, pipeline and code generation,
           kernel load); the rest of a first step is dynamo's and AOTAutograd's
  errors   against f32 eager (TF32 off) on the same weights and batch: the
           loss's relative error and the gradients' as one global relative
           norm ‖g − g32‖/‖g32‖ over all parameters (training), or the
           logits' ‖y − y32‖/‖y32‖ (inference), from the first step; a
           training step that draws random numbers (a workload with dropout,
           "stochastic" in the row) draws other masks than the reference
           did, so its errors are recorded but not judged
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


def _release_cached_memory():
    import gc
    import torch
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()


def f32_reference(built, mode):
    """The f32 eager step (TF32 off) on `built`: {"value": loss or logits,
    "grads": {name: gradient}} on the host."""
    import torch
    from .workloads import call_arguments, target_arguments
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    model = built.model
    try:
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


def errors(mode, value, model, reference):
    """{"loss_rel_err", "grad_rel_err", "worst_param", "worst_param_rel_err"}
    of a system's first step against the f32 reference; a non-finite value
    or a missing gradient is an "error" entry."""
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
    largest = max((float(g.norm()) for g in reference["grads"].values()), default=0.0)
    total_diff2 = total_norm2 = 0.0
    for name, expected in reference["grads"].items():
        got = params[name].grad
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


def count_kernels(step):
    """(kernels, their summed ms) of one step, from the torch profiler's
    trace: every CUPTI kernel record, those replayed from CUDA graphs too."""
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
    kernels = [e for e in events if e.get("cat") == "kernel"]
    return len(kernels), sum(float(e.get("dur", 0)) for e in kernels) / 1e3


def first_steps_seconds(make_step):
    """(prepared system, wall seconds of creating it and running its first
    FIRST_STEPS steps, the first step's value)."""
    import torch
    torch.cuda.synchronize()
    started = time.perf_counter()
    prepared = make_step()
    value = prepared.step()
    first = value.detach().float().clone() if hasattr(value, "detach") else value
    for _ in range(FIRST_STEPS - 1):
        prepared.step()
    torch.cuda.synchronize()
    return prepared, time.perf_counter() - started, first


def measure(workload, mode, system, *, seed=0, cache_dir=None, steps=STEPS,
            throughput_steps=THROUGHPUT_STEPS, warmup=WARMUP, peak_tflops=989.0, fuse_fallback="eager"):
    """One row of the harness's schema (runner.ROW_FIELDS), measured here.
    fuse_fallback: the fuse-compile system's "fallback" option."""
    import torch
    from .systems import prepare
    torch.cuda.init()
    baseline = used_device_bytes()
    built = workload.build(seed, device="cuda")
    reference = f32_reference(built, mode)
    _release_cached_memory()

    prepared, first_s, first_value = first_steps_seconds(
        lambda: prepare(system, mode, built, cache_dir, fuse_fallback=fuse_fallback))
    row = errors(mode, first_value, built.model, reference)
    if mode == "train" and built.stochastic:
        row["stochastic"] = True  # dropout: recorded, not judged
    row["compile_phases"] = {phase: round(seconds, 3) for phase, seconds in prepared.phases().items()} or None
    del reference, first_value
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
    flops = (built.train_flops_per_token if mode == "train" else built.infer_flops_per_token) * built.tokens
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
