"""Applying the schema's migrations: sqlite-utils' named, tracked `Migrations`.

`PRAGMA user_version` (the number of migrations applied) stays the quick test every open makes,
so a database at the current schema never loads sqlite-utils (about 40 ms of a small command's
run), and a new, empty file is given every migration directly, its names recorded in the same
table (a temporary database per --source question must not pay for it either). When an older
database has migrations pending, `migrate` runs them by name through
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
# The number of migrations up to the one that stores each workload's facts (see its catch-up).
FACTS_MIGRATION = MIGRATION_NAMES.index("0012_workload_facts") + 1


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the database on `conn` (autocommit mode) to the current schema, atomically."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read under the write lock: another process may have migrated meanwhile.
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version == 0:
            _create_current(conn)
        elif version < len(MIGRATIONS):
            _upgrade(conn, version)
        if 0 < version < FACTS_MIGRATION:  # its catch-up: the facts of the workloads held
            from tunelog.store.workloadfacts import fill_workload_facts

            fill_workload_facts(conn)
        if version < len(MIGRATIONS):
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _create_current(conn: sqlite3.Connection) -> None:
    """A new, empty file: every migration in order and its name recorded, as sqlite-utils
    would, without loading it (a --source/--label question and diff build a temporary database
    each time: sqlite-utils would cost them about 100 ms)."""
    for step in MIGRATIONS:
        step(conn)
    # The table sqlite-utils' Migrations.ensure_migrations_table creates, as it creates it.
    conn.execute(
        f'CREATE TABLE "{MIGRATIONS_TABLE}" (\n'
        '   "id" INTEGER PRIMARY KEY,\n'
        '   "migration_set" TEXT,\n'
        '   "name" TEXT,\n'
        '   "applied_at" TEXT\n'
        ")"
    )
    conn.execute(
        f'CREATE UNIQUE INDEX "idx_{MIGRATIONS_TABLE}_migration_set_name"\n'
        f'    ON "{MIGRATIONS_TABLE}" ("migration_set", "name")'
    )
    _record_first_as_applied(conn, len(MIGRATIONS))


def _upgrade(conn: sqlite3.Connection, version: int) -> None:
    """An older database: the pending migrations by name, through sqlite-utils."""
    import sqlite_utils

    # Not sqlite-utils' defaults: no recursive triggers, no plugins on tunelog's connection.
    db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
    migrations = migration_set()
    migrations.ensure_migrations_table(db)
    _record_first_as_applied(conn, version)
    migrations.apply(db)


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
