"""The ``deltalog protocol`` command: text and JSON output on corpus tables, plans, typed errors
with exit status 1, and no JVM (neither pyspark nor py4j is imported)."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from conftest import CONFORMANCE, REPO_ROOT
from deltalog.cli import main

DV_TABLE = CONFORMANCE / "delta-rs" / "table-with-domain-metadata"  # (3,7) deletionVectors, clustering, rowTracking
PLAIN = CONFORMANCE / "dat" / "basic_append" / "delta"  # (1,2)
UNIFORM = CONFORMANCE / "delta" / "table-with-icebegCompatV2Enabled"


def run(*argv: str):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_default_output_is_protocol_and_client_table():
    code, out, _ = run("protocol", str(PLAIN))
    assert code == 0
    assert "protocol 1,2" in out and "(version 1)" in out
    for client in ("delta-spark", "databricks-runtime", "delta-rs", "delta-kernel-java", "delta-kernel-rust",
                   "duckdb", "polars", "trino", "deltalog"):
        assert client in out


def test_explain_names_every_feature_of_the_protocol():
    code, out, _ = run("protocol", str(DV_TABLE), "--explain")
    assert code == 0
    for name in ("appendOnly", "clustering", "deletionVectors", "domainMetadata", "invariants", "rowTracking"):
        assert f"  {name} (" in out
    assert "delta.enableDeletionVectors = true" in out
    assert "required by rowTracking" in out
    assert "lowest protocol with the same features" in out


def test_plan_reports_who_loses_access():
    code, out, _ = run("protocol", str(PLAIN), "--plan", "delta.enableDeletionVectors=true")
    assert code == 0
    assert "1,2  ->  3,7,[deletionVectors],[appendOnly,deletionVectors,invariants]" in out
    assert "polars" in out.split("Plan:")[1] and "loses read access (missing deletionVectors)" in out


def test_add_and_drop_feature():
    code, out, _ = run("protocol", str(PLAIN), "--add-feature", "clustering")
    assert code == 0 and "features added:   clustering, domainMetadata" in out
    code, out, _ = run("protocol", str(DV_TABLE), "--drop-feature", "deletionVectors")
    assert code == 0
    assert "features removed: deletionVectors" in out and "first: set delta.enableDeletionVectors = false" in out


def test_json_output_is_one_object():
    code, out, _ = run("protocol", str(UNIFORM), "--explain", "--plan", "!delta.enableIcebergCompatV2", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["protocol"]["writerFeatures"] == ["appendOnly", "columnMapping", "icebergCompatV2", "invariants"]
    assert {f["name"] for f in doc["explanation"]["features"]} == set(doc["protocol"]["writerFeatures"])
    assert doc["plan"]["changed"] is False
    assert any("DROP FEATURE" in n or "cannot be dropped" in n for n in doc["plan"]["notes"])
    assert {c["client"] for c in doc["compatibility"]["clients"]} >= {"delta-spark", "trino"}


def test_clients_filter_and_all_versions():
    code, out, _ = run("protocol", str(DV_TABLE), "--clients", "delta-spark", "--all-versions")
    assert code == 0
    assert "trino" not in out and "2.3.0" in out and "2.0.0" in out


@pytest.mark.parametrize("argv, error_class", [
    (["protocol", "/no/such/table"], "DELTA_TABLE_NOT_FOUND"),
    (["protocol", str(DV_TABLE), "--drop-feature", "appendOnly"], "DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE"),
    (["protocol", str(PLAIN), "--plan", "delta.enableDeletionVectors"], "DELTA_INVALID_TABLE_PROPERTY_VALUE"),
    (["protocol", str(PLAIN), "--clients", "spark-classic"], "DELTALOG_UNKNOWN_CLIENT"),
    (["protocol", "s3://bucket/table"], "DELTALOG_UNSUPPORTED_PATH"),
    (["protocol", str(CONFORMANCE / "delta-kernel-rs" / "versions-not-contiguous" / "delta")],
     "DELTA_VERSIONS_NOT_CONTIGUOUS"),
])
def test_user_errors_exit_1_with_the_error_class(argv, error_class):
    code, out, err = run(*argv)
    assert code == 1 and out == ""
    assert f"[{error_class}]" in err


def test_usage_errors_exit_2():
    with pytest.raises(SystemExit) as info:
        main(["protocol", str(PLAIN), "--add-feature", "x", "--drop-feature", "y"])
    assert info.value.code == 2


def test_runs_as_a_module_without_a_jvm():
    script = ("import sys, runpy; sys.argv = ['deltalog', 'protocol', sys.argv[1], '--explain'];\n"
              "try:\n    runpy.run_module('deltalog.cli', run_name='__main__')\n"
              "except SystemExit as e:\n    code = e.code\n"
              "loaded = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]\n"
              "print('LOADED', loaded, 'CODE', code)")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "python")}
    res = subprocess.run([sys.executable, "-c", script, str(UNIFORM)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert "LOADED [] CODE 0" in res.stdout, res.stderr
    assert "icebergCompatV2" in res.stdout


def test_readme_example_is_real_output(monkeypatch):
    """The README's "Protocol advisor" example is this command's output, verbatim."""
    readme = (REPO_ROOT / "README.md").read_text()
    start = readme.index("$ deltalog protocol ../shared/conformance/dat/basic_append/delta")
    block = readme[start:readme.index("```", start)]
    command, rest = block.split("\n", 1)
    continuation, expected = rest.split("\n", 1)
    argv = (command[len("$ deltalog "):].rstrip("\\ ") + " " + continuation.strip()).split()
    argv = [a.strip("'") for a in argv]
    monkeypatch.chdir(REPO_ROOT)
    code, out, _ = run(*argv)
    assert code == 0
    assert out == expected


def _class_data_dir(tmp_path, monkeypatch):
    """A class-data cache with two archives, a recording and a note, and a file that is not ours."""
    cache = tmp_path / "class-data"
    cache.mkdir()
    for name, size in (("k1.jsa", 3_000_000), ("k2.jsa", 2_000_000), ("k3.jsa.part", 1_000_000), ("k3.seen", 25)):
        with open(cache / name, "wb") as f:
            f.truncate(size)
    (cache / "notes.txt").write_text("mine")
    monkeypatch.setenv("DELTALOG_CLASS_DATA_DIR", str(cache))
    monkeypatch.delenv("DELTALOG_CLASS_DATA_MAX_ARCHIVES", raising=False)
    return cache


def test_cache_info_lists_the_directory_archives_and_total(tmp_path, monkeypatch):
    cache = _class_data_dir(tmp_path, monkeypatch)
    code, out, _ = run("cache", "info")
    assert code == 0
    assert f"Class-data cache: {cache}\n" in out and "Keeps at most 2 archive(s)" in out
    assert "k1.jsa" in out and "k2.jsa" in out and "k3.jsa.part" in out and "notes.txt" not in out
    assert out.rstrip().endswith("Total: 6.0 MB in 4 file(s), 2 archive(s)")
    code, out, _ = run("cache", "info", "--json")
    doc = json.loads(out)
    assert doc["directory"] == str(cache) and doc["maxArchives"] == 2 and doc["totalBytes"] == 6_000_025
    assert sorted((f["name"], f["kind"]) for f in doc["files"]) == [
        ("k1.jsa", "archive"), ("k2.jsa", "archive"), ("k3.jsa.part", "recording"), ("k3.seen", "note")]


def test_cache_clear_through_the_console_script_entry_point(tmp_path, monkeypatch):
    """`deltalog cache clear` as installed (the console script's entry point, then a new process)."""
    from importlib.metadata import entry_points
    cache = _class_data_dir(tmp_path, monkeypatch)
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "deltalog"]
    assert script.value == "deltalog.cli:main"
    out = io.StringIO()
    assert script.load()(["cache", "clear"], out) == 0
    assert out.getvalue() == f"Removed 4 file(s), 6.0 MB, from {cache}\n"
    assert [p.name for p in cache.iterdir()] == ["notes.txt"]
    (cache / "k4.jsa").write_bytes(b"x" * 10)
    res = subprocess.run([sys.executable, "-m", "deltalog.cli", "cache", "clear"], capture_output=True, text=True,
                         env={**os.environ, "DELTALOG_CLASS_DATA_DIR": str(cache)}, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout == f"Removed 1 file(s), 10 bytes, from {cache}\n"
    assert [p.name for p in cache.iterdir()] == ["notes.txt"]
    code, out, _ = run("cache", "info")
    assert code == 0 and "Total: 0 bytes in 0 file(s), 0 archive(s)" in out


def test_cache_without_an_action_is_a_usage_error():
    with pytest.raises(SystemExit) as info:
        main(["cache"])
    assert info.value.code == 2
