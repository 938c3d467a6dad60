"""`tunelog watch`: follow logs while a tuner writes them."""

from __future__ import annotations

import functools
import sys
from typing import Annotated, Any

import typer

from tunelog import optionvalues
from tunelog.cli.app import app, example
from tunelog.cli.cells import format_seconds
from tunelog.cli.importnotes import REJECTS_SHOWN, garbled_warning, holds_no_record, not_a_log
from tunelog.cli.output import _err, echo, shown
from tunelog.cli.running import checked, handles_errors, opened_store

# -- watch ------------------------------------------------------------------------------------


@app.command(epilog=example("tunelog watch tuning.log --interval 5"))
@handles_errors
def watch(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Log files or directories a tuner is writing to.",
            callback=checked(optionvalues.log_paths),
        ),
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
    Ctrl-C stops (exit 0): the database keeps every complete line imported so far. A file
    named here that holds no record is said so once (`import` refuses it); watching goes on.
    """
    from tunelog import api
    from tunelog.exceptions import InvalidValueError
    from tunelog.optionvalues import watched_paths

    try:
        watched_paths(paths)
    except InvalidValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    view = _WatchView(
        live=sys.stdout.isatty(), stops_itself=once or refreshes == 1, named=set(paths)
    )
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

    def __init__(
        self, *, live: bool, stops_itself: bool = False, named: set[str] | None = None
    ) -> None:
        self.live: Any = None
        self.named = named or set()  # the paths named to watch (not found in a directory)
        self.not_logs: set[str] = set()  # named files said to hold no record
        self.garbled: set[str] = set()  # compressed files rolled back: their check failed
        self.stops_itself = stops_itself  # one refresh: no Ctrl-C to ask for
        self.use_live = live
        self.last: Any = None
        self.interrupted = False
        self.waiting: set[str] = set()
        self.skipped: dict[str, str] = {}  # path -> why, of the files last refresh skipped
        # path -> bytes of its last line without a line end, left for the tuner to finish (a
        # file not read again since keeps them)
        self.held_back: dict[str, int] = {}

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
        if refresh.busy is not None:  # watching goes on: the files are read next time
            _err(
                f"refresh {refresh.number}: {refresh.busy}: the files that changed are read "
                "at the next refresh"
            )
        skipped: dict[str, str] = {}
        for report in refresh.reports:
            if report.held_back_bytes:
                self.held_back[report.path] = report.held_back_bytes
            elif report.lines:  # read again, its last line ended
                self.held_back.pop(report.path, None)
            if report.unreadable:  # a tuner's temporary file, deleted meanwhile: go on
                # Said once while it stays unreadable (it is tried again at each refresh).
                skipped[report.path] = report.unreadable
                if self.skipped.get(report.path) != report.unreadable:
                    _err(f"{report.path} {report.unreadable}: skipped")
            if report.path in self.named and holds_no_record(report):
                # As `import` says it of a file named to it (a README, a database dump): what
                # it looks like, once, instead of its rejected lines. Watching goes on.
                if report.path not in self.not_logs:
                    self.not_logs.add(report.path)
                    _err(f"warning: {not_a_log(report)}")
                continue
            for reject in report.rejects[:REJECTS_SHOWN]:
                _err(f"{report.path}:{reject.line}: {reject.reason}")
            if report.prefix_changed:  # what the earlier reads held stays in the database
                _err(
                    f"{report.path} was read in full again, as another source (it changed "
                    "since it was read: rewritten, truncated or rotated; or its last line "
                    "then had no line end): its earlier reads' records stay (`tunelog "
                    "sources remove` them to drop them)"
                )
            if report.garbled:  # rolled back: none of its lines is in the database
                self.garbled.add(report.path)
                _err(garbled_warning(report))
            elif report.lines:  # read again whole (replaced by a sound file): none lost now
                self.garbled.discard(report.path)
        self.skipped = skipped
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
        if self.last is None and self.interrupted:
            # The first refresh commits file after file: those done before the interrupt stay.
            echo(
                "interrupted during the first refresh: the files whose import had finished are "
                "in the database (`tunelog sources`); run watch again to go on"
            )
            return
        if self.last is None:
            echo(f"{how} before the first refresh: nothing imported")
            return
        # Interrupted, a refresh may have imported lines and not been shown: the totals are
        # the last shown refresh's, and said to be.
        shown = f" as of refresh {self.last.number}" if self.interrupted else ""
        held = sum(self.held_back.values())
        # A last line without its line end is left for the tuner to finish: said so at the
        # end, since `tunelog import` of the file as it is would read it.
        left = (
            f"; {held} byte(s) of a last line without its line end were left out "
            "(`tunelog import` reads it as it is)"
            if held
            else ""
        )
        kept = "every complete line read is in the database"
        if self.garbled:
            kept += f", but those of {len(self.garbled)} damaged file(s) (rolled back, above)"
        echo(
            f"{how} after {self.last.number} refresh(es): {_watch_totals(self.last)}{shown}; "
            f"{kept}{left}"
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
