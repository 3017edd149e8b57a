"""Kernels and bytes per step of the full fixtures, before and after fusion.

For each full graph in test/graphs, fuse-opt's cost model (--fuse-print-cost)
counts the kernels the graph would launch (fusions, GEMM calls, other ops;
views and constants are free) and the bytes it moves through global memory
(every kernel reads its inputs and writes its results once):

  exported  the graph as the exporter wrote it (f32, composites whole)
  unfused   fuse-pipeline without fuse-form-fusions: mixed precision,
            decomposition, canonicalize, cse -- every op its own kernel
  fused     the whole fuse-pipeline

in bf16 (fuse-pipeline's default, the precision of the torch baseline) and
f32 (amp=none). Beside them it puts the kernels PyTorch launches for the same
step, eager and torch.compile (Inductor), from torch_kernel_counts.json
(torch_kernel_counts.py beside this, measured on the GPU machine). No GPU needed.

    python3 bench/fusion/fusion_counts.py [--fuse-opt PATH] [-o bench/fusion/fusion_counts.json]
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

# Fixture -> (model, optimizer) of the torch measurement for the same step.
FIXTURES = {
    "gpt2-full-train": ("gpt2", None),
    "gpt2-full-train-adamw": ("gpt2", "AdamW(fused=True)"),
    "bert-full-b4-train": ("bert", None),
    "llama-full-train": ("llama", None),
    "gpt2-full-infer": (None, None),
    "bert-full-b4-infer": (None, None),
    "llama-full-infer": (None, None),
}

UNFUSED = "--fuse-auto-mixed-precision=dtype={amp} --fuse-decompose=keep=gelu --canonicalize --cse"


def cost(fuse_opt, graph, passes):
    command = [fuse_opt, graph, *passes.split(), "--fuse-print-cost=per-op=false", "-o", os.devnull]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"fusion_counts: {' '.join(command)} failed:\n{run.stderr}")
    numbers = {}
    for key, pattern in (("flops", r"^flops: (\d+)"), ("bytes_read", r"^bytes read: (\d+)"),
                         ("bytes_written", r"^bytes written: (\d+)"), ("kernels", r"^kernels: (\d+)")):
        numbers[key] = int(re.search(pattern, run.stdout, re.M).group(1))
    return numbers


def torch_counts(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        measured = json.load(f)
    return {(r["model"], r["optimizer"], r["backend"]): r["kernels_per_step"] for r in measured["results"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fuse-opt", default=os.path.join(os.environ.get("FUSE_BIN_DIR", os.path.join(HERE, "..", "..", "build", "bin")), "fuse-opt"))
    parser.add_argument("--torch-counts", default=os.path.join(HERE, "torch_kernel_counts.json"))
    parser.add_argument("-o", "--output", default=os.path.join(HERE, "fusion_counts.json"))
    args = parser.parse_args()
    torch = torch_counts(args.torch_counts)

    results = []
    for fixture, (model, optimizer) in FIXTURES.items():
        graph = os.path.join(GRAPHS, fixture + ".mlir")
        entry = dict(fixture=fixture, exported=cost(args.fuse_opt, graph, ""))
        for amp in ("bf16", "none"):
            started = time.time()
            fused = cost(args.fuse_opt, graph, f"--fuse-pipeline=amp={amp}")
            seconds = time.time() - started
            unfused = cost(args.fuse_opt, graph, UNFUSED.format(amp=amp) if amp != "none"
                           else UNFUSED.split(" ", 1)[1])
            entry[amp] = dict(unfused=unfused, fused=fused, pipeline_seconds=round(seconds, 2))
        if model:
            entry["torch"] = {backend: torch.get((model, optimizer, backend))
                              for backend in ("eager", "inductor")}
        results.append(entry)
        print(f"{fixture}: done", file=sys.stderr)

    with open(args.output, "w") as f:
        json.dump(dict(date=time.strftime("%Y-%m-%d"), results=results), f, indent=2)

    gb = lambda c: (c["bytes_read"] + c["bytes_written"]) / 1e9
    print(f"{'fixture':24} {'kernels: exported':>17} {'unfused':>8} {'fused':>6} {'eager':>6} {'inductor':>8}"
          f" {'GB: unfused':>12} {'fused':>6}   (bf16)")
    for e in results:
        t = e.get("torch", {})
        show = lambda v: f"{v:.0f}" if v is not None else "-"
        print(f"{e['fixture']:24} {e['exported']['kernels']:17} {e['bf16']['unfused']['kernels']:8} "
              f"{e['bf16']['fused']['kernels']:6} {show(t.get('eager')):>6} {show(t.get('inductor')):>8}"
              f" {gb(e['bf16']['unfused']):12.1f} {gb(e['bf16']['fused']):6.1f}")


if __name__ == "__main__":
    main()
