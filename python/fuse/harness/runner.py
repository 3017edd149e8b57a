"""Runs the harness: every (workload, mode, system) row in a process of its
own, cold caches for every compiler, a second process for the warm compile,
the rows judged against eager autocast's error, JSON in one schema.

Processes: the runner imports torch (never initialising CUDA) and forks a
child per measurement, so a child starts with torch imported but with no
CUDA context, no compiled code and no in-memory compile cache of an earlier
row; the warm-compile child is forked the same way after the cold one has
filled the on-disk caches. Each row gets empty cache directories of its own
(TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR, FUSE_CACHE_DIR), deleted after
its warm child.

With several GPUs (`devices`), rows run side by side, one per GPU at a
time, each child seeing only its GPU (CUDA_VISIBLE_DEVICES): a row still
has its GPU and its caches to itself, and shares the host's cores with the
other GPUs' rows.

Schema (results JSON): {"gpu", "date", "torch", "command", "config",
"method": {...}, "rows": [row, ...]}, a row holding ROW_FIELDS (None where
a figure does not apply) and the extra figures EXTRA_FIELDS.
"""

import json
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback

from .measure import STEPS, THROUGHPUT_STEPS, WARMUP
from .systems import COMPILERS, SYSTEMS

ROW_FIELDS = ("model", "batch", "seq", "mode", "system", "ms", "throughput_ms", "peak_gib", "kernels", "mfu",
              "compile_cold_s", "compile_warm_s", "loss_rel_err", "grad_rel_err", "fallbacks", "error")
EXTRA_FIELDS = ("kernel_ms", "worst_param", "worst_param_rel_err", "eager_loss_rel_err", "eager_grad_rel_err",
                "torch_allocated_peak_gib", "compile_phases", "description", "stochastic", "recipe",
                "update_rel_err")
# A compiled system fails a row when its error against f32 exceeds this
# factor times eager autocast's on the same step. An eager error under the
# floor counts as the floor: below it the comparison is between roundings of
# a few elements, not between the systems' precision.
TOLERANCE_FACTOR = 2.0
ERROR_FLOOR = {"loss_rel_err": 1e-4, "grad_rel_err": 1e-3}
ROW_TIMEOUT_S = 900

DEFAULT_SETTINGS = {"steps": STEPS, "throughput_steps": THROUGHPUT_STEPS, "warmup": WARMUP,
                    "fuse_fallback": "eager", "warm_compile": True, "devices": 1}
# The settings a measuring child takes as keyword arguments.
MEASURE_SETTINGS = ("steps", "throughput_steps", "warmup", "fuse_fallback")
# Held while a thread forks a child, prints or saves: a fork copies only the
# forking thread, so no other thread may hold a lock the child will need
# (stderr's, the environment being edited) at that moment.
_PARENT_LOCK = threading.RLock()


