"""The protocol of every table in the conformance corpus (../shared/conformance/manifest.json)
parses into the protocol model, and deltalog's read check accepts exactly the tables a correct
reader must read (must_fail tables with an unsupported reader feature or version are refused,
naming what is unsupported)."""
from __future__ import annotations

import json

import pytest

from deltalog.exceptions import UnsupportedTableFeatureError
from deltalog.features import TableFeatures
from deltalog.protocol import Protocol

from conformance_corpus import CONFORMANCE

MANIFEST = CONFORMANCE / "manifest.json"
ENTRIES = [e for e in json.loads(MANIFEST.read_text()) if e["min_reader_version"] is not None]
# Names found in real logs that are not Delta table features (writer bugs, private previews).
FOREIGN_NAMES = {"catalogOwned", "liquid", "blahabl"}


def _protocol(e: dict) -> Protocol:
    r, w = e["min_reader_version"], e["min_writer_version"]
    return Protocol.fromJsonDict({
        "minReaderVersion": r, "minWriterVersion": w,
        **({"readerFeatures": e["reader_features"]} if r >= 3 else {}),
        **({"writerFeatures": e["writer_features"]} if w >= 7 else {})})


def _protocolFailure(e: dict) -> bool:
    reason = (e.get("fail_reason") or "").lower()
    return e["must_fail"] and "reader" in reason and ("feature" in reason or "version" in reason)


def test_corpus_has_tables():
    assert len(ENTRIES) > 200


def test_every_feature_name_in_the_corpus_is_known_or_foreign():
    names = {n for e in ENTRIES for n in e["reader_features"] + e["writer_features"]}
    unknown = {n for n in names if TableFeatures.byName(n) is None}
    assert unknown <= FOREIGN_NAMES, unknown - FOREIGN_NAMES


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_corpus_protocol_read_check(entry):
    p = _protocol(entry)
    if _protocolFailure(entry):
        with pytest.raises(UnsupportedTableFeatureError) as info:
            p.checkCanRead(table=entry["table_path"])
        assert info.value.errorClass == "DELTA_UNSUPPORTED_FEATURES_FOR_READ"
        assert entry["table_path"] in str(info.value)
        foreign = sorted(set(entry["reader_features"]) & FOREIGN_NAMES)
        assert info.value.unsupportedFeatures == foreign or p.minReaderVersion > 3
    else:
        p.checkCanRead(table=entry["table_path"])
