"""MetaSchedule workload identity against apache-tvm's structural equality, and databases filed
under the rule before (migration 17).

`tests/data/metaschedule_identity.json.gz` holds module variants as a JSONDatabase writes them
and apache-tvm 0.27's grouping by `structural_equal` (tests/realtvm/make_identities.py): tvm-ffi
writes each distinct string once, so modules that repeat names differently (two inputs named
`X`, an input named like the function) have other node numbers and are still one workload.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import DATA, X86, undo_migrations
from tests.test_metaschedule import _record
from tunelog import msmodule
from tunelog.metaschedule import Workload, read_workloads
from tunelog.store import MIGRATIONS, Store

FOUND: dict[str, Any] = json.loads(
    gzip.decompress((DATA / "metaschedule_identity.json.gz").read_bytes())
)
VARIANTS: dict[str, str] = FOUND["variants"]


def _identities(tmp_path: Path, names: list[str]) -> list[str]:
    path = tmp_path / "database_workload.json"
    path.write_text("".join(VARIANTS[name] + "\n" for name in names))
    found = read_workloads(path)
    assert all(isinstance(w, Workload) for w in found)
    return [w.identity for w in found if isinstance(w, Workload)]


def test_modules_are_one_workload_exactly_when_tvm_says_they_are_structurally_equal(
    tmp_path: Path,
) -> None:
    names = list(VARIANTS)
    groups: dict[str, list[str]] = {}
    for name, identity in zip(names, _identities(tmp_path, names), strict=True):
        groups.setdefault(identity, []).append(name)
    assert sorted(groups.values()) == sorted(FOUND["groups"])


def test_every_field_tvm_writes_as_a_plain_int_is_known() -> None:
    """An int field read as a node index joins modules TVM tells apart (a softmax over axis
    3 and over axis 4) and splits ones it joins: the table must hold every such field."""
    pytest.importorskip("tvm")
    from tests.realtvm.ffi_fields import int_fields
    from tunelog.msffifields import INT_FIELDS

    missing = {
        name: sorted(fields - INT_FIELDS.get(name, frozenset()))
        for name, fields in int_fields().items()
        if fields - INT_FIELDS.get(name, frozenset())
    }
    assert missing == {}


def _database(directory: Path, names: list[str], records: list[tuple[int, float]]) -> Path:
    directory.mkdir()
    (directory / "database_workload.json").write_text(
        "".join(VARIANTS[name] + "\n" for name in names)
    )
    (directory / "database_tuning_record.json").write_text(
        "".join(_record(index, [seconds]) + "\n" for index, seconds in records)
    )
    return directory


def _best(store: Store) -> list[tuple[str, float, int]]:
    return sorted((Path(r.source).name, r.mean_cost, r.line) for r in store.best())


def test_one_workload_spelled_twice_has_one_best(tmp_path: Path) -> None:
    database = _database(
        tmp_path / "db", ["matmul", "matmul X X"], [(0, 0.004), (1, 0.002), (1, 0.003)]
    )
    with Store(tmp_path / "ms.db") as store:
        tunelog.import_paths(store, [str(database)])
        assert _best(store) == [("database_tuning_record.json", 0.002, 2)]


def _accounting(store: Store) -> list[tuple[Any, ...]]:
    return [
        (s.id, s.path, s.lines, s.records, s.duplicates, s.rejected, s.held, s.shared)
        for s in store.sources()
    ]


def _workloads(store: Store) -> list[tuple[Any, ...]]:
    """Each workload's identity, layer key and per-target tallies, in id order (the ids
    themselves may differ: a replay gives new ones, never reusing one)."""
    return store.conn.execute(
        """SELECT w.args, w.layer_key, c.target_id, c.error_no, c.records
           FROM workloads w JOIN tallies c ON c.workload_id = w.id ORDER BY w.id, 3, 4"""
    ).fetchall()


def _metaschedule_best(store: Store) -> list[Any]:
    return [r for r in store.best() if r.log_version == "metaschedule"]


def _filed_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Identities as tunelog computed them before (node numbers as written)."""
    monkeypatch.setattr(msmodule, "is_ffi_graph", lambda nodes: False)


