"""A tunelog database file's connection: opening, migrating on open, closing, transactions."""

from __future__ import annotations

import itertools
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Self, TypeVar

from tunelog.exceptions import (
    DatabaseAccessError,
    DatabaseBusyError,
    DatabaseDamagedError,
    DatabaseNotFoundError,
    DatabaseUnavailableError,
    DiskFullError,
    NewerSchemaError,
    NotATunelogDatabaseError,
    StreamStillOpenError,
)
from tunelog.store.readonly import ReadOnlyRead, read_only_refusal, write_refusal
from tunelog.store.schema import APPLICATION_ID, MIGRATIONS

if TYPE_CHECKING:
    import sqlite_utils

    from tunelog.importreport import FileReport

T = TypeVar("T")

BUSY_TIMEOUT_MS = 60_000  # how long every connection of tunelog waits for a lock
PAGE_SIZE = 16384


class Connection:
    """An open tunelog database: created and migrated on open (see `Store`, which adds the
    imports and queries). `create=False`: a missing file raises DatabaseNotFoundError.
    `read_only=True`: another program's or the user's file, at this tunelog's schema, opened
    without writing (no migration, no journal mode set; temporary tables still work), its
    `-wal`/`-shm` files removed after if opening created them."""

    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        from tunelog.optionvalues import file_path

        self.path = file_path(path, "the database path")
        self.read_only = read_only
        self._reading: ReadOnlyRead | None = None  # read_only: the read, its side files
        # Temporary tables a stream could not drop (another statement of the connection was
        # still being read, e.g. an `each_best` iterator): dropped when one can be.
        self.leftover_tables: list[str] = []
        if not create and self.path != ":memory:" and not os.path.exists(self.path):
            raise DatabaseNotFoundError(
                f"no database at {os.path.abspath(self.path)}: import logs first "
                "(`tunelog import LOGS`), or choose another with --db PATH or TUNELOG_DB"
            )
        if os.path.isdir(self.path):
            raise DatabaseUnavailableError(
                f"{self.path} is a directory: give the database file's path, e.g. "
                f"{os.path.join(self.path, 'tunelog.db')}"
            )
        if self.path != ":memory:" and os.path.exists(self.path) and not os.path.isfile(self.path):
            # SQLite says "disk I/O error" of /dev/null, or waits on a FIFO
            raise DatabaseUnavailableError(
                f"{self.path} is not a regular file (a device, pipe or socket): give the "
                "database file's path with --db"
            )
        if read_only:
            self._reading = ReadOnlyRead(self.path, BUSY_TIMEOUT_MS)
            conn = self._reading.conn
        else:
            try:
                conn = sqlite3.connect(
                    self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
                )
            except sqlite3.Error as exc:
                raise DatabaseUnavailableError(
                    f"cannot open database {self.path}: {exc}; check that its directory exists "
                    "and is writable, or pass another --db"
                ) from exc
        self._conn = conn
        self.closed = False
        self._create = create and not read_only
        # Workload ids by identity, as of `data_version` (see _known_workloads).
        self._workload_ids: dict[tuple[str, str, str, str], int] = {}
        self._workload_ids_as_of: int | None = None
        try:
            self._prepare()
        except BaseException as exc:
            self.close()  # never leave a refused database open (or its -wal/-shm files)
            if not isinstance(exc, sqlite3.DatabaseError):
                raise
            message = str(exc)
            refusal = read_only_refusal(self.path, exc, "run it again") if read_only else None
            if refusal is not None:
                raise refusal from exc
            if "malformed" in message:  # an SQLite file, cut short or overwritten in part
                raise DatabaseDamagedError(
                    f"the database {self.path} is damaged (SQLite says: {message}): restore a "
                    "backup, or import the logs again into a new database"
                ) from exc
            if "not a database" in message:
                raise NotATunelogDatabaseError(
                    f"{self.path} is not a tunelog database (SQLite says: {message}); "
                    "pass another --db path"
                ) from exc
            raise DatabaseUnavailableError(
                f"cannot use database {self.path}: {message}; check that its directory exists "
                "and is writable, or pass another --db"
            ) from exc

    # -- schema -------------------------------------------------------------------------------

    def _prepare(self) -> None:
        conn = self.conn
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        with self.snapshot():  # one read transaction: another process may be migrating
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
        if not (has_tables or version or self._create or self.path == ":memory:"):
            # An empty file (`touch`, or a program that created it and wrote nothing): only
            # a command that adds data makes it a database, as with a missing file.
            raise DatabaseNotFoundError(
                f"{self.path} is empty, no tunelog database yet: import logs into it first "
                f"(`tunelog --db {self.path} import LOGS`), or choose another --db"
            )
        if app_id != APPLICATION_ID and (has_tables or version):
            raise NotATunelogDatabaseError(
                f"{self.path} is an SQLite database but not a tunelog one; pass another --db path"
            )
        if version > len(MIGRATIONS):
            raise NewerSchemaError(
                f"{self.path} was written by a newer tunelog (schema {version}, this one knows "
                f"{len(MIGRATIONS)}); upgrade tunelog"
            )
        if self.read_only:
            if version < len(MIGRATIONS):  # the caller migrates a copy (`store.otherdatabase`)
                raise DatabaseUnavailableError(
                    f"{self.path} is at schema {version}, older than this tunelog's "
                    f"{len(MIGRATIONS)}: read it through a migrated copy "
                    "(`store.otherdatabase.current_schema_path`, as diff does)"
                )
            return
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            if not has_tables:
                # A new file: 16 KB pages (before WAL fixes the size) write a large import
                # with a quarter of the system calls of 4 KB ones (1M lines: sys 1.5 -> 0.6 s).
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < len(MIGRATIONS):
            self._migrate()

    def _migrate(self) -> None:
        from tunelog.store.migrating import migrate

        migrate(self.conn)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: the queries inside see one state of the database."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            # A stream left unfinished (`workloads | head`) may end after its store was
            # closed: its transaction ended with the connection.
            if not self.closed:
                self.conn.execute("COMMIT")

    @property
    def conn(self) -> sqlite3.Connection:
        """The SQLite connection; DatabaseAccessError once the store is closed (SQLite's own
        error says nothing of the store)."""
        if self.closed:
            raise self._closed_error()
        return self._conn

    @conn.setter
    def conn(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _closed_error(self) -> DatabaseAccessError:
        return DatabaseAccessError(
            f"database {self.path}: the store is closed: open it again (open_store)"
        )

    def streamed(self, rows: Iterable[T]) -> Iterator[T]:
        """`rows`, a stream read from this store: one whose store is closed while it is read
        ends with the DatabaseAccessError any call on a closed store raises, not with SQLite's
        own error (its statement went with the connection)."""
        if isinstance(rows, sqlite3.Cursor):
            # Read through an iterator without `close`: `yield from` closes what it reads
            # when the stream is dropped, and a cursor's close raises once the store is
            # closed ("Exception ignored" and a traceback on stderr). The cursor ends with
            # the stream all the same (nothing else holds it).
            rows = itertools.chain(rows)
        try:
            yield from rows
        except sqlite3.ProgrammingError as exc:
            if not self.closed:
                raise
            raise self._closed_error() from exc

    @property
    def db(self) -> sqlite_utils.Database:
        """The same connection as a sqlite-utils Database, for exploring the tables."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    @property
    def schema_version(self) -> int:
        """Number of migrations applied."""
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Close the connection (a stream of rows still open ends with it)."""
        self.closed = True
        if self._reading is not None:
            self._reading.close()
        else:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, traceback: object) -> None:
        self.close()
        if isinstance(exc, sqlite3.Error):  # the Python API gets the CLI's message, no traceback
            raise self._access_error(exc) from exc

    @contextmanager
    def errors_said(self) -> Iterator[None]:
        """SQLite's errors inside the block as DatabaseAccessError, as `with store:` says
        them (for a caller that may not use the store as a context)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self._access_error(exc) from exc

    def _access_error(self, exc: sqlite3.Error) -> DatabaseUnavailableError:
        """SQLite's `exc` as the error the user reads: what to do about a write refused
        (`write_refusal`), else `DatabaseAccessError.of`."""
        return write_refusal(self.path, exc) or DatabaseAccessError.of(self.path, exc)

    @contextmanager
    def _writing(self, report: FileReport) -> Iterator[None]:
        """A write transaction for one file's import; any exception rolls it back."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if self.conn.in_transaction:  # a stream's read transaction (`snapshot`)
                raise StreamStillOpenError(
                    f"cannot write to {self.path}: a query of this store is still being read "
                    "(an iterator such as each_best, each_layer or layer_candidates not "
                    "finished): finish or close it first"
                ) from exc
            refused = write_refusal(self.path, exc)
            if refused is not None:
                raise refused from exc
            if "locked" in str(exc) or "busy" in str(exc):
                raise DatabaseBusyError(
                    f"cannot write to {self.path}: another program is writing it (tunelog "
                    f"waited {BUSY_TIMEOUT_MS // 1000} s for it): run this again once it is done"
                ) from exc
            raise DatabaseUnavailableError(f"cannot write to {self.path}: {exc}") from exc
        try:
            yield
        except BaseException as exc:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc):
                raise DiskFullError(
                    f"the disk holding {self.path} is full ({exc}); nothing of "
                    f"{report.path} was kept: free some space and import it again"
                ) from exc
            raise


def id_list(ids: Sequence[int]) -> str:
    """Integer ids as SQL list text (ints only, so nothing to quote); `NULL` when empty."""
    return ",".join(str(int(i)) for i in ids) or "NULL"