def method(settings):
    """How every figure of a row is measured, as the results file records it."""
    steps, throughput, warmup = settings["steps"], settings["throughput_steps"], settings["warmup"]
    return {
        "ms": f"median of {steps} steps after {warmup} warm-up steps, CUDA events around each step and a "
              "synchronize after it",
        "throughput_ms": f"{throughput} steps back to back between two CUDA events, divided by {throughput}",
        "peak_gib": "device memory in use (cudaMemGetInfo) above the idle baseline before the model reached "
                    "the GPU, sampled after every timed step; torch's cache emptied once before timing",
        "kernels": "GPU kernels of one step in the torch profiler's trace (CUPTI; CUDA graph replays "
                   "included; no memcpy/memset)",
        "compile": "wall time of the first 3 steps less 3 steady steps; cold: empty TORCHINDUCTOR_CACHE_DIR, "
                   "TRITON_CACHE_DIR and FUSE_CACHE_DIR in a new process; warm: "
                   + ("a new process with those filled" if settings.get("warm_compile", True)
                      else "not measured in this run (--no-warm-compile)"),
        "errors": "against f32 eager (TF32 off), same weights and batch, first step: the loss's relative "
                  "error and the gradients' global relative norm; inference: the logits' relative norm; the f32 "
                  "step runs in a process of its own, so that memory it leaves reserved does not count",
        "recipe": "a row with a \"recipe\" times a whole optimizer step: its accumulation_steps micro-batches "
                  "(each (loss / N).backward(); fuse-step: one compile_step call each), clipping to "
                  "max_grad_norm, the optimizer's update and zero_grad; its loss is the micro-batches' mean, its "
                  "gradients those the first update used (read back from the optimizer's state after it), and "
                  "update_rel_err the first update's change of the parameters against f32's (recorded, not "
                  "judged)",
        "failed": f"a compiled row fails when an error exceeds {TOLERANCE_FACTOR:g}x eager autocast's on the "
                  f"same step (floors {ERROR_FLOOR}); a training step that draws random numbers (dropout: the "
                  "row's \"stochastic\") is not judged, its masks being other than the reference's",
        "mfu": "PaLM FLOPs (6N + 12LHQT per trained token, 2N + 4LHQT per inferred token; a recipe's step counts "
               "the tokens of every micro-batch) over 989 TFLOP/s",
        "processes": "one process per row, forked from a runner that never initialised CUDA"
                     + (f"; {settings['devices']} rows at a time, each on a GPU of its own of one host"
                        if settings.get("devices", 1) > 1 else ""),
        "fuse_compile": "torch.compile(step, backend=\"fuse\"" + (
            ", options={\"fallback\": \"error\"}): a graph Fuse cannot compile fails the row"
            if settings.get("fuse_fallback", "eager") == "error"
            else "): a graph Fuse cannot compile runs eagerly, counted in the row's fallbacks"),
    }


def _child(connection, function, args, kwargs):
    # Forked while the parent held the lock: a measurement that forks a
    # process of its own (the f32 reference) needs one that is free.
    global _PARENT_LOCK
    _PARENT_LOCK = threading.RLock()
    try:
        result = function(*args, **kwargs)
    except BaseException as error:  # reported as the row's error, never lost
        traceback.print_exc()
        result = {"error": f"{type(error).__name__}: {str(error).strip()[:2000]}"}
    try:
        connection.send(result)
    finally:
        connection.close()


def run_in_child(function, *args, env=None, timeout=ROW_TIMEOUT_S, **kwargs):
    """function(*args, **kwargs) in a forked process with `env` added to its
    environment; its dict result, or {"error": ...} when it raised, died or
    ran past `timeout` seconds."""
    import multiprocessing
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raise RuntimeError("the harness forks a process per measurement, which cannot use CUDA once this "
                           "process has: run it from a process that has not touched the GPU "
                           "(python -m fuse.compare, bench/run.py)")
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    with _PARENT_LOCK:
        saved = {k: os.environ.get(k) for k in (env or {})}
        os.environ.update(env or {})
        try:
            process = context.Process(target=_child, args=(send, function, args, kwargs))
            process.start()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    send.close()
    try:
        if receive.poll(timeout):
            result = receive.recv()
        else:
            result = {"error": f"timed out after {timeout} s"}
    except EOFError:
        result = None
    process.join(30)
    if process.is_alive():
        process.kill()
        process.join()
    if result is None:
        result = {"error": f"the measuring process died (exit code {process.exitcode})"}
    return result


def cache_environment(root):
    return {"TORCHINDUCTOR_CACHE_DIR": os.path.join(root, "inductor"),
            "TRITON_CACHE_DIR": os.path.join(root, "triton"),
            "FUSE_CACHE_DIR": os.path.join(root, "fuse")}


JUDGED = "error against f32: "


