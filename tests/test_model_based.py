"""Model-based test of the store: random sequences of imports against a small reference model.

A hypothesis `RuleBasedStateMachine` builds log files from real lines (the sample logs' records,
comments and bad lines) the way logs reach tunelog: windows of a log, grown logs, merged logs,
logs whose last lines repeat earlier ones, gzip copies, the same file again, files with a bad
line (imported strict or not), records pasted from a web page (imported with or without
`repair`), imports interrupted mid-file, and files grown or rewritten in place (the same path:
an import of a grown file reads only what follows the lines imported from that path before);
and it removes sources (`sources remove`). Each file is imported into one fresh database per
example.

The reference model is what the README promises: importing files behaves like concatenating,
in import order, the records of every file that was kept (a strict import with a rejected line
and an interrupted import keep nothing), each distinct line stored once (first occurrence
kept; tunelog deduplicates by exact content). Its slots are `selection.history_best` over those
records, with the workload `(task_name, template_key, args_json, log_version)`. A source is
the record lines its file held (each import of it adds the lines it read; a copy of a file at
another path is a source of its own): removing a source is importing every other one, in
order, without it. Files are imported with one of two labels.

After every step the store must agree with the model:

1. `slot_holders()`: every slot is held by the record whose line bytes the model's holder has;
2. `winner_lines()`: exactly the distinct holder lines, each with its own bytes, and
   `history_best` over the exported lines answers every (target, workload) as the model does;
   with `top_k=3`, the configs kept on import give what ranking every record gives;
   the trial runs kept on import (convergence) equal a scan of the records;
3. `stats().records`, the sources' record counts and the tallies agree with the stored records;
4. every file report accounts for each line and counts what the model expects;
5. `tunelog.layers`: each template's chosen config is what `apply_history_best` answers for the
   layer's target group, and the winner has the smallest chosen mean cost of the layer;
6. each source holds exactly its file's record lines, in order; it stored first the lines no
   earlier import had, and shares the lines another source holds;
7. (a second, shorter run) `--label` and `--source` answer as a database of only those files
   does, and `diff label:A label:B` equals `diff` of the two labels' lines as log files.
"""

from __future__ import annotations

import functools
import gzip
import json
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

import tunelog
from tests.conftest import SAMPLE_LOGS, assert_run_marks_kept, assert_tallies_match_records
from tunelog.convergence import SourceRun, join_runs
from tunelog.exceptions import EmptyRunError
from tunelog.filters import Filters
from tunelog.inputs import LogInput, OpenedLog
from tunelog.models import FileReport
from tunelog.records import Blank, Comment, Measurement, Rejected, scan_line
from tunelog.selection import HistoryBest, history_best
from tunelog.store import LineReader, Store, exports, holdings, trials


def _record_pool_lines(raw: bytes) -> tuple[bytes, ...]:
    """The lines of a log that are not rejected: records, comments and blank lines."""
    return tuple(line for line in raw.splitlines() if not isinstance(scan_line(line), Rejected))


