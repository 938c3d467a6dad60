"""Migration 6: views for Datasette or any SQLite browser (names and text instead of ids)."""

from __future__ import annotations

import sqlite3


def _migration_6(conn: sqlite3.Connection) -> None:
    """Views for Datasette or any SQLite browser: names and text instead of ids.

    They read only the tables of migrations 1-5, and only what SQL can compute: grouping
    templates into layers and targets into (keys, model) groups is Python's (`tunelog.layers`),
    so `layer_summary` has one row per (target string, template workload) and `failures` has
    no diagnosis; `tunelog workloads` and `tunelog errors` show those. Every view reads the small
    tables (slots, tallies, top_configs), never scans records, so it stays fast on big files.
    """
    conn.execute(
        """
        CREATE VIEW best_configs AS
        -- What `tunelog best --json` prints: each slot-holding record once, with its slots.
        WITH trial_sums AS (
            -- trials as `best` counts them: targets of the same keys and model
            SELECT c.workload_id, ct.keys, ct.model, sum(c.records) AS trials
            FROM tallies c JOIN targets ct ON ct.id = c.target_id
            GROUP BY c.workload_id, ct.keys, ct.model)
        SELECT group_concat(slot, ',') AS slots, target, task_name, template_key, args,
               config_index, mean_cost, source, line, log_version, record_id, trials
        FROM (
            SELECT CASE s.kind WHEN 'model' THEN 'model=' || s.name ELSE s.name END AS slot,
                   t.target, w.task_name, w.template_key, w.args, r.config_index, r.mean_cost,
                   src.path AS source, r.line, w.version AS log_version, r.id AS record_id,
                   r.workload_id, n.trials
            FROM slots s
            JOIN records r ON r.id = s.record_id
            JOIN targets t ON t.id = r.target_id
            JOIN workloads w ON w.id = s.workload_id
            JOIN sources src ON src.id = r.source_id
            LEFT JOIN trial_sums n
              ON n.workload_id = r.workload_id AND n.keys = t.keys AND n.model = t.model
            ORDER BY r.workload_id, r.id, s.kind DESC, s.name)
        GROUP BY record_id
        ORDER BY workload_id, record_id"""
    )
    conn.execute(
        """
        CREATE VIEW layer_summary AS
        -- One row per (target string, template workload); `tunelog workloads` groups them.
        SELECT t.target, w.task_name, w.template_key, w.args, w.version AS log_version,
               sum(c.records) AS trials,
               sum(CASE WHEN c.error_no = 0 THEN c.records ELSE 0 END) AS valid,
               sum(CASE WHEN c.error_no != 0 THEN c.records ELSE 0 END) AS failed,
               (SELECT k.mean_cost FROM top_configs k
                 WHERE k.target_id = c.target_id AND k.workload_id = c.workload_id
                 ORDER BY k.mean_cost, k.record_id LIMIT 1) AS best_cost,
               (SELECT k.config_index FROM top_configs k
                 WHERE k.target_id = c.target_id AND k.workload_id = c.workload_id
                 ORDER BY k.mean_cost, k.record_id LIMIT 1) AS best_config
        FROM tallies c
        JOIN targets t ON t.id = c.target_id
        JOIN workloads w ON w.id = c.workload_id
        GROUP BY c.target_id, c.workload_id
        ORDER BY c.workload_id, t.target"""
    )
    from tunelog.errorcodes import ERROR_CODES  # only a migrating open pays for it

    # Error names as AutoTVM defines them (fixed since TVM 0.6), written into the view's text.
    names = " ".join(
        f"WHEN {number} THEN '{ERROR_CODES[number].name}'" for number in sorted(ERROR_CODES)
    )
    conn.execute(
        f"""
        CREATE VIEW failures AS
        SELECT t.target, w.task_name, w.template_key, w.args, w.version AS log_version,
               c.error_no,
               CASE c.error_no {names} ELSE 'UNKNOWN(' || c.error_no || ')' END AS error_name,
               c.records, c.min_all_cost, c.max_all_cost
        FROM tallies c
        JOIN targets t ON t.id = c.target_id
        JOIN workloads w ON w.id = c.workload_id
        WHERE c.error_no != 0
        ORDER BY c.records DESC, c.workload_id, t.target, c.error_no"""
    )
    conn.execute(
        """
        CREATE VIEW sources_summary AS
        SELECT id, path, label, sha256, size, lines, records, duplicates, comments, blank,
               rejected, imported_at,
               -- each import of this content: a JSON list of {path, imported_at}
               (SELECT json_group_array(json_object('path', i.path, 'imported_at', i.imported_at))
                FROM (SELECT path, imported_at FROM source_imports
                      WHERE source_id = sources.id ORDER BY rowid) i) AS imports
        FROM sources ORDER BY id"""
    )