def judge(row, eager):
    """Marks `row` failed (its "error") when a compiled system's error
    against f32 exceeds TOLERANCE_FACTOR times that of `eager` (the eager
    autocast row of the same model and mode); records eager's figures in
    the row. A stochastic row (a training step with dropout) is not judged:
    every system draws its own masks, none the reference's. Returns the
    row."""
    if row["system"] == "eager" or eager is None or eager.get("error"):
        return row
    if row.get("error") and not row["error"].startswith(JUDGED):
        return row
    row["error"] = None
    verdicts = []
    for metric in ("loss_rel_err", "grad_rel_err"):
        value, reference = row.get(metric), eager.get(metric)
        row["eager_" + metric] = reference
        if value is None or reference is None or row.get("stochastic"):
            continue
        limit = TOLERANCE_FACTOR * max(reference, ERROR_FLOOR[metric])
        if value > limit:
            verdicts.append(f"{metric} {value:.2e} exceeds {TOLERANCE_FACTOR:g}x eager autocast's "
                            f"({reference:.2e}, floor {ERROR_FLOOR[metric]:g})")
    if verdicts:
        row["error"] = JUDGED + "; ".join(verdicts)
    return row


def judge_group(rows, model, mode):
    """Judges every row of (model, mode) against its eager row."""
    group = [r for r in rows if r["model"] == model and r["mode"] == mode]
    eager = next((r for r in group if r["system"] == "eager"), None)
    for row in group:
        judge(row, eager)


def measure_row(workload, mode, system, settings=None, device=None):
    """One row: the cold measurement and, for a compiler, the warm compile,
    each in a new process (on GPU `device` alone when given)."""
    from . import measure
    root = tempfile.mkdtemp(prefix="fuse-harness-")
    env = cache_environment(root)
    if device is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(device)
    settings = dict(DEFAULT_SETTINGS, **(settings or {}))
    try:
        measured = {name: settings[name] for name in MEASURE_SETTINGS}
        row = run_in_child(measure.measure, workload, mode, system, env=env, **measured)
        # The warm compile is a second process per compiler row: about a
        # third of a run's device time, which --no-warm-compile saves.
        if system in COMPILERS and settings["warm_compile"] and not row.get("error") and row.get("ms"):
            warm = run_in_child(measure.measure_warm_compile, workload, mode, system, row["ms"], env=env,
                                fuse_fallback=settings["fuse_fallback"])
            row["compile_warm_s"] = warm.get("compile_warm_s")
            if warm.get("error"):
                row["error"] = "warm compile: " + warm["error"]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    row.update(model=workload.name, batch=workload.batch, seq=workload.seq, mode=mode, system=system)
    full = {field: row.get(field) for field in ROW_FIELDS}
    full.update({field: row.get(field) for field in EXTRA_FIELDS if field in row})
    return full


def _probe_gpu():
    import torch
    available = torch.cuda.is_available()
    return {"gpu": torch.cuda.get_device_name() if available else None,
            "count": torch.cuda.device_count() if available else 0}


_probed = {}


def _probe():
    if not _probed:
        _probed.update(run_in_child(_probe_gpu, timeout=120))
    return _probed


def gpu_name():
    """The GPU's name, asked in a child: the runner itself must never touch
    CUDA (a forked child of a process that did cannot use it)."""
    return _probe().get("gpu")


def gpu_count():
    """How many GPUs this process sees (asked in a child, as gpu_name)."""
    return _probe().get("count", 0)


def source_commit():
    """The repository's commit (with "+changes" when the tree differs from
    it), or None outside a git checkout: which code a run measured."""
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def new_results(command, config, settings=None, gpu=None):
    import torch
    settings = dict(settings or DEFAULT_SETTINGS)
    return {"gpu": gpu, "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__, "command": command,
            "commit": source_commit(), "config": config, "settings": settings, "method": method(settings),
            "rows": []}


def measured(results):
    """(model, mode, system) of the rows `results` holds without an error."""
    return {(r["model"], r["mode"], r["system"]) for r in results["rows"] if not r.get("error")}


def row_order(names, modes, systems):
    def key(row):
        index = lambda seq, x: seq.index(x) if x in seq else len(seq)  # noqa: E731
        return (index(names, row["model"]), index(modes, row["mode"]), index(systems, row["system"]))
    return key


