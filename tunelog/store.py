"""The SQLite store: the only module that talks to the database.

Layout (see MIGRATIONS): `sources` (one row per imported file), `targets` and `workloads`
(deduplicated strings), `records` (one row per distinct line, the original bytes kept), `slots`
(the ApplyHistoryBest slot holders, maintained on import so `best`/`export` never scan records),
and `rejects` (why each refused line was refused).

Writes happen in one transaction per file (BEGIN IMMEDIATE), so an interrupted import leaves the
database as it was before that file, and concurrent importers queue on SQLite's write lock.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import sqlite_utils
import zstandard

from tunelog.exceptions import (
    DatabaseUnavailableError,
    DiskFullError,
    NewerSchemaError,
    NotATunelogDatabaseError,
)
from tunelog.inputs import OpenedLog
from tunelog.layers import SlotWinner, Tally, WorkloadInfo
from tunelog.models import BestRow, FileReport, RejectedLine, Source, Stats
from tunelog.records import (
    Blank,
    Comment,
    Measurement,
    Rejected,
    TuningRecord,
    parse_line,
    repair_line,
    scan_content,
    strip_line,
)
from tunelog.selection import KEY_SLOT, MODEL_SLOT, slots_of
from tunelog.targets import parse_target

APPLICATION_ID = 0x54554E4C  # "TUNL": marks the file as a tunelog database
BATCH_SIZE = 2000
REJECTS_KEPT_IN_REPORT = 20
BUSY_TIMEOUT_MS = 60_000

ProgressCallback = Callable[[int], None]
SlotKey = tuple[str, str, int]

# Lines are stored zstd-compressed with a dictionary trained on the file's first batch
# (a few µs per line, about 5x smaller); smaller files reuse the newest dictionary.
DICTIONARY_BYTES = 16 * 1024
MIN_TRAINING_LINES = 500
COMPRESSION_LEVEL = 1


class LineCodec:
    """Decompresses stored lines; dictionaries are loaded once per connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._decompressors: dict[int, zstandard.ZstdDecompressor] = {}

    def decode(self, raw: bytes, dict_id: int | None) -> bytes:
        """The original line bytes of a stored record."""
        if dict_id is None:
            return raw
        decompressor = self._decompressors.get(dict_id)
        if decompressor is None:
            (data,) = self.conn.execute(
                "SELECT data FROM dictionaries WHERE id = ?", (dict_id,)
            ).fetchone()
            decompressor = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(data))
            self._decompressors[dict_id] = decompressor
        return decompressor.decompress(raw)


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
            UNIQUE (task_name, template_key, args)
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


def content_hash(content: bytes) -> int:
    """64-bit signed hash of a line's content (the dedup key; collisions are probed)."""
    return int.from_bytes(hashlib.blake2b(content, digest_size=8).digest(), "big", signed=True)


@dataclass(frozen=True)
class Filters:
    """Which slots/records a query covers. Empty fields match everything."""

    target_key: str | None = None
    model: str | None = None
    template: str | None = None
    task: str | None = None


class ExportLine(NamedTuple):
    """A record to export: ids, target string, log version and the original line bytes."""

    record_id: int
    workload_id: int
    target: str
    version: str
    raw: bytes


@dataclass(frozen=True)
class SlotHolder:
    """One slot (`kind` "key" or "model", its `name`, the workload) and its holder."""

    kind: str
    name: str
    task_name: str
    template_key: str
    args_json: str
    record_id: int
    source_id: int
    line: int
    config_index: int
    mean_cost: float

    @property
    def workload_json(self) -> str:
        """`[task_name, *args]` as compact JSON (the golden files' form)."""
        inner = self.args_json[1:-1]
        return f"[{orjson.dumps(self.task_name).decode()}{',' + inner if inner else ''}]"


