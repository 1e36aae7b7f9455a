"""Evaluates a protocol vector case with the pure-Python rules (the JVM twin is
``io.deltalog.api.ProtocolCaseEvaluator``). Case format: tests/vectors/README.md."""
from __future__ import annotations

import json
from typing import Any, Dict

from deltalog.exceptions import ActionParseError, DeltalogError
from deltalog.protocol import (
    ClientCapabilities,
    Protocol,
    sessionDefaultTableProperties,
)


def _metadata(case: Dict[str, Any]) -> Dict[str, Any]:
    m = dict(case.get("metadata") or {})
    if "schema" in m and "schemaString" not in m:
        m["schemaString"] = json.dumps(m.pop("schema"), separators=(",", ":"))
    m.setdefault("configuration", {})
    m.setdefault("schemaString", "")
    return m


def _protocol(body: Any) -> Protocol:
    return Protocol.fromJsonDict(body)


def _client(c: Any) -> ClientCapabilities:
    if c is None or c == "deltalog":
        return ClientCapabilities.deltalog()
    return ClientCapabilities.fromJsonDict(c)


def _names(features) -> list:
    return sorted(f.name for f in features)


def evaluate(case: Dict[str, Any]) -> Dict[str, Any]:
    op = case["op"]
    try:
        if op == "forNewTable":
            return {"protocol": Protocol.forNewTable(_metadata(case), case.get("sessionDefaults")).toJsonDict()}
        if op == "minProtocolComponentsFromMetadata":
            r, w, fs = Protocol.minProtocolComponentsFromMetadata(_metadata(case))
            return {"minReaderVersion": r, "minWriterVersion": w, "features": _names(fs)}
        if op == "extractAutomaticallyEnabledFeatures":
            return {"features": _names(Protocol.extractAutomaticallyEnabledFeatures(
                _metadata(case), _protocol(case["protocol"])))}
        if op == "requiredMinimumProtocol":
            r, w, used = Protocol.requiredMinimumProtocol(_metadata(case))
            return {"minReaderVersion": r, "minWriterVersion": w, "featuresUsed": used}
        if op in ("checkProtocolRequirements", "upgradeProtocolFromMetadataForExistingTable"):
            fn = getattr(Protocol, op)
            p = fn(_metadata(case), _protocol(case["protocol"]))
            return {"protocol": p.toJsonDict() if p is not None else None}
        p = _protocol(case["protocol"]) if "protocol" in case else None
        if op == "construct":
            return {"protocol": p.toJsonDict()}
        if op == "upgradeTableProtocol":
            return {"protocol": p.upgradeTableProtocol(case["readerVersion"], case["writerVersion"]).toJsonDict()}
        if op == "addFeatureSupport":
            return {"protocol": p.addFeatureSupport(case["feature"]).toJsonDict()}
        if op == "dropFeatureSupport":
            return {"protocol": p.dropFeatureSupport(case["feature"]).toJsonDict()}
        if op == "withFeature":
            return {"protocol": p.withFeature(case["feature"]).toJsonDict()}
        if op == "merge":
            return {"protocol": p.merge(*[_protocol(o) for o in case.get("others", [])]).toJsonDict()}
        if op == "normalized":
            return {"protocol": p.normalized().toJsonDict()}
        if op == "denormalized":
            return {"protocol": p.denormalized().toJsonDict()}
        if op == "implicitlyAndExplicitlySupportedFeatures":
            return {"features": _names(p.implicitlyAndExplicitlySupportedFeatures)}
        if op == "implicitlySupportedFeatures":
            return {"features": _names(p.implicitlySupportedFeatures)}
        if op == "canUpgradeTo":
            return {"result": p.canUpgradeTo(_protocol(case["to"]))}
        if op == "checkCanRead":
            p.checkCanRead(_client(case.get("client")))
            return {"ok": True}
        if op == "checkCanWrite":
            p.checkCanWrite(_client(case.get("client")))
            return {"ok": True}
        if op == "sessionDefaultTableProperties":
            return {"properties": sessionDefaultTableProperties(case.get("sessionDefaults") or {})}
        raise ValueError(f"unknown op {op!r}")
    except ActionParseError as e:
        return {"error": e.errorClass, "message": str(e)}
    except DeltalogError as e:
        return {"error": e.errorClass, "message": str(e)}


def _norm(v: Any) -> Any:
    """Protocol bodies compare with feature arrays sorted."""
    if isinstance(v, dict):
        return {k: (sorted(x) if k in ("readerFeatures", "writerFeatures") and isinstance(x, list) else _norm(x))
                for k, x in v.items()}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def matches(expected: Dict[str, Any], result: Dict[str, Any]) -> bool:
    for k, v in expected.items():
        if k == "message":
            if v not in result.get("message", ""):
                return False
        elif _norm(result.get(k, "<absent>")) != _norm(v):
            return False
    return True
