"""The CUDA backend on the GPU: memory-bound kernels against the copy bandwidth,
GEMMs against cuBLAS through torch, whole training steps against PyTorch eager
and torch.compile, and compile times. Needs a GPU, fuse-run built with the CUDA
toolkit (FUSE_BIN_DIR) and torch.

    python3 bench/codegen/cuda_bench.py [--parts kernels,gemms,steps,compile]
                                        [-o bench/codegen/cuda_bench.json]

Torch GEMMs are timed both plainly and replayed from a CUDA graph (as
fuse-run replays its step); the graph replay is the comparison. Each fuse
number is `fuse-run --device=cuda --iters N` on a graph: the median
step time over N CUDA-graph replays (CUDA events). Single-kernel graphs are
made here (one fusion each; the plan is checked to have one launch), so their
step time is the kernel's time. Bytes are what the kernel must move: its
inputs read once and its outputs written once.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
BIN = os.environ.get("FUSE_BIN_DIR", os.path.join(ROOT, "build", "bin"))
GRAPHS = os.path.join(ROOT, "test", "graphs")
sys.path.insert(0, os.path.join(ROOT, "bench", "fusion"))


def fuse_run(graph, *extra, iters=50):
    command = [os.path.join(BIN, "fuse-run"), graph, "--device=cuda", f"--iters={iters}", *extra]
    started = time.time()
    result = subprocess.run(command, capture_output=True, text=True)
    wall = time.time() - started
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")
    out = result.stdout
    step = re.search(r"^step: ([0-9.]+) ms", out, re.M)
    launches = re.search(r"^plan: (\d+) kernel launches \((\d+) distinct kernels\), (\d+) cuBLASLt GEMMs", out, re.M)
    compile_line = re.search(r"^compile: pipeline (\d+) ms, codegen (\d+) ms, NVRTC ([0-9.]+) s \((\d+) modules, (\d+) from the cache\)(?:; cached start (\d+) ms)?", out, re.M)
    return dict(
        step_ms=float(step.group(1)) if step else None,
        launches=int(launches.group(1)), distinct_kernels=int(launches.group(2)),
        gemms=int(launches.group(3)),
        pipeline_ms=int(compile_line.group(1)), codegen_ms=int(compile_line.group(2)),
        nvrtc_s=float(compile_line.group(3)), modules=int(compile_line.group(4)),
        cache_hits=int(compile_line.group(5)),
        cached_start_ms=int(compile_line.group(6)) if compile_line.group(6) else None,
        wall_s=round(wall, 2), output=out)


def cuda_time_ms(fn, warmup=5, iters=50):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def cuda_graph_time_ms(fn, iters=50):
    """fn captured once in a CUDA graph and replayed: timed as fuse-run's
    replays are, without launch overhead."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return cuda_time_ms(graph.replay, iters=iters)


