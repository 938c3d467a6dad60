"""Migrations 7-16: spellings, trial runs, merge origins, resume points, holdings, the
per-workload facts, the packed top configs, the runs' marks and each record's own spelling,
each with its own frozen SQL (backfills computed once when run)."""

from __future__ import annotations

import math
import sqlite3
from typing import Any

from tunelog.store.migrations_tables import TOP_CONFIGS_KEPT


def _migration_7(conn: sqlite3.Connection) -> None:
    """`workloads.spelling`: how the log spells a workload whose identity is normalised.

    An auto_scheduler workload is (hash, flattened arguments) (tvm-reference §8): a flat and a
    nested key of the same shapes are one workload, so the identity columns cannot show the
    tensor shapes. The first spelling seen is kept for `workloads` and `best`; NULL for
    AutoTVM workloads, whose task name and arguments are their spelling.
    """
    conn.execute("ALTER TABLE workloads ADD COLUMN spelling TEXT")


def _migration_8(conn: sqlite3.Connection) -> None:
    """`trial_runs`: each source's run of trials per (target, workload), for convergence.

    `workloads` judges convergence from every trial in order; reading a million records for
    it took 1.5 s. The importer now keeps, per (source, target, workload), what
    `convergence.Progress` needs: trials, valid trials, and each new best with its trial number
    (JSON `[[trial, mean_cost], ...]`), plus where the run starts (earliest timestamp, first
    and last record id). Filled here from the stored records, in id order.
    """

    conn.execute(
        """
        CREATE TABLE trial_runs (
            source_id INTEGER NOT NULL,
            target_id INTEGER NOT NULL,
            workload_id INTEGER NOT NULL,
            trials INTEGER NOT NULL,
            valid INTEGER NOT NULL,
            start REAL NOT NULL,
            first_id INTEGER NOT NULL,
            last_id INTEGER NOT NULL,
            improvements TEXT NOT NULL,
            PRIMARY KEY (source_id, target_id, workload_id)
        ) WITHOUT ROWID"""
    )
    fill_trial_runs(conn, "1")


MIGRATION_8_RUN_COLUMNS = (
    "source_id, target_id, workload_id, trials, valid, start, first_id, last_id, improvements"
)


def fill_trial_runs(conn: sqlite3.Connection, records_where: str) -> None:
    """Insert the trial runs of the records `records_where` selects, counted in id order.

    Migration 8's own: the marks migration 15 added stay NULL here, for `fill_run_marks` (a
    caller on a current database runs it after, as `store.removal` does)."""
    from tunelog.store.codec import improvements_text

    runs: dict[tuple[int, int, int], list[Any]] = {}
    for record_id, source_id, target_id, workload_id, error_no, mean, timestamp in conn.execute(
        f"""SELECT id, source_id, target_id, workload_id, error_no, mean_cost, timestamp
            FROM records WHERE {records_where} ORDER BY id"""
    ):
        run = runs.get((source_id, target_id, workload_id))
        if run is None:
            # trials, valid, start, first id, last id, improvements, best mean
            run = runs[(source_id, target_id, workload_id)] = [
                0,
                0,
                timestamp,
                record_id,
                record_id,
                [],
                math.inf,
            ]
        run[0] += 1
        run[2] = min(run[2], timestamp)
        run[4] = record_id
        if error_no == 0:
            run[1] += 1
            if mean < run[6]:
                run[6] = mean
                run[5].append((run[0], mean))
    conn.executemany(
        # Its columns named: migration 15 added three after them (`fill_run_marks` fills them).
        f"INSERT INTO trial_runs ({MIGRATION_8_RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (*key, t, v, start, lo, hi, improvements_text(imp))
            for key, (t, v, start, lo, hi, imp, _) in runs.items()
        ],
    )


