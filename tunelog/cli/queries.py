"""`best`, `workloads`, `untuned`, `errors`: the winners and the layers, as tables or JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from tunelog.cli.app import app, example
from tunelog.cli.cells import (
    _SEE_WHAT_THERE_IS,
    _compact,
    _errors_text,
    _nothing_matches,
    _template_text,
    display_path,
    format_seconds,
)
from tunelog.cli.emitters import emit_json, emit_table
from tunelog.cli.layerrows import LayerRows, columns_sorted_by
from tunelog.cli.notes import (
    LayerNotes,
    _warn_all,
    _warn_layers,
)
from tunelog.cli.options import (
    NO_FILTERS,
    JsonOption,
    SortOption,
    filter_options,
)
from tunelog.cli.output import _err
from tunelog.cli.running import handles_errors, opened_store
from tunelog.exceptions import NothingMatchesError
from tunelog.filters import Filters
from tunelog.tables import Column

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from tunelog.api.diagnosing import ErrorSummary
    from tunelog.api.runs import LayerConvergence
    from tunelog.layers import Layer
    from tunelog.models import BestRow


@app.command(epilog=example("tunelog best --target-key cuda --knobs"))
@handles_errors
@filter_options()
def best(
    filters: Filters = NO_FILTERS,
    knobs: Annotated[bool, typer.Option(help="Show the winning knob values.")] = False,
    as_json: JsonOption = False,
) -> None:
    """The config apply_history_best picks for each slot (target key or model, workload).

    `trials`: every measurement (valid or failed) of the row's workload on targets with the
    same keys and -model as its target; `source`: the file and line of the winning record.
    """
    with opened_store() as store:
        rows = store.each_best(
            filters, knobs=knobs, as_written=True, args_only_without_shapes=not as_json
        )
        empty = (
            f"no valid measurement matches {filters.describe()}; {_SEE_WHAT_THERE_IS}"
            if filters.describe()
            else f"no valid measurement in the database; {_SEE_WHAT_THERE_IS}"
        )
        if as_json:
            emit_json((row.model_dump() for row in rows), empty=empty)
            return
        notes: list[str] = []  # the warnings, said after the table
        sources: dict[str, str] = {}  # each source's path as shown: one of a few on every row
        emit_table(
            (_best_row(row, knobs, notes, sources) for row in rows),
            _best_headers(knobs),
            empty=empty,
        )
    _warn_all(notes, listed_by=_listed_by("best", filters))


def _listed_by(command: str, filters: Filters) -> str:
    """The command, with these filters, whose --json lists each warning."""
    return " ".join(filter(None, ["tunelog", command, filters.describe(), "--json"]))


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


def _best_row(row: BestRow, knobs: bool, notes: list[str], sources: dict[str, str]) -> list[Any]:
    """The row's cells; its warnings added to `notes`, its source's path as shown to
    `sources` (by stored path)."""
    if row.warnings:
        notes += [f"{','.join(row.slots)} {row.task_name}: {w}" for w in row.warnings]
    source = sources.get(row.source)
    if source is None:
        source = sources[row.source] = display_path(row.source)
    cells: list[Any] = [
        row.target,
        ",".join(row.slots),
        _template_text(row.task_name, row.template_key),
        row.shapes if row.shapes is not None else _short_args(row),
        row.config_index,
        format_seconds(row.mean_cost),
        row.trials,
        f"{source}:{row.line}",
    ]
    if knobs:
        cells.append(" ".join(f"{k}={_compact(v)}" for k, v in row.knobs or []))
    return cells


def _short_args(row: BestRow) -> str:
    """The arguments' short text, for a row whose workload stores none (auto_scheduler)."""
    from tunelog.workloads import short_args

    return short_args(row.task_name, row.args)


