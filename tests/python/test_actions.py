"""Tests of deltalog.actions: JSON round trip, malformed lines, path encoding, DV helpers.

Run from the repository root: PYTHONPATH=python .venv/bin/python -m pytest tests/python/test_actions.py -q
"""
from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deltalog import _z85
from deltalog.actions import (
    AddCDCFile,
    AddFile,
    CheckpointMetadata,
    CommitInfo,
    DeletionVectorDescriptor,
    DomainMetadata,
    Format,
    Metadata,
    RemoveFile,
    SetTransaction,
    SidecarFile,
    UnknownAction,
    canonicalPathKey,
    decodePath,
    encodePath,
    isAbsoluteUri,
    parseAction,
    parseActions,
    serializeActions,
)
from deltalog.exceptions import ActionParseError

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "actions"


def _readText(name: str) -> str:
    return (VECTORS / name).read_text(encoding="utf-8")


def _loadJson(name: str) -> Any:
    return json.loads(_readText(name))


ROUNDTRIP_LINES: list[str] = [line for line in _readText("roundtrip.jsonl").split("\n") if line]
MALFORMED: list[dict[str, str]] = _loadJson("malformed.json")
PATHS: list[dict[str, str]] = _loadJson("paths.json")
DV_VECTORS: dict[str, Any] = _loadJson("dv.json")


# =============================================================================================
# Shared vectors


def test_vector_files_are_big_enough() -> None:
    assert len(ROUNDTRIP_LINES) >= 40
    assert len(MALFORMED) >= 20
    assert len(PATHS) >= 12
    assert len(DV_VECTORS["cases"]) >= 5


def test_roundtrip_vectors_cover_every_action_type() -> None:
    names = {next(iter(json.loads(line))) for line in ROUNDTRIP_LINES}
    assert {"add", "remove", "cdc", "metaData", "protocol", "txn", "commitInfo",
            "domainMetadata", "checkpointMetadata", "sidecar"} <= names
    assert any(isinstance(parseAction(line), UnknownAction) for line in ROUNDTRIP_LINES)


@pytest.mark.parametrize("line", ROUNDTRIP_LINES,
                         ids=[f"line{i}" for i in range(1, len(ROUNDTRIP_LINES) + 1)])
def test_roundtrip_vector(line: str) -> None:
    action = parseAction(line, "roundtrip.jsonl")
    assert action is not None
    out = action.json()
    assert json.loads(out) == json.loads(line)
    assert "\n" not in out
    again = parseAction(out)
    assert again == action
    assert again.json() == out


def test_roundtrip_whole_file_is_stable() -> None:
    text = _readText("roundtrip.jsonl")
    actions = parseActions(text, "roundtrip.jsonl")
    assert len(actions) == len(ROUNDTRIP_LINES)
    first = serializeActions(actions)
    assert first.endswith("\n")
    assert serializeActions(parseActions(first)) == first
    assert [json.loads(x) for x in first.split("\n") if x] == \
        [json.loads(x) for x in ROUNDTRIP_LINES]


def test_roundtrip_compact_vectors_are_byte_exact() -> None:
    exact = sum(parseAction(line).json() == line for line in ROUNDTRIP_LINES)
    # All but the few lines written with \u escapes or an unknown field before known ones.
    assert exact >= len(ROUNDTRIP_LINES) - 3


@pytest.mark.parametrize("case", MALFORMED, ids=[c["field"] + f"#{i}" for i, c in
                                                 enumerate(MALFORMED)])
def test_malformed_vector(case: dict[str, str]) -> None:
    lineNumber = MALFORMED.index(case) + 3
    fileName = "_delta_log/00000000000000000007.json"
    with pytest.raises(ActionParseError) as info:
        parseAction(case["line"], fileName, lineNumber)
    err = info.value
    assert err.field == case["field"]
    assert err.errorClass == "DELTA_MALFORMED_LOG_LINE"
    assert err.file == fileName and err.lineNumber == lineNumber
    assert fileName in str(err) and f"line {lineNumber}" in str(err)
    assert case["field"] in str(err)


@pytest.mark.parametrize("case", MALFORMED[:8] + MALFORMED[-8:])
def test_malformed_line_number_in_file(case: dict[str, str]) -> None:
    good = '{"txn":{"appId":"a","version":1}}'
    text = "\n".join([good, "", good, case["line"], good]) + "\n"
    with pytest.raises(ActionParseError) as info:
        parseActions(text, "00000000000000000001.json")
    assert info.value.lineNumber == 4
    assert info.value.file == "00000000000000000001.json"


