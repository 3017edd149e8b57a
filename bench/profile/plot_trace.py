"""A picture of a `fuse-run --trace` file: the step's kernels on a timeline,
coloured by kind, with each kernel's SM efficiency and achieved fraction of
the roofline beneath. For where no trace viewer (Perfetto, chrome://tracing)
is at hand; the JSON itself opens in either.

    python3 bench/profile/plot_trace.py bench/profile/gpt2_trace.json -o bench/profile/gpt2_trace.png
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    with open(args.trace) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    steps = [e for e in events if e.get("ph") == "X"]
    title = next((e["args"]["name"] for e in events
                  if e.get("ph") == "M" and e.get("name") == "process_name"), "")
    kinds = sorted({e.get("cat", "?") for e in steps})
    palette = plt.get_cmap("tab20")
    colour = {kind: palette(i % 20) for i, kind in enumerate(kinds)}

    fig, (timeline, efficiency) = plt.subplots(
        2, 1, figsize=(16, 5.5), sharex=True, gridspec_kw={"height_ratios": [1, 2]})
    for e in steps:
        start, width = e["ts"] / 1000.0, e["dur"] / 1000.0
        timeline.broken_barh([(start, width)], (0, 1), color=colour[e.get("cat", "?")])
        args_ = e.get("args", {})
        roofline = max(args_.get("compute_fraction") or 0, args_.get("memory_fraction") or 0)
        efficiency.bar(start, min(roofline, 1.2), width=width, align="edge",
                       color=colour[e.get("cat", "?")], alpha=0.85)
        if args_.get("sm_efficiency") is not None:
            efficiency.plot([start, start + width], [args_["sm_efficiency"]] * 2,
                            color="black", linewidth=0.8)
    timeline.set_yticks([])
    timeline.set_title(f"{title}: {len(steps)} steps, "
                       f"{max(e['ts'] + e['dur'] for e in steps) / 1000:.2f} ms")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[k]) for k in kinds]
    timeline.legend(handles, kinds, ncol=min(len(kinds), 6), fontsize=8,
                    loc="upper center", bbox_to_anchor=(0.5, -0.05))
    efficiency.set_ylabel("fraction")
    efficiency.set_xlabel("time in the step (ms)")
    efficiency.set_ylim(0, 1.25)
    efficiency.text(0.005, 1.15, "bars: achieved fraction of the roofline (compute or memory, "
                    "whichever is larger); lines: SM efficiency",
                    transform=efficiency.get_yaxis_transform(), fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()
