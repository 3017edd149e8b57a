"""Compile times per model and system, gathered from the common harness's
results (bench/run.py and bench/zoo/run.py rows, which measure them: the
first three steps of a new process less three steady steps, cold with empty
Inductor, Triton and Fuse caches, warm with those filled), into
bench/compile/latest.json:

    {"gpu", "date", "torch", "sources": [...], "goals": {...},
     "rows": [{"model", "mode", "system", "cold_s", "warm_s", "phases", "outside_fuse_s", "left"}]}

`phases` is Fuse's own report (fuse.runtime._phases: re-trace, export,
pipeline and code generation, kernel load), `outside_fuse_s` the cold time
those phases do not cover (dynamo, AOTAutograd, the first steps' own run),
and `left` says per Fuse row what stands between it and the goals (cold <= 5 s,
warm <= 0.5 s, cold at least 5x faster than the faster Inductor mode's).
Files later on the command line win for the same (model, mode, system).

    python3 bench/compile/collect.py bench/results/H200-2026-11-27.json bench/zoo/latest.json ...
    python3 bench/compile/collect.py --markdown      # the table of bench/compile/latest.json
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LATEST = os.path.join(HERE, "latest.json")
COMPILERS = ("inductor", "inductor-reduce-overhead", "fuse-compile", "fuse-step")
GOALS = {"cold_s": 5.0, "warm_s": 0.5, "cold_speedup_over_inductor": 5.0}


def _left(row, inductor_cold):
    """What a Fuse row lacks of the goals, in words ('' when it meets them)."""
    gaps = []
    if row["cold_s"] is not None and row["cold_s"] > GOALS["cold_s"]:
        gaps.append(f"cold {row['cold_s']:.1f} s > {GOALS['cold_s']:g} s")
    if row["warm_s"] is None:
        gaps.append("warm not measured")
    elif row["warm_s"] > GOALS["warm_s"]:
        gaps.append(f"warm {row['warm_s']:.1f} s > {GOALS['warm_s']:g} s")
    if inductor_cold and row["cold_s"] and inductor_cold / row["cold_s"] < GOALS["cold_speedup_over_inductor"]:
        gaps.append(f"{inductor_cold / row['cold_s']:.1f}x Inductor's cold, not {GOALS['cold_speedup_over_inductor']:g}x")
    if row["outside_fuse_s"] is not None and gaps:
        gaps.append(f"{row['outside_fuse_s']:.1f} s of the cold outside the phases listed (dynamo, the first steps, "
                    "and AOTAutograd where they do not list it)")
    return "; ".join(gaps)


def collect(paths):
    rows, meta, sources = {}, {}, []
    for path in paths:
        with open(path) as f:
            results = json.load(f)
        sources.append(os.path.relpath(path))
        for key in ("gpu", "date", "torch"):
            meta[key] = results.get(key) or meta.get(key)
        for row in results["rows"]:
            if row["system"] not in COMPILERS or row.get("compile_cold_s") is None:
                continue
            phases = row.get("compile_phases") or None
            cold = row["compile_cold_s"]
            rows[(row["model"], row["mode"], row["system"])] = {
                "model": row["model"], "mode": row["mode"], "system": row["system"],
                "cold_s": round(cold, 2), "warm_s": None if row.get("compile_warm_s") is None
                else round(row["compile_warm_s"], 2), "phases": phases,
                "outside_fuse_s": round(cold - sum(phases.values()), 2) if phases else None}
    for (model, mode, system), row in rows.items():
        if system.startswith("fuse"):
            inductor = [rows[(model, mode, s)]["cold_s"] for s in COMPILERS[:2] if (model, mode, s) in rows]
            row["left"] = _left(row, min(inductor) if inductor else None)
    return dict(meta, sources=sources, goals=GOALS, rows=list(rows.values()))


def markdown(results):
    lines = [f"Compile times on {results['gpu']} ({results['date']}, torch {results['torch']}), from "
             + ", ".join(f"`{s}`" for s in results["sources"]) + ": cold / warm seconds (warm `-`: not measured).",
             "", "| model | mode | Inductor | Inductor r-o | Fuse torch.compile | Fuse compile_step | Fuse's phases, "
             "torch.compile cold |", "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    table = {(r["model"], r["mode"], r["system"]): r for r in results["rows"]}
    for model, mode in dict.fromkeys((r["model"], r["mode"]) for r in results["rows"]):
        cells = []
        for system in COMPILERS:
            row = table.get((model, mode, system))
            cells.append("-" if row is None else f"{row['cold_s']:.1f} / " + (
                "-" if row["warm_s"] is None else f"{row['warm_s']:.1f}"))
        fuse = table.get((model, mode, "fuse-compile"))
        phases = ", ".join(f"{k} {v:.1f}" for k, v in (fuse.get("phases") or {}).items()) if fuse else ""
        if fuse and fuse.get("outside_fuse_s") is not None:
            phases += f"; outside them {fuse['outside_fuse_s']:.1f}"
        lines.append(f"| {model} | {mode} | " + " | ".join(cells) + f" | {phases or '-'} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="*", help="harness results JSON files (later ones win)")
    parser.add_argument("-o", "--output", default=LATEST, help="where to write (default bench/compile/latest.json)")
    parser.add_argument("--markdown", action="store_true", help="print the table of --output instead")
    args = parser.parse_args(argv)
    if args.markdown:
        with open(args.output) as f:
            print(markdown(json.load(f)))
        return 0
    if not args.results:
        parser.error("give at least one harness results file")
    results = collect(args.results)
    with open(args.output, "w") as f:
        json.dump(results, f, indent=1)
    print(f"wrote {args.output}: {len(results['rows'])} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
