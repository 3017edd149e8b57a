"""Host cost of calling a compiled training step (fuse.compile_step, or a
forward + backward pair through torch.compile), and what it does to the
step time as bench/run.py measures it.

    python3 bench/step_overhead.py [--models gpt2,bert32] [--adamw] [-o bench/step_overhead.json]
    python3 bench/step_overhead.py --torch-compile [--models gpt2,bert-b4,llama] [-o ...]

A call stages the batch, binds every parameter, gradient and optimizer
state tensor to the signature and replays the captured CUDA graph. Two
variants in one process, on the same compiled step:
  rebind  checks and binds every tensor on every call (what each call did
          before the binding was kept)
  reuse   keeps the last call's binding while the memory stays put
Per variant: host milliseconds per call (the call's wall time with the GPU
idle before it), and the median step time with CUDA events around the call
(bench/run.py's measure: the GPU waits while the host binds).

With --torch-compile, the harness's training step (forward, loss, backward)
of each model (bench/run.py's names) through torch.compile(backend="fuse")
and Inductor's reduce-overhead mode, in one process each: host ms per step,
step ms, and for Fuse the part of the host time spent in the backend's own
calls (`fuse_graph_ms`: binding, pools, slabs), the rest being dynamo's
guards, AOTAutograd's wrappers and autograd's engine, and the CUDA graphs
captured per steady step (`captures_per_step`: 0 when every call replays).
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import fuse  # noqa: E402
from fuse import compare  # noqa: E402

CONFIGS = {"gpt2": ("gpt2", 8), "bert32": ("bert", 32), "bert4": ("bert", 4), "llama": ("llama", 8)}
CALLS = 20


def host_ms(call):
    times = []
    for _ in range(CALLS):
        torch.cuda.synchronize()
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1e3)
    torch.cuda.synchronize()
    return statistics.median(times)


def measure(name, adamw, cache_dir):
    model_name, batch = CONFIGS[name]
    workload = compare.builtin_workload(model_name, "full", batch, None, 0)
    workload.adamw = adamw
    workload.cuda_inputs = compare._to_device(workload.inputs, "cuda")
    workload.cuda_targets = compare._to_device(workload.targets, "cuda")
    model, optimizer = compare._fresh_model(workload)
    data = (workload.cuda_inputs, workload.cuda_targets)
    step = fuse.compile_step(model, workload.loss_fn, data, optimizer=optimizer, amp="bf16", cache_dir=cache_dir)
    variants = {"rebind": lambda: (setattr(step, "_binding", None), step(data)),
                "reuse": lambda: step(data)}
    result = dict(model=name, adamw=adamw, tensors=len(step.compiled.inputs) + len(step.compiled.outputs))
    for variant, call in variants.items():
        for _ in range(3):
            call()
        result[f"{variant}_host_ms"] = host_ms(call)
        result[f"{variant}_step_ms"] = compare._time_steps(call, CALLS)[0]
    step.close()
    compare._cleanup()
    return result


def measure_torch_compile(name, system, cache_dir):
    """One row of --torch-compile: `system` (fuse-compile or inductor-reduce-
    overhead) on the harness's training step of `name`."""
    from fuse import backend
    from fuse.harness import measure as harness_measure, systems, workloads
    os.environ["FUSE_CACHE_DIR"] = cache_dir
    built = workloads.resolve(name, "full").build(0, "cuda")
    prepared = systems.prepare(system, "train", built, cache_dir)
    spent = [0.0]
    original = backend._FuseGraph.__call__

    def timed(self, *args):
        started = time.perf_counter()
        try:
            return original(self, *args)
        finally:
            spent[0] += time.perf_counter() - started
    backend._FuseGraph.__call__ = timed
    try:
        for _ in range(5):
            prepared.step()
        spent[0] = 0.0
        captures = backend.graph_captures()
        result = dict(model=name, system=system, host_ms=host_ms(prepared.step))
        result["fuse_graph_ms"] = spent[0] * 1e3 / CALLS if system == "fuse-compile" else None
        result["captures_per_step"] = ((backend.graph_captures() - captures) / CALLS
                                       if system == "fuse-compile" else None)
        result["step_ms"] = harness_measure.time_steps(prepared.step, CALLS)
    finally:
        backend._FuseGraph.__call__ = original
        prepared.close()
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", help="comma-separated: " + ", ".join(CONFIGS) + " (default gpt2,bert32); "
                        "with --torch-compile bench/run.py's names (default gpt2,bert-b4,llama)")
    parser.add_argument("--adamw", action="store_true", help="include the AdamW update in the step")
    parser.add_argument("--torch-compile", action="store_true",
                        help="measure forward + backward through torch.compile (Fuse's backend and Inductor "
                             "reduce-overhead) on bench/run.py's models instead of compile_step")
    parser.add_argument("-o", "--output", default=os.path.join(HERE, "step_overhead.json"))
    args = parser.parse_args(argv)
    args.models = args.models or ("gpt2,bert-b4,llama" if args.torch_compile else "gpt2,bert32")
    if not torch.cuda.is_available():
        raise SystemExit("bench/step_overhead.py: needs a CUDA GPU")
    results = []
    if args.torch_compile:
        with tempfile.TemporaryDirectory() as cache_dir:
            for name in args.models.split(","):
                for system in ("fuse-compile", "inductor-reduce-overhead"):
                    r = measure_torch_compile(name, system, cache_dir)
                    results.append(r)
                    ours = (f", in the backend {r['fuse_graph_ms']:.2f}, {r['captures_per_step']:.1f} CUDA graph "
                            "captures a step" if r["fuse_graph_ms"] is not None else "")
                    print(f"{name:8s} {system:25s} host ms/step {r['host_ms']:.2f}{ours}  "
                          f"step ms {r['step_ms']:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as cache_dir:
        for name in ([] if args.torch_compile else args.models.split(",")):
            results.append(measure(name, args.adamw, cache_dir))
            r = results[-1]
            print(f"{name:7s} {r['tensors']:5d} tensors  host ms/call: rebind {r['rebind_host_ms']:.2f}, "
                  f"reuse {r['reuse_host_ms']:.2f}  step ms: rebind {r['rebind_step_ms']:.2f}, "
                  f"reuse {r['reuse_step_ms']:.2f}", flush=True)
    data = dict(device=torch.cuda.get_device_name(), date=time.strftime("%Y-%m-%d"), torch=torch.__version__,
                command="bench/step_overhead.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                results=results)
    with open(args.output, "w") as f:
        json.dump(data, f, indent=2)
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
