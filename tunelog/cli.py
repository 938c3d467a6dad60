"""The `tunelog` command: a thin typer layer that formats what the library returns.

stdout carries only tables or JSON (safe for pipes); progress, warnings and errors go to stderr.
A user's mistake ends in one `Error: ...` line and exit code 1 (usage errors: 2).
"""

from __future__ import annotations

import copy
import functools
import io
import os
import re
import shutil
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, Protocol, TypeVar

import typer
from typer import _click as click  # typer < 0.29 vendors click: its classes, not click's
from typer.core import TyperArgument, TyperGroup, TyperOption
from typer.models import CommandInfo

from tunelog import optionvalues
from tunelog.exceptions import NothingMatchesError, TunelogError
from tunelog.filters import Filters
from tunelog.tables import Column

if TYPE_CHECKING:
    from tunelog import api
    from tunelog.convergence import Convergence
    from tunelog.diagnosis import Diagnosis
    from tunelog.diffing import LayerDiff
    from tunelog.inputs import LogInput
    from tunelog.layers import Layer, TemplateResult
    from tunelog.models import BestRow, FileReport, SourceImport
    from tunelog.network import GraphLog
    from tunelog.results import CurveRow
    from tunelog.store import Store

# Start-up is most of a small command's time, so each command imports what it needs when it
# runs (`from tunelog import api` inside): `--help` and a usage error load no more than typer.

DEFAULT_DB = "tunelog.db"
REJECTS_SHOWN = 20

# -- how every command behaves: global options anywhere, plain help, quiet broken pipes --------

# Options of the whole program that users also type after the command (`best --db x.db`):
# moved in front of it before parsing, so every command accepts them, present and future.
GLOBAL_OPTIONS = {"--db": True, "--wide": False}  # name -> takes a value

EXIT_CODES = """\b
Exit codes: 0 done, also when a listing is empty (a note on stderr says so);
1 an error (one "Error:" line on stderr), nothing to export, a --strict roll-back,
or untuned layers under `untuned --check`; 2 a usage error.
Trials: every measurement (valid or failed) of a template's workload on targets with
the same keys and -model as the row's target."""


def hoist_global_options(args: Sequence[str]) -> list[str]:
    """`args` with the GLOBAL_OPTIONS given after the command moved in front of it."""
    args = list(args)
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        i += 2 if GLOBAL_OPTIONS.get(args[i]) else 1
    front, rest, moved = args[:i], args[i:], []
    kept: list[str] = []
    j = 0
    while j < len(rest):
        arg = rest[j]
        if arg == "--":
            kept += rest[j:]
            break
        name = arg.split("=", 1)[0]
        if j > 0 and name in GLOBAL_OPTIONS:
            takes_value = GLOBAL_OPTIONS[name] and "=" not in arg
            moved += rest[j : j + 1 + takes_value]
            j += 1 + takes_value
            continue
        kept.append(arg)
        j += 1
    return front + moved + kept


class _PlainArgument(TyperArgument):
    """An argument shown as `PATH...` / `[SOURCE]` in help, not `{paths}...`."""

    def make_metavar(self, ctx: click.Context, *, usage: bool = False) -> str:
        var = self.metavar or (self.name or "").upper()
        if self.nargs != 1:
            var += "..."
        return f"[{var}]" if usage and not self.required else var


def plain_help(command: click.Command) -> None:
    """Plain metavars (`--top-k TOP_K`, not `<int range>`) and flags without `--no-` twins."""
    for param in command.params:
        if isinstance(param, TyperArgument):
            param.__class__ = _PlainArgument
        elif isinstance(param, TyperOption):
            if param.is_flag:
                param.secondary_opts = []
                param.show_default = False
            elif param.metavar is None:
                param.metavar = (param.name or "value").upper()
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            plain_help(sub)


def _silence_stdout() -> None:
    """The reader left (`| head`): send what is still buffered nowhere, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file (tests capture stdout): nothing is flushed to a closed pipe


class TunelogGroup(TyperGroup):
    """The `tunelog` command group: what every command gets without asking."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_help(self)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(args))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # inside the guard: a closed pipe shows up at the last flush
            return result
        except BrokenPipeError:
            # `tunelog stats | head`: the reader has what it wanted; that is success.
            _silence_stdout()
            raise typer.Exit(0) from None


def example(*commands: str) -> str:
    """A command's help epilog: its example(s), kept on their own lines."""
    return "\b\nExample:\n" + "\n".join(f"  {c}" for c in commands)


app = typer.Typer(
    name="tunelog",
    cls=TunelogGroup,
    help="Import, query and clean Apache TVM AutoTVM tuning logs (no TVM needed).",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click messages: usage errors stay a few grep-able lines
    context_settings={"help_option_names": ["-h", "--help"]},
)

P = ParamSpec("P")
R = TypeVar("R")


class _State:
    db_path: str = DEFAULT_DB
    wide: bool = False


state = _State()


# Control characters (C0, DEL, C1): a log's task name holding ESC ]0;... BEL or ESC [2J would
# set the terminal's title or clear it. Shown as escapes instead, in every table and line.
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown(text: str, *, keep_newlines: bool = False) -> str:
    """Text for the terminal: control characters escaped (`\\x1b`, `\\n`), log text included.

    `keep_newlines`: the line breaks of multi-line output stay (table cells escape them).
    """
    if text.isprintable() or (keep_newlines and text.replace("\n", "").isprintable()):
        return text  # the usual text: nothing to escape (also true of most non-ASCII)
    return "".join(
        char
        if char.isprintable() or (keep_newlines and char == "\n") or not _is_control(char)
        else _ESCAPES.get(char) or f"\\x{ord(char):02x}"
        for char in text
    )


def _is_control(char: str) -> bool:
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F


def echo(text: str = "") -> None:
    """One line (or several) on stdout, control characters escaped."""
    typer.echo(shown(text, keep_newlines=True))


def _err(message: str) -> None:
    sys.stderr.write(shown(message, keep_newlines=True) + "\n")
    sys.stderr.flush()


def checked(check: Callable[[Any], object]) -> Callable[[Any], Any]:
    """A typer callback running one of `tunelog.optionvalues`' checks on an option's value:
    a value it refuses is a usage error (exit 2) saying what is allowed."""

    def callback(value: Any) -> Any:
        if value is not None:
            from tunelog.exceptions import InvalidValueError

            try:
                check(value)
            except InvalidValueError as exc:
                raise typer.BadParameter(str(exc)) from None
        return value

    return callback


def handles_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn domain errors into one `Error:` line and exit 1, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            raise  # not an error: TunelogGroup.invoke ends quietly
        except TunelogError as exc:
            _err(f"Error: {exc}")
            raise typer.Exit(1) from None
        except sqlite3.Error as exc:
            _err(f"Error: database {state.db_path}: {exc}; check the disk and the file")
            raise typer.Exit(1) from None
        except OSError as exc:
            _err(f"Error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            _err("Interrupted: the file being imported was rolled back; finished files are kept")
            raise typer.Exit(130) from None

    return wrapper


@contextmanager
def opened_store(*, create: bool = False) -> Iterator[Store]:
    """The database named by --db, TUNELOG_DB or ./tunelog.db.

    Only commands that add data pass `create`: a read command on a missing file says so
    instead of answering from a new, empty database.
    """
    from tunelog.store import Store

    store = Store(state.db_path, create=create)
    try:
        yield store
    finally:
        store.close()


# DEL and the C1 controls: JSON escapes the C0 ones only, orjson writes these raw.
_RAW_IN_JSON = re.compile("[\x7f-\x9f]")


def emit_json(value: Any) -> None:
    """Pretty JSON on stdout, every control character as an escape (`\\u009b`)."""
    text = _json_text(value, indent=True)
    if "\x7f" in text or not text.isascii():
        text = _RAW_IN_JSON.sub(lambda match: f"\\u{ord(match[0]):04x}", text)
    sys.stdout.write(text + "\n")


def emit_json_items(items: Iterable[Any]) -> None:
    """`emit_json` of a list, written element by element: the list is never held whole.

    The same bytes as `emit_json(list(items))`, except that an element orjson cannot write
    (an integer past 64 bits) is written by Python's json alone, not the whole list."""
    write = sys.stdout.write
    first = True
    for item in items:
        text = _json_text(item, indent=True)
        if "\x7f" in text or not text.isascii():
            text = _RAW_IN_JSON.sub(lambda match: f"\\u{ord(match[0]):04x}", text)
        write(("[\n  " if first else ",\n  ") + text.replace("\n", "\n  "))
        first = False
    write("[]\n" if first else "\n]\n")


def _json_text(value: Any, *, indent: bool = False) -> str:
    """JSON of command output: orjson, or Python's json for integers orjson cannot write."""
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else None).decode()
    except orjson.JSONEncodeError:
        # Task arguments and knob values may hold integers past 64 bits (TVM's loader reads
        # them), and FLOPs of such shapes grow past them; orjson refuses both.
        import json

        return json.dumps(
            _as_plain_json(value), indent=2 if indent else None, ensure_ascii=False, allow_nan=False
        )