def _migration_9(conn: sqlite3.Connection) -> None:
    """Sources remember the database a merge brought them from (see store.merging).

    `merged_from` is that database's absolute path and `merged_at` when the merge ran; both are
    NULL for files imported directly. The other columns keep the file's own provenance (path,
    label, sha256, line counts, `imported_at`: when the file itself was imported).
    """
    conn.execute("ALTER TABLE sources ADD COLUMN merged_from TEXT")
    conn.execute("ALTER TABLE sources ADD COLUMN merged_at TEXT")
    # `sources_summary` (migration 6) shows what `tunelog sources --json` shows: now merged_from.
    conn.execute("DROP VIEW sources_summary")
    sources_summary_of_migration_9(conn)


def sources_summary_of_migration_9(conn: sqlite3.Connection) -> None:
    """The `sources_summary` view as migration 9 makes it (tests build older schemas)."""
    conn.execute(
        """
        CREATE VIEW sources_summary AS
        SELECT id, path, label, sha256, size, lines, records, duplicates, comments, blank,
               rejected, imported_at, merged_from,
               -- each import of this content: a JSON list of {path, imported_at}
               (SELECT json_group_array(json_object('path', i.path, 'imported_at', i.imported_at))
                FROM (SELECT path, imported_at FROM source_imports
                      WHERE source_id = sources.id ORDER BY rowid) i) AS imports
        FROM sources ORDER BY id"""
    )


def _migration_10(conn: sqlite3.Connection) -> None:
    """`resume_points`: where the import of each plain file stopped, to read only what follows.

    A tuner appends to its log; re-reading the whole file to find the new lines cost 11.6 s at
    1M lines. One row per file (by real path): the source its lines were stored under, the end
    of the last complete line read (`offset`, after `lines` lines), an XXH3-128 of the bytes
    before it (checked before resuming: a file rewritten or truncated is read in full again),
    the bytes read past it (a last line without line end; a file that had one is read in full
    when it changes) and whether `--repair` was used. Relies only on `sources` (migration 1).
    """
    conn.execute(
        """
        CREATE TABLE resume_points (
            real_path TEXT PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES sources(id),
            offset INTEGER NOT NULL,
            lines INTEGER NOT NULL,
            prefix_hash TEXT NOT NULL,
            tail INTEGER NOT NULL,
            repair INTEGER NOT NULL
        )"""
    )


def _migration_11(conn: sqlite3.Connection) -> None:
    """`holdings`: every record line each source's file held, whoever stored the record first.

    A record used to belong only to the first source that had its line, so a question about one
    of two overlapping files (a log and its grown copy, a copy under another name) answered for
    the wrong lines. The table keeps each source's record lines as runs (see store.holdings).
    An older database knows only the records each source stored: the lines a later file held
    that were counted as duplicates then are not known (import that file again to add them).
    """
    # A rowid table: runs are inserted in import order, which `sources remove` replays.
    conn.execute(
        """
        CREATE TABLE holdings (
            source_id INTEGER NOT NULL,
            seq INTEGER NOT NULL,  -- position of the run's first record line among the file's
            line INTEGER NOT NULL,  -- its line number in the file
            record_id INTEGER NOT NULL,  -- its record; the run's k-th is record_id + k
            count INTEGER NOT NULL
        )"""
    )
    conn.execute("CREATE UNIQUE INDEX holdings_source ON holdings(source_id, seq)")
    from tunelog.store.holdings import fill_from_records

    fill_from_records(conn)
    # `sources_summary` shows what `tunelog sources --json` shows: now `held` too (not
    # `shared`, which takes interval arithmetic over every source's runs).
    conn.execute("DROP VIEW sources_summary")
    sources_summary_of_migration_11(conn)


