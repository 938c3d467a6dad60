"""The database schema: its migrations, each named (PRAGMA user_version counts those applied).

Each migration takes the plain sqlite3 connection and holds its own frozen SQL; sqlite-utils'
`Migrations` runs the pending ones by name (`store.migrating`), loaded only when one is
pending, so opening a current database (every command) does not pay for it.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from typing import Any

# The codec (it loads xxhash) is imported inside the migrations that use it (2 and 8): opening
# a database at the current schema, as every command does, does not load it.

APPLICATION_ID = 0x54554E4C  # "TUNL": marks the file as a tunelog database
TOP_CONFIGS_KEPT = 16  # best distinct configs kept per (target, workload), see migration 4


def _migration_1(conn: sqlite3.Connection) -> None:
    conn.execute(
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
    conn.execute("CREATE INDEX sources_sha256 ON sources(sha256)")
    # zstd dictionaries the stored lines are compressed with (records.dict_id; NULL: plain).
    conn.execute("CREATE TABLE dictionaries (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
    conn.execute(
        """
        CREATE TABLE targets (
            id INTEGER PRIMARY KEY,
            target TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            keys TEXT NOT NULL,
            model TEXT NOT NULL
        )"""
    )
    conn.execute(
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
    conn.execute(
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
    conn.execute(
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
    conn.execute("CREATE INDEX slots_record ON slots(record_id)")
    # Records per (target, workload, error number), kept on import so summaries never scan.
    conn.execute(
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
    conn.execute(
        """
        CREATE TABLE rejects (
            source_id INTEGER NOT NULL REFERENCES sources(id),
            line INTEGER NOT NULL,
            reason TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX rejects_source ON rejects(source_id, line)")


def _migration_2(conn: sqlite3.Connection) -> None:
    """Lines move into compressed blocks; content hashes get a table of their own.

    Per-line compression and a UNIQUE index on records(hash) made import 3x slower than
    parsing: every row paid a compression call and a random insert into a B-tree larger than
    the page cache. Blocks of consecutive records' lines compress 4-7x better (a block's id
    is its first record's id, see codec); hashes are indexed once per file, sorted (see
    importer), and computed with XXH3 instead of BLAKE2b. The log version and TVM version
    columns go: the version is part of the workload, and both stay in the stored line.
    Sources remember how they were imported, so that re-importing a file is a hash check.
    """
    conn.execute(
        """
        CREATE TABLE blocks (
            id INTEGER PRIMARY KEY,  -- the id of the first record whose line it holds
            source_id INTEGER NOT NULL REFERENCES sources(id),
            data BLOB NOT NULL
        )"""
    )
    # What a re-import of the same bytes needs to report without reading them again (see
    # Store.import_log); `repair` is NULL for files imported before it was recorded.
    conn.execute("ALTER TABLE sources ADD COLUMN split INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE sources ADD COLUMN repaired INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE sources ADD COLUMN repair INTEGER")
    conn.execute(
        """
        CREATE TABLE records_v2 (
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
            hash INTEGER NOT NULL
        )"""
    )
    _move_lines_into_blocks(conn)
    conn.execute("DROP TABLE records")
    conn.execute("DROP TABLE dictionaries")
    conn.execute("ALTER TABLE records_v2 RENAME TO records")
    # The dedup key: each content hash once per workload (equal lines have equal workloads),
    # with the record holding it. Keying by workload first keeps a file's entries together:
    # a small file rewrites a few pages of the index, not one page per line.
    conn.execute(
        """
        CREATE TABLE content_hashes (
            workload_id INTEGER NOT NULL,
            hash INTEGER NOT NULL,
            record_id INTEGER NOT NULL,
            PRIMARY KEY (workload_id, hash)
        ) WITHOUT ROWID"""
    )
    indexed = conn.execute(
        """INSERT OR IGNORE INTO content_hashes
           SELECT workload_id, hash, id FROM records ORDER BY workload_id, hash"""
    ).rowcount
    if indexed < conn.execute("SELECT count(*) FROM records").fetchone()[0]:
        _probe_colliding_hashes(conn)


def _probe_colliding_hashes(conn: sqlite3.Connection) -> None:
    """Give each record whose new hash is taken (schema 1 lines are distinct) a free one."""
    from tunelog.store.codec import next_hash

    unplaced = conn.execute(
        """SELECT id, workload_id, hash FROM records r
           WHERE NOT EXISTS (SELECT 1 FROM content_hashes h WHERE h.record_id = r.id)"""
    ).fetchall()
    taken = "SELECT 1 FROM content_hashes WHERE workload_id = ? AND hash = ?"
    for record_id, workload_id, h in unplaced:
        while conn.execute(taken, (workload_id, h)).fetchone():
            h = next_hash(h)
        conn.execute("INSERT INTO content_hashes VALUES (?, ?, ?)", (workload_id, h, record_id))
        conn.execute("UPDATE records SET hash = ? WHERE id = ?", (h, record_id))


def _move_lines_into_blocks(conn: sqlite3.Connection) -> None:
    """Copy schema-1 records into records_v2, their lines into blocks of consecutive ids."""
    import zstandard  # here, not on top: only old databases need it (every open loads schema)

    from tunelog.store.codec import BLOCK_LINES, BlockPacker, content_hash

    decompressors: dict[int, zstandard.ZstdDecompressor] = {}
    packer = BlockPacker()
    pending: list[tuple[Any, ...]] = []
    lines: list[bytes] = []

    def flush() -> None:
        if pending:
            conn.execute(
                "INSERT INTO blocks (id, source_id, data) VALUES (?, ?, ?)",
                (pending[0][0], pending[0][1], packer.pack(lines)),
            )
            conn.executemany(f"INSERT INTO records_v2 VALUES ({','.join('?' * 11)})", pending)
        pending.clear()
        lines.clear()

    rows = conn.execute(
        """SELECT id, source_id, line, target_id, workload_id, config_index, error_no,
                  mean_cost, all_cost, timestamp, hash, raw, dict_id FROM records ORDER BY id"""
    )
    for *fields, raw, dict_id in rows:
        if pending and (
            fields[1] != pending[0][1]  # another source
            or fields[0] != pending[-1][0] + 1  # a gap in the ids
            or len(pending) >= BLOCK_LINES
        ):
            flush()
        if dict_id is not None:
            if dict_id not in decompressors:
                (data,) = conn.execute(
                    "SELECT data FROM dictionaries WHERE id = ?", (dict_id,)
                ).fetchone()
                decompressors[dict_id] = zstandard.ZstdDecompressor(
                    dict_data=zstandard.ZstdCompressionDict(data)
                )
            raw = decompressors[dict_id].decompress(raw)
        fields[10] = content_hash(raw)  # schema 1 hashed with BLAKE2b
        pending.append(tuple(fields))
        lines.append(raw)
    flush()


def _migration_3(conn: sqlite3.Connection) -> None:
    """Record ids are never reused: the next id is kept in `counters`.

    Ids used to be max(records.id) + 1, so when a file's last records were duplicates (and
    deleted) the next file took their ids while the earlier block still held lines under them;
    a reader that trusted the block's length returned another record's bytes. The counter starts
    past every id any stored block covers (the last block is decompressed to know its length).
    """
    conn.execute(
        "CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID"
    )
    next_id = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM records").fetchone()[0])
    last_block = conn.execute("SELECT id, data FROM blocks ORDER BY id DESC LIMIT 1").fetchone()
    if last_block is not None:
        import zstandard

        lines = zstandard.ZstdDecompressor().decompress(last_block[1]).count(b"\n") + 1
        next_id = max(next_id, int(last_block[0]) + lines)
    conn.execute("INSERT INTO counters VALUES ('next_record_id', ?)", (next_id,))


def fill_top_configs(conn: sqlite3.Connection, records_where: str) -> None:
    """Insert the TOP_CONFIGS_KEPT best distinct configs of each (target, workload), ranked
    by (mean cost, record id) as the importer ranks them, from the valid records that
    `records_where` (an SQL condition on `records`) selects."""
    conn.execute(
        f"""INSERT INTO top_configs
            SELECT target_id, workload_id, config_index, id, mean_cost FROM (
                SELECT *, row_number() OVER (
                    PARTITION BY target_id, workload_id ORDER BY mean_cost, id) AS rank
                FROM (SELECT target_id, workload_id, config_index, id, mean_cost,
                             row_number() OVER (
                                 PARTITION BY target_id, workload_id, config_index
                                 ORDER BY mean_cost, id) AS per_config
                      FROM records WHERE error_no = 0 AND ({records_where}))
                WHERE per_config = 1)
            WHERE rank <= ?""",
        (TOP_CONFIGS_KEPT,),
    )


def _migration_4(conn: sqlite3.Connection) -> None:
    """`top_configs`: each (target, workload)'s best configs, kept on import for --top-k.

    `export --top-k` sorted every valid record (4 s at 1M records); the importer now keeps the
    16 best distinct configs of each (target, workload), each with its best record, ranked by
    (mean cost, record id) like the slots. Filled here from the stored records.
    """
    conn.execute(
        """
        CREATE TABLE top_configs (
            target_id INTEGER NOT NULL,
            workload_id INTEGER NOT NULL,
            config_index INTEGER NOT NULL,
            record_id INTEGER NOT NULL,
            mean_cost REAL NOT NULL,
            PRIMARY KEY (target_id, workload_id, config_index)
        ) WITHOUT ROWID"""
    )
    fill_top_configs(conn, "1")


def _migration_5(conn: sqlite3.Connection) -> None:
    """`source_imports`: each time a file's content was imported, from which path and when.

    A re-import of the same bytes adds no `sources` row (one row per distinct content); it
    adds a row here, so `tunelog sources` can show when and from where a file came again.
    Filled here with each source's first import.
    """
    conn.execute(
        """
        CREATE TABLE source_imports (
            source_id INTEGER NOT NULL REFERENCES sources(id),
            path TEXT NOT NULL,
            imported_at TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX source_imports_source ON source_imports(source_id)")
    conn.execute("INSERT INTO source_imports SELECT id, path, imported_at FROM sources ORDER BY id")


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


def fill_trial_runs(conn: sqlite3.Connection, records_where: str) -> None:
    """Insert the trial runs of the records `records_where` selects, counted in id order."""
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
        "INSERT INTO trial_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
)