def _as_plain_json(value: Any) -> Any:
    """What orjson would write, as plain Python values: non-finite floats become null."""
    import dataclasses
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _as_plain_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_plain_json(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _as_plain_json(dataclasses.asdict(value))
    return value


def emit_table(
    rows: Sequence[Sequence[Any]],
    headers: Sequence[str | Column],
    *,
    empty: str | None = None,
) -> None:
    """A plain-text table on stdout, fitted to the terminal's width unless --wide or a pipe.

    `headers`: the table's columns, declared once (`tunelog.tables.Column`: which ones go
    first on a narrow terminal, which hold paths). No rows: nothing on stdout, and the `empty`
    note (if any) on stderr.
    """
    if not rows:
        if empty:
            _err(empty)
        return
    from tunelog.tables import columns_of, fit_table, simple_table, wrapped_table

    specs = columns_of(headers)
    cells = [["" if cell is None else shown(str(cell)) for cell in row] for row in rows]
    names = [shown(spec.name) for spec in specs]
    width = terminal_width()
    if width is not None:
        fitted = fit_table(
            cells, [replace(s, name=n) for s, n in zip(specs, names, strict=True)], width
        )
        cells, names = fitted.rows, fitted.headers
        if fitted.dropped:
            _err(
                f"note: {width} columns: not shown {', '.join(fitted.dropped)} "
                "(--wide or --json shows every column)"
            )
    if any("\n" in cell for row in cells for cell in row):  # wrapped by fit_table
        echo(wrapped_table(cells, names))
        return
    text = simple_table(cells, names)
    if text is None:  # characters whose width or treatment only tabulate knows
        from tabulate import tabulate

        text = tabulate(cells, headers=names, tablefmt="simple", disable_numparse=True)
    echo(text)


def terminal_width() -> int | None:
    """Columns to fit tables into: $COLUMNS, else the terminal's; None for --wide or a pipe."""
    if state.wide:
        return None
    columns = optionvalues.columns(os.environ.get("COLUMNS", ""))
    if columns is not None:
        return columns
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None  # a file or a pipe: whole lines for grep and friends


def _source_ref(ref: str) -> str:
    """`#id path` of a stored source, its path shown as `display_path` shows it."""
    number, _, path = ref.partition(" ")
    return f"{number} {display_path(path)}" if path else ref


def display_path(path: str) -> str:
    """A stored (absolute) path as users read it: relative below the working directory."""
    if path == "-" or not os.path.isabs(path):
        return path
    try:
        return _relative_below(path, os.getcwd())
    except (OSError, ValueError):
        return path


@functools.lru_cache(maxsize=1024)
def _relative_below(path: str, cwd: str) -> str:
    # Cached: `best` shows one of a few source paths on each of tens of thousands of rows.
    return os.path.relpath(path, cwd) if Path(path).is_relative_to(Path(cwd)) else path


def format_seconds(seconds: float) -> str:
    """A latency in readable units: `671.6 us`, `12.40 ms`, `1.20 s` (`failed` for 1e9)."""
    if seconds >= 1e8:
        return "failed"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")
]


def _print_version(value: bool) -> None:
    if value:
        from tunelog import __version__

        echo(f"tunelog {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            envvar="TUNELOG_DB",
            metavar="PATH",
            help="Database file (default: ./tunelog.db; env TUNELOG_DB); before or after the "
            "command. Only import creates it.",
            show_default=False,
        ),
    ] = None,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Print every column at full width (default on a terminal: lower-priority "
            "columns left out and long cells wrapped to fit its width; a pipe gets full width).",
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="Print the version."
        ),
    ] = False,
) -> None:
    """tunelog: AutoTVM tuning logs in an embedded SQLite database."""
    state.db_path = db or DEFAULT_DB
    state.wide = wide
    checked(optionvalues.columns)(os.environ.get("COLUMNS", ""))  # before any work is done


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
    label: Annotated[str | None, typer.Option(help="A label stored with each source.")] = None,
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
        version_warning = api.metaschedule_version_warning(store)
    # A path named on the command line that cannot be read is an error (exit 1), once the
    # other files are imported; an entry found in a directory is only reported.
    named = set(paths)
    missing = [r for r in reports if r.unreadable and r.path in named]
    shown_reports = reports if as_json else [r for r in reports if r not in missing]
    # A file named to import that holds no record at all is not a log: an error saying what
    # it looks like, instead of a hundred rejected lines.
    not_logs = [r for r in reports if r.path in named and _holds_no_record(r)]
    if shown_reports or not missing:
        _print_import(
            shown_reports, as_json, skipped=found.skipped_files, quiet={r.path for r in not_logs}
        )
    if version_warning:
        _err(f"warning: {version_warning}")
    for report in missing:
        _err(f"Error: {report.path} {report.unreadable}")
    for report in not_logs:
        _err(f"Error: {_not_a_log(report)}")
    if missing or not_logs:
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
    "prefix_changed",
    "unreadable",
    "superseded",
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
_SOURCES_COLUMNS = (
    Column("id"),
    Column("path", path=True),
    Column("label", rank=1),
    Column("lines", rank=2),
    Column("records"),
    Column("dup", rank=2),
    Column("rejected"),
    Column("sha256", rank=4),
    Column("imported", rank=3),
    Column("imports", rank=3),
    Column("merged from", rank=2),
)


def _holds_no_record(report: FileReport) -> bool:
    """A file read in full where every line that is not blank or a comment was rejected."""
    return (
        not report.unreadable
        and not report.already_imported_as
        and report.rejected > 0
        and report.new + report.duplicates == 0
    )


def _not_a_log(report: FileReport) -> str:
    """Why a file named to import is no log: what it looks like, and what to do."""
    from tunelog.discovery import looks_like

    path = display_path(report.path)
    repairable = [r.reason for r in report.rejects if "--repair" in r.reason]
    if repairable:  # records pasted from a web page: a log once repaired
        return f"{path} holds no tuning record as it is: {repairable[0]}"
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
        from tunelog.importreport import WHOLE_FILE

        if [r.line for r in shown] == [WHOLE_FILE]:  # one reason for every line of the file
            _err(f"{report.path}: {shown[0].reason}")
            continue
        for reject in shown:
            _err(f"{report.path}:{reject.line}: {reject.reason}")
        if report.rejected > len(shown):
            _err(f"{report.path}: ... and {report.rejected - len(shown)} more rejected line(s)")


def _import_note(report: FileReport) -> str:
    notes = []
    if report.unreadable:
        notes.append(f"skipped: {report.unreadable}")
    if report.rolled_back:
        notes.append(f"rolled back (--strict): {report.discarded} new record(s) not stored")
    if report.already_imported_as:
        number, _, path = report.already_imported_as.partition(" ")
        if display_path(path) == display_path(report.path):  # the row shows the path already
            notes.append(f"already imported as {number}")
        else:
            notes.append(f"already imported as {_source_ref(report.already_imported_as)}")
    if report.repaired:
        notes.append(f"repaired {report.repaired} record(s)")
    if report.superseded:
        earlier = ", ".join(f"#{i}" for i in report.superseded)
        notes.append(f"replaces {earlier} (the same bytes, rejected without --repair)")
    if report.skipped_lines and not report.already_imported_as:
        notes.append(f"grown: {report.skipped_lines} earlier line(s) skipped as already imported")
    if report.prefix_changed:
        notes.append("changed since its last import: read in full")
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


# -- listings ---------------------------------------------------------------------------------


sources_app = typer.Typer(
    help="List imported files with their line accounting; `sources remove` deletes one.",
    invoke_without_command=True,
    rich_markup_mode=None,
)
app.add_typer(sources_app, name="sources")


