"""Importing one log inside the caller's transaction: parse, store in batches, deduplicate.

The per-line path does as little as it can: decode, find the record's (target, workload)
group, hash, append the line to a compressed block, queue one records row, and hand the record
to its group's rules (its run: rules.bestsofar; its best configs: rules.ranking). Per batch of
records, the new workloads are looked up and added at once (store.importids); every
GROUPS_HELD groups, their tallies, slot offers, best configs and runs are stored
(store.groupstate), so memory does not grow with the number of workloads. At the end of the
file, content hashes are indexed in sorted order and duplicates resolved exactly
(store.deduplication), so queries never scan records.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Self

from tunelog.collecting import young_collected_less
from tunelog.importreport import DAMAGED_REJECT, damaged_text
from tunelog.inputs import STREAM_ERRORS, OpenedLog, garbled, stored_path
from tunelog.linesplit import OverlongLine, is_terminated
from tunelog.linetext import strip_line
from tunelog.models import REJECTS_KEPT_IN_REPORT, FileReport, RejectedLine
from tunelog.records import (
    SKIPPED_BY_ANSOR_READER,
    Blank,
    Measurement,
    Rejected,
    ScannedLine,
    repair_line,
    scan_content,
)
from tunelog.recordvalues import tried_repair
from tunelog.rules.workloadidentity import IDENTITY_LENGTH, workload_key
from tunelog.store import holdings
from tunelog.store.codec import (
    BLOCK_LINES,
    BlockPacker,
    content_hash,
)
from tunelog.store.deduplication import deduplicate
from tunelog.store.groupstate import GROUPS_HELD, Group, GroupStore
from tunelog.store.importids import ImportIds, WorkloadKey
from tunelog.store.ownspellings import OwnSpellings
from tunelog.store.sourceids import next_source_id

BATCH_SIZE = 2048  # records per executemany (a multiple of BLOCK_LINES)
# Said of a rejected last line without line end: a tuner may be writing it (a log read while
# it grows: `watch` holds such a line back until it ends).
UNTERMINATED_HINT = " (the file's last line, without line end: still being written?)"
ProgressCallback = Callable[[int], None]


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
        known_workloads: Mapping[WorkloadKey, int] | None = None,
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
            source_id = next_source_id(conn)
            conn.execute(
                """INSERT INTO sources (id, path, sha256, size, lines, records, duplicates,
                                        comments, blank, rejected, imported_at)
                   VALUES (?, ?, '', 0, 0, 0, 0, 0, 0, 0, ?)""",
                (source_id, stored_path(report.path), now),
            )
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
        # Each MetaSchedule or auto_scheduler record's spelling of its workload: kept where
        # it is not its workload's (migration 16).
        self.spellings = OwnSpellings(conn)
        # Records rows waiting for the batch insert; a workload id may be provisional until
        # `_flush` has looked up the batch's new workloads (see ImportIds.workload).
        self.rows: list[tuple[Any, ...]] = []
        self.ids = ImportIds(conn, known_workloads)
        # The (target, workload) groups held since their state was last stored, by the first
        # five Measurement fields (the identity: target, and workload as normalised).
        self.groups: dict[tuple[Any, ...], Group] = {}
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
        self.group_store = GroupStore(
            conn,
            source_id,
            self.ids.targets_by_id,
            self.ids.new_workloads,
            runs_snapshot=self.runs_snapshot,
        )

    def run(
        self, lines: Iterable[bytes], opened: OpenedLog, progress: ProgressCallback | None
    ) -> None:
        """Read every line: records are queued and stored in batches, the rest counted."""
        # Each line allocates a few containers (the decoded record, its row) that die young and
        # form no cycles; at the default threshold (700) the cyclic collector ran every few
        # lines and cost a tenth of an import (1M lines: ~1.5 s). It still runs, less often;
        # the threshold is the process's, restored after (tunelog.collecting).
        with young_collected_less():
            self._read(lines, opened, progress)

    def _read(
        self, lines: Iterable[bytes], opened: OpenedLog, progress: ProgressCallback | None
    ) -> None:
        self._opened = opened
        self._progress = progress
        report = self.report
        add = self.add
        scan = self.scanner
        strip = strip_line
        line_no = self.first_line  # line numbers are the file's, also when resumed
        iterator = iter(lines)
        raw = b"\n"  # the last line read
        while True:
            try:
                raw = next(iterator)
            except StopIteration:
                break
            except STREAM_ERRORS as exc:
                # Only reading is guarded: an error while handling a line must surface.
                where = f"after line {line_no}" if line_no else "from its start"
                self._reject(line_no + 1, f"{DAMAGED_REJECT} {where}: {exc}")
                report.damaged = damaged_text(f"{DAMAGED_REJECT} {where}: {exc}")
                report.garbled = garbled(exc)
                line_no += 1
                raw = b""  # that line has no line end
                break
            line_no += 1
            content = strip(raw)
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
        spelling = rec.spelling
        if spelling is not None:  # no AutoTVM record has one
            self.spellings.add(record_id, spelling)
        if line_no != self.run_next_line:
            self.run_starts.append((line_no, record_id))
        self.run_next_line = line_no + 1
        block = self.block_lines
        block.append(content)
        error_no = rec.error_no
        all_cost = rec.all_cost
        mean = rec.mean_cost
        timestamp = rec.timestamp
        self.rows.append(
            (
                record_id,
                line_no,
                group.target_id,
                group.workload_id,
                rec.config_index,
                error_no,
                mean,
                all_cost,
                timestamp,
                content_hash(content),
            )
        )
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
        if timestamp < group.start:
            group.start = timestamp
        # The record's trial in its group's run (rules.bestsofar): a new best of the run is
        # the group's best record (rules.bestrecord), and a valid record may rank among its
        # best configs (rules.ranking).
        if group.run.add(mean, error_no):
            group.best_id = record_id
        # Only a record under the configs' bound can rank (see TopConfigs.offer): checked
        # here first, as most records of a long run are not.
        if error_no == 0 and mean < group.top.bound:
            group.top.offer(rec.config_index, mean, record_id)
        # Last: a full block may store the batch and the groups, this record's state with them.
        if len(block) >= BLOCK_LINES:
            self._close_block()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        """Give the facts worker back (also when the import failed: the next one may use it)."""
        self.ids.facts.release()

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
        duplicates = deduplicate(
            self.conn, self.source_id, self.first_id, self.next_id, self.first_seq
        )
        self.report.duplicates += duplicates
        self.report.new = self.next_id - self.first_id - duplicates
        if duplicates:
            self.group_store.recount_runs(self.first_id)
        self.spellings.finish()  # of the records kept, their workloads resolved
        # Last, so that the worker process computes them while duplicates are resolved: the
        # facts of the new workloads handed to it.
        self.ids.facts.finish()
        if self.runs_snapshot:
            self.conn.execute("DROP TABLE temp.runs_before")

    def added_workloads(self) -> range:
        """The ids of the workloads this file added (none before the end of `finish`'s reads)."""
        return self.ids.added()

    @property
    def workload_ids(self) -> dict[WorkloadKey, int]:
        """Workload ids by identity, as looked up since the groups were last stored."""
        return self.ids.workload_ids

    # -- lines that are not plain records ---------------------------------------------------

    def _rejected_line(self, line_no: int, raw: bytes, parsed: Rejected) -> None:
        """Reject the line, or with --repair recover the records pasted into it."""
        if type(raw) is OverlongLine:  # too long to be read (a scanner saw only its end)
            self._reject(line_no, raw.reason)
            return
        pieces = repair_line(raw) if self.repair and parsed != SKIPPED_BY_ANSOR_READER else []
        if not pieces:
            reason = tried_repair(parsed.reason) if self.repair else parsed.reason
            # Only a file's last line can lack a line end (stdin's is no file being written).
            if raw and not is_terminated(raw) and self.report.path != "-":
                reason += UNTERMINATED_HINT
            self._reject(line_no, reason)
            return
        self.report.split += len(pieces) - 1
        for piece in pieces:
            scanned = scan_content(piece)
            if isinstance(scanned, Measurement):
                self.report.repaired += 1
                self.add(line_no, scanned, piece)
            else:
                reason = scanned.reason if isinstance(scanned, Rejected) else "empty"
                self._reject(line_no, f"after repair: {tried_repair(reason)}")

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
        group = Group(self.ids.target(rec.target), 0)
        group.workload_id = self.ids.workload(workload_key(rec), rec.spelling, group)
        group.version = rec.log_version  # the log version picks the slots (slots_of)
        group.first_id = self.next_id  # the record being added
        self.groups[rec[:IDENTITY_LENGTH]] = group
        return group

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
            changed = self.ids.resolve()
            if changed:  # workloads the database held: their rows take their ids
                self.rows = [
                    row if row[3] not in changed else (*row[:3], changed[row[3]], *row[4:])
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
            self.spellings.flush()
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

    # -- groups ------------------------------------------------------------------------------

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
        self.ids.forget()
