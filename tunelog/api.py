"""The Python API: everything the CLI does, as functions over a `Store`.

import tunelog
with tunelog.open_store("tunelog.db") as store:
    reports = tunelog.import_paths(store, ["logs/"])
    rows = store.best()
    tunelog.export(store, "best.log")
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from tunelog.errorcodes import cause_of_failures, diagnose, error_name
from tunelog.exceptions import NothingToExportError
from tunelog.exporting import rewrite_target, write_lines_atomically
from tunelog.inputs import LogInput, OpenedLog, expand_inputs
from tunelog.layers import Layer, TargetGroup, TemplateResult, build_layers, may_be_chosen
from tunelog.models import FileReport
from tunelog.store import Filters, Store
from tunelog.targets import UNKNOWN_MODEL, parse_target

if TYPE_CHECKING:
    from tunelog.live import Refresh


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
    follow: bool = False,
) -> list[FileReport]:
    """Import files, directories (recursively) and `-` (stdin); one transaction per file.

    `strict`: roll back any file with a rejected line. `repair`: recover records pasted from
    web pages (typographic quotes, several records on one line). A file grown since it was
    imported from the same path is read from where that import stopped. `follow` (files a
    tuner is appending to): a last line without line end is left for the next import.
    """
    reports: list[FileReport] = []
    own_files = _database_files(store)
    for source in expand_inputs(paths):
        if not source.is_stdin and os.path.realpath(source.path) in own_files:
            continue  # `tunelog import .` next to tunelog.db: never read the database itself
        callback = None
        if progress is not None:
            total = None if source.is_stdin else _size(source.path)
            callback = functools.partial(progress, source, total=total)
        with OpenedLog(source) as opened:
            reports.append(
                store.import_log(
                    opened,
                    label=label,
                    strict=strict,
                    repair=repair,
                    progress=callback,
                    follow=follow,
                )
            )
    return reports


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
) -> ExportReport:
    """Write the slot winners (or the top-k configs per slot) as original lines to `out`.

    Loading the result with `autotvm.apply_history_best` gives the same config for every
    (target, workload) as loading everything imported, in import order.
    """
    with store.snapshot():  # the winners and their lines from one state of the database
        return _export(
            store, out, filters or Filters(), top_k, force, include_v01, fix_targets, winners_only
        )


def _export(
    store: Store,
    out: str,
    filters: Filters,
    top_k: int,
    force: bool,
    include_v01: bool,
    fix_targets: bool,
    winners_only: bool,
) -> ExportReport:
    report = ExportReport(path=out)
    winning = _may_be_chosen_workloads(store) if winners_only else None

    def lines() -> Iterator[bytes]:
        for line in store.winner_lines(filters, top_k=top_k):
            target, version, raw = line.target, line.version, line.raw
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
    report.written = write_lines_atomically(out, lines(), force=force)
    return report


def _may_be_chosen_workloads(store: Store) -> set[int]:
    """--winners-only: the workloads relay may pick for some target, whichever spellings it asks.

    The targets considered are every (keys, model) of the database and, for each keys, a model
    the log never saw (only key slots answer then). A workload left out answers nothing that
    relay would use, so leaving it out keeps relay's choice everywhere.
    """
    inputs = store.layer_inputs()
    found = build_layers(*inputs)
    for keys in {lay.group.keys for lay in found}:
        unseen = TargetGroup(keys, UNKNOWN_MODEL, ())
        found += build_layers(*inputs, for_group=unseen)
    return {t.workload.id for lay in found for t in may_be_chosen(lay)}


# -- layers: one operator across templates ------------------------------------------------------

SORT_KEYS = ("latency", "gflops", "trials")


def layers(store: Store, filters: Filters | None = None, *, sort: str | None = None) -> list[Layer]:
    """Every (target group, layer) with its templates and the one relay picks.

    `sort`: "latency" (slowest winner first), "gflops" (least efficient first; unknown last) or
    "trials" (fewest first); default: first seen first.
    """
    target = filters.query_target if filters is not None else None
    for_group = None
    if target is not None:
        for_group = TargetGroup(target.keys, target.model, (target.raw,))
    found = [
        lay
        for lay in build_layers(*store.layer_inputs(), for_group=for_group)
        if _matches(lay, filters)
    ]
    if sort == "latency":
        found.sort(key=lambda lay: -_winner_cost(lay))
    elif sort == "gflops":
        found.sort(key=lambda lay: (lay.gflops is None, lay.gflops or 0.0))
    elif sort == "trials":
        found.sort(key=lambda lay: lay.trials)
    elif sort is not None:
        raise ValueError(f"unknown sort key {sort!r}: use one of {', '.join(SORT_KEYS)}")
    return found


def _winner_cost(layer: Layer) -> float:
    """The winning config's mean cost; 0 for an untuned layer."""
    if layer.winner is None or layer.winner.chosen is None:
        return 0.0
    return layer.winner.chosen.mean_cost


def untuned(store: Store, filters: Filters | None = None) -> list[Layer]:
    """Layers no template has a valid record for: they run a fallback (untuned) config."""
    return [lay for lay in layers(store, filters) if lay.winner is None]


def _matches(layer: Layer, filters: Filters | None) -> bool:
    """A layer is shown when records of its group and of one of its templates are selected."""
    if filters is None:
        return True
    if not filters.matches_target_group(layer.group.keys, layer.group.model):
        return False
    return any(filters.matches_task(t.workload.task_name) for t in layer.templates)


@dataclass
class ErrorSummary:
    """Failures of one template on one layer, with a diagnosis."""

    layer: Layer
    template: TemplateResult
    diagnosis: list[str]

    @property
    def error_counts(self) -> dict[str, int]:
        """Error name -> records, failures only, most frequent first."""
        failed = [(n, c) for n, c in self.template.errors.items() if n != 0]
        return {error_name(n): c for n, c in sorted(failed, key=lambda nc: (-nc[1], nc[0]))}


def errors(store: Store, filters: Filters | None = None) -> list[ErrorSummary]:
    """Every template with failed records, per layer, most failures first."""
    found: list[ErrorSummary] = []
    for layer in layers(store, filters):
        for template in layer.templates:
            if template.failed:
                found.append(ErrorSummary(layer, template, _diagnosis(layer, template)))
    found.sort(key=lambda e: -e.template.failed)
    return found


def _diagnosis(layer: Layer, template: TemplateResult) -> list[str]:
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


def layer_as_dict(layer: Layer) -> dict[str, object]:
    """A layer as plain JSON-ready data (what `tunelog workloads --json` prints)."""
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
    from tunelog.live import follow

    return follow(
        store,
        paths,
        on_refresh=on_refresh,
        interval=interval,
        refreshes=refreshes,
        until_idle=until_idle,
        repair=repair,
    )
