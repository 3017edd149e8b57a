"""The compile phase report (fuse.runtime._phases): FUSE_LOG=compile prints where a
graph's compile time went, and `.phases` has it as data either way."""

import fuse
from fuse.runtime import _phases

from conftest import MLP


def test_fuse_log_is_a_comma_separated_list(monkeypatch):
    monkeypatch.delenv("FUSE_LOG", raising=False)
    assert not _phases.enabled()
    monkeypatch.setenv("FUSE_LOG", "kernels, compile")
    assert _phases.enabled()
    monkeypatch.setenv("FUSE_LOG", "compiled")
    assert not _phases.enabled()


def test_the_report_lists_each_phase_with_its_note():
    text = _phases.format_report("@mlp", {"export": 1.5, "compile": 0.25, "load": 1.0},
                                 {"load": "4 modules: 3 compiled, 1 from the cache"})
    lines = text.splitlines()
    assert lines[0] == "[fuse] compile phases of @mlp: 2.75 s"
    assert lines[1].split() == ["export", "(trace", "and", "text)", "1.50", "s"]
    assert "pipeline and code generation" in lines[2] and "0.25 s" in lines[2]
    assert lines[3].endswith("4 modules: 3 compiled, 1 from the cache")
    assert _phases.describe_load({"modules": 4, "compiled": 3, "cache_hits": 1}) == \
        "4 modules: 3 compiled, 1 from the cache"
    assert _phases.describe_load(None) == ""


def test_fuse_compile_reports_its_phases_when_asked(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("FUSE_LOG", "compile")
    compiled = fuse.compile(MLP, arch="sm_90a", cache_dir=tmp_path, name="mlp")
    err = capsys.readouterr().err
    assert "[fuse] compile phases of mlp:" in err
    assert "pipeline and code generation" in err and "compiled" in err
    assert list(compiled.phases)[0] == "compile" and compiled.phases["compile"] > 0
    # libFuseC's share, part by part: parsing, every pass of the pipeline,
    # code generation; together no more than the whole compile.
    parts = dict(compiled.compile_parts)
    assert list(parts)[0] == "parse and verify" and list(parts)[-1] == "code generation"
    assert "fuse-form-fusions" in parts and "fuse-plan-memory" in parts
    assert sum(parts.values()) <= compiled.phases["compile"]
    assert "    fuse-form-fusions" in err
    # The second time the executable comes from the on-disk cache, and says so.
    again = fuse.compile(MLP, arch="sm_90a", cache_dir=tmp_path, name="mlp")
    assert again.cache_hit and "from the cache" in capsys.readouterr().err
    assert again.compile_parts == []  # nothing was compiled


def test_nothing_is_printed_without_fuse_log(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("FUSE_LOG", raising=False)
    compiled = fuse.compile(MLP, arch="sm_90a", cache_dir=tmp_path)
    assert "compile phases" not in capsys.readouterr().err
    assert compiled.phases["compile"] > 0