class Store:
    """A tunelog database file. Open with `Store(path)`; created and migrated on open."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as exc:
            raise DatabaseUnavailableError(
                f"cannot open database {self.path}: {exc}; check that its directory exists "
                "and is writable, or pass another --db"
            ) from exc
        self.conn = conn
        self.db = sqlite_utils.Database(conn)
        self.codec = LineCodec(conn)
        try:
            self._prepare()
        except BaseException as exc:
            conn.close()  # never leave a refused database open (or its -wal/-shm files)
            if not isinstance(exc, sqlite3.DatabaseError):
                raise
            message = str(exc)
            if "not a database" in message or "malformed" in message:
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
        if app_id != APPLICATION_ID and (has_tables or version):
            raise NotATunelogDatabaseError(
                f"{self.path} is an SQLite database but not a tunelog one; pass another --db path"
            )
        if version > len(MIGRATIONS):
            raise NewerSchemaError(
                f"{self.path} was written by a newer tunelog (schema {version}, this one knows "
                f"{len(MIGRATIONS)}); upgrade tunelog"
            )
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < len(MIGRATIONS):
            self._migrate()

    def _migrate(self) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for number in range(version, len(MIGRATIONS)):
                MIGRATIONS[number](self.db)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

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
            self.conn.execute("COMMIT")

    @property
    def schema_version(self) -> int:
        """Number of migrations applied."""
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- import -------------------------------------------------------------------------------

    def import_log(
        self,
        opened: OpenedLog,
        *,
        label: str | None = None,
        strict: bool = False,
        repair: bool = False,
        lines: Iterable[bytes] | None = None,
        progress: ProgressCallback | None = None,
    ) -> FileReport:
        """Import one opened log in a single transaction and report what happened.

        `lines` overrides `opened.lines()`. With `strict`, a file with any rejected line is rolled
        back (`report.rolled_back`); with `repair`, records pasted from web pages are recovered.
        """
        report = FileReport(path=opened.source.path)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise DatabaseUnavailableError(f"cannot write to {self.path}: {exc}") from exc
        try:
            writer = _ImportWriter(self.conn, report, self.codec, repair=repair)
            writer.run(opened.lines() if lines is None else lines, opened, progress)
            report.sha256 = opened.sha256
            self._finish_import(writer, opened, report, label, strict)
        except BaseException as exc:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc):
                raise DiskFullError(
                    f"the disk holding {self.path} is full ({exc}); nothing of "
                    f"{report.path} was kept: free some space and import it again"
                ) from exc
            raise
        return report

    def _finish_import(
        self,
        writer: _ImportWriter,
        opened: OpenedLog,
        report: FileReport,
        label: str | None,
        strict: bool,
    ) -> None:
        conn = self.conn
        if strict and report.rejected:
            conn.execute("ROLLBACK")
            report.rolled_back = True
            report.new = 0
            return
        earlier = conn.execute(
            "SELECT id, path FROM sources WHERE sha256 = ? AND id != ? ORDER BY id LIMIT 1",
            (report.sha256, writer.source_id),
        ).fetchone()
        if earlier is not None and report.new == 0:
            conn.execute("ROLLBACK")  # same bytes imported before: keep no trace of this run
            report.already_imported_as = f"#{earlier[0]} {earlier[1]}"
            return
        conn.execute(
            """UPDATE sources SET label = ?, sha256 = ?, size = ?, lines = ?, records = ?,
               duplicates = ?, comments = ?, blank = ?, rejected = ? WHERE id = ?""",
            (
                label,
                report.sha256,
                opened.size,
                report.lines,
                report.new,
                report.duplicates,
                report.comments,
                report.blank,
                report.rejected,
                writer.source_id,
            ),
        )
        conn.execute("COMMIT")
        report.source_id = writer.source_id

    # -- queries ------------------------------------------------------------------------------

    def sources(self) -> list[Source]:
        """Imported files, oldest first."""
        rows = self.conn.execute(
            """SELECT id, path, label, sha256, size, lines, records, duplicates, comments, blank,
                      rejected, imported_at FROM sources ORDER BY id"""
        ).fetchall()
        names = list(Source.model_fields)
        return [Source(**dict(zip(names, row, strict=True))) for row in rows]

    def rejects(self, source_id: int, limit: int | None = None) -> list[RejectedLine]:
        """Rejected lines of one source, by line number."""
        sql = "SELECT line, reason FROM rejects WHERE source_id = ? ORDER BY line"
        params: tuple[Any, ...] = (source_id,)
        if limit is not None:
            sql += " LIMIT ?"
            params += (limit,)
        return [RejectedLine(line=a, reason=b) for a, b in self.conn.execute(sql, params)]

    def stats(self) -> Stats:
        """Counts by target, template and error number."""
        c = self.conn

        def one(sql: str) -> int:
            return int(c.execute(sql).fetchone()[0])

        def table(sql: str, names: Sequence[str]) -> list[dict[str, object]]:
            return [dict(zip(names, row, strict=True)) for row in c.execute(sql)]

        with self.snapshot():
            return self._stats(one, table)

    def _stats(
        self,
        one: Callable[[str], int],
        table: Callable[[str, Sequence[str]], list[dict[str, object]]],
    ) -> Stats:
        return Stats(
            records=one("SELECT count(*) FROM records"),
            valid=one("SELECT count(*) FROM records WHERE error_no = 0"),
            failed=one("SELECT count(*) FROM records WHERE error_no != 0"),
            sources=one("SELECT count(*) FROM sources"),
            targets=one("SELECT count(*) FROM targets"),
            workloads=one("SELECT count(*) FROM workloads"),
            by_target=table(
                """SELECT t.target, count(*), sum(r.error_no = 0), sum(r.error_no != 0)
                   FROM records r JOIN targets t ON t.id = r.target_id
                   GROUP BY t.id ORDER BY count(*) DESC, t.target""",
                ("target", "records", "valid", "failed"),
            ),
            by_template=table(
                """SELECT w.task_name, w.template_key, count(*), sum(r.error_no = 0),
                          sum(r.error_no != 0)
                   FROM records r JOIN workloads w ON w.id = r.workload_id
                   GROUP BY w.task_name, w.template_key ORDER BY count(*) DESC, w.task_name""",
                ("template", "template_key", "records", "valid", "failed"),
            ),
            by_error=table(
                """SELECT error_no, count(*) FROM records GROUP BY error_no ORDER BY error_no""",
                ("error_no", "records"),
            ),
        )

    def best(self, filters: Filters | None = None, *, knobs: bool = False) -> list[BestRow]:
        """Slot winners, one row per (workload, winning record), with the slots it holds."""
        where, params = _slot_filter_sql(filters or Filters())
        rows = self.conn.execute(
            f"""SELECT s.kind, s.name, r.id, t.target, w.task_name, w.template_key, w.args,
                       r.config_index, r.mean_cost, src.path, r.line, r.version, r.raw, r.dict_id,
                       (SELECT sum(records) FROM tallies c
                         WHERE c.workload_id = r.workload_id AND c.target_id = r.target_id)
                FROM slots s
                JOIN records r ON r.id = s.record_id
                JOIN targets t ON t.id = r.target_id
                JOIN workloads w ON w.id = s.workload_id
                JOIN sources src ON src.id = r.source_id
                {where}
                ORDER BY r.workload_id, r.id, s.kind DESC, s.name""",
            params,
        ).fetchall()
        grouped: dict[int, BestRow] = {}
        for row in rows:
            kind, name, record_id = row[0], row[1], row[2]
            label = f"model={name}" if kind == MODEL_SLOT else name
            existing = grouped.get(record_id)
            if existing is not None:
                existing.slots.append(label)
                continue
            grouped[record_id] = BestRow(
                slots=[label],
                target=row[3],
                task_name=row[4],
                template_key=row[5],
                args=json.loads(row[6]),
                config_index=row[7],
                mean_cost=row[8],
                source=row[9],
                line=row[10],
                log_version=row[11],
                record_id=record_id,
                trials=row[14],
                knobs=_knobs(self.codec.decode(row[12], row[13])) if knobs else None,
            )
        return list(grouped.values())

    def winner_lines(
        self, filters: Filters | None = None, *, top_k: int = 1
    ) -> Iterator[ExportLine]:
        """Every slot winner (or the top-k configs of each slot) with its line, by record id."""
        where, params = _slot_filter_sql(filters or Filters())
        if top_k <= 1:
            sql = f"""SELECT DISTINCT r.id, r.workload_id, t.target, r.version, r.raw, r.dict_id
                      FROM slots s
                      JOIN records r ON r.id = s.record_id
                      JOIN targets t ON t.id = r.target_id
                      JOIN workloads w ON w.id = s.workload_id
                      {where} ORDER BY r.id"""
            for rid, wid, target, version, raw, dict_id in self.conn.execute(sql, params):
                yield ExportLine(rid, wid, target, version, self.codec.decode(raw, dict_id))
            return
        yield from self._top_k_lines(where, params, top_k)

    def slot_holders(self) -> list[SlotHolder]:
        """Every slot and the record holding it (the two ApplyHistoryBest dictionaries)."""
        rows = self.conn.execute(
            """SELECT s.kind, s.name, w.task_name, w.template_key, w.args, r.id, r.source_id,
                      r.line, r.config_index, r.mean_cost
               FROM slots s JOIN records r ON r.id = s.record_id
               JOIN workloads w ON w.id = s.workload_id ORDER BY s.kind, s.name, w.id"""
        ).fetchall()
        return [SlotHolder(*row) for row in rows]

    def layer_inputs(
        self,
    ) -> tuple[list[tuple[int, str]], list[WorkloadInfo], list[Tally], dict[SlotKey, SlotWinner]]:
        """Targets, workloads, tallies and slot winners: what `layers.build_layers` needs.

        Reads only the small tables (never scans records), so it stays fast on large databases.
        """
        with self.snapshot():
            return self._layer_inputs()

    def _layer_inputs(
        self,
    ) -> tuple[list[tuple[int, str]], list[WorkloadInfo], list[Tally], dict[SlotKey, SlotWinner]]:
        targets = [(int(i), str(t)) for i, t in self.conn.execute("SELECT id, target FROM targets")]
        workloads = [
            WorkloadInfo(int(i), task, tkey, json.loads(args))
            for i, task, tkey, args in self.conn.execute(
                "SELECT id, task_name, template_key, args FROM workloads ORDER BY id"
            )
        ]
        tallies = [Tally(*row) for row in self.conn.execute("SELECT * FROM tallies")]
        slots = {
            (kind, name, workload_id): SlotWinner(record_id, mean, index, path, line)
            for kind, name, workload_id, record_id, mean, index, path, line in self.conn.execute(
                """SELECT s.kind, s.name, s.workload_id, s.record_id, s.mean_cost,
                          r.config_index, src.path, r.line
                   FROM slots s JOIN records r ON r.id = s.record_id
                   JOIN sources src ON src.id = r.source_id"""
            )
        }
        return targets, workloads, tallies, slots

    def has_slot_winners(self, filters: Filters | None = None) -> bool:
        """True when at least one slot matches the filters."""
        where, params = _slot_filter_sql(filters or Filters())
        sql = f"""SELECT 1 FROM slots s JOIN workloads w ON w.id = s.workload_id {where} LIMIT 1"""
        return self.conn.execute(sql, params).fetchone() is not None

    def _top_k_lines(self, where: str, params: tuple[Any, ...], top_k: int) -> Iterator[ExportLine]:
        # One pass over the valid records of the wanted workloads, best first: each slot keeps
        # the first (best, earliest) measurement of a config until it has K distinct configs.
        wanted: dict[int, set[tuple[str, str]]] = {}
        for kind, name, workload_id in self.conn.execute(
            f"""SELECT s.kind, s.name, s.workload_id FROM slots s
                JOIN workloads w ON w.id = s.workload_id {where}""",
            params,
        ):
            wanted.setdefault(workload_id, set()).add((kind, name))
        target_slots = {
            target_id: [(s.kind, s.name) for s in slots_of(parse_target(target), "")]
            for target_id, target in self.conn.execute("SELECT id, target FROM targets")
        }
        chosen: list[int] = []
        configs: dict[tuple[str, str, int], set[int]] = {}
        for record_id, target_id, workload_id, config_index in self.conn.execute(
            """SELECT id, target_id, workload_id, config_index FROM records
               WHERE error_no = 0 ORDER BY workload_id, mean_cost, id"""
        ):
            slots = wanted.get(workload_id)
            if slots is None:
                continue
            for kind, name in target_slots[target_id]:
                if (kind, name) not in slots:
                    continue
                seen = configs.setdefault((kind, name, workload_id), set())
                if len(seen) < top_k and config_index not in seen:
                    seen.add(config_index)
                    chosen.append(record_id)
        ordered = sorted(set(chosen))
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for rid, wid, target, version, raw, dict_id in self.conn.execute(
                f"""SELECT r.id, r.workload_id, t.target, r.version, r.raw, r.dict_id
                    FROM records r JOIN targets t ON t.id = r.target_id
                    WHERE r.id IN ({marks}) ORDER BY r.id""",
                chunk,
            ):
                yield ExportLine(rid, wid, target, version, self.codec.decode(raw, dict_id))


def _slot_filter_sql(filters: Filters) -> tuple[str, tuple[Any, ...]]:
    clauses: list[str] = []
    params: list[Any] = []
    if filters.target_key is not None:
        clauses.append("s.kind = ? AND s.name = ?")
        params += [KEY_SLOT, filters.target_key]
    if filters.model is not None:
        clauses.append("s.kind = ? AND s.name = ?")
        params += [MODEL_SLOT, filters.model]
    if filters.template is not None:
        clauses.append("w.task_name = ?")
        params.append(filters.template)
    if filters.task is not None:
        clauses.append("w.task_name LIKE ?")
        params.append(f"%{filters.task}%")
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    return where, tuple(params)


def _knobs(raw: bytes) -> list[list[object]] | None:
    parsed = parse_line(raw)
    if isinstance(parsed, TuningRecord):
        return [[name, value] for name, _type, value in parsed.entity]
    return None


# A parsed record waiting in a batch: line number, record, line content (no BOM, no line end).
# Measurement holds only scalars, so a batch gives the garbage collector nothing to traverse.
_Pending = tuple[int, Measurement, bytes]


# What a truncated or corrupt compressed stream raises while it is read.
_STREAM_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


def _readable_lines(
    lines: Iterable[bytes], broken: Callable[[int, str], None]
) -> Iterator[tuple[int, bytes]]:
    """Number the lines; if the stream breaks, report it as one more (rejected) line and stop.

    Only reading is guarded: an error while handling a line is a bug and must surface.
    """
    iterator = iter(lines)
    line_no = 0
    while True:
        try:
            raw = next(iterator)
        except StopIteration:
            return
        except _STREAM_ERRORS as exc:
            broken(line_no + 1, f"unreadable input after line {line_no}: {exc}")
            return
        line_no += 1
        yield line_no, raw


class _ImportWriter:
    """Streams one file's lines into the open transaction, batch by batch."""

    def __init__(
        self, conn: sqlite3.Connection, report: FileReport, codec: LineCodec, *, repair: bool
    ) -> None:
        self.conn = conn
        self.repair = repair
        self.report = report
        self.codec = codec
        self.compressor: zstandard.ZstdCompressor | None = None
        self.dict_id: int | None = None
        self.compressor_chosen = False
        self.target_ids: dict[str, tuple[int, list[tuple[str, str]]]] = {}
        self.slots_by_target: dict[int, list[tuple[str, str]]] = {}
        self.workload_ids: dict[tuple[str, str, str], int] = {}
        self.next_id = int(
            conn.execute("SELECT coalesce(max(id), 0) + 1 FROM records").fetchone()[0]
        )
        now = datetime.now(UTC).isoformat(timespec="seconds")
        cur = conn.execute(
            """INSERT INTO sources (path, sha256, size, lines, records, duplicates, comments,
                                    blank, rejected, imported_at)
               VALUES (?, '', 0, 0, 0, 0, 0, 0, 0, ?)""",
            (report.path, now),
        )
        self.source_id = int(cur.lastrowid or 0)
        self.pending_rejects: list[tuple[int, int, str]] = []

    def run(
        self, lines: Iterable[bytes], opened: OpenedLog, progress: ProgressCallback | None
    ) -> None:
        report = self.report
        batch: list[_Pending] = []
        line_no = 0
        for line_no, raw in _readable_lines(lines, self._broken):
            content = strip_line(raw)
            parsed = scan_content(content)
            if isinstance(parsed, Measurement):
                batch.append((line_no, parsed, content))
                if len(batch) >= BATCH_SIZE:
                    self._flush(batch)
                    batch = []
                    if progress is not None:
                        progress(opened.size)
            elif isinstance(parsed, Comment):
                report.comments += 1
            elif isinstance(parsed, Blank):
                report.blank += 1
            elif isinstance(parsed, Rejected):
                self._rejected_line(line_no, raw, parsed, batch)
        report.lines = max(line_no, report.lines)
        self._flush(batch)
        self._flush_rejects()
        if progress is not None:
            progress(opened.size)

    def _rejected_line(
        self, line_no: int, raw: bytes, parsed: Rejected, batch: list[_Pending]
    ) -> None:
        """Reject the line, or with --repair recover the records pasted into it."""
        pieces = repair_line(raw) if self.repair else []
        if not pieces:
            self._reject(line_no, parsed.reason)
            return
        self.report.split += len(pieces) - 1
        for piece in pieces:
            scanned = scan_content(piece)
            if isinstance(scanned, Measurement):
                self.report.repaired += 1
                batch.append((line_no, scanned, piece))
            else:
                reason = scanned.reason if isinstance(scanned, Rejected) else "empty"
                self._reject(line_no, f"after repair: {reason}")

    def _broken(self, line_no: int, reason: str) -> None:
        """The stream broke: the unreadable rest counts as one rejected line."""
        self._reject(line_no, reason)
        self.report.lines = line_no

    def _reject(self, line_no: int, reason: str) -> None:
        self.report.rejected += 1
        if len(self.report.rejects) < REJECTS_KEPT_IN_REPORT:
            self.report.rejects.append(RejectedLine(line=line_no, reason=reason))
        self.pending_rejects.append((self.source_id, line_no, reason))
        if len(self.pending_rejects) >= BATCH_SIZE:
            self._flush_rejects()

    def _flush_rejects(self) -> None:
        if self.pending_rejects:
            self.conn.executemany(
                "INSERT INTO rejects (source_id, line, reason) VALUES (?, ?, ?)",
                self.pending_rejects,
            )
            self.pending_rejects = []

    def _target(self, target: str) -> tuple[int, list[tuple[str, str]]]:
        cached = self.target_ids.get(target)
        if cached is not None:
            return cached
        parsed = parse_target(target)
        row = self.conn.execute("SELECT id FROM targets WHERE target = ?", (target,)).fetchone()
        if row is None:
            row = self.conn.execute(
                "INSERT INTO targets (target, kind, keys, model) VALUES (?, ?, ?, ?) RETURNING id",
                (target, parsed.kind, json.dumps(list(parsed.keys)), parsed.model),
            ).fetchone()
        slots = [(s.kind, s.name) for s in slots_of(parsed, "")]
        self.target_ids[target] = (int(row[0]), slots)
        self.slots_by_target[int(row[0])] = slots
        return self.target_ids[target]

    def _workload(self, task: str, template_key: str, args: str) -> int:
        key = (task, template_key, args)
        cached = self.workload_ids.get(key)
        if cached is not None:
            return cached
        row = self.conn.execute(
            "SELECT id FROM workloads WHERE task_name = ? AND template_key = ? AND args = ?", key
        ).fetchone()
        if row is None:
            row = self.conn.execute(
                "INSERT INTO workloads (task_name, template_key, args) VALUES (?, ?, ?) "
                "RETURNING id",
                key,
            ).fetchone()
        self.workload_ids[key] = int(row[0])
        return self.workload_ids[key]

    def _existing(self, hashes: Sequence[int]) -> dict[int, bytes]:
        found: dict[int, bytes] = {}
        unique = list(set(hashes))
        for start in range(0, len(unique), 900):
            chunk = unique[start : start + 900]
            marks = ",".join("?" * len(chunk))
            for h, raw, dict_id in self.conn.execute(
                f"SELECT hash, raw, dict_id FROM records WHERE hash IN ({marks})", chunk
            ):
                found[h] = self.codec.decode(raw, dict_id)
        return found

    def _flush(self, batch: list[_Pending]) -> None:
        if not batch:
            return
        if not self.compressor_chosen:
            self._choose_compressor([content for _, _, content in batch])
        compress = self.compressor.compress if self.compressor is not None else None
        hashes = [content_hash(content) for _, _, content in batch]
        stored = self._existing(hashes)
        looked_up = set(hashes)
        rows: list[tuple[Any, ...]] = []
        # Per (target, workload): best valid (mean, id); per (target, workload, error): tally.
        best_here: dict[tuple[int, int], tuple[float, int]] = {}
        tallies: dict[tuple[int, int, int], list[float]] = {}
        target_ids = self.target_ids
        workload_ids = self.workload_ids
        source_id = self.source_id
        dict_id = self.dict_id
        next_id = self.next_id
        for (line_no, rec, content), first_hash in zip(batch, hashes, strict=True):
            h = first_hash
            if h in stored:  # seen before (or a collision): the slow, exact path
                placed = self._place(first_hash, content, stored, looked_up)
                if placed is None:
                    self.report.duplicates += 1
                    continue
                h = placed
            stored[h] = content
            target_id = (target_ids.get(rec.target) or self._target(rec.target))[0]
            workload = (rec.task_name, rec.template_key, rec.args_json)
            workload_id = workload_ids.get(workload) or self._workload(*workload)
            record_id = next_id
            next_id += 1
            mean = rec.mean_cost
            error_no = rec.error_no
            all_cost = rec.all_cost
            packed = compress(content) if compress is not None else content
            compressed = len(packed) < len(content)
            rows.append(
                (
                    record_id,
                    source_id,
                    line_no,
                    target_id,
                    workload_id,
                    rec.config_index,
                    error_no,
                    mean,
                    all_cost,
                    rec.timestamp,
                    rec.log_version,
                    rec.tvm_version,
                    h,
                    packed if compressed else content,
                    dict_id if compressed else None,
                )
            )
            tally = tallies.get((target_id, workload_id, error_no))
            if tally is None:
                tallies[(target_id, workload_id, error_no)] = [1, all_cost, all_cost]
            else:
                tally[0] += 1
                if all_cost < tally[1]:
                    tally[1] = all_cost
                if all_cost > tally[2]:
                    tally[2] = all_cost
            if error_no == 0:
                holder = best_here.get((target_id, workload_id))
                if holder is None or holder[0] > mean:
                    best_here[(target_id, workload_id)] = (mean, record_id)
        self.next_id = next_id
        # Expand to slots; a slot shared by several targets keeps the smallest (mean, id): the
        # strict comparison of ApplyHistoryBest keeps the earliest of equal means.
        best: dict[tuple[str, str, int], tuple[float, int]] = {}
        for (target_id, workload_id), candidate in best_here.items():
            for kind, name in self.slots_by_target[target_id]:
                key = (kind, name, workload_id)
                holder = best.get(key)
                if holder is None or candidate < holder:
                    best[key] = candidate
        self.report.new += len(rows)
        self.conn.executemany(
            """INSERT INTO records (id, source_id, line, target_id, workload_id, config_index,
                                    error_no, mean_cost, all_cost, timestamp, version,
                                    tvm_version, hash, raw, dict_id)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            rows,
        )
        self.conn.executemany(
            """INSERT INTO tallies (target_id, workload_id, error_no, records, min_all_cost,
                                    max_all_cost)
               VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (target_id, workload_id, error_no) DO UPDATE
               SET records = records + excluded.records,
                   min_all_cost = min(min_all_cost, excluded.min_all_cost),
                   max_all_cost = max(max_all_cost, excluded.max_all_cost)""",
            [(t, w, e, int(n), lo, hi) for (t, w, e), (n, lo, hi) in tallies.items()],
        )
        # Later records replace a holder only when strictly faster: ties keep the earlier one.
        self.conn.executemany(
            """INSERT INTO slots (kind, name, workload_id, record_id, mean_cost)
               VALUES (?, ?, ?, ?, ?)
               ON CONFLICT (kind, name, workload_id) DO UPDATE
               SET record_id = excluded.record_id, mean_cost = excluded.mean_cost
               WHERE excluded.mean_cost < slots.mean_cost""",
            [(k, n, w, rid, mean) for (k, n, w), (mean, rid) in best.items()],
        )

    def _choose_compressor(self, contents: list[bytes]) -> None:
        """Train a dictionary on a large first batch, else reuse the newest one."""
        self.compressor_chosen = True
        data: bytes | None = None
        if len(contents) >= MIN_TRAINING_LINES:
            try:
                samples: list[bytes | bytearray | memoryview] = list(contents)
                data = zstandard.train_dictionary(DICTIONARY_BYTES, samples).as_bytes()
            except zstandard.ZstdError:
                data = None  # too uniform or too small to train on
            if data is not None:
                row = self.conn.execute(
                    "INSERT INTO dictionaries (data) VALUES (?) RETURNING id", (data,)
                ).fetchone()
                self.dict_id = int(row[0])
        if data is None:
            row = self.conn.execute(
                "SELECT id, data FROM dictionaries ORDER BY id DESC LIMIT 1"
            ).fetchone()
            if row is None:
                return
            self.dict_id, data = int(row[0]), row[1]
        self.compressor = zstandard.ZstdCompressor(
            level=COMPRESSION_LEVEL, dict_data=zstandard.ZstdCompressionDict(data)
        )

    def _place(
        self, h: int, content: bytes, stored: dict[int, bytes], looked_up: set[int]
    ) -> int | None:
        """The hash slot for new content, or None if this content is already stored.

        `stored` holds what the batch lookup found for the hashes in `looked_up`. Linear
        probing on the (astronomically rare) 64-bit collision keeps dedup exact.
        """
        while True:
            if h not in stored:
                if h in looked_up:
                    return h
                row = self.conn.execute(
                    "SELECT raw, dict_id FROM records WHERE hash = ?", (h,)
                ).fetchone()
                if row is None:
                    return h
                stored[h] = self.codec.decode(row[0], row[1])
            if stored[h] == content:
                return None
            h = h + 1 if h < (1 << 63) - 1 else -(1 << 63)


def open_store(path: str | Path) -> Store:
    """Open (creating and migrating if needed) the database at `path`."""
    return Store(path)
