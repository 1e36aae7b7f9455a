"""Shared fixtures: one SparkSession for the whole run (sessions cost 10-15 s to start)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance_corpus import CONFORMANCE, missing as _corpus_missing

REPO_ROOT = Path(__file__).resolve().parent.parent
VECTORS = REPO_ROOT / "tests" / "vectors"


def pytest_configure(config):
    """Without the conformance corpus (``../shared/conformance``, or ``DELTALOG_CONFORMANCE``) the
    run stops here, before collection, with one message (exit status 4) instead of dozens of tests
    failing on tables that are not there."""
    problem = _corpus_missing()
    if problem:
        pytest.exit(problem, returncode=pytest.ExitCode.USAGE_ERROR)


@pytest.fixture(scope="session")
def spark():
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog

    builder = (SparkSession.builder.master("local[2]").appName("deltalog-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1"))
    # DELTALOG_JAR lets side-by-side builds (mvn -Dbuild.dir=...) test their own jar.
    session = configure_spark_with_deltalog(builder, jar_path=os.environ.get("DELTALOG_JAR")).getOrCreate()
    yield session
    session.stop()


def java_error_classes(e) -> list:
    """Class names (each class and its superclasses) along the Java cause chain of a py4j / Spark
    error, so a test can find a typed deltalog exception wrapped in Spark's errors."""
    j = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
    names = []
    while j is not None:
        cls = j.getClass()
        while cls is not None:
            names.append(str(cls.getName()))
            cls = cls.getSuperclass()
        j = j.getCause()
    return names


@pytest.fixture(scope="session")
def delta_spark():
    """delta-spark 4.4 in a separate Spark process (integration/peers.py), shared by the run."""
    import sys
    sys.path.insert(0, str(REPO_ROOT / "integration"))
    from peers import SparkPeer
    with SparkPeer("delta-spark") as peer:
        yield peer
