"""A resume point's last line read without its line end (`ResumePoint.tail`): whether the
file is still those bytes, grew past a rejected half-written line, and that line taken out of
its source before it is read again (store.importing's resumes)."""

from __future__ import annotations

import os
import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tunelog.inputs import OpenedLog
    from tunelog.store.resume import ResumePoint


def grown_past_rejected_tail(conn: sqlite3.Connection, point: ResumePoint) -> bool:
    """Whether the file grew past a last line read without its line end that was
    rejected (a line still being written): then it is read on from that line, which is
    read again (`forget_rejected_tail`). A tail that was a record, a comment or blank
    is not known to be whole: such a file is read in full when it changes."""
    try:
        size = os.path.getsize(point.real_path)
    except OSError:
        return False
    if size <= point.end.offset + point.tail:
        return False  # not grown: the same bytes, known without reading (`unchanged_since`)
    return (
        conn.execute(
            "SELECT 1 FROM rejects WHERE source_id = ? AND line = ?",
            (point.source_id, point.end.lines + 1),
        ).fetchone()
        is not None
    )


def unchanged_since(point: ResumePoint, opened: OpenedLog) -> bool:
    """Whether the file is the bytes its last import read, a last line without line end
    included (no longer, the same first bytes): known without reading it again (a watch
    after an import that read a half-written line made it a second source)."""
    from tunelog.inputs import OpenedLog

    try:
        size = os.path.getsize(point.real_path)
    except OSError:
        return False
    if size != point.end.offset + point.tail:
        return False

    after = OpenedLog.after(opened.source, point.end)
    if after is None:
        return False
    after.close()
    return True


def forget_rejected_tail(conn: sqlite3.Connection, point: ResumePoint) -> None:
    """Take the rejected unfinished last line out of its source before it is read again."""
    line = point.end.lines + 1
    conn.execute("DELETE FROM rejects WHERE source_id = ? AND line = ?", (point.source_id, line))
    conn.execute(
        "UPDATE sources SET lines = lines - 1, rejected = rejected - 1 WHERE id = ?",
        (point.source_id,),
    )
