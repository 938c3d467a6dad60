"""Commands that read other databases beside --db: `merge` (into it) and `diff` (also logs)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tunelog import optionvalues
from tunelog.cli.app import app, example
from tunelog.cli.cells import _source_ref, display_path, format_seconds
from tunelog.cli.emitters import emit_json, emit_table
from tunelog.cli.options import JsonOption
from tunelog.cli.output import _err
from tunelog.cli.running import checked, handles_errors
from tunelog.cli.state import state
from tunelog.tables import Column

if TYPE_CHECKING:
    from tunelog import api
    from tunelog.diffing import LayerDiff
    from tunelog.store.merging import MergedSource, MergeReport


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

    with api.merge_target(state.db_path) as store:  # a failed merge leaves no new database
        try:
            reports = api.merge(store, databases)
        except KeyboardInterrupt as exc:  # one transaction: rolled back
            from tunelog.interrupts import exit_status

            _err(f"Interrupted: nothing was merged, {state.db_path} is as it was")
            raise typer.Exit(exit_status(exc)) from None
        # Said when the merge added records (those may be MetaSchedule ones), not otherwise.
        added = sum(r.new for r in reports)
        version_warning = api.metaschedule_version_warning(store) if added else None
    if version_warning:
        _err(f"warning: {version_warning}")
    if as_json:
        emit_json([{**r.model_dump(), "new": r.new, "duplicates": r.duplicates} for r in reports])
        return
    _print_merged(reports)
    _err(
        f"merged {sum(r.new for r in reports)} new record(s) from {len(reports)} database(s) "
        f"into {state.db_path}"
    )


def _replaces(superseded: Sequence[int]) -> str:
    """The note of a merged source that replaces sources of its bytes rejected unrepaired."""
    if not superseded:
        return ""
    earlier = ", ".join(f"#{i}" for i in superseded)
    return f"replaces {earlier} (the same bytes, rejected without --repair)"


def _merged_note(merged: MergedSource) -> str:
    """The note of a merged source's row: already here, read on into a source here, or the
    sources it replaces."""
    if merged.already_merged_as:
        return _already_here_note(merged)
    if merged.read_on_into:
        note = f"read on into {_source_ref(merged.read_on_into)} (the file grew)"
        if merged.label_here is not None:
            note += f", which keeps its label {merged.label_here}"
        return note
    return _replaces(merged.superseded)


def _already_here_note(merged: MergedSource) -> str:
    assert merged.already_merged_as is not None
    note = f"already here as {_source_ref(merged.already_merged_as)}"
    if merged.label_here is not None:  # one label per source: the one here stays
        note += f", which keeps its label {merged.label_here}"
    return note


def _print_merged(reports: Sequence[MergeReport]) -> None:
    """`merge`'s table: a row per source of each merged database, with what it added."""
    emit_table(
        [
            (
                r.database,
                display_path(s.path),
                s.label or "",
                s.new,
                s.duplicates,
                _merged_note(s),
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


@app.command(epilog=example("tunelog diff before.db after.db --fail-on-regression 10"))
@handles_errors
def diff(
    a: Annotated[
        str, typer.Argument(help="Run A: a database, a log file, label:NAME or source:ID|PATH.")
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

    label:NAME and source:ID (or source:PATH) select sources of --db (see `tunelog sources`).
    """
    from tunelog import api
    from tunelog.exceptions import InvalidValueError

    try:
        report = api.diff(a, b, db=state.db_path, threshold_pct=threshold)
    except InvalidValueError as exc:  # `- -`: a usage error
        raise typer.BadParameter(str(exc)) from None
    for note in report.notes:
        _err(f"warning: {note}")
    from tunelog.collecting import young_collected_less

    with young_collected_less():  # the report is held while its rows are made (see there)
        if as_json:
            emit_json(api.diff_as_dict(report))
        else:
            emit_table((_diff_row(d) for d in report.layers), _DIFF_HEADERS)  # a page at a time
            _err(_diff_summary(report))
    if fail_on_regression is not None:
        worse = report.regressions(fail_on_regression)
        if worse:
            _err(f"Error: {_regressions_text(worse, fail_on_regression)}")
            raise typer.Exit(1)


def _regressions_text(worse: Sequence[LayerDiff], pct: float) -> str:
    """`diff --fail-on-regression`'s error: the regressions by kind (it said "slower, or
    untuned or missing" of layers that were all missing)."""
    from tunelog.diffing import ONLY_A, UNTUNED_B

    missing = sum(1 for d in worse if d.status == ONLY_A)
    untuned = sum(1 for d in worse if d.status == UNTUNED_B)
    slower = len(worse) - missing - untuned
    kinds = [
        f"{slower} slower in B by more than {pct:g}%" if slower else "",
        f"{untuned} untuned in B" if untuned else "",
        f"{missing} missing in B" if missing else "",
    ]
    return (
        f"{len(worse)} layer(s) regressed: {', '.join(k for k in kinds if k)}: re-tune them, "
        "or raise --fail-on-regression"
    )


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

    found = report.counts()
    counts = ", ".join(f"{found[s]} {s}" for s in STATUSES if found[s])
    return (
        f"{len(report.layers)} layer(s): {counts or 'none'}; "
        f"{len(report.winner_changes)} winning template change(s) "
        f"(threshold {report.threshold_pct:g}%)"
    )
