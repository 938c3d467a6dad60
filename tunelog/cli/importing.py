"""`tunelog import`: files and directories into the database, with their line accounting."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tunelog import optionvalues
from tunelog.cli.app import app, example
from tunelog.cli.cells import display_path
from tunelog.cli.emitters import emit_json, emit_table
from tunelog.cli.importnotes import (
    REJECTS_SHOWN,
    damage_warning,
    holds_no_record,
    import_note,
    metaschedule_warnings,
    not_a_log,
    read_otherwise,
)
from tunelog.cli.notes import WARNINGS_SHOWN
from tunelog.cli.options import JsonOption
from tunelog.cli.output import _err, shown
from tunelog.cli.running import checked, handles_errors, opened_store
from tunelog.tables import Column

if TYPE_CHECKING:
    from tunelog import api
    from tunelog.inputs import LogInput
    from tunelog.models import FileReport, RejectedLine


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
    """Import AutoTVM and auto_scheduler logs (plain, .gz, .bz2 or .xz) and MetaSchedule
    databases; re-importing adds nothing."""
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
        for warning in metaschedule_warnings(report):
            _err(warning)
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
    "unrecorded_workloads",
    "workload_problems",
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
                import_note(r),
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
        if read_otherwise(report):
            from tunelog.recordvalues import REPAIR_HINT

            # Its "use --repair" lines are records of the other reading's source: only the
            # lines rejected either way are said (their count, the source's, in `sources`).
            _said_rejects(report.path, [r for r in shown if not r.reason.endswith(REPAIR_HINT)])
            continue
        from tunelog.importreport import WHOLE_FILE

        if [r.line for r in shown] == [WHOLE_FILE]:  # one reason for every line of the file
            _err(f"{report.path}: {shown[0].reason}")
            continue
        _said_rejects(report.path, shown)
        if report.rejected > len(shown):
            _err(f"{report.path}: ... and {report.rejected - len(shown)} more rejected line(s)")
        damage = damage_warning(report)
        if damage is not None:  # said last, whatever the rejected lines before it
            _err(damage)


def _said_rejects(path: str, rejects: Sequence[RejectedLine]) -> None:
    for reject in rejects:
        _err(f"{path}:{reject.line}: {reject.reason}")


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
