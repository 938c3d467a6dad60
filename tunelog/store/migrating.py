"""Applying the schema's migrations: sqlite-utils' named, tracked `Migrations`.

`PRAGMA user_version` (the number of migrations applied) stays the quick test every open makes,
so a database at the current schema never loads sqlite-utils (about 40 ms of a small command's
run). When migrations are pending, `migrate` runs them by name through
`sqlite_utils.Migrations`, which records each in its `_sqlite_migrations` table; the whole
upgrade is one write transaction (sqlite-utils nests each migration in a savepoint), so a
failure leaves the database as it was, and two processes never migrate at once.

Databases written before the migrations were tracked by name carry only the count: the names
of the first `user_version` migrations are recorded as applied first. The count wins where the
two disagree (tests build older schemas by undoing migrations and lowering the count).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tunelog.store.schema import APPLICATION_ID, MIGRATION_NAMES, MIGRATIONS

if TYPE_CHECKING:
    import sqlite_utils

MIGRATION_SET = "tunelog"
MIGRATIONS_TABLE = "_sqlite_migrations"  # sqlite-utils' own table name


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the database on `conn` (autocommit mode) to the current schema, atomically."""
    import sqlite_utils

    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read under the write lock: another process may have migrated meanwhile.
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version < len(MIGRATIONS):
            db = sqlite_utils.Database(conn)
            migrations = migration_set()
            migrations.ensure_migrations_table(db)
            _record_first_as_applied(conn, version)
            migrations.apply(db)
            if version < 12:  # migration 12's catch-up: the facts of the workloads already held
                from tunelog.store.workloadfacts import fill_workload_facts

                fill_workload_facts(conn)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def migration_set() -> sqlite_utils.Migrations:
    """Every migration of the schema, by name, in order."""
    from sqlite_utils import Migrations

    migrations = Migrations(MIGRATION_SET)
    for name, step in zip(MIGRATION_NAMES, MIGRATIONS, strict=True):
        migrations(name=name)(_on_connection(step))
    return migrations


def _on_connection(step: Callable[[sqlite3.Connection], None]) -> Callable[..., None]:
    """A migration written for a plain connection, as sqlite-utils calls it (with a Database)."""

    def apply(db: sqlite_utils.Database) -> None:
        step(db.conn)

    apply.__name__ = step.__name__
    return apply


def _record_first_as_applied(conn: sqlite3.Connection, version: int) -> None:
    """The first `version` migrations recorded as applied and no others (the count wins)."""
    done, pending = MIGRATION_NAMES[:version], MIGRATION_NAMES[version:]
    conn.executemany(
        f"DELETE FROM {MIGRATIONS_TABLE} WHERE migration_set = ? AND name = ?",
        [(MIGRATION_SET, name) for name in pending],
    )
    known = {
        name
        for (name,) in conn.execute(
            f"SELECT name FROM {MIGRATIONS_TABLE} WHERE migration_set = ?", (MIGRATION_SET,)
        )
    }
    # sqlite-utils writes str(datetime.now(UTC)); the same form for the names recorded here.
    now = str(datetime.now(UTC))
    conn.executemany(
        f"INSERT INTO {MIGRATIONS_TABLE} (migration_set, name, applied_at) VALUES (?, ?, ?)",
        [(MIGRATION_SET, name, now) for name in done if name not in known],
    )
