"""Importing one log inside the caller's transaction: parse, store in batches, deduplicate.

The per-line path does as little as it can: decode, look up the target and workload ids,
hash, append the line to a compressed block, and queue one records row. Everything that
needs the whole file is done once at its end: content hashes are indexed in sorted order
(one pass over the B-tree instead of a random insert per line), duplicates are resolved
(exactly: equal hashes are compared byte for byte), and the slot table (ApplyHistoryBest's
choice) and the tallies are updated, so queries never scan records.
"""

from __future__ import annotations

import json
import lzma
import math
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
from tunelog.rules.bestrecord import OFFER_SLOT_SQL
from tunelog.rules.bestsofar import joined
from tunelog.rules.ranking import best_configs, better_config
from tunelog.selection import slots_of
from tunelog.store import holdings
from tunelog.store.codec import (
    BLOCK_LINES,
    BlockPacker,
    LineReader,
    content_hash,
    improvements_text,
    next_hash,
)
from tunelog.store.schema import TOP_CONFIGS_KEPT
from tunelog.targets import Target, parse_target

BATCH_SIZE = 2048  # records per executemany (a multiple of BLOCK_LINES)
# (target, workload) groups held in memory between two stores of their state: what the
# file's per-workload state costs is bounded by this, whatever the number of workloads.
GROUPS_HELD = 4096
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
        self.groups: dict[tuple[Any, ...], _Group] = {}
        self.unresolved: list[_Group] = []
        # Ids given to the workloads this file adds, in order: [first_new_workload,
        # next_workload_id) once the first is given (see _resolve_workloads).
        self.first_new_workload = self.next_workload_id = 0
        # A resumed source's runs as they were before this file, for a recount after
        # duplicates (the groups' runs are stored batch after batch, see `_recount_runs`).
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
        # The first five fields are the (target, workload) identity.
        group = self.groups.get(rec[:5]) or self._group(rec)
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
            # The best record of each config, for `export --top-k` (see _store_top_configs);
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
            self._recount_runs()
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

    def _group(self, rec: Measurement) -> _Group:
        """The group of a (target, workload) not seen since the groups were last stored."""
        target_id = self.target_ids.get(rec.target) or self._target(rec.target)
        key = (rec.task_name, rec.template_key, rec.args_json, rec.log_version)
        group = _Group(target_id, self.workload_ids.get(key) or self.known_workloads.get(key, 0))
        group.version = rec.log_version  # the log version picks the slots (slots_of)
        group.first_id = self.next_id  # the record being added
        if not group.workload_id:
            group.key = key
            group.spelling = rec.spelling
            self.unresolved.append(group)
        self.groups[rec[:5]] = group
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
        pending: dict[tuple[str, str, str, str], list[_Group]] = {}
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
        duplicates = _Deduplicator(self.conn, self.first_id, self.next_id).run()
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
        self._store_tallies(groups)
        self._store_slots(groups)
        self._store_top_configs(groups)
        self._store_trial_runs(groups)
        self.new_workloads.difference_update(g.workload_id for g in groups)
        self.groups = {}
        self.workload_ids = {}

    def _store_tallies(self, groups: list[_Group]) -> None:
        self.conn.executemany(
            """INSERT INTO tallies (target_id, workload_id, error_no, records, min_all_cost,
                                    max_all_cost)
               VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (target_id, workload_id, error_no) DO UPDATE
               SET records = records + excluded.records,
                   min_all_cost = min(min_all_cost, excluded.min_all_cost),
                   max_all_cost = max(max_all_cost, excluded.max_all_cost)""",
            [
                (g.target_id, g.workload_id, error_no, int(n), lo, hi)
                for g in groups
                for error_no, (n, lo, hi) in g.tallies.items()
            ],
        )

    def _store_slots(self, groups: list[_Group]) -> None:
        """Offer each group's best record to its slots, by ApplyHistoryBest's own rule.

        The groups' best records are offered to each slot they compete for (selection.slots_of)
        through `rules.bestrecord.OFFER_SLOT_SQL`: the best-record rule as an upsert, in any
        order of offers (of equal means the smaller id, the earlier record, wins), so holders
        need not be read first. A duplicate never holds a slot: its first copy has the same
        mean and a smaller id.
        """
        names: dict[tuple[int, str], list[tuple[str, str]]] = {}
        rows: list[tuple[str, str, int, int, float]] = []
        offered = sorted(
            ((g.best_id, g) for g in groups if g.best_id is not None), key=lambda item: item[0]
        )
        for best_id, g in offered:
            pairs = names.get((g.target_id, g.version))
            if pairs is None:
                target = self.targets_by_id[g.target_id]
                pairs = [(slot.kind, slot.name) for slot in slots_of(target, "", g.version)]
                names[(g.target_id, g.version)] = pairs
            rows += [(kind, name, g.workload_id, best_id, g.best_mean) for kind, name in pairs]
        self.conn.executemany(OFFER_SLOT_SQL, rows)

    def _store_trial_runs(self, groups: list[_Group]) -> None:
        """One `trial_runs` row per (target, workload) of the file: its trials in file order.

        What convergence needs (convergence.Progress: trials, valid trials, each new best with
        its trial number) and where the run starts (earliest timestamp, first and last record
        id), counted on the hot path. A run stored before (earlier in this file, or the lines
        a resumed source held) is joined with the groups' (as convergence.Progress.extend).
        """
        earlier = self._stored_runs(groups)
        rows = []
        for g in groups:
            trials = g.trials
            if trials == 0:
                continue
            valid = int(g.tallies[0][0]) if 0 in g.tallies else 0
            start, first_id, improvements = g.start, g.first_id, g.improvements
            before = earlier.get((g.target_id, g.workload_id))
            if before is not None:
                old_trials, old_valid, old_start, old_first, old_improvements = before
                stored = [(int(n), float(c)) for n, c in json.loads(old_improvements)]
                improvements = joined(stored, old_trials, g.improvements)
                trials, valid = trials + old_trials, valid + old_valid
                start, first_id = min(start, old_start), min(first_id, old_first)
            rows.append(
                (
                    self.source_id,
                    g.target_id,
                    g.workload_id,
                    trials,
                    valid,
                    start,
                    first_id,
                    g.last_id,
                    improvements_text(improvements),
                )
            )
        self.conn.executemany(
            "INSERT OR REPLACE INTO trial_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
        )

    def _stored_runs(self, groups: list[_Group]) -> dict[tuple[int, int], tuple[Any, ...]]:
        """The source's stored runs of these groups: {(target, workload): (trials, valid,
        start, first id, improvements)}, read a few hundred workloads a query."""
        wanted: dict[int, list[int]] = {}
        for g in groups:
            wanted.setdefault(g.target_id, []).append(g.workload_id)
        runs: dict[tuple[int, int], tuple[Any, ...]] = {}
        for target_id, workload_ids in wanted.items():
            for start in range(0, len(workload_ids), 500):
                marks = ",".join(str(int(i)) for i in workload_ids[start : start + 500])
                for row in self.conn.execute(
                    "SELECT workload_id, trials, valid, start, first_id, improvements "
                    f"FROM trial_runs WHERE source_id = ? AND target_id = ? "
                    f"AND workload_id IN ({marks})",
                    (self.source_id, target_id),
                ):
                    runs[(target_id, int(row[0]))] = row[1:]
        return runs

    def _recount_runs(self) -> None:
        """The file's runs counted again from its stored records, after duplicates were
        dropped (a duplicate is no trial of this file).

        The runs stored batch by batch are replaced by the source's runs as they were before
        this file, joined with the recount; the records are read grouped by (target,
        workload), so one group is held at a time.
        """
        conn = self.conn
        conn.execute("DELETE FROM trial_runs WHERE source_id = ?", (self.source_id,))
        if self.runs_snapshot:
            conn.execute("INSERT INTO trial_runs SELECT * FROM temp.runs_before")
        groups: list[_Group] = []
        g: _Group | None = None
        for record_id, target_id, workload_id, error_no, mean, timestamp in conn.execute(
            """SELECT id, target_id, workload_id, error_no, mean_cost, timestamp FROM records
               WHERE id >= ? ORDER BY target_id, workload_id, id""",
            (self.first_id,),
        ):
            if g is None or g.target_id != target_id or g.workload_id != workload_id:
                if len(groups) >= GROUPS_HELD:
                    self._store_trial_runs(groups)
                    groups = []
                g = _Group(target_id, workload_id)
                g.first_id = record_id
                groups.append(g)
            g.last_id = record_id
            g.trials += 1
            g.start = min(g.start, timestamp)
            if error_no == 0:
                g.tallies[0] = [g.tallies[0][0] + 1, 0.0, 0.0] if 0 in g.tallies else [1, 0.0, 0.0]
                if mean < g.best_mean:
                    g.best_mean = mean
                    g.improvements.append((g.trials, mean))
        self._store_trial_runs(groups)

    def _store_top_configs(self, groups: list[_Group]) -> None:
        """Merge the file's best configs per (target, workload) into `top_configs`.

        Each (target, workload) keeps its TOP_CONFIGS_KEPT best configs, each with its best
        record, ranked by (mean cost, record id): the earliest of equal means first, as the
        slots rank. A slot's K best distinct configs (K <= TOP_CONFIGS_KEPT) are always among
        the kept configs of its targets, so `export --top-k` reads this small table instead of
        sorting every valid record. A duplicate (dropped later, see `_deduplicate`) never ranks:
        its first copy has the same config and mean and a smaller id, and is ranked first (or
        already kept) in the same group.
        """
        rows: list[tuple[int, int, int, int, float]] = []
        merged: list[_Group] = []
        for g in groups:
            if not g.config_ids:
                continue
            g.keep_top_configs()
            if g.workload_id in self.new_workloads:
                # Nothing kept before, nothing dropped: the file's configs are the ranking.
                ids = (g.target_id, g.workload_id)
                rows += [(*ids, index, rid, mean) for mean, rid, index in g.ranked_configs()]
            else:
                merged.append(g)
        kept = self._kept_top_configs(merged)
        for g in merged:
            ids = (g.target_id, g.workload_id)
            candidates = kept.get(ids, {})
            for index, rid in g.config_ids.items():
                better_config(candidates, index, (g.config_means[index], rid))
            best = best_configs(candidates, TOP_CONFIGS_KEPT)
            rows += [(*ids, index, rid, mean) for (mean, rid), index in best]
        self.conn.executemany(
            "DELETE FROM top_configs WHERE target_id = ? AND workload_id = ?", list(kept)
        )
        self.conn.executemany("INSERT INTO top_configs VALUES (?, ?, ?, ?, ?)", rows)

    def _kept_top_configs(
        self, groups: list[_Group]
    ) -> dict[tuple[int, int], dict[int, tuple[float, int]]]:
        """The configs kept before for these groups: {(target, workload): {index: (mean, id)}}.

        Read per target, a few hundred workloads a query (through the primary key), instead
        of a query per group: a directory of logs adds records to thousands of workloads.
        """
        wanted: dict[int, list[int]] = {}
        for g in groups:
            if g.workload_id not in self.new_workloads:
                wanted.setdefault(g.target_id, []).append(g.workload_id)
        kept: dict[tuple[int, int], dict[int, tuple[float, int]]] = {}
        for target_id, workload_ids in wanted.items():
            for start in range(0, len(workload_ids), 500):
                marks = ",".join(str(i) for i in workload_ids[start : start + 500])
                for workload_id, index, rid, mean in self.conn.execute(
                    "SELECT workload_id, config_index, record_id, mean_cost FROM top_configs "
                    f"WHERE target_id = ? AND workload_id IN ({marks})",
                    (target_id,),
                ):
                    kept.setdefault((target_id, workload_id), {})[index] = (mean, rid)
        return kept


