"""The Python API: everything the CLI does, as functions over a `Store`.

import tunelog
with tunelog.open_store("tunelog.db") as store:
    reports = tunelog.import_paths(store, ["logs/"])
    rows = store.best()
    tunelog.export(store, "best.log")
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from tunelog.exceptions import NothingToExportError
from tunelog.exporting import rewrite_target, write_lines_atomically
from tunelog.inputs import LogInput, OpenedLog, expand_inputs
from tunelog.models import FileReport
from tunelog.store import Filters, Store
from tunelog.targets import parse_target

# Called with (input, bytes read so far, total bytes or None) while a file imports.
ImportProgress = Callable[[LogInput, int, int | None], None]


def import_paths(
    store: Store,
    paths: Sequence[str],
    *,
    label: str | None = None,
    strict: bool = False,
    progress: ImportProgress | None = None,
) -> list[FileReport]:
    """Import files, directories (recursively) and `-` (stdin); one transaction per file."""
    reports: list[FileReport] = []
    for source in expand_inputs(paths):
        total = None if source.is_stdin else _size(source.path)
        callback = None
        if progress is not None:
            callback = _bind(progress, source, total)
        with OpenedLog(source) as opened:
            reports.append(store.import_log(opened, label=label, strict=strict, progress=callback))
    return reports


def _bind(progress: ImportProgress, source: LogInput, total: int | None) -> Callable[[int], None]:
    def report(done: int) -> None:
        progress(source, done, total)

    return report


def _size(path: str) -> int | None:
    try:
        import os

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
) -> ExportReport:
    """Write the slot winners (or the top-k configs per slot) as original lines to `out`.

    Loading the result with `autotvm.apply_history_best` gives the same config for every
    (target, workload) as loading everything imported, in import order.
    """
    filters = filters or Filters()
    report = ExportReport(path=out)

    def lines() -> Iterator[bytes]:
        for _record_id, target, version, raw in store.winner_lines(filters, top_k=top_k):
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