@sources_app.callback(epilog=example("tunelog sources --json"))
@handles_errors
def sources(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """List imported files with their line accounting (a copy at another path is one more).

    `imports`: how many times the file was imported, and the last time. `--json` also gives
    `held` (record lines the file held) and `shared` (those another source holds too).
    `tunelog sources remove ID|LABEL|PATH` deletes one.
    """
    if ctx.invoked_subcommand is not None:
        return
    with opened_store() as store:
        rows = store.sources()
    if as_json:
        emit_json([s.model_dump() for s in rows])
        return
    emit_table(
        [
            (
                s.id,
                display_path(s.path),
                s.label or "",
                s.lines,
                s.records,
                s.duplicates,
                s.rejected,
                s.sha256[:12],
                s.imported_at,
                _imports_text(s.imports),
                s.merged_from or "",
            )
            for s in rows
        ],
        _SOURCES_COLUMNS,
        empty="no source imported yet (tunelog import LOGS)",
    )


def _imports_text(imports: Sequence[SourceImport]) -> str:
    if len(imports) <= 1:
        return str(len(imports))
    return f"{len(imports)}, last {imports[-1].imported_at}"


@app.command(epilog=example("tunelog stats | head"))
@handles_errors
def stats(as_json: JsonOption = False) -> None:
    """Records by target, template and error number; valid vs failed."""
    with opened_store() as store:
        result = store.stats()
    from tunelog.errorcodes import error_name

    by_error = [
        {**row, "error_name": error_name(int(str(row["error_no"])))} for row in result.by_error
    ]
    if as_json:
        emit_json({**result.model_dump(), "by_error": by_error})
        return
    echo(
        f"records: {result.records}  valid: {result.valid}  failed: {result.failed}  "
        f"sources: {result.sources}  targets: {result.targets}  workloads: {result.workloads}"
    )
    by_template = [
        {**row, "template": _template_text(str(row["template"]), row["template_key"])}
        for row in result.by_template
    ]
    for title, rows, headers in (
        ("by target", result.by_target, ("target", "records", "valid", "failed")),
        ("by template", by_template, ("template", "records", "valid", "failed")),
        ("by error", by_error, ("error_no", "error_name", "records")),
    ):
        if rows:
            echo(f"\n{title}:")
            emit_table([[row[h] for h in headers] for row in rows], headers)


def _template_text(task_name: str, template_key: object) -> str:
    """A template as `best` shows it: v0.1 task names with their template key (`[direct]`)."""
    return task_name + (f" [{template_key}]" if template_key else "")


# What each filter means is defined once, in tunelog.filters.
FilterTargetKey = Annotated[
    str | None,
    typer.Option("--target-key", help="Only records whose target has this key (e.g. cuda)."),
]
FilterModel = Annotated[
    str | None, typer.Option(help="Only records whose target has this -model value.")
]
FilterTemplate = Annotated[
    str | None, typer.Option(help="Only this template (task name), e.g. conv2d_nchw.cuda.")
]
FilterTask = Annotated[
    str | None, typer.Option(help="Only templates whose name contains this text.")
]
FilterForTarget = Annotated[
    str | None,
    typer.Option(
        "--for-target",
        metavar="TARGET",
        help="Answer as apply_history_best does when compiling for this target string "
        '(e.g. "cuda -model=titanx"; the model need not be in the log).',
        callback=checked(optionvalues.target_string),
    ),
]


@app.command(epilog=example("tunelog best --target-key cuda --knobs"))
@handles_errors
def best(
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    source: FilterSource = None,
    label: FilterLabel = None,
    target: FilterTarget = None,
    knobs: Annotated[bool, typer.Option(help="Show the winning knob values.")] = False,
    as_json: JsonOption = False,
) -> None:
    """The config apply_history_best picks for each slot (target key or model, workload).

    `trials`: every measurement (valid or failed) of the row's workload on targets with the
    same keys and -model as its target; `source`: the file and line of the winning record.
    """
    filters = Filters(
        target_key, model, template, task, for_target, source=source, label=label, target=target
    )
    from tunelog.versions import ANSOR_VERSION

    with opened_store() as store:
        rows = store.best(filters, knobs=knobs)
        if any(row.log_version == ANSOR_VERSION for row in rows):  # api.best, loaded if needed
            from tunelog import api

            api.ansor_args_as_written(store, rows)
    if as_json:
        emit_json_items(row.model_dump() for row in rows)
        return
    emit_table(
        [_best_row(row, knobs) for row in rows],
        _best_headers(knobs),
        empty=f"no valid measurement matches {filters.describe()}; {_SEE_WHAT_THERE_IS}"
        if filters.describe()
        else f"no valid measurement in the database; {_SEE_WHAT_THERE_IS}",
    )
    _warn_all(
        [f"{','.join(row.slots)} {row.task_name}: {w}" for row in rows for w in row.warnings],
        listed_by="tunelog best --json",
    )


def _best_headers(knobs: bool) -> list[Column]:
    headers = [
        Column("target", rank=3),  # long; `slots` says what it answers for
        Column("slots", rank=1),
        Column("template"),
        Column("args"),
        Column("config"),  # the answer: which config apply_history_best picks
        Column("latency"),
        Column("trials", rank=2),
        Column("source", rank=2, path=True),
    ]
    return [*headers, Column("knobs")] if knobs else headers


def _best_row(row: BestRow, knobs: bool) -> list[Any]:
    from tunelog.workloads import short_args

    template = _template_text(row.task_name, row.template_key)
    cells: list[Any] = [
        row.target,
        ",".join(row.slots),
        template,
        short_args(row.task_name, row.args) if row.shapes is None else row.shapes,
        row.config_index,
        format_seconds(row.mean_cost),
        row.trials,
        f"{display_path(row.source)}:{row.line}",
    ]
    if knobs:
        cells.append(" ".join(f"{k}={_compact(v)}" for k, v in row.knobs or []))
    return cells


def _compact(value: object) -> str:
    return _json_text(value).replace('"', "")


# -- export -----------------------------------------------------------------------------------


@app.command(epilog=example("tunelog export --for-target 'cuda -model=t4' t4.log"))
@handles_errors
def export(
    out: Annotated[str, typer.Argument(help="Output log file, or - for stdout.")],
    top_k: Annotated[
        int,
        typer.Option(
            "--top-k", min=1, metavar="K", help="Keep the K best distinct configs per slot."
        ),
    ] = 1,
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    source: FilterSource = None,
    label: FilterLabel = None,
    target: FilterTarget = None,
    force: Annotated[bool, typer.Option(help="Replace OUT if it exists.")] = False,
    include_v01: Annotated[
        bool, typer.Option("--include-v01", help="Also write v0.1 records (old TVM only).")
    ] = False,
    fix_targets: Annotated[
        bool,
        typer.Option(help="Drop target options modern TVM rejects (-link-params) when writing."),
    ] = False,
    winners_only: Annotated[
        bool,
        typer.Option(help="Leave out templates that lose to another template of the same layer."),
    ] = False,
    log_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="autotvm or auto_scheduler: which records to write when the database has both.",
        ),
    ] = None,
    metaschedule: Annotated[
        bool,
        typer.Option(
            "--metaschedule",
            help="OUT is a directory: write a pruned MetaSchedule database there instead.",
        ),
    ] = False,
) -> None:
    """Write a cleaned log that apply_history_best loads and decides on as on the full logs.

    Exits 1 without writing when no record would be written. With --metaschedule, OUT is a
    directory for a pruned MetaSchedule database (as `tunelog export-metaschedule OUT`).
    """
    from tunelog import api

    filters = Filters(
        target_key, model, template, task, for_target, source=source, label=label, target=target
    )
    if metaschedule:
        if winners_only or log_format is not None or include_v01 or fix_targets:
            raise typer.BadParameter(
                "a MetaSchedule database has no templates, log formats or target strings to "
                "fix: drop --winners-only, --format, --include-v01 and --fix-targets",
                param_hint="--metaschedule",
            )
        _export_metaschedule(out, force, filters, top_k)
        return
    if log_format is not None and log_format not in api.LOG_FORMATS:
        raise typer.BadParameter(f"use one of {', '.join(api.LOG_FORMATS)}", param_hint="--format")

    with opened_store() as store:
        report = api.export(
            store,
            out,
            filters=filters,
            top_k=top_k,
            force=force,
            include_v01=include_v01,
            fix_targets=fix_targets,
            winners_only=winners_only,
            log_format=log_format,
        )
    for warning in report.warnings:
        _err(f"warning: {warning}")
    if out != "-":
        _err(f"wrote {report.written} record(s) to {out}")


# -- layers -----------------------------------------------------------------------------------


SortOption = Annotated[
    str | None,
    typer.Option(
        "--sort",
        metavar="KEY",
        help="latency (slowest first), gflops (least efficient first) or trials (fewest first).",
    ),
]


@app.command(
    epilog=example("tunelog workloads --sort latency --task conv2d", "tunelog workloads 1x512")
)
@handles_errors
def workloads(
    layer: Annotated[
        str | None,
        typer.Argument(
            metavar="[LAYER]",
            help="Only the layers this names: shapes as the table shows them, or a layer_key; "
            "a part of either is enough.",
        ),
    ] = None,
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    source: FilterSource = None,
    label: FilterLabel = None,
    target: FilterTarget = None,
    sort: SortOption = None,
    as_json: JsonOption = False,
) -> None:
    """One row per layer and target group: templates tried, the winner relay picks, GFLOPS.

    Trials (per template: all valid/failed): every measurement of the template's workload on
    the group's targets (same keys and -model), as `best` counts them.
    """
    from tunelog import api

    if sort is not None and sort not in api.SORT_KEYS:
        raise typer.BadParameter(f"use one of {', '.join(api.SORT_KEYS)}", param_hint="--sort")
    filters = Filters(
        target_key, model, template, task, for_target, source=source, label=label, target=target
    )
    with opened_store() as full, full.selected(filters) as (store, filters):
        found = api.layers(store, filters, sort=sort)
        if layer is not None:
            found = api.layers_named(found, layer)
        convergence = api.layer_convergence(store, found)
    if as_json:
        emit_json_items(api.layer_as_dict(layer, convergence) for layer in found)
        return
    emit_table(
        [[*_layer_row(layer), *_convergence_cells(convergence.of_layer(layer))] for layer in found],
        _LAYER_COLUMNS,
        empty=_nothing_matches(filters, named=layer),
    )
    _warn_layers(found, listed_by="tunelog workloads --json")


