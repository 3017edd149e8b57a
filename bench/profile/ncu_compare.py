"""Fuse's CUPTI figures against Nsight Compute's, kernel by kernel.

SM efficiency and occupancy differ in percentage points, DRAM bytes in
percent; the tolerance is 5 each. ncu ran one step (`fuse-run --iters 0`), so
the k-th ncu launch of a fused kernel is the k-th step of that name, and the
k-th cuBLASLt kernel is the k-th GEMM step (one kernel per cuBLASLt call;
the names are printed so that a call with two kernels would show).

SM efficiency is sm__cycles_active.avg / sm__cycles_elapsed.avg of the kernel
for both (Fuse's CUPTI ranges are per kernel, as ncu's); the JSON also holds
each side's ratio to the busiest SM (sm__cycles_active.max).

    python3 bench/profile/ncu_compare.py profile.json out.json LABEL fused.csv gemm.csv
"""
import csv
import json
import sys


def rows(path):
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return []
    start = next((i for i, line in enumerate(lines) if '"Kernel Name"' in line), None)
    if start is None:
        return []
    return [r for r in csv.DictReader(lines[start:]) if r.get("ID", "").strip().isdigit()]


def num(value):
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return float("nan")


def ncu_figures(r):
    return {"sm_efficiency": num(r["sm__cycles_active.avg"]) / num(r["sm__cycles_elapsed.avg"]),
            "sm_efficiency_active_max": num(r["sm__cycles_active.avg"]) / num(r["sm__cycles_active.max"]),
            "occupancy": num(r["sm__warps_active.avg.pct_of_peak_sustained_active"]) / 100,
            "dram_bytes": num(r["dram__bytes_read.sum"]) + num(r["dram__bytes_write.sum"]),
            "gpu_time_ms": num(r["gpu__time_duration.sum"]) * 1e-6}


def main():
    profile = json.load(open(sys.argv[1]))
    steps = profile["steps"]
    label, fused_csv, gemm_csv = sys.argv[3:6]
    pairs, seen = [], {}
    for r in rows(fused_csv):
        name = r["Kernel Name"].split("(")[0].strip()
        k = seen.get(name, 0)
        seen[name] = k + 1
        same = [s for s in steps if s["name"] == name]
        if k < len(same):
            pairs.append((same[k], name, ncu_figures(r), k))
    gemm_steps = [s for s in steps if s["kind"] == "gemm"]
    for step, r in zip(gemm_steps, rows(gemm_csv)):
        pairs.append((step, r["Kernel Name"][:60], ncu_figures(r), 0))

    tolerance = {"sm_efficiency_pp": 5, "occupancy_pp": 5, "dram_bytes_pct": 5}
    out = {"device": profile["device"], "fuse_counters": profile["counters"], "ncu_options": label,
           "tolerance": tolerance, "kernels": [], "all_launches": {}}
    print("== ncu " + label)
    print("%-4s %-22s %-34s %16s %12s %21s %s" % ("step", "fuse name", "ncu kernel", "SMeff fuse/ncu",
                                                  "occ fuse/ncu", "DRAM MB fuse/ncu", "ok"))
    for step, ncu_name, n, k in pairs:
        d_sm = 100 * (step["sm_efficiency"] - n["sm_efficiency"])
        d_occ = 100 * (step["occupancy"] - n["occupancy"])
        d_dram = 100 * (step["dram_bytes"] - n["dram_bytes"]) / max(n["dram_bytes"], 1)
        ok = abs(d_sm) <= 5 and abs(d_occ) <= 5 and abs(d_dram) <= 5
        group = "gemm (cuBLASLt)" if step["kind"] == "gemm" else step["name"]
        agg = out["all_launches"].setdefault(group, {"launches": 0, "within": 0, "max_abs_sm_pp": 0,
                                                     "max_abs_occ_pp": 0, "max_abs_dram_pct": 0})
        agg["launches"] += 1
        agg["within"] += ok
        agg["max_abs_sm_pp"] = max(agg["max_abs_sm_pp"], abs(d_sm))
        agg["max_abs_occ_pp"] = max(agg["max_abs_occ_pp"], abs(d_occ))
        agg["max_abs_dram_pct"] = max(agg["max_abs_dram_pct"], abs(d_dram))
        if k > 0:
            continue
        out["kernels"].append({
            "step": step["index"], "name": step["name"], "kind": step["kind"], "label": step["label"],
            "ncu_kernel": ncu_name,
            "fuse": {x: step[x] for x in ("time_ms", "sm_efficiency", "sm_efficiency_busiest_sm", "occupancy",
                                          "dram_bytes", "gpu_time_ms")},
            "ncu": n, "diff_sm_efficiency_pp": d_sm,
            "diff_occupancy_pp": d_occ, "diff_dram_bytes_pct": d_dram, "within_tolerance": ok})
        print("%-4d %-22s %-34s %6.1f/%-8.1f %5.1f/%-6.1f %9.1f/%-11.1f %s" % (
            step["index"], step["name"][:22], ncu_name[:34], 100 * step["sm_efficiency"],
            100 * n["sm_efficiency"], 100 * step["occupancy"], 100 * n["occupancy"], step["dram_bytes"] / 1e6,
            n["dram_bytes"] / 1e6, "yes" if ok else "NO"))
    for name, agg in out["all_launches"].items():
        print("   %d launches of %s: %d within; max |d| SM %.1f pp, occ %.1f pp, DRAM %.1f%%" % (
            agg["launches"], name[:40], agg["within"], agg["max_abs_sm_pp"],
            agg["max_abs_occ_pp"], agg["max_abs_dram_pct"]))
    json.dump(out, open(sys.argv[2], "w"), indent=2)


if __name__ == "__main__":
    main()
