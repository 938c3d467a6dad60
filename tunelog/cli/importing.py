"""`tunelog import`: files and directories into the database, with their line accounting."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tunelog import optionvalues
from tunelog.cli.app import app, example
from tunelog.cli.cells import _source_ref, display_path
from tunelog.cli.emitters import emit_json, emit_table
from tunelog.cli.notes import WARNINGS_SHOWN
from tunelog.cli.options import JsonOption
from tunelog.cli.output import _err, shown
from tunelog.cli.running import checked, handles_errors, opened_store
from tunelog.tables import Column

if TYPE_CHECKING:
    from tunelog import api
    from tunelog.inputs import LogInput
    from tunelog.models import FileReport, RejectedLine


REJECTS_SHOWN = 20


# -- import -----------------------------------------------------------------------------------


@app.command(
    "import",
    epilog=example("tunelog import logs/ run2.log.gz --exclude '*.json'"),
)
@handles_errors
def import_command(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH",
            help="Log files, directories (recursive; only files that look like tuning logs, "
            "no dot-directories) or - for stdin.",
            callback=checked(optionvalues.log_paths),
        ),
    ],
    include: Annotated[
        list[str] | None,
        typer.Option(
            metavar="GLOB", help="In directories, read only files matching this (repeatable)."
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(metavar="GLOB", help="In directories, skip files matching this (repeatable)."),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option(
            help="A label stored with each source.",
            callback=checked(functools.partial(optionvalues.stored_text, name="--label")),
        ),
    ] = None,
    strict: Annotated[
        bool, typer.Option(help="Roll back any file with a rejected line and exit 1.")
    ] = False,
    repair: Annotated[
        bool,
        typer.Option(help="Recover records pasted from web pages (curly quotes, joined lines)."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Import AutoTVM logs (plain, .gz, .bz2 or .xz); re-importing adds nothing."""
    from tunelog import api
    from tunelog.importreport import FileReport

    found = api.find_logs(paths, include=include or (), exclude=exclude or ())
    if found.summary():
        _print_skipped(found.skipped_files)
        _err(f"{found.summary()} (see `tunelog import --help`)")
    # Entries that cannot be read are skipped with their reason; the rest is imported.
    reports = [FileReport(path=path, unreadable=reason) for path, reason in found.unreadable]
    with opened_store(create=True) as store, _progress() as progress:
        reports += api.import_paths(
            store,
            [source.path for source in found.inputs],
            label=label,
            strict=strict,
            repair=repair,
            progress=progress,
        )
        # Said when this import added MetaSchedule records (not on every import after).
        version_warning = (
            api.metaschedule_version_warning(store) if _added_metaschedule(reports) else None
        )
    _report_imports(paths, reports, as_json, found.skipped_files, version_warning)


def _added_metaschedule(reports: Sequence[FileReport]) -> bool:
    """Whether an import added records of a MetaSchedule database (its records file)."""
    return any(r.new and r.metaschedule for r in reports)


def _tvm_refuses(report: FileReport) -> str | None:
    """The warning for a MetaSchedule records file with a line that could not be read: TVM's
    JSONDatabase loads such a database not at all (a cut-off last line, a record of a
    workload line it cannot read or that is not there), where tunelog keeps the rest."""
    if not (report.metaschedule and report.rejected) or report.rolled_back:
        return None
    return (
        f"warning: TVM's JSONDatabase cannot load {report.path} as it is: it refuses the whole "
        f"database over a line it cannot read ({report.rejected} here, which tunelog left "
        "out); `tunelog export-metaschedule DIR` writes one it loads"
    )


def _report_imports(
    paths: Sequence[str],
    reports: list[FileReport],
    as_json: bool,
    skipped: Sequence[tuple[str, str]],
    version_warning: str | None,
) -> None:
    """Print what each file added, then the errors: exit 1 for a named path that could not be
    read or holds no record, or for files --strict rolled back."""
    # A path named on the command line that cannot be read is an error (exit 1), once the
    # other files are imported; an entry found in a directory is only reported.
    named = set(paths)
    missing = [r for r in reports if r.unreadable and r.path in named]
    shown_reports = reports if as_json else [r for r in reports if r not in missing]
    # A file named to import that holds no record at all is not a log: an error saying what
    # it looks like, instead of a hundred rejected lines.
    not_logs = [r for r in reports if r.path in named and holds_no_record(r)]
    if shown_reports or not missing:
        _print_import(shown_reports, as_json, skipped=skipped, quiet={r.path for r in not_logs})
    if version_warning:
        _err(f"warning: {version_warning}")
    for report in reports:
        refused = _tvm_refuses(report)
        if refused is not None:
            _err(refused)
        if report.workloads_without_records:
            _err(
                f"warning: {report.workloads_without_records} workload(s) of the database of "
                f"{report.path} have no record: TVM compiles them with no tuned schedule "
                "(`tunelog untuned` lists only layers with records)"
            )
    # One `Error:` line per file that failed, then the exit (1).
    for report in missing:
        _err(f"Error: {report.path} {report.unreadable}")
    for report in not_logs:
        _err(f"Error: {not_a_log(report)}")
    garbled = [r.path for r in reports if r.garbled and r.path not in {r.path for r in not_logs}]
    for path in garbled:
        _err(f"Error: {path} is damaged: nothing of it was imported (see the warning above)")
    if missing or not_logs or garbled:
        raise typer.Exit(1)
    if any(r.rolled_back for r in reports):
        _err("Error: --strict: files with rejected lines were rolled back; fix or drop --strict")
        raise typer.Exit(1)


