"""The conformance corpus (../shared/conformance/manifest.json) through the pure-Python log
reader and explain(): the protocol read equals the manifest's, and the explanation names every
feature of it (the listed ones plus those the legacy versions imply, digest §5.1). must_fail
tables either raise a typed DeltalogError or, when their protocol is readable, are explained
like any other table."""
from __future__ import annotations

import json

import pytest

from conftest import CONFORMANCE
from deltalog._log_reader import read_protocol_and_metadata
from deltalog.advisor import compatibility, explain
from deltalog.exceptions import DeltalogError

ENTRIES = json.loads((CONFORMANCE / "manifest.json").read_text())
TYPED_READ_ERRORS = {"DELTA_TABLE_NOT_FOUND", "DELTA_STATE_RECOVER_ERROR", "DELTA_VERSIONS_NOT_CONTIGUOUS",
                     "DELTA_MALFORMED_LOG_LINE", "DELTA_CORRUPT_LOG_FILE"}

# Digest §5.1: features implied by legacy (reader, writer) versions.
_BY_WRITER = {2: {"appendOnly", "invariants"}, 3: {"checkConstraints"}, 4: {"changeDataFeed", "generatedColumns"},
              6: {"identityColumns"}}


def implied(r: int, w: int) -> set:
    if w >= 7:
        return set()
    out = set()
    for v in range(2, w + 1):
        out |= _BY_WRITER.get(v, set())
    if w >= 5 and r >= 2:
        out.add("columnMapping")
    return out


def test_implied_sets_match_the_digest_examples():
    assert implied(1, 5) == implied(1, 4)
    assert "columnMapping" in implied(2, 5) and len(implied(2, 6)) == 7


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_corpus_table_is_explained(entry):
    path = CONFORMANCE / entry["table_path"]
    if entry["must_fail"]:
        try:
            state = read_protocol_and_metadata(path)
        except DeltalogError as e:
            assert e.errorClass in TYPED_READ_ERRORS, e
            return
    else:
        state = read_protocol_and_metadata(path)
        assert state.version == entry["version"]
    p = state.protocol
    assert (p.minReaderVersion, p.minWriterVersion) == (entry["min_reader_version"], entry["min_writer_version"])
    assert sorted(p.readerFeatureNames) == sorted(entry["reader_features"])
    assert sorted(p.writerFeatureNames) == sorted(entry["writer_features"])

    e = explain(p, state.metadata, table=str(path), version=state.version)
    expected = set(entry["reader_features"]) | set(entry["writer_features"]) | \
        implied(entry["min_reader_version"], entry["min_writer_version"])
    assert {n.lower() for n in e.featureNames} == {n.lower() for n in expected}
    text = str(e)
    for name in expected:
        assert name in text
        assert e.feature(name).reasons
    # every known reader-writer feature is reported as such, writer-only ones as writer-only
    for f in e.features:
        if f.known and f.name in entry["reader_features"]:
            assert f.kind == "reader-writer", f.name
    # compatibility never crashes and agrees with deltalog's own read check on unknown names
    report = compatibility(p)
    if p.unknownFeatureNames & p.readerFeatureNames:
        assert all(not c.latest.read.ok for c in report.clients)