_EDGE_LINES = (SAMPLE_LOGS / "edge_cases.log").read_bytes()
POOLS: dict[str, tuple[bytes, ...]] = {
    "x86": tuple((SAMPLE_LOGS / "x86_mini_llvm.log").read_bytes().splitlines()),
    "short": tuple(
        gzip.decompress((SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz").read_bytes()).splitlines()
    ),
    "edge": _record_pool_lines(_EDGE_LINES),
}
POOL_NAMES = sorted(POOLS)
# Lines no import keeps: a truncated record, and edge_cases.log's own rejected lines.
BAD_LINES: tuple[bytes, ...] = (
    b'{"input": [',
    *(line for line in _EDGE_LINES.splitlines() if isinstance(scan_line(line), Rejected)),
)
# Targets queried besides those of the records: an unseen model, another key, a bare target.
EXTRA_QUERY_TARGETS = ("cuda -model=unseen", "opencl", "llvm")
# Merged files double in size; past this many lines they are cut (the test stays fast).
MAX_FILE_LINES = 1000
TYPOGRAPHIC_QUOTES = ("\u201c".encode(), "\u201d".encode())

# 300 sequences of up to 12 steps: about 20 s of CPU on a 2-core VM. One bug is shrunk, not
# several: a failure is reported in about a minute instead of several.
MODEL_SETTINGS = settings(
    max_examples=300, stateful_step_count=12, deadline=None, report_multiple_bugs=False
)
# The label and source filters build a database per question: fewer, shorter sequences.
FILTER_SETTINGS = settings(
    max_examples=40, stateful_step_count=8, deadline=None, report_multiple_bugs=False
)
LABELS = ("A", "B")


@functools.cache
def measurement_of(content: bytes) -> Measurement:
    """The parsed record of a line the model stores (every stored line is a record)."""
    scanned = scan_line(content)
    assert isinstance(scanned, Measurement), (content, scanned)
    return scanned


@functools.cache
def record_lines(pool: str) -> tuple[bytes, ...]:
    """The lines of a pool that are records (what a forum post pastes)."""
    return tuple(line for line in POOLS[pool] if isinstance(scan_line(line), Measurement))


@functools.cache
def workload_key(content: bytes) -> str:
    """A record line's workload as the store identifies it, as one string."""
    record = measurement_of(content)
    return json.dumps([record.task_name, record.template_key, record.args_json, record.log_version])


def history_items(
    contents: Iterable[bytes],
) -> Iterator[tuple[str, str, float, int, bytes]]:
    """`history_best`'s input for record lines, each line its own reference."""
    for content in contents:
        record = measurement_of(content)
        yield record.target, workload_key(content), record.mean_cost, record.error_no, content


def window(pool: str, start: int, count: int) -> tuple[bytes, ...]:
    """`count` consecutive lines of a pool from `start` (wrapped into the pool)."""
    lines = POOLS[pool]
    first = start % len(lines)
    return lines[first : first + count]


def with_typographic_quotes(line: bytes) -> bytes:
    """The line as a web page shows it: each `"` turned into an opening or a closing quote."""
    pieces = line.split(b'"')
    pasted = pieces[0]
    for number, piece in enumerate(pieces[1:]):
        pasted += TYPOGRAPHIC_QUOTES[number % 2] + piece
    return pasted


def lines_then_interrupt(lines: Iterable[bytes], count: int) -> Iterator[bytes]:
    """The first `count` lines, then a KeyboardInterrupt (as if Ctrl-C was pressed)."""
    for number, line in enumerate(lines):
        if number == count:
            raise KeyboardInterrupt
        yield line
    raise KeyboardInterrupt


def database_rows(store: Store) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table: what must be unchanged after a rolled-back import."""
    tables = [
        str(name)
        for (name,) in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    ]
    return {
        name: sorted(store.conn.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
        for name in tables
    }


def stored_line(store: Store, record_id: int) -> bytes:
    """A record's line as the database holds it (a fresh reader: no cached block answers)."""
    return LineReader(store.conn).line(record_id)


def answer(best: HistoryBest[bytes], target: str, workload: str) -> bytes | None:
    """The line `apply_history_best` returns for the query, None for a fallback config."""
    holder = best.query(target, workload)
    return None if holder is None else holder.ref


class HeldSlot(NamedTuple):
    """A slot and its holder's mean cost and line (the line also tells the log version)."""

    kind: str
    name: str
    task_name: str
    template_key: str
    args_json: str
    mean_cost: float
    line: bytes


def store_slot_table(store: Store) -> list[HeldSlot]:
    """The store's slots, sorted, each with its holder's stored line."""
    return sorted(
        HeldSlot(h.kind, h.name, h.task_name, h.template_key, h.args_json, h.mean_cost, line)
        for h in store.slot_holders()
        for line in [stored_line(store, h.record_id)]
    )


def model_slot_table(best: HistoryBest[bytes]) -> list[HeldSlot]:
    """The model's slots in the same form as `store_slot_table`."""
    held: list[HeldSlot] = []
    for slot, holder in best.slots.items():
        task_name, template_key, args_json, _version = json.loads(slot.workload)
        held.append(
            HeldSlot(
                slot.kind,
                slot.name,
                task_name,
                template_key,
                args_json,
                holder.mean_cost,
                holder.ref,
            )
        )
    return sorted(held)


@dataclass
class LogFile:
    """A log written to disk: its lines (without line ends) and where it is.

    Mutable: a file a tuner appends to, or that is rewritten, keeps its path and changes its
    lines, and every rule that later reads it sees what is on disk.
    """

    path: Path
    lines: tuple[bytes, ...]
    compressed: bool = False

    def __repr__(self) -> str:
        return f"LogFile({self.path.name}, {len(self.lines)} lines)"


@dataclass(frozen=True)
class ExpectedImport:
    """What importing a file must report, and the records it adds to the model."""

    lines: int
    split: int
    records: tuple[bytes, ...]  # every record line read, in order (what the source holds)
    new_records: tuple[bytes, ...]
    duplicates: int
    comments: int
    blank: int
    rejected: int

    def counts(self) -> tuple[int, ...]:
        """In the order of `report_counts`."""
        return (
            self.lines,
            self.split,
            len(self.new_records),
            self.duplicates,
            self.comments,
            self.blank,
            self.rejected,
        )


def report_counts(report: FileReport) -> tuple[int, ...]:
    """A report's line accounting, in the order of `ExpectedImport.counts`."""
    return (
        report.lines,
        report.split,
        report.new,
        report.duplicates,
        report.comments,
        report.blank,
        report.rejected,
    )


@dataclass(frozen=True)
class ImportedFrom:
    """The lines last imported from a path (its resume point), and with which --repair."""

    lines: tuple[bytes, ...]
    repair: bool
    source_id: int  # the source its lines went into (removing it removes the resume point)


class Import(NamedTuple):
    """One import that kept something: the source it went to and the record lines it read."""

    source_id: int
    records: tuple[bytes, ...]


def distinct_in_order(imports: Iterable[Import]) -> list[bytes]:
    """The record lines stored by these imports, in order: each distinct line once, first kept."""
    return list(dict.fromkeys(line for one in imports for line in one.records))


@dataclass
class ReferenceModel:
    """Every import kept so far, in order (what each source's file held), the sources' labels,
    what pasted lines hold, and what each plain file's path last imported (an import of it
    grown reads only the rest)."""

    imports: list[Import] = field(default_factory=list)
    labels: dict[int, str] = field(default_factory=dict)
    pasted: dict[bytes, tuple[bytes, ...]] = field(default_factory=dict)
    imported_from: dict[Path, ImportedFrom] = field(default_factory=dict)
    _slots: HistoryBest[bytes] | None = None

    @property
    def stored(self) -> list[bytes]:
        """The distinct record lines, in import order (first occurrence kept)."""
        return distinct_in_order(self.imports)

    def held(self, source_id: int) -> list[bytes]:
        """The record lines a source's file held, in its order."""
        return [line for one in self.imports if one.source_id == source_id for line in one.records]

    def owners(self) -> dict[bytes, int]:
        """The source that stored each distinct line: the first import holding it."""
        found: dict[bytes, int] = {}
        for one in self.imports:
            for line in one.records:
                found.setdefault(line, one.source_id)
        return found

    def resumes_after(self, log: LogFile, *, repair: bool) -> int | None:
        """How many lines of the file an import skips (read before, same path, same first
        bytes, same --repair), None when it reads it in full; the whole file: unchanged."""
        earlier = self.imported_from.get(log.path)
        if earlier is None or earlier.repair != repair or log.compressed:
            return None
        if log.lines[: len(earlier.lines)] != earlier.lines:
            return None
        return len(earlier.lines)

    def keep(self, source_id: int, records: Sequence[bytes], label: str) -> None:
        """Add an import that was kept (as source `source_id`, with this label)."""
        self.imports.append(Import(source_id, tuple(records)))
        self.labels.setdefault(source_id, label)
        self._slots = None

    def drop(self, source_id: int) -> None:
        """Forget a removed source: as if its imports had never happened."""
        self.imports = [one for one in self.imports if one.source_id != source_id]
        self.labels.pop(source_id, None)
        self.imported_from = {
            path: earlier
            for path, earlier in self.imported_from.items()
            if earlier.source_id != source_id
        }
        self._slots = None

    def imports_of(self, source_ids: Iterable[int]) -> list[Import]:
        """The imports into these sources (what a database of only them holds): source by
        source in the order the sources were first imported, each source's imports in order.

        A selection is each chosen file as it is now, whole and in its own line order: lines
        appended to the first file later still come before the second file's lines."""
        wanted = set(source_ids)
        chosen = [one for one in self.imports if one.source_id in wanted]
        return sorted(chosen, key=lambda one: one.source_id)  # stable: in order within one

    def expect(self, lines: Sequence[bytes], *, repair: bool) -> ExpectedImport:
        """What importing these lines must do (before any strict roll-back)."""
        records: list[bytes] = []
        split = comments = blank = rejected = 0
        for line in lines:
            scanned = scan_line(line)
            if isinstance(scanned, Measurement):
                records.append(line)
            elif isinstance(scanned, Comment):
                comments += 1
            elif isinstance(scanned, Blank):
                blank += 1
            elif repair and line in self.pasted:
                records.extend(self.pasted[line])
                split += len(self.pasted[line]) - 1
            else:
                rejected += 1
        seen = set(self.stored)
        new_records: list[bytes] = []
        for record in records:
            if record not in seen:
                seen.add(record)
                new_records.append(record)
        return ExpectedImport(
            lines=len(lines),
            split=split,
            records=tuple(records),
            new_records=tuple(new_records),
            duplicates=len(records) - len(new_records),
            comments=comments,
            blank=blank,
            rejected=rejected,
        )

    def slots(self) -> HistoryBest[bytes]:
        """ApplyHistoryBest over the stored records in import order."""
        if self._slots is None:
            self._slots = history_best(history_items(self.stored))
        return self._slots

    def queries(self) -> set[tuple[str, str]]:
        """Every (target, workload) of a stored record, and each workload on the extra targets."""
        workloads = {workload_key(content) for content in self.stored}
        seen = {(measurement_of(content).target, workload_key(content)) for content in self.stored}
        return seen | {(target, w) for target in EXTRA_QUERY_TARGETS for w in workloads}


class StoreMachine(RuleBasedStateMachine):
    """Imports files into one fresh store and checks it against the reference model."""

    files = Bundle("files")

    def __init__(self) -> None:
        super().__init__()
        self.directory = tempfile.TemporaryDirectory(prefix="tunelog-model-")
        self.store = Store(Path(self.directory.name) / "model.db")
        self.reference = ReferenceModel()
        self.written = 0

    def teardown(self) -> None:
        self.store.close()
        self.directory.cleanup()

    # -- helpers ------------------------------------------------------------------------------

    def write(self, lines: Sequence[bytes], *, compress: bool = False) -> LogFile:
        """A new file holding the lines (gzip-compressed if asked)."""
        self.written += 1
        lines = tuple(lines[:MAX_FILE_LINES])
        data = b"".join(line + b"\n" for line in lines)
        suffix = ".log.gz" if compress else ".log"
        path = Path(self.directory.name) / f"file{self.written}{suffix}"
        path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
        return LogFile(path, lines, compress)

    def rewrite(self, log: LogFile, lines: Sequence[bytes]) -> LogFile:
        """The same path with new content (plain text): appended to, truncated or replaced."""
        log.lines = tuple(lines[:MAX_FILE_LINES])
        log.compressed = False
        log.path.write_bytes(b"".join(line + b"\n" for line in log.lines))
        return log

    def import_file(self, log: LogFile, *, strict: bool = False, repair: bool = False) -> None:
        """Import through the API; check the report and keep the model in step.

        Each file is imported with the label of its number's parity (the same on each import).
        """
        label = LABELS[int(log.path.name.split(".")[0].removeprefix("file")) % 2]
        skipped = self.reference.resumes_after(log, repair=repair)
        grown = skipped is not None and skipped < len(log.lines)
        read = log.lines[skipped:] if grown else log.lines
        expected = self.reference.expect(read, repair=repair)
        rolls_back = strict and expected.rejected > 0
        before = database_rows(self.store) if rolls_back else None
        (report,) = tunelog.import_paths(
            self.store, [str(log.path)], strict=strict, repair=repair, label=label
        )
        assert report.accounted, report
        # A grown file is read after the lines imported before; a changed one in full.
        assert report.skipped_lines == (skipped if grown else 0), report
        earlier = self.reference.imported_from.get(log.path)
        changed = earlier is not None and earlier.repair == repair and skipped is None
        assert report.prefix_changed == changed, report
        if rolls_back:
            # Nothing stored: the records the model would keep count as discarded.
            assert report.rolled_back, report
            assert (report.new, report.discarded) == (0, len(expected.new_records)), report
            assert database_rows(self.store) == before
            return
        assert not report.rolled_back, report
        assert report_counts(report) == expected.counts(), report
        if report.source_id is None:
            return  # the same bytes imported before from this path: nothing kept
        self.reference.keep(report.source_id, expected.records, label)
        for stale in report.superseded:  # a --repair import replaced a source of rejects only
            self.reference.drop(stale)
        if report.already_imported_as is not None:
            # A copy of a source's bytes at another path: its own source, with the original's
            # resume point if that has one.
            original = int(report.already_imported_as.split()[0].removeprefix("#"))
            resumable = any(e.source_id == original for e in self.reference.imported_from.values())
            if not resumable:
                return
        if not log.compressed:
            self.reference.imported_from[log.path] = ImportedFrom(
                log.lines, repair, report.source_id
            )

    # -- rules: each builds a file the way logs arrive, and imports it --------------------------

    @rule(
        target=files,
        pool=st.sampled_from(POOL_NAMES),
        start=st.integers(0, 1000),
        count=st.integers(1, 200),
    )
    def import_window(self, pool: str, start: int, count: int) -> LogFile:
        """A run of consecutive lines of one log (a prefix when start is 0)."""
        log = self.write(window(pool, start, count))
        self.import_file(log)
        return log

    @rule(
        target=files,
        base=files,
        pool=st.sampled_from(POOL_NAMES),
        start=st.integers(0, 1000),
        count=st.integers(1, 100),
    )
    def import_grown(self, base: LogFile, pool: str, start: int, count: int) -> LogFile:
        """An earlier file that a tuning run has appended lines to since."""
        log = self.write(base.lines + window(pool, start, count))
        self.import_file(log)
        return log

    @rule(
        base=files,
        pool=st.sampled_from(POOL_NAMES),
        start=st.integers(0, 1000),
        count=st.integers(1, 100),
        strict=st.booleans(),
        repair=st.booleans(),
    )
    def import_appended_in_place(
        self, base: LogFile, pool: str, start: int, count: int, strict: bool, repair: bool
    ) -> None:
        """A tuner appended lines to an earlier file: the same path, grown (read on from where
        its last import stopped, if that import kept it)."""
        self.import_file(
            self.rewrite(base, base.lines + window(pool, start, count)),
            strict=strict,
            repair=repair,
        )

    @rule(
        base=files,
        keep=st.integers(0, 1000),
        pool=st.sampled_from(POOL_NAMES),
        start=st.integers(0, 1000),
        count=st.integers(0, 100),
        edit_first=st.booleans(),
    )
    def import_rewritten_in_place(
        self, base: LogFile, keep: int, pool: str, start: int, count: int, edit_first: bool
    ) -> None:
        """The same path rewritten: truncated to its first lines, maybe with its first byte
        changed (same size, other prefix), then other lines (a new run, same file name)."""
        lines = list(base.lines[: keep % (len(base.lines) + 1)])
        if edit_first and lines:
            lines[0] = b" " + lines[0][1:] if lines[0][:1] != b" " else b"#" + lines[0][1:]
        self.import_file(self.rewrite(base, [*lines, *window(pool, start, count)]))

    @rule(target=files, first=files, second=files)
    def import_merged(self, first: LogFile, second: LogFile) -> LogFile:
        """Two earlier files concatenated (`cat a.log b.log`)."""
        log = self.write(first.lines + second.lines)
        self.import_file(log)
        return log

    @rule(
        target=files,
        pool=st.sampled_from(POOL_NAMES),
        start=st.integers(0, 1000),
        count=st.integers(1, 150),
        repeat_from=st.integers(0, 1000),
        repeats=st.integers(1, 30),
    )
    def import_with_duplicated_tail(
        self, pool: str, start: int, count: int, repeat_from: int, repeats: int
    ) -> LogFile:
        """Lines of a log whose last lines repeat earlier ones (they are dropped as duplicates)."""
        lines = window(pool, start, count)
        first_repeated = repeat_from % len(lines)
        log = self.write(lines + lines[first_repeated : first_repeated + repeats])
        self.import_file(log)
        return log

    @rule(target=files, base=files)
    def import_gzip_copy(self, base: LogFile) -> LogFile:
        """An earlier file, gzip-compressed (other bytes, same lines)."""
        log = self.write(base.lines, compress=True)
        self.import_file(log)
        return log

    @rule(base=files, strict=st.booleans(), repair=st.booleans())
    def import_same_file_again(self, base: LogFile, strict: bool, repair: bool) -> None:
        """An earlier file imported again from the same path."""
        self.import_file(base, strict=strict, repair=repair)

    @rule(
        target=files,
        base=files,
        bad_line=st.sampled_from(BAD_LINES),
        position=st.integers(0, 1000),
        strict=st.booleans(),
    )
    def import_with_bad_line(
        self, base: LogFile, bad_line: bytes, position: int, strict: bool
    ) -> LogFile:
        """An earlier file with a line no import keeps: strict rolls it all back."""
        at = position % (len(base.lines) + 1)
        log = self.write((*base.lines[:at], bad_line, *base.lines[at:]))
        self.import_file(log, strict=strict)
        return log

    @rule(
        target=files,
        base=files,
        pool=st.sampled_from(POOL_NAMES),
        index=st.integers(0, 1000),
        two_records=st.booleans(),
        repair=st.booleans(),
        strict=st.booleans(),
    )
    def import_pasted(
        self,
        base: LogFile,
        pool: str,
        index: int,
        two_records: bool,
        repair: bool,
        strict: bool,
    ) -> LogFile:
        """An earlier file and a line pasted from a web page (typographic quotes, maybe two
        records run together): only `repair` recovers its records."""
        candidates = record_lines(pool)
        originals = tuple(
            candidates[(index + offset) % len(candidates)] for offset in range(1 + two_records)
        )
        pasted = b" ".join(with_typographic_quotes(line) for line in originals)
        self.reference.pasted[pasted] = originals
        log = self.write((*base.lines, pasted))
        self.import_file(log, strict=strict, repair=repair)
        return log

    @rule(base=files, after=st.integers(0, 1000))
    def interrupt_import(self, base: LogFile, after: int) -> None:
        """Ctrl-C after some lines of an import: the database must be as before."""
        before = database_rows(self.store)
        stop = after % (len(base.lines) + 1)
        with OpenedLog(LogInput(str(base.path))) as opened, pytest.raises(KeyboardInterrupt):
            self.store.import_log(opened, lines=lines_then_interrupt(opened.lines(), stop))
        assert not self.store.conn.in_transaction
        assert database_rows(self.store) == before

    @rule(pick=st.integers(0, 1000))
    def remove_source(self, pick: int) -> None:
        """`sources remove ID`: as if the file had never been imported (its lines go)."""
        sources = self.store.sources()
        if not sources:
            return
        source = sources[pick % len(sources)]
        (removed,) = tunelog.remove_sources(self.store, str(source.id))
        others = {line for s in sources if s.id != source.id for line in self.reference.held(s.id)}
        assert removed.records == len(set(self.reference.held(source.id)) - others)
        self.reference.drop(source.id)
        assert source.id not in {s.id for s in self.store.sources()}

    # -- invariants ---------------------------------------------------------------------------

    @invariant()
    def slots_are_held_by_the_models_holders(self) -> None:
        """(1) The store's slot table is the model's, holder line for holder line."""
        assert store_slot_table(self.store) == model_slot_table(self.reference.slots())

    @invariant()
    def a_slots_cost_is_its_records_mean(self) -> None:
        """(1b) The layer listings read an answer's cost from its record (LAYER_ROWS_SQL)."""
        differing = self.store.conn.execute(
            "SELECT count(*) FROM slots s LEFT JOIN records r ON r.id = s.record_id "
            "WHERE r.mean_cost IS NOT s.mean_cost"
        ).fetchone()
        assert differing == (0,)

    @invariant()
    def export_writes_each_winner_once_with_its_own_bytes(self) -> None:
        """(2) winner_lines() is the model's holders, and loading it decides as the model."""
        exported = list(self.store.winner_lines())
        for line in exported:
            assert line.raw == stored_line(self.store, line.record_id), line.record_id
        model = self.reference.slots()
        holders = {holder.ref for holder in model.slots.values()}
        assert sorted(line.raw for line in exported) == sorted(holders)
        reloaded = history_best(history_items(line.raw for line in exported))
        for target, workload in sorted(self.reference.queries()):
            assert answer(reloaded, target, workload) == answer(model, target, workload), (
                target,
                workload,
            )

    @invariant()
    def top_k_from_the_kept_configs_equals_ranking_every_record(self) -> None:
        """(2b) `export --top-k 3` from the configs kept on import equals a full ranking."""
        kept = [line.record_id for line in self.store.winner_lines(top_k=3)]
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(exports, "TOP_CONFIGS_KEPT", 0)  # every k then ranks all records
            ranked = [line.record_id for line in self.store.winner_lines(top_k=3)]
        assert kept == ranked

    @invariant()
    def trial_runs_kept_on_import_equal_a_scan_of_the_records(self) -> None:
        """(3b) Convergence input kept on import is what reading every record gives."""
        group_of = {
            target_id: target_id % 2
            for (target_id,) in self.store.conn.execute("SELECT id FROM targets")
        }  # two groups of targets: some share a group, as targets of one keys and model do
        assert run_table(trials.trial_runs(self.store, group_of)) == run_table(
            trials.scan_trial_runs(self.store, group_of)
        )
        # The listings' summaries (one stored run summarised from its columns) are the joined
        # runs' summaries.
        assert trials.convergence_by_group(self.store, group_of) == {
            key: join_runs(runs)
            for key, runs in trials.scan_trial_runs(self.store, group_of).items()
        }

    @invariant()
    def counts_agree_with_the_stored_records(self) -> None:
        """(3) Stats, sources and tallies count exactly the model's distinct records."""
        stats = self.store.stats()
        stored = self.reference.stored
        assert stats.records == len(stored)
        valid = sum(measurement_of(line).error_no == 0 for line in stored)
        assert (stats.valid, stats.failed) == (valid, stats.records - valid)
        assert sum(source.records for source in self.store.sources()) == stats.records
        assert_tallies_match_records(self.store.conn)
        assert_run_marks_kept(self.store.conn)

    @invariant()
    def each_source_holds_its_files_lines(self) -> None:
        """(6) A source holds its file's record lines in order (whoever stored them), stored
        first those no earlier import had, and shares those another source holds."""
        sources = self.store.sources()
        assert {s.id for s in sources} == {one.source_id for one in self.reference.imports}
        owners = self.reference.owners()
        reader = LineReader(self.store.conn)
        for source in sources:
            expected = self.reference.held(source.id)
            held = [
                reader.line(row[2]) for row in holdings.held_records(self.store.conn, source.id)
            ]
            assert held == expected, source.id
            others = {
                line for s in sources if s.id != source.id for line in self.reference.held(s.id)
            }
            assert (source.held, source.shared) == (
                len(expected),
                sum(line in others for line in expected),
            ), source.id
            assert source.records == sum(owner == source.id for owner in owners.values())
            assert source.records + source.duplicates == source.held, source.id
            assert source.label == self.reference.labels[source.id]

    @invariant()
    def each_layer_picks_its_fastest_chosen_template(self) -> None:
        """(5) Each template's chosen config is what the model answers for the layer's target
        group (same keys and model, so any of its targets asks the same), and relay's choice
        is a template of the smallest chosen mean cost (ties: any of them)."""
        model = self.reference.slots()
        for layer in tunelog.layers(self.store):
            group_target = layer.group.targets[0]
            costs = []
            for template in layer.templates:
                if template.chosen is None:
                    continue  # untuned here, or a v0.1 record hidden by a newer one
                line = stored_line(self.store, template.chosen.record_id)
                assert answer(model, group_target, workload_key(line)) == line
                costs.append(template.chosen.mean_cost)
            if not costs:
                assert layer.winner is None
                continue
            assert layer.winner is not None and layer.winner.chosen is not None
            assert layer.winner.chosen.mean_cost == min(costs)


class FilterMachine(StoreMachine):
    """The same sequences, also asking what the label and source filters and `diff` answer."""

    @invariant()
    def filters_answer_for_the_chosen_files_alone(self) -> None:
        """(7) `--label L` and `--source ID` answer as a database of only those files does."""
        reference = self.reference
        chosen: list[tuple[Filters, list[int]]] = [
            (Filters(label=label), [s for s, of in reference.labels.items() if of == label])
            for label in LABELS
        ]
        if reference.imports:
            last = reference.imports[-1].source_id
            chosen.append((Filters(source=str(last)), [last]))
        for filters, ids in chosen:
            if not ids:
                continue
            model = history_best(history_items(distinct_in_order(reference.imports_of(ids))))
            exported = [line.raw for line in self.store.winner_lines(filters)]
            assert sorted(exported) == sorted({h.ref for h in model.slots.values()}), filters
            reloaded = history_best(history_items(exported))
            for target, workload in sorted(reference.queries()):
                assert answer(reloaded, target, workload) == answer(model, target, workload)

    @invariant()
    def diff_of_two_labels_is_the_diff_of_their_lines(self) -> None:
        """(7) `diff label:A label:B` equals `diff` of log files holding each label's lines."""
        labels = set(self.reference.labels.values())
        if labels != set(LABELS):
            return
        files = []
        for label in LABELS:
            ids = [s for s, of in self.reference.labels.items() if of == label]
            lines = [line for one in self.reference.imports_of(ids) for line in one.records]
            path = Path(self.directory.name) / f"label-{label}.log"
            path.write_bytes(b"".join(line + b"\n" for line in lines))
            files.append(str(path))
        try:
            by_label = tunelog.diff("label:A", "label:B", db=str(self.store.path))
        except EmptyRunError as refused:  # a label of no record: so is its file (same side)
            with pytest.raises(EmptyRunError) as also:
                tunelog.diff(*files)
            assert str(also.value).split()[0] == str(refused).split()[0]
            return
        by_file = tunelog.diff(*files)
        assert tunelog.diff_as_dict(by_label)["layers"] == tunelog.diff_as_dict(by_file)["layers"]


def run_table(
    runs: dict[tuple[int, int], list[SourceRun]],
) -> dict[tuple[int, int], list[tuple[object, ...]]]:
    """Runs as comparable values, each key's runs in source order."""
    return {
        key: sorted(
            (r.source_id, r.start, r.progress.trials, r.progress.valid, r.progress.improvements)
            for r in found
        )
        for key, found in runs.items()
    }


@pytest.mark.slow
def test_store_agrees_with_the_reference_model() -> None:
    """Random sequences of imports keep the store equal to the reference model."""
    run_state_machine_as_test(StoreMachine, settings=MODEL_SETTINGS)


@pytest.mark.slow
def test_label_and_source_filters_agree_with_the_reference_model() -> None:
    """Random sequences of imports: filters and `diff` of labels answer for those files."""
    run_state_machine_as_test(FilterMachine, settings=FILTER_SETTINGS)


def test_typographic_quotes_need_repair() -> None:
    """The pasted lines the machine builds are rejected as they are (else repair is untested)."""
    for pool in POOL_NAMES:
        for line in record_lines(pool):
            assert isinstance(scan_line(with_typographic_quotes(line)), Rejected)


def test_a_strict_roll_back_accounts_for_every_line(tmp_path: Path) -> None:
    """A rolled-back report accounts for every line: its new records count as discarded."""
    with Store(tmp_path / "strict.db") as store:
        (report,) = tunelog.import_paths(store, [str(SAMPLE_LOGS / "edge_cases.log")], strict=True)
    assert report.rolled_back
    assert (report.new, report.discarded) == (0, 8)
    assert report.accounted, report
