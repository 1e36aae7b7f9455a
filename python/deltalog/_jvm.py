"""py4j plumbing: reach the engine's entry points (``io.deltalog.api``) from a SparkSession."""
from __future__ import annotations

import json
from typing import Any


def jvm(spark: Any) -> Any:
    """The py4j JVM view of a classic (non-Connect) SparkSession."""
    view = getattr(spark, "_jvm", None)
    if view is None:
        sc = getattr(spark, "sparkContext", None)
        view = getattr(sc, "_jvm", None)
    if view is None:
        raise RuntimeError("deltalog needs a classic SparkSession (Spark Connect has no py4j gateway).")
    return view


def protocol_api(spark: Any) -> Any:
    return jvm(spark).io.deltalog.api.ProtocolApi


def evaluate_protocol_cases(spark: Any, cases: list) -> list:
    """Run protocol cases (the tests/vectors format) on the JVM in one py4j call."""
    return json.loads(protocol_api(spark).evaluate(json.dumps(cases)))
