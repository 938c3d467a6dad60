"""Importing one log inside the caller's transaction: parse, deduplicate, store in batches.

Keeps the slot table (ApplyHistoryBest's choice) and the tallies up to date as it goes, so
queries never scan records.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import zstandard

from tunelog.inputs import OpenedLog
from tunelog.models import FileReport, RejectedLine
from tunelog.records import (
    Blank,
    Comment,
    Measurement,
    Rejected,
    repair_line,
    scan_content,
    strip_line,
)
from tunelog.selection import slots_of
from tunelog.store.codec import (
    COMPRESSION_LEVEL,
    DICTIONARY_BYTES,
    MIN_TRAINING_LINES,
    LineCodec,
)
from tunelog.targets import parse_target

BATCH_SIZE = 2000
REJECTS_KEPT_IN_REPORT = 20

ProgressCallback = Callable[[int], None]


def content_hash(content: bytes) -> int:
    """64-bit signed hash of a line's content (the dedup key; collisions are probed)."""
    return int.from_bytes(hashlib.blake2b(content, digest_size=8).digest(), "big", signed=True)


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


class ImportWriter:
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
        self.workload_ids: dict[tuple[str, str, str, str], int] = {}
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

    def _workload(self, task: str, template_key: str, args: str, version: str) -> int:
        key = (task, template_key, args, version)
        cached = self.workload_ids.get(key)
        if cached is not None:
            return cached
        row = self.conn.execute(
            """SELECT id FROM workloads
               WHERE task_name = ? AND template_key = ? AND args = ? AND version = ?""",
            key,
        ).fetchone()
        if row is None:
            row = self.conn.execute(
                "INSERT INTO workloads (task_name, template_key, args, version) "
                "VALUES (?, ?, ?, ?) RETURNING id",
                key,
            ).fetchone()
        self.workload_ids[key] = int(row[0])
        return self.workload_ids[key]

    def _existing(self, hashes: set[int]) -> dict[int, bytes]:
        """Stored contents of the records already holding any of these hashes."""
        found: dict[int, bytes] = {}
        unique = list(hashes)
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
        looked_up = set(hashes)
        stored = self._existing(looked_up)
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
            workload = (rec.task_name, rec.template_key, rec.args_json, rec.log_version)
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
