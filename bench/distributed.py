"""GPT-2 124M data-parallel training on several GPUs of one host: eager DDP,
torch.compile of the DDP model (Inductor), and Fuse, in one run.

    python3 bench/distributed.py [--gpus 2] [--batch 8] [--steps 15]
                                 [--systems eager,fuse,fuse-serial,fuse-dense,inductor[,fuse-dynamo]]
                                 [-o bench/distributed/<gpu>x<N>-<date>.json]

One process per GPU (torch.multiprocessing, NCCL, NVLink multicast off:
NCCL_NVLS_ENABLE=0 and friends are set before any process starts). Every
system runs the same step on B sequences of 1024 tokens per GPU: forward,
loss, backward, the gradient all-reduce (average) and torch's fused AdamW.
  eager        DistributedDataParallel(model), bf16 autocast
  inductor     torch.compile(DistributedDataParallel(model)), bf16 autocast
               (dynamo splits the graph at DDP's buckets)
  fuse         fuse.compile_step(model, ..., process_group=pg): one compiled
               step, gradient buckets all-reduced while its backward runs
               and the token embedding's gradient exchanged as rows
  fuse-serial  the same, every bucket all-reduced after the whole step (what
               the overlap buys)
  fuse-dense   the same as fuse with the embedding's gradient all-reduced
               whole (what the rows buy)
  fuse-dynamo  torch.compile(DistributedDataParallel(model), backend="fuse"),
               Fuse's bf16 AMP in each piece
The single-GPU baseline of each system is the same step without DDP (Fuse:
compile_step without a process group, then the same fused AdamW), run on
every GPU at once with no communication. The data-parallel step and its
baseline are timed in alternating rounds, so a drift in the machine's
speed affects both alike; except for the dynamo-compiled systems, whose
baseline is timed first and its compiled code dropped (torch._dynamo.reset)
before the DDP model is compiled: dynamo would otherwise reuse the plain
model's graph inside DDP and skip DDP's graph split.

Per system: median step time over --steps steps of each variant after
warm-up (CUDA events on every rank; the slowest rank's median counts; the
minimum and 90th percentile are recorded too), tokens per second, MFU per
GPU (PaLM: (6N + 12LHQT) per token, 989 TFLOP/s), scaling efficiency = the
N-GPU throughput over N times the 1-GPU throughput = t(1 GPU) / t(N GPUs),
peak memory per GPU (torch's max_memory_allocated plus, for compile_step,
the device memory Fuse's runtime holds), and the loss after the first step
against eager's. The JSON is written after every system.
"""

import argparse
import datetime
import gc
import json
import os
import statistics
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
NCCL_ENVIRONMENT = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
os.environ.update(NCCL_ENVIRONMENT)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

SYSTEMS = ("eager", "fuse", "fuse-serial", "fuse-dense", "inductor", "fuse-dynamo")
# fuse-dynamo compiles each of dynamo's ~20 graph pieces forward and backward
# (four minutes on two H200s): asked for by name only.
DEFAULT_SYSTEMS = SYSTEMS[:-1]
# Compiled by dynamo: their baseline cannot stay alive beside the DDP step.
DYNAMO_SYSTEMS = ("inductor", "fuse-dynamo")
# Variants of "fuse" whose single-GPU step is fuse's.
FUSE_VARIANTS = ("fuse-serial", "fuse-dense")
WARMUP = 3
ROUNDS = 4


def _log(rank, text):
    if rank == 0:
        print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def _adamw(model):
    return torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, fused=True)


