"""Replaying later imports after a removal: their record lines stored again, in their order.

When a removed source stored first a record that a later file also held, every import from
the first one holding such a record is replayed (see `tunelog.store.removal`): `capture_replay`
copies what those imports need into temporary tables, `replay` hands each import's lines to the
importer's `ImportWriter` again, into the same source, from the stored lines (nothing is
parsed). Runs inside the caller's write transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any


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
    from tunelog.recordvalues import stored_measurement
    from tunelog.store.codec import LineReader
    from tunelog.store.importer import ImportWriter

    block_of = LineReader(conn).block_of
    first = end = 0  # the block read last
    lines: list[bytes] = []
    steps = conn.execute("SELECT step, source_id FROM temp.replay_steps ORDER BY step").fetchall()
    for step, source_id in steps:
        (path,) = conn.execute("SELECT path FROM sources WHERE id = ?", (source_id,)).fetchone()
        with ImportWriter(conn, FileReport(path=path), repair=False, source_id=source_id) as writer:
            for row in _replayed_lines(conn, step):
                line, rid, version, target, task, key, args, spelling, *measured = row
                index, error_no, mean, all_cost, stamp = measured
                rec = stored_measurement(
                    (version, target, task, key, args),
                    config_index=index,
                    error_no=error_no,
                    all_cost=all_cost,
                    timestamp=stamp,
                    mean_cost=mean,
                    spelling=spelling,
                )
                if not first <= rid < end:
                    first, end, lines = block_of(rid)
                writer.add(line, rec, lines[rid - first])
            writer.finish()


def _replayed_lines(conn: sqlite3.Connection, step: int) -> Iterator[Any]:
    rows = conn.execute(
        """SELECT line, record_id, version, target, task_name, template_key, args, spelling,
                  config_index, error_no, mean_cost, all_cost, timestamp
           FROM temp.replay_lines WHERE step = ? ORDER BY seq""",
        (step,),
    )
    while batch := rows.fetchmany(2048):
        yield from batch
