"""The README tables of a harness results file (bench/run.py,
python -m fuse.compare).

    python3 bench/report.py bench/results/latest.json
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from fuse.harness import report  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: python3 bench/report.py RESULTS.json")
    with open(sys.argv[1]) as f:
        print(report.markdown(json.load(f)))
