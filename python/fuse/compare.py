"""Eager vs torch.compile (Inductor) vs Fuse on one training step.

    python -m fuse.compare gpt2|bert|llama [--config tiny|full] [--batch N] [--seq T]
                           [--steps N] [--adamw] [--json OUT] [--peak-tflops X]
    python -m fuse.compare my_pkg.my_module:make_workload ...

In one process, on the same weights and the same batch, each system runs the
same step (forward, loss, backward; with --adamw also the AdamW update):
  eager     PyTorch with bf16 autocast
  inductor  torch.compile(model) with bf16 autocast
  fuse      fuse.compile_step(model, loss_fn, batch, amp="bf16")
and the table gives, per system: the median step time over --steps steps
(CUDA events around each step, after warm-up), the peak device memory
(torch.cuda.max_memory_allocated over the timed steps, reset between
systems; for Fuse plus the memory its runtime holds outside torch's
allocator: arena, workspace, constants), MFU, the compile time (first step
wall time, compilation included, less one steady step; Fuse compiles into
an empty cache unless --warm-cache), and the largest difference from eager
of the loss and of the gradients (with --adamw, of the updated parameters)
after the first step.

MFU = (6·N + 12·L·H·Q·T) · tokens / step time / peak, where N counts the
parameters that take part in matrix products (embedding tables that are
only gathered are left out), L layers, H heads, Q head dimension, T the
sequence length (PaLM's convention; GPU.md), and the peak is the dense bf16
datasheet figure, 989 TFLOP/s for H100/H200 (--peak-tflops to change it).

MODEL as `module:function`: the function is called with those of the
keyword arguments `batch`, `seq`, `config` that it accepts (the values of
--batch, --seq, --config; None where not given) and returns
`(model, batch)` or `(model, batch, loss_fn)`, or a dict with keys
`model`, `batch`, optionally `loss_fn` and `flops_per_token`:
  model     an nn.Module in float32 (on the CPU or the GPU)
  batch     (inputs, targets) as fuse.compile_step takes it: inputs for the
            model (tensor, tuple or dict), targets passed to loss_fn after
            the output (tensor, tuple, dict or None)
  loss_fn   loss_fn(output, *targets) -> scalar; without it the model's
            output is the loss (a scalar tensor, or an object with .loss)
  flops_per_token  training FLOPs per token for MFU (default 6·N, no
            attention term)
"""

import argparse
import copy
import dataclasses
import gc
import importlib
import inspect
import json
import statistics
import sys
import tempfile
import time

DEFAULT_PEAK_TFLOPS = 989.0


@dataclasses.dataclass
class Workload:
    name: str
    model: object
    inputs: object
    targets: object
    loss_fn: object
    flops_per_token: float
    tokens: int
    description: str
    flops_note: str


def _to_device(value, device):
    import torch
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_to_device(v, device) for v in value)
    return value


def _as_args(value):
    """(positional, keyword) arguments of the model for an inputs part."""
    import torch
    if isinstance(value, dict):
        return (), value
    if isinstance(value, torch.Tensor):
        return (value,), {}
    return tuple(value), {}


def _as_targets(value):
    import torch
    if value is None:
        return ()
    if isinstance(value, dict):
        return tuple(value.values())
    if isinstance(value, torch.Tensor):
        return (value,)
    return tuple(value)


def matmul_parameters(model):
    """Parameters that take part in matrix products: all, less embedding
    tables that no linear layer shares (those are only gathered)."""
    import torch
    linear = {m.weight.data_ptr() for m in model.modules() if isinstance(m, torch.nn.Linear)}
    gathered = sum(m.weight.numel() for m in model.modules()
                   if isinstance(m, torch.nn.Embedding) and m.weight.data_ptr() not in linear)
    seen, total = set(), 0
    for p in model.parameters():
        if p.data_ptr() not in seen:
            seen.add(p.data_ptr())
            total += p.numel()
    return total - gathered


