"""`network`: a graph tuner's output beside the kernel log, or the database's network totals."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tunelog.cli.app import app, example
from tunelog.cli.cells import display_path, format_seconds
from tunelog.cli.emitters import emit_json, emit_table
from tunelog.cli.notes import WARNINGS_SHOWN
from tunelog.cli.options import NETWORK_FILTERS, NO_FILTERS, JsonOption, filter_options
from tunelog.cli.output import _err, echo, echo_lines
from tunelog.cli.running import handles_errors, opened_store
from tunelog.cli.state import state
from tunelog.filters import Filters
from tunelog.tables import Column

if TYPE_CHECKING:
    from tunelog.network import GraphLog


@app.command(epilog=example("tunelog network resnet_50.graph.log", "tunelog network"))
@handles_errors
@filter_options(*NETWORK_FILTERS)
def network(
    graph_log: Annotated[
        str | None,
        typer.Argument(
            metavar="[GRAPH_LOG]",
            help="A graph tuner's output log; without it, totals of the database's winners.",
        ),
    ] = None,
    filters: Filters = NO_FILTERS,
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
        _network_totals(filters, as_json)
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
    for warning in graph.kernel_warnings:  # the kernel bests beside the graph's latencies
        _err(f"warning: kernel best: {warning}")
    if as_json:
        emit_json(_network_json(graph))
        return
    _print_network(graph)


_ONCE_NOTE = (
    "each layer counted once: a kernel log cannot count occurrences "
    "(a graph-tuner output can: tunelog network GRAPH_LOG)"
)


_NO_TUNED_LAYER = "no tuned layer matches (see `tunelog workloads`)"


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
            ],
            empty=_NO_TUNED_LAYER,
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
        empty=_NO_TUNED_LAYER,
    )
    for t in totals:
        untuned = f", {t.untuned} untuned layer(s) not counted" if t.untuned else ""
        # No layer summed: no total (not a network of 0.0 us).
        total = f"total {format_seconds(t.total)}" if t.layers else "no total"
        echo(f"{t.group.label}: {total} over {len(t.layers)} layer(s){untuned}; {_ONCE_NOTE}")


def _network_json(graph: GraphLog) -> dict[str, object]:
    return {
        "occurrences": graph.occurrences,
        "doubts": graph.doubts,
        "kernel_warnings": graph.kernel_warnings,
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
                _layout_text(layer.layouts),
                format_seconds(layer.latency),
                f"{100 * graph.share(layer):.1f} %",
                format_seconds(layer.kernel_best) if layer.kernel_best is not None else "",
                _per_layout_text(layer.best_per_layout),
            )
            for layer in graph.layers
        ],
        _NETWORK_HEADERS,
        empty="no AutoTVM record in the graph log",
    )
    if not graph.layers:
        return
    # A row is a layer with one config and layouts: a layer the graph tuner gave two (in two
    # places of the network) has two rows.
    distinct = graph.distinct_layers
    rows = "" if distinct == len(graph.layers) else f" in {len(graph.layers)} rows"
    lines = [
        "",
        f"network conv time with the graph tuner's configs: {format_seconds(graph.total)} "
        f"({graph.occurrences} conv layer occurrences, {distinct} distinct{rows})",
    ]
    if graph.kernel_total is not None:
        lines.append(
            f"with each layer's fastest kernel: {format_seconds(graph.kernel_total)}; the "
            "difference pays for layout transforms between layers, which no log records"
        )
    else:
        missing = sum(layer.kernel_best is None for layer in graph.layers)
        which = (
            "these layers"
            if missing == len(graph.layers)
            else f"the {missing} of {len(graph.layers)} rows without a kernel best"
        )
        lines.append(
            f"import the kernel log of {which} (--db) to compare with each layer's fastest "
            "kernel; a kernel log alone cannot count occurrences"
        )
    echo_lines(lines)