_LAYER_HEADERS = (
    Column("target"),
    Column("operator"),
    Column("shapes"),
    Column("templates (trials valid/failed: best)", rank=3),
    Column("winner"),
    Column("config", rank=2),
    Column("margin", rank=2),
    Column("GFLOPS", rank=1),
)
_LAYER_COLUMNS = (*_LAYER_HEADERS, Column("to best", rank=2), Column("verdict", rank=1))


def _layer_row(layer: Layer) -> list[Any]:
    tried = "; ".join(
        f"{t.name} ({t.trials} {t.valid}/{t.failed}: "
        f"{format_seconds(t.chosen.mean_cost) if t.chosen else _no_answer(t)})"
        for t in layer.templates
    )
    winner = layer.winner
    margin = layer.margin
    gflops = layer.gflops
    return [
        layer.group.label,
        layer.family,
        layer.shapes,
        tried,
        _winner_text(layer),
        winner.chosen.config_index if winner and winner.chosen else "",
        f"+{margin * 100:.0f}%" if margin is not None else "",
        f"{gflops:.1f}" if gflops is not None else "unknown" if winner else "",
    ]


def _winner_text(layer: Layer) -> str:
    """The winning template as `workloads` shows it: an auto_scheduler task is named by its
    hash, already the operator column's, so only what follows it (`(auto_scheduler)`)."""
    if layer.winner is None:
        return "(untuned)"
    name = layer.winner.name
    rest = name.removeprefix(layer.family + " ")
    return rest if rest.startswith("(") else name


