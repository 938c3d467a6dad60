"""The database schema and its migrations (PRAGMA user_version counts those applied)."""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils

APPLICATION_ID = 0x54554E4C  # "TUNL": marks the file as a tunelog database


def _migration_1(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE sources (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            label TEXT,
            sha256 TEXT NOT NULL,
            size INTEGER NOT NULL,
            lines INTEGER NOT NULL,
            records INTEGER NOT NULL,
            duplicates INTEGER NOT NULL,
            comments INTEGER NOT NULL,
            blank INTEGER NOT NULL,
            rejected INTEGER NOT NULL,
            imported_at TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX sources_sha256 ON sources(sha256)")
    # zstd dictionaries the stored lines are compressed with (records.dict_id; NULL: plain).
    db.execute("CREATE TABLE dictionaries (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
    db.execute(
        """
        CREATE TABLE targets (
            id INTEGER PRIMARY KEY,
            target TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            keys TEXT NOT NULL,
            model TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE workloads (
            id INTEGER PRIMARY KEY,
            task_name TEXT NOT NULL,
            template_key TEXT NOT NULL,
            args TEXT NOT NULL,
            -- The log version is part of the identity: TVM >= 0.7 skips v0.1 lines, so a
            -- v0.1 record must never hold a slot a v0.2 record of the same task competes for.
            version TEXT NOT NULL,
            UNIQUE (task_name, template_key, args, version)
        )"""
    )
    db.execute(
        """
        CREATE TABLE records (
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES sources(id),
            line INTEGER NOT NULL,
            target_id INTEGER NOT NULL REFERENCES targets(id),
            workload_id INTEGER NOT NULL REFERENCES workloads(id),
            config_index INTEGER NOT NULL,
            error_no INTEGER NOT NULL,
            mean_cost REAL NOT NULL,
            all_cost REAL NOT NULL,
            timestamp REAL NOT NULL,
            version TEXT NOT NULL,
            tvm_version TEXT,
            hash INTEGER NOT NULL UNIQUE,
            raw BLOB NOT NULL,
            dict_id INTEGER REFERENCES dictionaries(id)
        )"""
    )
    # No index on records(workload_id): it cost a third of the insert time; summaries read
    # `tallies` and `slots`, and only `export --top-k` scans records.
    db.execute(
        """
        CREATE TABLE slots (
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            workload_id INTEGER NOT NULL,
            record_id INTEGER NOT NULL,
            mean_cost REAL NOT NULL,
            PRIMARY KEY (kind, name, workload_id)
        ) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX slots_record ON slots(record_id)")
    # Records per (target, workload, error number), kept on import so summaries never scan.
    db.execute(
        """
        CREATE TABLE tallies (
            target_id INTEGER NOT NULL,
            workload_id INTEGER NOT NULL,
            error_no INTEGER NOT NULL,
            records INTEGER NOT NULL,
            min_all_cost REAL NOT NULL,
            max_all_cost REAL NOT NULL,
            PRIMARY KEY (target_id, workload_id, error_no)
        ) WITHOUT ROWID"""
    )
    db.execute(
        """
        CREATE TABLE rejects (
            source_id INTEGER NOT NULL REFERENCES sources(id),
            line INTEGER NOT NULL,
            reason TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX rejects_source ON rejects(source_id, line)")


# Append only: a database's PRAGMA user_version is the number of migrations applied.
MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [_migration_1]
