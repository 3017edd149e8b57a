#!/usr/bin/env python3
"""Fuse's flash-attention kernels against torch SDPA, on the GPU machine.

    python3 bench/attention/flash_bench.py --harness PATH/FlashAttentionBench \
        [--out bench/attention/flash_bench.json]

For each (B, H, T, D) and causal flag: the harness (test/unittests/
FlashAttentionBench.cpp, built here, linked with FuseRuntime) times the
forward alone and forward + backward with CUDA-graph replay; torch's
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
    print(f"{'shape':<22}{'causal':>7}{'fuse fwd':>10}{'sdpa fwd':>10}"
          f"{'fuse f+b':>10}{'sdpa f+b':>10}   (TFLOP/s; sdpa: the faster backend)")
    for b, h, t, d in SHAPES:
        for causal in (False, True):
            run = subprocess.run([args.harness, str(b), str(h), str(t), str(d),
                                  str(int(causal))], capture_output=True, text=True)
            fuse = json.loads(run.stdout.strip().splitlines()[-1])
            flops = 4.0 * b * h * t * t * d / (2 if causal else 1)
            row = {"B": b, "H": h, "T": t, "D": d, "causal": causal, "fuse": fuse}
            for backend in BACKENDS:
                sdpa_fwd, sdpa_fb = sdpa_times(b, h, t, d, causal, backend)
                row[backend.lower()] = None if sdpa_fwd is None else {
                    "fwd_ms": sdpa_fwd, "fwd_bwd_ms": sdpa_fb,
                    "fwd_tflops": flops / sdpa_fwd / 1e9,
                    "fwd_bwd_tflops": 3.5 * flops / sdpa_fb / 1e9}
            best = [row[x.lower()] for x in BACKENDS if row[x.lower()]]
            row["fwd_ratio_to_best_sdpa"] = fuse["fwd_tflops"] / max(r["fwd_tflops"] for r in best)
            row["fwd_bwd_ratio_to_best_sdpa"] = fuse["fwd_bwd_tflops"] / max(r["fwd_bwd_tflops"] for r in best)
            results["rows"].append(row)
            print(f"{str((b, h, t, d)):<22}{str(causal):>7}"
                  f"{fuse.get('fwd_tflops', float('nan')):>10.1f}"
                  f"{max(r['fwd_tflops'] for r in best):>10.1f}"
                  f"{fuse.get('fwd_bwd_tflops', float('nan')):>10.1f}"
                  f"{max(r['fwd_bwd_tflops'] for r in best):>10.1f}"
                  f"   ratio fwd {row['fwd_ratio_to_best_sdpa']:.2f} f+b {row['fwd_bwd_ratio_to_best_sdpa']:.2f}", flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
