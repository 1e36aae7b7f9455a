"""Reads the live-file transfer the JVM writes with ``io.deltalog.api.FilesTransfer``.

The file holds each batch's columns as raw Arrow buffers (64-byte aligned) plus a JSON footer
naming them; the arrays are built over a memory map of the file, so no byte is copied on this side.
The schema is the one of the Arrow IPC path (``FilesArrow.addSchema`` on the JVM); columns the
format leaves out (tags, deletion vectors, row tracking, clustering provider) are all null.
"""
from __future__ import annotations

import atexit
import json
import mmap
import os
import re
import struct
import tempfile
import threading
import weakref
from typing import Any, Dict, List, Optional, Tuple

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
    return read_mapped(path)[0]


def read_mapped(path: str) -> Tuple[Any, mmap.mmap]:
    """The table of a transfer file and the memory map its buffers point into (it stays mapped,
    and the map object alive, as long as any of the table's buffers is)."""
    import pyarrow as pa
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    whole = pa.py_buffer(mapped)
    size = whole.size
    if size < 12 or whole.slice(size - 8, 8).to_pybytes() != MAGIC:
        raise ValueError(f"{path} is not a deltalog live-file transfer")
    (footer_len,) = struct.unpack("<i", whole.slice(size - 12, 4).to_pybytes())
    footer = json.loads(whole.slice(size - 12 - footer_len, footer_len).to_pybytes())
    schema = add_schema()
    batches = [_batch(whole, b, schema) for b in footer["batches"]]
    return pa.Table.from_batches(batches, schema=schema), mapped


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
        # (not pa.array([]): converting a Python list loads pyarrow's pandas shim, ~4 ms the first time)
        keys, values = pa.nulls(0, pa.string()), pa.nulls(0, pa.string())
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


class TransferFiles:
    """Transfer files kept for reuse: a file is written again only once no table maps it any more.

    On tmpfs (``/dev/shm``), most of a large transfer's cost is the kernel allocating fresh pages
    for a new file (and freeing them when the table goes); overwriting the pages of an existing
    file costs about half, and the driver writes a file it wrote before through a memory map it
    kept (``TransferMaps``: no system call, no page fault). So up to ``limit`` files per transfer
    directory stay while this
    process runs (named ``deltalog-<pid>-*.files``, removed at exit; files of processes that died
    are removed the next time a pool starts), and each is handed out again once the memory map of
    the table last read from it is gone. ``DELTALOG_TRANSFER_REUSE=0`` turns reuse off: every
    transfer then gets a new file, unlinked as soon as it is mapped.
    """

    _BUSY = object()

    def __init__(self, limit: int = 2) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._entries: Dict[str, Any] = {}  # path -> None (free) | _BUSY | weakref to the mmap
        self._swept: set = set()
        self._owner = os.getpid()

    def _own(self) -> None:
        """A forked child must neither reuse nor remove its parent's files (the parent may map
        them): it starts a pool of its own."""
        if self._owner != os.getpid():
            self._owner = os.getpid()
            self._entries = {}
            self._swept = set()

    @staticmethod
    def enabled() -> bool:
        return os.environ.get("DELTALOG_TRANSFER_REUSE", "1") != "0"

    def acquire(self, directory: Optional[str]) -> Tuple[str, bool]:
        """A path to write the next transfer to, and whether it belongs to the pool (else the
        caller unlinks it once mapped)."""
        if self.enabled():
            with self._lock:
                self._own()
                self._sweep(directory)
                d = directory or tempfile.gettempdir()
                here = [p for p in self._entries if os.path.dirname(p) == d]
                for path in here:
                    state = self._entries[path]
                    if state is None or (isinstance(state, weakref.ref) and state() is None):
                        if os.path.exists(path):
                            self._entries[path] = self._BUSY
                            return path, True
                        del self._entries[path]  # removed by someone else: replaced below
                        here.remove(path)
                        break
                if len(here) < self._limit:
                    fd, path = tempfile.mkstemp(prefix=f"deltalog-{os.getpid()}-", suffix=".files", dir=directory)
                    os.close(fd)
                    self._entries[path] = self._BUSY
                    return path, True
        fd, path = tempfile.mkstemp(prefix="deltalog-", suffix=".files", dir=directory)
        os.close(fd)
        return path, False

    def attach(self, path: str, mapped: mmap.mmap) -> None:
        """``path`` now backs a table whose buffers keep ``mapped`` alive."""
        with self._lock:
            self._own()
            if path in self._entries:
                self._entries[path] = weakref.ref(mapped)

    def release(self, path: str) -> None:
        """``path`` holds nothing anyone maps (the transfer failed or was not used)."""
        with self._lock:
            self._own()
            if path in self._entries:
                self._entries[path] = None

    def close(self) -> None:
        """Removes the pool's files (their pages stay while a table still maps them)."""
        with self._lock:
            self._own()
            for path in list(self._entries):
                try:
                    os.unlink(path)
                except OSError:
                    pass
            self._entries.clear()

    def _sweep(self, directory: Optional[str]) -> None:
        """Removes, once per directory, pool files left by processes that no longer run."""
        d = directory or tempfile.gettempdir()
        if d in self._swept:
            return
        self._swept.add(d)
        try:
            names = os.listdir(d)
        except OSError:
            return
        for name in names:
            m = re.fullmatch(r"deltalog-(\d+)-.*\.files", name)
            if not m or int(m.group(1)) == os.getpid():
                continue
            try:
                os.kill(int(m.group(1)), 0)
            except ProcessLookupError:
                try:
                    os.unlink(os.path.join(d, name))
                except OSError:
                    pass
            except OSError:
                pass  # alive (owned by another user)


TRANSFER_FILES = TransferFiles()
atexit.register(TRANSFER_FILES.close)