def make_step(system, workload, rank, distributed, cache_dir):
    """(step function returning the loss, extra figures) for one system;
    `distributed`: under DDP / with the process group, else alone."""
    import copy
    import fuse
    from torch.nn.parallel import DistributedDataParallel as DDP
    from fuse import compare
    model = copy.deepcopy(workload.model).cuda().train()
    args, kwargs = compare._as_args(workload.cuda_inputs)
    targets = compare._as_targets(workload.cuda_targets)
    optimizer = _adamw(model)
    extra = {}
    if system in ("fuse",) + FUSE_VARIANTS:
        batch = (workload.cuda_inputs, workload.cuda_targets)
        if distributed:
            step = fuse.compile_step(model, workload.loss_fn, batch, optimizer=optimizer, amp="bf16",
                                     cache_dir=cache_dir, process_group=dist.group.WORLD,
                                     overlap_grad_reduce=system != "fuse-serial",
                                     sparse_embedding_grads=system != "fuse-dense", progress=False)
            extra["buckets"] = len(step._reducer.buckets)
            extra["bucket_bytes"] = step._reducer.bytes

            def run():
                return step(batch)
        else:
            step = fuse.compile_step(model, workload.loss_fn, batch, amp="bf16", cache_dir=cache_dir,
                                     progress=False)

            def run():
                loss = step(batch)
                optimizer.step()
                return loss
        extra["runtime"] = step
        return run, extra
    runner = DDP(model, device_ids=[rank]) if distributed else model
    if system == "inductor":
        runner = torch.compile(runner)
    autocast = True
    if system == "fuse-dynamo":
        runner = torch.compile(runner, backend="fuse", options={"amp": "bf16", "cache_dir": cache_dir})
        autocast = False

    def run():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            loss = workload.loss_fn(runner(*args, **kwargs), *targets)
        loss.backward()
        optimizer.step()
        return loss
    return run, extra


def _build(system, workload, rank, distributed, cache_dir):
    """(step, extra figures): compiled, run once (timed: the cold compile)
    and warmed up; the peak memory over two more steps with only this
    system's steps alive."""
    torch.cuda.synchronize()
    started = time.perf_counter()
    run, extra = make_step(system, workload, rank, distributed, cache_dir)
    extra["first_loss"] = float(run().detach())
    torch.cuda.synchronize()
    extra["first_step_s"] = time.perf_counter() - started
    for _ in range(WARMUP):
        run()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(2):
        run()
    torch.cuda.synchronize()
    runtime = extra.get("runtime")
    extra["peak_bytes"] = torch.cuda.max_memory_allocated() + (runtime.compiled.device_bytes if runtime else 0)
    return run, extra


def _time(run, steps):
    from fuse import compare
    return compare._time_steps(run, steps)[1]


