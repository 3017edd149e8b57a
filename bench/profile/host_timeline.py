"""Where the host time of one step goes, before and between its GPU work.

    python3 bench/profile/host_timeline.py [--models gpt2,bert-b4] [--modes train]
        [--systems fuse-compile,fuse-step] [--steps 30] [--cprofile DIR] [-o timeline.json]

bench/run.py times a step with a synchronize after it, so the GPU waits for
every host microsecond before the first kernel. This script runs the
harness's own step of each system (python/fuse/harness/systems.py) and puts
marks on the host clock, relative to the step's start:
  forward enter / exit, backward enter / exit, inference enter / exit
      the backend's calls of its graphs (torch.compile(backend="fuse"))
  launch start / end
      each fuseRun (a CUDA graph replay, or the kernels enqueued one by one)
  returned, synced
      the step function's return, and the synchronize after it
With the GPU idle when a step starts, its first kernel starts at the first
launch: everything before it is exposed host time (dynamo's guards,
AOTAutograd's wrappers, the binding). Each mark is the median over the
steps. With --cprofile, one cProfile of the same steps per row, as text
sorted by total and by own time (the profiler slows Python down, so read
its shares, not its seconds). With --kernels, the kernels of one step (the
torch profiler's CUPTI records, graph replays included) summed by name, to
compare two systems' kernel lists. With --detail, the time a step spends
inside each of the backend's per-call helpers (DETAILED), per graph kind.
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from fuse import backend  # noqa: E402
from fuse.harness import measure as harness_measure, systems, workloads  # noqa: E402
from fuse.runtime import _capi  # noqa: E402

_marks = []
_inside = {}  # {(graph kind, helper): ms inside it this step}
_current_kind = ["step"]

# The backend's per-call helpers that --detail times: (owner, attribute).
DETAILED = (
    ("fuse.backend:_Specialized", "fits"),
    ("fuse.backend:_Specialized", "__call__"),
    ("fuse.backend:_Specialized", "_backward_arena"),
    ("fuse.runtime._bound_call:BoundCall", "changed"),
    ("fuse.runtime._bound_call:BoundCall", "bind_inputs"),
    ("fuse.runtime._bound_call:BoundCall", "run"),
    ("fuse.runtime._stable_io:StableIO", "outputs"),
    ("fuse.dynamo._saved_slabs:SlabPool", "take"),
    ("fuse.dynamo._saved_slabs:ArenaResult", "view"),
    ("fuse.dynamo._graph_rng:GraphRandomness", "inputs"),
    ("fuse.runtime._stable_io:", "hand_out"),
)


def _mark(name):
    _marks.append((name, time.perf_counter()))


def _install_marks():
    """Marks at the backend's graph calls and at every fuseRun; returns the
    function that removes them."""
    graph_call, run = backend._FuseGraph.__call__, _capi.Session.run_addresses

    def marked_graph_call(self, *args):
        _mark(f"{self.kind} enter")
        _current_kind[0] = self.kind
        try:
            return graph_call(self, *args)
        finally:
            _current_kind[0] = "step"
            _mark(f"{self.kind} exit")

    def marked_run(self, *args, **kwargs):
        _mark("launch start")
        try:
            return run(self, *args, **kwargs)
        finally:
            _mark("launch end")
    backend._FuseGraph.__call__, _capi.Session.run_addresses = marked_graph_call, marked_run

    def remove():
        backend._FuseGraph.__call__, _capi.Session.run_addresses = graph_call, run
    return remove


def _install_detail():
    """Times each DETAILED helper (ms a step, by the graph kind it ran
    under); returns the function that removes the timers."""
    import importlib
    undo = []
    for owner, attribute in DETAILED:
        module_name, _, class_name = owner.partition(":")
        module = importlib.import_module(module_name)
        holder = getattr(module, class_name) if class_name else module
        original = getattr(holder, attribute)

        def timed(*args, __original=original, __name=f"{class_name or module_name}.{attribute}", **kwargs):
            started = time.perf_counter()
            try:
                return __original(*args, **kwargs)
            finally:
                key = (_current_kind[0], __name)
                _inside[key] = _inside.get(key, 0.0) + (time.perf_counter() - started) * 1e3
        setattr(holder, attribute, timed)
        undo.append((holder, attribute, original))

    def remove():
        for holder, attribute, original in reversed(undo):
            setattr(holder, attribute, original)
    return remove


def _one_step(step):
    """The marks of one step: [(label, ms after the step's start)], labels
    numbered where they repeat (a second launch is "launch start #2")."""
    torch.cuda.synchronize()
    _marks.clear()
    _inside.clear()
    _mark("start")
    step()
    _mark("returned")
    torch.cuda.synchronize()
    _mark("synced")
    seen, timeline = {}, []
    start = _marks[0][1]
    for name, at in _marks[1:]:
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name} #{seen[name]}"
        timeline.append((label, (at - start) * 1e3))
    timeline += [(f"inside {kind} {name}", ms) for (kind, name), ms in sorted(_inside.items())]
    return timeline


def _kernels_by_name(step):
    """{kernel name: [count, summed ms]} of one step, and the GPU's busy
    and spanned ms (first kernel's start to last kernel's end)."""
    kernels = harness_measure.kernel_events(step)
    by_name = {}
    for e in kernels:
        entry = by_name.setdefault(e["name"], [0, 0.0])
        entry[0] += 1
        entry[1] += float(e.get("dur", 0)) / 1e3
    busy = sum(float(e.get("dur", 0)) for e in kernels) / 1e3
    span = ((max(float(e["ts"]) + float(e.get("dur", 0)) for e in kernels) - min(float(e["ts"]) for e in kernels))
            / 1e3 if kernels else 0.0)
    return dict(busy_ms=busy, span_ms=span, count=len(kernels),
                by_name=dict(sorted(by_name.items(), key=lambda item: -item[1][1])))


def measure(model, mode, system, steps, cache_dir, cprofile_dir, kernels=False, detail=False):
    built = workloads.resolve(model, "full").build(0, "cuda")
    prepared = systems.prepare(system, mode, built, cache_dir)
    remove = _install_marks()
    remove_detail = _install_detail() if detail else (lambda: None)
    try:
        for _ in range(5):
            prepared.step()
        runs = [_one_step(prepared.step) for _ in range(steps)]
        if detail:  # the timers' own cost stays out of the marks of the other runs
            remove_detail()
            remove_detail = lambda: None  # noqa: E731
        labels = [label for label, _ in runs[0]]
        if any([label for label, _ in r] != labels for r in runs):
            raise RuntimeError(f"{model} {mode} {system}: the steps made different marks")
        marks = {label: statistics.median(r[i][1] for r in runs) for i, label in enumerate(labels)}
        kernel_list = _kernels_by_name(prepared.step) if kernels else None
        profile_text = None
        if cprofile_dir:
            profiler = cProfile.Profile()
            torch.cuda.synchronize()
            profiler.enable()
            for _ in range(steps):
                prepared.step()
                torch.cuda.synchronize()
            profiler.disable()
            text = io.StringIO()
            stats = pstats.Stats(profiler, stream=text)
            text.write(f"# {model} {mode} {system}: {steps} steps under cProfile\n\n## by cumulative time\n")
            stats.sort_stats("cumulative").print_stats(90)
            text.write("\n## by own time\n")
            stats.sort_stats("tottime").print_stats(60)
            profile_text = os.path.join(cprofile_dir, f"{model}-{mode}-{system}.txt")
            with open(profile_text, "w") as f:
                f.write(text.getvalue())
    finally:
        remove_detail()
        remove()
        prepared.close()
    return dict(model=model, mode=mode, system=system, steps=steps, marks_ms=marks, cprofile=profile_text,
                kernels=kernel_list)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="gpt2,bert-b4", help="bench/run.py's model names, comma-separated")
    parser.add_argument("--modes", default="train", help="train, infer or both (comma-separated)")
    parser.add_argument("--systems", default="fuse-compile,fuse-step",
                        help="harness systems, comma-separated (default fuse-compile,fuse-step)")
    parser.add_argument("--steps", type=int, default=30, help="steps per row (default 30)")
    parser.add_argument("--cprofile", metavar="DIR", help="also write a cProfile of the steps per row here")
    parser.add_argument("--kernels", action="store_true", help="also list one step's kernels by name per row")
    parser.add_argument("--detail", action="store_true",
                        help="also time the backend's per-call helpers (they slow the marked steps a little)")
    parser.add_argument("-o", "--output", default="host_timeline.json")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("bench/profile/host_timeline.py: needs a CUDA GPU")
    if args.cprofile:
        os.makedirs(args.cprofile, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as cache_dir:
        for model in args.models.split(","):
            for mode in args.modes.split(","):
                for system in args.systems.split(","):
                    row = measure(model, mode, system, args.steps, cache_dir, args.cprofile, args.kernels, args.detail)
                    rows.append(row)
                    marks = ", ".join(f"{label} {ms:.3f}" for label, ms in row["marks_ms"].items())
                    print(f"{model} {mode} {system}: {marks}", flush=True)
                    if row["kernels"]:
                        k = row["kernels"]
                        print(f"    {k['count']} kernels, busy {k['busy_ms']:.3f} of {k['span_ms']:.3f} ms",
                              flush=True)
    data = dict(device=torch.cuda.get_device_name(), date=time.strftime("%Y-%m-%d"), torch=torch.__version__,
                command="bench/profile/host_timeline.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                rows=rows)
    with open(args.output, "w") as f:
        json.dump(data, f, indent=2)
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
