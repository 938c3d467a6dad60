"""The `tunelog` command: a thin typer layer that formats what the library returns.

stdout carries only tables or JSON (safe for pipes); progress, warnings and errors go to stderr.
A user's mistake ends in one `Error: ...` line and exit code 1 (usage errors: 2).
"""

from __future__ import annotations

import functools
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

import typer

from tunelog.exceptions import TunelogError
from tunelog.filters import Filters

if TYPE_CHECKING:
    from tunelog import api
    from tunelog.inputs import LogInput
    from tunelog.layers import Layer
    from tunelog.models import BestRow, FileReport
    from tunelog.store import Store

# Start-up is most of a small command's time, so each command imports what it needs when it
# runs (`from tunelog import api` inside): `--help` and a usage error load no more than typer.

DEFAULT_DB = "tunelog.db"
REJECTS_SHOWN = 20

app = typer.Typer(
    name="tunelog",
    help="Import, query and clean Apache TVM AutoTVM tuning logs (no TVM needed).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click messages: usage errors stay a few grep-able lines
)

P = ParamSpec("P")
R = TypeVar("R")


class _State:
    db_path: str = DEFAULT_DB


state = _State()


def _err(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def handles_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn domain errors into one `Error:` line and exit 1, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
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
def opened_store() -> Iterator[Store]:
    """The database named by --db, TUNELOG_DB or ./tunelog.db."""
    from tunelog.store import Store

    store = Store(state.db_path)
    try:
        yield store
    finally:
        store.close()


def emit_json(value: Any) -> None:
    """Pretty JSON on stdout."""
    sys.stdout.write(_json_text(value, indent=True) + "\n")


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


def emit_table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> None:
    """A plain-text table on stdout."""
    if not rows:
        return
    from tabulate import tabulate

    typer.echo(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))


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


