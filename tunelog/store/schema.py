"""The database schema: its migrations, each named (PRAGMA user_version counts those applied).

Each migration takes the plain sqlite3 connection and holds its own frozen SQL; sqlite-utils'
`Migrations` runs the pending ones by name (`store.migrating`), loaded only when one is
pending, so opening a current database (every command) does not pay for it. The migrations
live in `migrations_tables` (1-5), `migrations_views` (6) and `migrations_later` (7-15).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from tunelog.store.migrations_later import (
    _migration_7,
    _migration_8,
    _migration_9,
    _migration_10,
    _migration_11,
    _migration_12,
    _migration_13,
    _migration_14,
    _migration_15,
    _migration_16,
    fill_run_marks,
    fill_top_config_ids,
    fill_trial_runs,
    sources_summary_of_migration_9,
    sources_summary_of_migration_11,
)
from tunelog.store.migrations_tables import (
    TOP_CONFIGS_KEPT,
    _migration_1,
    _migration_2,
    _migration_3,
    _migration_4,
    _migration_5,
    fill_top_configs,
)
from tunelog.store.migrations_views import _migration_6
from tunelog.store.msidentities import _migration_17
from tunelog.store.reparsing import _migration_18, _migration_19

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "MIGRATION_NAMES",
    "TOP_CONFIGS_KEPT",
    "fill_run_marks",
    "fill_top_config_ids",
    "fill_top_configs",
    "fill_trial_runs",
    "sources_summary_of_migration_9",
    "sources_summary_of_migration_11",
]

APPLICATION_ID = 0x54554E4C  # "TUNL": marks the file as a tunelog database

# Append only: a database's PRAGMA user_version is the number of migrations applied.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _migration_1,
    _migration_2,
    _migration_3,
    _migration_4,
    _migration_5,
    _migration_6,
    _migration_7,
    _migration_8,
    _migration_9,
    _migration_10,
    _migration_11,
    _migration_12,
    _migration_13,
    _migration_14,
    _migration_15,
    _migration_16,
    _migration_17,
    _migration_18,
    _migration_19,
]

# Each migration's name, as sqlite-utils records it in `_sqlite_migrations` (store.migrating):
# the number keeps the order readable, the words say what it did. Never rename one.
MIGRATION_NAMES: tuple[str, ...] = (
    "0001_initial",
    "0002_compressed_blocks",
    "0003_record_id_counter",
    "0004_top_configs",
    "0005_source_imports",
    "0006_views",
    "0007_workload_spelling",
    "0008_trial_runs",
    "0009_merged_from",
    "0010_resume_points",
    "0011_holdings",
    "0012_workload_facts",
    "0013_top_config_ids",
    "0014_sources_split",
    "0015_trial_run_marks",
    "0016_record_spellings",
    "0017_metaschedule_identity",
    "0018_reparsed_targets_identity_tree",
    "0019_metaschedule_identity_values",
)
