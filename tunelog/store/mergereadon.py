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
from collections import Counter
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
    """(id, the line to read on after) of the source here that read the merged source's file
    before it grew, or None. `merged`: the merged source's `sources` row (merging._SOURCES'
    columns). The merged source must be a read that grew (its SHA-256 blanked: a fresh read of
    a file at the same path, another box's, is another file), and this one's imports must be
    its first. A half-written last line this one rejected (its resume point's tail) is read
    again, as an import of the grown file reads it."""
    source_id, sha256, lines = merged[0], merged[3], merged[5]
    repair, imported_at = merged[13], merged[14]
    if (
        sha256
        or other.execute(
            "SELECT 1 FROM sources WHERE path = ? AND imported_at IS ? AND id != ?",
            (merged[1], imported_at, source_id),
        ).fetchone()
    ):
        return None  # a read in full, or two reads of the path there: which one is here?
    theirs = Counter(_imports(other, int(source_id)))
    for here_id, here_lines in conn.execute(
        """SELECT id, lines FROM sources WHERE path = ? AND imported_at IS ? AND repair IS ?
           AND lines > 0 AND lines < ? ORDER BY lines DESC, id""",
        (path_here, imported_at, repair, lines),
    ).fetchall():
        here_id, upto = int(here_id), int(here_lines) - _rejected_tail(conn, int(here_id))
        if Counter(_imports(conn, here_id)) - theirs:
            continue  # imported here as the box never did: another history
        if _starts_as(conn, here_id, other, int(source_id), upto):
            return here_id, upto
    return None


def _imports(conn: sqlite3.Connection, source_id: int) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT path, imported_at FROM source_imports WHERE source_id = ?", (source_id,)
    ).fetchall()


def _rejected_tail(conn: sqlite3.Connection, source_id: int) -> int:
    """1 when the source's last line is a half-written line it rejected (its resume point
    has read past its last line end, and that line is rejected), else 0."""
    point = conn.execute(
        "SELECT lines, tail FROM resume_points WHERE source_id = ? AND tail > 0", (source_id,)
    ).fetchone()
    if point is None:
        return 0
    return int(
        conn.execute(
            "SELECT 1 FROM rejects r JOIN sources s ON s.id = r.source_id WHERE s.id = ? "
            "AND r.line = ? AND s.lines = ?",
            (source_id, int(point[0]) + 1, int(point[0]) + 1),
        ).fetchone()
        is not None
    )


def _starts_as(
    conn: sqlite3.Connection, here: int, other: sqlite3.Connection, merged: int, lines: int
) -> bool:
    """Whether the source here's record lines (one at least) and rejected lines up to line
    `lines` are the merged source's (a half-written line rejected here and whole there is no
    prefix, but as the tail `read_on` reads again)."""
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
    # Its half-written last line, rejected, is read again from the merged read, whole there.
    conn.execute("DELETE FROM rejects WHERE source_id = ? AND line > ?", (here_id, here_lines))
    conn.execute("UPDATE sources SET lines = ? WHERE id = ?", (here_lines, here_id))
    report = FileReport(path=path)
    with ImportWriter(
        conn, report, repair=bool(merged[13]), source_id=here_id, first_line=here_lines
    ) as writer:
        feed(writer, source_id, here_lines)
        writer.finish()
    conn.execute(_EXTEND_SQL, _extended_counts(conn, here_id, merged, report.new))
    conn.execute("UPDATE sources SET label = ? WHERE id = ? AND label IS NULL", (label, here_id))
    # The box's later imports: its imports less those here (each as often as it came).
    later = Counter(_imports(other, int(source_id))) - Counter(_imports(conn, here_id))
    added: list[tuple[Any, ...]] = []
    for at_path, at in other.execute(
        "SELECT path, imported_at FROM source_imports WHERE source_id = ? ORDER BY rowid",
        (source_id,),
    ).fetchall():
        if later[(at_path, at)] > 0:
            later[(at_path, at)] -= 1
            added.append((here_id, at_path, at))
    conn.executemany(
        "INSERT INTO source_imports (source_id, path, imported_at) VALUES (?, ?, ?)", added
    )
    conn.executemany(
        f"INSERT INTO rejects (source_id, line, reason) VALUES ({here_id:d}, ?, ?)",
        other.execute(
            "SELECT line, reason FROM rejects WHERE source_id = ? AND line > ? ORDER BY line",
            (source_id, here_lines),
        ).fetchall(),
    )
    # Its points are the box's now: one of its own stops before the lines it holds now (the
    # box may keep none to carry: such a point would read them again).
    conn.execute("DELETE FROM resume_points WHERE source_id = ?", (here_id,))
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
