"""The client-support data (deltalog/data/client_support.json) and compatibility().

Data checks: every row has a source, names are protocol feature names, the Databricks rows
agree with the seed's "Delta Lake features and required Databricks Runtime versions" table
(parsed from the seed file itself). Verdict checks use facts from public docs and
../shared/docs/peers.md (first Delta release reading deletion vectors, Polars refusing column
mapping, delta-rs not writing identity columns, ...)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from deltalog.advisor import compatibility, load_clients
from deltalog.advisor.clients import client, parse_clients, raw_document
from deltalog.exceptions import DeltalogError
from deltalog.features import TableFeatures
from deltalog.protocol import Protocol

SEED = next((REPO_ROOT / ".." / "shared" / "seeds").resolve().glob("003_*.txt"))
REQUIRED_CLIENTS = {"delta-spark", "databricks-runtime", "delta-rs", "delta-kernel-java", "delta-kernel-rust",
                    "duckdb", "polars", "trino"}
# Feature names in client code that deltalog's registry does not carry (delta-spark 3.2's preview name).
EXTRA_NAMES = {"incommittimestamp-preview"}

DV = Protocol.fromJsonDict({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"],
                            "writerFeatures": ["appendOnly", "deletionVectors", "invariants"]})


def _known(name: str) -> bool:
    return TableFeatures.byName(name) is not None or name.lower() in EXTRA_NAMES


def test_every_required_client_is_present_with_sources():
    clients = load_clients(include_deltalog=False)
    assert REQUIRED_CLIENTS <= {c.id for c in clients}
    for c in clients:
        for row in c.versions:
            assert row.source.strip(), row.label
            assert row.certainty in ("high", "medium", "low"), row.label
            names = set(row.readerFeatures) | set(row.writerFeatures or ()) | set(row.caveats) | set(row.coverage or ())
            assert all(_known(n) for n in names), (row.label, sorted(n for n in names if not _known(n)))
            for n in row.readerFeatures:  # only reader-writer features matter for reads
                f = TableFeatures.byName(n)
                assert f is None or f.isReaderWriterFeature, (row.label, n)
            assert 1 <= row.maxReaderVersion <= 3 and 1 <= row.maxWriterVersion <= 7, row.label
        released = [r.released for r in c.versions if r.released]
        assert released == sorted(released), c.id


def test_deltalog_itself_is_listed_from_its_capabilities():
    from deltalog.protocol import ClientCapabilities
    me = client("deltalog")
    assert me.latest.readerFeatures == ClientCapabilities.deltalog().readerFeatures
    assert "deltalog" not in {c.id for c in load_clients(include_deltalog=False)}


def test_document_describes_its_semantics():
    doc = raw_document()
    assert "semantics" in doc and "coverage" in doc["semantics"]


def test_rows_without_source_are_rejected():
    with pytest.raises(DeltalogError) as info:
        parse_clients({"clients": [{"id": "x", "versions": [{"version": "1", "maxReaderVersion": 1,
                                                              "maxWriterVersion": 2, "source": ""}]}]})
    assert info.value.errorClass == "DELTALOG_INVALID_CLIENT_DATA"


def test_unknown_client_id_names_the_known_ones():
    with pytest.raises(DeltalogError) as info:
        client("spark-classic")
    assert "delta-spark" in str(info.value)


# --------------------------------------------------------------------- the seed's runtime table
SEED_LABELS = {  # seed feature label -> protocol feature names
    "CHECK constraints": ["checkConstraints"], "Change data feed": ["changeDataFeed"],
    "Generated columns": ["generatedColumns"], "Column mapping": ["columnMapping"],
    "Identity columns": ["identityColumns"], "Deletion vectors": ["deletionVectors"],
    "TimestampNTZ": ["timestampNtz"], "UniForm": ["icebergCompatV1"], "Liquid clustering": ["clustering"],
    "Row tracking": ["rowTracking"], "Type widening": ["typeWidening"], "Variant": ["variantType"],
    "Collations": ["collations"], "Protected checkpoints": ["checkpointProtection"],
    "Catalog commits": ["catalogManaged"],
}


def _seed_runtime_table():
    text = SEED.read_text()
    part = text[text.index("Delta Lake features and required Databricks Runtime versions"):
                text.index("Features by protocol version")]
    rows = {}
    lines = part.split("\n")
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        label = cells[0] if cells and cells[0] else None
        if label is None and i > 0:
            continue
        # CHECK constraints is split over two lines in the seed ("CHECK constraints |\n| All ...")
        if len(cells) == 1 and i + 1 < len(lines):
            cells = [label] + [c.strip() for c in lines[i + 1].strip().strip("|").split("|")]
        if label in SEED_LABELS and len(cells) >= 2:
            m = re.search(r"Databricks Runtime (\d+\.\d+(?: LTS)?)", cells[1])
            rows[label] = m.group(1) if m else "all"
    return rows


def test_databricks_rows_follow_the_seed_table():
    seed = _seed_runtime_table()
    assert set(seed) == set(SEED_LABELS), seed
    dbr = client("databricks-runtime")
    versions = [r.version for r in dbr.versions]
    for label, version in seed.items():
        for name in SEED_LABELS[label]:
            if version == "all":
                assert name in dbr.versions[0].writerFeatures, (label, name)
                continue
            assert version in versions, (label, version)
            i = versions.index(version)
            assert name in dbr.versions[i].writerFeatures, (label, version)
            if i > 0:
                assert name not in dbr.versions[i - 1].writerFeatures, (label, version)
    for row in dbr.versions:
        assert "seeds/003_" in row.source


# --------------------------------------------------------------------- verdicts vs public facts
def test_deletion_vectors_readable_from_delta_2_3_and_dbr_12_2():
    r = compatibility(DV)
    spark = r.client("delta-spark")
    assert spark.firstReadable == "2.3.0"  # docs.delta.io: DV SCAN first available in 2.3.0
    v22 = next(v for v in spark.versions if v.row.version == "2.0.0")
    assert v22.read.ok is False and v22.read.versionProblem  # reader 3 > 2
    assert r.client("databricks-runtime").versions[0].read.ok  # "read ... in 12.2 LTS and above"
    pa = r.client("deltalake-pyarrow").latest
    assert pa.read.ok is False and pa.read.missing == ("deletionVectors",)
    assert pa.write.applicable is False
    trino = r.client("trino").latest
    assert trino.read.ok and trino.write.ok
    assert any("deletion vectors" in c for c in trino.write.caveats)


def test_column_mapping_tables_and_old_or_limited_readers():
    cm = Protocol.of(2, 5)
    r = compatibility(cm)
    v10 = next(v for v in r.client("delta-spark").versions if v.row.version == "1.0.0")
    assert not v10.read.ok and "reader version 2 > 1" in str(v10.read)
    polars = r.client("polars").latest  # peers.md: Polars refuses every column-mapped table
    assert polars.read.ok is False and "columnMapping" in polars.read.missing
    assert r.client("delta-kernel-java").latest.read.ok


def test_timestamp_ntz_needs_delta_2_4():
    p = Protocol.of(1, 2).addFeatureSupport("timestampNtz")
    assert compatibility(p).client("delta-spark").firstReadable == "2.4.0"


def test_writer_limits_of_rust_clients():
    # peers.md: delta-rs cannot write identity columns; kernel-rs cannot write CHECK constraints
    ident = compatibility(Protocol.of(1, 6))
    w = ident.client("delta-rs").latest.write
    assert w.ok is False and "identityColumns" in w.missing
    check = compatibility(Protocol.of(1, 3))
    assert "checkConstraints" in check.client("delta-kernel-rust").latest.write.missing
    kj = check.client("delta-kernel-java").latest.write
    assert kj.ok and any(c.startswith("checkConstraints") for c in kj.caveats)


def test_unknown_reader_feature_or_version_locks_everyone_out():
    p = Protocol.fromJsonDict({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["liquid2"],
                               "writerFeatures": ["liquid2"]})
    for c in compatibility(p).clients:
        if c.latest.row.coverage is None:
            assert c.latest.read.ok is False and "liquid2" in c.latest.read.missing, c.client.id
        else:  # a runtime whose source only covers some features (Databricks may know private names)
            assert c.latest.read.ok is None and c.latest.read.unknown == ("liquid2",)
    high = Protocol.fromJsonDict({"minReaderVersion": 4, "minWriterVersion": 7, "readerFeatures": [],
                                  "writerFeatures": []})
    for c in compatibility(high).clients:
        assert c.latest.read.ok is False and "reader version 4" in c.latest.read.versionProblem


def test_features_outside_a_rows_coverage_are_unknown_not_missing():
    p = Protocol.of(1, 2).addFeatureSupport("inCommitTimestamp")  # not in the seed's runtime table
    w = compatibility(p, clients=["databricks-runtime"]).client("databricks-runtime").latest.write
    assert w.ok is None and w.unknown == ("inCommitTimestamp",) and "\u2753" in str(w)


def test_report_text_and_json():
    r = compatibility(DV, clients=["delta-spark", "polars"], all_versions=True)
    text = str(r)
    assert "delta-spark" in text and "polars" in text and "2.3.0" in text
    doc = json.loads(json.dumps(r.toJson()))
    assert [c["client"] for c in doc["clients"]] == ["delta-spark", "polars"]


def test_wheel_ships_the_data_and_the_console_script(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(REPO_ROOT / "python", src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src),
                    "-w", str(out)], check=True, capture_output=True)
    wheel = zipfile.ZipFile(next(Path(out).glob("deltalog-*.whl")))
    names = wheel.namelist()
    assert "deltalog/data/client_support.json" in names
    assert "deltalog/advisor/plan.py" in names
    entry = wheel.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "deltalog = deltalog.cli:main" in entry
