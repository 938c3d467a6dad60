"""Reading a database without writing it: a user's file that `diff` compares or `merge` reads.

A read-only connection never writes the file, but SQLite needs a WAL database's `-wal` and
`-shm` files beside it to read it, and only a connection that may write removes them when the
last one closes. So the files a read-only read created are released afterwards by a plain
connection that reads only the schema: SQLite removes them only if no other connection holds the
database. A database in rollback-journal mode needs no side file, and one with a hot journal
(left by a writer that stopped) must be rolled back before anyone reads it: neither is opened
for writing here; the second is refused with what to do (`read_only_refusal`).
"""

from __future__ import annotations

import atexit
import os
import shlex
import sqlite3
from pathlib import Path

from tunelog.exceptions import DatabaseReadOnlyError, DatabaseUnavailableError

SIDE_SUFFIXES = ("-wal", "-shm")


class ReadOnlyRead:
    """A read-only connection to the database at `path` (`conn`) and, once closed, the
    release of the `-wal`/`-shm` files opening it created (`release_side_files`)."""

    def __init__(self, path: str, busy_timeout_ms: int) -> None:
        self.path = path
        self._created = not has_side_files(path)  # before opening: SQLite makes them then
        self.conn = connect_read_only(path, busy_timeout_ms)

    def close(self) -> None:
        """Close the connection, then release the side files it created (once).

        Closed by an exception (Ctrl-C during a merge), the connection may live on: a cursor
        of it still being read is held by the exception's traceback, and SQLite ends the
        connection only when that statement is finalized, so the files cannot go yet. They
        are released again when the program exits, once the traceback is gone.
        """
        self.conn.close()
        if self._created:
            self._created = False
            release_side_files(self.path)
            if has_side_files(self.path):
                atexit.register(release_side_files, self.path)


def connect_read_only(path: str, busy_timeout_ms: int) -> sqlite3.Connection:
    """A connection that can only read the database at `path` (temporary tables aside)."""
    uri = Path(path).absolute().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
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
    """What to tell the user when reading `path` read-only failed for a reason of its own
    (another program writing it; SQLite having to write first: a hot journal, or a WAL
    database's `-shm` in a directory or file system this user cannot write), else None;
    `then`: what to run again afterwards."""
    message = str(error)
    if "locked" in message or "busy" in message:
        return DatabaseUnavailableError(
            f"{path} is being written by another program (SQLite says: {message}): {then} "
            "once it is done"
        )
    if "readonly" not in message and "unable to open" not in message:
        return None
    real = os.path.realpath(path)
    if os.path.exists(real + "-journal"):
        return DatabaseUnavailableError(
            f"{path} holds an unfinished write ({Path(real).name}-journal, left by a program "
            f"that stopped while writing), which must be rolled back before it is read: open "
            f"it once with `sqlite3 {shlex.quote(path)} 'PRAGMA quick_check'` (or any command "
            f"of the tunelog that wrote it), then {then}"
        )
    if not os.access(os.path.dirname(real) or ".", os.W_OK):
        return DatabaseUnavailableError(
            f"{path} cannot be read without writing beside it (SQLite keeps a WAL database's "
            "-shm file in its directory, which this user, or this read-only file system, "
            f"cannot write): copy it to a writable directory and {then} with the copy"
        )
    if "unable to open" in message:
        return None  # not a read that had to write: the caller says what it is
    return DatabaseUnavailableError(f"cannot read {path} without writing it ({message})")


def write_refusal(path: str, error: sqlite3.Error) -> DatabaseReadOnlyError | None:
    """What to tell the user when SQLite refused to write the database at `path` ("attempt to
    write a readonly database"), else None: the file is read-only, or its `-wal`/`-shm` files
    are (SQLite gives them the database's mode when it creates them: a read while the file was
    read-only leaves them so, and every write after it fails), or its directory is not
    writable."""
    if "readonly" not in str(error):
        return None
    real = os.path.realpath(path)
    quoted = shlex.quote(path)
    if not os.access(real, os.W_OK):
        return DatabaseReadOnlyError(
            f"{path} is read-only: make it writable (chmod u+w {quoted}) or choose another --db"
        )
    stuck = [real + s for s in SIDE_SUFFIXES if os.path.exists(real + s)]
    if any(not os.access(side, os.W_OK) for side in stuck):
        return DatabaseReadOnlyError(
            f"the -wal/-shm files beside {path} are read-only (made by a read while the "
            "database was read-only, or by another user): once no program uses the database, "
            f"make them writable (chmod u+w {' '.join(shlex.quote(s) for s in stuck)}) or "
            "remove them"
        )
    if not os.access(os.path.dirname(real) or ".", os.W_OK):
        return DatabaseReadOnlyError(
            f"cannot write to {path}: its directory is not writable (SQLite writes its -wal "
            "and -shm files there): make it writable or choose another --db"
        )
    return None
