"""Where the compile time of a large graph goes on the CPU, phase by phase.

Python side (the exporter): a training step of the plain nanoGPT module
(`fuse/harness/nanogpt.py`, GPT-2 124M widths and 12 layers by default, a
tiny batch and sequence so that torch 1.13's real-tensor tracing computes
little), with or without the AdamW update, split into
  trace    make_fx (fuse.exporter._tracing.trace), real compute included on torch 1.13
  convert  the Converter's walk over the FX graph (fuse.exporter._fx_to_mlir)
  render   the text (fuse.exporter._mlir_text.FunctionBuilder.render)
each the median of --repeat runs; --profile adds a cProfile of convert and
render (top functions by own time). --dump DIR writes each exported text
(and prints its SHA-256) so that two versions of the exporter can be
diffed on the same input: run from the same directory, since source
locations are written relative to it.

C++ side: for each graph (--graphs; by default the full-size fixtures in
test/graphs and the examples), the median wall time of
`fuse-translate --emit-plan` (parse, fuse-pipeline, code generation, plan
printing), the per-pass wall times of `fuse-opt --fuse-pipeline
--mlir-timing`, and the C API compile (`fuse.runtime._capi.Executable.compile`, as
fuse.compile calls it without its cache) with its own phase report.

    /usr/bin/python3 bench/compile/exporter_profile.py                       # everything
    /usr/bin/python3 bench/compile/exporter_profile.py --no-cpp --profile    # the exporter, profiled
    /usr/bin/python3 bench/compile/exporter_profile.py --no-export --graphs test/graphs/gpt2-full-train-adamw.mlir

Timings on a shared machine are noisy: every number is a median of
repeats, and the JSON (--json) keeps every sample.
"""

import argparse
import cProfile
import hashlib
import io
import json
import os
import pathlib
import pstats
import re
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

DEFAULT_GRAPHS = ["test/graphs/gpt2-full-train-adamw.mlir", "test/graphs/llama-full-train.mlir",
                  "test/graphs/bert-full-b32-train.mlir", "test/graphs/gpt2-full-train.mlir",
                  "examples/gpt2_block.mlir"]


def median(samples):
    return statistics.median(samples) if samples else float("nan")


# -- the exporter ---------------------------------------------------------------

def nanogpt_step(layers, batch, seq, optimizer):
    import torch
    from fuse.exporter._optimizers import AdamW
    from fuse.exporter._steps import Step
    from fuse.harness.nanogpt import NanoGPT, NanoGPTConfig
    torch.manual_seed(0)
    config = NanoGPTConfig(n_layer=layers)
    model = NanoGPT(config).float()
    generator = torch.Generator().manual_seed(1)
    idx = torch.randint(0, config.vocab_size, (batch, seq), generator=generator)
    targets = torch.randint(0, config.vocab_size, (batch, seq), generator=generator)
    rule = AdamW() if optimizer == "adamw" else None
    # The loss is inside forward (as nanoGPT's model.py has it).
    return Step(model, (idx, targets), "train", lambda output, *rest: output, (), rule)


def export_phases(step, name, profile=None):
    """{phase: seconds} and the text of one export of `step`, as
    fuse.export.export_step does it, timed phase by phase."""
    from fuse.exporter import _tracing
    from fuse.exporter._fx_to_mlir import ArgSpec, Converter
    was_training = step.module.training
    step.module.train(True)
    try:
        example = [t.detach().requires_grad_(True) if i < len(step.param_names) else t
                   for i, t in enumerate(step.example)]
        started = time.perf_counter()
        graph = _tracing.trace(step.fn, example)
        traced = time.perf_counter()
    finally:
        step.module.train(was_training)
    specs = [ArgSpec(n) for n in step.arg_names]
    if profile is not None:
        profile.enable()
    converted_at = time.perf_counter()
    builder = Converter(graph, name, specs, list(step.result_names)).run()
    converted = time.perf_counter()
    text = builder.render(None)
    rendered = time.perf_counter()
    if profile is not None:
        profile.disable()
    phases = {"trace": traced - started, "convert": converted - converted_at, "render": rendered - converted}
    counts = {"fx_nodes": len(graph.graph.nodes), "ops": len(builder.ops), "chars": len(text)}
    return phases, counts, text


def measure_export(args, results):
    for optimizer in (["none", "adamw"] if args.optimizer == "both" else [args.optimizer]):
        step = nanogpt_step(args.layers, args.batch, args.seq, optimizer)
        name = f"nanogpt_train{'_adamw' if optimizer == 'adamw' else ''}"
        label = f"nanoGPT {args.layers} layers B{args.batch} T{args.seq} train" + \
                (" + AdamW" if optimizer == "adamw" else "")
        samples, counts, digest = {"trace": [], "convert": [], "render": []}, None, None
        for _ in range(args.repeat):
            phases, counts, text = export_phases(step, name)
            for phase, seconds in phases.items():
                samples[phase].append(seconds)
            text_digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if digest not in (None, text_digest):
                raise SystemExit(f"{label}: two exports of the same step differ")
            digest = text_digest
        if args.dump:
            path = pathlib.Path(args.dump) / f"{name}.mlir"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        del text
        medians = {phase: median(s) for phase, s in samples.items()}
        print(f"\n{label}: {counts['fx_nodes']} FX nodes -> {counts['ops']} ops, "
              f"{counts['chars'] / 1e6:.1f} MB of text, sha256 {digest[:16]}")
        for phase, seconds in medians.items():
            print(f"  {phase:<8} {seconds:8.3f} s   (median of {args.repeat}: "
                  + ", ".join(f"{s:.3f}" for s in samples[phase]) + ")")
        print(f"  {'total':<8} {sum(medians.values()):8.3f} s")
        entry = {"label": label, "counts": counts, "sha256": digest, "samples": samples, "median": medians}
        if args.profile:
            profile = cProfile.Profile()
            export_phases(step, name, profile)
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.profile_lines)
            report = "\n".join(line for line in out.getvalue().splitlines() if line.strip())
            print(f"  cProfile of convert + render (own time):\n{report}")
            entry["profile"] = report
        results["export"].append(entry)