def _transformer_shape(config):
    get = lambda *names: next((getattr(config, n) for n in names if getattr(config, n, None)), None)
    layers = get("n_layer", "num_hidden_layers")
    heads = get("n_head", "num_attention_heads")
    width = get("n_embd", "hidden_size")
    return layers, heads, (width // heads if width and heads else None)


def builtin_workload(name, config, batch, seq, seed):
    import torch
    from . import models
    spec = models.build(name, config, batch=batch, seed=seed)
    inputs, targets = dict(spec.inputs), dict(spec.targets)
    batch_size, length = inputs["input_ids"].shape
    if seq is not None and seq != length:
        limit = getattr(spec.module.config, "n_positions", None) or spec.module.config.max_position_embeddings
        if seq > limit:
            raise SystemExit(f"fuse.compare: --seq {seq} exceeds the model's {limit} positions")
        generator = torch.Generator().manual_seed(seed + 1)
        vocab = spec.index_bounds["input_ids"]
        inputs["input_ids"] = torch.randint(0, vocab, (batch_size, seq), generator=generator)
        if "targets" in targets:
            targets["targets"] = torch.randint(0, vocab, (batch_size, seq), generator=generator)
        length = seq
    layers, heads, head_dim = _transformer_shape(spec.module.config)
    n = matmul_parameters(spec.module)
    flops_per_token = 6 * n + 12 * layers * heads * head_dim * length
    description = spec.description.replace(f"sequence {spec.inputs['input_ids'].shape[1]}", f"sequence {length}")
    return Workload(name, spec.module, inputs, targets, spec.loss_fn, flops_per_token, batch_size * length,
                    description, f"6·N + 12·L·H·Q·T with N = {n / 1e6:.1f}M (matmul parameters), L = {layers}, "
                                 f"H = {heads}, Q = {head_dim}, T = {length}")


def _output_loss(output, *targets):
    return output if hasattr(output, "dim") else output.loss


def custom_workload(spec, config, batch, seq):
    import torch
    module_name, _, function_name = spec.partition(":")
    function = getattr(importlib.import_module(module_name), function_name)
    accepted = inspect.signature(function).parameters
    given = {"batch": batch, "seq": seq, "config": config}
    result = function(**{k: v for k, v in given.items() if k in accepted})
    if isinstance(result, dict):
        model, data = result["model"], result["batch"]
        loss_fn, flops_per_token = result.get("loss_fn"), result.get("flops_per_token")
    else:
        model, data = result[0], result[1]
        loss_fn, flops_per_token = (result[2] if len(result) > 2 else None), None
    inputs, targets = data
    tokens = next((t.numel() for t in _as_args(inputs)[0] + tuple(_as_args(inputs)[1].values())
                   if isinstance(t, torch.Tensor) and not t.is_floating_point()), None)
    if tokens is None:
        first = (_as_args(inputs)[0] + tuple(_as_args(inputs)[1].values()))[0]
        tokens = first.shape[0] * (first.shape[1] if first.dim() > 1 else 1)
    n = matmul_parameters(model)
    note = "given by the workload"
    if flops_per_token is None:
        flops_per_token, note = 6 * n, f"6·N with N = {n / 1e6:.1f}M (no attention term)"
    params = sum(p.numel() for p in model.parameters())
    return Workload(spec, model, inputs, targets, loss_fn or _output_loss, flops_per_token, tokens,
                    f"{spec}: {type(model).__name__}, {params / 1e6:.1f}M parameters, {tokens} tokens", note)


# -- measuring ----------------------------------------------------------------------

def _named_values(model, use_grad):
    values = {}
    for name, p in model.named_parameters():
        t = p.grad if use_grad else p.detach()
        # On the host: a reference kept on the GPU would count in the next
        # system's peak memory.
        values[name] = None if t is None else t.detach().float().cpu()
    return values


def _time_steps(step, steps):
    import torch
    times = []
    for _ in range(steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), times


def count_kernels(step):
    """GPU kernels one call of `step` launches (torch profiler; memcpy and
    memset excluded)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and not e.name.startswith(("Memcpy", "Memset")))


def _fresh_model(workload):
    import torch
    model = copy.deepcopy(workload.model).cuda().train()
    return model, (torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1) if workload.adamw else None)


def measure_torch(workload, system, steps, warmup):
    """eager or inductor: (result dict, reference values after step 1)."""
    import torch
    model, optimizer = _fresh_model(workload)
    runner = torch.compile(model) if system == "inductor" else model
    args, kwargs = _as_args(workload.cuda_inputs)
    targets = _as_targets(workload.cuda_targets)

    def step():
        for p in model.parameters():
            p.grad = None
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = workload.loss_fn(runner(*args, **kwargs), *targets)
        loss.backward()
        if optimizer is not None:
            optimizer.step()
        return loss

    torch.cuda.synchronize()
    started = time.perf_counter()
    loss = step()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - started
    reference = {"loss": float(loss.detach()), "values": _named_values(model, optimizer is None)}
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    median_ms, times = _time_steps(step, steps)
    peak = torch.cuda.max_memory_allocated()
    return dict(system=system, step_ms=median_ms, step_times_ms=times, peak_bytes=peak,
                first_step_s=first_s, kernels=count_kernels(step)), reference


def measure_fuse(workload, steps, warmup, cache_dir):
    import torch
    import fuse
    model, optimizer = _fresh_model(workload)
    batch = (workload.cuda_inputs, workload.cuda_targets)
    torch.cuda.synchronize()
    started = time.perf_counter()
    step = fuse.compile_step(model, workload.loss_fn, batch, optimizer=optimizer, amp="bf16", cache_dir=cache_dir)
    loss = step(batch)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - started
    reference = {"loss": float(loss.detach()), "values": _named_values(model, optimizer is None)}
    for _ in range(warmup):
        step(batch)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    median_ms, times = _time_steps(lambda: step(batch), steps)
    torch_peak = torch.cuda.max_memory_allocated()
    runtime_bytes = step.compiled.device_bytes
    signature = step.signature
    # What a second run of the script pays: the executable and the cubins
    # come from the caches the first compile filled.
    started = time.perf_counter()
    again = fuse.compile_step(model, workload.loss_fn, batch, optimizer=optimizer, amp="bf16", cache_dir=cache_dir)
    warm_s = time.perf_counter() - started
    again.close()
    result = dict(system="fuse", step_ms=median_ms, step_times_ms=times, peak_bytes=torch_peak + runtime_bytes,
                  torch_peak_bytes=torch_peak, runtime_bytes=runtime_bytes, first_step_s=first_s,
                  compile_breakdown_s={k: round(v, 3) for k, v in step.timings.items()},
                  compile_warm_s=warm_s, cache_hit=step.compiled.cache_hit,
                  kernels=signature["launches"] + signature["gemms"], distinct_kernels=signature["kernels"],
                  launches=signature["launches"], gemms=signature["gemms"], arena_bytes=signature["arena_bytes"])
    step.close()
    return result, reference


def _differences(reference, eager):
    loss_abs = abs(reference["loss"] - eager["loss"])
    max_abs, max_rel, near_zero = 0.0, 0.0, []
    squared_error = squared_norm = 0.0
    norms = [float(v.norm()) for v in eager["values"].values() if v is not None]
    largest = max(norms, default=0.0)
    for name, expected in eager["values"].items():
        got = reference["values"].get(name)
        if expected is None or got is None:
            continue
        max_abs = max(max_abs, float((got - expected).abs().max()))
        squared_error += float((got - expected).norm()) ** 2
        squared_norm += float(expected.norm()) ** 2
        # A gradient that is zero up to rounding (BERT's attention key bias:
        # the softmax cancels it exactly) has no meaningful relative error.
        if float(expected.norm()) <= 1e-6 * largest:
            near_zero.append(name)
            continue
        max_rel = max(max_rel, float((got - expected).norm() / expected.norm().clamp_min(1e-12)))
    return dict(loss_abs_diff=loss_abs, loss_rel_diff=loss_abs / max(abs(eager["loss"]), 1e-12),
                max_abs_diff=max_abs, max_rel_norm_diff=max_rel, near_zero_in_eager=near_zero,
                global_rel_norm_diff=(squared_error / squared_norm) ** 0.5 if squared_norm else 0.0)


def _cleanup():
    import torch
    gc.collect()
    if hasattr(torch, "_dynamo"):
        torch._dynamo.reset()
    torch.cuda.empty_cache()


def run(workload, systems, steps, warmup, peak_tflops, warm_cache):
    workload.cuda_inputs = _to_device(workload.inputs, "cuda")
    workload.cuda_targets = _to_device(workload.targets, "cuda")
    results, references = [], {}
    for system in systems:
        print(f"fuse.compare: {system} ...", file=sys.stderr, flush=True)
        if system == "fuse":
            with tempfile.TemporaryDirectory(prefix="fuse-compare-") as cold:
                result, reference = measure_fuse(workload, steps, warmup, None if warm_cache else cold)
        else:
            result, reference = measure_torch(workload, system, steps, warmup)
        result["compile_s"] = max(result["first_step_s"] - result["step_ms"] / 1e3, 0.0)
        flops = workload.flops_per_token * workload.tokens
        result["mfu"] = flops / (result["step_ms"] * 1e-3) / (peak_tflops * 1e12)
        results.append(result)
        references[system] = reference
        _cleanup()
    if "eager" in references:
        for result in results:
            result.update(_differences(references[result["system"]], references["eager"]))
            result["loss"] = references[result["system"]]["loss"]
    return results


def format_table(workload, results, meta):
    eager = next((r for r in results if r["system"] == "eager"), None)
    compared = "updated parameters" if meta["adamw"] else "gradients"
    lines = [f"{workload.description}; {'forward + backward + AdamW' if meta['adamw'] else 'forward + backward'}, "
             f"bf16", f"{meta['device']}, torch {meta['torch']}; MFU: {workload.flops_note}, over "
             f"{meta['peak_tflops']:g} TFLOP/s", "",
             f"{'system':9} {'step ms':>9} {'vs eager':>8} {'peak GiB':>9} {'MFU':>6} {'kernels':>8} {'compile s':>10} "
             f"{'loss':>10} {'|Δloss|':>9} {'max|Δ|':>9} {'max rel':>9}"]
    for r in results:
        speed = f"{eager['step_ms'] / r['step_ms']:.2f}x" if eager else "-"
        diffs = (f"{r['loss_abs_diff']:9.2e} {r['max_abs_diff']:9.2e} {r['max_rel_norm_diff']:9.2e}"
                 if "loss_abs_diff" in r else f"{'-':>9} {'-':>9} {'-':>9}")
        loss = f"{r['loss']:10.5f}" if "loss" in r else f"{'-':>10}"
        lines.append(f"{r['system']:9} {r['step_ms']:9.3f} {speed:>8} {r['peak_bytes'] / 2**30:9.3f} "
                     f"{r['mfu'] * 100:5.1f}% {r['kernels']:8d} {r['compile_s']:10.2f} {loss} {diffs}")
    lines.append("")
    lines.append(f"max|Δ|: largest absolute difference from eager over all {compared} after the first step; "
                 f"max rel: largest ‖x − eager‖/‖eager‖ over the parameters (those whose eager value is zero up to "
                 f"rounding, under 1e-6 of the largest norm, are left out and listed in the JSON)")
    fuse_result = next((r for r in results if r["system"] == "fuse"), None)
    if fuse_result:
        lines.append(f"fuse: {fuse_result['distinct_kernels']} distinct kernels, {fuse_result['launches']} launches, "
                     f"{fuse_result['gemms']} GEMMs; compile {fuse_result['compile_breakdown_s']} s, "
                     f"{fuse_result['compile_warm_s']:.2f} s with warm caches"
                     f"{' (cache hit)' if fuse_result['cache_hit'] else ''}; peak = torch "
                     f"{fuse_result['torch_peak_bytes'] / 2**30:.3f} GiB + runtime "
                     f"{fuse_result['runtime_bytes'] / 2**30:.3f} GiB")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m fuse.compare",
                                     description="Eager vs torch.compile (Inductor) vs Fuse on one training step.",
                                     epilog="MODEL as module:function: see the module docstring "
                                            "(python -c 'import fuse.compare; help(fuse.compare)').")
    parser.add_argument("model", help="gpt2, bert, llama, or module:function returning (model, batch[, loss_fn])")
    parser.add_argument("--config", choices=["tiny", "full"], default="full", help="built-in model size (default full)")
    parser.add_argument("--batch", type=int, help="batch size (default: the model's)")
    parser.add_argument("--seq", type=int, help="sequence length (default: the model's)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per system (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps after the first (default 3)")
    parser.add_argument("--adamw", action="store_true", help="include an AdamW update in the step")
    parser.add_argument("--systems", default="eager,inductor,fuse", help="comma-separated subset, in order")
    parser.add_argument("--peak-tflops", type=float, default=DEFAULT_PEAK_TFLOPS,
                        help=f"dense bf16 peak for MFU (default {DEFAULT_PEAK_TFLOPS:g}, H100/H200 datasheet)")
    parser.add_argument("--warm-cache", action="store_true",
                        help="let Fuse use its default compile cache (default: an empty one, a cold compile)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="OUT", help="also write every figure as JSON")
    args = parser.parse_args(argv)

    import torch
    if not torch.cuda.is_available():
        print("fuse.compare: no CUDA device; this compares steps on the GPU", file=sys.stderr)
        return 1
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    bad = [s for s in systems if s not in ("eager", "inductor", "fuse")]
    if bad:
        parser.error(f"unknown system(s) {bad}; choose from eager, inductor, fuse")
    from . import models
    if args.model in models.MODELS:
        workload = builtin_workload(args.model, args.config, args.batch, args.seq, args.seed)
    elif ":" in args.model:
        workload = custom_workload(args.model, args.config, args.batch, args.seq)
    else:
        parser.error(f"MODEL must be one of {', '.join(sorted(models.MODELS))} or module:function")
    workload.adamw = args.adamw
    results = run(workload, systems, args.steps, args.warmup, args.peak_tflops, args.warm_cache)
    meta = dict(model=args.model, config=args.config, description=workload.description,
                device=torch.cuda.get_device_name(), torch=torch.__version__, adamw=args.adamw,
                peak_tflops=args.peak_tflops, flops_per_token=workload.flops_per_token, tokens=workload.tokens,
                mfu_convention=workload.flops_note, steps=args.steps, warmup=args.warmup,
                date=time.strftime("%Y-%m-%d"), command="python -m fuse.compare " + " ".join(
                    argv if argv is not None else sys.argv[1:]))
    print(format_table(workload, results, meta))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(meta, results=results), f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
