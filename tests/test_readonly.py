"""What `diff` and `merge` say when a database cannot be read without writing it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tunelog.store import readonly

READONLY = sqlite3.OperationalError("attempt to write a readonly database")
CANTOPEN = sqlite3.OperationalError("unable to open database file")


@pytest.mark.parametrize(
    ("journal", "directory_writable", "error", "said"),
    [
        (
            True,
            True,
            READONLY,
            "{db} holds an unfinished write (run.db-journal, left by a program that stopped "
            "while writing), which must be rolled back before it is read: open it once with "
            "`sqlite3 {db} 'PRAGMA quick_check'` (or any command of the tunelog that wrote "
            "it), then merge again",
        ),
        (
            False,
            False,
            READONLY,
            "{db} cannot be read without writing beside it (SQLite keeps a WAL database's -shm "
            "file in its directory, which this user, or this read-only file system, cannot "
            "write): copy it to a writable directory and merge again with the copy",
        ),
        (
            False,
            True,
            READONLY,
            "cannot read {db} without writing it (attempt to write a readonly database)",
        ),
        (  # a WAL database on a read-only file system: SQLite cannot open its -shm
            False,
            False,
            CANTOPEN,
            "{db} cannot be read without writing beside it (SQLite keeps a WAL database's -shm "
            "file in its directory, which this user, or this read-only file system, cannot "
            "write): copy it to a writable directory and merge again with the copy",
        ),
        (False, True, CANTOPEN, None),  # not a read that had to write: the caller says
        (
            False,
            True,
            sqlite3.OperationalError("database is locked"),
            "{db} is being written by another program (SQLite says: database is locked): "
            "merge again once it is done",
        ),
        (False, True, sqlite3.DatabaseError("file is not a database"), None),
    ],
    ids=[
        "hot-journal",
        "directory-not-writable",
        "other",
        "read-only-file-system",
        "cannot-open",
        "locked",
        "not-a-readonly-error",
    ],
)
def test_a_read_that_had_to_write_is_explained(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    journal: bool,
    directory_writable: bool,
    error: sqlite3.Error,
    said: str | None,
) -> None:
    db = tmp_path / "run.db"
    db.write_bytes(b"")
    if journal:
        (tmp_path / "run.db-journal").write_bytes(b"")
    access = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda path, mode: directory_writable if str(path) == str(tmp_path) else access(path, mode),
    )
    refusal = readonly.read_only_refusal(str(db), error, "merge again")
    assert (str(refusal) if refusal is not None else None) == (
        said.format(db=db) if said is not None else None
    )


def test_side_files_are_looked_for_beside_the_file_a_link_names(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    db = tmp_path / "real" / "run.db"
    db.write_bytes(b"")
    link = tmp_path / "run.db"
    link.symlink_to(db)
    assert not readonly.has_side_files(str(link))
    (tmp_path / "real" / "run.db-wal").write_bytes(b"")
    assert readonly.has_side_files(str(link))


def test_releasing_never_creates_a_database_that_went_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database moved away after the read (its side files left): the release opens the
    path without creating it, so no empty file appears where it was."""
    gone = tmp_path / "moved.db"
    (tmp_path / "moved.db-wal").write_bytes(b"")
    monkeypatch.setattr(os, "access", lambda path, mode: True)  # as if it were still there
    readonly.release_side_files(str(gone))
    assert not gone.exists()


def test_side_files_a_read_left_while_its_cursor_lived_on_are_released_at_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during a merge: the traceback held a cursor of the other database, SQLite kept
    the closed connection alive for it, and its -wal/-shm stayed beside the user's file."""
    from collections.abc import Callable

    db = str(tmp_path / "box.db")
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(100)])
    conn.close()
    assert not readonly.has_side_files(db)
    at_exit: list[tuple[Callable[..., object], tuple[object, ...]]] = []
    monkeypatch.setattr("atexit.register", lambda f, *a: at_exit.append((f, a)))
    reading = readonly.ReadOnlyRead(db, 1000)
    cursor = reading.conn.execute("SELECT x FROM t")
    cursor.fetchone()  # a statement still being read, as when the interrupt came
    reading.close()
    assert readonly.has_side_files(db) and len(at_exit) == 1
    del cursor  # the traceback gone: the statement, then the connection, end
    function, args = at_exit[0]
    function(*args)
    assert not readonly.has_side_files(db)
