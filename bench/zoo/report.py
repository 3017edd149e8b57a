"""The zoo's results table, made from a harness results file (by
fuse.harness.report, as bench/report.py makes the main README's), never by
hand.

    python3 bench/zoo/report.py                     # print the tables of bench/zoo/latest.json
    python3 bench/zoo/report.py --readme            # write them into bench/zoo/README.md
    python3 bench/zoo/report.py RESULTS.json [--readme]
    python3 bench/zoo/report.py --annotate          # write gaps.json's reasons into the rows that miss a goal

Below the tables, the goals of the zoo's issue row by row (goals.py): each
fuse-compile row that misses one, with its reason from gaps.json, or
"unexplained" where gaps.json has none.

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


def _load_goals():
    """bench/zoo/goals.py as the module `zoo_goals` (beside this file)."""
    import importlib.util
    if "zoo_goals" not in sys.modules:
        spec = importlib.util.spec_from_file_location("zoo_goals", os.path.join(HERE, "goals.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["zoo_goals"] = module
        spec.loader.exec_module(module)
    return sys.modules["zoo_goals"]


goals = _load_goals()

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
        results = json.load(f)
    return report.markdown(results) + "\n\n### Against the goals\n\n" + goals.markdown(results, goals.load_gaps())


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
    parser.add_argument("--annotate", action="store_true",
                        help="write gaps.json's reason into each fuse-compile row that misses a goal (\"gap\") "
                             "of the results file; exit 1 when a miss has no reason")
    args = parser.parse_args(argv)
    if args.results != LATEST and not os.path.exists(args.results):
        parser.error(f"no such results file: {args.results}")
    if args.annotate:
        with open(args.results) as f:
            results = json.load(f)
        gaps = goals.load_gaps()
        goals.annotate(results, gaps)
        with open(args.results, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
        left = goals.unexplained(goals.assess(results), gaps)
        print(f"annotated {args.results}" + (f"; no reason for {', '.join(left)}" if left else ""), file=sys.stderr)
        return 1 if left else 0
    text = section(args.results)
    if args.readme:
        write_readme(text)
        print(f"wrote {os.path.relpath(README)}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
