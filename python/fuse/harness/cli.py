"""The command line of the harness, shared by `python -m fuse.compare` and
bench/run.py."""

import argparse
import os
import shutil
import sys

from . import report, runner, workloads
from .measure import STEPS, THROUGHPUT_STEPS, WARMUP
from .systems import SYSTEMS

MODES = ("train", "infer")


def _names(parser, flag, text, allowed=None):
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        parser.error(f"{flag} is empty")
    unknown = [n for n in names if allowed is not None and n not in allowed]
    if unknown:
        parser.error(f"unknown {flag} value(s) {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return names


def parser_for(prog, description, default_models):
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("models", nargs="?", default=default_models,
                        help=f"comma-separated: {', '.join(workloads.MODEL_NAMES)}, or module:function "
                             f"(see fuse.harness.workloads.custom); default {default_models or 'none'}")
    parser.add_argument("--config", choices=["full", "tiny"], default="full",
                        help="model sizes (tiny: 2 layers, for tests; default full)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: train, infer (default both)")
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help=f"comma-separated: {', '.join(SYSTEMS)} (default all)")
    parser.add_argument("-o", "--output", help="write the results JSON here")
    parser.add_argument("--append", action="store_true",
                        help="continue the run in --output: keep its rows (same GPU and torch), measure the "
                             "missing and the failed ones")
    parser.add_argument("--steps", type=int, default=STEPS, help=f"timed steps (default {STEPS})")
    parser.add_argument("--throughput-steps", type=int, default=THROUGHPUT_STEPS,
                        help=f"back-to-back steps (default {THROUGHPUT_STEPS})")
    parser.add_argument("--warmup", type=int, default=WARMUP,
                        help=f"untimed steps after the first three (default {WARMUP})")
    return parser


def previous_results(path, fresh):
    """The results in `path` to continue, checked to come from this GPU,
    torch and config; exits with a message otherwise."""
    import json
    with open(path) as f:
        data = json.load(f)
    for key in ("gpu", "torch", "config"):
        if data.get(key) != fresh.get(key):
            sys.exit(f"{path} was measured with {key} {data.get(key)}, this run has {fresh.get(key)}: "
                     "--append continues a run on the same GPU, torch and config only")
    return data


def main(argv=None, *, prog, description, default_models=None, default_output=None, latest=None):
    """Runs the harness; returns the exit code (1 when a row failed)."""
    parser = parser_for(prog, description, default_models)
    args = parser.parse_args(argv)
    if not args.models:
        parser.error("name at least one model")
    models = _names(parser, "models", args.models)
    modes = _names(parser, "--modes", args.modes, MODES)
    systems = _names(parser, "--systems", args.systems, SYSTEMS)
    for count, flag in ((args.steps, "--steps"), (args.throughput_steps, "--throughput-steps")):
        if count < 1:
            parser.error(f"{flag} must be at least 1")
    if args.append and not (args.output or default_output):
        parser.error("--append needs an existing --output file")
    try:
        chosen = [workloads.resolve(name, args.config) for name in models]
    except (ValueError, ImportError, AttributeError) as error:
        parser.error(str(error))
    # Whatever asks torch whether CUDA is there from now on (transformers
    # does, on import) asks NVML and leaves the driver uninitialised here:
    # the measurements are forked from this process.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    try:
        workloads.preload(chosen)
    except ImportError as error:
        print(f"{prog}: {', '.join(models)} needs HuggingFace transformers ({error})", file=sys.stderr)
        return 2
    gpu = runner.gpu_name()
    if gpu is None:
        print(f"{prog}: no CUDA device: the harness times steps on a GPU", file=sys.stderr)
        return 2
    command = " ".join([prog] + list(sys.argv[1:] if argv is None else argv))
    settings = dict(steps=args.steps, throughput_steps=args.throughput_steps, warmup=args.warmup)
    results = runner.new_results(command, args.config, settings, gpu)
    output = args.output or (default_output(results) if default_output else None)
    if args.append:
        if not output or not os.path.exists(output):
            parser.error("--append needs an existing --output file")
        previous = previous_results(output, results)
        previous["command"] += "; then " + command
        # Rows measured by other code say so: the commits in the order the
        # calls ran.
        commits = (previous.get("commit") or "unknown").split("; then ")
        if results.get("commit") and commits[-1] != results["commit"]:
            previous["commit"] = "; then ".join(commits + [results["commit"]])
        results = previous
    save = (lambda data: runner.save_json(data, output)) if output else None
    runner.run(chosen, modes, systems, results, save=save)
    print(report.markdown(results))
    if output:
        print(f"wrote {output}", file=sys.stderr)
        if latest and args.config == "full":
            shutil.copyfile(output, latest)
            print(f"copied to {latest}", file=sys.stderr)
    failed = runner.failed_rows(results)
    if failed:
        print(f"{prog}: {len(failed)} row(s) failed", file=sys.stderr)
        return 1
    return 0
