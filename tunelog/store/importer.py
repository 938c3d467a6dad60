"""Importing one log inside the caller's transaction: parse, store in batches, deduplicate.

The per-line path does as little as it can: decode, find the record's (target, workload)
group, hash, append the line to a compressed block, and queue one records row. Per batch of
records, the new workloads are looked up and added at once; every GROUPS_HELD groups, their
tallies, slot offers, best configs and runs are stored (store.groupstate), so memory does not
grow with the number of workloads. At the end of the file, content hashes are indexed in
sorted order (one pass over the B-tree instead of a random insert per line) and duplicates
resolved exactly (store.deduplication), so queries never scan records.
"""

from __future__ import annotations

import json
import lzma
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from tunelog.inputs import OpenedLog, stored_path
from tunelog.linesplit import OverlongLine, is_terminated
from tunelog.models import REJECTS_KEPT_IN_REPORT, FileReport, RejectedLine
from tunelog.records import (
    SKIPPED_BY_ANSOR_READER,
    UTF8_BOM,
    Blank,
    Measurement,
    Rejected,
    ScannedLine,
    repair_line,
    scan_content,
)
from tunelog.rules.workloadidentity import IDENTITY_LENGTH, workload_key
from tunelog.store import holdings
from tunelog.store.codec import (
    BLOCK_LINES,
    BlockPacker,
    content_hash,
)
from tunelog.store.deduplication import Deduplicator
from tunelog.store.groupstate import GROUPS_HELD, Group, GroupStore
from tunelog.store.schema import TOP_CONFIGS_KEPT
from tunelog.targets import Target, parse_target

BATCH_SIZE = 2048  # records per executemany (a multiple of BLOCK_LINES)
ProgressCallback = Callable[[int], None]

# What a truncated or corrupt compressed stream raises while it is read.
_STREAM_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