def measure(system, workload, rank, steps, cache_dir):
    """{"single": figures, "multi": figures} on this rank: the step without
    DDP on this GPU alone, then the data-parallel step; the two are timed in
    alternating rounds, so that a drift of the machine's speed shows in
    both alike."""
    steps_of, figures, resident, times = {}, {}, 0, {"single": [], "multi": []}
    if system not in FUSE_VARIANTS:
        steps_of["single"], figures["single"] = _build(system, workload, rank, False, cache_dir)
        resident = torch.cuda.memory_allocated()
        if system in DYNAMO_SYSTEMS:
            # dynamo would run the DDP model's inner module with the plain
            # model's compiled graph (their guards match) and so skip DDP's
            # graph split: the baseline is timed first, then forgotten.
            dist.barrier()
            times["single"] = _time(steps_of.pop("single"), steps)
            torch._dynamo.reset()
            gc.collect()
            torch.cuda.empty_cache()
            resident = 0
    steps_of["multi"], figures["multi"] = _build(system, workload, rank, True, cache_dir)
    # Its peak less what the baseline keeps allocated meanwhile.
    figures["multi"]["peak_bytes"] -= resident
    for _ in range(ROUNDS):
        for key, run in steps_of.items():
            # Both ranks time the same variant together: alone, each GPU
            # runs its own step with the other GPU busy too.
            dist.barrier()
            times[key] += _time(run, -(-steps // ROUNDS))
    times = {key: values for key, values in times.items() if values}
    for key, values in times.items():
        ordered = sorted(values)
        figures[key].update(step_ms=statistics.median(values), step_ms_min=ordered[0],
                            step_ms_p90=ordered[int(0.9 * (len(ordered) - 1))])
    for figure in figures.values():
        runtime = figure.pop("runtime", None)
        if runtime is not None:
            runtime.close()
    del steps_of
    gc.collect()
    torch.cuda.empty_cache()
    return figures


def worker(rank, world, store, options):
    torch.cuda.set_device(rank)
    # A rank that fails while the others wait in a collective ends the run
    # after this long instead of hanging it.
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(minutes=3))
    from fuse import compare
    workload = compare.builtin_workload("gpt2", "full", options["batch"], None, 0)
    workload.cuda_inputs = compare._to_device(workload.inputs, "cuda")
    workload.cuda_targets = compare._to_device(workload.targets, "cuda")
    results = []
    with tempfile.TemporaryDirectory(prefix=f"fuse-dist-{rank}-") as cache_dir:
        for system in options["systems"]:
            _log(rank, f"{system} ...")
            try:
                figures = measure(system, workload, rank, options["steps"], cache_dir)
            except Exception as error:  # one system's failure must not lose the others
                traceback.print_exc()
                figures = {"error": f"{type(error).__name__}: {str(error)[:400]}"}
            # Every rank's figures reach rank 0; the slowest rank counts.
            gathered = [None] * world
            dist.all_gather_object(gathered, figures)
            entry = dict(system=system)
            errors = [g["error"] for g in gathered if "error" in g]
            for key in ("single", "multi"):
                if errors:
                    entry[key] = {"error": errors[0]}
                elif key in gathered[0]:
                    parts = [g[key] for g in gathered]
                    slowest = max(parts, key=lambda part: part["step_ms"])
                    entry[key] = dict(slowest, step_ms_per_rank=[part["step_ms"] for part in parts],
                                      peak_bytes=max(part["peak_bytes"] for part in parts))
            dist.barrier()
            results.append(entry)
            if rank == 0:
                options["write"](results, None)
    allreduce = measure_allreduce(sum(p.numel() for p in workload.model.parameters()) * 4)
    if rank == 0:
        options["write"](results, allreduce)
    dist.destroy_process_group()


def measure_allreduce(nbytes, bucket_mb=25, repeats=10):
    """NCCL alone: the median time to all-reduce `nbytes` of f32 (the
    gradients) in one call and in bucket_mb pieces, with nothing else on
    the GPUs: the communication a data-parallel step has to hide."""
    flat = torch.ones(nbytes // 4, device="cuda")
    pieces = list(flat.split(bucket_mb * 2 ** 20 // 4))
    figures = {"bytes": nbytes}
    for label, tensors in (("one_call", [flat]), (f"{bucket_mb}MB_buckets", pieces)):
        times = []
        for _ in range(repeats + 2):
            dist.barrier()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for t in tensors:
                dist.all_reduce(t)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        ms = statistics.median(times[2:])
        figures[label] = dict(ms=ms, algbw_gb_s=nbytes / (ms * 1e-3) / 1e9)
    return figures


def summarize(results, world, workload_flops, tokens_per_gpu, peak_tflops=989.0):
    """Adds throughput, MFU, scaling efficiency and loss differences."""
    eager_loss = next((r["multi"].get("first_loss") for r in results
                       if r["system"] == "eager" and "multi" in r), None)
    singles = {r["system"]: r.get("single") for r in results}
    for variant in FUSE_VARIANTS:
        singles[variant] = singles.get("fuse")
    for r in results:
        single, multi = singles.get(r["system"]), r.get("multi")
        for part, gpus in ((single, 1), (multi, world)):
            if part and "step_ms" in part:
                part["tokens_per_s"] = gpus * tokens_per_gpu / (part["step_ms"] * 1e-3)
                part["mfu"] = workload_flops * tokens_per_gpu / (part["step_ms"] * 1e-3) / (peak_tflops * 1e12)
        if single and multi and "step_ms" in single and "step_ms" in multi:
            r["scaling_efficiency"] = single["step_ms"] / multi["step_ms"]
        if multi and eager_loss and "first_loss" in multi:
            multi["loss_rel_diff_from_eager"] = abs(multi["first_loss"] - eager_loss) / abs(eager_loss)
    return results


def markdown_table(data):
    lines = [f"{data['gpus']}× {data['device']} ({data['date']}, torch {data['torch']}), GPT-2 124M, "
             f"B{data['batch']} T1024 per GPU, bf16, fused AdamW; step time is the slowest rank's median.",
             "",
             "| system | 1 GPU ms | %d GPUs ms | tokens/s (%d GPUs) | scaling efficiency | MFU per GPU | "
             "peak GiB per GPU | loss vs eager |" % (data["gpus"], data["gpus"]),
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in data["results"]:
        single, multi = r.get("single") or {}, r.get("multi") or {}
        if "error" in multi or "error" in single:
            lines.append(f"| {r['system']} | failed: {(multi.get('error') or single.get('error'))[:80]} "
                         "| | | | | | |")
            continue
        fmt = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
        lines.append(
            f"| {r['system']} | {fmt(single.get('step_ms'), '.1f')} | {fmt(multi.get('step_ms'), '.1f')} "
            f"| {fmt(multi.get('tokens_per_s'), ',.0f')} | {fmt(r.get('scaling_efficiency'), '.1%')} "
            f"| {fmt(multi.get('mfu'), '.1%')} | {fmt(multi.get('peak_bytes') and multi['peak_bytes'] / 2 ** 30, '.2f')} "
            f"| {fmt(multi.get('loss_rel_diff_from_eager'), '.1e')} |")
    allreduce = data.get("allreduce")
    if allreduce:
        lines += ["", "NCCL alone, the gradients' %.0f MB all-reduced with nothing else running: " % (
            allreduce["bytes"] / 1e6) + ", ".join(
            f"{k.replace('_', ' ')} {v['ms']:.2f} ms ({v['algbw_gb_s']:.0f} GB/s)"
            for k, v in allreduce.items() if isinstance(v, dict)) + "."]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8, help="sequences of 1024 tokens per GPU (default 8)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per variant (default 20)")
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                        help="comma-separated, of " + ", ".join(SYSTEMS) + " (default: all but fuse-dynamo)")
    parser.add_argument("-o", "--output", help="default bench/distributed/<gpu>x<N>-<date>.json")
    parser.add_argument("--table", metavar="JSON", help="print the Markdown table of a result file and exit")
    args = parser.parse_args(argv)
    if args.table:
        with open(args.table) as f:
            print(markdown_table(json.load(f)))
        return
    systems = args.systems.split(",")
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        parser.error(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEMS)}")
    available = torch.cuda.device_count()
    if available < args.gpus:
        sys.exit(f"bench/distributed.py: needs {args.gpus} CUDA GPUs; this machine has {available}")
    device = torch.cuda.get_device_name()
    date = time.strftime("%Y-%m-%d")
    output = args.output or os.path.join(HERE, "distributed", f"{device.replace(' ', '-')}x{args.gpus}-{date}.json")
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    from fuse import compare
    workload = compare.builtin_workload("gpt2", "full", args.batch, None, 0)
    tokens = workload.tokens
    data = dict(device=device, gpus=args.gpus, date=date, torch=torch.__version__, batch=args.batch,
                nccl=".".join(map(str, torch.cuda.nccl.version())), command=" ".join(sys.argv),
                flops_per_token=workload.flops_per_token, results=[])
    del workload

    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory(prefix="fuse-dist-store-") as folder:
        # The writer runs in rank 0's process: picklable, not a closure.
        options = dict(batch=args.batch, steps=args.steps, systems=systems,
                       write=_Writer(output, data, args.gpus, tokens))
        mp.spawn(worker, args=(args.gpus, os.path.join(folder, "store"), options), nprocs=args.gpus)
    with open(output) as f:
        data = json.load(f)
    print(f"wrote {output}", file=sys.stderr)
    print(markdown_table(data))


class _Writer:
    """Writes the result file (picklable, for the spawned rank 0)."""

    def __init__(self, output, data, gpus, tokens):
        self.output, self.data, self.gpus, self.tokens = output, data, gpus, tokens

    def __call__(self, results, allreduce):
        self.data["results"] = summarize(results, self.gpus, self.data["flops_per_token"], self.tokens)
        if allreduce:
            self.data["allreduce"] = allreduce
        with open(self.output, "w") as f:
            json.dump(self.data, f, indent=2)


if __name__ == "__main__":
    main()
