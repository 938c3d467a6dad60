"""The importer stores its per-workload state batch after batch (issue 29): whatever the batch
sizes, every table ends the same as when a file is one batch."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tunelog.collecting import GC_YOUNG_THRESHOLD
from tunelog.records import Measurement, scan_content
from tunelog.rules.workloadidentity import workload_key
from tunelog.store import Store, importer
from tunelog.store.codec import LineReader

REPO = Path(__file__).resolve().parents[1]
LOGS = [
    REPO / "sample_logs" / "x86_mini_llvm.log",
    REPO / "sample_logs" / "edge_cases.log",
    REPO / "tests" / "data" / "nchwc_blocks.log",
]
TABLES = {
    "records": "SELECT * FROM records ORDER BY id",
    "workloads": "SELECT * FROM workloads ORDER BY id",
    "slots": "SELECT * FROM slots ORDER BY kind, name, workload_id",
    "tallies": "SELECT * FROM tallies ORDER BY target_id, workload_id, error_no",
    "top_configs": "SELECT * FROM top_configs ORDER BY target_id, workload_id, config_index",
    "trial_runs": "SELECT * FROM trial_runs ORDER BY source_id, target_id, workload_id",
    "content_hashes": "SELECT * FROM content_hashes ORDER BY workload_id, hash",
    "sources": "SELECT id, lines, records, duplicates, comments, blank, rejected FROM sources",
}


def _imports(tmp_path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Overlapping imports: whole files, a file of lines seen before, a file read on after it
    grew (with lines seen before), each checked for its line accounting."""
    tmp_path.mkdir()
    lines = [line for log in LOGS for line in log.read_bytes().splitlines(keepends=True)]
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(b"".join(lines[::3] + lines[1::2]))
    grown = tmp_path / "grown.log"
    grown.write_bytes(b"".join(lines[: len(lines) // 2]))
    with Store(tmp_path / "t.db") as store:
        reports = tunelog.import_paths(store, [str(LOGS[0]), str(grown)])
        grown.write_bytes(b"".join(lines[: len(lines) // 2] + lines[::-1]))
        reports += tunelog.import_paths(store, [str(grown), str(mixed), *map(str, LOGS)])
        assert all(report.accounted for report in reports)
        return {name: store.conn.execute(sql).fetchall() for name, sql in TABLES.items()}


def test_every_batch_size_stores_the_same_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _imports(tmp_path / "whole")
    # Every record its own batch and every (target, workload) stored after each batch.
    monkeypatch.setattr(importer, "BLOCK_LINES", 1)
    monkeypatch.setattr(importer, "BATCH_SIZE", 1)
    monkeypatch.setattr(importer, "GROUPS_HELD", 1)
    batched = _imports(tmp_path / "batched")
    for name in TABLES:
        assert batched[name] == whole[name], name


@pytest.mark.parametrize("fails", [False, True], ids=["imported", "failed"])
def test_an_import_gives_back_the_collectors_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    """The importer collects cycles less often while it reads (ImportWriter.run), and leaves the
    process's thresholds as they were, also when the import fails."""
    seen: list[tuple[int, int, int]] = []
    real_add = importer.ImportWriter.add

    def watched_add(self: importer.ImportWriter, *args: Any) -> None:
        seen.append(gc.get_threshold())
        if fails:
            raise RuntimeError("interrupted")
        real_add(self, *args)

    monkeypatch.setattr(importer.ImportWriter, "add", watched_add)
    before = gc.get_threshold()
    with Store(tmp_path / "t.db") as store:
        if fails:
            with pytest.raises(RuntimeError):
                tunelog.import_paths(store, [str(LOGS[0])])
        else:
            tunelog.import_paths(store, [str(LOGS[0])])
    assert seen and seen[0][0] == max(before[0], GC_YOUNG_THRESHOLD) > before[0]
    assert gc.get_threshold() == before


@pytest.mark.parametrize("batch_size", [1, 2048])
def test_workloads_stored_before_and_new_ones_keep_their_ids_in_one_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_size: int
) -> None:
    """A new workload gets a provisional id as it is met (the next free one): when a batch also
    meets workloads the database held (looked up only at the batch's end, by a process that
    knew nothing of them), those keep their ids and the new ones take the free ids in the order
    met, with no gap, and every record names its own line's workload."""
    monkeypatch.setattr(importer, "BATCH_SIZE", batch_size)
    lines = [line for log in LOGS for line in log.read_bytes().splitlines(keepends=True)]
    first, both = tmp_path / "first.log", tmp_path / "both.log"
    first.write_bytes(b"".join(lines[len(lines) // 3 :: 2]))
    both.write_bytes(b"".join(lines))
    for log in (first, both):
        with Store(tmp_path / "t.db") as store:  # a new connection: nothing known
            assert all(r.accounted for r in tunelog.import_paths(store, [str(log)]))
    with Store(tmp_path / "t.db") as store:
        conn = store.conn
        count, top = conn.execute("SELECT count(*), max(id) FROM workloads").fetchone()
        assert count == top > 3
        reader = LineReader(conn)
        rows = conn.execute(
            """SELECT r.id, w.task_name, w.template_key, w.args, w.version FROM records r
               JOIN workloads w ON w.id = r.workload_id ORDER BY r.id"""
        ).fetchall()
        assert len(rows) == conn.execute("SELECT count(*) FROM records").fetchone()[0]
        for record_id, *stored in rows:
            record = scan_content(reader.line(record_id))
            assert isinstance(record, Measurement)
            assert workload_key(record) == tuple(stored)