class _Group:
    """One (target, workload) of the file: its ids, best valid record, tallies by error."""

    __slots__ = (
        "best_id",
        "best_mean",
        "config_ids",
        "config_means",
        "first_id",
        "improvements",
        "key",
        "last_id",
        "spelling",
        "start",
        "tallies",
        "target_id",
        "top_bound",
        "trials",
        "version",
        "workload_id",
    )

    def __init__(self, target_id: int, workload_id: int) -> None:
        self.target_id = target_id
        # 0 until looked up (ImportWriter._resolve_workloads), from `key` and `spelling`.
        self.workload_id = workload_id
        self.key: tuple[str, str, str, str] | None = None
        self.spelling: str | None = None
        self.version = ""  # the log version picks the slots (selection.slots_of)
        self.best_mean = math.inf
        self.best_id: int | None = None
        # Per config index, its best valid record in this file (two dicts of scalars rather
        # than one of tuples: nothing for the garbage collector to traverse).
        self.config_means: dict[int, float] = {}
        self.config_ids: dict[int, int] = {}
        self.top_bound = math.inf
        # Per error number: [records, min all_cost, max all_cost].
        self.tallies: dict[int, list[float]] = {}
        # The file's run of this (target, workload), for convergence (see _store_trial_runs).
        self.trials = 0
        self.first_id = self.last_id = -1
        self.start = math.inf
        self.improvements: list[tuple[int, float]] = []

    def keep_top_configs(self) -> None:
        """Forget all but the TOP_CONFIGS_KEPT best configs (by mean, then record id).

        A config forgotten here was beaten by that many others, which only get better, so it
        cannot be among the group's best at the end of the file; nor can a record that does not
        beat the last config kept (`top_bound`).
        """
        if len(self.config_means) <= TOP_CONFIGS_KEPT:
            return
        kept = self.ranked_configs()[:TOP_CONFIGS_KEPT]
        self.config_means = {index: mean for mean, _, index in kept}
        self.config_ids = {index: record_id for _, record_id, index in kept}
        self.top_bound = kept[-1][0]

    def ranked_configs(self) -> list[tuple[float, int, int]]:
        """`(mean, record id, config index)` of the configs known, best first (the ranking of
        rules.ranking.best_configs, flattened: this runs once per group)."""
        # The two dicts hold the same keys in the same order (set and deleted together).
        means, ids = self.config_means, self.config_ids
        return sorted(zip(means.values(), ids.values(), means, strict=True))


