#!/usr/bin/env python3
"""Fuse's flash-attention kernels against torch SDPA, on the GPU machine.

    python3 bench/attention/flash_bench.py --harness PATH/FlashAttentionBench \
        [--out bench/attention/flash_bench.json]

For each (B, H, T, D) and causal flag: the harness (test/unittests/
FlashAttentionBench.cpp, built here, linked with FuseRuntime) times the
forward alone and forward + backward with CUDA-graph replay, for the
cp.async kernels and for the warp-specialised TMA kernels; torch's
scaled_dot_product_attention is timed in the same run with CUDA events on
the same shapes (bf16, [B, H, T, D]) with its flash and cuDNN backends, and
the ratio is taken against the faster of the two. TFLOP/s
follow FlashAttention's convention: forward 4 B H T^2 D (halved when
causal), backward 2.5 x forward, so forward + backward is 3.5 x.
"""
import argparse
import json
import subprocess

SHAPES = [(8, 12, 1024, 64), (4, 16, 512, 64), (4, 32, 2048, 128), (1, 32, 8192, 128)]
BACKENDS = ("FLASH_ATTENTION", "CUDNN_ATTENTION")


def sdpa_times(b, h, t, d, causal, backend, iters=50):
    """Forward and forward + backward median ms of torch SDPA pinned to
    `backend` (a torch.nn.attention.SDPBackend name); None where torch has
    no kernel of that backend for the shape."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    try:
        with sdpa_kernel(getattr(SDPBackend, backend)):
            return _sdpa_times(b, h, t, d, causal, iters)
    except RuntimeError:
        return None, None


def _sdpa_times(b, h, t, d, causal, iters):
    import torch
    import torch.nn.functional as F
    q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    do = torch.randn_like(q)

    def fwd():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def fwd_bwd():
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        out.backward(do)

    def median_ms(fn):
        for _ in range(10):
            fn()
        times = []
        for _ in range(iters):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        times.sort()
        return times[len(times) // 2]

    return median_ms(fwd), median_ms(fwd_bwd)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--harness", required=True)
    parser.add_argument("--out", default="bench/attention/flash_bench.json")
    args = parser.parse_args()
    import torch
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
               "dtype": "bf16", "flop_convention":
               "fwd 4*B*H*T^2*D (halved if causal); fwd+bwd 3.5x fwd", "rows": []}
    variants = ("cp_async", "tma", "tma_cta_per_tile")
    print(f"{'shape':<20}{'causal':>7}" + "".join(f"{v + ' fwd':>13}" for v in variants)
          + f"{'sdpa fwd':>10}" + "".join(f"{v + ' f+b':>13}" for v in variants)
          + f"{'sdpa f+b':>10}   (TFLOP/s; sdpa: the faster backend)")
    for b, h, t, d in SHAPES:
        for causal in (False, True):
            run = subprocess.run([args.harness, str(b), str(h), str(t), str(d),
                                  str(int(causal))], capture_output=True, text=True)
            fuse = json.loads(run.stdout.strip().splitlines()[-1])
            if "error" in fuse:
                raise SystemExit(f"harness failed at {(b, h, t, d, causal)}: {fuse['error']}")
            flops = 4.0 * b * h * t * t * d / (2 if causal else 1)
            row = {"B": b, "H": h, "T": t, "D": d, "causal": causal, "fuse": fuse}
            for backend in BACKENDS:
                sdpa_fwd, sdpa_fb = sdpa_times(b, h, t, d, causal, backend)
                row[backend.lower()] = None if sdpa_fwd is None else {
                    "fwd_ms": sdpa_fwd, "fwd_bwd_ms": sdpa_fb,
                    "fwd_tflops": flops / sdpa_fwd / 1e9,
                    "fwd_bwd_tflops": 3.5 * flops / sdpa_fb / 1e9}
            best = [row[x.lower()] for x in BACKENDS if row[x.lower()]]
            best_fwd = max(r["fwd_tflops"] for r in best)
            best_fb = max(r["fwd_bwd_tflops"] for r in best)
            for v in variants:
                row[f"{v}_fwd_ratio_to_best_sdpa"] = fuse[v]["fwd_tflops"] / best_fwd
                row[f"{v}_fwd_bwd_ratio_to_best_sdpa"] = fuse[v]["fwd_bwd_tflops"] / best_fb
            results["rows"].append(row)
            print(f"{str((b, h, t, d)):<20}{str(causal):>7}"
                  + "".join(f"{fuse[v]['fwd_tflops']:>13.1f}" for v in variants)
                  + f"{best_fwd:>10.1f}"
                  + "".join(f"{fuse[v]['fwd_bwd_tflops']:>13.1f}" for v in variants)
                  + f"{best_fb:>10.1f}", flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
