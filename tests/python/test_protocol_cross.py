"""Python and JVM protocol rules give the same answers.

* every hand-written vector, evaluated on the JVM through py4j in one batch;
* a hypothesis property test: >= 1,000 generated cases per run (random metadata, session
  defaults, protocols and operations); the Python answer must equal the JVM answer.
"""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from deltalog._jvm import evaluate_protocol_cases
from protocol_eval import evaluate, matches
from protocol_strategies import cases

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "protocol_cases.json"


def _comparable(result: dict) -> dict:
    out = {k: v for k, v in result.items() if k != "message"}
    for key in ("protocol",):
        body = out.get(key)
        if isinstance(body, dict):
            out[key] = {k: (sorted(v) if isinstance(v, list) else v) for k, v in body.items()}
    return out


def test_every_vector_passes_on_the_jvm(spark):
    all_cases = json.loads(VECTORS.read_text())["cases"]
    results = evaluate_protocol_cases(spark, all_cases)
    failures = [(c["name"], c["expected"], r) for c, r in zip(all_cases, results)
                if not matches(c["expected"], r)]
    assert not failures, failures[:5]


@settings(max_examples=1200, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_python_equals_jvm_on_generated_cases(spark, case):
    py = _comparable(evaluate(case))
    jvm = _comparable(evaluate_protocol_cases(spark, [case])[0])
    assert py == jvm, f"case {json.dumps(case)}\n python: {py}\n jvm:    {jvm}"
