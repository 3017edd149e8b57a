"""Picks the kernels to compare with Nsight Compute from a fuse profile.

One kernel of each of up to five fused kinds (the slowest of its kind, fuse_
kernels only). Prints a regex of their names on the first line and the picks
after it.

    python3 bench/profile/ncu_pick.py gpt2_profile.json
"""
import json
import sys

report = json.load(open(sys.argv[1]))
best = {}
for step in report["steps"]:
    if not step["name"].startswith("fuse_"):
        continue
    kind = ("attention:" if step["attention"] else "") + step["kind"]
    if kind not in best or step["time_ms"] > best[kind]["time_ms"]:
        best[kind] = step
picks = sorted(best.values(), key=lambda s: -s["time_ms"])[:5]
print("|".join(s["name"] for s in picks))
for s in picks:
    print(s["index"], s["name"], s["kind"], s["time_ms"], s["label"][:80])