def sources_summary_of_migration_11(conn: sqlite3.Connection) -> None:
    """The `sources_summary` view as migration 11 makes it (tests build older schemas)."""
    conn.execute(
        """
        CREATE VIEW sources_summary AS
        SELECT id, path, label, sha256, size, lines, records, duplicates, comments, blank,
               rejected, imported_at, merged_from,
               (SELECT coalesce(sum(h.count), 0) FROM holdings h
                WHERE h.source_id = sources.id) AS held,
               -- each import of this file: a JSON list of {path, imported_at}
               (SELECT json_group_array(json_object('path', i.path, 'imported_at', i.imported_at))
                FROM (SELECT path, imported_at FROM source_imports
                      WHERE source_id = sources.id ORDER BY rowid) i) AS imports
        FROM sources ORDER BY id"""
    )


def _migration_12(conn: sqlite3.Connection) -> None:
    """Per-workload facts the read commands group and show, computed once when stored.

    `layer_key` (the operator call, `workloads.layer_key`), `facts` (JSON of what relay's
    strategy conditions test, `workloads.layer_facts`), `family` (the operator family),
    `shapes` (the arguments' short text) and `flops` (decimal text: a MetaSchedule estimate may
    not fit an INTEGER). `workloads`, `untuned`, `errors`, `best`, `diff` and `export
    --winners-only` read them instead of parsing every workload's arguments again. Filled by
    `store.workloadfacts.fill_workload_facts` (the catch-up after this migration, and at the
    end of each import); NULL until then, and a reader computes a NULL row's facts itself.
    """
    for column in ("layer_key TEXT", "facts TEXT", "family TEXT", "shapes TEXT", "flops TEXT"):
        conn.execute(f"ALTER TABLE workloads ADD COLUMN {column}")
    conn.execute("CREATE INDEX workloads_layer ON workloads(layer_key, id)")
    # The rows still to fill, found without scanning the table.
    conn.execute("CREATE INDEX workloads_unfilled ON workloads(id) WHERE layer_key IS NULL")


def _migration_13(conn: sqlite3.Connection) -> None:
    """`top_config_ids`: a (target, workload)'s kept best configs as one row, not one a config.

    With many workloads a group has few records, so nearly every valid record was a kept
    config: at 80k workloads 949k `top_configs` rows for 1M records, 7 % of an import. The
    kept configs' best records are now one JSON list of record ids per (target, workload), in
    no order; `top_configs` becomes a view of the same columns, their config and mean read
    from `records`, so its readers (`export --top-k`, `layer_summary`) are unchanged.
    """
    conn.execute(
        """
        CREATE TABLE top_config_ids (
            target_id INTEGER NOT NULL,
            workload_id INTEGER NOT NULL,
            record_ids TEXT NOT NULL,  -- JSON list of the kept configs' best records
            PRIMARY KEY (target_id, workload_id)
        ) WITHOUT ROWID"""
    )
    conn.execute(
        """INSERT INTO top_config_ids
           SELECT target_id, workload_id, json_group_array(record_id) FROM top_configs
           GROUP BY target_id, workload_id"""
    )
    conn.execute("DROP TABLE top_configs")
    conn.execute(
        """
        CREATE VIEW top_configs AS
        SELECT p.target_id, p.workload_id, r.config_index, r.id AS record_id, r.mean_cost
        FROM top_config_ids p, json_each(p.record_ids) j JOIN records r ON r.id = j.value"""
    )


def _migration_14(conn: sqlite3.Connection) -> None:
    """`sources_summary` shows what `tunelog sources --json` shows: now `split` and `repaired`
    too, the rest of a repaired file's line accounting (`lines + split` = records + duplicates
    + comments + blank + rejected; the columns are migration 2's)."""
    conn.execute("DROP VIEW sources_summary")
    conn.execute(
        """
        CREATE VIEW sources_summary AS
        SELECT id, path, label, sha256, size, lines, split, records, duplicates, comments, blank,
               rejected, repaired, imported_at, merged_from,
               (SELECT coalesce(sum(h.count), 0) FROM holdings h
                WHERE h.source_id = sources.id) AS held,
               -- each import of this file: a JSON list of {path, imported_at}
               (SELECT json_group_array(json_object('path', i.path, 'imported_at', i.imported_at))
                FROM (SELECT path, imported_at FROM source_imports
                      WHERE source_id = sources.id ORDER BY rowid) i) AS imports
        FROM sources ORDER BY id"""
    )


