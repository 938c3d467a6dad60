"""The Python API: everything the CLI does, as functions over a `Store`.

import tunelog
with tunelog.open_store("tunelog.db") as store:
    reports = tunelog.import_paths(store, ["logs/"])
    rows = store.best()
    tunelog.export(store, "best.log")
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tunelog.exceptions import (
    AmbiguousLayerError,
    InputNotFoundError,
    MissingExtraError,
    MixedFormatsError,
    MixedTvmVersionsError,
    NothingToExportError,
    SourceNotFoundError,
    UnknownLayerError,
    UnknownSourceError,
)
from tunelog.store import Filters, Store
from tunelog.targets import UNKNOWN_MODEL, parse_target

# Each command needs a few of the modules below: those only some need (discovery and inputs
# for import, exporting for writes, errorcodes for `errors`, layers and convergence for the
# listings of layers) load where they are used, which keeps a read command's start-up short
# (issue 17).
if TYPE_CHECKING:
    from tunelog import htmlreport
    from tunelog.convergence import Convergence
    from tunelog.diagnosis import DiagnoseReport
    from tunelog.discovery import Discovery
    from tunelog.importreport import FileReport
    from tunelog.inputs import LogInput
    from tunelog.layers import Layer, TemplateResult
    from tunelog.live import Refresh
    from tunelog.models import BestRow, Source
    from tunelog.network import GraphLog, GroupTotal
    from tunelog.records import ScannedLine
    from tunelog.results import CurveRow as CurveRow
    from tunelog.results import DiffReport as DiffReport
    from tunelog.results import MetaScheduleExport as MetaScheduleExport
    from tunelog.results import ReportSummary as ReportSummary
    from tunelog.results import SourceRejects as SourceRejects
    from tunelog.results import TemplateCurve as TemplateCurve
    from tunelog.results import TemplateKnobs as TemplateKnobs
    from tunelog.store.merging import MergeReport
    from tunelog.store.removal import RemovedSource
    from tunelog.store.trials import TrialRow
    from tunelog.tasklist import TaskProgress

# Results of the calls few commands make: tunelog.results defines them (its __all__), this
# module exports them (the imports above for type checkers, __getattr__ at run time).


def __getattr__(name: str) -> object:
    if not name.startswith("__"):  # not a probe for module dunders: no need to load results
        from tunelog import results

        if name in results.__all__:
            return getattr(results, name)
    raise AttributeError(f"module 'tunelog.api' has no attribute {name!r}")


class ImportProgress(Protocol):
    """Called while a file imports with the bytes read so far and the file size (None: stdin)."""

    def __call__(self, source: LogInput, done: int, *, total: int | None) -> None: ...


def import_paths(
    store: Store,
    paths: Sequence[str],
    *,
    label: str | None = None,
    strict: bool = False,
    repair: bool = False,
    progress: ImportProgress | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    follow: bool = False,
) -> list[FileReport]:
    """Import files, directories (recursively) and `-` (stdin); one transaction per file.

    `strict`: roll back any file with a rejected line. `repair`: recover records pasted from
    web pages (typographic quotes, several records on one line). In directories, only files
    that look like tuning logs are read (see `tunelog.discovery`; `include`/`exclude`: globs).
    A file grown since it was imported from the same path is read from where that import
    stopped. `follow` (files a tuner is appending to): a last line without line end is left
    for the next import.
    """
    from tunelog.discovery import discover, unreadable_reason
    from tunelog.importreport import FileReport

    found = discover(paths, include=include, exclude=exclude)
    reports = [FileReport(path=path, unreadable=reason) for path, reason in found.unreadable]
    own_files = _database_files(store)
    for source in found.inputs:
        if not source.is_stdin and os.path.realpath(source.path) in own_files:
            continue  # `tunelog import .` next to tunelog.db: never read the database itself
        callback = None
        if progress is not None:
            total = None if source.is_stdin else _size(source.path)
            callback = functools.partial(progress, source, total=total)
        try:
            report = _import_one(
                store,
                source,
                callback,
                label=label,
                strict=strict,
                repair=repair,
                follow=follow,
            )
        except (InputNotFoundError, OSError) as exc:
            # Deleted or made unreadable since it was found (a tuner's temporary file): the
            # file's transaction is rolled back, the next files are imported.
            report = FileReport(path=source.path, unreadable=unreadable_reason(exc))
        if report is not None:
            if repair:
                report.superseded = _supersede_unrepaired(store, report)
            reports.append(report)
    return reports


def _supersede_unrepaired(store: Store, report: FileReport) -> list[int]:
    """Remove the earlier sources of the same bytes that a --repair import supersedes.

    An import without --repair of a page paste stores a source of rejected lines only ("use
    --repair"); importing the same bytes again with --repair reads them as records, under a
    new source. The earlier one, owning no record, would keep saying "use --repair" in
    `rejects` and count as a second source: it is removed. An earlier source that owns
    records is kept (removing it would take them along).
    """
    if report.source_id is None or report.sha256 is None or report.rolled_back:
        return []
    stale = [
        s.id
        for s in store.sources()
        if s.sha256 == report.sha256
        and s.id != report.source_id
        and s.records == 0
        and s.rejected > 0
    ]
    for source_id in stale:
        store.remove_sources(str(source_id))
    return stale


def _import_one(
    store: Store,
    source: LogInput,
    progress: Callable[[int], None] | None,
    *,
    label: str | None,
    strict: bool,
    repair: bool,
    follow: bool,
) -> FileReport | None:
    """Open one log and import it; None for a MetaSchedule workload file (read with its
    records file), one report for a records file without its workload file."""
    from tunelog.inputs import OpenedLog

    scanner = None
    database = _metaschedule_files(source)
    if database is not None:
        records, workloads = database
        if records != Path(source.path):
            return None
        if workloads is None:
            return _orphan_records_report(source.path)
        scanner = _metaschedule_scanner(records, workloads)
    with OpenedLog(source) as opened:
        return store.import_log(
            opened,
            label=label,
            strict=strict,
            repair=repair,
            progress=progress,
            scanner=scanner,
            follow=follow,
        )


def _metaschedule_files(source: LogInput) -> tuple[Path, Path | None] | None:
    """(records file, workload file or None) when SOURCE is part of a MetaSchedule database."""
    from tunelog.discovery import metaschedule_files

    return None if source.is_stdin else metaschedule_files(Path(source.path))


def _metaschedule_scanner(records: Path, workloads: Path) -> Callable[[bytes], ScannedLine]:
    """The line scanner of a MetaSchedule records file whose workload file is WORKLOADS."""
    from tunelog import metaschedule

    return metaschedule.record_scanner(metaschedule.read_workloads(workloads))


def _orphan_records_report(path: str) -> FileReport:
    """One message for a records file without its workload file: no line can be read."""
    from tunelog.importreport import FileReport, RejectedLine
    from tunelog.metaschedule import WORKLOAD_FILE

    with open(path, "rb") as file:
        lines = sum(1 for _ in file)
    reason = (
        f"MetaSchedule records without their workload file: none of the {lines} line(s) can "
        f"be read (TVM cannot load them either); put the database's workload file "
        f"({WORKLOAD_FILE}) beside it and import again"
    )
    return FileReport(path, lines=lines, rejected=lines, rejects=[RejectedLine(0, reason)])


def _database_files(store: Store) -> set[str]:
    base = os.path.realpath(store.path)
    return {base + suffix for suffix in ("", "-wal", "-shm", "-journal")}


def _size(path: str) -> int | None:
    try:
        return os.path.getsize(path)
    except OSError:
        return None


@dataclass
class ExportReport:
    """What an export wrote and what it had to leave out or change."""

    path: str
    written: int = 0
    skipped_v01: int = 0
    unloadable_targets: dict[str, int] = field(default_factory=dict)
    rewritten_targets: int = 0
    skipped_losing_templates: int = 0
    skipped_metaschedule: int = 0

    @property
    def warnings(self) -> list[str]:
        """Human-readable notes on records modern AutoTVM would not load as written."""
        notes: list[str] = []
        if self.skipped_v01:
            notes.append(
                f"left out {self.skipped_v01} v0.1 record(s): TVM >= 0.7 skips v0.1 lines; "
                "re-tune them, or pass --include-v01 for an old TVM"
            )
        for target, count in sorted(self.unloadable_targets.items()):
            problems = "; ".join(parse_target(target).load_problems)
            notes.append(
                f"{count} record(s) with target {target!r} cannot be loaded by TVM >= 0.10 "
                f"({problems}): pass --fix-targets to drop the option"
            )
        if self.skipped_losing_templates:
            notes.append(
                f"left out {self.skipped_losing_templates} record(s) of templates that lose "
                "for every target (--winners-only)"
            )
        if self.rewritten_targets:
            notes.append(f"rewrote the target string of {self.rewritten_targets} record(s)")
        if self.skipped_metaschedule:
            notes.append(
                f"left out {self.skipped_metaschedule} MetaSchedule record(s), which a log file "
                "cannot hold: export them with `tunelog export --metaschedule DIR`"
            )
        return notes


def export(
    store: Store,
    out: str,
    *,
    filters: Filters | None = None,
    top_k: int = 1,
    force: bool = False,
    include_v01: bool = False,
    fix_targets: bool = False,
    winners_only: bool = False,
    log_format: str | None = None,
) -> ExportReport:
    """Write the slot winners (or the top-k configs per slot) as original lines to `out`.

    Loading the result with `autotvm.apply_history_best` (or auto_scheduler's, for its records)
    gives the same config for every (target, workload) as loading everything imported, in
    import order. `log_format` ("autotvm" or "auto_scheduler") picks one kind of record: TVM
    reads them with different loaders, so a database holding both must say which to write.
    """
    # The winners and their lines from one state of the database (of the chosen files'
    # records with --source/--label, see Store.selected); the output is never the user's
    # database, whichever database answers.
    protected = _database_files(store)
    with store.selected(filters) as (chosen, rest), chosen.snapshot():
        return _export(
            chosen,
            out,
            rest,
            top_k,
            force,
            include_v01,
            fix_targets,
            winners_only,
            _export_format(chosen, rest, log_format),
            protected,
        )


LOG_FORMATS = ("autotvm", "auto_scheduler")


_METASCHEDULE = "metaschedule"  # a database directory, never a log: export --metaschedule


def _format_of(version: str) -> str:
    from tunelog.versions import ANSOR_VERSION, METASCHEDULE_VERSION

    if version == METASCHEDULE_VERSION:
        return _METASCHEDULE
    return "auto_scheduler" if version == ANSOR_VERSION else "autotvm"


def _export_format(store: Store, filters: Filters, log_format: str | None) -> str | None:
    """The one kind of record to export; None when the winners hold only one kind."""
    if log_format is not None and log_format not in LOG_FORMATS:
        raise ValueError(f"unknown log format {log_format!r}: use one of {', '.join(LOG_FORMATS)}")
    found = {_format_of(v) for v in store.winner_versions(filters)}
    if found == {_METASCHEDULE}:
        raise NothingToExportError(
            "every matching winner is a MetaSchedule record, which a log file cannot hold: "
            "use `tunelog export --metaschedule DIR`"
        )
    found.discard(_METASCHEDULE)
    if log_format is None and len(found) > 1:
        raise MixedFormatsError(
            "the database holds AutoTVM and auto_scheduler records, which TVM loads with "
            "different readers (each aborts on the other's lines): pass --format autotvm "
            "or --format auto_scheduler, one file each"
        )
    if log_format is not None and log_format not in found:
        raise NothingToExportError(
            f"no {log_format} record matches: nothing to export (see `tunelog stats`)"
        )
    return log_format


def _export(
    store: Store,
    out: str,
    filters: Filters,
    top_k: int,
    force: bool,
    include_v01: bool,
    fix_targets: bool,
    winners_only: bool,
    log_format: str | None,
    protected: set[str],
) -> ExportReport:
    from tunelog.exporting import rewrite_target, write_lines_atomically

    report = ExportReport(path=out)
    winning = _may_be_chosen_workloads(store) if winners_only else None

    def lines() -> Iterator[bytes]:
        for line in store.winner_lines(filters, top_k=top_k):
            target, version, raw = line.target, line.version, line.raw
            kind = _format_of(version)
            if kind == _METASCHEDULE:
                report.skipped_metaschedule += 1
                continue
            if log_format is not None and kind != log_format:
                continue
            if winning is not None and line.workload_id not in winning:
                report.skipped_losing_templates += 1
                continue
            if version == "0.1" and not include_v01:
                report.skipped_v01 += 1
                continue
            if parse_target(target).load_problems:
                if fix_targets:
                    fixed = rewrite_target(raw, target)
                    if fixed != raw:
                        report.rewritten_targets += 1
                        raw = fixed
                else:
                    report.unloadable_targets[target] = report.unloadable_targets.get(target, 0) + 1
            yield raw

    if not store.has_slot_winners(filters):
        raise NothingToExportError(
            "no valid measurement matches: nothing to export "
            "(check the filters, or `tunelog errors` for why every trial failed)"
        )
    written = lines()
    first = next(written, None)  # before the output is touched: an empty log helps no one
    if first is None:
        raise NothingToExportError(_nothing_written(report))
    report.written = write_lines_atomically(
        out, itertools.chain([first], written), force=force, protected=protected
    )
    return report


def _nothing_written(report: ExportReport) -> str:
    if report.skipped_v01:
        return (
            f"every matching winner is a v0.1 record ({report.skipped_v01}), which TVM >= 0.7 "
            "skips: nothing to export; pass --include-v01 for an old TVM, or re-tune"
        )
    return "every matching winner was left out: nothing to export (check the filters)"


def _may_be_chosen_workloads(store: Store) -> set[int]:
    """--winners-only: the workloads relay may pick for some target, whichever spellings it asks.

    The targets considered are every (keys, model) of the database and, for each keys, a model
    the log never saw (only key slots answer then). A workload left out answers nothing that
    relay would use, so leaving it out keeps relay's choice everywhere.
    """
    from tunelog.layers import LayerIndex, TargetGroup, may_be_chosen

    # One index for every group; each layer is used before the next is built (see LayerIndex).
    index = LayerIndex(*store.layer_inputs())
    chosen: set[int] = set()
    keys_seen: set[tuple[str, ...]] = set()
    for lay in index.layers():
        keys_seen.add(lay.group.keys)
        chosen.update(t.workload.id for t in may_be_chosen(lay))
    for keys in keys_seen:
        for lay in index.layers(TargetGroup(keys, UNKNOWN_MODEL, ())):
            chosen.update(t.workload.id for t in may_be_chosen(lay))
    return chosen


# -- best: the slot winners -----------------------------------------------------------------------


def best(store: Store, filters: Filters | None = None, *, knobs: bool = False) -> list[BestRow]:
    """The slot winners (`Store.best`), an auto_scheduler row's `args` with the structure its
    workload key is written with (`[[1, 64, 56, 56], [128, 64, 3, 3], ...]`): its identity is
    the flattened tuple, which says nothing of which number belongs to which tensor."""
    from tunelog.versions import ANSOR_VERSION

    rows = store.best(filters, knobs=knobs)
    if any(row.log_version == ANSOR_VERSION for row in rows):
        ansor_args_as_written(store, rows)
    return rows


def ansor_args_as_written(store: Store, rows: Sequence[BestRow]) -> None:
    """Give each auto_scheduler row of `store.best()` its key's items as written (in place)."""
    from tunelog.versions import ANSOR_VERSION

    spelled = _ansor_spellings(store)
    for row in rows:
        if row.log_version == ANSOR_VERSION:
            row.args = spelled.get((row.task_name, _args_key(row.args)), row.args)


def _args_key(args: Sequence[object]) -> str:
    import json

    return json.dumps(args, sort_keys=True)


def _ansor_spellings(store: Store) -> dict[tuple[str, str], list[object]]:
    """(hash, flattened args) -> the items after the hash of the key as first written."""
    import json

    from tunelog.versions import ANSOR_VERSION

    found: dict[tuple[str, str], list[object]] = {}
    for workload in store.layer_inputs()[1]:
        if workload.version != ANSOR_VERSION or workload.spelling is None:
            continue
        try:
            items = json.loads(workload.spelling)
        except ValueError:
            continue
        if isinstance(items, list) and items:
            found[(workload.task_name, _args_key(workload.args))] = items[1:]
    return found


# -- layers: one operator across templates ------------------------------------------------------

SORT_KEYS = ("latency", "gflops", "trials")


def layers(store: Store, filters: Filters | None = None, *, sort: str | None = None) -> list[Layer]:
    """Every (target group, layer) with its templates and the one relay picks.

    `sort`: "latency" (slowest winner first), "gflops" (least efficient first; unknown last) or
    "trials" (fewest first); default: first seen first.
    """
    if filters is not None and filters.selects_sources:
        # What importing only the chosen files gives (see Store.selected). The layers remember
        # the selection: their ids are that database's, which `_answering` builds again (the
        # same ids: a selection is a deterministic merge) for curves, knobs and convergence.
        with store.selected(filters) as (chosen, rest):
            found = layers(chosen, rest, sort=sort)
        for lay in found:
            lay.selection = filters.sources_only()
        return found
    found = list(_each_layer(store, filters))
    if sort == "latency":
        found.sort(key=lambda lay: -_winner_cost(lay))
    elif sort == "gflops":
        found.sort(key=lambda lay: (lay.gflops is None, lay.gflops or 0.0))
    elif sort == "trials":
        found.sort(key=lambda lay: lay.trials)
    elif sort is not None:
        raise ValueError(f"unknown sort key {sort!r}: use one of {', '.join(SORT_KEYS)}")
    return found


def _each_layer(store: Store, filters: Filters | None) -> Iterator[Layer]:
    """`layers` unsorted, one at a time: a caller that keeps a few need not hold them all."""
    from tunelog.layers import LayerIndex, TargetGroup

    if filters is not None and filters.selects_sources:
        yield from layers(store, filters)
        return
    target = filters.query_target if filters is not None else None
    for_group = None
    if target is not None:
        for_group = TargetGroup(target.keys, target.model, (target.raw,))
    pairs = store.selected_pairs(filters) if filters is not None else None
    for lay in LayerIndex(*store.layer_inputs()).layers(for_group):
        if _matches(lay, filters) and _has_selected_records(lay, pairs):
            yield lay


def _winner_cost(layer: Layer) -> float:
    """The winning config's mean cost; 0 for an untuned layer."""
    if layer.winner is None or layer.winner.chosen is None:
        return 0.0
    return layer.winner.chosen.mean_cost


@dataclass(frozen=True)
class UntunedReport:
    """`untuned`'s answer with how many layers the filters matched: none untuned among none
    matched is no answer (`untuned --check` fails then)."""

    layers: list[Layer]
    matched: int


def untuned_report(store: Store, filters: Filters | None = None) -> UntunedReport:
    """The untuned layers (see `untuned`) and how many layers the filters matched."""
    asked = filters.for_target if filters is not None else None
    untuned: list[Layer] = []
    matched = 0
    for lay in _each_layer(store, filters):
        matched += 1
        if lay.winner is None or (lay.warnings and _answered_elsewhere(lay, asked)):
            untuned.append(lay)
    return UntunedReport(untuned, matched)


def untuned(store: Store, filters: Filters | None = None) -> list[Layer]:
    """Layers with no measurement their targets can use, or only one from another machine.

    A layer without a winner runs a fallback config. A layer answered from another machine is
    listed too (TVM uses that config, but nothing was measured on the machine asked about):
    its winner was measured on a target string outside the layer's group (through a shared
    key), or on a surely different machine than the target asked about (--for-target) or a
    target of the group (another kind, or another value of -mcpu/-mtriple/-arch/-model/
    -device). An option only one string gives (`cuda -model=t4` vs `cuda -arch=sm_75
    -model=t4`) may be the same machine: `workloads` warns, `untuned` does not list it.
    """
    return untuned_report(store, filters).layers


def diagnose_untuned(
    store: Store,
    text: str,
    *,
    target: str | None = None,
    show_path: Callable[[str], str] = str,
) -> DiagnoseReport:
    """Why the database does not answer each workload TVM reported untuned (`tunelog diagnose`).

    `text`: TVM's console output ("Cannot find tuning records for" / "Cannot find config for"
    messages, any logging prefix), or a task list (`[[task_name, *args], ...]` JSON) compiled
    for `target`. One reason per (target, workload): see `tunelog.diagnosis`. `show_path`
    writes a stored source path in the details (the CLI shows it relative).
    """
    from tunelog.diagnosis import diagnose_text
    from tunelog.recordindex import RecordIndex

    index = RecordIndex(*store.layer_inputs(), show_path=show_path)
    return diagnose_text(index, text, target=target)


def tuning_progress(
    store: Store,
    tasks: str | Sequence[tuple[object, ...]],
    target: str,
    *,
    need_trials: int | None = None,
) -> list[TaskProgress]:
    """Trials already done per task of a task list on `target` (`tunelog tasks`).

    `tasks`: the task list's JSON text, or its workloads as tuples. With `need_trials`, only
    the tasks with fewer valid trials than that (what a tuning script still has to tune).
    Raises NotATaskListError, TargetParseError.
    """
    from tunelog.store.trials import trial_runs
    from tunelog.tasklist import needing_trials, task_progress
    from tunelog.tvmmessages import read_task_list

    workloads = read_task_list(tasks) if isinstance(tasks, str) else list(tasks)
    asked = parse_target(target)
    known, infos, _, _ = store.layer_inputs()
    group_of = {
        target_id: (parsed.keys, parsed.model)
        for target_id, text in known
        for parsed in (parse_target(text),)
    }
    found = task_progress(workloads, asked, infos, trial_runs(store, group_of))
    return found if need_trials is None else needing_trials(found, need_trials)


def network(path: str, store: Store | None = None) -> GraphLog:
    """A graph-tuner output's layers with occurrences, latencies and layouts (`tunelog network`).

    With `store` (holding the kernel log of the same layers): each layer's best single-op
    latency there, and the best per data layout, beside the graph tuner's choice.
    """
    from tunelog.inputs import LogInput, OpenedLog
    from tunelog.network import read_graph_log

    # Read as an import reads a log: compressed files, stdin (`-`), CR line ends, the line cap.
    with OpenedLog(LogInput(path)) as opened:
        graph = read_graph_log(opened.lines())
    if store is not None:
        _add_kernel_bests(store, graph)
    return graph


def network_totals(store: Store, filters: Filters | None = None) -> list[GroupTotal]:
    """Per target group, the total of winners' latencies and each layer's share (each layer
    counted once: a kernel log cannot count occurrences; `network(path)` reads a graph log)."""
    from tunelog.network import group_totals

    return group_totals(layers(store, filters))


def _add_kernel_bests(store: Store, graph: GraphLog) -> None:
    from tunelog.workloads import layer_key

    by_target: dict[str, dict[str, Layer]] = {}
    for entry in graph.layers:
        if entry.target not in by_target:
            found = layers(store, Filters(for_target=entry.target))
            by_target[entry.target] = {lay.key: lay for lay in found}
        layer = by_target[entry.target].get(layer_key(entry.task_name, "", entry.args))
        if layer is None or layer.winner is None or layer.winner.chosen is None:
            continue
        entry.kernel_best = layer.winner.chosen.mean_cost
        for template in knobs(store, layer, "layout:data"):
            for value in template.values:
                if value.best is not None:
                    known = entry.best_per_layout.get(value.value)
                    entry.best_per_layout[value.value] = min(known or value.best, value.best)


def _answered_elsewhere(layer: Layer, asked: str | None) -> bool:
    """The layer's winner was measured on another machine than the one asked about."""
    from tunelog.machines import conflicting_machines

    chosen = layer.winner.chosen if layer.winner is not None else None
    if chosen is None:
        return False
    if asked is None and chosen.target not in layer.group.targets:
        return True
    targets = [asked] if asked is not None else layer.group.targets
    return any(conflicting_machines(target, chosen.target) for target in targets)


def _matches(layer: Layer, filters: Filters | None) -> bool:
    """A layer is shown when records of its group and of one of its templates are selected."""
    if filters is None:
        return True
    if not filters.matches_target_group(layer.group.keys, layer.group.model):
        return False
    return any(filters.matches_task(t.workload.task_name) for t in layer.templates)


def _has_selected_records(layer: Layer, pairs: set[tuple[str, int]] | None) -> bool:
    """With --source/--label/--target: a template of the layer has a selected record on a
    target of the layer's group, or its answering record is a selected one's (target, workload).
    """
    if pairs is None:
        return True
    for template in layer.templates:
        targets = list(layer.group.targets) if template.trials else []
        if template.chosen is not None:
            targets.append(template.chosen.target)
        if any((target, template.workload.id) in pairs for target in targets):
            return True
    return False


@dataclass
class ErrorSummary:
    """Failures of one template on one layer, with a diagnosis."""

    layer: Layer
    template: TemplateResult
    diagnosis: list[str]

    @property
    def error_counts(self) -> dict[str, int]:
        """Error name -> records, failures only, most frequent first."""
        from tunelog.errorcodes import error_name

        failed = [(n, c) for n, c in self.template.errors.items() if n != 0]
        return {error_name(n): c for n, c in sorted(failed, key=lambda nc: (-nc[1], nc[0]))}


def errors(store: Store, filters: Filters | None = None) -> list[ErrorSummary]:
    """Every template with failed records, per layer, most failures first."""
    found: list[ErrorSummary] = []
    for layer in _each_layer(store, filters):
        for template in layer.templates:
            if template.failed:
                found.append(ErrorSummary(layer, template, _diagnosis(layer, template)))
    found.sort(key=lambda e: -e.template.failed)
    return found


def _diagnosis(layer: Layer, template: TemplateResult) -> list[str]:
    from tunelog.errorcodes import cause_of_failures, diagnose

    cause = cause_of_failures(template.errors)
    all_costs: list[float] = []
    if cause is not None and cause in template.all_cost_range:
        low, high = template.all_cost_range[cause]
        all_costs = [low] if low == high else [low, high]
    return diagnose(template.errors, all_costs=all_costs, answered_by=_answered_by(layer, template))


def _answered_by(layer: Layer, template: TemplateResult) -> str | None:
    """What apply_history_best uses for the layer when this template never measured."""
    if layer.winner is None:
        return None  # the layer really runs a fallback config
    if layer.winner is template and template.chosen is not None:
        return (
            "No valid measurement on these targets; apply_history_best answers with a record "
            f"tuned for another target ({template.chosen.source}:{template.chosen.line})."
        )
    return f"No valid measurement for this template; the layer uses {layer.winner.name}."


def layer_as_dict(layer: Layer, convergence: LayerConvergence | None = None) -> dict[str, object]:
    """A layer as plain JSON-ready data (what `tunelog workloads --json` prints).

    With `convergence`: each template's convergence, and the layer's verdict and trials to best
    (those of the template relay picks).
    """
    data = _layer_dict(layer)
    if convergence is not None:
        for entry, template in zip(data["templates"], layer.templates, strict=True):  # type: ignore[call-overload]
            entry["convergence"] = convergence.of(layer, template).as_dict()
        chosen = convergence.of_layer(layer)
        data["verdict"] = chosen.verdict
        data["trials_to_best"] = chosen.trials_to_best
    return data


def _layer_dict(layer: Layer) -> dict[str, object]:
    winner = layer.winner
    return {
        "target_keys": list(layer.group.keys),
        "model": layer.group.model,
        "targets": list(layer.group.targets),
        "operator": layer.family,
        "shapes": layer.shapes,
        "layer_key": layer.key,
        "templates": [
            {
                "template": t.workload.task_name,
                "template_key": t.workload.template_key,
                "args": t.workload.args,
                "trials": t.trials,
                "valid": t.valid,
                "failed": t.failed,
                "best_cost": t.chosen.mean_cost if t.chosen else None,
                "best_config": t.chosen.config_index if t.chosen else None,
                "source": f"{t.chosen.source}:{t.chosen.line}" if t.chosen else None,
                "measured_on": t.chosen.target if t.chosen else None,
                "offered": t.offered,
                "offer_condition": t.offer_note,
            }
            for t in layer.templates
        ],
        "winner": winner.workload.task_name if winner else None,
        "winner_config": winner.chosen.config_index if winner and winner.chosen else None,
        "winner_cost": winner.chosen.mean_cost if winner and winner.chosen else None,
        "margin": layer.margin,
        "flops": layer.flops,
        "gflops": layer.gflops,
        "trials": layer.trials,
        "warnings": list(layer.warnings),
        "strategy_note": layer.strategy_note,
    }


def error_as_dict(summary: ErrorSummary) -> dict[str, object]:
    """An error summary as plain JSON-ready data (what `tunelog errors --json` prints)."""
    layer, template = summary.layer, summary.template
    return {
        "target_keys": list(layer.group.keys),
        "model": layer.group.model,
        "operator": layer.family,
        "shapes": layer.shapes,
        "template": template.workload.task_name,
        "trials": template.trials,
        "failed": template.failed,
        "errors": summary.error_counts,
        "diagnosis": summary.diagnosis,
    }


# -- convergence and curves ---------------------------------------------------------------------

ConvergenceKey = tuple[tuple[str, ...], str, int]  # (target keys, model, workload id)


@dataclass
class LayerConvergence:
    """Convergence of every template of some layers on their target groups (see convergence)."""

    by_key: dict[ConvergenceKey, Convergence]

    def of(self, layer: Layer, template: TemplateResult) -> Convergence:
        """The template's convergence on the layer's group (no trials: not tuned)."""
        key = (layer.group.keys, layer.group.model, template.workload.id)
        from tunelog.convergence import Progress

        found = self.by_key.get(key)
        return found if found is not None else Progress().summary()

    def of_layer(self, layer: Layer) -> Convergence:
        """The convergence of the template relay picks (else of the first template)."""
        return self.of(layer, layer.winner or layer.templates[0])


@contextmanager
def _answering(store: Store, found: Sequence[Layer]) -> Iterator[Store]:
    """The database the layers' ids belong to: `store`, or the selection they were found in."""
    selections = {lay.selection for lay in found}
    if len(selections) > 1:
        raise ValueError("layers found under different --source/--label filters: ask apart")
    selection = next(iter(selections), None)
    if selection is None:
        yield store
        return
    with store.selected(selection) as (chosen, _):
        yield chosen


def layer_convergence(store: Store, found: Sequence[Layer]) -> LayerConvergence:
    """Convergence per (target group, template) for these layers.

    Reads the trial runs kept on import (`store.trials.trial_runs`), never stored lines.
    """
    if any(lay.selection is not None for lay in found):
        with _answering(store, found) as chosen:
            return layer_convergence(chosen, [replace(lay, selection=None) for lay in found])
    from tunelog.convergence import join_runs
    from tunelog.store.trials import targets, trial_runs

    group_of = {
        target_id: (parsed.keys, parsed.model)
        for target_id, target in targets(store)
        for parsed in (parse_target(target),)
    }
    wanted = {(lay.group.keys, lay.group.model) for lay in found}
    runs = trial_runs(store, group_of)
    return LayerConvergence(
        {
            (group[0], group[1], workload_id): join_runs(parts)
            for (group, workload_id), parts in runs.items()
            if group in wanted
        }
    )


def find_layer(store: Store, name: str, filters: Filters | None = None) -> Layer:
    """The one layer (row of `tunelog workloads`) that `name` names, among the filtered ones.

    `name` is a layer's `layer_key` (`workloads --json`) or its shapes text (the `shapes`
    column), matched exactly first, then as a substring of either. Several target groups with
    the same layer are ambiguous: narrow them with the target filters.
    """
    hits = layers_named(layers(store, filters), name)
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise AmbiguousLayerError(_ambiguous(name, hits))
    raise UnknownLayerError(
        f"no layer matches {name!r}; `tunelog workloads` lists them (the shapes column, or "
        "layer_key in --json)"
    )


def layers_named(found: Sequence[Layer], name: str) -> list[Layer]:
    """The layers `name` names: those whose layer_key or shapes text it is exactly, else
    those whose layer_key or shapes text contains it (`find_layer`, `workloads LAYER`)."""
    exact = [lay for lay in found if name in (lay.key, lay.shapes)]
    return exact or [lay for lay in found if name in lay.key or name in lay.shapes]


LAYERS_LISTED = 10  # candidates an ambiguous layer name lists


def _ambiguous(name: str, hits: Sequence[Layer]) -> str:
    """The error for a layer name several layers match: the candidates one per line."""
    lines = [
        f"{len(hits)} layers match {name!r}: give more of the shapes, the full layer key "
        "(`tunelog workloads --json`), or narrow with --target-key/--model/--template:"
    ]
    lines += [f"  {h.group.label}: {h.shapes}  ({h.key})" for h in hits[:LAYERS_LISTED]]
    if len(hits) > LAYERS_LISTED:
        lines.append(f"  ... and {len(hits) - LAYERS_LISTED} more (`tunelog workloads`)")
    return "\n".join(lines)


def _group_target_ids(store: Store, layer: Layer) -> list[int]:
    from tunelog.store.trials import targets

    wanted = (layer.group.keys, layer.group.model)
    return [
        target_id
        for target_id, target in targets(store)
        for parsed in (parse_target(target),)
        if (parsed.keys, parsed.model) == wanted
    ]


def _ordered(rows: Sequence[TrialRow]) -> list[TrialRow]:
    """Rows of one sequence in trial order (tunelog.convergence: source runs, then lines)."""
    from tunelog.convergence import source_starts, trial_order

    starts = source_starts((r.source_id, r.timestamp) for r in rows)
    return sorted(rows, key=lambda r: trial_order(starts[r.source_id], r.source_id, r.record_id))


def curves(store: Store, layer: Layer) -> list[TemplateCurve]:
    """The best-so-far curve of every template of a layer on its target group."""
    if layer.selection is not None:
        with _answering(store, [layer]) as answering:
            return curves(answering, replace(layer, selection=None))
    from tunelog.convergence import Trial, best_so_far, summarize
    from tunelog.results import CurveRow, TemplateCurve
    from tunelog.store.trials import layer_trials

    rows = layer_trials(
        store, [t.workload.id for t in layer.templates], _group_target_ids(store, layer)
    )
    found: list[TemplateCurve] = []
    for template in layer.templates:
        ordered = _ordered([r for r in rows if r.workload_id == template.workload.id])
        points = best_so_far((r.mean_cost, r.error_no) for r in ordered)
        found.append(
            TemplateCurve(
                layer,
                template,
                [
                    CurveRow(
                        p.trial,
                        r.source,
                        r.line,
                        r.config_index,
                        p.cost,
                        p.error_no,
                        p.best,
                        p.improved,
                    )
                    for p, r in zip(points, ordered, strict=True)
                ],
                summarize(
                    Trial((float(i), 0, 0), r.mean_cost, r.error_no) for i, r in enumerate(ordered)
                ),
            )
        )
    return found


def _layer_template_fields(layer: Layer, template: TemplateResult) -> dict[str, object]:
    """Which layer and template a `curve --json` or `knobs --json` entry is about."""
    return {
        "target_keys": list(layer.group.keys),
        "model": layer.group.model,
        "shapes": layer.shapes,
        "layer_key": layer.key,
        "template": template.workload.task_name,
        "winner": layer.winner is template,
    }


def curve_as_dict(curve: TemplateCurve) -> dict[str, object]:
    """A template's curve as plain JSON-ready data (what `tunelog curve --json` prints)."""
    return {
        **_layer_template_fields(curve.layer, curve.template),
        "template_key": curve.template.workload.template_key,
        **curve.summary.as_dict(),
        "series": [
            {
                "trial": r.trial,
                "source": f"{r.source}:{r.line}",
                "config": r.config_index,
                "cost": r.cost,
                "error_no": r.error_no,
                "best": r.best,
                "improved": r.improved,
            }
            for r in curve.rows
        ],
    }


# -- knobs and coverage -------------------------------------------------------------------------


def knobs(store: Store, layer: Layer, knob: str | None = None) -> list[TemplateKnobs]:
    """Per template of the layer: per knob and value, trials, valid/failed, best and median cost.

    Reads the stored lines of the layer's records only (their blocks, no others). `knob`: only
    that knob's rows (`layout` selects the derived layouts of x86 NCHWc templates).
    """
    if layer.selection is not None:
        with _answering(store, [layer]) as answering:
            return knobs(answering, replace(layer, selection=None), knob)
    from tunelog.knobs import KnobTrial, coverage, knob_values
    from tunelog.metaschedule import trace_knobs
    from tunelog.recordmodels import TuningRecord
    from tunelog.records import parse_line
    from tunelog.results import TemplateKnobs
    from tunelog.store.trials import layer_trials
    from tunelog.versions import METASCHEDULE_TASK as MS_TASK

    chosen_ids = [t.chosen.record_id for t in layer.templates if t.chosen is not None]
    rows = layer_trials(
        store,
        [t.workload.id for t in layer.templates],
        _group_target_ids(store, layer),
        with_lines=True,
        extra_ids=chosen_ids,
    )
    metaschedule = {t.workload.id for t in layer.templates if t.workload.task_name == MS_TASK}
    parsed: dict[int, KnobTrial | None] = {}
    for row in rows:
        assert row.raw is not None
        knob_values_of: dict[str, tuple[str, object]] | None = None
        if row.workload_id in metaschedule:  # the trace's sampling decisions
            knob_values_of = trace_knobs(row.raw)
        elif isinstance(record := parse_line(row.raw), TuningRecord):
            knob_values_of = {name: (kind, value) for name, kind, value in record.entity}
        parsed[row.record_id] = (
            None
            if knob_values_of is None
            else KnobTrial(knob_values_of, row.error_no, row.mean_cost, row.config_index)
        )
    target_ids = set(_group_target_ids(store, layer))
    found: list[TemplateKnobs] = []
    for template in layer.templates:
        mine = [
            r for r in rows if r.workload_id == template.workload.id and r.target_id in target_ids
        ]
        trials = [t for r in mine if (t := parsed[r.record_id]) is not None]
        chosen = parsed.get(template.chosen.record_id) if template.chosen else None
        values = knob_values(template.workload.task_name, trials, chosen)
        names = dict.fromkeys("layout" if v.kind == "layout" else v.knob for v in values)
        if knob is not None:
            values = [
                v for v in values if v.knob == knob or (knob == "layout" and v.kind == "layout")
            ]
        found.append(
            TemplateKnobs(
                layer,
                template,
                values,
                coverage(trials),
                template.chosen.config_index if template.chosen else None,
                unreadable=len(mine) - len(trials),
                knob_names=tuple(names),
            )
        )
    return found


def knobs_as_dict(entry: TemplateKnobs) -> dict[str, object]:
    """A template's knob table as plain JSON-ready data (what `tunelog knobs --json` prints)."""
    return {
        **_layer_template_fields(entry.layer, entry.template),
        "chosen_config": entry.chosen_config,
        "coverage": {
            "trials": entry.coverage.trials,
            "distinct_configs": entry.coverage.configs,
            "sp_factorisations": entry.coverage.sp_factorisations,
            "space_size": None,  # not in the log: AutoTVM computes it from the template
        },
        "knobs": [
            {
                "knob": v.knob,
                "type": v.kind,
                "value": v.value,
                "trials": v.trials,
                "valid": v.valid,
                "failed": v.trials - v.valid,
                "best_cost": v.best,
                "median_cost": v.median,
                "chosen": v.chosen,
            }
            for v in entry.values
        ],
    }


# -- directories, sources and their rejected lines ------------------------------------------------


def find_logs(
    paths: Sequence[str], *, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> Discovery:
    """What `import_paths` reads for `paths`, and what it skips in directories (and why)."""
    from tunelog.discovery import discover

    return discover(paths, include=include, exclude=exclude)


def find_source(store: Store, ref: str) -> Source:
    """The source named by its id (`3`, `#3`), its stored path, or a path naming the same file.

    Raises SourceNotFoundError saying where to look.
    """
    from tunelog.inputs import stored_path
    from tunelog.optionvalues import source_id

    known = store.sources()
    number = source_id(ref)
    if number is not None:
        for source in known:
            if source.id == number:
                return source
    wanted = {ref, stored_path(ref)}
    for source in known:
        if source.path in wanted or any(i.path in wanted for i in source.imports):
            return source
    raise SourceNotFoundError(
        f"no source {ref!r} in {store.path}: give an id or path that `tunelog sources` lists"
    )


def rejects(store: Store, source: str | None = None) -> list[SourceRejects]:
    """Rejected lines with their reasons: of one source (see `find_source`) or of every source."""
    from tunelog.results import SourceRejects

    with store.snapshot():
        chosen = [find_source(store, source)] if source is not None else store.sources()
        return [
            SourceRejects(s, store.rejects(s.id))
            for s in chosen
            if source is not None or s.rejected
        ]


# -- report: one self-contained HTML page -------------------------------------------------------


def write_report(
    store: Store, out: str, filters: Filters | None = None, *, force: bool = False
) -> ReportSummary:
    """Write one HTML page (scripts and styles inline, no network) describing the database.

    Summary, winners' totals per target group, per-layer table, latency and best-so-far charts,
    failures with their diagnosis, untuned layers; the same filters as `layers`. Needs plotly
    (`pip install 'tunelog[report]'`).
    """
    from tunelog import htmlreport as page
    from tunelog.exporting import write_lines_atomically
    from tunelog.results import ReportSummary

    plotly_js = _plotly_js()
    with store.snapshot():  # every part of the page from one state of the database
        data = _report_data(store, filters or Filters())
    text = page.render(data, plotly_js).encode()
    write_lines_atomically(
        out, [text], force=force, protected=_database_files(store), kind="report"
    )
    untuned_count = sum(1 for lay in data.layers if lay.winner is None)
    return ReportSummary(out, len(data.layers), untuned_count, len(data.failures), len(text) + 1)


def _plotly_js() -> str:
    """plotly.js from the plotly package: the report inlines it, so opening it needs no network.

    Read as a file: importing plotly's Python API would cost time and is not needed.
    """
    from importlib import resources

    try:
        return resources.files("plotly").joinpath("package_data/plotly.min.js").read_text("utf-8")
    except (ImportError, OSError):
        raise MissingExtraError(
            "tunelog report draws its charts with plotly.js from the plotly package, which is "
            "not installed: pip install 'tunelog[report]'"
        ) from None


def _report_data(store: Store, filters: Filters) -> htmlreport.ReportData:
    import datetime

    from tunelog import htmlreport as page

    found = layers(store, filters)
    stats = store.stats()
    failures = [
        page.FailureRow(
            target=e.layer.group.label,
            operator=e.layer.family,
            shapes=e.layer.shapes,
            template=e.template.name,
            failed=e.template.failed,
            trials=e.template.trials,
            errors=e.error_counts,
            diagnosis=e.diagnosis,
        )
        for e in errors(store, filters)
    ]
    all_targets = [str(row["target"]) for row in stats.by_target]
    query = filters.query_target
    if query is None:
        targets_of = [frozenset(lay.group.targets) for lay in found]
    else:
        # --for-target: the answering records may come from any target sharing a key.
        sharing = frozenset(t for t in all_targets if set(parse_target(t).keys) & set(query.keys))
        targets_of = [sharing for _ in found]
    curves = page.best_so_far_curves(store.trials_in_import_order(), found, targets_of)
    return page.ReportData(
        database=store.path,
        generated=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        filters=filters.describe(),
        sources=stats.sources,
        targets=stats.targets,
        records=stats.records,
        valid=stats.valid,
        failed=stats.failed,
        layers=found,
        failures=failures,
        curves=curves,
        verdicts=[
            (convergence.of_layer(lay).verdict if lay.templates else None)
            for convergence in (layer_convergence(store, found),)
            for lay in found
        ],
    )


# -- MetaSchedule: pruned database export -------------------------------------------------------

METASCHEDULE_TARGET_WARNING = (
    "MetaSchedule ignores the target when it queries a database (apache/tvm#15549): "
    "each workload's best record is used for every target"
)


def metaschedule_version_warning(store: Store) -> str | None:
    """A warning when the MetaSchedule databases imported come from TVM releases that no one
    TVM loads together (`export_metaschedule` refuses to mix them); None otherwise."""
    from tunelog.metaschedule import mixed_releases

    mixed = mixed_releases(store.metaschedule_tvm_versions())
    if not mixed:
        return None
    return (
        f"the MetaSchedule databases come from TVM {', '.join(mixed)}, which no one TVM loads "
        "together: `export --metaschedule` writes one release at a time (--source or --label)"
    )


def export_metaschedule(
    store: Store,
    directory: str,
    *,
    force: bool = False,
    filters: Filters | None = None,
    top_k: int = 1,
) -> MetaScheduleExport:
    """Write a pruned MetaSchedule database: the `top_k` best valid records of each workload.

    The workloads are those whose best record matches `filters` (as for `export`); each keeps
    its `top_k` best valid records of distinct traces. The two files hold the original lines
    (each record's workload index rewritten to its workload's new line), in import order.
    Existing files are refused unless `force`; so is a mix of TVM releases, which no TVM loads
    (MixedTvmVersionsError, naming the versions).
    """
    from tunelog.exporting import write_lines_atomically
    from tunelog.metaschedule import RECORD_FILE, WORKLOAD_FILE, mixed_releases, pruned_database
    from tunelog.results import MetaScheduleExport

    own = _database_files(store)
    with store.selected(filters) as (chosen, rest), chosen.snapshot():
        rows = chosen.metaschedule_export(rest, top_k=top_k)
        versions = chosen.metaschedule_tvm_versions({row[0] for row in rows})
    if not rows:
        raise NothingToExportError(
            "no valid MetaSchedule record matches: nothing to export "
            "(import a database directory first, or loosen the filters)"
        )
    mixed = mixed_releases(versions)
    if mixed:
        raise MixedTvmVersionsError(
            f"the workloads come from TVM {', '.join(mixed)}, whose databases no one TVM loads "
            "together: export one version at a time (--source or --label)"
        )
    workload_lines, record_lines = pruned_database(rows)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    write_lines_atomically(str(out / WORKLOAD_FILE), workload_lines, force=force, protected=own)
    write_lines_atomically(str(out / RECORD_FILE), record_lines, force=force, protected=own)
    return MetaScheduleExport(
        directory, len(workload_lines), [METASCHEDULE_TARGET_WARNING], len(record_lines)
    )


# -- sources: remove -----------------------------------------------------------------------------


def remove_sources(store: Store, ref: str) -> list[RemovedSource]:
    """Remove the sources named by id, label or path, as if they had never been imported.

    A record goes only when no remaining source held its line; one a later file also held stays,
    as if that file had stored it (see `tunelog.store.removal`). Raises UnknownSourceError when
    nothing matches.
    """
    return store.remove_sources(ref)


# -- merge and diff: many machines and runs ---------------------------------------------------


def merge(
    store: Store, databases: Sequence[str], *, only_sources: Collection[int] | None = None
) -> list[MergeReport]:
    """Merge other tunelog databases into `store`, all in one transaction (see store.merging).

    Merging again adds nothing. The slots afterwards are those of importing the store's files,
    then each database's files in its import order. An older database is read from a migrated
    temporary copy; a newer one is refused (NewerSchemaError).
    """
    from tunelog.store.merging import merge_databases

    return merge_databases(store, databases, only_sources=only_sources)


LABEL_PREFIX = "label:"
SOURCE_PREFIX = "source:"


def diff(a: str, b: str, *, db: str | None = None, threshold_pct: float = 5.0) -> DiffReport:
    """Compare run A with run B, layer by layer.

    Each side is a tunelog database file, a log file or directory (imported into a temporary
    database), `label:NAME` (the sources of `db` imported with that label) or `source:ID`
    (one source of `db`, by its id in `tunelog sources`).
    """
    from tunelog.diffing import diff_layers, run_layers
    from tunelog.optionvalues import percent
    from tunelog.results import DiffReport

    report = DiffReport(a, b, percent(threshold_pct, "threshold_pct"), [])
    with (
        _run_store(a, db, "A", report.notes) as left,
        _run_store(b, db, "B", report.notes) as right,
    ):
        # B's layers kept only as what the diff compares, before A's are built (memory).
        in_b = run_layers(layers(right))
        report.layers = diff_layers(layers(left), in_b, threshold_pct)
    return report


@contextmanager
def _run_store(spec: str, db: str | None, side: str, notes: list[str]) -> Iterator[Store]:
    """The database of one side of a diff (temporary, in memory, unless a database file)."""
    if spec.startswith((LABEL_PREFIX, SOURCE_PREFIX)):
        ids = _selected_sources(spec, db)
        with Store(":memory:") as temp:
            merge(temp, [db or ""], only_sources=ids)
            yield temp
        return
    if _is_sqlite_file(spec):
        with Store(spec) as store:
            yield store
        return
    with Store(":memory:") as temp:
        for report in import_paths(temp, [spec]):
            if report.unreadable and report.path == spec:
                raise InputNotFoundError(f"{spec} {report.unreadable}")
            if report.unreadable:
                notes.append(f"{side}: {report.path} {report.unreadable}: skipped")
            if report.rejected:
                notes.append(
                    f"{side}: {report.path}: {report.rejected} line(s) rejected "
                    "(`tunelog import` it to see why)"
                )
        yield temp


def _selected_sources(spec: str, db: str | None) -> list[int]:
    """The source ids of --db that `label:NAME` or `source:ID` names."""
    if db is None or not os.path.isfile(db):
        raise InputNotFoundError(
            f"{spec}: no database {db or ''} to take sources from; pass --db or import first"
        )
    with Store(db) as store:
        found = store.sources()
    if spec.startswith(LABEL_PREFIX):
        name = spec[len(LABEL_PREFIX) :]
        ids = [s.id for s in found if s.label == name]
    else:
        from tunelog.optionvalues import source_id

        wanted = source_id(spec[len(SOURCE_PREFIX) :])
        ids = [s.id for s in found if s.id == wanted]
    if not ids:
        raise UnknownSourceError(
            f"no source of {db} matches {spec!r}: see `tunelog sources` for ids and labels"
        )
    return ids


def _is_sqlite_file(path: str) -> bool:
    """True when `path` is a file that starts like an SQLite database."""
    try:
        with open(path, "rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def diff_as_dict(report: DiffReport) -> dict[str, object]:
    """A diff as plain JSON-ready data (what `tunelog diff --json` prints)."""
    from tunelog.diffing import STATUSES

    return {
        "a": report.a,
        "b": report.b,
        "threshold_pct": report.threshold_pct,
        "counts": {status: report.count(status) for status in STATUSES},
        "winner_changes": len(report.winner_changes),
        "layers": [d.model_dump() for d in report.layers],
        "notes": report.notes,
    }


# -- watch: follow logs a tuner is appending to -------------------------------------------------


def watch(
    store: Store,
    paths: Sequence[str],
    *,
    on_refresh: Callable[[Refresh], None],
    interval: float = 2.0,
    refreshes: int | None = None,
    until_idle: float | None = None,
    repair: bool = False,
) -> Refresh:
    """Import what is new in `paths` every `interval` seconds (incrementally; an unterminated
    last line waits for its end) and call `on_refresh` with the layers after each refresh.

    Stops after `refreshes` refreshes, or when no file grew for `until_idle` seconds, or on
    KeyboardInterrupt (which rolls back only the file being imported). Returns the last refresh.
    """
    from tunelog import optionvalues
    from tunelog.live import follow

    optionvalues.interval(interval)
    if until_idle is not None:
        optionvalues.seconds(until_idle, "until_idle")
    return follow(
        store,
        paths,
        on_refresh=on_refresh,
        interval=interval,
        refreshes=refreshes,
        until_idle=until_idle,
        repair=repair,
    )
