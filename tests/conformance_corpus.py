"""Where the conformance corpus is: the one resolver of the Python tests and of `make`'s check.

The corpus (``manifest.json`` and the tables it lists) is ``../shared/conformance`` next to the
repository, unless ``DELTALOG_CONFORMANCE=/path`` names another copy (a relative path is taken from
the working directory). The JVM suites resolve it the same way (``io.deltalog.ConformanceCorpus``).

``python tests/conformance_corpus.py`` prints the path and exits 0, or prints the one message
saying what is missing and how to point at it and exits 1 (``make test`` runs it first).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping, Optional

ENV_VAR = "DELTALOG_CONFORMANCE"
DEFAULT_RELATIVE = "../shared/conformance"
REPO_ROOT = Path(__file__).resolve().parent.parent


def resolve(environ: Optional[Mapping[str, str]] = None, repo_root: Path = REPO_ROOT) -> Path:
    """The corpus folder: ``$DELTALOG_CONFORMANCE`` when set (non-empty), else
    ``<repo_root>/../shared/conformance``. Whether it exists is :func:`missing`'s question."""
    env = os.environ if environ is None else environ
    override = env.get(ENV_VAR, "").strip()
    if override:
        return Path(override).expanduser().resolve()
    return (repo_root / DEFAULT_RELATIVE).resolve()


def message(path: Path, from_env: bool) -> str:
    """The one message of a run without its corpus (the JVM suites say the same)."""
    where = f"{ENV_VAR}={path}" if from_env else f"the default {DEFAULT_RELATIVE} of the repository, {path}"
    return (f"conformance corpus not found: {path / 'manifest.json'} does not exist (looked in {where}). "
            f"Put the corpus at {DEFAULT_RELATIVE} next to the repository, or set "
            f"{ENV_VAR}=/path/to/conformance (the folder holding manifest.json).")


def missing(environ: Optional[Mapping[str, str]] = None, repo_root: Path = REPO_ROOT) -> Optional[str]:
    """None when the corpus is there (its ``manifest.json`` is a file), else :func:`message`."""
    env = os.environ if environ is None else environ
    path = resolve(env, repo_root)
    if (path / "manifest.json").is_file():
        return None
    return message(path, bool(env.get(ENV_VAR, "").strip()))


CONFORMANCE = resolve()


def main() -> int:
    problem = missing()
    if problem:
        print(problem, file=sys.stderr)
        return 1
    print(f"conformance corpus: {CONFORMANCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