@app.callback()
def main(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            envvar="TUNELOG_DB",
            metavar="PATH",
            help="Database file (default: ./tunelog.db; env TUNELOG_DB).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """tunelog: AutoTVM tuning logs in an embedded SQLite database."""
    state.db_path = db or DEFAULT_DB


# -- import -----------------------------------------------------------------------------------


@app.command("import")
@handles_errors
def import_command(
    paths: Annotated[
        list[str], typer.Argument(help="Log files, directories (recursive) or - for stdin.")
    ],
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

    with opened_store() as store, _progress() as progress:
        reports = api.import_paths(
            store, paths, label=label, strict=strict, repair=repair, progress=progress
        )
    _print_import(reports, as_json)
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
}


def _print_import(reports: list[FileReport], as_json: bool) -> None:
    """The summary on stdout (table or JSON); rejected lines on stderr either way."""
    if as_json:
        emit_json({"files": [r.model_dump(include=_REPORT_FIELDS) for r in reports]})
    else:
        rows = [
            (r.path, r.lines, r.new, r.duplicates, r.comments, r.blank, r.rejected, _import_note(r))
            for r in reports
        ]
        emit_table(rows, ("file", "lines", "new", "dup", "comments", "blank", "rejected", "note"))
    for report in reports:
        shown = report.rejects[:REJECTS_SHOWN]
        for reject in shown:
            _err(f"{report.path}:{reject.line}: {reject.reason}")
        if report.rejected > len(shown):
            _err(f"{report.path}: ... and {report.rejected - len(shown)} more rejected line(s)")


def _import_note(report: FileReport) -> str:
    notes = []
    if report.rolled_back:
        notes.append(f"rolled back (--strict): {report.discarded} new record(s) not stored")
    if report.already_imported_as:
        notes.append(f"already imported as {report.already_imported_as}")
    if report.repaired:
        notes.append(f"repaired {report.repaired} record(s)")
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
            tasks[source.path] = bar.add_task(source.path, total=total)
        bar.update(tasks[source.path], completed=done)

    with bar:
        yield update


# -- listings ---------------------------------------------------------------------------------


@app.command()
@handles_errors
def sources(as_json: JsonOption = False) -> None:
    """List imported files with their line accounting."""
    with opened_store() as store:
        rows = store.sources()
    if as_json:
        emit_json([s.model_dump() for s in rows])
        return
    emit_table(
        [
            (
                s.id,
                s.path,
                s.label or "",
                s.lines,
                s.records,
                s.duplicates,
                s.rejected,
                s.sha256[:12],
                s.imported_at,
            )
            for s in rows
        ],
        ("id", "path", "label", "lines", "records", "dup", "rejected", "sha256", "imported"),
    )


@app.command()
@handles_errors
def stats(as_json: JsonOption = False) -> None:
    """Records by target, template and error number; valid vs failed."""
    with opened_store() as store:
        result = store.stats()
    if as_json:
        emit_json(result.model_dump())
        return
    typer.echo(
        f"records: {result.records}  valid: {result.valid}  failed: {result.failed}  "
        f"sources: {result.sources}  targets: {result.targets}  workloads: {result.workloads}"
    )
    for title, rows, headers in (
        ("by target", result.by_target, ("target", "records", "valid", "failed")),
        ("by template", result.by_template, ("template", "records", "valid", "failed")),
        ("by error", result.by_error, ("error_no", "records")),
    ):
        if rows:
            typer.echo(f"\n{title}:")
            emit_table([[row[h] for h in headers] for row in rows], headers)


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
        help="Answer as apply_history_best does when compiling for this target string "
        '(e.g. "cuda -model=titanx"; the model need not be in the log).',
    ),
]


@app.command()
@handles_errors
def best(
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    knobs: Annotated[bool, typer.Option(help="Show the winning knob values.")] = False,
    as_json: JsonOption = False,
) -> None:
    """The config apply_history_best picks for each slot (target key or model, workload)."""
    filters = Filters(target_key, model, template, task, for_target)
    with opened_store() as store:
        rows = store.best(filters, knobs=knobs)
    if as_json:
        emit_json([row.model_dump() for row in rows])
        return
    emit_table([_best_row(row, knobs) for row in rows], _best_headers(knobs))
    if not rows:
        _err("no valid measurement matches (see `tunelog stats`)")


def _best_headers(knobs: bool) -> list[str]:
    headers = ["target", "slots", "template", "args", "config", "latency", "trials", "source"]
    return [*headers, "knobs"] if knobs else headers


def _best_row(row: BestRow, knobs: bool) -> list[Any]:
    from tunelog.workloads import short_args

    template = row.task_name + (f" [{row.template_key}]" if row.template_key else "")
    cells: list[Any] = [
        row.target,
        ",".join(row.slots),
        template,
        short_args(row.task_name, row.args),
        row.config_index,
        format_seconds(row.mean_cost),
        row.trials,
        f"{Path(row.source).name}:{row.line}",
    ]
    if knobs:
        cells.append(" ".join(f"{k}={_compact(v)}" for k, v in row.knobs or []))
    return cells


def _compact(value: object) -> str:
    return _json_text(value).replace('"', "")


# -- export -----------------------------------------------------------------------------------


@app.command()
@handles_errors
def export(
    out: Annotated[str, typer.Argument(help="Output log file, or - for stdout.")],
    top_k: Annotated[
        int, typer.Option("--top-k", min=1, help="Keep the K best distinct configs per slot.")
    ] = 1,
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
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
) -> None:
    """Write a cleaned log that apply_history_best loads and decides on as on the full logs."""
    from tunelog import api

    filters = Filters(target_key, model, template, task, for_target)
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
        help="latency (slowest first), gflops (least efficient first) or trials (fewest first).",
    ),
]


@app.command()
@handles_errors
def workloads(
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    sort: SortOption = None,
    as_json: JsonOption = False,
) -> None:
    """One row per layer and target group: templates tried, the winner relay picks, GFLOPS."""
    from tunelog import api

    if sort is not None and sort not in api.SORT_KEYS:
        raise typer.BadParameter(f"use one of {', '.join(api.SORT_KEYS)}", param_hint="--sort")
    filters = Filters(target_key, model, template, task, for_target)
    with opened_store() as store:
        found = api.layers(store, filters, sort=sort)
    if as_json:
        emit_json([api.layer_as_dict(layer) for layer in found])
        return
    emit_table([_layer_row(layer) for layer in found], _LAYER_HEADERS)


_LAYER_HEADERS = (
    "target",
    "operator",
    "shapes",
    "templates (trials valid/failed: best)",
    "winner",
    "config",
    "margin",
    "GFLOPS",
)


def _layer_row(layer: Layer) -> list[Any]:
    tried = "; ".join(
        f"{t.name} ({t.trials} {t.valid}/{t.failed}: "
        f"{format_seconds(t.chosen.mean_cost) if t.chosen else 'untuned'})"
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
        winner.name if winner else "(untuned)",
        winner.chosen.config_index if winner and winner.chosen else "",
        f"+{margin * 100:.0f}%" if margin is not None else "",
        f"{gflops:.1f}" if gflops is not None else "unknown" if winner else "",
    ]


@app.command()
@handles_errors
def untuned(
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    as_json: JsonOption = False,
) -> None:
    """Layers with no valid record: they run a fallback config ("not been tuned")."""
    from tunelog import api

    filters = Filters(target_key, model, template, task, for_target)
    with opened_store() as store:
        found = api.untuned(store, filters)
    if as_json:
        emit_json([api.layer_as_dict(layer) for layer in found])
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
            )
            for layer in found
        ],
        ("target", "operator", "shapes", "templates", "trials", "errors"),
    )
    if not found:
        _err("every layer has at least one valid measurement")


def _errors_text(counts: dict[int, int]) -> str:
    from tunelog.errorcodes import error_name

    failed = sorted(((c, n) for n, c in counts.items() if n != 0), reverse=True)
    return ", ".join(f"{error_name(n)} x{c}" for c, n in failed)


@app.command()
@handles_errors
def errors(
    target_key: FilterTargetKey = None,
    model: FilterModel = None,
    template: FilterTemplate = None,
    task: FilterTask = None,
    for_target: FilterForTarget = None,
    as_json: JsonOption = False,
) -> None:
    """Failed trials by layer and template, with error names and a diagnosis."""
    from tunelog import api

    filters = Filters(target_key, model, template, task, for_target)
    with opened_store() as store:
        found = api.errors(store, filters)
    if as_json:
        emit_json([api.error_as_dict(e) for e in found])
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
        ("target", "shapes", "template", "failed", "errors", "diagnosis"),
    )
    if not found:
        _err("no failed trials")


@app.command()
@handles_errors
def explain(
    code: Annotated[str, typer.Argument(help="Error number (0-8) or name, e.g. build_timeout.")],
    as_json: JsonOption = False,
) -> None:
    """What an AutoTVM error number means, its common causes, and what to change."""
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
    typer.echo("\n".join(lines))


# -- watch ------------------------------------------------------------------------------------


@app.command()
@handles_errors
def watch(
    paths: Annotated[
        list[str], typer.Argument(help="Log files or directories a tuner is writing to.")
    ],
    interval: Annotated[
        float, typer.Option(min=0.0, help="Seconds between refreshes.", show_default=True)
    ] = 2.0,
    once: Annotated[bool, typer.Option(help="Refresh once and stop.")] = False,
    refreshes: Annotated[
        int | None, typer.Option(min=1, help="Stop after this many refreshes.")
    ] = None,
    until_idle: Annotated[
        float | None,
        typer.Option(min=0.0, metavar="S", help="Stop when no file has grown for S seconds."),
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
    view = _WatchView(live=sys.stdout.isatty())
    with opened_store() as store, view:
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

    def __init__(self, *, live: bool) -> None:
        self.live: Any = None
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
            for reject in report.rejects[:REJECTS_SHOWN]:
                _err(f"{report.path}:{reject.line}: {reject.reason}")
        for path in refresh.waiting_for:
            if path not in self.waiting:  # said once per path
                _err(f"waiting for {path} (does not exist yet)")
        self.waiting = set(refresh.waiting_for)
        if self.live is not None:
            self.live.update(_watch_table(refresh), refresh=True)
        else:
            typer.echo(f"refresh {refresh.number}: {_watch_summary(refresh)}")

    def finish(self) -> None:
        """The last summary, after the table or lines."""
        how = "interrupted" if self.interrupted else "stopped"
        if self.last is None:
            typer.echo(f"{how} before the first refresh: nothing imported")
            return
        typer.echo(
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


def _watch_table(refresh: Any) -> Any:
    from datetime import datetime

    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=f"tunelog watch: refresh {refresh.number} at {datetime.now():%H:%M:%S}",
        caption=f"{_watch_summary(refresh)}. Ctrl-C to stop.",
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
        row = [Text(cell) for cell in cells]
        row.append(Text(lay.warning or "", style="bold red"))
        table.add_row(*row)
    return table


def run() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    run()