def _migration_15(conn: sqlite3.Connection) -> None:
    """`trial_runs` keeps each run's marks beside its improvements (`convergence.RunMarks`:
    the trial that reached the best, the best, the last significant improvement; NULL when no
    trial was valid), so a listing summarises every run without decoding its improvements."""
    for column, kind in RUN_MARK_COLUMNS:
        conn.execute(f"ALTER TABLE trial_runs ADD COLUMN {column} {kind}")
    fill_run_marks(conn, "1")


RUN_MARK_COLUMNS = (("to_best", "INTEGER"), ("best_cost", "REAL"), ("last_significant", "INTEGER"))


def fill_run_marks(conn: sqlite3.Connection, runs_where: str) -> None:
    """Compute the marks of the trial runs `runs_where` (an SQL condition on `trial_runs`)
    selects from their improvements (`convergence.run_marks`, the live rule: a backfill gives
    what the importer stores)."""
    import json  # not at the top: a command that migrates nothing never loads it

    from tunelog.convergence import run_marks

    after = (-1, -1, -1)
    while rows := conn.execute(  # a page of runs at a time: memory stays bounded
        f"""SELECT source_id, target_id, workload_id, improvements FROM trial_runs
            WHERE ({runs_where}) AND (source_id, target_id, workload_id) > (?, ?, ?)
            ORDER BY source_id, target_id, workload_id LIMIT {RUN_MARKS_PAGE}""",
        after,
    ).fetchall():
        conn.executemany(
            """UPDATE trial_runs SET to_best = ?, best_cost = ?, last_significant = ?
               WHERE source_id = ? AND target_id = ? AND workload_id = ?""",
            [(*run_marks(json.loads(text)), *key) for *key, text in rows],
        )
        after = rows[-1][:3]


RUN_MARKS_PAGE = 4096


def fill_top_config_ids(conn: sqlite3.Connection, records_where: str) -> None:
    """Insert the TOP_CONFIGS_KEPT best distinct configs of each (target, workload), ranked
    by (mean cost, record id) as the importer ranks them (rules.ranking), from the valid
    records that `records_where` (an SQL condition on `records`) selects."""
    conn.execute(
        f"""INSERT INTO top_config_ids
            SELECT target_id, workload_id, json_group_array(id) FROM (
                SELECT *, row_number() OVER (
                    PARTITION BY target_id, workload_id ORDER BY mean_cost, id) AS rank
                FROM (SELECT target_id, workload_id, id, mean_cost,
                             row_number() OVER (
                                 PARTITION BY target_id, workload_id, config_index
                                 ORDER BY mean_cost, id) AS per_config
                      FROM records WHERE error_no = 0 AND ({records_where}))
                WHERE per_config = 1)
            WHERE rank <= ?
            GROUP BY target_id, workload_id""",
        (TOP_CONFIGS_KEPT,),
    )


# Append only: a database's PRAGMA user_version is the number of migrations applied.


def _migration_16(conn: sqlite3.Connection) -> None:
    """`record_spellings`: a record's own spelling of its workload, where it is not the one
    `workloads.spelling` keeps (migration 7: the first seen), each text once in
    `spelling_texts`.

    A MetaSchedule workload is a module up to structural equality (tvm-reference §9): two
    workload lines that name its blocks differently are one workload, but a record's trace
    replays against its own line (`GetSBlock` by name), so a pruned database must write each
    record's own line. An older database's records keep no such spelling (not known): an
    export writes their workload's.
    """
    conn.execute(
        "CREATE TABLE spelling_texts (id INTEGER PRIMARY KEY, spelling TEXT NOT NULL UNIQUE)"
    )
    conn.execute(
        "CREATE TABLE record_spellings (record_id INTEGER PRIMARY KEY, "
        "spelling_id INTEGER NOT NULL)"
    )