@pytest.mark.parametrize("case", PATHS, ids=[repr(c["raw"]) for c in PATHS])
def test_path_vector(case: dict[str, str]) -> None:
    assert encodePath(case["raw"]) == case["encoded"]
    assert decodePath(case["encoded"]) == case["raw"]
    if not isAbsoluteUri(case["raw"]):
        assert canonicalPathKey(case["raw"].replace("%", "%25")) == case["encoded"]


@pytest.mark.parametrize("case", DV_VECTORS["cases"], ids=[c["name"] for c in DV_VECTORS["cases"]])
def test_dv_vector(case: dict[str, Any]) -> None:
    dv = DeletionVectorDescriptor.fromJsonDict(case["descriptor"])
    assert dv.uniqueId == case["uniqueId"]
    assert dv.toJsonDict() == case["descriptor"]
    if case["absolutePath"] is None:
        assert dv.isInline
        with pytest.raises(ValueError):
            dv.absolutePath(DV_VECTORS["tableRoot"])
    else:
        assert not dv.isInline
        assert dv.absolutePath(DV_VECTORS["tableRoot"]) == case["absolutePath"]
        assert dv.absolutePath(DV_VECTORS["tableRoot"] + "/") == case["absolutePath"]


# =============================================================================================
# Deletion vectors and Z85


