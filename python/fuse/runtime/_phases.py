"""Where compile time goes, phase by phase, for every graph Fuse compiles.

Each compiled graph (fuse.compile, fuse.compile_step, and every graph the
torch.compile backend compiles) keeps a `phases` dict, {phase: seconds} in
the order the phases ran, and with `FUSE_LOG=compile` in the environment
prints it to stderr once the graph is ready to run:

    [fuse] compile phases of GPT2LMHeadModel step: 3.41 s
      export (trace and text)        1.92 s
      pipeline and code generation   0.31 s   compiled
        fuse-form-fusions           0.113 s
        code generation             0.020 s
        ...
      kernels (NVRTC, cuBLASLt)      1.18 s   32 modules: 30 compiled, 2 from the cache

The phases: `retrace` (the backend re-traces an AOTAutograd graph on fake
CPU tensors), `export` (tracing and writing the dialect text), `compile`
(parse, verify, the pass pipeline and code generation in libFuseC, each
pass timed on its own and listed beneath; or reading the executable from
the on-disk cache), `load` (the kernels:
NVRTC, or the cubin cache, and cuBLASLt's heuristics for each GEMM).
The backend also reports, per graph dynamo hands it, the time AOTAutograd
took to trace and partition it (`aotautograd`). For a graph file,
`fuse-opt --fuse-pipeline --mlir-timing` times each pass the same way.
"""

import os
import sys

_LABELS = {
    "aotautograd": "AOTAutograd (trace, partition)",
    "retrace": "re-trace (fake tensors)",
    "export": "export (trace and text)",
    "compile": "pipeline and code generation",
    "load": "kernels (NVRTC, cuBLASLt)",
}


def enabled():
    """Whether FUSE_LOG (a comma-separated list) asks for `compile`."""
    return "compile" in {word.strip() for word in os.environ.get("FUSE_LOG", "").split(",")}


def describe_load(report):
    """A session's compile report as a note: modules compiled and cached."""
    if not report:
        return ""
    modules, hits = int(report.get("modules", 0)), int(report.get("cache_hits", 0))
    return f"{modules} modules: {int(report.get('compiled', 0))} compiled, {hits} from the cache"


def format_report(what, phases, notes=None, compile_parts=()):
    """The report's text: a header with the total, then a line a phase;
    under `compile`, its parts ((name, seconds): parse and verify, each
    pass, code generation) indented, longest first."""
    notes = notes or {}
    total = sum(phases.values())
    width = max([len(_LABELS.get(p, p)) for p in phases] + [len(n) + 2 for n, _ in compile_parts] + [10])
    lines = [f"[fuse] compile phases of {what}: {total:.2f} s"]
    for phase, seconds in phases.items():
        note = notes.get(phase, "")
        lines.append(f"  {_LABELS.get(phase, phase):<{width}}  {seconds:7.2f} s" + (f"   {note}" if note else ""))
        if phase == "compile":
            for name, part in sorted(compile_parts, key=lambda p: -p[1]):
                lines.append(f"    {name:<{width - 2}}  {part:7.3f} s")
    return "\n".join(lines)


def report(what, phases, notes=None, compile_parts=(), stream=None):
    """Prints the report when FUSE_LOG asks for it."""
    if enabled():
        print(format_report(what, phases, notes, compile_parts), file=stream or sys.stderr, flush=True)