_REPORT_FIELDS = {
    "path",
    "lines",
    "new",
    "duplicates",
    "discarded",
    "comments",
    "blank",
    "rejected",
    "rejects",
    "already_imported_as",
    "rolled_back",
    "repaired",
    "split",
    "skipped_lines",
    "held_back_bytes",
    "damaged",
    "garbled",
    "prefix_changed",
    "unreadable",
    "superseded",
    "relabelled",
    "metaschedule",
    "other_repair",
    "workloads_without_records",
}


_IMPORT_COLUMNS = (
    Column("file", path=True),
    Column("lines", rank=1),
    Column("new"),
    Column("dup", rank=1),
    Column("comments", rank=2),
    Column("blank", rank=2),
    Column("rejected"),
    Column("note"),
)


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


def _print_skipped(skipped: Sequence[tuple[str, str]]) -> None:
    """The files a directory import left out, by name (the first WARNINGS_SHOWN)."""
    for path, reason in skipped[:WARNINGS_SHOWN]:
        _err(f"skipped {display_path(path)}: {reason}")
    if len(skipped) > WARNINGS_SHOWN:
        _err(f"... and {len(skipped) - WARNINGS_SHOWN} more skipped file(s) (--json lists them)")


def _print_import(
    reports: list[FileReport],
    as_json: bool,
    *,
    skipped: Sequence[tuple[str, str]] = (),
    quiet: set[str] | frozenset[str] = frozenset(),
) -> None:
    """The summary on stdout (table or JSON); rejected lines on stderr either way, but for the
    files in `quiet` (not logs: one error says so)."""
    if as_json:
        emit_json(
            {
                "files": [r.model_dump(include=_REPORT_FIELDS) for r in reports],
                "skipped": [{"path": path, "reason": reason} for path, reason in skipped],
            }
        )
    else:
        rows: list[tuple[Any, ...]] = [
            (
                display_path(r.path),
                r.lines,
                r.new,
                r.duplicates,
                r.comments,
                r.blank,
                r.rejected,
                _import_note(r),
            )
            for r in reports
        ]
        if len(reports) > 1:
            rows.append(
                (
                    f"total ({len(reports)} files)",
                    *(sum(row[i] for row in rows) for i in range(1, 7)),
                    "",
                )
            )
        emit_table(
            rows,
            _IMPORT_COLUMNS,
            empty="no log to import (see `tunelog import --help` for what is read)",
        )
    for report in reports:
        if report.unreadable:
            _err(f"{report.path} {report.unreadable}: skipped")
        if report.path in quiet:
            continue
        shown = report.rejects[:REJECTS_SHOWN]
        if _read_otherwise(report):
            from tunelog.recordvalues import REPAIR_HINT

            # Its "use --repair" lines are records of the other reading's source: only the
            # lines rejected either way are said (their count, the source's, in `sources`).
            _said_rejects(report.path, [r for r in shown if not r.reason.endswith(REPAIR_HINT)])
            continue
        from tunelog.importreport import WHOLE_FILE

        if [r.line for r in shown] == [WHOLE_FILE]:  # one reason for every line of the file
            _err(f"{report.path}: {shown[0].reason}")
            continue
        for reject in shown:
            _err(f"{report.path}:{reject.line}: {reject.reason}")
        if report.rejected > len(shown):
            _err(f"{report.path}: ... and {report.rejected - len(shown)} more rejected line(s)")
        if report.garbled:  # said last, whatever the rejected lines before it
            _err(garbled_warning(report))
        elif report.damaged:
            kept = (
                "nothing of it was kept (--strict)"
                if report.rolled_back
                else "the lines before were imported"
            )
            _err(
                f"warning: {report.path} is damaged, reading stopped early ({report.damaged}): "
                f"{kept}"
            )


def _said_rejects(path: str, rejects: Sequence[RejectedLine]) -> None:
    for reject in rejects:
        _err(f"{path}:{reject.line}: {reject.reason}")


def _read_otherwise(report: FileReport) -> bool:
    """Whether this read of known bytes rejected lines that their source, read with the other
    --repair setting, holds as records (a page paste imported with --repair, then without):
    its rejects ("use --repair") are no fault of the database's."""
    return report.other_repair and bool(report.rejected and report.held_before)


def _import_note(report: FileReport) -> str:
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
        if _read_otherwise(report):
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


@contextmanager
def _progress() -> Iterator[api.ImportProgress | None]:
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def update(source: LogInput, done: int, *, total: int | None) -> None:
        if source.path not in tasks:
            from rich.markup import escape

            tasks[source.path] = bar.add_task(escape(shown(source.path)), total=total)
        bar.update(tasks[source.path], completed=done)

    with bar:
        yield update
