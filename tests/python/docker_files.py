"""Static readers for docker/ (no Docker engine here): a Dockerfile parser and a YAML-subset
parser for the compose file (pyyaml is not a dependency). Both are strict: anything outside what
they understand raises ``ValueError`` naming the file and line, so a file they accept is at least
well-formed in that subset.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

INSTRUCTIONS = {"FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY",
                "ENTRYPOINT", "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL",
                "HEALTHCHECK", "SHELL"}
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


@dataclass
class Instruction:
    line: int
    name: str
    args: str


@dataclass
class Stage:
    image: str                      # the FROM image with build args substituted
    name: Optional[str]
    instructions: List[Instruction] = field(default_factory=list)
    args: Dict[str, Optional[str]] = field(default_factory=dict)


@dataclass
class Dockerfile:
    global_args: Dict[str, Optional[str]]
    stages: List[Stage]

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)


def _substitute(text: str, args: Dict[str, Optional[str]], where: str) -> str:
    def one(m):
        key = m.group(1) or m.group(2)
        if args.get(key) is None:
            raise ValueError(f"{where}: ${key} is not a declared build argument with a default")
        return args[key]
    return _VAR.sub(one, text)


def parse_dockerfile(text: str, file: str = "Dockerfile") -> Dockerfile:
    """Instructions (continuation lines joined, comments dropped), validated: every instruction
    is a Dockerfile instruction; only ARG precedes the first FROM; ``FROM <image> [AS <name>]``
    with the image's ``${ARG}`` s declared globally; stage names unique; ``COPY --from=`` names an
    earlier stage; JSON-form CMD / ENTRYPOINT / SHELL are JSON arrays of strings; ARG and ENV are
    ``KEY[=value]`` pairs."""
    logical: List[Tuple[int, str]] = []
    buf, start = "", 0
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if buf and line.lstrip().startswith("#"):
            continue  # comment lines inside a continuation are dropped
        if not buf:
            start = no
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        logical.append((start, buf + line))
        buf = ""
    if buf:
        raise ValueError(f"{file}:{start}: the last instruction ends with a line continuation")
    global_args: Dict[str, Optional[str]] = {}
    stages: List[Stage] = []
    for no, line in logical:
        where = f"{file}:{no}"
        word, _, rest = line.strip().partition(" ")
        name = word.upper()
        if name not in INSTRUCTIONS:
            raise ValueError(f"{where}: unknown instruction {word!r}")
        if word != name:
            raise ValueError(f"{where}: instruction {word!r} is not upper case (this project's style)")
        rest = rest.strip()
        if not rest:
            raise ValueError(f"{where}: {name} without arguments")
        ins = Instruction(no, name, rest)
        if name == "ARG":
            key, eq, value = rest.partition("=")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                raise ValueError(f"{where}: bad ARG {rest!r}")
            target = stages[-1].args if stages else global_args
            target[key] = value if eq else (global_args.get(key) if stages else None)
            if stages:
                stages[-1].instructions.append(ins)
            continue
        if name == "FROM":
            parts = rest.split()
            parts = [p for p in parts if not p.startswith("--platform=")]
            if len(parts) == 3 and parts[1].upper() == "AS":
                image, sname = parts[0], parts[2]
            elif len(parts) == 1:
                image, sname = parts[0], None
            else:
                raise ValueError(f"{where}: FROM <image> [AS <name>] expected, got {rest!r}")
            if sname and any(s.name == sname for s in stages):
                raise ValueError(f"{where}: stage name {sname!r} used twice")
            stages.append(Stage(_substitute(image, global_args, where), sname))
            continue
        if not stages:
            raise ValueError(f"{where}: {name} before the first FROM")
        if name in ("CMD", "ENTRYPOINT", "SHELL") and rest.startswith("["):
            try:
                arr = json.loads(rest)
            except ValueError as e:
                raise ValueError(f"{where}: {name} is not a JSON array: {e}") from None
            if not isinstance(arr, list) or not arr or not all(isinstance(x, str) for x in arr):
                raise ValueError(f"{where}: {name} must be a non-empty JSON array of strings")
        if name in ("COPY", "ADD"):
            for opt in re.findall(r"--from=(\S+)", rest):
                if not any(s.name == opt for s in stages[:-1]):
                    raise ValueError(f"{where}: COPY --from={opt} names no earlier stage")
            if len([p for p in rest.split() if not p.startswith("--")]) < 2:
                raise ValueError(f"{where}: {name} needs a source and a destination")
        if name == "ENV":
            for pair in re.findall(r'(\S+?=(?:"[^"]*"|\S*))', rest):
                if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", pair):
                    raise ValueError(f"{where}: bad ENV pair {pair!r}")
            if "=" not in rest:
                raise ValueError(f"{where}: ENV KEY=value expected")
        stages[-1].instructions.append(ins)
    if not stages:
        raise ValueError(f"{file}: no FROM instruction")
    return Dockerfile(global_args, stages)


# ------------------------------------------------------------------------------------ YAML subset


def _strip_comment(line: str) -> str:
    out, quote = [], None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            break
        out.append(ch)
    return "".join(out).rstrip()


def _scalar(text: str, where: str) -> Any:
    t = text.strip()
    if not t:
        return None
    if t[0] in "[{&*!|>%@`":
        raise ValueError(f"{where}: {t[0]!r} (flow collections, anchors, tags, block scalars) is outside the subset")
    if t[0] == '"':
        if not (len(t) >= 2 and t.endswith('"')):
            raise ValueError(f"{where}: unterminated double-quoted scalar")
        return json.loads(t)
    if t[0] == "'":
        if not (len(t) >= 2 and t.endswith("'")):
            raise ValueError(f"{where}: unterminated single-quoted scalar")
        return t[1:-1].replace("''", "'")
    if t in ("true", "false"):
        return t == "true"
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    if ": " in t or t.endswith(":"):
        raise ValueError(f"{where}: a mapping inside a plain scalar: {t!r}")
    return t


def parse_yaml_subset(text: str, file: str = "compose.yml") -> Any:
    """Block mappings, block sequences of scalars or mappings, plain / quoted scalars, comments.
    Raises ``ValueError`` on tabs, bad or inconsistent indentation, duplicate keys and anything
    else (flow collections, anchors, multi-line scalars)."""
    lines: List[Tuple[int, int, str]] = []
    for no, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise ValueError(f"{file}:{no}: tab in indentation")
        body = _strip_comment(raw)
        if body.strip():
            lines.append((no, len(body) - len(body.lstrip(" ")), body.strip()))
    pos = 0

    def block(indent: int) -> Any:
        nonlocal pos
        no, ind, body = lines[pos]
        if ind != indent:
            raise ValueError(f"{file}:{no}: indentation {ind}, expected {indent}")
        if body.startswith("- ") or body == "-":
            seq = []
            while pos < len(lines) and lines[pos][1] == indent and (lines[pos][2].startswith("- ") or lines[pos][2] == "-"):
                no, _, body = lines[pos]
                item = body[2:] if body != "-" else ""
                if re.match(r"^[^\"'\s][^:]*:( |$)", item):  # "- key: value" starts a mapping item
                    lines[pos] = (no, indent + 2, item)
                    seq.append(block(indent + 2))
                else:
                    seq.append(_scalar(item, f"{file}:{no}"))
                    pos += 1
            return seq
        mapping: Dict[str, Any] = {}
        while pos < len(lines) and lines[pos][1] == indent:
            no, _, body = lines[pos]
            where = f"{file}:{no}"
            m = re.match(r'^("(?:[^"\\]|\\.)*"|\'[^\']*\'|[^\s#"\'][^:]*?)\s*:(?:\s+(.*))?$', body)
            if not m or body.startswith("- "):
                raise ValueError(f"{where}: 'key: value' expected, got {body!r}")
            key = _scalar(m.group(1), where)
            key = str(key)
            if key in mapping:
                raise ValueError(f"{where}: duplicate key {key!r}")
            pos += 1
            if m.group(2) is not None and m.group(2).strip():
                mapping[key] = _scalar(m.group(2), where)
            elif pos < len(lines) and lines[pos][1] > indent:
                mapping[key] = block(lines[pos][1])
            elif pos < len(lines) and lines[pos][1] == indent and lines[pos][2].startswith("- "):
                mapping[key] = block(indent)  # a sequence at the key's own indentation
            else:
                mapping[key] = None
        if pos < len(lines) and lines[pos][1] > indent:
            raise ValueError(f"{file}:{lines[pos][0]}: unexpected indentation")
        return mapping

    if not lines:
        return None
    doc = block(lines[0][1])
    if pos != len(lines):
        raise ValueError(f"{file}:{lines[pos][0]}: indentation below the document's")
    return doc
