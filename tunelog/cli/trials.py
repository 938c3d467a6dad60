"""`explain`, `curve`, `knobs`, `rejects`: an error, a layer's trials, refused lines."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Protocol, TypeVar

import typer

from tunelog import optionvalues
from tunelog.cli.app import app, example
from tunelog.cli.cells import display_path, format_seconds
from tunelog.cli.emitters import emit_json, emit_table
from tunelog.cli.options import (
    LAYER_FILTERS,
    NO_FILTERS,
    JsonOption,
    LayerArgument,
    filter_options,
)
from tunelog.cli.output import _err, echo, echo_lines
from tunelog.cli.running import checked, handles_errors, opened_store
from tunelog.filters import Filters
from tunelog.tables import Column

if TYPE_CHECKING:
    from tunelog.layers import Layer, TemplateResult
    from tunelog.results import CurveRow, TemplateCurve, TemplateKnobs
    from tunelog.store import Store


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
    from tunelog import api
    from tunelog.recordfields import field_name

    if code.lstrip().startswith(("{", "[")):  # a record line: JSON (a MetaSchedule one is [...])
        _explain_record(code, as_json)
        return
    every = code.strip().lower() == "fields"
    if every or field_name(code) is not None:
        meanings = api.explain_fields(None if every else code)
        if as_json:
            emit_json(meanings)
        else:
            echo_lines(f"{name}: {text}" for name, text in meanings.items())
        return
    _explain_error(code, as_json)


def _explain_error(code: str, as_json: bool) -> None:
    from tunelog import api
    from tunelog.exceptions import UnknownErrorCodeError

    try:
        entry = api.explain_error(code)
    except UnknownErrorCodeError as exc:  # `explain` also takes a field or a record line
        raise UnknownErrorCodeError(
            f"{exc}; or a record field (`tunelog explain fields` lists them), or a whole "
            "record line"
        ) from None
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
    echo_lines(lines)


def _explain_record(line: str, as_json: bool) -> None:
    from tunelog import api

    fields = api.explain_record(line)
    if as_json:
        emit_json([f._asdict() for f in fields])
        return
    emit_table([list(f) for f in fields], ("field", "value", "meaning"))


# -- convergence ------------------------------------------------------------------------------


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
    from tunelog.rules.untuned import answered_only_by_v01
    from tunelog.versions import ANSOR_VERSION, METASCHEDULE_TASK

    picked = "  (relay picks it)" if layer.winner is template else ""
    if picked and answered_only_by_v01(layer):  # an old TVM would; TVM >= 0.7 skips v0.1
        picked = "  (only an old TVM picks it: TVM >= 0.7 skips v0.1 records)"
    if template.workload.task_name == METASCHEDULE_TASK:
        picked = ""  # one MetaSchedule workload: no templates for relay to choose among
    elif picked and template.workload.version == ANSOR_VERSION:
        picked = "  (TVM uses it)"  # relay picks no auto_scheduler task: its key answers
    return f"{layer.group.label}  {layer.shapes}  {template.name}{picked}"


@app.command(epilog=example("tunelog curve 1x512 --target-key cpu --json"))
@handles_errors
@filter_options(*LAYER_FILTERS)
def curve(
    layer: LayerArgument,
    filters: Filters = NO_FILTERS,
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

    found, series = _layer_entries(layer, filters, api.curves)
    if as_json:
        emit_json([api.curve_as_dict(c) for c in series])
        return
    for number, one in enumerate(series):
        if number:
            echo("")
        _print_curve(found, one, improvements)


def _print_curve(layer: Layer, one: TemplateCurve, improvements: bool) -> None:
    """One template's curve: heading, summary line, then every trial (or the improving ones)."""
    summary = one.summary
    echo(_layer_template_title(layer, one.template))
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
        return
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
    """`curve --improvements`: the trials that set a new best, each with its change (the share of
    the previous best's latency it saved, as a negative percent)."""
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
            Column("change"),  # of the latency, over the previous best
        ),
        empty="no valid trial: no best to improve on",
    )


# -- knobs ------------------------------------------------------------------------------------


@app.command(epilog=example("tunelog knobs 1x512 --target-key cpu --knob tile_k"))
@handles_errors
@filter_options(*LAYER_FILTERS)
def knobs(
    layer: LayerArgument,
    knob: Annotated[
        str | None,
        typer.Option(
            "--knob",
            help="Only this knob (`layout`: the x86 NCHWc layouts).",
            callback=checked(functools.partial(optionvalues.not_empty, name="--knob")),
        ),
    ] = None,
    filters: Filters = NO_FILTERS,
    as_json: JsonOption = False,
) -> None:
    """Per knob and value of a layer's templates: trials, valid/failed, best and median cost."""
    from tunelog import api

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
        _print_knobs(found, entry)


def _print_knobs(layer: Layer, entry: TemplateKnobs) -> None:
    """One template's knob table: its heading, its coverage line, a row per knob value."""
    from tunelog.versions import ANSOR_VERSION

    if entry.template.workload.version == ANSOR_VERSION:  # steps, not knobs: say so, once
        echo(_layer_template_title(layer, entry.template))
        echo(
            "auto_scheduler records have no knobs (a config is a list of transform steps): "
            "`tunelog curve` shows its trials"
        )
        return
    cov = entry.coverage
    splits = ", ".join(f"{name} {n}" for name, n in cov.sp_factorisations.items())
    echo(_layer_template_title(layer, entry.template))
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
            ],
            empty="no rejected lines",
        )
        return
    lines = [
        f"{display_path(f.source.path)}:{r.line}: {r.reason}" for f in found for r in f.rejects
    ]
    if lines:
        echo_lines(lines)
    else:
        _err("no rejected lines")
