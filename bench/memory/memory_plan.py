"""Planned memory of the full training fixtures: arena against its lower bound,
the step's total against PyTorch's peak, and the rematerialization curve.

For each full training graph in test/graphs, `fuse-opt --fuse-pipeline
--fuse-print-memory` gives the arena (every intermediate, packed) and its lower
bound (the largest sum of live intermediate bytes, 256-byte aligned). The
step's total adds the external buffers: arguments (weights, batch, optimizer
state) and results (loss, gradients or updated state), comparable with
torch.cuda.max_memory_allocated for the same step (measured on the GPU machine
by bench/fusion/torch_kernel_counts.py). The curve reruns the pipeline with
remat-fraction 1.0, 0.75, 0.5 and 0.35 and records the planned peak, the FLOPs
fuse-rematerialize added, or its error (the smallest peak it could reach).
No GPU needed.

    python3 bench/memory/memory_plan.py [--fuse-opt PATH] [-o bench/memory/memory_plan.json]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHS = os.path.join(HERE, "..", "..", "test", "graphs")
TORCH = os.path.join(HERE, "..", "fusion", "torch_kernel_counts.json")
FIXTURES = {"gpt2-full-train": ("gpt2", None), "gpt2-full-train-adamw": ("gpt2", "AdamW(fused=True)"),
            "bert-full-b4-train": ("bert", None), "llama-full-train": ("llama", None),
            # The tiny steps that the pipeline test checks under remat-fraction=0.5
            # (no PyTorch peak: nobody runs them on the GPU).
            "gpt2-tiny-train": (None, None), "gpt2-tiny-train-adamw": (None, None),
            "bert-tiny-train": (None, None), "llama-tiny-train": (None, None)}
FRACTIONS = (1.0, 0.75, 0.5, 0.35)
BITS = {"f32": 32, "bf16": 16, "f16": 16, "i64": 64, "i32": 32, "i1": 8}


def run(fuse_opt, graph, pipeline):
    command = [fuse_opt, graph, f"--fuse-pipeline={pipeline}", "--fuse-print-memory", "-o", os.devnull]
    return subprocess.run(command, capture_output=True, text=True)


def external_bytes(graph):
    """Bytes of the function's arguments and results (the caller's memory)."""
    text = open(graph).read()
    start = text.index("func.func")
    header = text[start:text.index(") {\n", text.index("-> (", start))]
    total = 0
    for shape, dtype in re.findall(r"tensor<((?:\d+x)*)(\w+)>", header):
        elements = 1
        for size in filter(None, shape.split("x")):
            elements *= int(size)
        total += elements * BITS[dtype] // 8
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fuse-opt", default=os.path.join(os.environ.get(
        "FUSE_BIN_DIR", os.path.join(HERE, "..", "..", "build", "bin")), "fuse-opt"))
    parser.add_argument("-o", "--output", default=os.path.join(HERE, "memory_plan.json"))
    args = parser.parse_args()
    torch = {}
    if os.path.exists(TORCH):
        for r in json.load(open(TORCH))["results"]:
            torch[(r["model"], r["optimizer"], r["backend"])] = r.get("peak_allocated_bytes")

    results = []
    for fixture, (model, optimizer) in FIXTURES.items():
        graph = os.path.join(GRAPHS, fixture + ".mlir")
        entry = dict(fixture=fixture, external_bytes=external_bytes(graph), curve=[])
        for fraction in (0.0,) + FRACTIONS:
            started = time.time()
            out = run(args.fuse_opt, graph, f"remat-fraction={fraction}" if fraction else "")
            point = dict(fraction=fraction, seconds=round(time.time() - started, 2))
            if out.returncode == 0:
                point["arena_bytes"] = int(re.search(r"^arena: (\d+)", out.stdout, re.M).group(1))
                point["lower_bound_bytes"] = int(re.search(r"^lower bound: (\d+)", out.stdout, re.M).group(1))
                flops = re.search(r"(\d+) FLOPs added", out.stderr)
                point["flops_added"] = int(flops.group(1)) if flops else 0
                policy = re.search(r"kernels; (.*)\); peak", out.stderr)
                point["policy"] = policy.group(1) if policy else None
            else:
                smallest = re.search(r"the smallest peak reached, recomputing any kernel, is (\d+) bytes", out.stderr)
                point["error"] = out.stderr.strip().splitlines()[0]
                point["smallest_peak_bytes"] = int(smallest.group(1)) if smallest else None
            if fraction == 0.0:
                entry["default"] = point
            else:
                entry["curve"].append(point)
        entry["torch_peak_bytes"] = {b: torch.get((model, optimizer, b)) for b in ("eager", "inductor")}
        results.append(entry)
        print(f"{fixture}: done", file=sys.stderr)
    with open(args.output, "w") as f:
        json.dump(dict(date=time.strftime("%Y-%m-%d"), results=results), f, indent=2)

    def gb(b):
        if not b:
            return "-"
        return next(f"{b / scale:.{digits}f}{unit}" for scale, unit, digits in
                    ((1e9, "G", 2), (1e6, "M", 1), (1e3, "K", 0), (1, "", 0)) if b >= scale or scale == 1)
    print(f"{'fixture':22} {'arena':>6} {'bound':>6} {'ratio':>6} {'+ext':>6} {'eager':>6} {'induct':>6}   remat 100/75/50/35% (x: not reached)")
    for e in results:
        d = e["default"]
        curve = " ".join(gb(p["arena_bytes"]) if "arena_bytes" in p else "x" for p in e["curve"])
        t = e["torch_peak_bytes"]
        print(f"{e['fixture']:22} {gb(d['arena_bytes']):>6} {gb(d['lower_bound_bytes']):>6} "
              f"{d['arena_bytes'] / d['lower_bound_bytes']:6.3f} {gb(d['arena_bytes'] + e['external_bytes']):>6} "
              f"{gb(t['eager']):>6} {gb(t['inductor']):>6}   {curve}")


if __name__ == "__main__":
    main()
