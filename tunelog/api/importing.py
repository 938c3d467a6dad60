"""Importing logs: files, directories and stdin, one transaction per file."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tunelog.exceptions import DatabaseBusyError, DiskFullError, InputNotFoundError
from tunelog.store import Store
from tunelog.store.readonly import SIDE_SUFFIXES

if TYPE_CHECKING:
    from tunelog.discovery import Discovery
    from tunelog.importreport import FileReport
    from tunelog.inputs import LogInput
    from tunelog.metaschedule import RecordScanner


class ImportProgress(Protocol):
    """Called while a file imports with the bytes read so far and the file size (None: stdin)."""

    def __call__(self, source: LogInput, done: int, *, total: int | None) -> None: ...


def import_paths(
    store: Store,
    paths: Sequence[str | os.PathLike[str]],
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
    from tunelog import optionvalues
    from tunelog.discovery import discover, unreadable_reason
    from tunelog.importreport import FileReport

    named = optionvalues.path_list(paths, "paths")
    optionvalues.log_paths(named)
    globs = optionvalues.patterns(include, "include"), optionvalues.patterns(exclude, "exclude")
    if label is not None:
        optionvalues.stored_text(label, "label")
    for name, value in (("strict", strict), ("repair", repair), ("follow", follow)):
        optionvalues.flag(value, name)
    found = discover(named, include=globs[0], exclude=globs[1])
    reports = [FileReport(path=path, unreadable=reason) for path, reason in found.unreadable]
    own_files = _database_files(store)
    # A MetaSchedule workload file is read with its records file: once, when both are given.
    given = {os.path.realpath(s.path) for s in found.inputs if not s.is_stdin}
    for number, source in enumerate(found.inputs):
        if not source.is_stdin and os.path.realpath(source.path) in own_files:
            continue  # `tunelog import .` next to tunelog.db: never read the database itself
        if not optionvalues.is_utf8(source.path):
            # The database keeps the path as text: the next files are still imported.
            reports.append(FileReport(path=source.path, unreadable=NAME_NOT_UTF8))
            continue
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
                given=given,
            )
        except (InputNotFoundError, OSError) as exc:
            # Deleted or made unreadable since it was found (a tuner's temporary file): the
            # file's transaction is rolled back, the next files are imported.
            report = FileReport(path=source.path, unreadable=unreadable_reason(exc))
        except DatabaseBusyError as exc:  # the files before it are in: said with it
            exc.done = list(reports)
            raise
        except DiskFullError as exc:  # no file after it can be written either: say which
            done = sum(1 for r in reports if not r.unreadable)
            rest = [s.path for s in found.inputs[number + 1 :]]
            raise DiskFullError(
                f"{exc}; {done} file(s) before it are imported"
                + (
                    f", {len(rest)} after it were not read ({', '.join(rest[:3])}"
                    f"{', ...' if len(rest) > 3 else ''})"
                    if rest
                    else ""
                )
            ) from exc
        if report is not None:
            if repair:
                report.superseded = _supersede_unrepaired(store, report)
            reports.append(report)
    return reports


NAME_NOT_UTF8 = (
    "has a name that is not UTF-8 text, which the database cannot keep: rename it to import it"
)


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
    return supersede_unrepaired(store, report.sha256, report.source_id)


def supersede_unrepaired(store: Store, sha256: str, kept: int | None = None) -> list[int]:
    """Remove the sources of these bytes (but `kept`) that own no record and rejected lines:
    a source of the same bytes read with --repair (an import, or a merged one) replaces
    them. Returns their ids."""
    stale = [
        s.id
        for s in store.sources()
        if s.sha256 == sha256 and s.id != kept and s.records == 0 and s.rejected > 0
    ]
    if kept is not None and stale:  # the --label given to the import it replaces stays
        store.keep_label(kept, stale)
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
    given: set[str],
) -> FileReport | None:
    """Open one log and import it; a MetaSchedule workload file is read as its records file
    (None when that is `given` too: read as itself), a records file without its workload file
    is one report."""
    from tunelog.inputs import LogInput, OpenedLog

    scanner = None
    database = _metaschedule_files(source)
    if database is not None:
        records, workloads = database
        if records != Path(source.path):
            if os.path.realpath(records) in given:
                return None
            source = LogInput(str(records))
        if workloads is None:
            return _orphan_records_report(source.path)
        scanner = _metaschedule_scanner(records, workloads)
    with OpenedLog(source) as opened:
        report = store.import_log(
            opened,
            label=label,
            strict=strict,
            repair=repair,
            progress=progress,
            scanner=scanner,
            follow=follow,
        )
    report.metaschedule = scanner is not None
    if scanner is not None:
        report.workload_problems = scanner.unreadable_workloads()
    if scanner is not None and not (
        report.skipped_lines or report.already_imported_as or report.rolled_back
    ):  # read whole: every record it holds was scanned
        report.workloads_without_records = scanner.unrecorded()
        report.unrecorded_workloads = scanner.unrecorded_names()
    return report


def _metaschedule_files(source: LogInput) -> tuple[Path, Path | None] | None:
    """(records file, workload file or None) when SOURCE is part of a MetaSchedule database."""
    from tunelog.msfiles import metaschedule_files

    return None if source.is_stdin else metaschedule_files(Path(source.path))


def _metaschedule_scanner(records: Path, workloads: Path) -> RecordScanner:
    """The line scanner of a MetaSchedule records file whose workload file is WORKLOADS."""
    from tunelog import metaschedule

    return metaschedule.record_scanner(metaschedule.read_workloads(workloads))


def _orphan_records_report(path: str) -> FileReport:
    """One message for a records file without its workload file: no line can be read."""
    from tunelog.importreport import FileReport, RejectedLine
    from tunelog.msfiles import workload_file_named_for

    with open(path, "rb") as file:
        lines = sum(1 for _ in file)
    reason = (
        f"MetaSchedule records without their workload file: none of the {lines} line(s) can "
        f"be read (TVM cannot load them either); put the database's workload file "
        f"({workload_file_named_for(os.path.basename(path))}) beside it and import again"
    )
    return FileReport(path, lines=lines, rejected=lines, rejects=[RejectedLine(0, reason)])


def _database_files(store: Store) -> set[str]:
    base = os.path.realpath(store.path)
    return {base + suffix for suffix in ("", *SIDE_SUFFIXES, "-journal")}


def _size(path: str) -> int | None:
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def find_logs(
    paths: Sequence[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Discovery:
    """What `import_paths` reads for `paths`, and what it skips in directories (and why)."""
    from tunelog import optionvalues
    from tunelog.discovery import discover

    return discover(
        optionvalues.path_list(paths, "paths"),
        include=optionvalues.patterns(include, "include"),
        exclude=optionvalues.patterns(exclude, "exclude"),
    )
