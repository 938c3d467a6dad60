"""Migrations run by name through sqlite-utils, recorded, atomic, and only when pending."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import tunelog
from tests.conftest import EDGE, X86, X86_LINES, undo_migrations
from tunelog.store import MIGRATIONS, Store
from tunelog.store.migrating import MIGRATION_SET, MIGRATIONS_TABLE
from tunelog.store.schema import APPLICATION_ID, MIGRATION_NAMES


def applied_names(path: Path) -> list[str]:
    """The migration names sqlite-utils recorded, in the order they were recorded."""
    with sqlite3.connect(path) as conn:
        return [
            name
            for (name,) in conn.execute(
                f"SELECT name FROM {MIGRATIONS_TABLE} WHERE migration_set = ? ORDER BY id",
                (MIGRATION_SET,),
            )
        ]


def database_at(path: Path, version: int) -> None:
    """A database at schema `version`, as a tunelog of that time wrote it (names untracked)."""
    conn = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:version]:
        step(conn)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.close()


def test_every_migration_has_one_name() -> None:
    assert len(MIGRATION_NAMES) == len(MIGRATIONS) == len(set(MIGRATION_NAMES))
    assert list(MIGRATION_NAMES) == sorted(MIGRATION_NAMES)


def test_a_new_database_records_every_migration_by_name(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db", create=True) as store:
        assert store.schema_version == len(MIGRATIONS)
    assert applied_names(tmp_path / "t.db") == list(MIGRATION_NAMES)


@pytest.mark.parametrize("version", range(1, len(MIGRATIONS)))
def test_a_database_from_before_the_names_migrates_and_records_them(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "old.db"
    database_at(path, version)
    with Store(path) as store:
        assert store.schema_version == len(MIGRATIONS)
    # The first `version` are recorded as found applied, the rest as run now: all, in order.
    assert applied_names(path) == list(MIGRATION_NAMES)


def test_the_count_wins_when_a_later_migration_is_recorded_but_not_counted(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.db"
    with Store(path, create=True):
        pass
    before = MIGRATION_NAMES.index("0016_record_spellings")
    with sqlite3.connect(path) as conn:  # the schema before migration 16 again
        undo_migrations(conn, before)
        conn.execute(f"PRAGMA user_version = {before}")
        assert "record_spellings" not in table_names(conn)
    with Store(path) as store:  # the later migrations run again, though their names were recorded
        assert store.schema_version == len(MIGRATIONS)
    with sqlite3.connect(path) as conn:
        assert "record_spellings" in table_names(conn)  # what migration 16 adds
    assert applied_names(path) == list(MIGRATION_NAMES)


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}


def test_a_failing_migration_leaves_the_database_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    database_at(path, 10)
    from tunelog.store import migrating

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(migrating, "MIGRATIONS", [*MIGRATIONS[:11], broken, *MIGRATIONS[12:]])
    with pytest.raises(RuntimeError, match="disk on fire"), Store(path):
        pass
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 10
        tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables and "holdings" not in tables
    assert MIGRATIONS_TABLE not in tables  # not even sqlite-utils' table: one transaction


def test_opening_a_current_database_does_not_load_sqlite_utils(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with Store(path, create=True):
        pass
    code = (
        "import sys; from tunelog.store import Store\n"
        f"Store({str(path)!r}).close()\n"
        "print('sqlite_utils' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def migrations_table_sql(path: Path) -> list[str]:
    """How the file's `_sqlite_migrations` table and index are declared."""
    with sqlite3.connect(path) as conn:
        return [
            sql
            for (sql,) in conn.execute(
                "SELECT sql FROM sqlite_master WHERE tbl_name = ? ORDER BY name",
                (MIGRATIONS_TABLE,),
            )
        ]


def test_a_new_database_declares_the_table_as_sqlite_utils_does(tmp_path: Path) -> None:
    """A new file gets its names without sqlite-utils, in the table sqlite-utils would make."""
    with Store(tmp_path / "new.db", create=True):
        pass
    database_at(tmp_path / "old.db", 3)
    with Store(tmp_path / "old.db"):  # upgraded through sqlite-utils' Migrations
        pass
    assert migrations_table_sql(tmp_path / "new.db") == migrations_table_sql(tmp_path / "old.db")
    assert len(migrations_table_sql(tmp_path / "new.db")) == 2


def test_creating_a_database_does_not_load_sqlite_utils(tmp_path: Path) -> None:
    code = (
        "import sys; from tunelog.store import Store\n"
        f"Store({str(tmp_path / 'n.db')!r}, create=True).close()\n"
        "Store(':memory:', create=True).close()\n"
        "print('sqlite_utils' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_migration_13_keeps_every_group_s_top_configs(tmp_path: Path) -> None:
    """The kept configs move from one row each to one list per (target, workload); the
    `top_configs` view then reads what the table held, row for row."""
    path = tmp_path / "t.db"
    with Store(path, create=True) as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)])
    with sqlite3.connect(path) as conn:
        undo_migrations(conn, 12)
        conn.execute("PRAGMA user_version = 12")
        before = conn.execute("SELECT * FROM top_configs ORDER BY 1, 2, 3").fetchall()
    assert len(before) > 16
    with Store(path) as store:
        after = store.conn.execute("SELECT * FROM top_configs ORDER BY 1, 2, 3").fetchall()
        groups = store.conn.execute("SELECT count(*) FROM top_config_ids").fetchone()[0]
    assert after == before
    assert groups == len({(target, workload) for target, workload, *_ in before})


def test_migration_18_parses_stored_targets_again_and_offers_their_slots_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database that stored `c -mcpu=cortex-m7` with the `cpu` key alone (before the `c`
    kind took TVM's CPU parser) kept answering its arm_cpu slot with nothing, and a bare
    `-model` as "true": after the migration its targets and slots are a fresh import's."""
    from tunelog import targets

    x86 = X86_LINES[0]
    log = tmp_path / "micro.log"
    log.write_bytes(
        x86
        + x86.replace(
            b"llvm -keys=cpu -mcpu=skylake-avx512 -mtriple=x86_64-pc-linux-gnu",
            b"c -mcpu=cortex-m7",
        )
        + x86.replace(
            b"llvm -keys=cpu -mcpu=skylake-avx512 -mtriple=x86_64-pc-linux-gnu", b"cuda -model"
        )
    )
    old = tmp_path / "old.db"
    with monkeypatch.context() as patched:
        patched.setattr(targets, "_CPU_PARSER_KINDS", frozenset({"llvm"}))
        targets.parse_target.cache_clear()
        with Store(old) as store:
            tunelog.import_paths(store, [str(log)])
            store.conn.execute("UPDATE targets SET model = 'true' WHERE model = '1'")
            store.conn.commit()
    targets.parse_target.cache_clear()
    with sqlite3.connect(old) as conn:
        undo_migrations(conn, 17)
    with Store(old) as store, Store(tmp_path / "new.db") as fresh:
        tunelog.import_paths(fresh, [str(log)])
        for table in ("targets", "slots"):
            query = f"SELECT * FROM {table} ORDER BY 1, 2, 3"
            assert store.conn.execute(query).fetchall() == fresh.conn.execute(query).fetchall()
        assert ("key", "arm_cpu") in {
            row[:2] for row in store.conn.execute("SELECT kind, name FROM slots")
        }