@app.command(
    epilog=example("tunelog workloads --sort latency --task conv2d", "tunelog workloads 1x512")
)
@handles_errors
@filter_options()
def workloads(
    layer: Annotated[
        str | None,
        typer.Argument(
            metavar="[LAYER]",
            help="Only the layers this names: shapes as the table shows them, or a layer_key; "
            "a part of either is enough.",
        ),
    ] = None,
    filters: Filters = NO_FILTERS,
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
    # `rest`: the filters left once --source/--label chose the files; the messages name the
    # user's own (`filters`), which the commands they suggest need.
    with opened_store() as full, full.selected(filters) as (store, rest):
        if sort is None and layer is None:  # in the order read: written as they are read
            from tunelog.api.listing import each_layer
            from tunelog.collecting import young_collected_less

            # Every group's convergence and a page of rows are held while each layer's objects
            # die young: fewer collections walking them (see tunelog.collecting).
            with young_collected_less():
                convergence = api.layer_convergence(store, filters=rest)
                _emit_layers(each_layer(store, rest), convergence, as_json, filters)
            return
        found = api.layers(store, rest, sort=sort)
        empty = None
        if layer is not None:
            found = api.layers_named(found, layer)
            if not found:  # the filters may have left it out: said so, as `curve` says it
                from tunelog.api.listing import left_out

                empty = left_out(full, layer, filters)
        convergence = api.layer_convergence(store, found, filters=rest)
    _emit_layers(iter(found), convergence, as_json, filters, named=layer, sort=sort, empty=empty)


def _emit_layers(
    found: Iterator[Layer],
    convergence: LayerConvergence,
    as_json: bool,
    filters: Filters,
    *,
    named: str | None = None,
    sort: str | None = None,
    empty: str | None = None,
) -> None:
    """`workloads`' layers as JSON or a table on stdout, then their warnings on stderr
    (`sort`: the key they are sorted by, whose column the table keeps; `empty`: the note when
    there is none, if not that nothing matches)."""
    from tunelog import api

    empty = empty or _nothing_matches(filters, named=named)
    if as_json:
        emit_json((api.layer_as_dict(layer, convergence) for layer in found), empty=empty)
        return
    notes = LayerNotes(untuned_by=" ".join(filter(None, ["tunelog untuned", filters.describe()])))
    of_layer, row_of = convergence.of_layer, LayerRows().row
    emit_table(
        (row_of(layer, of_layer(layer)) for layer in notes.noted(found)),
        columns_sorted_by(sort),
        empty=empty,
    )
    notes.warn(listed_by=_listed_by("workloads", filters))


_EVERY_LAYER_TUNED = "every layer has at least one valid measurement"


@app.command(epilog=example("tunelog untuned --check --for-target 'cuda -model=t4'"))
@handles_errors
@filter_options()
def untuned(
    filters: Filters = NO_FILTERS,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when a layer is untuned (for scripts, CI).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Layers with no usable valid record (fallback config), or answered only by another machine."""
    from tunelog import api
    from tunelog.rules.untuned import answer_text

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
        # With what the table shows beside the layer: the answer it is untuned with, if any.
        emit_json((api.untuned_as_dict(layer) for layer in found), empty=_EVERY_LAYER_TUNED)
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
                _errors_text(layer.error_counts()),
                answer_text(layer),
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
        empty=_EVERY_LAYER_TUNED,
    )
    _warn_layers(found, listed_by=_listed_by("untuned", filters))
    if check and found:
        _err(f"{_untuned_count(found)} (--check)")
        raise typer.Exit(1)


def _untuned_count(found: Sequence[Layer]) -> str:
    """`untuned --check`'s line: how many layers run a fallback config, how many a config
    measured on another machine (it said "fallback" of both)."""
    from tunelog.rules.untuned import runs_fallback

    fallback = sum(1 for layer in found if runs_fallback(layer))
    parts = [f"{fallback} will run an untuned fallback config"] if fallback else []
    if len(found) - fallback:
        parts.append(f"{len(found) - fallback} a config measured on another machine")
    return f"{len(found)} layer(s) untuned: " + ", ".join(parts)


@app.command(epilog=example("tunelog errors --target-key cuda"))
@handles_errors
@filter_options()
def errors(
    filters: Filters = NO_FILTERS,
    as_json: JsonOption = False,
) -> None:
    """Failed trials by layer and template, with error names and a diagnosis."""
    from tunelog import api
    from tunelog.api.diagnosing import each_error
    from tunelog.api.listing import each_layer
    from tunelog.collecting import young_collected_less

    # The rows are held while each layer's objects die young (see tunelog.collecting).
    with opened_store() as store, young_collected_less():
        # Each failure kept only as what is printed (not its layer), then sorted as `api.errors`
        # sorts: most failures first, stably.
        found: list[tuple[int, Any]] = [
            (e.template.failed, api.error_as_dict(e) if as_json else _error_row(e))
            for e in each_error(store, filters)
        ]
        found.sort(key=lambda failed_and_shown: -failed_and_shown[0])
        # Nothing failed: whether any layer matches needs only the first one, not a list of all.
        matched = bool(found) or next(each_layer(store, filters), None) is not None
    empty = "no failed trials" if matched else _nothing_matches(filters)
    if as_json:
        emit_json([shown for _, shown in found], empty=empty)
        return
    emit_table(
        [shown for _, shown in found],
        (
            Column("target", rank=2),
            Column("shapes"),
            Column("template"),
            Column("failed", rank=1),
            Column("errors", rank=1),
            Column("diagnosis"),
        ),
        empty=empty,
    )


def _error_row(e: ErrorSummary) -> tuple[str, ...]:
    """A row of `errors`' table."""
    return (
        e.layer.group.label,
        e.layer.shapes,
        e.template.name,
        f"{e.template.failed}/{e.template.trials}",
        ", ".join(f"{name} x{count}" for name, count in e.error_counts.items()),
        " ".join(e.diagnosis),
    )