class ImportWriter:
    """Streams one file's lines into the open transaction; `run` then `finish`."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        report: FileReport,
        *,
        repair: bool,
        scanner: Callable[[bytes], ScannedLine] = scan_content,
        source_id: int | None = None,
        first_line: int = 0,
        known_workloads: Mapping[tuple[str, str, str, str], int] | None = None,
    ) -> None:
        """`source_id` and `first_line`: continue that source after its first lines (the lines
        a tuner appended since; see Store.import_log), else a new source from line 1.
        `scanner` reads each line (MetaSchedule records have their own). `known_workloads`:
        ids of workloads known to be in the database (see Store._known_workloads)."""
        self.conn = conn
        # How a line becomes a record: log lines by default, MetaSchedule records otherwise.
        self.scanner = scanner
        self.repair = repair
        self.report = report
        self.first_line = first_line
        new_source = source_id is None
        if source_id is None:
            now = datetime.now(UTC).isoformat(timespec="seconds")
            cur = conn.execute(
                """INSERT INTO sources (path, sha256, size, lines, records, duplicates, comments,
                                        blank, rejected, imported_at)
                   VALUES (?, '', 0, 0, 0, 0, 0, 0, 0, ?)""",
                (stored_path(report.path), now),
            )
            source_id = int(cur.lastrowid or 0)
        self.source_id = source_id
        # The file's record lines go into `holdings` as runs (see store.holdings): a run starts
        # wherever a line number does not follow the last one (ids always do, in the writer).
        self.first_seq = 0 if new_source else holdings.next_seq(conn, source_id)
        self.run_starts: list[tuple[int, int]] = []  # (line, first record id) of each run
        self.run_next_line = -1
        # Ids come from a counter that only grows (see schema migration 3): an id once given
        # to a line is never given to another, even when its record is dropped as a duplicate.
        self.first_id = self.next_id = int(
            conn.execute("SELECT value FROM counters WHERE name = 'next_record_id'").fetchone()[0]
        )
        self.block_lines: list[bytes] = []
        self.packed_blocks: list[tuple[int, int, bytes]] = []
        self.packer = BlockPacker()
        # Records rows waiting for the batch insert; the fourth item is the record's group
        # until `_flush` has looked up the batch's new workloads and put their ids in.
        self.rows: list[tuple[Any, ...]] = []
        self.target_ids: dict[str, int] = {}
        # Workload ids by identity, as looked up in this file since the groups were last
        # stored (a workload measured for several targets is looked up once).
        self.workload_ids: dict[tuple[str, str, str, str], int] = {}
        self.known_workloads = known_workloads if known_workloads is not None else {}
        self.targets_by_id: dict[int, Target] = {}
        # The (target, workload) groups held since their state was last stored, by the first
        # five Measurement fields (the identity: target, and workload as normalised), and
        # those whose workload id is not looked up yet (done once per batch, see `_flush`).
        self.groups: dict[tuple[Any, ...], Group] = {}
        self.unresolved: list[Group] = []
        # Ids given to the workloads this file adds, in order: [first_new_workload,
        # next_workload_id) once the first is given (see _resolve_workloads).
        self.first_new_workload = self.next_workload_id = 0
        # A resumed source's runs as they were before this file, for a recount after
        # duplicates (the groups' runs are stored batch after batch, see
        # GroupStore.recount_runs).
        self.runs_snapshot = False
        if not new_source:
            conn.execute("DROP TABLE IF EXISTS temp.runs_before")
            conn.execute(
                "CREATE TEMP TABLE runs_before AS SELECT * FROM trial_runs WHERE source_id = ?",
                (source_id,),
            )
            self.runs_snapshot = True
        self._opened: OpenedLog | None = None
        self._progress: ProgressCallback | None = None
        self.pending_rejects: list[tuple[int, int, str]] = []
        # Line number of the last line read that ends with a line end (set by `run`).
        self.terminated_lines = first_line
        # Workloads this file added whose groups were not stored yet: no kept config of theirs
        # can exist, so the once-per-group lookups skip them (logs of best configs have ~2
        # lines per workload). All the file added: `added_workloads`.
        self.new_workloads: set[int] = set()
        self.group_store = GroupStore(
            conn,
            source_id,
            self.targets_by_id,
            self.new_workloads,
            runs_snapshot=self.runs_snapshot,
        )

    def run(
        self, lines: Iterable[bytes], opened: OpenedLog, progress: ProgressCallback | None
    ) -> None:
        """Read every line: records are queued and stored in batches, the rest counted."""
        self._opened = opened
        self._progress = progress
        report = self.report
        add = self.add
        scan = self.scanner
        line_no = self.first_line  # line numbers are the file's, also when resumed
        iterator = iter(lines)
        raw = b"\n"  # the last line read
        while True:
            try:
                raw = next(iterator)
            except StopIteration:
                break
            except _STREAM_ERRORS as exc:
                # Only reading is guarded: an error while handling a line must surface.
                self._reject(line_no + 1, f"unreadable input after line {line_no}: {exc}")
                line_no += 1
                raw = b""  # that line has no line end
                break
            line_no += 1
            # strip_line, inline: this loop runs once per line of every log.
            content = raw.rstrip(b"\r\n")
            if content[:1] == b"\xef" and content.startswith(UTF8_BOM):
                content = content[3:]
            parsed = scan(content)
            if type(parsed) is Measurement:
                add(line_no, parsed, content)
            elif type(parsed) is Rejected:
                self._rejected_line(line_no, raw, parsed)
            elif type(parsed) is Blank:
                if type(raw) is OverlongLine:  # too long to be read: it is no blank line
                    self._reject(line_no, raw.reason)
                    continue
                report.blank += 1
            else:
                report.comments += 1
        report.lines = line_no - self.first_line
        # Only the last line can lack a line end: the lines up to the last line end.
        self.terminated_lines = line_no - (not is_terminated(raw))
        if progress is not None:
            progress(opened.size)

    def add(self, line_no: int, rec: Measurement, content: bytes) -> None:
        """Queue one record: its row, its line in the current block, its tally and slot bid."""
        group = self.groups.get(rec[:IDENTITY_LENGTH]) or self._group(rec)
        record_id = self.next_id
        self.next_id = record_id + 1
        if line_no != self.run_next_line:
            self.run_starts.append((line_no, record_id))
        self.run_next_line = line_no + 1
        block = self.block_lines
        block.append(content)
        error_no = rec.error_no
        all_cost = rec.all_cost
        mean = rec.mean_cost
        self.rows.append(
            (
                record_id,
                line_no,
                group.target_id,
                group.workload_id or group,
                rec.config_index,
                error_no,
                mean,
                all_cost,
                rec.timestamp,
                content_hash(content),
            )
        )
        group.trials += 1
        tally = group.tallies.get(error_no)
        if tally is None:
            group.tallies[error_no] = [1, all_cost, all_cost]
        else:
            tally[0] += 1
            if all_cost < tally[1]:
                tally[1] = all_cost
            elif all_cost > tally[2]:
                tally[2] = all_cost
        group.last_id = record_id
        timestamp = rec.timestamp
        if timestamp < group.start:
            group.start = timestamp
        if error_no == 0:
            # rules.bestrecord.improves, inline on the hot path (records come in file order):
            # strictly faster only, so ties keep the earliest record.
            if mean < group.best_mean:
                group.best_mean = mean
                group.best_id = record_id
                # A new best of the run: its trial number is the group's records so far.
                group.improvements.append((group.trials, mean))
            # The best record of each config, for `export --top-k` (see GroupStore);
            # once the group has forgotten configs, only a record beating the last kept one
            # can rank among its best (a later record of equal mean ranks after it).
            if mean < group.top_bound:
                index = rec.config_index
                means = group.config_means
                known = means.get(index)
                if known is None or mean < known:
                    means[index] = mean
                    group.config_ids[index] = record_id
                    if len(means) > 4 * TOP_CONFIGS_KEPT:
                        group.keep_top_configs()
        # Last: a full block may store the batch and the groups, this record's state with them.
        if len(block) >= BLOCK_LINES:
            self._close_block()

    def finish(self) -> None:
        """Store what is queued and the groups' state, then resolve duplicates."""
        self._close_block()
        self._flush()
        self._store_groups()
        self._flush_runs(final=True)
        self._flush_rejects()
        if self.next_id != self.first_id:
            self.conn.execute(
                "UPDATE counters SET value = ? WHERE name = 'next_record_id'", (self.next_id,)
            )
        duplicates = self._deduplicate()
        self.report.duplicates += duplicates
        self.report.new = self.next_id - self.first_id - duplicates
        if duplicates:
            self.group_store.recount_runs(self.first_id)
        # What is stored per workload and computed from the workload alone belongs here, once
        # per file, for `self.added_workloads()`.
        if self.runs_snapshot:
            self.conn.execute("DROP TABLE temp.runs_before")

    def added_workloads(self) -> range:
        """The ids of the workloads this file added (none before the end of `finish`'s reads)."""
        return range(self.first_new_workload, self.next_workload_id)

    # -- lines that are not plain records ---------------------------------------------------

    def _rejected_line(self, line_no: int, raw: bytes, parsed: Rejected) -> None:
        """Reject the line, or with --repair recover the records pasted into it."""
        if type(raw) is OverlongLine:  # too long to be read (a scanner saw only its end)
            self._reject(line_no, raw.reason)
            return
        pieces = repair_line(raw) if self.repair and parsed != SKIPPED_BY_ANSOR_READER else []
        if not pieces:
            self._reject(line_no, parsed.reason)
            return
        self.report.split += len(pieces) - 1
        for piece in pieces:
            scanned = scan_content(piece)
            if isinstance(scanned, Measurement):
                self.report.repaired += 1
                self.add(line_no, scanned, piece)
            else:
                reason = scanned.reason if isinstance(scanned, Rejected) else "empty"
                self._reject(line_no, f"after repair: {reason}")

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

    # -- ids of targets and workloads ---------------------------------------------------------

    def _group(self, rec: Measurement) -> Group:
        """The group of a (target, workload) not seen since the groups were last stored."""
        target_id = self.target_ids.get(rec.target) or self._target(rec.target)
        key = workload_key(rec)
        group = Group(target_id, self.workload_ids.get(key) or self.known_workloads.get(key, 0))
        group.version = rec.log_version  # the log version picks the slots (slots_of)
        group.first_id = self.next_id  # the record being added
        if not group.workload_id:
            group.key = key
            group.spelling = rec.spelling
            self.unresolved.append(group)
        self.groups[rec[:IDENTITY_LENGTH]] = group
        return group

    def _target(self, target: str) -> int:
        parsed = parse_target(target)
        row = self.conn.execute("SELECT id FROM targets WHERE target = ?", (target,)).fetchone()
        if row is None:
            row = self.conn.execute(
                "INSERT INTO targets (target, kind, keys, model) VALUES (?, ?, ?, ?) RETURNING id",
                (target, parsed.kind, json.dumps(list(parsed.keys)), parsed.model),
            ).fetchone()
        target_id = int(row[0])
        self.target_ids[target] = target_id
        self.targets_by_id[target_id] = parsed
        return target_id

    def _resolve_workloads(self) -> None:
        """Give the groups created since the last batch their workload ids, adding new ones.

        One lookup per batch through a temporary table joined on the workloads' identity
        index, and one insert of the new workloads with ids given here (the next free ones,
        as SQLite would): a file of 80k workloads asks no query per workload.
        """
        pending: dict[tuple[str, str, str, str], list[Group]] = {}
        for group in self.unresolved:
            assert group.key is not None
            known = self.workload_ids.get(group.key)
            if known is not None:
                group.workload_id = known
            else:
                pending.setdefault(group.key, []).append(group)
        self.unresolved = []
        if not pending:
            return
        conn = self.conn
        conn.execute(
            """CREATE TEMP TABLE IF NOT EXISTS wanted_workloads (
                   n INTEGER PRIMARY KEY, task_name TEXT, template_key TEXT, args TEXT,
                   version TEXT)"""
        )
        keys = list(pending)
        conn.executemany(
            "INSERT INTO temp.wanted_workloads VALUES (?, ?, ?, ?, ?)",
            [(n, *key) for n, key in enumerate(keys)],
        )
        found = dict(
            conn.execute(
                """SELECT t.n, w.id FROM temp.wanted_workloads t JOIN workloads w
                   ON w.task_name = t.task_name AND w.template_key = t.template_key
                      AND w.args = t.args AND w.version = t.version"""
            ).fetchall()
        )
        conn.execute("DELETE FROM temp.wanted_workloads")
        added: list[tuple[Any, ...]] = []
        for n, key in enumerate(keys):
            workload_id = found.get(n)
            if workload_id is None:
                if not self.next_workload_id:
                    top = conn.execute("SELECT max(id) FROM workloads").fetchone()[0]
                    self.first_new_workload = self.next_workload_id = int(top or 0) + 1
                workload_id = self.next_workload_id
                self.next_workload_id += 1
                self.new_workloads.add(workload_id)
                # The first spelling seen is kept for display (see schema migration 7).
                added.append((workload_id, *key, pending[key][0].spelling))
            self.workload_ids[key] = workload_id
            for group in pending[key]:
                group.workload_id = workload_id
        conn.executemany(
            "INSERT INTO workloads (id, task_name, template_key, args, version, spelling) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            added,
        )

    # -- batches ------------------------------------------------------------------------------

    def _close_block(self) -> None:
        if self.block_lines:
            packed = self.packer.pack(self.block_lines)
            # A block's id is the id of the first record whose line it holds.
            first = self.next_id - len(self.block_lines)
            self.packed_blocks.append((first, self.source_id, packed))
            self.block_lines = []
        if len(self.rows) >= BATCH_SIZE:
            self._flush()
            if self._progress is not None and self._opened is not None:
                self._progress(self._opened.size)

    def _flush(self) -> None:
        if self.packed_blocks:
            self.conn.executemany(
                "INSERT INTO blocks (id, source_id, data) VALUES (?, ?, ?)", self.packed_blocks
            )
            self.packed_blocks = []
        if self.rows:
            if self.unresolved:
                self._resolve_workloads()
                self.rows = [
                    row if type(row[3]) is int else (*row[:3], row[3].workload_id, *row[4:])
                    for row in self.rows
                ]
            # The source is written into the statement: each parameter less is a few percent
            # of the insert.
            self.conn.executemany(
                f"""INSERT INTO records (id, source_id, line, target_id, workload_id,
                                        config_index, error_no, mean_cost, all_cost, timestamp,
                                        hash)
                    VALUES (?, {self.source_id:d}, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                self.rows,
            )
            self.rows = []
            self._flush_runs(final=False)
        if len(self.groups) >= GROUPS_HELD:
            self._store_groups()

    def _flush_runs(self, *, final: bool) -> None:
        """Store the runs of record lines known complete (all of them at the end)."""
        starts = self.run_starts
        if not starts:
            return
        ends = [first for _, first in starts[1:]]
        if final:
            ends.append(self.next_id)
        base = self.first_seq - self.first_id
        holdings.store_runs(
            self.conn,
            self.source_id,
            [
                (base + first, line, first, end - first)
                for (line, first), end in zip(starts, ends, strict=False)
            ],
        )
        self.run_starts = [] if final else starts[-1:]

    # -- once per file ------------------------------------------------------------------------

    def _deduplicate(self) -> int:
        """Index the file's content hashes; remove the records seen before. Returns how many.

        The hashes go into the index sorted, in one statement: a pass over the B-tree instead
        of a random insert per line (which dominated large imports). In the usual case every
        hash is new and that is all; otherwise the records whose hash is taken are compared
        byte for byte with the holder, and either dropped (a duplicate) or re-hashed by linear
        probing (a 64-bit collision).
        """
        added = self.next_id - self.first_id
        if added == 0:
            return 0
        indexed = self.conn.execute(
            """INSERT OR IGNORE INTO content_hashes (workload_id, hash, record_id)
               SELECT workload_id, hash, id FROM records WHERE id >= ?
               ORDER BY workload_id, hash, id""",
            (self.first_id,),
        ).rowcount
        if indexed == added:
            return 0
        duplicates = Deduplicator(self.conn, self.first_id, self.next_id).run()
        if duplicates:
            # The file still held those lines: its runs point at the records holding them.
            holdings.remap(self.conn, self.source_id, self.first_seq)
        self.conn.execute("DROP TABLE IF EXISTS temp.dropped_segments")
        return duplicates

    def _store_groups(self) -> None:
        """Store the held groups' tallies, slot offers, best configs and runs; forget them.

        Each part merges with what is stored (counts add up, the best-record rule picks
        holders in any order of offers, configs are ranked again, runs are joined), so a
        (target, workload) seen again later in the file is simply stored again.
        """
        groups = list(self.groups.values())
        if not groups:
            return
        self.group_store.store(groups)
        self.groups = {}
        self.workload_ids = {}