def test_protocol_md_dv_example() -> None:
    dv = DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", 40, 6, offset=4)
    assert dv.absolutePath("s3://mytable/") == \
        "s3://mytable/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
    assert dv.uniqueId == "uab^-aqEH.-t@S}K{vb[*k^@4"
    assert DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", 40, 6).uniqueId == \
        "uab^-aqEH.-t@S}K{vb[*k^"


def test_inline_dv_data() -> None:
    dv = DeletionVectorDescriptor("i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", 40, 6)
    data = dv.inlineData()
    assert len(data) == 40
    # Legacy "native" RoaringBitmapArray magic (1681511376), as in the PROTOCOL.md example.
    assert int.from_bytes(data[:4], "big") == 1681511376


def test_dv_errors() -> None:
    with pytest.raises(ValueError):
        DeletionVectorDescriptor("u", "short", 1, 1).absolutePath("s3://b/t")
    with pytest.raises(ValueError):
        DeletionVectorDescriptor("x", "whatever", 1, 1).absolutePath("s3://b/t")
    with pytest.raises(ValueError):
        DeletionVectorDescriptor("u", "ab\"\"aqEH.-t@S}K{vb[*k^", 1, 1).absolutePath("s3://b/t")


def test_z85_spec_vector() -> None:
    data = bytes([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])
    assert _z85.encode(data) == "HelloWorld"
    assert _z85.decode("HelloWorld") == data
    with pytest.raises(ValueError):
        _z85.encode(b"abc")
    with pytest.raises(ValueError):
        _z85.decode("abcd")
    with pytest.raises(ValueError):
        _z85.decode("abc\"d")
    with pytest.raises(ValueError):
        _z85.decode("#####")  # 85^5 - 1 does not fit in 32 bits
    assert _z85.encodePadded(b"\x01") == _z85.encode(b"\x01\x00\x00\x00")


@given(st.binary(max_size=64).map(lambda b: b + b"\0" * (-len(b) % 4)))
def test_z85_roundtrip(data: bytes) -> None:
    assert _z85.decode(_z85.encode(data)) == data


@given(st.uuids())
def test_z85_uuid_roundtrip(value: uuid.UUID) -> None:
    text = _z85.encodeUuid(value)
    assert len(text) == 20 and _z85.decodeUuid(text) == value
    dv = DeletionVectorDescriptor("u", "pp" + text, 1, 1)
    assert dv.absolutePath("s3://b/t") == f"s3://b/t/pp/deletion_vector_{value}.bin"


# =============================================================================================
# Line handling


def test_empty_and_whitespace_lines_are_skipped() -> None:
    assert parseAction("") is None
    assert parseAction("   \t\r\n") is None
    text = '\n  \n{"txn":{"appId":"a","version":1}}\r\n\n{"txn":{"appId":"b","version":2}}'
    actions = parseActions(text)
    assert [a.appId for a in actions] == ["a", "b"]
    with pytest.raises(ActionParseError) as info:
        parseActions("\n\n{oops}\n", "f.json")
    assert info.value.lineNumber == 3 and info.value.field == "<line>"


def test_parse_actions_accepts_lines_and_bytes() -> None:
    lines = ['{"txn":{"appId":"a","version":1}}', "", '{"commitInfo":{"operation":"WRITE"}}']
    assert len(parseActions(lines)) == 2
    assert len(parseActions("\n".join(lines).encode("utf-8"))) == 2
    with pytest.raises(ActionParseError) as info:
        parseActions([b'{"txn":{"appId":"a","version":1}}', b"\xff\xfe"], "x.json")
    assert info.value.lineNumber == 2 and info.value.field == "<line>"


def test_unicode_line_separators_inside_strings_do_not_split_lines() -> None:
    line = '{"commitInfo":{"userMetadata":"a\\u2028b\\u0085c\\u2029d"}}'
    text = serializeActions(parseActions(line))
    assert "\u2028" in text  # written raw (ensure_ascii=False)
    actions = parseActions(text)
    assert len(actions) == 1
    assert actions[0].userMetadata == "a\u2028b\u0085c\u2029d"


def test_unknown_action_preserved() -> None:
    line = '{"futureAction":{"b":1,"a":[true,null,{"x":"ü"}]}}'
    action = parseAction(line)
    assert isinstance(action, UnknownAction)
    assert action.actionName == "futureAction"
    assert action.json() == line
    assert serializeActions([action]) == line + "\n"


def test_action_names() -> None:
    assert AddFile.actionName == "add" and RemoveFile.actionName == "remove"
    assert AddCDCFile.actionName == "cdc" and Metadata.actionName == "metaData"
    assert SetTransaction.actionName == "txn" and CommitInfo.actionName == "commitInfo"
    assert DomainMetadata.actionName == "domainMetadata"
    assert CheckpointMetadata.actionName == "checkpointMetadata"
    assert SidecarFile.actionName == "sidecar"


def test_nan_and_infinity_are_not_json() -> None:
    for bad in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(ActionParseError) as info:
            parseAction('{"commitInfo":{"x":%s}}' % bad)
        assert info.value.field == "<line>"


def test_error_from_memory_names_memory() -> None:
    with pytest.raises(ActionParseError) as info:
        parseAction('{"add":{}}')
    assert "<memory> line 1" in str(info.value)
    assert info.value.field == "add.path"


# =============================================================================================
# Field semantics


def test_lenient_defaults_are_emitted() -> None:
    add = parseAction('{"add":{"path":"a.parquet","size":1,"modificationTime":2}}')
    assert add == AddFile("a.parquet", {}, 1, 2, True)
    assert json.loads(add.json())["add"] == {"path": "a.parquet", "partitionValues": {},
                                             "size": 1, "modificationTime": 2,
                                             "dataChange": True}
    remove = parseAction('{"remove":{"path":"a.parquet"}}')
    assert remove.dataChange is True
    assert remove.json() == '{"remove":{"path":"a.parquet","dataChange":true}}'
    cdc = parseAction('{"cdc":{"path":"c.parquet","size":3}}')
    assert cdc.json() == \
        '{"cdc":{"path":"c.parquet","partitionValues":{},"size":3,"dataChange":false}}'
    meta = parseAction('{"metaData":{"id":"x","schemaString":"{}"}}')
    assert meta.format == Format() and meta.partitionColumns == [] and meta.configuration == {}
    assert meta.json() == ('{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},'
                           '"schemaString":"{}","partitionColumns":[],"configuration":{}}}')


def test_explicit_null_of_defaulted_field_round_trips() -> None:
    line = ('{"add":{"path":"a","partitionValues":null,"size":1,"modificationTime":2,'
            '"dataChange":true}}')
    add = parseAction(line)
    assert add.partitionValues == {}
    assert add.json() == line


def test_explicit_nulls_and_absent_fields() -> None:
    add = parseAction('{"add":{"path":"a","partitionValues":{"p":null},"size":1,'
                      '"modificationTime":2,"dataChange":false,"stats":null}}')
    assert add.stats is None and add.nullFields == frozenset({"stats"})
    assert '"stats":null' in add.json() and "tags" not in add.json()
    assert add.partitionValues == {"p": None}


def test_unknown_fields_kept_in_order_after_known_ones() -> None:
    add = parseAction('{"add":{"z":1,"path":"a","y":{"k":[1]},"partitionValues":{},"size":1,'
                      '"modificationTime":2,"dataChange":true}}')
    assert list(add.extra) == ["z", "y"]
    assert add.json().endswith('"dataChange":true,"z":1,"y":{"k":[1]}}}')


def test_long_range_and_bool_checks() -> None:
    base = '{"txn":{"appId":"a","version":%s}}'
    assert parseAction(base % "9223372036854775807").version == 2 ** 63 - 1
    assert parseAction(base % "-9223372036854775808").version == -(2 ** 63)
    for bad in ("9223372036854775808", "true", "1.0", '"1"', "[1]"):
        with pytest.raises(ActionParseError) as info:
            parseAction(base % bad)
        assert info.value.field == "txn.version"
    dv = ('{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":2,'
          '"deletionVector":{"storageType":"u","pathOrInlineDv":"x","sizeInBytes":2147483648,'
          '"cardinality":1}}}')
    with pytest.raises(ActionParseError) as info:
        parseAction(dv)
    assert info.value.field == "add.deletionVector.sizeInBytes"


def test_add_remove_copies_delta_spark_fields() -> None:
    dv = DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", 40, 6, offset=4)
    add = AddFile("p=1/a%20b.parquet", {"p": "1"}, 100, 5, True, stats='{"numRecords":10}',
                  tags={"INSERTION_TIME": "1"}, deletionVector=dv, baseRowId=7,
                  defaultRowCommitVersion=3, clusteringProvider="liquid",
                  extra={"future": 1})
    remove = add.remove(1234)
    assert remove == RemoveFile("p=1/a%20b.parquet", 1234, True, True, {"p": "1"}, 100,
                                '{"numRecords":10}', {"INSERTION_TIME": "1"}, dv, 7, 3)
    assert add.remove(None, dataChange=False).dataChange is False
    assert json.loads(remove.json())["remove"]["extendedFileMetadata"] is True
    remove.partitionValues["p"] = "2"
    assert add.partitionValues == {"p": "1"}


def test_commit_info_never_raises_and_keeps_raw_values() -> None:
    line = ('{"commitInfo":{"timestamp":"123","operation":42,"operationParameters":'
            '{"n":8,"s":"x","o":{"a":1},"z":null},"readVersion":true,"isBlindAppend":"yes",'
            '"job":"j","operationMetrics":"m","userId":1.5}}')
    info = parseAction(line)
    assert isinstance(info, CommitInfo)
    assert info.timestamp is None and info.operation is None and info.readVersion is None
    assert info.isBlindAppend is None and info.job is None and info.operationMetrics is None
    assert info.userId is None
    assert info.operationParameters == {"n": "8", "s": "x", "o": '{"a":1}', "z": None}
    assert info.values["timestamp"] == "123"
    assert info.extra == {}
    assert info.json() == line


def test_commit_info_typed_accessors() -> None:
    line = ROUNDTRIP_LINES[0]
    info = parseAction(line)
    assert info.timestamp == 1697587480772
    assert info.operation == "CREATE TABLE"
    assert info.isBlindAppend is True and info.isolationLevel == "Serializable"
    assert info.operationParameters["partitionBy"] == '["date"]'
    assert info.operationMetrics == {}
    built = CommitInfo.of(engineInfo="e", timestamp=1, custom={"a": 1}, operation="WRITE",
                          readVersion=None)
    assert built.json() == \
        '{"commitInfo":{"timestamp":1,"operation":"WRITE","engineInfo":"e","custom":{"a":1}}}'
    assert built.extra == {"custom": {"a": 1}}


def test_dv_unknown_nested_fields_preserved() -> None:
    add = next(a for a in map(parseAction, ROUNDTRIP_LINES)
               if isinstance(a, AddFile) and a.deletionVector is not None
               and a.deletionVector.extra)
    assert add.deletionVector.maxRowIndex == 41
    assert "futureDvField" in add.deletionVector.extra
    assert '"futureDvField":{"codec":"zstd","level":3}' in add.json()


def test_struct_from_json_dict_errors() -> None:
    with pytest.raises(ActionParseError) as info:
        DeletionVectorDescriptor.fromJsonDict({"storageType": "u"})
    assert info.value.field == "deletionVector.pathOrInlineDv"
    with pytest.raises(ActionParseError) as info:
        AddFile.fromJsonDict({"path": 1})
    assert info.value.field == "add.path"


# =============================================================================================
# Protocol (implemented in deltalog.protocol, parsed through deltalog.actions)


def test_protocol_reexport_and_roundtrip() -> None:
    from deltalog.actions import Protocol
    from deltalog import protocol as protocolModule
    assert Protocol is protocolModule.Protocol
    line = ('{"protocol":{"minReaderVersion":3,"minWriterVersion":7,'
            '"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}')
    action = parseAction(line)
    assert isinstance(action, Protocol)
    assert action.minReaderVersion == 3 and action.writerFeatures == frozenset({"deletionVectors"})
    assert serializeActions([action]) == line + "\n"


def test_protocol_error_gets_file_and_line() -> None:
    with pytest.raises(ActionParseError) as info:
        parseActions('{"txn":{"appId":"a","version":1}}\n{"protocol":{"minReaderVersion":1}}',
                     "00000000000000000000.json")
    err = info.value
    assert (err.file, err.lineNumber, err.field) == \
        ("00000000000000000000.json", 2, "protocol.minWriterVersion")
    with pytest.raises(ActionParseError) as info:
        parseAction('{"protocol":[1,2]}', "f.json", 9)
    assert info.value.field == "protocol" and info.value.lineNumber == 9


def test_attribute_error_for_unknown_module_attribute() -> None:
    import deltalog.actions as actionsModule
    with pytest.raises(AttributeError):
        getattr(actionsModule, "NoSuchThing")


# =============================================================================================
# Paths


def test_decode_path_rejects_malformed_escapes() -> None:
    for bad in ("%G1", "a%2", "abc%", "%%", "%FF", "%C3"):
        with pytest.raises(ValueError):
            decodePath(bad)
    assert decodePath("%c3%bc") == "ü"  # lowercase hex is accepted on input


def test_canonical_path_key() -> None:
    assert canonicalPathKey("a%20b.parquet") == canonicalPathKey("a b.parquet") == "a%20b.parquet"
    assert canonicalPathKey("city=Z%C3%BCrich/x") == canonicalPathKey("city=Zürich/x")
    assert canonicalPathKey("a%3ab") == canonicalPathKey("a:b") == "a%3Ab"
    assert canonicalPathKey("100%.parquet") == "100%25.parquet"  # malformed escape: literal
    assert canonicalPathKey("s3://b/a%20b") == "s3://b/a%20b"
    assert canonicalPathKey("s3://b/a b") == "s3://b/a b"
    # A relative path that decodes to something scheme-like stays relative.
    assert canonicalPathKey("x%3A/y") == canonicalPathKey("x:/y".replace(":", "%3A")) == "x%3A/y"
    assert canonicalPathKey("ts=17%253A01/f") == "ts=17%253A01/f"


_rawText = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@given(_rawText)
def test_path_encoding_roundtrip(raw: str) -> None:
    encoded = encodePath(raw)
    assert decodePath(encoded) == raw or isAbsoluteUri(raw)
    if not isAbsoluteUri(raw):
        assert not isAbsoluteUri(encoded)
        assert encodePath(decodePath(encoded)) == encoded
        assert canonicalPathKey(encoded) == encoded == canonicalPathKey(raw.replace("%", "%25"))
        assert all(not ch.isspace() for ch in encoded)


# =============================================================================================
# Hypothesis round trip of generated actions

_LONG = st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1)
_INT = st.integers(min_value=-(2 ** 31), max_value=2 ** 31 - 1)
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)
_STRING_MAP = st.dictionaries(_TEXT, _TEXT, max_size=4)
_JSON_VALUE = st.recursive(
    st.none() | st.booleans() | _LONG
    | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(_TEXT, children, max_size=3),
    max_leaves=8,
)