def _opened_at_16(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        undo_migrations(conn, 16)


def test_workloads_filed_apart_before_are_one_after_the_migration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database of the old rule: its two spellings of one module were two workloads, each
    with a best. The migration joins them (replaying the imports from the first that holds
    one), as importing the files now does; the AutoTVM log before them is left as it was."""
    first = _database(tmp_path / "a", ["matmul"], [(0, 0.004), (0, 0.002)])
    second = _database(tmp_path / "b", ["matmul X X", "add"], [(0, 0.003), (1, 0.001), (0, 0.002)])
    paths = [str(X86), str(first), str(second)]
    old = tmp_path / "old.db"
    with monkeypatch.context() as patched:
        _filed_as_before(patched)
        with Store(old) as store:
            tunelog.import_paths(store, paths)
            assert len(_metaschedule_best(store)) == 3  # matmul twice, add
    _opened_at_16(old)
    with Store(old) as store, Store(tmp_path / "new.db") as reference:
        assert store.schema_version == len(MIGRATIONS)
        tunelog.import_paths(reference, paths)
        assert _best(store) == _best(reference)
        assert len(_metaschedule_best(store)) == 2
        assert _accounting(store) == _accounting(reference)
        assert _workloads(store) == _workloads(reference)
        again = tunelog.import_paths(store, [str(second)])
        assert [(r.new, r.duplicates) for r in again] == [(0, 3)]


def test_a_workload_only_renamed_by_the_migration_meets_its_other_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / "old.db"
    with monkeypatch.context() as patched:
        _filed_as_before(patched)
        with Store(old) as store:
            tunelog.import_paths(
                store, [str(_database(tmp_path / "a", ["matmul X X"], [(0, 0.004)]))]
            )
    _opened_at_16(old)
    with Store(old) as store:
        tunelog.import_paths(store, [str(_database(tmp_path / "b", ["matmul"], [(0, 0.002)]))])
        assert [(r.mean_cost, Path(r.source).parent.name) for r in store.best()] == [(0.002, "b")]


def test_one_module_of_two_tvm_versions_is_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two TVM versions' databases of one module are two workloads (never mixed): nothing
    joins, so the migration replays nothing (it replayed every import from theirs)."""
    from tests.test_metaschedule import _graph

    databases = [
        _database_of(tmp_path / version, _graph(version), [(0, 0.004)])
        for version in ("0.26.0", "0.27.0")
    ]
    old = tmp_path / "old.db"
    with monkeypatch.context() as patched:
        _filed_as_before(patched)
        with Store(old) as store:
            tunelog.import_paths(store, [str(X86), *map(str, databases)])
            before = store.conn.execute("SELECT id, workload_id FROM records").fetchall()
    _opened_at_16(old)
    with Store(old) as store:
        assert store.conn.execute("SELECT id, workload_id FROM records").fetchall() == before
        assert len(_metaschedule_best(store)) == 2


def _database_of(directory: Path, module: str, records: list[tuple[int, float]]) -> Path:
    directory.mkdir()
    (directory / "database_workload.json").write_text(json.dumps(["0", module]) + "\n")
    (directory / "database_tuning_record.json").write_text(
        "".join(_record(index, [seconds]) + "\n" for index, seconds in records)
    )
    return directory


def _workload_line(graph: dict[str, Any]) -> bytes:
    import base64

    body = json.dumps(graph).encode()
    text = base64.b64encode(len(body).to_bytes(8, "little") + body).decode()
    return json.dumps(["0", text]).encode()


def test_each_node_is_hashed_once_however_many_map_keys_share_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A map whose keys all point at one long chain hashed the chain once per key (a hostile
    line of 187 kB took 45 s; found by a review)."""
    from tunelog import msffi
    from tunelog.metaschedule import _workload

    chain, keys = 300, 300
    nodes: list[Any] = [{"type": "None"}]
    nodes += [
        {"type": "test.Chain", "data": {"next": n + 2 if n < chain - 1 else 0}}
        for n in range(chain)
    ]
    nodes.append({"type": "ffi.Map", "data": [x for _ in range(keys) for x in (1, 0)]})
    hashed: list[int] = []
    real = msffi._Graph._node_digest

    def counted(self: Any, index: int, *args: Any) -> bytes:
        hashed.append(index)
        return real(self, index, *args)

    monkeypatch.setattr(msffi._Graph, "_node_digest", counted)
    found = _workload(_workload_line({"root_index": len(nodes) - 1, "nodes": nodes}))
    assert isinstance(found, Workload)
    assert len(hashed) <= 2 * (chain + 2)  # each node once as a key's, once in the tree


def test_a_root_that_names_no_node_makes_the_line_unreadable() -> None:
    """Two such graphs had one identity (the root's number alone was hashed)."""
    from tunelog.metaschedule import _workload

    found = _workload(_workload_line({"root_index": 99, "nodes": [{"type": "None"}]}))
    assert found == "module graph cannot be read (root index 99 names no node of the graph)"


def test_the_import_names_what_each_workload_without_a_record_computes(tmp_path: Path) -> None:
    """A relax model's task no trial reached (a transpose) was said as a count only: which
    operator TVM would compile untuned was left to guess (found tuning a relax model)."""
    database = _database(tmp_path / "db", ["matmul", "add", "softmax"], [(0, 0.004)])
    with Store(tmp_path / "ms.db") as store:
        (report,) = tunelog.import_paths(store, [str(database)])
    assert report.workloads_without_records == 2
    assert report.unrecorded_workloads == [
        "main: 16x16 x 16x16 -> 16x16 float32",
        "main: 4x256 -> 4x256 float32",
    ]
