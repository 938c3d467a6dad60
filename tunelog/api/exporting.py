"""Exports: cleaned logs TVM loads (a pruned MetaSchedule database: `api.msexporting`)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tunelog.api.importing import _database_files
from tunelog.exceptions import (
    InvalidValueError,
    MixedFormatsError,
    NothingToExportError,
)
from tunelog.store import Filters, Store
from tunelog.targets import parse_target

if TYPE_CHECKING:
    from tunelog.layers import Candidate, TargetGroup


@dataclass
class ExportReport:
    """What an export wrote and what it had to leave out or change."""

    path: str
    written: int = 0
    skipped_v01: int = 0
    unloadable_targets: dict[str, int] = field(default_factory=dict)
    # auto_scheduler records whose target host TVM refuses (its reader aborts the whole file).
    unloadable_hosts: dict[str, int] = field(default_factory=dict)
    rewritten_targets: int = 0
    skipped_losing_templates: int = 0
    # --winners-only with record filters (--target-key, --model, --task, --template): nothing
    # left out, as a template may lose only to a record the filters leave out of the file.
    winners_only_kept_all: bool = False
    skipped_metaschedule: int = 0
    # With --for-target: records written that were measured on another machine than the
    # target asked about, per warning (`machines.cross_machine_warning`; `best --for-target`
    # warns the same).
    cross_machine: dict[str, int] = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        """Every warning: `load_warnings`, then each answer from another machine written (with
        --for-target), once per difference with its count of records."""
        crossed = [f"{w} (x{n} records)" for w, n in self.cross_machine.items()]
        return [*self.load_warnings, *crossed]

    @property
    def load_warnings(self) -> list[str]:
        """Human-readable notes on records modern AutoTVM would not load as written."""
        notes: list[str] = []
        if self.skipped_v01:
            notes.append(
                f"left out {self.skipped_v01} v0.1 record(s): TVM >= 0.7 skips v0.1 lines; "
                "re-tune them, or pass --include-v01 for an old TVM"
            )
        for target, count in sorted(self.unloadable_targets.items()):
            parsed = parse_target(target)
            problems = "; ".join(parsed.load_problems)
            # --fix-targets drops rejected options; a kind TVM does not know it cannot fix.
            advice = (
                "pass --fix-targets to drop the option"
                if parsed.sanitized() != target
                else "TVM cannot read this target string: re-tune with one it knows, or leave "
                "these records out (--target-key, --target)"
            )
            notes.append(
                f"{count} record(s) with target {target!r} cannot be loaded by TVM >= 0.10 "
                f"({problems}): {advice}"
            )
        for host, count in sorted(self.unloadable_hosts.items()):
            parsed = parse_target(host)
            notes.append(
                f"{count} auto_scheduler record(s) with target host {host!r} cannot be loaded "
                f"by TVM ({'; '.join(parsed.load_problems)}): TVM's reader refuses the whole "
                "file; "
                + (
                    "pass --fix-targets to drop the option"
                    if parsed.sanitized() != host
                    else "leave these records out (--target-key, --target)"
                )
            )
        if self.winners_only_kept_all:
            notes.append(
                "--winners-only left nothing out: with --target-key, --model, --task or "
                "--template a template may lose only to a record these filters leave out of the "
                "file, and TVM would then fall back (--target, --source and --label prune)"
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
    out: str | os.PathLike[str],
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
    from tunelog import optionvalues

    optionvalues.top_k(top_k)
    out = os.fspath(out)  # a Path too (the report names it as text)
    optionvalues.output_path(out, "out")  # before the work: an empty path names no file
    for name, value in (
        ("force", force),
        ("include_v01", include_v01),
        ("fix_targets", fix_targets),
        ("winners_only", winners_only),
    ):
        optionvalues.flag(value, name)
    # The winners and their lines from one state of the database (of the chosen files'
    # records with --source/--label, see Store.selected); the output is never the user's
    # database, whichever database answers.
    protected = _database_files(store)
    with store.selected(filters, target_records=True) as (chosen, rest), chosen.snapshot():
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
        raise InvalidValueError(
            f"unknown log format {log_format!r}: use one of {', '.join(LOG_FORMATS)}"
        )
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
    from tunelog.machines import cross_machine_warning
    from tunelog.versions import V01

    report = ExportReport(path=out)
    # Records the filters leave out of the file may be what another template loses to (a
    # skylake record in the `cpu` key slot beside --target-key arm_cpu): pruning against them
    # made TVM fall back on the export (35 of 254 layers in a real arm_cpu build).
    record_filters = (
        filters.selects_tasks
        or filters.target_key is not None
        or filters.model is not None
        or (filters.target is not None and not filters.target_settled)
    )
    report.winners_only_kept_all = winners_only and record_filters
    winning = _may_be_chosen_workloads(store) if winners_only and not record_filters else None

    kinds: dict[str, str] = {}  # each log version's kind, found once (a few versions)
    # Each target string's load problems, found once (a few dozen targets, 80k lines).
    problems_of: dict[str, tuple[str, ...]] = {}
    # --for-target: each target string's cross-machine warning (None: the same machine).
    asked = filters.for_target
    crossed: dict[str, str | None] = {}

    def lines() -> Iterator[bytes]:
        for line in store.winner_lines(filters, top_k=top_k):
            target, version, raw = line.target, line.version, line.raw
            kind = kinds.get(version) or kinds.setdefault(version, _format_of(version))
            if kind == _METASCHEDULE:
                report.skipped_metaschedule += 1
                continue
            if log_format is not None and kind != log_format:
                continue
            if winning is not None and line.workload_id not in winning:
                report.skipped_losing_templates += 1
                continue
            if version == V01 and not include_v01:
                report.skipped_v01 += 1
                continue
            if asked is not None:
                warning = crossed.get(target, "")
                if warning == "":
                    warning = crossed[target] = cross_machine_warning(asked, target)
                if warning is not None:
                    report.cross_machine[warning] = report.cross_machine.get(warning, 0) + 1
            problems = problems_of.get(target)
            if problems is None:
                problems = problems_of[target] = parse_target(target).load_problems
            written = raw
            if problems and fix_targets:
                written = rewrite_target(raw, target)
                # What --fix-targets cannot drop (a kind TVM does not know, an option given
                # twice) is still said: the line was written all the same.
                target = parse_target(target).sanitized()
                problems = problems_of.get(target)
                if problems is None:
                    problems = problems_of[target] = parse_target(target).load_problems
            if problems:
                report.unloadable_targets[target] = report.unloadable_targets.get(target, 0) + 1
            if kind == "auto_scheduler":
                written = _checked_host(written, report, fix_targets, problems_of)
            if written != raw:
                report.rewritten_targets += 1  # its target, its target host or both
            yield written

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


def _checked_host(
    raw: bytes, report: ExportReport, fix: bool, problems_of: dict[str, tuple[str, ...]]
) -> bytes:
    """An auto_scheduler line whose target host TVM refuses: counted, or with --fix-targets
    rewritten as the target is (`problems_of`: each string's load problems, found once)."""
    from tunelog.exporting import ansor_target_host, rewrite_target

    host = ansor_target_host(raw)
    problems = problems_of.get(host)
    if problems is None:
        problems = problems_of[host] = parse_target(host).load_problems if host else ()
    if problems and fix:
        fixed = rewrite_target(raw, host, last=True)
        if fixed != raw:
            raw = fixed
            host = parse_target(host).sanitized()
            problems = problems_of.get(host) or parse_target(host).load_problems
    if problems:
        report.unloadable_hosts[host] = report.unloadable_hosts.get(host, 0) + 1
    return raw


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
    from tunelog.collecting import young_collected_less
    from tunelog.layers import layers_of, may_be_chosen

    found: set[int] = set()
    with young_collected_less():  # each layer's objects die young (see tunelog.collecting)
        for lay in layers_of(_may_add_to(found, store.layer_candidates(unseen_models=True))):
            found.update(template.workload.id for template in may_be_chosen(lay))
    return found


def _may_add_to(
    found: set[int], layers: Iterable[tuple[TargetGroup, str, list[Candidate]]]
) -> Iterator[tuple[TargetGroup, str, list[Candidate]]]:
    """The layers (`Store.layer_candidates`) that may add a workload to `found`, read as the
    caller adds to it: relay picks a template only through the slot that answers its query
    (an untuned one never), so a layer whose answered workloads are all found adds none and
    is not built (at 80k workloads, most layers: a workload has one in each target group)."""
    for group, layer_key, candidates in layers:
        for info, _, answer in candidates:  # a loop, not any(): 140k layers at 80k workloads
            if answer is not None and info.id not in found:
                yield group, layer_key, candidates
                break
