"""Migrations 1-5: the tables (sources, targets, workloads, records, blocks, slots, tallies,
counters, top configs, source imports), each with its own frozen SQL.

The codec (it loads xxhash) is imported inside the migrations that use it (2 and 8): opening a
database at the current schema, as every command does, does not load it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

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
