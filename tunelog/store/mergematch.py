"""Which source here a merged source already is: the same bytes, the same read of a file
whose bytes are unknown, or an earlier read of a file that grew since (`store.merging` asks,
in that order, and keeps no trace of a merged source that adds nothing to the one found)."""

from __future__ import annotations

import sqlite3
from typing import Any

from tunelog.store.holdings import same_lines


def same_bytes(
    conn: sqlite3.Connection, sha256: str, where: str, params: tuple[Any, ...]
) -> tuple[int, str] | None:
    """(id, path) of the first source here with these bytes (and the extra condition)."""
    row = conn.execute(
        f"SELECT id, path FROM sources WHERE sha256 = ? {where} ORDER BY id LIMIT 1",
        (sha256, *params),
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def same_lines_here(
    conn: sqlite3.Connection, source_id: int, path: str, read: tuple[Any, ...], label: str | None
) -> tuple[int, str] | None:
    """(id, path) of the source here that is the same read as the merged one, whose bytes
    are unknown (a file that grew keeps no SHA-256): from `path`, unknown bytes too, the
    same `read` (lines, comments, blank, rejected and the time it was imported, which a
    merge keeps) and the same record lines as `source_id`. An empty SHA-256 names no bytes:
    two reads of one path that grew apart are two sources. Its label is asked only of a
    source that holds no record line (its lines say nothing then): one given here since
    (`import --label` of the file) is no other read, as for known bytes (`merging`'s
    `_already_here` says which label stays)."""
    for other_id, other_path, other_label, held in conn.execute(
        """SELECT id, path, label, records + duplicates FROM sources
           WHERE sha256 = '' AND id != ? AND path = ?
           AND lines = ? AND comments = ? AND blank = ? AND rejected = ?
           AND imported_at IS ? ORDER BY id""",
        (source_id, path, *read),
    ).fetchall():
        if (held or other_label == label) and same_lines(conn, int(other_id), source_id):
            return (int(other_id), str(other_path))
    return None


def grown_here(
    conn: sqlite3.Connection, source_id: int, path: str, imported_at: str
) -> tuple[int, str] | None:
    """(id, path) of the source here that is the merged one's file read on since (its
    resume point came with an earlier merge): from `path`, first imported at the same
    time, its record lines starting with the merged one's."""
    for other_id, other_path in conn.execute(
        """SELECT id, path FROM sources WHERE id != ? AND path = ? AND imported_at IS ?
           AND lines > 0 ORDER BY id""",
        (source_id, path, imported_at),
    ).fetchall():
        if same_lines(conn, int(other_id), source_id, prefix=True):
            return (int(other_id), str(other_path))
    return None
