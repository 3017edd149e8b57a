#!/usr/bin/env python3
"""Fuse's flash-attention kernels against torch SDPA, on the GPU machine.

    python3 bench/attention/flash_bench.py --harness PATH/FlashAttentionBench \
        [--out bench/attention/flash_bench.json]

For each (B, H, T, D) and causal flag, the forward alone and forward +
backward of: Fuse's cp.async kernels, its warp-specialised TMA kernels (the
forward persistent) and the TMA kernels with one forward CTA per query
tile, through the harness (test/unittests/FlashAttentionBench.cpp, built
here, linked with FuseRuntime); and torch's scaled_dot_product_attention
pinned to its flash and to its cuDNN backend, in this process, on the same
shapes (bf16, [B, H, T, D]). The ratio is taken against the faster of the
two backends.

Both systems are timed the same way (the JSON's "timing" says so too): the
call is captured once in a CUDA graph, replayed 10 times to warm up, then
replayed 50 times back to back, each replay between its own pair of CUDA
events recorded on the stream it runs on, with one synchronize after the
last; the result is the median of the 50 (mean of the two middle values).
Fuse: Executor::medianStepMilliseconds (lib/Runtime/Executor.cpp), whose
first warm-up step runs eagerly and whose second captures the graph. SDPA:
graph_median_ms below, which warms the call up on a side stream and then
captures it, as torch's CUDA-graph documentation requires. SDPA's forward
runs under torch.no_grad; its forward + backward takes the gradients with
torch.autograd.grad, so nothing accumulates into q/k/v.grad: both systems
write dQ, dK and dV fresh each step. A backend with no kernel for a shape,
or whose capture fails, is recorded as None and the reason printed.

TFLOP/s follow FlashAttention's convention: forward 4 B H T^2 D (halved when
causal), backward 2.5 x forward, so forward + backward is 3.5 x.

`--mask keys` adds an additive mask of one row of keys for every batch,
head and query (an encoder's padding mask, broadcast; FlashAttentionBench's
--mask=keys) and `--dropout P` dropout on the probabilities, on both sides;
SDPA then also runs its memory-efficient backend, the one of its three that
takes masks and dropout together (its flash backend takes no mask and is
recorded as None where one is given).
"""
import argparse
import json
import subprocess
import sys

SHAPES = [(8, 12, 1024, 64), (4, 16, 512, 64), (4, 32, 2048, 128), (1, 32, 8192, 128)]
BACKENDS = ("FLASH_ATTENTION", "CUDNN_ATTENTION")
MASKED_BACKENDS = BACKENDS + ("EFFICIENT_ATTENTION",)
WARMUP, ITERS = 10, 50  # as FlashAttentionBench.cpp passes to medianStepMilliseconds
TIMING = (f"both systems: one call captured in a CUDA graph; {WARMUP} warm-up replays, then "
          f"{ITERS} back-to-back replays, each between its own pair of CUDA events on the "
          "current stream, one synchronize after the last; median (even count: mean of the "
          "two middle values). Fuse: Executor::medianStepMilliseconds in "
          "FlashAttentionBench; torch SDPA: flash_bench.py's graph_median_ms (warm-up on a "
          "side stream before capture). Forward alone (SDPA under no_grad) and forward + "
          "backward (SDPA through torch.autograd.grad: no accumulation into .grad)")


def graph_median_ms(fn, warmup=WARMUP, iters=ITERS):
    """Median milliseconds of `fn` captured in a CUDA graph, timed as
    Executor::medianStepMilliseconds times Fuse: `warmup` replays, then
    `iters` replays back to back, each between its own pair of events on the
    current stream, one synchronize at the end. Raises if `fn` or the
    capture fails."""
    import torch
    # Warm-up on a side stream before capture (torch.cuda.graphs docs): lazy
    # initialisation (cuDNN plans, workspaces) stays out of the graph.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_outputs = fn()  # kept alive: the replays write into them
    stream = torch.cuda.current_stream()
    for _ in range(warmup):
        graph.replay()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(iters)]
    for start, end in events:
        start.record(stream)
        graph.replay()
        end.record(stream)
    torch.cuda.synchronize()
    times = sorted(start.elapsed_time(end) for start, end in events)
    del graph, static_outputs
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2