# -- the C++ pipeline -------------------------------------------------------------

_TIMING_LINE = re.compile(r"^\s*([0-9.]+)\s+\(\s*[0-9.]+%\)\s+(.*\S)\s*$")


def mlir_timing(path):
    """{pass: wall seconds} from `fuse-opt --fuse-pipeline --mlir-timing`
    (a pass that runs twice, such as the graph type check, summed)."""
    result = subprocess.run([str(ROOT / "build/bin/fuse-opt"), str(path), "--fuse-pipeline", "--mlir-timing",
                             "-o", os.devnull], capture_output=True, text=True, check=True)
    passes = {}
    for line in result.stderr.splitlines():
        match = _TIMING_LINE.match(line)
        if match and not match.group(2).startswith("(A)"):
            name = match.group(2).replace("{anonymous}::", "")
            passes[name] = passes.get(name, 0.0) + float(match.group(1))
    return passes


def measure_cpp(args, results):
    from fuse.runtime import _capi
    from fuse import compiler
    translate = ROOT / "build/bin/fuse-translate"
    for graph in args.graphs:
        path = pathlib.Path(graph)
        text = path.read_text()
        ops = sum(1 for line in text.splitlines() if line.startswith("  %") or line.startswith("  fuse."))
        walls = []
        for _ in range(args.cpp_repeat):
            started = time.perf_counter()
            subprocess.run([str(translate), str(path), "--emit-plan", "-o", os.devnull], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            walls.append(time.perf_counter() - started)
        per_pass = {}
        for _ in range(args.cpp_repeat):
            for name, seconds in mlir_timing(path).items():
                per_pass.setdefault(name, []).append(seconds)
        capi_total, capi_phases = [], {}
        for _ in range(args.cpp_repeat):
            started = time.perf_counter()
            executable = _capi.Executable.compile(text, pipeline=compiler.pipeline_string(), arch="sm_90a",
                                                  source_name=str(path))
            capi_total.append(time.perf_counter() - started)
            for name, seconds in executable.compile_phases():
                capi_phases.setdefault(name, []).append(seconds)
            executable.close()
        print(f"\n{graph}: {ops} ops, {len(text) / 1e6:.2f} MB")
        print(f"  fuse-translate --emit-plan  {median(walls):7.3f} s wall (median of {len(walls)}: "
              + ", ".join(f"{s:.3f}" for s in walls) + ")")
        print(f"  C API compile               {median(capi_total):7.3f} s (median of {len(capi_total)})")
        for name, samples in sorted(capi_phases.items(), key=lambda item: -median(item[1])):
            print(f"    {name:<30} {median(samples):7.3f} s")
        print("  fuse-opt --fuse-pipeline --mlir-timing (medians):")
        for name, samples in sorted(per_pass.items(), key=lambda item: -median(item[1])):
            if name != "Total":
                print(f"    {name:<30} {median(samples):7.3f} s")
        results["cpp"].append({"graph": graph, "ops": ops, "emit_plan_wall": walls, "capi_total": capi_total,
                               "capi_phases": capi_phases, "mlir_timing": per_pass})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--optimizer", choices=["none", "adamw", "both"], default="both")
    parser.add_argument("--repeat", type=int, default=3, help="exports per step (medians)")
    parser.add_argument("--profile", action="store_true", help="cProfile convert + render once more")
    parser.add_argument("--profile-lines", type=int, default=25)
    parser.add_argument("--dump", metavar="DIR", help="write the exported texts here")
    parser.add_argument("--graphs", nargs="*", default=None, help="graphs for the C++ side")
    parser.add_argument("--cpp-repeat", type=int, default=5)
    parser.add_argument("--no-export", action="store_true")
    parser.add_argument("--no-cpp", action="store_true")
    parser.add_argument("--json", metavar="FILE", help="every sample, as JSON")
    args = parser.parse_args(argv)
    os.chdir(ROOT)  # source locations are relative to the working directory
    if args.graphs is None:
        args.graphs = [g for g in DEFAULT_GRAPHS if (ROOT / g).exists()]
    results = {"machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg()}, "export": [], "cpp": []}
    import torch
    print(f"torch {torch.__version__}, {torch.get_num_threads()} torch thread(s), {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    if not args.no_export:
        measure_export(args, results)
    if not args.no_cpp:
        measure_cpp(args, results)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