@app.command(epilog=example("tunelog untuned --check --for-target 'cuda -model=t4'"))
@handles_errors
def untuned(
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    source: FilterSource = None,
    label: FilterLabel = None,
    target: FilterTarget = None,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when a layer is untuned (for scripts, CI).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Layers with no usable valid record (fallback config), or answered only by another machine."""
    from tunelog import api

    filters = Filters(
        target_key, model, template, task, for_target, source=source, label=label, target=target
    )
    with opened_store() as store:
        report = api.untuned_report(store, filters)
    found = report.layers
    if not report.matched:  # "every layer is tuned" would be true of no layer at all
        if check:
            raise NothingMatchesError(_nothing_matches(filters, then=": nothing to check"))
        if as_json:
            emit_json([])
        _err(_nothing_matches(filters))
        return
    if as_json:
        emit_json_items(api.layer_as_dict(layer) for layer in found)
        if check and found:
            raise typer.Exit(1)
        return
    emit_table(
        [
            (
                layer.group.label,
                layer.family,
                layer.shapes,
                ", ".join(t.name for t in layer.templates),
                layer.trials,
                _errors_text({n: c for t in layer.templates for n, c in t.errors.items()}),
                _answered_elsewhere(layer),
            )
            for layer in found
        ],
        (
            Column("target"),
            Column("operator"),
            Column("shapes"),
            Column("templates", rank=2),
            Column("trials", rank=3),
            Column("errors", rank=1),
            Column("answered by", rank=1),
        ),
        empty="every layer has at least one valid measurement",
    )
    _warn_layers(found, listed_by="tunelog untuned --json")
    if check and found:
        _err(f"{len(found)} layer(s) will run an untuned fallback config (--check)")
        raise typer.Exit(1)


_SEE_WHAT_THERE_IS = "see `tunelog workloads` and `tunelog stats` for what there is"


def _nothing_matches(filters: Filters, *, then: str = "", named: str | None = None) -> str:
    """What to say when no layer matches the filters (a note, or an error under --check)."""
    given = " ".join(
        text for text in (repr(named) if named is not None else "", filters.describe()) if text
    )
    what = f"no layer matches {given}" if given else "the database has no layer"
    return f"{what}{then}; {_SEE_WHAT_THERE_IS}"


def _errors_text(counts: dict[int, int]) -> str:
    from tunelog.errorcodes import error_name

    failed = sorted(((c, n) for n, c in counts.items() if n != 0), reverse=True)
    return ", ".join(f"{error_name(n)} x{c}" for c, n in failed)


@app.command(epilog=example("tunelog diagnose build_output.txt --check"))
@handles_errors
def diagnose(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE|-",
            help="TVM's console output (or a task list, JSON); - or nothing for stdin.",
        ),
    ] = "-",
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            "--for-target",
            metavar="TARGET",
            help="The target a task list is compiled for (console output names its own).",
            callback=checked(optionvalues.target_string),
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option("--check", help="Exit 1 when a workload is not answered (for scripts, CI)."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Why each operator TVM reported untuned is not answered by the database.

    Reads relay's "Cannot find tuning records for" (DEBUG) and the fallback context's "Cannot
    find config for" messages, or a task list; one reason per (target, workload): no_record
    (with the nearest tuned layers), other_target, all_failed, v01_only, not_offered, packed (the
    NCHW[x]c form of another layer) or answered (the build read another file).
    """
    from tunelog import api

    text = sys.stdin.read() if file == "-" else Path(file).read_text(errors="replace")
    with opened_store() as store:
        report = api.diagnose_untuned(store, text, target=target, show_path=display_path)
    for unread in report.unread[:WARNINGS_SHOWN]:
        _err(f"warning: {display_path(file)}:{unread.line}: message not read: {unread.reason}")
    if as_json:
        emit_json([d.as_dict() for d in report.diagnoses])
    else:
        _print_diagnoses(report.diagnoses)
    if check and report.unanswered:
        raise typer.Exit(1)


def _print_diagnoses(found: Sequence[Diagnosis]) -> None:
    from tunelog.diagnosis import verdict
    from tunelog.layoutforms import workload_text

    several = len({d.target for d in found}) > 1
    rows = []
    for d in found:
        row = [d.line or "", d.target] if several else [d.line or ""]
        rows.append([*row, d.reason, workload_text(d.workload), d.detail])
    headers = ["line", "target"] if several else ["line"]
    emit_table(
        rows,
        [*headers, "reason", "workload", "detail"],
        empty="no 'Cannot find tuning records' or 'Cannot find config' message found",
    )
    if found:
        echo(f"\n{verdict(found)}")


@app.command(epilog=example("tunelog tasks tasks.json --target 'llvm -mcpu=core-avx2'"))
@handles_errors
def tasks(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE|-", help="A task list: JSON [[task_name, *args], ...]; - for stdin."
        ),
    ],
    target: Annotated[
        str,
        typer.Option(
            "--target",
            "--for-target",
            metavar="TARGET",
            help="The target the tasks are tuned for (its keys and -model pick the records).",
            callback=checked(optionvalues.target_string),
        ),
    ],
    need_trials: Annotated[
        int | None,
        typer.Option(
            "--need-trials",
            min=1,
            metavar="N",
            help="Only the tasks with fewer than N valid trials (what is left to tune).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Trials already done per task of a task list, and each task's convergence (resume tuning)."""
    from tunelog import api
    from tunelog.layoutforms import workload_text

    text = sys.stdin.read() if file == "-" else Path(file).read_text(errors="replace")
    with opened_store() as store:
        found = api.tuning_progress(store, text, target, need_trials=need_trials)
    if as_json:
        emit_json([task.as_dict() for task in found])
        return
    emit_table(
        [
            (
                task.index,
                workload_text(task.workload),
                task.convergence.trials,
                task.convergence.valid,
                task.failed,
                format_seconds(task.convergence.best_cost)
                if task.convergence.best_cost is not None
                else "",
                task.convergence.verdict,
            )
            for task in found
        ],
        (
            Column("index"),
            Column("task"),
            Column("trials", rank=1),
            Column("valid"),
            Column("failed", rank=2),
            Column("best"),
            Column("verdict"),
        ),
        empty="every task has enough valid trials"
        if need_trials is not None
        else "the task list is empty",
    )


@app.command(epilog=example("tunelog network resnet_50.graph.log", "tunelog network"))
@handles_errors
def network(
    graph_log: Annotated[
        str | None,
        typer.Argument(
            metavar="[GRAPH_LOG]",
            help="A graph tuner's output log; without it, totals of the database's winners.",
        ),
    ] = None,
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    for_target: FilterForTarget = None,
    as_json: JsonOption = False,
) -> None:
    """Network totals: per layer its latency, occurrences and share; graph-tuner layouts.

    With GRAPH_LOG (a graph tuner's output: one record per conv layer occurrence), the
    occurrences, the config and layouts it chose; with the kernel log of the same layers
    imported (--db), each layer's best single-op latency and best per data layout beside it.
    Without it, per target group the total of the winners' latencies, each layer counted once
    (a kernel log cannot count occurrences). Layout transforms are in no log: conv time only.
    """
    if graph_log is None:
        _network_totals(Filters(target_key, model, for_target=for_target), as_json)
        return
    from tunelog import api

    store = None
    if Path(state.db_path).exists():
        from tunelog.store import Store

        store = Store(state.db_path, create=False)
    try:
        graph = api.network(graph_log, store)
    finally:
        if store is not None:
            store.close()
    if graph.doubts:
        _err(
            f"warning: {display_path(graph_log)} does not look like a graph tuner's output (it "
            f"holds {'; '.join(graph.doubts)}): every record is counted as a layer occurrence"
        )
    for number, reason in graph.rejected[:WARNINGS_SHOWN]:
        _err(f"warning: {display_path(graph_log)}:{number}: {reason}")
    if as_json:
        emit_json(_network_json(graph))
        return
    _print_network(graph)


_ONCE_NOTE = (
    "each layer counted once: a kernel log cannot count occurrences "
    "(a graph-tuner output can: tunelog network GRAPH_LOG)"
)


def _network_totals(filters: Filters, as_json: bool) -> None:
    from tunelog import api

    with opened_store() as store:
        totals = api.network_totals(store, filters)
    if as_json:
        emit_json(
            [
                {
                    "target_keys": list(t.group.keys),
                    "model": t.group.model,
                    "total": t.total,
                    "untuned": t.untuned,
                    "occurrences_known": False,
                    "layers": [
                        {
                            "operator": s.layer.family,
                            "shapes": s.layer.shapes,
                            "layer_key": s.layer.key,
                            "latency": s.latency,
                            "share": s.share,
                        }
                        for s in t.layers
                    ],
                }
                for t in totals
            ]
        )
        return
    emit_table(
        [
            (
                t.group.label,
                s.layer.family,
                s.layer.shapes,
                format_seconds(s.latency),
                f"{100 * s.share:.1f} %",
            )
            for t in totals
            for s in t.layers
        ],
        ("target", "operator", "shapes", "latency", "share"),
        empty="no tuned layer matches (see `tunelog workloads`)",
    )
    for t in totals:
        untuned = f", {t.untuned} untuned layer(s) not counted" if t.untuned else ""
        echo(
            f"{t.group.label}: total {format_seconds(t.total)} over {len(t.layers)} "
            f"layer(s){untuned}; {_ONCE_NOTE}"
        )


def _network_json(graph: GraphLog) -> dict[str, object]:
    return {
        "occurrences": graph.occurrences,
        "doubts": graph.doubts,
        "total": graph.total,
        "kernel_total": graph.kernel_total,
        "layers": [
            {
                "line": layer.first_line,
                "target": layer.target,
                "template": layer.task_name,
                "args": layer.args,
                "occurrences": layer.occurrences,
                "config": layer.config_index,
                "layouts": layer.layouts,
                "latency": layer.latency,
                "total": layer.total,
                "share": graph.share(layer),
                "kernel_best": layer.kernel_best,
                "best_per_layout": layer.best_per_layout,
            }
            for layer in graph.layers
        ],
    }


_NETWORK_HEADERS = (
    Column("line", rank=2),
    Column("layer"),
    Column("x"),
    Column("config", rank=2),
    Column("layout", rank=1),
    Column("latency"),
    Column("share"),
    Column("kernel best", rank=1),
    Column("best per layout", rank=3),
)


def _layout_text(layouts: dict[str, str]) -> str:
    """`NCHW16c -> NCHW32c`: the data layout in, the output layout out."""
    return " -> ".join(layouts[k] for k in ("layout:data", "layout:out") if k in layouts)


def _per_layout_text(best: dict[str, float]) -> str:
    """Fastest first: `NCHW16c 40.1 us, NCHW8c 42.0 us`."""
    ranked = sorted(best.items(), key=lambda item: item[1])
    return ", ".join(f"{layout} {format_seconds(cost)}" for layout, cost in ranked)


def _print_network(graph: GraphLog) -> None:
    from tunelog.workloads import short_args

    emit_table(
        [
            (
                layer.first_line,
                short_args(layer.task_name, layer.args),
                layer.occurrences,
                layer.config_index,
                " -> ".join(
                    layer.layouts[k] for k in ("layout:data", "layout:out") if k in layer.layouts
                ),
                format_seconds(layer.latency),
                f"{100 * graph.share(layer):.1f} %",
                format_seconds(layer.kernel_best) if layer.kernel_best is not None else "",
                ", ".join(
                    f"{k} {format_seconds(v)}"
                    for k, v in sorted(layer.best_per_layout.items(), key=lambda kv: kv[1])
                ),
            )
            for layer in graph.layers
        ],
        _NETWORK_HEADERS,
        empty="no AutoTVM record in the graph log",
    )
    if not graph.layers:
        return
    lines = [
        f"\nnetwork conv time with the graph tuner's configs: {format_seconds(graph.total)} "
        f"({graph.occurrences} conv layer occurrences, {len(graph.layers)} distinct)"
    ]
    if graph.kernel_total is not None:
        lines.append(
            f"with each layer's fastest kernel: {format_seconds(graph.kernel_total)}; the "
            "difference pays for layout transforms between layers, which no log records"
        )
    else:
        lines.append(
            "import the kernel log of these layers (--db) to compare with each layer's fastest "
            "kernel; a kernel log alone cannot count occurrences"
        )
    echo("\n".join(lines))


@app.command(epilog=example("tunelog errors --target-key cuda"))
@handles_errors
def errors(
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    source: FilterSource = None,
    label: FilterLabel = None,
    target: FilterTarget = None,
    as_json: JsonOption = False,
) -> None:
    """Failed trials by layer and template, with error names and a diagnosis."""
    from tunelog import api

    filters = Filters(
        target_key, model, template, task, for_target, source=source, label=label, target=target
    )
    with opened_store() as store:
        found = api.errors(store, filters)
        matched = bool(found) or bool(api.layers(store, filters))
    if as_json:
        emit_json_items(api.error_as_dict(e) for e in found)
        return
    emit_table(
        [
            (
                e.layer.group.label,
                e.layer.shapes,
                e.template.name,
                f"{e.template.failed}/{e.template.trials}",
                ", ".join(f"{name} x{count}" for name, count in e.error_counts.items()),
                " ".join(e.diagnosis),
            )
            for e in found
        ],
        (
            Column("target", rank=2),
            Column("shapes"),
            Column("template"),
            Column("failed", rank=1),
            Column("errors", rank=1),
            Column("diagnosis"),
        ),
        empty="no failed trials" if matched else _nothing_matches(filters),
    )


@app.command(epilog=example("tunelog explain build_timeout", "tunelog explain all_cost"))
@handles_errors
def explain(
    code: Annotated[
        str,
        typer.Argument(
            metavar="WHAT",
            help="Error number (0-8) or name (build_timeout); a record field (cost, all_cost, "
            "error_no, timestamp... or `fields` for all); or a whole record line (JSON).",
        ),
    ],
    as_json: JsonOption = False,
) -> None:
    """What an AutoTVM error number means and what to change; what a record's fields mean."""
    from tunelog.recordfields import FIELDS, field_name

    if code.lstrip().startswith("{"):
        _explain_record(code, as_json)
        return
    field = "fields" if code.strip().lower() == "fields" else field_name(code)
    if field is not None:
        meanings = FIELDS if field == "fields" else {field: FIELDS[field]}
        if as_json:
            emit_json(meanings)
        else:
            echo("\n".join(f"{name}: {text}" for name, text in meanings.items()))
        return
    _explain_error(code, as_json)


def _explain_error(code: str, as_json: bool) -> None:
    from tunelog.errorcodes import lookup_error_code

    entry = lookup_error_code(code)
    if as_json:
        emit_json(
            {
                "number": entry.number,
                "name": entry.name,
                "meaning": entry.meaning,
                "causes": list(entry.causes),
                "remedies": list(entry.remedies),
            }
        )
        return
    lines = [f"{entry.number} {entry.name}: {entry.meaning}"]
    if entry.causes:
        lines += ["", "Common causes:", *(f"  - {c}" for c in entry.causes)]
    if entry.remedies:
        lines += ["", "What to change:", *(f"  - {r}" for r in entry.remedies)]
    echo("\n".join(lines))


def _explain_record(line: str, as_json: bool) -> None:
    from tunelog.exceptions import NotARecordError
    from tunelog.recordfields import explain_record
    from tunelog.recordmodels import TuningRecord
    from tunelog.records import parse_line

    parsed = parse_line(line.encode())
    if not isinstance(parsed, TuningRecord):
        reason = getattr(parsed, "reason", "not an AutoTVM record")
        raise NotARecordError(f"not an AutoTVM record: {reason}")
    fields = explain_record(parsed)
    if as_json:
        emit_json([f._asdict() for f in fields])
        return
    emit_table([list(f) for f in fields], ("field", "value", "meaning"))


# -- convergence ------------------------------------------------------------------------------


def _convergence_cells(summary: Convergence) -> list[str]:
    """`to best` (trial that reached the best / trials) and the verdict."""
    to_best = f"{summary.trials_to_best}/{summary.trials}" if summary.trials_to_best else ""
    return [to_best, summary.verdict]


LayerArgument = Annotated[
    str,
    typer.Argument(
        metavar="LAYER",
        help="The layer: its shapes as `tunelog workloads` shows them, or its layer_key "
        "(workloads --json); a unique part of either is enough.",
    ),
]


class _OfTemplate(Protocol):
    template: TemplateResult


_Entry = TypeVar("_Entry", bound=_OfTemplate)


def _layer_entries(
    layer: str, filters: Filters, fetch: Callable[[Store, Layer], Sequence[_Entry]]
) -> tuple[Layer, list[_Entry]]:
    """The layer LAYER names, and `fetch`'s entries for its templates (--template: that one)."""
    from tunelog import api

    with opened_store() as full, full.selected(filters) as (store, filters):
        found = api.find_layer(store, layer, filters)
        entries = [
            e
            for e in fetch(store, found)
            if filters.template is None or e.template.workload.task_name == filters.template
        ]
    return found, entries


def _layer_template_title(layer: Layer, template: TemplateResult) -> str:
    """`curve`'s and `knobs`' heading of one template of a layer."""
    from tunelog.versions import METASCHEDULE_TASK

    picked = "  (relay picks it)" if layer.winner is template else ""
    if template.workload.task_name == METASCHEDULE_TASK:
        picked = ""  # one MetaSchedule workload: no templates for relay to choose among
    return f"{layer.group.label}  {layer.shapes}  {template.name}{picked}"


@app.command(epilog=example("tunelog curve 1x512 --target-key cpu --json"))
@handles_errors
def curve(
    layer: LayerArgument,
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    source: FilterSource = None,
    label: FilterLabel = None,
    improvements: Annotated[
        bool,
        typer.Option(
            "--improvements",
            help="Only the trials that set a new best, with the gain over the previous best "
            "(--json keeps every trial).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Best-so-far latency after each trial of a layer, per template, with the verdict.

    With --source/--label: the chosen files' trials, in their own order."""
    from tunelog import api

    filters = Filters(target_key, model, template, task, source=source, label=label)
    found, series = _layer_entries(layer, filters, api.curves)
    if as_json:
        emit_json([api.curve_as_dict(c) for c in series])
        return
    for number, one in enumerate(series):
        if number:
            echo("")
        summary = one.summary
        echo(_layer_template_title(found, one.template))
        echo(
            f"{summary.trials} trials, {summary.valid} valid; "
            + (
                f"best {format_seconds(summary.best_cost)} at trial {summary.trials_to_best}, "
                f"{summary.since_last_improvement} trials since; "
                if summary.best_cost is not None
                else "no valid trial; "
            )
            + summary.verdict
        )
        if improvements:
            _print_improvements(one.rows)
            continue
        emit_table(
            [
                (
                    r.trial,
                    f"{display_path(r.source)}:{r.line}",
                    r.config_index,
                    format_seconds(r.cost) if r.cost is not None else f"error {r.error_no}",
                    format_seconds(r.best) if r.best is not None else "",
                    "*" if r.improved else "",
                )
                for r in one.rows
            ],
            (
                Column("trial"),
                Column("source", rank=2, path=True),
                Column("config", rank=1),
                Column("cost"),
                Column("best so far"),
                Column("new best"),
            ),
        )


def _print_improvements(rows: Sequence[CurveRow]) -> None:
    """`curve --improvements`: the trials that set a new best, each with its gain (the share of
    the previous best's latency it saved)."""
    table = []
    previous: float | None = None
    for r in rows:
        if not r.improved or r.best is None:
            continue
        # The latency saved over the previous best: "-57.7%" (the first valid trial has none).
        gain = "first valid" if previous is None else f"-{(previous - r.best) / previous:.1%}"
        table.append(
            (
                r.trial,
                f"{display_path(r.source)}:{r.line}",
                r.config_index,
                format_seconds(r.best),
                gain,
            )
        )
        previous = r.best
    emit_table(
        table,
        (
            Column("trial"),
            Column("source", rank=2, path=True),
            Column("config", rank=1),
            Column("new best"),
            Column("gain"),
        ),
        empty="no valid trial: no best to improve on",
    )


# -- knobs ------------------------------------------------------------------------------------


@app.command(epilog=example("tunelog knobs 1x512 --target-key cpu --knob tile_k"))
@handles_errors
def knobs(
    layer: LayerArgument,
    knob: Annotated[
        str | None,
        typer.Option("--knob", help="Only this knob (`layout`: the x86 NCHWc layouts)."),
    ] = None,
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    source: FilterSource = None,
    label: FilterLabel = None,
    as_json: JsonOption = False,
) -> None:
    """Per knob and value of a layer's templates: trials, valid/failed, best and median cost."""
    from tunelog import api

    filters = Filters(target_key, model, template, task, source=source, label=label)
    found, tables = _layer_entries(layer, filters, lambda store, lay: api.knobs(store, lay, knob))
    if knob is not None:
        for entry in tables:
            if not entry.values and entry.knob_names:  # a header alone would say nothing
                _err(
                    f"note: {entry.template.name} has no knob {knob!r}; its knobs: "
                    f"{', '.join(entry.knob_names)}"
                )
    if as_json:
        emit_json([api.knobs_as_dict(t) for t in tables])
        return
    for number, entry in enumerate(tables):
        if number:
            echo("")
        cov = entry.coverage
        splits = ", ".join(f"{name} {n}" for name, n in cov.sp_factorisations.items())
        echo(_layer_template_title(found, entry.template))
        echo(
            f"{cov.trials} trials, {cov.configs} distinct configs"
            + (f"; split factorisations: {splits}" if splits else "")
            + " (the full space size is not in the log)"
        )
        emit_table(
            [
                (
                    v.knob,
                    v.value,
                    v.trials,
                    f"{v.valid}/{v.trials - v.valid}",
                    format_seconds(v.best) if v.best is not None else "",
                    format_seconds(v.median) if v.median is not None else "",
                    "yes" if v.chosen else "",
                )
                for v in entry.values
            ],
            ("knob", "value", "trials", "valid/failed", "best", "median", "chosen"),
        )
        if entry.unreadable:
            _err(f"warning: {entry.unreadable} stored line(s) of this layer had no readable knobs")


# -- report -----------------------------------------------------------------------------------


@app.command(epilog=example("tunelog report --for-target 'cuda -model=t4' t4.html"))
@handles_errors
def report(
    out: Annotated[
        str, typer.Argument(metavar="OUT", help="The HTML file to write (- for stdout).")
    ],
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    source: FilterSource = None,
    label: FilterLabel = None,
    target: FilterTarget = None,
    force: Annotated[bool, typer.Option(help="Replace OUT if it exists.")] = False,
) -> None:
    """One self-contained HTML page: summary, layers, charts, failures (opens offline)."""
    from tunelog import api  # plotly is imported by api.write_report, only here

    filters = Filters(
        target_key, model, template, task, for_target, source=source, label=label, target=target
    )
    with opened_store() as store:
        written = api.write_report(store, out, filters, force=force)
    if out != "-":
        _err(
            f"wrote {out} ({written.bytes / 1e6:.1f} MB): {written.layers} layer(s), "
            f"{written.untuned} untuned, {written.failures} template(s) with failures"
        )


# -- rejects ----------------------------------------------------------------------------------


@app.command(epilog=example("tunelog rejects sample_logs/edge_cases.log"))
@handles_errors
def rejects(
    source: Annotated[
        str | None,
        typer.Argument(
            help="A source's id or path (default: every source).",
            show_default=False,
            callback=checked(optionvalues.source_id),
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Rejected lines kept from imports, as `path:line: reason` (the import's own words)."""
    from tunelog import api

    with opened_store() as store:
        found = api.rejects(store, source)
    if as_json:
        emit_json(
            [
                {"source_id": f.source.id, "path": f.source.path, **r.model_dump()}
                for f in found
                for r in f.rejects
            ]
        )
        return
    lines = [
        f"{display_path(f.source.path)}:{r.line}: {r.reason}" for f in found for r in f.rejects
    ]
    if lines:
        echo("\n".join(lines))
    else:
        _err("no rejected lines")


# -- metaschedule -------------------------------------------------------------------------------


@app.command("export-metaschedule", epilog=example("tunelog export-metaschedule pruned_db/"))
@handles_errors
def export_metaschedule(
    directory: Annotated[str, typer.Argument(help="Directory for the pruned database.")],
    force: Annotated[bool, typer.Option(help="Replace the database files if they exist.")] = False,
) -> None:
    """Write a pruned MetaSchedule database: the best valid record of each workload."""
    _export_metaschedule(directory, force, Filters(), 1)


def _export_metaschedule(directory: str, force: bool, filters: Filters, top_k: int) -> None:
    from tunelog import api

    with opened_store() as store:
        report = api.export_metaschedule(
            store, directory, force=force, filters=filters, top_k=top_k
        )
    for warning in report.warnings:
        _err(f"warning: {warning}")
    kept = (
        "their best record"
        if top_k == 1
        else f"up to {top_k} best records of each ({report.records} in all)"
    )
    _err(f"wrote {report.workloads} workload(s) and {kept} to {directory}")


# -- sources, machines and strategies ----------------------------------------------------------

FilterSource = Annotated[
    str | None,
    typer.Option(
        "--source",
        help="Only what this imported file held: its id or path (`tunelog sources`).",
        callback=checked(optionvalues.source_id),
    ),
]
FilterLabel = Annotated[
    str | None, typer.Option("--label", help="Only what the files imported with this --label held.")
]
FilterTarget = Annotated[
    str | None,
    typer.Option("--target", help="Only records whose target string is exactly this one."),
]


@sources_app.command("remove")
@handles_errors
def sources_remove(
    ref: Annotated[
        str,
        typer.Argument(
            help="The source's id, label or path.", callback=checked(optionvalues.source_id)
        ),
    ],
) -> None:
    """Remove a source as if it had never been imported (its records no other file held go)."""
    from tunelog import api

    with opened_store() as store:
        removed = api.remove_sources(store, ref)
    for source in removed:
        label = f" ({source.label})" if source.label else ""
        _err(f"removed #{source.id} {source.path}{label}: {source.records} record(s)")


WARNINGS_SHOWN = 10  # per command run; the rest are counted (all of them are in --json)


def _no_answer(template: TemplateResult) -> str:
    return "untuned" if template.offered else "not offered to this target"


def _answered_elsewhere(layer: Layer) -> str:
    """For `untuned`: the record from another machine that answers the layer, if any."""
    winner = layer.winner
    if winner is None or winner.chosen is None:
        return ""
    chosen = winner.chosen
    return f"{winner.name} measured on {chosen.target!r} ({Path(chosen.source).name}:{chosen.line})"


def _warn_layers(found: Sequence[Layer], *, listed_by: str) -> None:
    """Cross-machine warnings on stderr (stdout stays the table)."""
    notes = {lay.strategy_note for lay in found if lay.strategy_note is not None}
    for note in sorted(notes):
        _err(f"note: {note}")
    _warn_all(
        [
            f"{lay.group.label} {lay.family} {lay.shapes}: {w}"
            for lay in found
            for w in lay.warnings
        ],
        listed_by=listed_by,
    )


def _warn_all(notes: Sequence[str], *, listed_by: str) -> None:
    """Warnings on stderr: answers from another machine grouped into one line with a count
    (`listed_by`: the command whose --json lists each); the first WARNINGS_SHOWN others, then
    how many more there are."""
    from tunelog.machines import CROSS_MACHINE_ADVICE, cross_machine_differences

    crossed: dict[str, int] = {}
    others: list[str] = []
    for note in notes:
        differences = cross_machine_differences(note)
        if differences is None:
            others.append(note)
        else:
            crossed[differences] = crossed.get(differences, 0) + 1
    if sum(crossed.values()) == 1:  # one: said in full
        others = list(notes)
        crossed = {}
    for note in others[:WARNINGS_SHOWN]:
        _err(f"warning: {note}")
    if len(others) > WARNINGS_SHOWN:
        _err(f"warning: {len(others) - WARNINGS_SHOWN} more warning(s) (`{listed_by}` lists them)")
    if crossed:
        counts = ", ".join(f"{d.replace('; ', ' and ')} x{n}" for d, n in crossed.items())
        _err(
            f"warning: {sum(crossed.values())} answers were measured on another machine than "
            f"the target asked about ({counts}): {CROSS_MACHINE_ADVICE}; "
            f"`{listed_by}` lists each under `warnings`"
        )


# -- merge and diff ---------------------------------------------------------------------------


@app.command(epilog=example("tunelog --db all.db merge box1.db box2.db"))
@handles_errors
def merge(
    databases: Annotated[list[str], typer.Argument(help="Other tunelog databases to merge in.")],
    as_json: JsonOption = False,
) -> None:
    """Merge other tunelog databases into --db, in one transaction; merging again adds nothing.

    Their files count as imported after --db's own, in each database's import order.
    """
    from tunelog import api

    created = not os.path.exists(state.db_path)
    try:
        with opened_store(create=True) as store:
            try:
                reports = api.merge(store, databases)
            except KeyboardInterrupt:  # one transaction: rolled back
                _err(f"Interrupted: nothing was merged, {state.db_path} is as it was")
                raise typer.Exit(130) from None
            version_warning = api.metaschedule_version_warning(store)
    except BaseException:
        if created:  # a merge that failed leaves no new, empty database behind
            for suffix in ("", "-wal", "-shm"):
                Path(state.db_path + suffix).unlink(missing_ok=True)
        raise
    if version_warning:
        _err(f"warning: {version_warning}")
    if as_json:
        emit_json([{**r.model_dump(), "new": r.new, "duplicates": r.duplicates} for r in reports])
        return
    emit_table(
        [
            (
                r.database,
                display_path(s.path),
                s.label or "",
                s.new,
                s.duplicates,
                f"already here as {_source_ref(s.already_merged_as)}"
                if s.already_merged_as
                else "",
            )
            for r in reports
            for s in r.sources
        ],
        (
            Column("database", rank=1, path=True),
            Column("source", path=True),
            Column("label", rank=2),
            Column("new"),
            Column("dup", rank=1),
            Column("note"),
        ),
    )
    _err(
        f"merged {sum(r.new for r in reports)} new record(s) from {len(reports)} database(s) "
        f"into {state.db_path}"
    )


@app.command(epilog=example("tunelog diff before.db after.db --fail-on-regression 10"))
@handles_errors
def diff(
    a: Annotated[
        str, typer.Argument(help="Run A: a database, a log file, label:NAME or source:ID.")
    ],
    b: Annotated[str, typer.Argument(help="Run B, the same kinds (compared with A).")],
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold",
            metavar="PCT",
            help="Changes within PCT % count as the same.",
            callback=checked(functools.partial(optionvalues.percent, name="--threshold")),
        ),
    ] = 5.0,
    fail_on_regression: Annotated[
        float | None,
        typer.Option(
            "--fail-on-regression",
            metavar="PCT",
            callback=checked(functools.partial(optionvalues.percent, name="--fail-on-regression")),
            help="Exit 1 when a layer is slower in B by more than PCT %, or tuned in A but "
            "untuned or missing in B.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Best latency per layer and target group in runs A and B, with B/A ratios.

    label:NAME and source:ID select sources of --db (see `tunelog sources`).
    """
    from tunelog import api

    report = api.diff(a, b, db=state.db_path, threshold_pct=threshold)
    for note in report.notes:
        _err(f"warning: {note}")
    if as_json:
        emit_json(api.diff_as_dict(report))
    else:
        emit_table([_diff_row(d) for d in report.layers], _DIFF_HEADERS)
        _err(_diff_summary(report))
    if fail_on_regression is not None:
        worse = report.regressions(fail_on_regression)
        if worse:
            _err(
                f"Error: {len(worse)} layer(s) slower in B by more than {fail_on_regression:g}% "
                "or untuned or missing in B: re-tune them, or raise --fail-on-regression"
            )
            raise typer.Exit(1)


_DIFF_HEADERS = (
    Column("target"),
    Column("operator"),
    Column("shapes"),
    Column("A"),
    Column("B"),
    Column("B/A", rank=2),
    Column("change"),
    Column("winner", rank=1),
)


def _diff_row(d: LayerDiff) -> list[Any]:
    def latency(cost: float | None, present: bool) -> str:
        return format_seconds(cost) if cost is not None else "untuned" if present else "-"

    change = d.status
    if d.change_pct is not None and d.status != "same":
        change += f" {d.change_pct:+.0f}%"
    winner = d.a_template or d.b_template or ""
    if d.winner_changed:
        winner = f"{d.a_template} -> {d.b_template}"
    return [
        d.target,
        d.operator,
        d.shapes,
        latency(d.a_latency, d.status != "only in B"),
        latency(d.b_latency, d.status != "only in A"),
        f"{d.ratio:.2f}x" if d.ratio is not None else "",
        change,
        winner,
    ]


def _diff_summary(report: api.DiffReport) -> str:
    from tunelog.diffing import STATUSES

    counts = ", ".join(f"{report.count(s)} {s}" for s in STATUSES if report.count(s))
    return (
        f"{len(report.layers)} layer(s): {counts or 'none'}; "
        f"{len(report.winner_changes)} winning template change(s) "
        f"(threshold {report.threshold_pct:g}%)"
    )


# -- watch ------------------------------------------------------------------------------------


@app.command(epilog=example("tunelog watch tuning.log --interval 5"))
@handles_errors
def watch(
    paths: Annotated[
        list[str], typer.Argument(help="Log files or directories a tuner is writing to.")
    ],
    interval: Annotated[
        float,
        typer.Option(
            help="Seconds between refreshes.",
            show_default=True,
            callback=checked(functools.partial(optionvalues.interval, name="--interval")),
        ),
    ] = 2.0,
    once: Annotated[bool, typer.Option(help="Refresh once and stop.")] = False,
    refreshes: Annotated[
        int | None, typer.Option(min=1, help="Stop after this many refreshes.")
    ] = None,
    until_idle: Annotated[
        float | None,
        typer.Option(
            metavar="S",
            help="Stop when no file has grown for S seconds.",
            callback=checked(functools.partial(optionvalues.seconds, name="--until-idle")),
        ),
    ] = None,
    repair: Annotated[
        bool,
        typer.Option(help="Recover records pasted from web pages (curly quotes, joined lines)."),
    ] = False,
) -> None:
    """Follow logs while tuning: import what is new each refresh and show every layer.

    On a terminal a live table is redrawn; otherwise one summary line per refresh is printed.
    Ctrl-C stops (exit 0): the database keeps every complete line imported so far.
    """
    from tunelog import api

    if "-" in paths:
        raise typer.BadParameter("watch follows files; import stdin with `tunelog import -`")
    view = _WatchView(live=sys.stdout.isatty(), stops_itself=once or refreshes == 1)
    with opened_store(create=True) as store, view:
        try:
            api.watch(
                store,
                paths,
                on_refresh=view.draw,
                interval=interval,
                refreshes=1 if once else refreshes,
                until_idle=until_idle,
                repair=repair,
            )
        except KeyboardInterrupt:
            view.interrupted = True
    view.finish()


class _WatchView:
    """Draws each refresh: a rich Live table on a terminal, else one line on stdout."""

    def __init__(self, *, live: bool, stops_itself: bool = False) -> None:
        self.live: Any = None
        self.stops_itself = stops_itself  # one refresh: no Ctrl-C to ask for
        self.use_live = live
        self.last: Any = None
        self.interrupted = False
        self.waiting: set[str] = set()

    def __enter__(self) -> _WatchView:
        if self.use_live:
            from rich.live import Live

            self.live = Live(auto_refresh=False, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)

    def draw(self, refresh: Any) -> None:
        """Show one refresh; rejected lines go to stderr."""
        self.last = refresh
        for report in refresh.reports:
            if report.unreadable:  # a tuner's temporary file, deleted meanwhile: go on
                _err(f"{report.path} {report.unreadable}: skipped")
            for reject in report.rejects[:REJECTS_SHOWN]:
                _err(f"{report.path}:{reject.line}: {reject.reason}")
        for path in refresh.waiting_for:
            if path not in self.waiting:  # said once per path
                _err(f"waiting for {path} (does not exist yet)")
        self.waiting = set(refresh.waiting_for)
        if self.live is not None:
            self.live.update(_watch_table(refresh, self.stops_itself), refresh=True)
        else:
            echo(f"refresh {refresh.number}: {_watch_summary(refresh)}")

    def finish(self) -> None:
        """The last summary, after the table or lines."""
        how = "interrupted" if self.interrupted else "stopped"
        if self.last is None:
            echo(f"{how} before the first refresh: nothing imported")
            return
        echo(
            f"{how} after {self.last.number} refresh(es): {_watch_totals(self.last)}; "
            "every complete line read is in the database"
        )


def _watch_totals(refresh: Any) -> str:
    layers = refresh.layers
    valid = sum(lay.valid for lay in layers)
    failed = sum(lay.failed for lay in layers)
    text = f"{len(layers)} layer(s), {valid + failed} trial(s) ({valid} valid, {failed} failed)"
    warnings: dict[str, int] = {}
    for lay in layers:
        if lay.warning:
            warnings[lay.warning] = warnings.get(lay.warning, 0) + 1
    for warning, count in sorted(warnings.items()):
        text += f"; {count} layer(s) {warning}"
    return text


def _watch_summary(refresh: Any) -> str:
    text = f"+{refresh.new} new record(s) from {refresh.lines} line(s); {_watch_totals(refresh)}"
    if refresh.held_back_bytes:
        text += f"; {refresh.held_back_bytes} byte(s) of a line still being written"
    return text


def _watch_table(refresh: Any, stops_itself: bool = False) -> Any:
    from datetime import datetime

    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=f"tunelog watch: refresh {refresh.number} at {datetime.now():%H:%M:%S}",
        caption=f"{_watch_summary(refresh)}." + ("" if stops_itself else " Ctrl-C to stop."),
    )
    headers = ["target", "operator", "shapes", "trials", "valid/failed", "best", "GFLOPS"]
    with_verdict = any(lay.verdict is not None for lay in refresh.layers)
    if with_verdict:  # the convergence verdict, once tunelog computes one (LayerStatus.verdict)
        headers.append("verdict")
    for header in [*headers, "warning"]:
        table.add_column(header, justify="right" if header in ("trials", "GFLOPS") else "left")
    for lay in refresh.layers:
        cells = [
            lay.target,
            lay.operator,
            lay.shapes,
            str(lay.trials),
            f"{lay.valid}/{lay.failed}",
            format_seconds(lay.best_cost) if lay.best_cost is not None else "untuned",
            f"{lay.gflops:.1f}" if lay.gflops is not None else "",
        ]
        if with_verdict:
            cells.append(lay.verdict or "")
        # Text, not markup: shapes and target strings may hold brackets.
        row = [Text(shown(cell)) for cell in cells]
        row.append(Text(lay.warning or "", style="bold red"))
        table.add_row(*row)
    return table


def _command_name(info: CommandInfo) -> str:
    """The name a registered command answers to (typer's own rule when it has none)."""
    if info.name:
        return info.name
    assert info.callback is not None  # every command here is a decorated function
    return typer.main.get_command_name(info.callback.__name__)


class _ListedOnly(Exception):
    """click chose a stand-in of the command listing (see `_listing`): run the real app."""


def _stand_in(info: CommandInfo) -> CommandInfo:
    """`info` with a callback of no parameters: the same name and help in a listing."""
    assert info.callback is not None  # every command here is a decorated function

    def stand_in() -> None:
        raise _ListedOnly

    stand_in.__name__ = info.callback.__name__
    stand_in.__doc__ = info.callback.__doc__
    listed = copy.copy(info)
    listed.callback = stand_in
    # Whatever follows the name reaches the stand-in, which hands it all to the real command.
    listed.add_help_option = False
    listed.context_settings = {"ignore_unknown_options": True, "allow_extra_args": True}
    return listed


def _listing() -> typer.Typer:
    """`app` as its help sees it: every command a stand-in without parameters.

    The group's help and its unknown-command errors need each command's name and help only;
    building the real commands read 17 signatures (about a fifth of `tunelog --help`). A
    stand-in never runs a command: if click ever picks one, `run` starts the real app.
    """
    listing = copy.copy(app)
    listing.registered_commands = [_stand_in(info) for info in app.registered_commands]
    return listing


def app_for(args: Sequence[str]) -> typer.Typer:
    """A copy of `app` holding only what the run `args` needs (same options, help and errors).

    typer turns every registered command into a click command on each run, reading each
    function's signature and evaluating its annotations: a fifth of a small command's start-up.
    A run that names a command after global options only (`--db PATH`, `--wide`) needs that
    one command; anything else (no command, an unknown one, `-h`/`--version` before it: the
    group's help lists every command) gets the listing (`_listing`).
    """
    i = 0
    while i < len(args):
        key, value, _ = args[i].partition("=")
        if key not in GLOBAL_OPTIONS:
            break
        i += 2 if GLOBAL_OPTIONS[key] and not value else 1  # `--db=PATH`: one argument
    if i >= len(args):
        return _listing()
    name = args[i]
    commands = [c for c in app.registered_commands if _command_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return _listing()
    reduced = copy.copy(app)
    reduced.registered_commands = commands
    reduced.registered_groups = groups
    return reduced


def run() -> None:
    """Console-script entry point."""
    try:
        try:
            app_for(sys.argv[1:])()
        except _ListedOnly:
            app()  # a command named in a way app_for does not foresee (`-- best`)
    except BrokenPipeError:  # pragma: no cover - a pipe closed outside any command
        _silence_stdout()
        sys.exit(0)


if __name__ == "__main__":  # pragma: no cover
    run()
