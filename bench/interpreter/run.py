#!/usr/bin/python3
"""Time one GPT-2-small layer, forward + backward, in the reference interpreter.

Generates @gpt2_layer_train at B=1, T=1024, C=768, H=12 (gpt2_layer_graph.py),
runs `fuse-run` on it --repeats times and writes results.json next to this
script: the machine, the config, the graph's op count, each run's interpreter
time (the `time X ms` line of fuse-run's summary) and wall time, the medians,
and the requirement (< 60 s).

Inputs: by default GPT-2-initialisation-like values drawn with numpy (Linear
weights N(0, 0.02), layer-norm weight 1 and bias 0, x N(0, 1), grad_y
N(0, 1)), passed with --inputs; --inputs-from fuse-run uses fuse-run's own
random inputs (every tensor N(0, 1)), which saturate the softmax.

    run.py [--fuse-run PATH] [--repeats 3] [--batch 1 --seq 1024 --width 768 --heads 12]
           [--inputs-from numpy|fuse-run] [-o results.json]
"""

import argparse
import collections
import datetime
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpt2_layer_graph as gen  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
REQUIREMENT_S = 60.0


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def gpt2_init_inputs(B, T, C, F, seed):
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, shape_fn in gen.PARAMS:
        shape = shape_fn(C, F)
        if name.startswith("ln_") and name.endswith(".weight"):
            a = np.ones(shape)
        elif name.endswith(".bias"):
            a = np.zeros(shape)
        else:
            a = 0.02 * rng.standard_normal(shape)
        inputs[name] = a.astype(np.float32)
    inputs["x"] = rng.standard_normal((B, T, C)).astype(np.float32)
    inputs["grad_y"] = rng.standard_normal((B, T, C)).astype(np.float32)
    return inputs


def op_histogram(text):
    ops = re.findall(r"=\s+fuse\.([a-z_]+)", text)
    return len(ops), dict(sorted(collections.Counter(ops).items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fuse-run", default=os.path.join(ROOT, "build", "bin", "fuse-run"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--inputs-from", choices=["numpy", "fuse-run"], default="numpy")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "results.json"))
    a = ap.parse_args()

    B, T, C, H = a.batch, a.seq, a.width, a.heads
    F = 4 * C
    work = tempfile.mkdtemp(prefix="gpt2_layer_bench_")
    graph = os.path.join(work, "gpt2_layer_train.mlir")
    text, _ = gen.build(B, T, C, H, F)
    with open(graph, "w") as f:
        f.write(text)
    n_ops, hist = op_histogram(text)

    cmd = [a.fuse_run, graph]
    if a.inputs_from == "numpy":
        inputs = os.path.join(work, "inputs.npz")
        np.savez(inputs, **gpt2_init_inputs(B, T, C, F, a.seed))
        cmd += ["--inputs", inputs]
    else:
        cmd += ["--seed", str(a.seed)]

    runs = []
    for i in range(a.repeats):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"fuse-run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        m = re.search(r"^\s*time\s+([0-9.eE+-]+)\s*ms", proc.stdout, re.M)
        if not m:
            sys.exit(f"no 'time X ms' line in fuse-run's summary:\n{proc.stdout}")
        interp_s = float(m.group(1)) / 1000.0
        runs.append({"interpreter_s": round(interp_s, 3), "wall_s": round(wall, 3)})
        print(f"run {i + 1}: interpreter {interp_s:.3f} s, wall {wall:.3f} s", flush=True)
    summary_tail = [l for l in proc.stdout.splitlines() if l.strip().startswith(("output", "time"))]

    med_interp = statistics.median(r["interpreter_s"] for r in runs)
    med_wall = statistics.median(r["wall_s"] for r in runs)
    peak_rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    results = {
        "benchmark": "GPT-2-small layer forward + backward on the CPU reference interpreter (fuse-run --device=cpu)",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "nproc": os.cpu_count() if not hasattr(os, "sched_getaffinity") else len(os.sched_getaffinity(0)),
            "cpu_model": cpu_model(),
            "platform": platform.platform(),
        },
        "config": {"batch": B, "seq": T, "width": C, "heads": H, "head_dim": C // H, "mlp_width": F,
                   "dtype": "f32", "causal": True, "inputs": a.inputs_from, "seed": a.seed},
        "graph": {"function": "@gpt2_layer_train", "ops": n_ops, "op_counts": hist,
                  "generator": "bench/interpreter/gpt2_layer_graph.py"},
        "command": " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd),
        "runs": runs,
        "median_interpreter_s": round(med_interp, 3),
        "median_wall_s": round(med_wall, 3),
        "peak_rss_mib": round(peak_rss_mib, 1),
        "requirement_s": REQUIREMENT_S,
        "meets_requirement": med_wall < REQUIREMENT_S,
        "last_summary": summary_tail,
    }
    with open(a.output, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print(f"median: interpreter {med_interp:.3f} s, wall {med_wall:.3f} s "
          f"(requirement < {REQUIREMENT_S:.0f} s: {'met' if results['meets_requirement'] else 'NOT met'}); "
          f"wrote {a.output}")


if __name__ == "__main__":
    main()