def sdpa_times(b, h, t, d, causal, backend, mask=False, dropout=0.0):
    """Forward and forward + backward median ms of torch SDPA pinned to
    `backend` (a torch.nn.attention.SDPBackend name), with an additive mask
    of one row of keys (`mask`) and dropout on the probabilities; (None,
    None), with the reason printed, where torch has no kernel of that backend
    for the case or the call cannot be captured in a CUDA graph."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    do = torch.randn_like(q)
    # The same broadcast row FlashAttentionBench's --mask=keys passes Fuse.
    attn_mask = (torch.randn(1, 1, 1, t, device="cuda", dtype=torch.bfloat16).expand(b, h, t, t)
                 if mask else None)

    def attend(p):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=p,
                                              is_causal=causal)

    def fwd():
        # Dropout in the forward alone too, as Fuse's forward-only timing
        # draws it (a training forward).
        with torch.no_grad():
            return attend(dropout)

    def fwd_bwd():
        out = attend(dropout)
        # Gradients returned, not accumulated into q/k/v.grad (as .backward()
        # would, adding an accumulation to each step): Fuse's backward writes
        # dQ, dK and dV fresh too.
        return torch.autograd.grad(out, (q, k, v), do)

    # The backend is chosen when the call is made, so the pin covers the
    # warm-up and the capture; replays run what was captured.
    with sdpa_kernel(getattr(SDPBackend, backend)):
        times = []
        for name, fn in (("forward", fwd), ("forward + backward", fwd_bwd)):
            try:
                times.append(graph_median_ms(fn))
            except Exception as error:  # no kernel, or the capture failed
                reason = (str(error).strip().splitlines() or [""])[0]
                print(f"sdpa {backend} at {(b, h, t, d)} causal={causal}: None "
                      f"({name}: {type(error).__name__}: {reason})", file=sys.stderr, flush=True)
                return None, None
    return times[0], times[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--harness", required=True)
    parser.add_argument("--out", default=None,
                        help="the JSON written (default bench/attention/flash_bench.json; "
                             "with --mask or --dropout, flash_bench_masked_dropout.json)")
    parser.add_argument("--mask", choices=("none", "keys"), default="none",
                        help="an additive mask of one row of keys for every query (default none)")
    parser.add_argument("--dropout", type=float, default=0.0,
                        help="dropout probability on the probabilities, in [0, 1) (default 0)")
    args = parser.parse_args()
    if not 0.0 <= args.dropout < 1.0:
        parser.error(f"--dropout must be in [0, 1), not {args.dropout}")
    masked = args.mask != "none" or args.dropout > 0
    backends = MASKED_BACKENDS if masked else BACKENDS
    if args.out is None:
        args.out = ("bench/attention/flash_bench_masked_dropout.json" if masked
                    else "bench/attention/flash_bench.json")
    options = ([f"--mask={args.mask}"] if args.mask != "none" else []) + (
        [f"--dropout={args.dropout}"] if args.dropout > 0 else [])
    import torch
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
               "dtype": "bf16", "mask": args.mask, "dropout": args.dropout, "flop_convention":
               "fwd 4*B*H*T^2*D (halved if causal); fwd+bwd 3.5x fwd",
               "timing": TIMING, "rows": []}
    variants = ("cp_async", "tma", "tma_cta_per_tile")
    print(f"{'shape':<20}{'causal':>7}" + "".join(f"{v + ' fwd':>13}" for v in variants)
          + f"{'sdpa fwd':>10}" + "".join(f"{v + ' f+b':>13}" for v in variants)
          + f"{'sdpa f+b':>10}   (TFLOP/s; sdpa: the faster backend)")
    for b, h, t, d in SHAPES:
        for causal in (False, True):
            run = subprocess.run([args.harness, str(b), str(h), str(t), str(d),
                                  str(int(causal)), "bf16", ",".join(variants)] + options,
                                 capture_output=True, text=True)
            fuse = json.loads(run.stdout.strip().splitlines()[-1])
            if "error" in fuse:
                raise SystemExit(f"harness failed at {(b, h, t, d, causal)}: {fuse['error']}")
            flops = 4.0 * b * h * t * t * d / (2 if causal else 1)
            row = {"B": b, "H": h, "T": t, "D": d, "causal": causal, "fuse": fuse}
            for backend in backends:
                sdpa_fwd, sdpa_fb = sdpa_times(b, h, t, d, causal, backend,
                                               mask=args.mask != "none", dropout=args.dropout)
                row[backend.lower()] = None if sdpa_fwd is None else {
                    "fwd_ms": sdpa_fwd, "fwd_bwd_ms": sdpa_fb,
                    "fwd_tflops": flops / sdpa_fwd / 1e9,
                    "fwd_bwd_tflops": 3.5 * flops / sdpa_fb / 1e9}
            best = [row[x.lower()] for x in backends if row[x.lower()]]
            # No SDPA backend ran at this shape: no ratio (None), not a crash.
            best_fwd = max((r["fwd_tflops"] for r in best), default=None)
            best_fb = max((r["fwd_bwd_tflops"] for r in best), default=None)
            for v in variants:
                row[f"{v}_fwd_ratio_to_best_sdpa"] = (
                    fuse[v]["fwd_tflops"] / best_fwd if best_fwd else None)
                row[f"{v}_fwd_bwd_ratio_to_best_sdpa"] = (
                    fuse[v]["fwd_bwd_tflops"] / best_fb if best_fb else None)
            results["rows"].append(row)
            sdpa_fwd_text = f"{best_fwd:>10.1f}" if best_fwd else f"{'-':>10}"
            sdpa_fb_text = f"{best_fb:>10.1f}" if best_fb else f"{'-':>10}"
            print(f"{str((b, h, t, d)):<20}{str(causal):>7}"
                  + "".join(f"{fuse[v]['fwd_tflops']:>13.1f}" for v in variants)
                  + sdpa_fwd_text
                  + "".join(f"{fuse[v]['fwd_bwd_tflops']:>13.1f}" for v in variants)
                  + sdpa_fb_text, flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