def copy_bandwidth():
    x = torch.empty(2**28, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    ms = cuda_time_ms(lambda: y.copy_(x))
    return 2 * x.numel() * 4 / ms / 1e6  # GB/s, bytes read + written


# Memory-bound single-kernel graphs: (name, kind, MLIR body, bytes moved).
def memory_graphs():
    graphs = []
    m, n = 16384, 8192
    f32 = 4
    graphs.append(("loop add f32 16384x8192", "loop", f"""
func.func @main(%x: tensor<{m}x{n}xf32>, %y: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %0 = fuse.add %x, %y : tensor<{m}x{n}xf32>
  return %0 : tensor<{m}x{n}xf32>
}}""", 3 * m * n * f32))
    graphs.append(("loop cast f32->bf16 16384x8192", "loop", f"""
func.func @main(%x: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xbf16> {{
  %0 = fuse.cast %x : tensor<{m}x{n}xf32> to tensor<{m}x{n}xbf16>
  return %0 : tensor<{m}x{n}xbf16>
}}""", m * n * (f32 + 2)))
    r, c = 32768, 4096
    graphs.append(("row softmax f32 32768x4096", "row_reduction", f"""
func.func @main(%x: tensor<{r}x{c}xf32>) -> tensor<{r}x{c}xf32> {{
  %0 = fuse.softmax %x, dim = 1 : tensor<{r}x{c}xf32>
  return %0 : tensor<{r}x{c}xf32>
}}""", 2 * r * c * f32))
    r2, c2 = 65536, 768
    graphs.append(("row layer_norm f32 65536x768", "row_reduction", f"""
func.func @main(%x: tensor<{r2}x{c2}xf32>, %w: tensor<{c2}xf32>, %b: tensor<{c2}xf32>) -> tensor<{r2}x{c2}xf32> {{
  %y, %mean, %rstd = fuse.layer_norm %x weight(%w) bias(%b) axis = 1 epsilon = 1.0e-05 : (tensor<{r2}x{c2}xf32>, tensor<{c2}xf32>, tensor<{c2}xf32>) -> (tensor<{r2}x{c2}xf32>, tensor<{r2}x1xf32>, tensor<{r2}x1xf32>)
  return %y : tensor<{r2}x{c2}xf32>
}}""", 2 * r2 * c2 * f32))
    r3, c3 = 4096, 50304
    graphs.append(("row log_softmax f32 4096x50304", "row_reduction", f"""
func.func @main(%x: tensor<{r3}x{c3}xf32>) -> tensor<{r3}x{c3}xf32> {{
  %0 = fuse.log_softmax %x, dim = 1 : tensor<{r3}x{c3}xf32>
  return %0 : tensor<{r3}x{c3}xf32>
}}""", 2 * r3 * c3 * f32))
    k, cols = 65536, 1024
    graphs.append(("column sum f32 65536x1024", "column_reduction", f"""
func.func @main(%x: tensor<{k}x{cols}xf32>) -> tensor<{cols}xf32> {{
  %0 = fuse.reduce sum %x, dims = [0] : (tensor<{k}x{cols}xf32>) -> tensor<{cols}xf32>
  return %0 : tensor<{cols}xf32>
}}""", k * cols * f32 + cols * f32))
    k2, cols2 = 8192, 768
    graphs.append(("column sum f32 8192x768 (bias grad)", "column_reduction", f"""
func.func @main(%x: tensor<{k2}x{cols2}xf32>) -> tensor<{cols2}xf32> {{
  %0 = fuse.reduce sum %x, dims = [0] : (tensor<{k2}x{cols2}xf32>) -> tensor<{cols2}xf32>
  return %0 : tensor<{cols2}xf32>
}}""", k2 * cols2 * f32 + cols2 * f32))
    return graphs


def bench_kernels(tmp):
    peak = copy_bandwidth()
    rows = []
    for name, kind, text, nbytes in memory_graphs():
        path = os.path.join(tmp, re.sub(r"[^a-z0-9]+", "_", name) + ".mlir")
        with open(path, "w") as f:
            f.write(text)
        r = fuse_run(path, "--pipeline=fuse-pipeline{amp=none}")
        gbps = nbytes / r["step_ms"] / 1e6
        rows.append(dict(name=name, kind=kind, bytes=nbytes, step_ms=r["step_ms"],
                         launches=r["launches"], gb_per_s=round(gbps, 1),
                         fraction_of_copy=round(gbps / peak, 3)))
        print(f"{name:40} {r['step_ms']:8.3f} ms {gbps:8.1f} GB/s {gbps / peak:6.1%} of copy "
              f"({r['launches']} launch)", flush=True)
    return dict(copy_gb_per_s=round(peak, 1), kernels=rows)


GEMM_SHAPES = [  # GPT-2 124M B8 T1024: (m, k, n), activations x weight^T
    (8192, 768, 2304), (8192, 768, 768), (8192, 768, 3072), (8192, 3072, 768), (8192, 768, 50304),
]


def bench_gemms(tmp):
    rows = []
    for m, k, n in GEMM_SHAPES:
        path = os.path.join(tmp, f"gemm_{m}_{k}_{n}.mlir")
        with open(path, "w") as f:
            f.write(f"""
func.func @main(%x: tensor<{m}x{k}xbf16>, %w: tensor<{n}x{k}xbf16>) -> tensor<{m}x{n}xbf16> {{
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<{m}x{k}xbf16>, tensor<{n}x{k}xbf16>) -> tensor<{m}x{n}xbf16>
  return %0 : tensor<{m}x{n}xbf16>
}}""")
        r = fuse_run(path, iters=100)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        torch_ms = cuda_graph_time_ms(lambda: torch.matmul(x, w.t(), out=out), iters=100)
        eager_ms = cuda_time_ms(lambda: torch.matmul(x, w.t(), out=out), iters=100)
        flops = 2 * m * n * k
        row = dict(m=m, k=k, n=n, fuse_ms=r["step_ms"], torch_ms=torch_ms, torch_eager_ms=eager_ms,
                   fuse_tflops=round(flops / r["step_ms"] / 1e9, 1),
                   torch_tflops=round(flops / torch_ms / 1e9, 1),
                   fuse_over_torch=round(torch_ms / r["step_ms"], 3))
        rows.append(row)
        print(f"gemm {m}x{k}x{n}: fuse {row['fuse_tflops']} TFLOP/s, torch {row['torch_tflops']} "
              f"({row['fuse_over_torch']:.1%})", flush=True)
    return rows


def bench_steps(models):
    import torch_kernel_counts  # the eager / torch.compile measurement of bench/fusion
    rows = []
    for name, graph, batch in models:
        r = fuse_run(os.path.join(GRAPHS, graph), iters=20)
        row = dict(model=name, graph=graph, fuse_step_ms=r["step_ms"], fuse_launches=r["launches"],
                   fuse_gemms=r["gemms"])
        for backend in ("eager", "inductor"):
            t = torch_kernel_counts.measure_step(name, backend, batch)
            row[f"{backend}_step_ms"] = t
        rows.append(row)
        print(f"{name} step: fuse {row['fuse_step_ms']:.2f} ms, eager {row['eager_step_ms']:.2f}, "
              f"torch.compile {row['inductor_step_ms']:.2f}", flush=True)
    return rows


def bench_compile():
    graph = os.path.join(GRAPHS, "gpt2-full-train-adamw.mlir")
    cache = tempfile.mkdtemp()
    cold = fuse_run(graph, f"--cache-dir={cache}", iters=0)
    return dict(graph="gpt2-full-train-adamw.mlir", pipeline_ms=cold["pipeline_ms"],
                codegen_ms=cold["codegen_ms"], nvrtc_cold_s=cold["nvrtc_s"],
                modules=cold["modules"], cached_start_ms=cold["cached_start_ms"],
                process_wall_s=cold["wall_s"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="kernels,gemms,compile,steps")
    parser.add_argument("-o", "--output", default=os.path.join(HERE, "cuda_bench.json"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("cuda_bench: no CUDA device")
    parts = args.parts.split(",")
    result = dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                  date=time.strftime("%Y-%m-%d"))
    with tempfile.TemporaryDirectory() as tmp:
        if "kernels" in parts:
            result["memory_bound"] = bench_kernels(tmp)
        if "gemms" in parts:
            result["gemms"] = bench_gemms(tmp)
    if "compile" in parts:
        result["compile"] = bench_compile()
        print(f"compile: {result['compile']}", flush=True)
    if "steps" in parts:
        result["steps"] = bench_steps([("gpt2", "gpt2-full-train.mlir", None),
                                       ("bert", "bert-full-b32-train.mlir", 32)])
    with open(args.output, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
