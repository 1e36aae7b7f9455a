"""Hostile input for the pure-Python log reader (``deltalog protocol``, the advisor): the logs of
corpus tables of every checkpoint kind are copied and one file is damaged at random (cut short,
emptied, deleted, bytes overwritten); ``read_protocol_and_metadata`` must then answer or raise a
``DeltalogError`` naming the table — never a bare ``json``/``pyarrow``/``KeyError``/``TypeError``.
A damaged commit older than the newest checkpoint is never read: the answer must not change.
The JVM engine has the same test over the same tables (``HostileLogSuite``)."""
from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path

import pytest

from deltalog._log_reader import read_protocol_and_metadata
from deltalog.exceptions import DeltalogError

from conformance_corpus import CONFORMANCE as CORPUS

TABLES = [
    "delta-rs/simple_table_with_checkpoint",
    "delta/basic-with-checkpoint",
    "delta-kernel-rs/multi-part-checkpoint",
    "delta-kernel-rs/v2-checkpoint-parquet",
    "delta-kernel-rs/v2-classic-checkpoint-json",
    "delta-kernel-rs/dv-partitioned-with-checkpoint",
    "delta-kernel-rs/parsed-stats",
    "delta-kernel-rs/app-txn-checkpoint",
    "delta-kernel-rs/v2-parquet-sidecars-struct-stats-only",
    "delta/kernel-pagination-multi-part-checkpoints",
    "delta-rs/checkpoint_with_partitions",
    "delta/delta-0.1.0",
    "delta-kernel-rs/with_checkpoint_no_last_checkpoint",
]
ROUNDS = int(os.environ.get("DELTALOG_TEST_HOSTILE_ROUNDS", "40"))
SEED = int(os.environ.get("DELTALOG_TEST_HOSTILE_SEED", "20261127"))
COMMIT = re.compile(r"^(\d{20})\.json$")
CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint\b")


def _table_paths():
    entries = json.loads((CORPUS / "manifest.json").read_text())
    return {e["id"]: CORPUS / e["table_path"] for e in entries}


def _damage(f: Path, rnd: random.Random) -> str:
    data = bytearray(f.read_bytes())
    kind = rnd.randrange(4)
    if kind == 0:
        n = rnd.randrange(len(data)) if data else 0
        f.write_bytes(bytes(data[:n]))
        return f"cut to {n} of {len(data)} bytes"
    if kind == 1:
        f.unlink()
        return "deleted"
    if kind == 2 and data:
        at = sorted(rnd.randrange(len(data)) for _ in range(1 + rnd.randrange(4)))
        for i in at:
            data[i] = rnd.randrange(256)
        f.write_bytes(bytes(data))
        return f"bytes at {at} overwritten"
    if kind == 3 and data:
        start = rnd.randrange(len(data))
        n = min(len(data) - start, 1 + rnd.randrange(64))
        data[start:start + n] = bytes(rnd.randrange(256) for _ in range(n))
        f.write_bytes(bytes(data))
        return f"{n} bytes from {start} overwritten"
    f.write_bytes(b"")
    return "emptied"


def _answer(state):
    return (state.version, state.protocol, state.metadata.id, state.metadata.schemaString)


@pytest.mark.parametrize("table_id", TABLES)
def test_damaged_log_answers_or_raises_a_typed_error(tmp_path, table_id):
    source = _table_paths()[table_id]
    baseline = _answer(read_protocol_and_metadata(source))
    names = sorted(os.listdir(source / "_delta_log"))
    newest_checkpoint = max((int(m.group(1)) for m in map(CHECKPOINT.match, names) if m), default=-1)
    rnd = random.Random(f"{SEED}/{table_id}")
    problems, unused_rounds = [], 0
    for round_ in range(ROUNDS):
        table = tmp_path / f"t{round_}"
        shutil.copytree(source / "_delta_log", table / "_delta_log")
        files = sorted(p for p in (table / "_delta_log").rglob("*") if p.is_file())
        f = rnd.choice(files)
        what = _damage(f, rnd)
        m = COMMIT.match(f.name)
        unused = f.parent.name == "_delta_log" and m is not None and int(m.group(1)) < newest_checkpoint
        unused_rounds += unused
        context = f"round {round_}, {f.relative_to(table)} {what}"
        try:
            answer = _answer(read_protocol_and_metadata(table))
            if unused and answer != baseline:
                problems.append(f"{context}: a commit older than the checkpoint changed the answer")
        except DeltalogError as e:
            if unused:
                problems.append(f"{context}: a commit older than the checkpoint made it fail: {e}")
            elif str(table) not in str(e):
                problems.append(f"{context}: {type(e).__name__} does not name the table: {e}")
        except Exception as e:  # noqa: BLE001 - the point of the test
            problems.append(f"{context}: untyped {type(e).__name__}: {e}")
        shutil.rmtree(table)
    assert not problems, "\n".join(problems)
    if newest_checkpoint > 0 and any(int(m.group(1)) < newest_checkpoint for m in map(COMMIT.match, names) if m):
        assert unused_rounds > 0 or ROUNDS < 10, "no round damaged a commit older than the checkpoint"


def test_checkpoint_string_that_is_not_utf8_is_a_corrupt_file(tmp_path):
    # found by the random rounds above: pyarrow reads invalid UTF-8 without complaint and only
    # its conversion to Python raised (a bare UnicodeDecodeError)
    from deltalog.exceptions import CorruptLogFileError
    source = _table_paths()["delta-rs/simple_table_with_checkpoint"]  # uncompressed: values verbatim
    table_id = read_protocol_and_metadata(source).metadata.id.encode()
    shutil.copytree(source / "_delta_log", tmp_path / "_delta_log")
    cp = next((tmp_path / "_delta_log").glob("*.checkpoint.parquet"))
    data = cp.read_bytes()
    assert table_id in data
    cp.write_bytes(data.replace(table_id, b"\xff" + table_id[1:]))  # the value and its statistics
    with pytest.raises(CorruptLogFileError) as info:
        read_protocol_and_metadata(tmp_path)
    assert cp.name in str(info.value) and "UTF-8" in str(info.value)
