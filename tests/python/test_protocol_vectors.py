"""Runs tests/vectors/protocol_cases.json against the pure-Python protocol rules."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocol_eval import evaluate, matches

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "protocol_cases.json"
CASES = json.loads(VECTORS.read_text())["cases"]


def test_vector_file_is_substantial():
    assert len(CASES) >= 60
    assert len({c["name"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_protocol_vector(case):
    result = evaluate(case)
    assert matches(case["expected"], result), f"expected {case['expected']}, got {result}"