def _extra(known: set[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(_TEXT.filter(lambda k: k not in known), _JSON_VALUE, max_size=3)


def _optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Optional[Any]]:
    return st.none() | strategy


@st.composite
def _nullFields(draw: Any, obj: Any, optionalNames: list[str]) -> Any:
    import dataclasses
    candidates = [n for n in optionalNames if getattr(obj, n) is None]
    chosen = draw(st.sets(st.sampled_from(candidates), max_size=len(candidates))) \
        if candidates else set()
    return dataclasses.replace(obj, nullFields=frozenset(chosen))


_DV = st.builds(
    DeletionVectorDescriptor,
    storageType=st.sampled_from(["u", "i", "p"]),
    pathOrInlineDv=_TEXT,
    sizeInBytes=_INT,
    cardinality=_LONG,
    offset=_optional(_INT),
    maxRowIndex=_optional(_LONG),
    extra=_extra({"storageType", "pathOrInlineDv", "offset", "sizeInBytes", "cardinality",
                  "maxRowIndex"}),
)
_PATH = st.one_of(_TEXT, _TEXT.map(encodePath), _TEXT.map(lambda t: "s3://bucket/" + t))
_PARTITIONS = st.dictionaries(_TEXT, _optional(_TEXT), max_size=4)

_ADD = st.builds(
    AddFile,
    path=_PATH, partitionValues=_PARTITIONS, size=_LONG, modificationTime=_LONG,
    dataChange=st.booleans(), stats=_optional(_TEXT), tags=_optional(_STRING_MAP),
    deletionVector=_optional(_DV), baseRowId=_optional(_LONG),
    defaultRowCommitVersion=_optional(_LONG), clusteringProvider=_optional(_TEXT),
    extra=_extra({f.name for f in AddFile._SPECS}),
).flatmap(lambda a: _nullFields(a, ["stats", "tags", "deletionVector", "baseRowId",
                                    "defaultRowCommitVersion", "clusteringProvider"]))

_REMOVE = st.builds(
    RemoveFile,
    path=_PATH, deletionTimestamp=_optional(_LONG), dataChange=st.booleans(),
    extendedFileMetadata=_optional(st.booleans()), partitionValues=_optional(_PARTITIONS),
    size=_optional(_LONG), stats=_optional(_TEXT), tags=_optional(_STRING_MAP),
    deletionVector=_optional(_DV), baseRowId=_optional(_LONG),
    defaultRowCommitVersion=_optional(_LONG),
    extra=_extra({f.name for f in RemoveFile._SPECS}),
).flatmap(lambda r: _nullFields(r, ["deletionTimestamp", "extendedFileMetadata",
                                    "partitionValues", "size", "stats", "tags",
                                    "deletionVector", "baseRowId", "defaultRowCommitVersion"]))

_METADATA = st.builds(
    Metadata,
    id=st.uuids().map(str) | _TEXT, schemaString=_TEXT, name=_optional(_TEXT),
    description=_optional(_TEXT),
    format=st.builds(Format, provider=_TEXT, options=_STRING_MAP,
                     extra=_extra({"provider", "options"})),
    partitionColumns=st.lists(_TEXT, max_size=3), configuration=_STRING_MAP,
    createdTime=_optional(_LONG), extra=_extra({f.name for f in Metadata._SPECS}),
).flatmap(lambda m: _nullFields(m, ["name", "description", "createdTime"]))

_OTHERS = st.one_of(
    st.builds(AddCDCFile, path=_PATH, partitionValues=_PARTITIONS, size=_LONG,
              dataChange=st.booleans(), tags=_optional(_STRING_MAP),
              extra=_extra({f.name for f in AddCDCFile._SPECS})),
    st.builds(SetTransaction, appId=_TEXT, version=_LONG, lastUpdated=_optional(_LONG),
              extra=_extra({"appId", "version", "lastUpdated"})),
    st.builds(DomainMetadata, domain=_TEXT, configuration=_TEXT, removed=st.booleans(),
              extra=_extra({"domain", "configuration", "removed"})),
    st.builds(CheckpointMetadata, version=_LONG, tags=_optional(_STRING_MAP),
              extra=_extra({"version", "tags"})),
    st.builds(SidecarFile, path=_PATH, sizeInBytes=_LONG, modificationTime=_LONG,
              tags=_optional(_STRING_MAP),
              extra=_extra({"path", "sizeInBytes", "modificationTime", "tags"})),
    st.builds(CommitInfo, st.dictionaries(_TEXT, _JSON_VALUE, max_size=5)),
    st.builds(UnknownAction, _TEXT.filter(lambda n: n not in {
        "add", "remove", "cdc", "metaData", "protocol", "txn", "commitInfo", "domainMetadata",
        "checkpointMetadata", "sidecar"}), _JSON_VALUE),
)

_SETTINGS = settings(max_examples=int(os.environ.get("DELTALOG_HYPOTHESIS_EXAMPLES", "150")),
                     suppress_health_check=[HealthCheck.too_slow], deadline=None)


@_SETTINGS
@given(st.one_of(_ADD, _REMOVE, _METADATA, _OTHERS))
def test_generated_action_roundtrip(action: Any) -> None:
    line = action.json()
    parsed = parseAction(line, "gen.json", 1)
    assert parsed == action
    assert parsed.json() == line


@_SETTINGS
@given(st.lists(st.one_of(_ADD, _REMOVE, _METADATA, _OTHERS), max_size=6))
def test_generated_file_roundtrip(actions: list[Any]) -> None:
    text = serializeActions(actions)
    assert text.count("\n") == len(actions)
    assert parseActions(text) == actions
