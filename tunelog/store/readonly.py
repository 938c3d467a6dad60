"""Reading a database without writing it: a user's file that `diff` compares or `merge` reads.

A read-only connection never writes the file, but SQLite needs a WAL database's `-wal` and
`-shm` files beside it to read it, and only a connection that may write removes them when the
last one closes. So the files a read-only read created are released afterwards by a plain
connection that reads nothing: SQLite removes them only if no other connection holds the
database. A database in rollback-journal mode needs no side file, and one with a hot journal
(left by a writer that stopped) must be rolled back before anyone reads it: neither is opened
for writing here; the second is refused with what to do (`read_only_refusal`).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from tunelog.exceptions import DatabaseUnavailableError

BUSY_TIMEOUT_MS = 60_000  # how long every connection of tunelog waits for a lock
SIDE_SUFFIXES = ("-wal", "-shm")


def connect_read_only(path: str) -> sqlite3.Connection:
    """A connection that can only read the database at `path` (temporary tables aside)."""
    uri = Path(path).absolute().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    except sqlite3.Error as exc:
        raise DatabaseUnavailableError(f"cannot read database {path}: {exc}") from exc
    return conn


def has_side_files(path: str) -> bool:
    """Whether a WAL database's `-wal` or `-shm` file lies beside the file `path` names
    (beside the file a symbolic link points to: SQLite puts them there)."""
    real = os.path.realpath(path)
    return any(os.path.exists(real + suffix) for suffix in SIDE_SUFFIXES)


def release_side_files(path: str) -> None:
    """After a read-only read that found no `-wal`/`-shm` beside `path` and closed: let SQLite
    remove those it created. Only a WAL database's, with no hot journal, that this user may
    write (else SQLite opens it read-only, which removes nothing); never creating a file (the
    database may have been moved meanwhile). SQLite removes them when the last connection
    closes, if no other connection holds the database; a log another process committed to in
    the meantime is checkpointed into the file first, as that process's own last close would
    have done (nothing is lost or changed in what the database holds)."""
    real = os.path.realpath(path)
    if (
        not has_side_files(real)
        or os.path.exists(real + "-journal")
        or not os.access(real, os.R_OK | os.W_OK)
    ):
        return
    try:
        conn = sqlite3.connect(
            Path(real).as_uri() + "?mode=rw", uri=True, isolation_level=None, timeout=1.0
        )
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        pass  # the files stay: harmless, as a writer's crash would leave them


def read_only_refusal(
    path: str, error: sqlite3.Error, then: str
) -> DatabaseUnavailableError | None:
    """What to tell the user when reading `path` read-only failed because SQLite had to write
    (`error`: SQLITE_READONLY), else None; `then`: what to run again afterwards."""
    if "readonly" not in str(error):
        return None
    real = os.path.realpath(path)
    if os.path.exists(real + "-journal"):
        return DatabaseUnavailableError(
            f"{path} holds an unfinished write ({Path(real).name}-journal, left by a program "
            f"that stopped while writing), which must be rolled back before it is read: open "
            f"it once with `sqlite3 {path} 'PRAGMA quick_check'` (or any command of the "
            f"tunelog that wrote it), then {then}"
        )
    if not os.access(os.path.dirname(real) or ".", os.W_OK):
        return DatabaseUnavailableError(
            f"{path} cannot be read without writing beside it (SQLite keeps a WAL database's "
            "-shm file in its directory, which this user cannot write): copy it to a "
            f"writable directory and {then} with the copy"
        )
    return DatabaseUnavailableError(f"cannot read {path} without writing it ({error})")
