"""Another tunelog database, read as it is: `merge`'s inputs and a database side of `diff`.

Such a file is the user's, not the database the command writes: it is checked (a tunelog
database, of a schema this tunelog knows), read without writing, and never migrated in place.
A database of an older schema is read from a migrated temporary copy: migrating the file
itself would leave it unreadable to the older tunelog that wrote it.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from tunelog.exceptions import (
    DatabaseDamagedError,
    NewerSchemaError,
    NotATunelogDatabaseError,
)
from tunelog.store.connection import BUSY_TIMEOUT_MS, Connection
from tunelog.store.readonly import ReadOnlyRead, read_only_refusal
from tunelog.store.schema import APPLICATION_ID, MIGRATIONS

# What each command takes, for the error refusing a file that is no tunelog database.
TAKES = {
    "merge": "merge takes databases, `tunelog import` takes log files",
    "diff": "diff compares tunelog databases, log files or directories of logs",
}


@contextmanager
def current_schema_path(path: str, command: str) -> Iterator[tuple[str, int]]:
    """(the path of `path`'s database at this tunelog's schema, the schema the file is at):
    `path` itself when its schema is current (open it with `read_only=True`), else a migrated
    temporary copy; `path` is only read. Refuses what `checked_version` refuses (`command`:
    which command reads it)."""
    with read_only_connection(path) as conn:
        version = checked_version(conn, path, command)
        if version < len(MIGRATIONS):
            with _migrated_copy(conn, command) as copy:
                yield copy, version
            return
    yield path, version


@contextmanager
def read_only_current(path: str, command: str) -> Iterator[tuple[sqlite3.Connection, int]]:
    """A connection reading `path`'s database at this tunelog's schema, and the schema the file
    is at: the file itself, read-only, or a migrated temporary copy of an older one. Refuses
    what `checked_version` refuses (`command`: which command reads it)."""
    with read_only_connection(path) as conn:
        version = checked_version(conn, path, command)
        if version == len(MIGRATIONS):
            yield conn, version
            return
        with _migrated_copy(conn, command) as copy, Connection(copy) as migrated:
            yield migrated.conn, version


@contextmanager
def read_only_connection(path: str) -> Iterator[sqlite3.Connection]:
    """A read-only connection to `path`'s database, closed after, with the `-wal`/`-shm` files
    it created released (`readonly.ReadOnlyRead`)."""
    reading = ReadOnlyRead(path, BUSY_TIMEOUT_MS)
    try:
        yield reading.conn
    finally:
        reading.close()


@contextmanager
def _migrated_copy(conn: sqlite3.Connection, command: str) -> Iterator[str]:
    """The path of a copy of `conn`'s database migrated to this tunelog's schema, in a
    temporary directory removed afterwards (`conn` is read once, then closed)."""
    with tempfile.TemporaryDirectory(prefix=f"tunelog-{command}-") as tmp:
        copy = os.path.join(tmp, "copy.db")
        dest = sqlite3.connect(copy)
        try:
            conn.backup(dest)
        finally:
            dest.close()
        conn.close()
        with Connection(copy):  # opening migrates the copy, never the user's file
            pass
        yield copy


def checked_version(conn: sqlite3.Connection, path: str, command: str) -> int:
    """The schema version of a tunelog database; refuses anything else, or a newer schema."""
    takes = TAKES[command]
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        refusal = read_only_refusal(path, exc, f"{command} again")
        if refusal is not None:  # SQLite had to write first: a hot journal, a WAL's -shm
            raise refusal from exc
        if "malformed" in str(exc):  # an SQLite file cut short or overwritten in part
            raise DatabaseDamagedError(
                f"the database {path} is damaged (SQLite says: {exc}): restore a backup, or "
                "import its logs again"
            ) from exc
        raise NotATunelogDatabaseError(
            f"{path} is not a tunelog database (SQLite says: {exc}); {takes}"
        ) from exc
    if app_id != APPLICATION_ID or not tables:
        raise NotATunelogDatabaseError(f"{path} is not a tunelog database; {takes}")
    if version > len(MIGRATIONS):
        raise NewerSchemaError(
            f"{path} was written by a newer tunelog (schema {version}, this one knows "
            f"{len(MIGRATIONS)}); upgrade tunelog to {command} it"
        )
    return version


def refuse_damaged(conn: sqlite3.Connection, path: str) -> None:
    """DatabaseDamagedError naming `path` when SQLite's quick_check finds its file damaged.

    SQLite reads a damaged page only as far as it must: a merge read on, copying whatever the
    bad pages held as records (thousands of a damaged 20k-record file counted as duplicates),
    or failed with "malformed" as if the database merged into were damaged. The check reads
    every page once (0.6 s for a 185 MB file; the merge reads them all anyway).
    """
    try:
        found = "\n".join(str(row[0]) for row in conn.execute("PRAGMA quick_check(2)"))
    except sqlite3.OperationalError:
        raise  # locked, or cannot be opened: not damage (the merge says what it is)
    except sqlite3.DatabaseError as exc:
        found = str(exc)
    # One problem a line, after a "*** in database main ***" heading.
    problems = [line for line in found.splitlines() if line and not line.startswith("***")]
    if problems != ["ok"]:
        raise DatabaseDamagedError(
            f"the database {path} is damaged (SQLite's check: {'; '.join(problems)}): nothing "
            "was merged; restore a backup of it, or import its logs again"
        )
