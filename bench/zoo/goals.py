"""The zoo's goals (its issue: fuse-compile at least 1.0x Inductor
reduce-overhead on every row and 1.2x on the median row, a cold compile of
at most 10 s, no row failing) checked against a results file, with the
reasons bench/zoo/gaps.json gives for each miss."""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
GAPS = os.path.join(HERE, "gaps.json")
MIN_RATIO, MEDIAN_RATIO, MAX_COLD_S = 1.0, 1.2, 10.0
FUSE, PEER = "fuse-compile", "inductor-reduce-overhead"


def load_gaps(path=GAPS):
    with open(path) as f:
        return json.load(f)


def assess(results):
    """Per fuse-compile row: {"key": "model mode", "ratio", "cold_s",
    "misses": [...]} (ratio: the peer's ms over Fuse's, None when either
    has none), in the file's order."""
    rows = {(r["model"], r["mode"], r["system"]): r for r in results["rows"]}
    assessed = []
    for (model, mode, system), row in rows.items():
        if system != FUSE:
            continue
        peer = rows.get((model, mode, PEER)) or {}
        ratio = peer["ms"] / row["ms"] if row.get("ms") and peer.get("ms") and not row.get("error") \
            and not peer.get("error") else None
        misses = []
        if row.get("error"):
            misses.append("failed")
        elif ratio is not None and ratio < MIN_RATIO:
            misses.append(f"{ratio:.2f}x")
        cold = row.get("compile_cold_s")
        if cold is not None and cold > MAX_COLD_S:
            misses.append(f"cold compile {cold:.0f} s")
        assessed.append({"key": f"{model} {mode}", "ratio": ratio, "cold_s": cold, "misses": misses})
    return assessed


def median_ratio(assessed):
    ratios = sorted(a["ratio"] for a in assessed if a["ratio"] is not None)
    if not ratios:
        return None
    middle = len(ratios) // 2
    return ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2


def reason(entry, gaps):
    """Why `entry` misses its goals: the row's own reason, the compile
    reason for a slow compile, None where a miss has none."""
    parts = []
    speed = [m for m in entry["misses"] if not m.startswith("cold compile")]
    if speed:
        own = gaps.get("rows", {}).get(entry["key"])
        if own is None:
            return None
        parts.append(own)
    if any(m.startswith("cold compile") for m in entry["misses"]):
        parts.append("Compile: " + gaps["compile"])
    return " ".join(parts) if parts else None


def unexplained(assessed, gaps):
    """Keys of the rows that miss a goal with no reason in `gaps`."""
    return [a["key"] for a in assessed if a["misses"] and reason(a, gaps) is None]


def annotate(results, gaps):
    """Writes each missing row's reason into its fuse-compile row ("gap"),
    and the median's into the file ("gaps"); returns the results."""
    assessed = {a["key"]: a for a in assess(results)}
    for row in results["rows"]:
        entry = assessed.get(f"{row['model']} {row['mode']}")
        if row["system"] != FUSE or entry is None:
            continue
        row.pop("gap", None)
        if entry["misses"]:
            row["gap"] = {"misses": entry["misses"], "why": reason(entry, gaps) or "unexplained"}
    median = median_ratio(list(assessed.values()))
    results["gaps"] = {"median_ratio": median,
                       "median_why": gaps["median"] if median is not None and median < MEDIAN_RATIO else None}
    return results


def markdown(results, gaps):
    assessed = assess(results)
    missing = [a for a in assessed if a["misses"]]
    median = median_ratio(assessed)
    lines = [f"Goals: at least {MIN_RATIO:g}x reduce-overhead on every row and {MEDIAN_RATIO:g}x on the median, "
             f"cold compile at most {MAX_COLD_S:g} s. Met on {len(assessed) - len(missing)} of {len(assessed)} "
             f"rows; median {median:.2f}x." if median is not None else "No ratios yet."]
    if median is not None and median < MEDIAN_RATIO:
        lines += ["", "Median: " + gaps["median"]]
    slow = [a for a in missing if any(m.startswith("cold compile") for m in a["misses"])]
    if slow:
        lines += ["", f"Cold compile over {MAX_COLD_S:g} s on {len(slow)} rows: " + gaps["compile"]]
    speed = [a for a in missing if any(not m.startswith("cold compile") for m in a["misses"])]
    if speed:
        lines += ["", "| row | misses | why |", "| --- | --- | --- |"]
        for a in speed:
            why = gaps.get("rows", {}).get(a["key"]) or "**unexplained**: profile it and say why in bench/zoo/gaps.json"
            misses = ", ".join(m for m in a["misses"] if not m.startswith("cold compile"))
            lines.append(f"| {a['key']} | {misses} | {why} |")
    return "\n".join(lines)
