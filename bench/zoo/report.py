"""The zoo's results table, made from a harness results file (by
fuse.harness.report, as bench/report.py makes the main README's), never by
hand.

    python3 bench/zoo/report.py                     # print the tables of bench/zoo/latest.json
    python3 bench/zoo/report.py --readme            # write them into bench/zoo/README.md
    python3 bench/zoo/report.py RESULTS.json [--readme]

Until a GPU run has written bench/zoo/latest.json the section says the
results are pending.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from fuse.harness import report  # noqa: E402

README = os.path.join(HERE, "README.md")
LATEST = os.path.join(HERE, "latest.json")
BEGIN = "<!-- results: made by `python3 bench/zoo/report.py --readme`; edits between these lines are lost -->"
END = "<!-- end of results -->"


def section(path):
    """The README's results section for the results file `path`."""
    if not os.path.exists(path):
        return ("Results pending: no GPU run has written `bench/zoo/latest.json` yet. The first full run "
                "(`python3 bench/zoo/run.py` on the GPU machine) writes it, and "
                "`python3 bench/zoo/report.py --readme` puts its tables here.")
    with open(path) as f:
        return report.markdown(json.load(f))


def write_readme(text, readme=README):
    with open(readme) as f:
        content = f.read()
    if BEGIN not in content or END not in content:
        sys.exit(f"{readme} has no results markers (the lines {BEGIN!r} and {END!r})")
    head, rest = content.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as f:
        f.write(f"{head}{BEGIN}\n\n{text}\n\n{END}{tail}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench/zoo/report.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", default=LATEST, help="a results JSON (default bench/zoo/latest.json)")
    parser.add_argument("--readme", action="store_true", help="write the tables into bench/zoo/README.md")
    args = parser.parse_args(argv)
    if args.results != LATEST and not os.path.exists(args.results):
        parser.error(f"no such results file: {args.results}")
    text = section(args.results)
    if args.readme:
        write_readme(text)
        print(f"wrote {os.path.relpath(README)}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
