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
FALLBACKS = ("eager", "error")


def _names(parser, flag, text, allowed=None):
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        parser.error(f"{flag} is empty")
    unknown = [n for n in names if allowed is not None and n not in allowed]
    if unknown:
        parser.error(f"unknown {flag} value(s) {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return names


def parser_for(prog, description, default_models, default_systems=None, fuse_fallback="eager", aliases=None):
    parser = argparse.ArgumentParser(prog=prog, description=description)
    names = ", ".join(aliases or workloads.MODEL_NAMES)
    parser.add_argument("models", nargs="?", default=default_models,
                        help=f"comma-separated: {names}, or module:function "
                             f"(see fuse.harness.workloads.custom); default {default_models or 'none'}")
    parser.add_argument("--config", choices=["full", "tiny"], default="full",
                        help="model sizes (tiny: 2 layers, for tests; default full)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: train, infer (default both)")
    parser.add_argument("--systems", default=default_systems or ",".join(SYSTEMS),
                        help=f"comma-separated: {', '.join(SYSTEMS)} (default {default_systems or 'all'})")
    parser.add_argument("--fuse-fallback", choices=FALLBACKS, default=fuse_fallback,
                        help="what fuse-compile does with a graph Fuse cannot compile: run it eagerly, counted "
                             "in the row's fallbacks (torch.compile(backend=\"fuse\")'s own default), or fail "
                             "the row with Fuse's error (options={\"fallback\": \"error\"}); "
                             f"default {fuse_fallback}")
    parser.add_argument("-o", "--output", help="write the results JSON here")
    parser.add_argument("--append", action="store_true",
                        help="continue the run in --output: keep its rows (same GPU and torch), measure the "
                             "missing and the failed ones")
    parser.add_argument("--steps", type=int, default=STEPS, help=f"timed steps (default {STEPS})")
    parser.add_argument("--throughput-steps", type=int, default=THROUGHPUT_STEPS,
                        help=f"back-to-back steps (default {THROUGHPUT_STEPS})")
    parser.add_argument("--warmup", type=int, default=WARMUP,
                        help=f"untimed steps after the first three (default {WARMUP})")
    parser.add_argument("--devices", default=None,
                        help="GPUs to spread the rows over, one row per GPU at a time: comma-separated "
                             "indices (\"0,1\"; \"1\" is GPU 1 alone) or 'all' (default: the first GPU this "
                             "process sees). The GPUs should be alike: every row of a file is read as the GPU "
                             "it names")
    parser.add_argument("--no-warm-compile", dest="warm_compile", action="store_false",
                        help="skip each compiler row's warm-compile process (its compile_warm_s stays empty; "
                             "a run then takes about two thirds of the device time)")
    return parser


def device_list(parser, text, count):
    """The GPU indices --devices names ("0,2", "1" or "all"), checked
    against the `count` GPUs this process sees."""
    if text is None:
        return None
    text = text.strip()
    if text == "all":
        return list(range(count))
    try:
        indices = [int(i) for i in text.split(",") if i.strip()]
    except ValueError:
        parser.error(f"--devices {text!r}: comma-separated GPU indices or 'all'")
    bad = [i for i in indices if not 0 <= i < count]
    if not indices or bad or len(set(indices)) != len(indices):
        parser.error(f"--devices {text!r}: distinct GPU indices from 0 to {count - 1} "
                     f"(this process sees {count} GPU(s))")
    return indices


def previous_results(path, fresh):
    """The results in `path` to continue, checked to come from this GPU,
    torch, config and Fuse fallback policy; exits with a message otherwise."""
    import json
    with open(path) as f:
        data = json.load(f)
    for key in ("gpu", "torch", "config"):
        if data.get(key) != fresh.get(key):
            sys.exit(f"{path} was measured with {key} {data.get(key)}, this run has {fresh.get(key)}: "
                     "--append continues a run on the same GPU, torch and config only")
    # Files written before the option existed fell back eagerly.
    was = (data.get("settings") or {}).get("fuse_fallback", "eager")
    now = (fresh.get("settings") or {}).get("fuse_fallback", "eager")
    if was != now:
        sys.exit(f"{path} was measured with --fuse-fallback {was}, this run has {now}: --append continues a run "
                 "with the same fallback policy only")
    return data


def main(argv=None, *, prog, description, default_models=None, default_output=None, latest=None,
         default_systems=None, fuse_fallback="eager", aliases=None):
    """Runs the harness; returns the exit code (1 when a row failed).

    aliases: {short name: module:function}; when given, a model is one of
    those names (its rows carry the short name) or a module:function, and
    the built-in models are not offered (bench/zoo/run.py)."""
    parser = parser_for(prog, description, default_models, default_systems, fuse_fallback, aliases)
    args = parser.parse_args(argv)
    if not args.models:
        parser.error("name at least one model")
    models = _names(parser, "models", args.models)
    if aliases is not None:
        unknown = [n for n in models if n not in aliases and ":" not in n]
        if unknown:
            parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(aliases)} or "
                         "module:function")
    modes = _names(parser, "--modes", args.modes, MODES)
    systems = _names(parser, "--systems", args.systems, SYSTEMS)
    for count, flag in ((args.steps, "--steps"), (args.throughput_steps, "--throughput-steps")):
        if count < 1:
            parser.error(f"{flag} must be at least 1")
    if args.append and not (args.output or default_output):
        parser.error("--append needs an existing --output file")
    # Whatever asks torch whether CUDA is there from now on (transformers
    # does, on import; so may a custom model's module) asks NVML and leaves
    # the driver uninitialised here: the measurements are forked from this
    # process.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    try:
        chosen = [workloads.custom(aliases[name], args.config, name=name) if name in (aliases or {})
                  else workloads.resolve(name, args.config) for name in models]
    except (ValueError, ImportError, AttributeError) as error:
        parser.error(str(error))
    try:
        workloads.preload(chosen)
    except ImportError as error:
        print(f"{prog}: {', '.join(models)} needs HuggingFace transformers ({error})", file=sys.stderr)
        return 2
    gpu, count = runner.gpu_name(), runner.gpu_count()
    if gpu is None:
        print(f"{prog}: no CUDA device: the harness times steps on a GPU", file=sys.stderr)
        return 2
    devices = device_list(parser, args.devices, count)
    command = " ".join([prog] + list(sys.argv[1:] if argv is None else argv))
    settings = dict(steps=args.steps, throughput_steps=args.throughput_steps, warmup=args.warmup,
                    fuse_fallback=args.fuse_fallback, warm_compile=args.warm_compile,
                    devices=len(devices) if devices else 1)
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
    runner.run(chosen, modes, systems, results, save=save, devices=devices)
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
