"""The conformance corpus resolver (tests/conformance_corpus.py): DELTALOG_CONFORMANCE wins over
the default ../shared/conformance, and a run without the corpus stops at its start with one
message saying what is missing and how to point at it. Tested with empty temp folders, never by
moving the real corpus."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import conformance_corpus as cc

REPO_ROOT = Path(__file__).resolve().parents[2]


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text("[]")
    return folder


def test_default_is_shared_conformance_next_to_the_repository(tmp_path):
    repo = tmp_path / "clone"
    assert cc.resolve({}, repo) == (tmp_path / "shared" / "conformance").resolve()
    assert cc.resolve({cc.ENV_VAR: "  "}, repo) == (tmp_path / "shared" / "conformance").resolve()
    assert cc.resolve({}) == (REPO_ROOT / ".." / "shared" / "conformance").resolve()


def test_environment_variable_overrides_the_default(tmp_path, monkeypatch):
    other = _corpus(tmp_path / "elsewhere")
    _corpus(tmp_path / "shared" / "conformance")
    assert cc.resolve({cc.ENV_VAR: str(other)}, tmp_path / "clone") == other.resolve()
    monkeypatch.chdir(tmp_path)
    assert cc.resolve({cc.ENV_VAR: "elsewhere"}, tmp_path / "clone") == other.resolve()
    assert cc.missing({cc.ENV_VAR: str(other)}, tmp_path / "clone") is None


def test_present_corpus_has_no_message(tmp_path):
    _corpus(tmp_path / "shared" / "conformance")
    assert cc.missing({}, tmp_path / "clone") is None


def test_missing_default_corpus_says_where_and_how(tmp_path):
    msg = cc.missing({}, tmp_path / "clone")
    expected = (tmp_path / "shared" / "conformance").resolve()
    assert msg == (f"conformance corpus not found: {expected / 'manifest.json'} does not exist (looked in "
                   f"the default ../shared/conformance of the repository, {expected}). Put the corpus at "
                   f"../shared/conformance next to the repository, or set "
                   f"DELTALOG_CONFORMANCE=/path/to/conformance (the folder holding manifest.json).")


def test_missing_overridden_corpus_names_the_variable(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()  # a folder without manifest.json is no corpus
    _corpus(tmp_path / "shared" / "conformance")  # the default is not used when the variable is set
    msg = cc.missing({cc.ENV_VAR: str(empty)}, tmp_path / "clone")
    assert msg is not None
    assert f"{empty.resolve() / 'manifest.json'} does not exist (looked in DELTALOG_CONFORMANCE={empty.resolve()})" in msg


def _env_without_corpus(tmp_path) -> dict:
    return {**os.environ, cc.ENV_VAR: str(tmp_path / "no-corpus-here")}


def test_make_check_prints_the_message_and_fails(tmp_path):
    r = subprocess.run([sys.executable, str(REPO_ROOT / "tests" / "conformance_corpus.py")],
                       env=_env_without_corpus(tmp_path), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr == cc.message((tmp_path / "no-corpus-here").resolve(), True) + "\n"
    ok = subprocess.run([sys.executable, str(REPO_ROOT / "tests" / "conformance_corpus.py")],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == f"conformance corpus: {cc.CONFORMANCE}"


def test_pytest_run_without_corpus_stops_at_start_with_the_message(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pytest", "tests/python/test_conformance.py", "-q",
                        "-p", "no:cacheprovider"],
                       cwd=REPO_ROOT, env=_env_without_corpus(tmp_path), capture_output=True, text=True,
                       timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert cc.message((tmp_path / "no-corpus-here").resolve(), True) in out
    assert "DELTA_TABLE_NOT_FOUND" not in out and "passed" not in out and "error" not in out.lower(), out
