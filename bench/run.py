"""Fuse against PyTorch eager and torch.compile (Inductor) on the built-in
transformers: same model, weights, batch and GPU, in one process.

    python3 bench/run.py [--models gpt2,bert4,bert32,llama] [--modes train,infer]
                         [--systems eager,inductor,fuse] [-o bench/results/<gpu>-<date>.json]
                         [--append]

Training steps are `python -m fuse.compare`'s (fuse/compare.py): forward,
loss and backward, gradients left in param.grad, no optimizer in any system;
eager and Inductor under bf16 autocast, Fuse with bf16 mixed precision
(fuse.compile_step). Inference steps are the forward under torch.no_grad
(Fuse: the exported inference graph through fuse.compile, its logits
returned in bf16 as autocast returns them: amp_results=True). Per system:
median step time (CUDA events, warm), peak memory (torch's
max_memory_allocated over the timed steps, plus for Fuse the device memory
its runtime holds), MFU (PaLM: (6N + 12LHQT) tokens per training step,
(2N + 4LHQT) per inference step, over 989 TFLOP/s), kernels per step (torch
profiler; Fuse: the executable's launches and GEMMs), cold compile time
(first call less one step; Fuse into an empty cache), Fuse's warm compile
(its caches filled), and the largest relative difference from eager of the
loss (inference: the logits) and of the gradients.

The JSON is written after every model, so a run cut short keeps what it
measured; bench/report.py makes the plot and the README table from it. A
whole run takes about 10 minutes on an H100, most of it Inductor's cold
compiles: where one call must stay under that, --append continues in a
later call, into the same file (same GPU and torch), measuring only the
models and modes it does not hold yet. Each row's three systems still come
from one process.
"""

import argparse
import json
import os
import sys
import tempfile
import time
import traceback

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import fuse  # noqa: E402
import report  # noqa: E402
from fuse import compare  # noqa: E402
from fuse.export import export_module  # noqa: E402

CONFIGS = {  # name: (model, batch, label)
    "gpt2": ("gpt2", 8, "B8 T1024"),
    "bert4": ("bert", 4, "B4 T512"),
    "bert32": ("bert", 32, "B32 T512"),
    "llama": ("llama", 8, "B8 T1024"),
}
MODES = ("train", "infer")
SYSTEMS = ("eager", "inductor", "fuse")
STEPS, WARMUP = 15, 3


def logits(output):
    if isinstance(output, torch.Tensor):
        return output
    return output.logits if hasattr(output, "logits") else output[0]


def infer_step(workload, system, cache_dir):
    """(step, compile seconds or None, extra figures) for one inference
    system; the step returns the logits."""
    model = workload.model.cuda().eval()
    inputs = workload.cuda_inputs
    if system == "fuse":
        started = time.perf_counter()
        text = export_module(model.cpu(), workload.inputs, mode="infer")
        model.cuda()
        # Logits in bf16, as autocast returns them to eager and Inductor.
        compiled = fuse.compile(text, amp="bf16", amp_results=True, cache_dir=cache_dir)
        args = [p.detach() for p in model.parameters()] + list(inputs.values())
        step = lambda: logits(compiled(*args))  # noqa: E731
        step()
        torch.cuda.synchronize()
        signature = compiled.signature
        extra = dict(kernels=signature["launches"] + signature["gemms"], runtime_bytes=compiled.device_bytes)
        return step, time.perf_counter() - started, extra
    runner = torch.compile(model) if system == "inductor" else model

    def step():
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            return logits(runner(**inputs))
    started = time.perf_counter()
    step()
    torch.cuda.synchronize()
    return step, time.perf_counter() - started, {}


def measure_inference(workload, systems, cache_dir):
    workload.cuda_inputs = compare._to_device(workload.inputs, "cuda")
    results, reference = [], None
    for system in systems:
        print(f"bench/run.py: {system} ...", file=sys.stderr, flush=True)
        step, first_s, extra = infer_step(workload, system, cache_dir)
        for _ in range(WARMUP):
            step()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        median_ms, _ = compare._time_steps(step, STEPS)
        result = dict(system=system, step_ms=median_ms,
                      peak_bytes=torch.cuda.max_memory_allocated() + extra.get("runtime_bytes", 0),
                      compile_cold_s=max(first_s - median_ms / 1e3, 0.0),
                      kernels=extra.get("kernels") or compare.count_kernels(step),
                      mfu=workload.flops_per_token / 3 * workload.tokens / (median_ms * 1e-3) / 989e12)
        output = step().float().cpu()  # on the host: not counted in the next system's peak
        if reference is None:
            reference = output
        else:
            result["loss_rel_diff"] = float((output - reference).norm() / reference.norm())
        results.append(result)
        del step
        compare._cleanup()
    return results