def run(workloads, modes, systems, results, *, save=None, log=sys.stderr, devices=None):
    """Measures every (workload, mode, system) row `results` does not hold
    yet (a row with an error is measured again), calling save(results) after
    each; returns the results. devices: GPU indices to spread the rows over,
    one row per GPU at a time (default: the one GPU the process sees)."""
    for name in modes:
        if name not in ("train", "infer"):
            raise ValueError(f"mode must be train or infer, not {name!r}")
    for system in systems:
        if system not in SYSTEMS:
            raise ValueError(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
    # Eager autocast is the yardstick of every compiled row's error.
    systems = list(systems) if "eager" in systems else ["eager"] + list(systems)
    done = measured(results)
    # Rows a continued run already holds keep their models' places; the
    # run's new models follow.
    names = list(dict.fromkeys([r["model"] for r in results["rows"]] + [w.name for w in workloads]))
    order = row_order(names, list(dict.fromkeys(["train", "infer"] + list(modes))), list(SYSTEMS))
    pending = []
    for workload in workloads:
        for mode in modes:
            if mode not in workload.modes:
                print(f"{workload.name} {mode}: not a mode of this workload (it has {', '.join(workload.modes)})",
                      file=log)
                continue
            for system in systems:
                if (workload.name, mode, system) in done:
                    print(f"{workload.name} {mode} {system}: measured already", file=log)
                else:
                    pending.append((workload, mode, system))

    def measure_one(workload, mode, system, device):
        where = "" if device is None else f" (GPU {device})"
        with _PARENT_LOCK:
            print(f"[{time.strftime('%H:%M:%S')}] {workload.name} {mode} {system}{where} ...", file=log, flush=True)
        started = time.perf_counter()
        row = measure_row(workload, mode, system, results.get("settings"), device=device)
        with _PARENT_LOCK:
            results["rows"] = sorted(
                [r for r in results["rows"] if (r["model"], r["mode"], r["system"])
                 != (workload.name, mode, system)] + [row], key=order)
            judge_group(results["rows"], workload.name, mode)
            print(f"    {workload.name} {mode} {system}{where}: {summary(row)}  "
                  f"({time.perf_counter() - started:.0f} s)", file=log, flush=True)
            if save:
                save(results)

    if not devices or len(devices) == 1:
        for item in pending:
            measure_one(*item, devices[0] if devices else None)
    else:
        # One thread per GPU takes the next row as its last one ends; the
        # rows' children do the work, the threads only wait on them.
        queue = list(reversed(pending))

        def worker(device):
            while True:
                with _PARENT_LOCK:
                    if not queue:
                        return
                    item = queue.pop()
                measure_one(*item, device)
        threads = [threading.Thread(target=worker, args=(d,), daemon=True) for d in devices]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for workload in workloads:
        for mode in modes:
            judge_group(results["rows"], workload.name, mode)
    if save:
        save(results)
    return results


def summary(row):
    if row.get("error"):
        return f"FAILED: {row['error'][:400]}"
    fmt = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
    return (f"{fmt(row['ms'], '.2f')} ms, {fmt(row['peak_gib'], '.2f')} GiB, {row['kernels']} kernels, "
            f"compile {fmt(row['compile_cold_s'], '.1f')}/{fmt(row['compile_warm_s'], '.1f')} s, "
            f"loss err {fmt(row['loss_rel_err'], '.1e')} (eager {fmt(row.get('eager_loss_rel_err'), '.1e')}), "
            f"grad err {fmt(row['grad_rel_err'], '.1e')} (eager {fmt(row.get('eager_grad_rel_err'), '.1e')})"
            + (f", update err {fmt(row['update_rel_err'], '.1e')}" if "update_rel_err" in row else ""))


def failed_rows(results):
    return [r for r in results["rows"] if r.get("error")]


def save_json(results, path):
    """Writes `results` to `path` through a temporary file (a run stopped
    mid-write keeps the last complete file)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, suffix=".json")
    with os.fdopen(handle, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    os.replace(temporary, path)
