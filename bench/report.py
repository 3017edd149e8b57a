"""The plot and the README table of a `bench/run.py` result file.

    python3 bench/report.py bench/results/<gpu>-<date>.json [--plot OUT.png] [--table]

The plot has one panel for step time and one for MFU, a group of bars per
model configuration and mode, one bar per system (eager, Inductor, Fuse);
the table is Markdown, one row per model configuration and mode, and is what
the README shows (regenerate it from the JSON, never by hand).
"""

import argparse
import json
import sys

SYSTEMS = ("eager", "inductor", "fuse")


def rows(results):
    """{(model, config, mode): {system: result}} in the file's order."""
    grouped = {}
    for r in results:
        grouped.setdefault((r["model"], r["config"], r["mode"]), {})[r["system"]] = r
    return grouped


def _fmt(value, spec, missing="-"):
    return missing if value is None else format(value, spec)


def markdown_table(data):
    lines = [f"Measured on {data['device']} ({data['date']}, torch {data['torch']}): "
             "median step time (ms), peak memory (GiB), MFU (%), kernels per step, "
             "cold/warm compile (s); ratios are Fuse's speed-up.",
             "",
             "| model | mode | eager ms | Inductor ms | Fuse ms | vs eager | vs Inductor "
             "| peak GiB e/I/F | MFU % e/I/F | kernels e/I/F | compile s I/F (cold, warm) "
             "| rel. diff from eager: loss (or logits), worst gradient; Fuse (Inductor) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- |"]
    for (model, config, mode), by_system in rows(data["results"]).items():
        get = lambda s, k: by_system.get(s, {}).get(k)  # noqa: E731
        ms = {s: get(s, "step_ms") for s in SYSTEMS}
        ratio = lambda base: (f"{ms[base] / ms['fuse']:.2f}x"  # noqa: E731
                              if ms[base] and ms["fuse"] else "-")
        peak = "/".join(_fmt(get(s, "peak_bytes") and get(s, "peak_bytes") / 2**30, ".1f") for s in SYSTEMS)
        mfu = "/".join(_fmt(get(s, "mfu") and 100 * get(s, "mfu"), ".0f") for s in SYSTEMS)
        kernels = "/".join(_fmt(get(s, "kernels"), ".0f") for s in SYSTEMS)
        compile_s = " / ".join(f"{_fmt(get(s, 'compile_cold_s'), '.1f')}, {_fmt(get(s, 'compile_warm_s'), '.1f')}"
                               for s in ("inductor", "fuse"))
        # Inductor's beside Fuse's: bf16 noise against eager's own bf16 noise
        # (BERT's attention key-bias gradient, which the softmax cancels, is
        # all noise in every system).
        diffs = (f"{_fmt(get('fuse', 'loss_rel_diff'), '.1e')} ({_fmt(get('inductor', 'loss_rel_diff'), '.1e')}), "
                 f"{_fmt(get('fuse', 'grad_rel_diff'), '.1e')} ({_fmt(get('inductor', 'grad_rel_diff'), '.1e')})")
        errors = [f"{s}: {get(s, 'error')}" for s in SYSTEMS + ("all",) if get(s, "error")]
        lines.append(f"| {model} {config} | {mode} | {_fmt(ms['eager'], '.1f')} | {_fmt(ms['inductor'], '.1f')} "
                     f"| {_fmt(ms['fuse'], '.1f')} | {ratio('eager')} | {ratio('inductor')} | {peak} | {mfu} "
                     f"| {kernels} | {compile_s} | {diffs} |")
        for error in errors:
            lines.append(f"| | | {error} | | | | | | | | | |")
    return "\n".join(lines)


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grouped = rows(data["results"])
    labels = [f"{m} {c}\n{mode}" for (m, c, mode) in grouped]
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 1.6 * len(labels)), 8), sharex=True)
    width = 0.27
    for panel, (key, title, scale) in zip(axes, (("step_ms", "step time (ms, lower is better)", 1),
                                                ("mfu", "MFU (%, higher is better)", 100))):
        for i, system in enumerate(SYSTEMS):
            values = [(g.get(system, {}).get(key) or 0) * scale for g in grouped.values()]
            xs = [x + (i - 1) * width for x in range(len(labels))]
            bars = panel.bar(xs, values, width, label=system)
            panel.bar_label(bars, fmt="%.0f", fontsize=7)
        panel.set_title(title)
        panel.grid(axis="y", alpha=0.3)
    axes[0].legend()
    axes[1].set_xticks(range(len(labels)), labels, fontsize=8)
    fig.suptitle(f"{data['device']}, {data['date']}: eager (bf16 autocast) vs torch.compile vs Fuse (bf16)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a JSON file written by bench/run.py")
    parser.add_argument("--plot", metavar="OUT.png", help="write the plot here")
    parser.add_argument("--table", action="store_true", help="print the Markdown table")
    args = parser.parse_args(argv)
    with open(args.results) as f:
        data = json.load(f)
    if args.plot:
        plot(data, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    if args.table or not args.plot:
        print(markdown_table(data))


if __name__ == "__main__":
    main()