class _Deduplicator:
    """The slow path of `_deduplicate`: records of this file whose content hash is taken."""

    PAGE = 2000

    def __init__(
        self,
        conn: sqlite3.Connection,
        first_id: int,
        end_id: int,
    ) -> None:
        self.conn = conn
        self.first_id = first_id
        self.end_id = end_id
        self.reader = LineReader(conn)

    def run(self) -> int:
        """Drop duplicates, re-hash collisions, drop blocks left empty; count the duplicates.

        The dropped records go into `temp.dropped_segments` with the records holding their
        lines (see holdings.Segments), for the file's holdings."""
        segments = holdings.Segments(self.conn)
        duplicates = 0
        after = self.first_id - 1
        while True:
            # Paged by id so that memory stays flat when a large file is all duplicates.
            page = self.conn.execute(
                """SELECT r.id, r.hash, r.target_id, r.workload_id, r.error_no, h.record_id
                   FROM records r
                   JOIN content_hashes h ON h.workload_id = r.workload_id AND h.hash = r.hash
                   WHERE r.id > ? AND h.record_id != r.id ORDER BY r.id LIMIT ?""",
                (after, self.PAGE),
            ).fetchall()
            if not page:
                break
            dropped: list[tuple[int]] = []
            # Dropped records per tally (the tallies were stored with them counted).
            uncounted: dict[tuple[int, int, int], int] = {}
            for record_id, h, target_id, workload_id, error_no, holder in page:
                content = self.reader.line(record_id)
                if self.reader.line(holder) != content:
                    holder = self._holder_of(record_id, workload_id, next_hash(h), content)
                if holder is not None:
                    dropped.append((record_id,))
                    segments.add(record_id, holder)
                    tally = (target_id, workload_id, error_no)
                    uncounted[tally] = uncounted.get(tally, 0) + 1
            self.conn.executemany("DELETE FROM records WHERE id = ?", dropped)
            self._uncount(uncounted)
            segments.flush()
            duplicates += len(dropped)
            after = page[-1][0]
        segments.flush(final=True)
        if duplicates:
            self._drop_empty_blocks()
        return duplicates

    def _uncount(self, uncounted: dict[tuple[int, int, int], int]) -> None:
        """Take dropped duplicates out of the tallies (min and max stay: a duplicate's cost
        is its first copy's, counted in the same tally or an earlier file's)."""
        keys = list(uncounted)
        self.conn.executemany(
            """UPDATE tallies SET records = records - ?
               WHERE target_id = ? AND workload_id = ? AND error_no = ?""",
            [(uncounted[key], *key) for key in keys],
        )
        self.conn.executemany(
            """DELETE FROM tallies
               WHERE target_id = ? AND workload_id = ? AND error_no = ? AND records = 0""",
            keys,
        )

    def _holder_of(self, record_id: int, workload_id: int, h: int, content: bytes) -> int | None:
        """After a collision: probe from `h` for this content, returning the record holding
        it; if absent, take a free hash (None)."""
        while True:
            row = self.conn.execute(
                "SELECT record_id FROM content_hashes WHERE workload_id = ? AND hash = ?",
                (workload_id, h),
            ).fetchone()
            if row is None:
                self.conn.execute(
                    "INSERT INTO content_hashes (workload_id, hash, record_id) VALUES (?, ?, ?)",
                    (workload_id, h, record_id),
                )
                self.conn.execute("UPDATE records SET hash = ? WHERE id = ?", (h, record_id))
                return None
            if self.reader.line(row[0]) == content:
                return int(row[0])
            h = next_hash(h)

    def _drop_empty_blocks(self) -> None:
        """Delete this file's blocks none of whose records is left (all were duplicates)."""
        starts = [
            block_id
            for (block_id,) in self.conn.execute(
                "SELECT id FROM blocks WHERE id >= ? ORDER BY id", (self.first_id,)
            )
        ]
        empty = [
            (start,)
            for start, end in zip(starts, [*starts[1:], self.end_id], strict=True)
            if self.conn.execute(
                "SELECT 1 FROM records WHERE id >= ? AND id < ? LIMIT 1", (start, end)
            ).fetchone()
            is None
        ]
        self.conn.executemany("DELETE FROM blocks WHERE id = ?", empty)
