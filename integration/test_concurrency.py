"""Concurrent writers in separate JVMs on one table.

(a) 8 writer processes of blind appends (TxnStress append) at once: every append commits exactly
    once, none fails, the final version is the total.
(b) overlapping deletes and read-then-write transactions started on the same version and released
    together (TxnTool race): each loser fails with the error class the conflict rules (digest §8.3)
    give for the first winning commit it conflicts with, each winner conflicts with none of the
    commits before it, and no file is lost or duplicated.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple


from deltalog.actions import AddFile, CommitInfo, RemoveFile


def test_blind_appends_from_8_writer_processes(procs, h, tmp_path, full):
    writers, n = 8, (50 if full else 25)
    table = tmp_path / "appends"
    r = procs.run(h.STRESS, "create", str(table))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["committed", "0"]

    ps = [procs.java(h.STRESS, "append", str(table), str(n), str(w)) for w in range(writers)]
    results = h.wait_all(ps, timeout=900 if full else 600)

    committed: Dict[int, int] = {}  # version -> writer
    for w, (rc, out, err) in enumerate(results):
        assert rc == 0, f"writer {w} exited with {rc}: {err}"
        assert "error" not in err, f"writer {w}: {err}"
        lines = out.split("\n")[:-1]
        assert len(lines) == n, f"writer {w} printed {len(lines)} commits, expected {n}"
        for line in lines:
            word, v = line.split()
            assert word == "committed"
            assert int(v) not in committed, f"version {v} reported by writers {committed[int(v)]} and {w}"
            committed[int(v)] = w
    total = writers * n
    assert sorted(committed) == list(range(1, total + 1))

    st = h.read_log(table)  # contiguous, one commitInfo + distinct txnId per version
    assert st.version == total
    expected = {f"w{w}-{i}.parquet" for w in range(writers) for i in range(n)}
    for v in range(1, total + 1):
        adds = [a for a in st.commits[v] if isinstance(a, AddFile)]
        assert len(adds) == 1, f"version {v} has {len(adds)} adds"
        assert adds[0].path.startswith(f"w{committed[v]}-"), f"version {v} is not writer {committed[v]}'s"
        info = next(a for a in st.commits[v] if isinstance(a, CommitInfo))
        assert info.isBlindAppend is True
        assert not any(isinstance(a, RemoveFile) for a in st.commits[v])
    assert st.ever_added == {p: 1 for p in expected}, "a file was committed twice or not at all"
    assert set(st.live) == expected, "an added file is not live"
    h.check_checkpoints(table)

    loaded = h.jvm_read(procs, table)
    assert loaded["version"] == total and loaded["numFiles"] == total
    assert set(loaded["paths"]) == expected
    rs_version, rs_paths = h.deltars_read(table)
    assert (rs_version, rs_paths) == (total, expected)


# ----------------------------------------------------------------------------------------- (b)

# Kinds of racing transaction (TxnTool race):
#   delete       reads the whole table (filterFiles()), removes a file
#   blind-delete removes a file without reading
#   read-append  reads the whole table, adds a file (not a blind append)


def expected_conflict(kind: str, target: str, read_files: set, winner: list) -> Optional[str]:
    """The error class a transaction of `kind` gets from one winning commit, or None (rules of
    ConflictChecker / digest §8.3 in their order: appends, deletes of read files, double deletes)."""
    info = next(a for a in winner if isinstance(a, CommitInfo))
    adds = [a for a in winner if isinstance(a, AddFile) and a.dataChange]
    removes = [a for a in winner if isinstance(a, RemoveFile)]
    reads_whole_table = kind in ("delete", "read-append")
    # WriteSerializable (default): a winner's blind appends never conflict; other adds conflict
    # with a transaction that read the whole table.
    if reads_whole_table and adds and not info.isBlindAppend:
        return "DELTA_CONCURRENT_APPEND"
    if reads_whole_table and any(r.path in read_files for r in removes):
        return "DELTA_CONCURRENT_DELETE_READ"
    if reads_whole_table and removes:
        return "DELTA_CONCURRENT_DELETE_READ"
    if kind in ("delete", "blind-delete") and any(r.path == target for r in removes):
        return "DELTA_CONCURRENT_DELETE_DELETE"
    return None


def _race_round(procs, h, table, go, plan: List[Tuple[str, str]]):
    ps = [procs.java(h.TOOL, "race", str(table), str(go), kind, path) for kind, path in plan]
    read_versions = set()
    for p in ps:
        line = h.read_line(p, timeout=180)
        assert line.startswith("started "), f"{p.args[-3:]}: {line!r} {p.stderr.read() if p.poll() is not None else ''}"
        read_versions.add(int(line.split()[1]))
    assert len(read_versions) == 1, f"transactions read different versions: {read_versions}"
    go.write_text("go")
    results = h.wait_all(ps, timeout=300)
    outcomes = []
    for (kind, path), (rc, out, err) in zip(plan, results):
        words = out.split()
        if rc == 0:
            assert words[0] == "committed", out
            outcomes.append((kind, path, "committed", int(words[1])))
        else:
            assert rc == 3 and words[0] == "conflict", f"{kind} {path}: rc={rc} out={out!r} err={err!r}"
            outcomes.append((kind, path, words[1], int(words[2])))
    return read_versions.pop(), outcomes


def test_overlapping_deletes_and_read_then_write(procs, h, tmp_path, full):
    table = tmp_path / "races"
    initial = [f"f{i}.parquet" for i in range(12)]
    h.create_table(table, adds=[h.add_file(p) for p in initial])
    rounds = 5 if full else 2
    seen_classes = set()
    for rnd in range(rounds):
        before = h.read_log(table)
        live = sorted(before.live)
        x, y = live[0], live[1]
        plan = [("delete", x), ("delete", x), ("blind-delete", x), ("blind-delete", x),
                ("delete", y), ("blind-delete", y),
                ("read-append", f"r{rnd}-a.parquet"), ("read-append", f"r{rnd}-b.parquet")]
        go = tmp_path / f"go-{rnd}"
        read_version, outcomes = _race_round(procs, h, table, go, plan)
        assert read_version == before.version
        print(f"round {rnd}: read version {read_version}: " +
              ", ".join(f"{k} {p} -> {r}@{v}" for k, p, r, v in outcomes))

        st = h.read_log(table)
        winners = {v: o for o in outcomes if o[2] == "committed" for v in [o[3]]}
        new_versions = list(range(read_version + 1, st.version + 1))
        assert sorted(winners) == new_versions, f"committed {sorted(winners)} but the log has {new_versions}"
        read_files = set(before.live)
        for kind, path, result, v in outcomes:
            # first conflicting commit after the read version, per the rules
            first = None
            for w in new_versions:
                if result == "committed" and w >= v:
                    break
                cls = expected_conflict(kind, path, read_files, st.commits[w])
                if cls:
                    first = (cls, w)
                    break
            if result == "committed":
                assert first is None, f"{kind} {path} committed at {v} despite a conflict with {first}"
            else:
                seen_classes.add(result)
                assert first == (result, v), f"{kind} {path}: got {result} at {v}, rules say {first}"

        # no lost or duplicated file
        expected_live = set(before.live)
        for v in new_versions:
            for a in st.commits[v]:
                if isinstance(a, RemoveFile):
                    assert a.path in expected_live, f"version {v} removes {a.path}, which is not live"
                    expected_live.discard(a.path)
                elif isinstance(a, AddFile):
                    assert a.path not in expected_live
                    expected_live.add(a.path)
        assert set(st.live) == expected_live
        assert all(n == 1 for n in st.ever_added.values())
        assert x not in st.live and y not in st.live, "a delete of each target must have won"
        h.check_checkpoints(table)
        loaded = h.jvm_read(procs, table)
        assert loaded["version"] == st.version and set(loaded["paths"]) == expected_live
    assert "DELTA_CONCURRENT_DELETE_DELETE" in seen_classes or "DELTA_CONCURRENT_DELETE_READ" in seen_classes
    rs_version, rs_paths = h.deltars_read(table)
    assert rs_version == st.version and rs_paths == set(st.live)
