"""Stored record lines handed to the importer's `ImportWriter` again, nothing parsed: a merged
source's lines (`feed_held_records`, from the other database), and later imports replayed after
a removal, in their order.

When a removed source stored first a record that a later file also held, every import from
the first one holding such a record is replayed (see `tunelog.store.removal`): `capture_replay`
copies what those imports need into temporary tables, `replay` hands each import's lines to the
importer's `ImportWriter` again, into the same source, from the stored lines (nothing is
parsed). Runs inside the caller's write transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tunelog.store.importer import ImportWriter


def capture_replay(
    conn: sqlite3.Connection, removed_ids: Sequence[int], from_rowid: int
) -> list[int]:
    """Copy what the imports to replay need into `temp.replay_lines`: every record line of each
    remaining run from `from_rowid` on, numbered by import (consecutive runs of one source are
    one import), with its record's columns and id (its line stays in its block meanwhile).
    Returns the sources replayed."""
    conn.execute(
        """CREATE TEMP TABLE IF NOT EXISTS replay_lines (
               step INTEGER, seq INTEGER, line INTEGER, record_id INTEGER, version TEXT,
               target TEXT, task_name TEXT, template_key TEXT, args TEXT, spelling TEXT,
               config_index INTEGER, error_no INTEGER, mean_cost REAL, all_cost REAL,
               timestamp REAL)"""
    )
    conn.execute("DELETE FROM temp.replay_lines")
    removed = set(removed_ids)
    runs = [
        (int(s), int(seq), int(line), int(rid), int(n))
        for s, seq, line, rid, n in conn.execute(
            """SELECT source_id, seq, line, record_id, count FROM holdings WHERE rowid >= ?
               ORDER BY rowid""",
            (from_rowid,),
        )
        if int(s) not in removed
    ]
    steps: list[tuple[int, int]] = []  # (step, source), in import order
    for source_id, seq, line, first, count in runs:
        if not steps or steps[-1][1] != source_id:
            steps.append((len(steps) + 1, source_id))
        conn.execute(
            """INSERT INTO temp.replay_lines
               SELECT ?, ? + r.id - ?, ? + r.id - ?, r.id, w.version, t.target, w.task_name,
                      w.template_key, w.args, coalesce(own.spelling, w.spelling),
                      r.config_index, r.error_no, r.mean_cost, r.all_cost, r.timestamp
               FROM records r JOIN targets t ON t.id = r.target_id
               JOIN workloads w ON w.id = r.workload_id
               LEFT JOIN record_spellings rs ON rs.record_id = r.id
               LEFT JOIN spelling_texts own ON own.id = rs.spelling_id
               WHERE r.id >= ? AND r.id < ?""",
            (steps[-1][0], seq, first, line, first, first, first + count),
        )
    conn.execute("CREATE INDEX IF NOT EXISTS temp.replay_order ON replay_lines (step, seq)")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS replay_steps (step INTEGER, source_id INTEGER)")
    conn.execute("DELETE FROM temp.replay_steps")
    conn.executemany("INSERT INTO temp.replay_steps VALUES (?, ?)", steps)
    return sorted({source_id for _, source_id in steps})


def replay(conn: sqlite3.Connection) -> None:
    """Import each captured import again, in order, into its source."""
    from tunelog.models import FileReport
    from tunelog.store.importer import ImportWriter

    steps = conn.execute("SELECT step, source_id FROM temp.replay_steps ORDER BY step").fetchall()
    for step, source_id in steps:
        (path,) = conn.execute("SELECT path FROM sources WHERE id = ?", (source_id,)).fetchone()
        with ImportWriter(conn, FileReport(path=path), repair=False, source_id=source_id) as writer:
            _add_stored(
                writer,
                conn,
                (
                    (line, rid, (version, target, task, key, args), spelling, *measured)
                    for line, rid, version, target, task, key, args, spelling, *measured in (
                        _replayed_lines(conn, step)
                    )
                ),
            )
            writer.finish()


# (line, record id, identity, spelling, config index, error number, mean, all cost, timestamp)
StoredLine = tuple[Any, ...]


def _add_stored(writer: ImportWriter, conn: sqlite3.Connection, rows: Iterable[StoredLine]) -> None:
    """Hand each stored record line to the writer: line number, record id, its identity
    (version, target, task, template key, args), spelling, config index, error number, mean
    and all cost, timestamp; its bytes read from its block (a file's lines are mostly
    consecutive records: the block read last is kept)."""
    from tunelog.recordvalues import stored_measurement
    from tunelog.store.codec import LineReader

    block_of = LineReader(conn).block_of
    first = end = 0  # the block read last
    lines: list[bytes] = []
    add = writer.add
    for line, rid, identity, spelling, index, error_no, mean, all_cost, stamp in rows:
        rec = stored_measurement(
            identity,
            config_index=index,
            error_no=error_no,
            all_cost=all_cost,
            timestamp=stamp,
            mean_cost=mean,
            spelling=spelling,
        )
        if not first <= rid < end:
            first, end, lines = block_of(rid)
        add(line, rec, lines[rid - first])


def _replayed_lines(conn: sqlite3.Connection, step: int) -> Iterator[Any]:
    rows = conn.execute(
        """SELECT line, record_id, version, target, task_name, template_key, args, spelling,
                  config_index, error_no, mean_cost, all_cost, timestamp
           FROM temp.replay_lines WHERE step = ? ORDER BY seq""",
        (step,),
    )
    while batch := rows.fetchmany(2048):
        yield from batch


def feed_held_records(
    writer: ImportWriter,
    conn: sqlite3.Connection,
    source_id: int,
    targets: dict[int, str],
    workloads: dict[int, tuple[str, str, str, str]],
    spellings: dict[int, str | None],
    only_targets: Collection[int] | None = None,
    *,
    metaschedule_only: bool = False,
    after_line: int = 0,
) -> None:
    """Hand every record line a source of `conn` held to the writer, in its file's order
    (`only_targets`: only the lines of records of these target ids; `metaschedule_only`:
    that choice for MetaSchedule workloads only; `after_line`: only the lines after it).

    `targets`, `workloads` (version first) and `spellings` are `conn`'s, by id. The lines are
    not parsed again: the stored rows hold what the writer needs."""
    from tunelog.store.holdings import held_records

    rows = held_records(conn, source_id, only_targets, metaschedule_only=metaschedule_only)
    own = _OwnSpellingTexts(conn)

    def stored() -> Iterator[StoredLine]:
        # The row's trailing id: the record's own spelling, where not its workload's.
        for _seq, line, rid, target_id, workload_id, *measured, own_id in rows:
            if line <= after_line:
                continue
            version, task, key, args = workloads[workload_id]
            spelling = spellings[workload_id] if own_id is None else own.text(own_id)
            yield (line, rid, (version, targets[target_id], task, key, args), spelling, *measured)

    _add_stored(writer, conn, stored())


class _OwnSpellingTexts:
    """`spelling_texts` of a database, each read when first asked (the last few kept)."""

    KEPT = 256

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._texts: dict[int, str] = {}

    def text(self, spelling_id: int) -> str:
        """The spelling with this id."""
        found = self._texts.get(spelling_id)
        if found is None:
            if len(self._texts) >= self.KEPT:
                self._texts.clear()
            (found,) = self._conn.execute(
                "SELECT spelling FROM spelling_texts WHERE id = ?", (spelling_id,)
            ).fetchone()
            self._texts[spelling_id] = found
        return str(found)
