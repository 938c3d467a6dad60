"""What `import` (and `watch`) say of each file beyond its counts: the table's note, the
warnings (damaged, garbled, loadable by no TVM, read with the other --repair) and why a file
named to it is no log. Text only: `cli.importing` prints it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tunelog.cli.cells import _source_ref, display_path

if TYPE_CHECKING:
    from tunelog.models import FileReport

REJECTS_SHOWN = 20  # rejected lines said per file; a count says how many more
UNRECORDED_SHOWN = 5  # MetaSchedule workloads without a record named per file


def metaschedule_warnings(report: FileReport) -> list[str]:
    """The warnings of a MetaSchedule records file: a line that could not be read (TVM's
    JSONDatabase loads such a database not at all: a cut-off last line, a record of a workload
    line it cannot read or that is not there, where tunelog keeps the rest), and workloads no
    record names."""
    found = []
    if report.workload_problems:
        first, *more = report.workload_problems
        others = f"; {len(more)} more such line(s)" if more else ""
        found.append(
            f"warning: TVM's JSONDatabase cannot load the database of {report.path} as it is: "
            f"it refuses it over a line of its workload file it cannot read ({first}{others}; "
            "their records tunelog left out); `tunelog export-metaschedule DIR` writes one it "
            "loads"
        )
    elif report.metaschedule and report.rejected and not report.rolled_back:
        found.append(
            f"warning: TVM's JSONDatabase cannot load {report.path} as it is: it refuses the "
            f"whole database over a line it cannot read ({report.rejected} here, which tunelog "
            "left out); `tunelog export-metaschedule DIR` writes one it loads"
        )
    if report.workloads_without_records:
        names = report.unrecorded_workloads
        shown = "; ".join(names[:UNRECORDED_SHOWN])
        if len(names) > UNRECORDED_SHOWN:
            shown += f"; {len(names) - UNRECORDED_SHOWN} more"
        found.append(
            f"warning: {report.workloads_without_records} workload(s) of the database of "
            f"{report.path} have no record: TVM compiles them with no tuned schedule "
            f"({shown}; `tunelog untuned` lists only layers with records)"
        )
    return found


def holds_no_record(report: FileReport) -> bool:
    """A file read in full where every line that is not blank or a comment was rejected
    (the records of a file --strict rolled back are `discarded`: it holds records), also when
    imported before: the same error every time."""
    return (
        not report.unreadable
        and not report.skipped_lines  # a grown file: its earlier lines held its records
        and report.rejected > 0
        and report.new + report.duplicates + report.discarded + report.held_before == 0
    )


def damage_warning(report: FileReport) -> str | None:
    """The warning for a damaged compressed file, if it is one: garbled (nothing kept), or
    cut short (the lines before kept, unless --strict rolled them back)."""
    if report.garbled:
        return garbled_warning(report)
    if not report.damaged:
        return None
    kept = (
        "nothing of it was kept (--strict)"
        if report.rolled_back
        else ("the lines before were imported")
    )
    return f"warning: {report.path} is damaged, reading stopped early ({report.damaged}): {kept}"


def garbled_warning(report: FileReport) -> str:
    """The warning for a compressed file rolled back because its data failed its check."""
    return (
        f"warning: {report.path} is damaged ({report.damaged}): its compressed data failed its "
        "check after giving lines, any of which may be garbled, so nothing of it was kept; "
        "decompress what is left (e.g. `gzip -dc`) and import that if you trust it"
    )


def not_a_log(report: FileReport) -> str:
    """Why a file named to import is no log: what it looks like, and what to do."""
    from tunelog.discovery import looks_like
    from tunelog.rules.sourcenames import STDIN

    path = display_path(report.path)
    if report.damaged:  # a compressed file damaged before its first record
        return (
            f"{path} is damaged ({report.damaged}): no tuning record could be read from it; "
            "give an undamaged copy"
        )
    from tunelog.importreport import WHOLE_FILE

    if [r.line for r in report.rejects] == [WHOLE_FILE]:  # one reason for the whole file
        # (MetaSchedule records without their workload file: nothing stored, so that the
        # same bytes are read in full once the workload file is beside them)
        return f"{path}: {report.rejects[0].reason}"
    hint = report.repair_hint
    if hint is not None:  # records pasted from a web page: a log once repaired
        return f"{path} holds no tuning record as it is: {hint}"
    if report.path == STDIN:  # read once: what it looked like is its first rejected line
        first = report.rejects[0] if report.rejects else None
        what = f"line {first.line}: {first.reason}" if first is not None else "no record"
        return (
            f"standard input holds no tuning record ({what}; {report.rejected} line(s) "
            "rejected: `tunelog rejects -`); pipe a tuning log into `tunelog import -`"
        )
    return (
        f"{path} holds no tuning record: it looks like {looks_like(Path(report.path))} "
        f"({report.rejected} line(s) rejected: `tunelog rejects {path}`); "
        "name log files, or a directory to import the logs in it"
    )


def read_otherwise(report: FileReport) -> bool:
    """Whether this read of known bytes rejected lines that their source, read with the other
    --repair setting, holds as records (a page paste imported with --repair, then without):
    its rejects ("use --repair") are no fault of the database's."""
    return report.other_repair and bool(report.rejected and report.held_before)


def import_note(report: FileReport) -> str:
    """The import table's note of one file: what happened to it beyond its counts."""
    from tunelog.rules.lineaccounting import repaired_text

    notes = []
    if report.unreadable:
        notes.append(f"skipped: {report.unreadable}")
    if report.rolled_back:
        why = "damaged" if report.garbled else "--strict"
        notes.append(f"rolled back ({why}): {report.discarded} new record(s) not stored")
    if report.already_imported_as:
        number, _, path = report.already_imported_as.partition(" ")
        if display_path(path) == display_path(report.path):  # the row shows the path already
            note = f"already imported as {number}"
        else:
            note = f"already imported as {_source_ref(report.already_imported_as)}"
        if read_otherwise(report):
            note += (
                f", which holds {report.held_before} record(s) of these bytes read with the "
                "other --repair setting"
            )
        notes.append(note)
    if report.relabelled:
        notes.append("label set by this --label")
    if report.repaired:
        notes.append(repaired_text(report.repaired, report.split))
    if report.superseded:
        earlier = ", ".join(f"#{i}" for i in report.superseded)
        notes.append(f"replaces {earlier} (the same bytes, rejected without --repair)")
    if report.skipped_lines and not report.already_imported_as:
        notes.append(f"grown: {report.skipped_lines} earlier line(s) skipped as already imported")
    if report.prefix_changed:
        notes.append("changed since its last import: read in full")
    if report.damaged:
        notes.append(f"damaged: {report.damaged}")
    if report.held_back_bytes:
        notes.append(f"unterminated last line ({report.held_back_bytes} bytes) left for later")
    return "; ".join(notes)
