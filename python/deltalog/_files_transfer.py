"""Reads the live-file transfer the JVM writes with ``io.deltalog.api.FilesTransfer``.

The file holds each batch's columns as raw Arrow buffers (64-byte aligned) plus a JSON footer
naming them; the arrays are built over a memory map of the file, so no byte is copied on this side.
The schema is the one of the Arrow IPC path (``FilesArrow.addSchema`` on the JVM); columns the
format leaves out (tags, deletion vectors, row tracking, clustering provider) are all null.
"""
from __future__ import annotations

import json
import struct
from typing import Any, Dict, List, Optional

MAGIC = b"DLFILES1"


def add_schema() -> Any:
    import pyarrow as pa
    string_map = pa.map_(pa.string(), pa.string())
    dv = pa.struct([
        pa.field("storageType", pa.string()), pa.field("pathOrInlineDv", pa.string()),
        pa.field("offset", pa.int32()), pa.field("sizeInBytes", pa.int32()),
        pa.field("cardinality", pa.int64()), pa.field("maxRowIndex", pa.int64())])
    return pa.schema([
        pa.field("path", pa.string(), nullable=False),
        pa.field("partitionValues", string_map),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("modificationTime", pa.int64(), nullable=False),
        pa.field("dataChange", pa.bool_(), nullable=False),
        pa.field("stats", pa.string()),
        pa.field("tags", string_map),
        pa.field("deletionVector", dv),
        pa.field("baseRowId", pa.int64()),
        pa.field("defaultRowCommitVersion", pa.int64()),
        pa.field("clusteringProvider", pa.string()),
    ])


def read_files_transfer(path: str) -> Any:
    """The pyarrow Table of a transfer file (memory-mapped; the file may be unlinked afterwards)."""
    import pyarrow as pa
    whole = pa.memory_map(path).read_buffer()
    size = whole.size
    if size < 12 or whole.slice(size - 8, 8).to_pybytes() != MAGIC:
        raise ValueError(f"{path} is not a deltalog live-file transfer")
    (footer_len,) = struct.unpack("<i", whole.slice(size - 12, 4).to_pybytes())
    footer = json.loads(whole.slice(size - 12 - footer_len, footer_len).to_pybytes())
    schema = add_schema()
    batches = [_batch(whole, b, schema) for b in footer["batches"]]
    return pa.Table.from_batches(batches, schema=schema)


def _batch(whole: Any, entry: Dict[str, Any], schema: Any) -> Any:
    import pyarrow as pa
    n = entry["rows"]
    refs: Dict[str, List[int]] = entry["buffers"]

    def buf(name: str) -> Optional[Any]:
        ref = refs.get(name)
        return None if ref is None else whole.slice(ref[0], ref[1])

    def utf8(name: str, length: int) -> Any:
        return pa.Array.from_buffers(pa.string(), length, [buf(name + ".validity"), buf(name + ".offsets"),
                                                            buf(name + ".data")])

    map_type = schema.field("partitionValues").type
    offsets = buf("partitionValues.offsets")
    entries = struct.unpack_from("<i", offsets, 4 * n)[0] if n > 0 else 0
    if entries > 0:
        keys, values = utf8("partitionValues.key", entries), utf8("partitionValues.value", entries)
    else:
        keys, values = pa.array([], pa.string()), pa.array([], pa.string())
    pairs = pa.StructArray.from_arrays([keys, values], fields=[map_type.key_field, map_type.item_field])
    pv = pa.Array.from_buffers(map_type, n, [buf("partitionValues.validity"), offsets], children=[pairs])
    columns = [
        utf8("path", n),
        pv,
        pa.Array.from_buffers(pa.int64(), n, [None, buf("size")]),
        pa.Array.from_buffers(pa.int64(), n, [None, buf("modificationTime")]),
        pa.Array.from_buffers(pa.bool_(), n, [None, buf("dataChange")]),
        utf8("stats", n),
    ]
    columns += [pa.nulls(n, schema.field(name).type) for name in
                ("tags", "deletionVector", "baseRowId", "defaultRowCommitVersion", "clusteringProvider")]
    return pa.RecordBatch.from_arrays(columns, schema=schema)
