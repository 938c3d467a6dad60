"""A merged source that is a later read of a file a source here read first: read on into it.

A box imports a tuner's log, a team database merges the box, the log grows and the box imports
it again (its source read on: store.resume). Merging the box again brought the whole grown read
as a second source of the file, its first lines all duplicates, night after night. Here such a
source is recognised (the same path, first imported at the same time, the source here's record
lines and rejected lines the first of its) and the merge reads on into the source here from
the line it stopped at, as an import of the grown file would.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tunelog.store.importer import ImportWriter

# Each record line a source held, in its file's order: (line number, content hash). A line's
# content hash is the same in every database (the hash of its bytes).
_HELD_LINES = """SELECT h.line + (r.id - h.record_id), r.hash
                 FROM holdings h JOIN records r ON r.id >= h.record_id
                                                AND r.id < h.record_id + h.count
                 WHERE h.source_id = ? ORDER BY h.seq, r.id"""


def earlier_read_here(
    conn: sqlite3.Connection,
    other: sqlite3.Connection,
    merged: tuple[Any, ...],
    path_here: str,
) -> tuple[int, int] | None:
    """(id, lines) of the source here that read the merged source's file before it grew, or
    None. `merged`: the merged source's `sources` row (merging._SOURCES' columns)."""
    source_id, lines, repair, imported_at = merged[0], merged[5], merged[13], merged[14]
    if other.execute(
        "SELECT 1 FROM sources WHERE path = ? AND imported_at IS ? AND id != ?",
        (merged[1], imported_at, source_id),
    ).fetchone():
        return None  # the other database holds two reads of it: which one is here is unknown
    for here_id, here_lines in conn.execute(
        """SELECT id, lines FROM sources WHERE path = ? AND imported_at IS ? AND repair IS ?
           AND lines > 0 AND lines < ? ORDER BY id""",
        (path_here, imported_at, repair, lines),
    ).fetchall():
        if _starts_as(conn, int(here_id), other, int(source_id), int(here_lines)):
            return int(here_id), int(here_lines)
    return None


def _starts_as(
    conn: sqlite3.Connection, here: int, other: sqlite3.Connection, merged: int, lines: int
) -> bool:
    """Whether the source here's record lines (one at least) and rejected lines are the
    merged source's up to line `lines` (a half-written line rejected here and whole there
    is no prefix: that line would be lost)."""
    mine = conn.execute(_HELD_LINES, (here,))
    theirs = _up_to(other.execute(_HELD_LINES, (merged,)), lines)
    held = 0
    done = object()
    for a, b in zip_longest(mine, theirs, fillvalue=done):
        if a is done or b is done or tuple(a) != tuple(b):  # type: ignore[arg-type]
            return False
        held += 1
    rejects = "SELECT line, reason FROM rejects WHERE source_id = ? AND line <= ? ORDER BY line"
    return held > 0 and (
        conn.execute(rejects, (here, lines)).fetchall()
        == other.execute(rejects, (merged, lines)).fetchall()
    )


def _up_to(rows: Iterator[Any], lines: int) -> Iterator[tuple[Any, ...]]:
    for row in rows:
        if row[0] > lines:
            return
        yield tuple(row)


def read_on(
    conn: sqlite3.Connection,
    other: sqlite3.Connection,
    merged: tuple[Any, ...],
    here_id: int,
    here_lines: int,
    feed: Callable[[ImportWriter, int, int], None],
) -> int:
    """Read the merged source's lines after `here_lines` on into source `here_id` (`feed`
    hands a source's lines after a line to a writer), as an import of the grown file reads
    on: its counts become the whole read's, its later imports and rejects added, its resume
    point the newer one. The records it added."""
    from tunelog.importreport import FileReport
    from tunelog.store import resume
    from tunelog.store.importer import ImportWriter

    source_id, path, label = merged[0], merged[1], merged[2]
    conn.execute("SAVEPOINT merge_source")
    report = FileReport(path=path)
    with ImportWriter(
        conn, report, repair=bool(merged[13]), source_id=here_id, first_line=here_lines
    ) as writer:
        feed(writer, source_id, here_lines)
        writer.finish()
    conn.execute(_EXTEND_SQL, _extended_counts(conn, here_id, merged, report.new))
    conn.execute("UPDATE sources SET label = ? WHERE id = ? AND label IS NULL", (label, here_id))
    known = set(
        conn.execute(
            "SELECT path, imported_at FROM source_imports WHERE source_id = ?", (here_id,)
        ).fetchall()
    )
    conn.executemany(
        "INSERT INTO source_imports (source_id, path, imported_at) VALUES (?, ?, ?)",
        [
            (here_id, at_path, at)
            for at_path, at in other.execute(
                "SELECT path, imported_at FROM source_imports WHERE source_id = ? ORDER BY rowid",
                (source_id,),
            ).fetchall()
            if (at_path, at) not in known
        ],
    )
    conn.executemany(
        f"INSERT INTO rejects (source_id, line, reason) VALUES ({here_id:d}, ?, ?)",
        other.execute(
            "SELECT line, reason FROM rejects WHERE source_id = ? AND line > ? ORDER BY line",
            (source_id, here_lines),
        ).fetchall(),
    )
    resume.carry(conn, other, source_id, here_id)
    conn.execute("RELEASE merge_source")
    return report.new


def _extended_counts(
    conn: sqlite3.Connection, here_id: int, merged: tuple[Any, ...], new: int
) -> tuple[Any, ...]:
    """`UPDATE sources` parameters giving the source here the whole read's counts: the merged
    read's lines, comments, blank, rejected, split and repaired (of the whole file), its
    SHA-256 and size; `new` more records of its own, the rest of the lines it held duplicates."""
    (records_here,) = conn.execute(
        "SELECT records FROM sources WHERE id = ?", (here_id,)
    ).fetchone()
    (_, _, _, sha256, size, lines, records, duplicates) = merged[:8]
    (comments, blank, rejected, split, repaired) = merged[8:13]
    owned = int(records_here) + new
    return (
        sha256,
        size,
        lines,
        owned,
        int(records) + int(duplicates) - owned,
        comments,
        blank,
        rejected,
        split,
        repaired,
        here_id,
    )


_EXTEND_SQL = """UPDATE sources SET sha256 = ?, size = ?, lines = ?, records = ?, duplicates = ?,
                comments = ?, blank = ?, rejected = ?, split = ?, repaired = ? WHERE id = ?"""
