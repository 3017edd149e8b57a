"""bench/zoo/goals.py: the zoo's goals checked row by row against a
results file, with the reasons of bench/zoo/gaps.json, and the committed
results explained wherever they miss one."""

import importlib.util
import json

from conftest import ROOT


def _goals():
    spec = importlib.util.spec_from_file_location("zoo_goals_test", ROOT / "bench" / "zoo" / "goals.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(model, mode, system, ms, cold=None, error=None):
    return {"model": model, "mode": mode, "system": system, "ms": ms, "compile_cold_s": cold, "error": error}


RESULTS = {"rows": [
    _row("a", "train", "inductor-reduce-overhead", 10.0), _row("a", "train", "fuse-compile", 8.0, cold=4.0),
    _row("b", "train", "inductor-reduce-overhead", 10.0), _row("b", "train", "fuse-compile", 12.5, cold=12.0),
    _row("c", "infer", "inductor-reduce-overhead", 2.0), _row("c", "infer", "fuse-compile", None,
                                                               error="ExportError: sort"),
]}
GAPS = {"median": "why the median", "compile": "why compiles are slow", "rows": {"b train": "why b is slow"}}


def test_each_row_says_which_goals_it_misses():
    goals = _goals()
    assessed = {a["key"]: a for a in goals.assess(RESULTS)}
    assert assessed["a train"]["ratio"] == 1.25 and assessed["a train"]["misses"] == []
    assert assessed["b train"]["misses"] == ["0.80x", "cold compile 12 s"]
    assert assessed["c infer"]["ratio"] is None and assessed["c infer"]["misses"] == ["failed"]
    assert goals.median_ratio(list(assessed.values())) == (0.8 + 1.25) / 2


def test_a_miss_without_a_reason_is_unexplained_and_annotated_so():
    goals = _goals()
    results = json.loads(json.dumps(RESULTS))
    assert goals.unexplained(goals.assess(results), GAPS) == ["c infer"]
    goals.annotate(results, GAPS)
    gap = {f"{r['model']} {r['mode']}": r.get("gap") for r in results["rows"] if r["system"] == "fuse-compile"}
    assert gap["a train"] is None
    assert gap["b train"] == {"misses": ["0.80x", "cold compile 12 s"],
                              "why": "why b is slow Compile: why compiles are slow"}
    assert gap["c infer"]["why"] == "unexplained"
    assert results["gaps"]["median_why"] == "why the median"
    text = goals.markdown(results, GAPS)
    assert "| c infer | failed | **unexplained**" in text and "| b train | 0.80x | why b is slow |" in text


def test_the_committed_zoo_results_explain_every_miss():
    # A new run that misses a goal somewhere new needs its reason in
    # bench/zoo/gaps.json (then `bench/zoo/report.py --annotate`).
    goals = _goals()
    results = json.loads((ROOT / "bench" / "zoo" / "latest.json").read_text())
    assert goals.unexplained(goals.assess(results), goals.load_gaps()) == []
    for row in results["rows"]:
        if row["system"] == "fuse-compile" and row.get("gap"):
            assert row["gap"]["why"] != "unexplained"