def measure_training(workload, systems, cache_dir):
    results = compare.run(workload, systems, STEPS, WARMUP, compare.DEFAULT_PEAK_TFLOPS, warm_cache=False)
    for r in results:
        r["compile_cold_s"] = r.pop("compile_s")
        r["grad_rel_diff"] = r.get("max_rel_norm_diff")
        r.pop("step_times_ms", None)
    return results


def previous_run(output, device, torch_version):
    """The run in `output` to continue (--append): its data, checked to be
    from this GPU and torch; None where there is no file yet."""
    if not os.path.exists(output):
        return None
    with open(output) as f:
        data = json.load(f)
    for what, theirs, ours in (("GPU", data.get("device"), device), ("torch", data.get("torch"), torch_version)):
        if theirs != ours:
            sys.exit(f"bench/run.py: {output} was measured with {what} {theirs}, this is {ours}: "
                     "--append continues a run on the same GPU and torch only")
    return data


def measured_rows(data):
    """(model, config, mode) of the rows `data` holds without an error."""
    failed = {(r["model"], r["config"], r["mode"]) for r in data["results"] if "error" in r}
    return {(r["model"], r["config"], r["mode"]) for r in data["results"]} - failed


def in_table_order(results):
    """The results ordered as CONFIGS and then train before infer (a run
    continued with --append adds its rows at the end); stable within a row."""
    configs = [(model, label) for model, _, label in CONFIGS.values()]
    def key(r):
        row = (r["model"], r["config"])
        return (configs.index(row) if row in configs else len(configs), 0 if r["mode"] == "train" else 1)
    return sorted(results, key=key)


def comma_list(parser, flag, text, allowed):
    """The names in `text` (comma-separated), each one of `allowed`; an
    unknown name is a usage error naming the flag."""
    names = text.split(",")
    unknown = [n for n in names if n not in allowed]
    if unknown:
        parser.error(f"unknown {flag} value(s) {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(CONFIGS), help="comma-separated: " + ", ".join(CONFIGS))
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: " + ", ".join(MODES))
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated: " + ", ".join(SYSTEMS))
    parser.add_argument("-o", "--output", help="default bench/results/<gpu>-<date>.json")
    parser.add_argument("--append", action="store_true",
                        help="continue the run in --output: keep its rows, measure only the missing ones")
    args = parser.parse_args(argv)
    names = comma_list(parser, "--models", args.models, CONFIGS)
    modes = comma_list(parser, "--modes", args.modes, MODES)
    systems = comma_list(parser, "--systems", args.systems, SYSTEMS)
    if not torch.cuda.is_available():
        sys.exit("bench/run.py: no CUDA device; this benchmark times GPU steps")
    device = torch.cuda.get_device_name()
    date = time.strftime("%Y-%m-%d")
    output = args.output or os.path.join(HERE, "results", f"{device.replace(' ', '-')}-{date}.json")
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    command = " ".join(["bench/run.py"] + (argv if argv is not None else sys.argv[1:]))
    data = previous_run(output, device, torch.__version__) if args.append else None
    if data is None:
        data = dict(device=device, date=date, torch=torch.__version__, precision="bf16",
                    peak_tflops=compare.DEFAULT_PEAK_TFLOPS, command=command, results=[])
    else:
        data["command"] += "; then " + command
    done = measured_rows(data)
    for name in names:
        model, batch, label = CONFIGS[name]
        for mode in modes:
            if (model, label, mode) in done:
                print(f"{model} {label} {mode}: in {output} already", file=sys.stderr)
                continue
            data["results"] = [r for r in data["results"] if (r["model"], r["config"], r["mode"]) != (model, label, mode)]
            print(f"[{time.strftime('%H:%M:%S')}] {model} {label} {mode}", file=sys.stderr, flush=True)
            try:
                workload = compare.builtin_workload(model, "full", batch, None, 0)
                workload.adamw = False
                with tempfile.TemporaryDirectory(prefix="fuse-bench-") as cache_dir:
                    measured = (measure_training(workload, systems, cache_dir) if mode == "train"
                                else measure_inference(workload, systems, cache_dir))
            except Exception as error:  # one failure must not lose the other models' figures
                traceback.print_exc()
                measured = [dict(system="all", error=f"{type(error).__name__}: {str(error)[:300]}")]
            for r in measured:
                r.update(model=model, config=label, mode=mode)
            data["results"] = in_table_order(data["results"] + measured)
            with open(output, "w") as f:
                json.dump(data, f, indent=2)
            compare._cleanup()
    print(f"wrote {output}", file=sys.stderr)
    print(report.markdown_table(data))


if __name__ == "__main__":
    main()
