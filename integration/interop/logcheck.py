"""Protocol checks of a table's log after every write (any writer): the protocol must name every
feature the metadata uses, and column-mapped schemas must carry integer ids and physical names
on every field. A violation is the writer's failure (or a named rule for a peer)."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple


def snapshot(path: str, version: int) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    protocol: Dict[str, Any] = {}
    metadata: Dict[str, Any] = {}
    for v in range(version + 1):
        f = os.path.join(path, "_delta_log", f"{v:020d}.json")
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                a = json.loads(line)
                if "protocol" in a:
                    protocol = a["protocol"]
                if "metaData" in a:
                    metadata = a["metaData"]
    return protocol, metadata


def _walk(t: Any, out: List[Dict[str, Any]]) -> None:
    if isinstance(t, dict):
        if t.get("type") == "struct":
            for f in t["fields"]:
                out.append(f)
                _walk(f["type"], out)
        elif t.get("type") == "array":
            _walk(t["elementType"], out)
        elif t.get("type") == "map":
            _walk(t["keyType"], out)
            _walk(t["valueType"], out)


def problems(path: str, version: int) -> List[str]:
    protocol, metadata = snapshot(path, version)
    conf = metadata.get("configuration") or {}
    schema = json.loads(metadata.get("schemaString", '{"type":"struct","fields":[]}'))
    fields: List[Dict[str, Any]] = []
    _walk(schema, fields)
    rv, wv = protocol.get("minReaderVersion", 0), protocol.get("minWriterVersion", 0)
    rf, wf = set(protocol.get("readerFeatures") or []), set(protocol.get("writerFeatures") or [])
    out: List[str] = []

    def need(feature: str, reader: bool, legacy: Tuple[int, int]) -> None:
        if wv >= 7 and feature not in wf:
            out.append(f"protocol ({rv},{wv}) lacks writer feature {feature} the table uses")
        elif wv < 7 and wv < legacy[1]:
            out.append(f"protocol ({rv},{wv}) below the writer version {legacy[1]} {feature} needs")
        if reader:
            if rv >= 3 and feature not in rf:
                out.append(f"protocol ({rv},{wv}) lacks reader feature {feature} the table uses")
            elif rv < 3 and rv < legacy[0]:
                out.append(f"protocol ({rv},{wv}) below the reader version {legacy[0]} {feature} needs")
    mode = conf.get("delta.columnMapping.mode", "none")
    if mode != "none":
        need("columnMapping", True, (2, 5))
        for f in fields:
            md = f.get("metadata") or {}
            cid, phys = md.get("delta.columnMapping.id"), md.get("delta.columnMapping.physicalName")
            if not isinstance(cid, int) or isinstance(cid, bool):
                out.append(f"column {f['name']!r}: delta.columnMapping.id is {cid!r}, not an integer")
            if not isinstance(phys, str) or not phys:
                out.append(f"column {f['name']!r}: no delta.columnMapping.physicalName")
    if any(isinstance(f["type"], str) and f["type"] == "timestamp_ntz" for f in fields):
        need("timestampNtz", True, (3, 7))
    if conf.get("delta.enableDeletionVectors") == "true":
        need("deletionVectors", True, (3, 7))
    if conf.get("delta.enableChangeDataFeed") == "true":
        need("changeDataFeed", False, (1, 4))
    return out
