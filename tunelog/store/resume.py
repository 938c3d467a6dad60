"""Resume points: where the import of a plain file stopped (table `resume_points`).

A tuner appends to its log while tunelog imports it again and again (`tunelog watch`, or
`import` by hand). A file imported before from the same (real) path whose first bytes are
unchanged is read on from the end of the last complete line read: only the appended lines are
parsed and deduplicated, under the same source. One row per real path; the newest import of the
path replaces it. Compressed files and stdin have none (they are always read in full).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass

from tunelog.inputs import LineEnd


@dataclass(frozen=True)
class ResumePoint:
    """A file's resume point: its source, the line end read up to, and what followed it.

    `tail`: bytes read past `end` (a last line without line end that a plain import took as
    it was); such a file is read in full when it changes, since that line may have grown.
    """

    real_path: str
    source_id: int
    end: LineEnd
    tail: int
    repair: bool


def real_path(path: str) -> str:
    """The key of a file's resume point: `./a.log`, `a.log` and a symlink to it are one file."""
    return os.path.realpath(path)


def load(conn: sqlite3.Connection, path: str) -> ResumePoint | None:
    """The resume point of the file at `path`, if one was imported from there."""
    key = real_path(path)
    row = conn.execute(
        """SELECT source_id, offset, lines, prefix_hash, tail, repair
           FROM resume_points WHERE real_path = ?""",
        (key,),
    ).fetchone()
    if row is None:
        return None
    source_id, offset, lines, prefix_hash, tail, repair = row
    return ResumePoint(key, int(source_id), LineEnd(offset, lines, prefix_hash), tail, bool(repair))


def save(conn: sqlite3.Connection, point: ResumePoint) -> None:
    """Store (or replace) the resume point of a file, inside the import's transaction."""
    conn.execute(
        """INSERT OR REPLACE INTO resume_points
           (real_path, source_id, offset, lines, prefix_hash, tail, repair)
           VALUES (?, ?, ?, ?, ?, ?, ?)""",
        (
            point.real_path,
            point.source_id,
            point.end.offset,
            point.end.lines,
            point.end.prefix_hash,
            point.tail,
            int(point.repair),
        ),
    )


# The time of a source's newest import (`source_imports`; a database of an older schema may
# hold only `sources.imported_at`).
_LAST_IMPORT_SQL = """SELECT coalesce(
                          (SELECT max(imported_at) FROM source_imports WHERE source_id = ?),
                          (SELECT imported_at FROM sources WHERE id = ?))"""


def carry(conn: sqlite3.Connection, other: sqlite3.Connection, merged: int, here: int) -> None:
    """Give source `here` (the merge's copy of `other`'s source `merged`, all its lines) the
    resume points `other` kept for it: a tuner's log imported on one box, merged into a team
    database, then imported there as it grows, is read on from where that box stopped, under
    that one source (as importing it here would). Of two points of one path, the one of the
    newer import stays (as a newer import replaces it; of two of `here` itself, the further);
    `here`'s import times are the merged source's, copied before. A point whose file changed
    since is no harm: its first bytes are checked before any resume (`load`'s caller)."""
    for real, offset, lines, prefix_hash, tail, repair in other.execute(
        """SELECT real_path, offset, lines, prefix_hash, tail, repair FROM resume_points
           WHERE source_id = ? ORDER BY real_path""",
        (merged,),
    ).fetchall():
        held = conn.execute(
            "SELECT source_id, offset FROM resume_points WHERE real_path = ?", (real,)
        ).fetchone()
        if held is not None and int(held[0]) == here:
            if int(held[1]) >= offset:  # the one source read on (a merge's read on): further
                continue
        elif held is not None and _last_import(conn, here) <= _last_import(conn, int(held[0])):
            continue
        save(conn, ResumePoint(real, here, LineEnd(offset, lines, prefix_hash), tail, bool(repair)))


def _last_import(conn: sqlite3.Connection, source_id: int) -> str:
    (at,) = conn.execute(_LAST_IMPORT_SQL, (source_id, source_id)).fetchone()
    return str(at or "")
