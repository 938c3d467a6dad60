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
