"""`diagnose`, `tasks`, `network`: build output, task lists and graph-tuner logs."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tunelog import optionvalues
from tunelog.cli.app import app, example
from tunelog.cli.cells import display_path, format_seconds
from tunelog.cli.emitters import emit_json, emit_table
from tunelog.cli.notes import WARNINGS_SHOWN
from tunelog.cli.options import (
    NETWORK_FILTERS,
    NO_FILTERS,
    JsonOption,
    filter_options,
)
from tunelog.cli.output import _err, echo
from tunelog.cli.running import checked, handles_errors, opened_store
from tunelog.cli.state import state
from tunelog.filters import Filters
from tunelog.tables import Column

if TYPE_CHECKING:
    from tunelog.diagnosis import Diagnosis
    from tunelog.network import GraphLog


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
    from tunelog.exceptions import NotBuildOutputError, TargetRequiredError

    text = _read_text(file, "a build's output (text)")
    with opened_store() as store:
        try:
            report = api.diagnose_untuned(store, text, target=target, show_path=display_path)
        except NotBuildOutputError as exc:  # named with the file given
            raise NotBuildOutputError(f"{display_path(file)}: {exc}") from None
        except TargetRequiredError as exc:  # a usage error, as `tasks` makes it
            raise typer.BadParameter(str(exc), param_hint="--target") from None
    for unread in report.unread[:WARNINGS_SHOWN]:
        _err(f"warning: {display_path(file)}:{unread.line}: message not read: {unread.reason}")
    if as_json:
        emit_json([d.as_dict() for d in report.diagnoses])
    else:
        from tunelog.tvmmessages import looks_like_task_list

        _print_diagnoses(report.diagnoses, task_list=looks_like_task_list(text))
    if check and report.unanswered:
        raise typer.Exit(1)


def _print_diagnoses(found: Sequence[Diagnosis], *, task_list: bool) -> None:
    """The diagnoses as a table, then their verdict (`task_list`: the input was one)."""
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
        empty="the task list is empty"
        if task_list
        else "no 'Cannot find tuning records' or 'Cannot find config' message found",
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
    from tunelog.exceptions import NotATaskListError
    from tunelog.layoutforms import workload_text

    text = _read_text(file, "a task list (JSON)")
    with opened_store() as store:
        try:
            found = api.tuning_progress(store, text, target, need_trials=need_trials)
        except NotATaskListError as exc:  # which file, since the error cannot know
            raise NotATaskListError(f"{display_path(file)}: {exc}") from None
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
    # A row is a layer with one config and layouts: a layer the graph tuner gave two (in two
    # places of the network) has two rows.
    distinct = len(
        {(layer.task_name, short_args(layer.task_name, layer.args)) for layer in graph.layers}
    )
    rows = "" if distinct == len(graph.layers) else f" in {len(graph.layers)} rows"
    lines = [
        f"\nnetwork conv time with the graph tuner's configs: {format_seconds(graph.total)} "
        f"({graph.occurrences} conv layer occurrences, {distinct} distinct{rows})"
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


def _read_text(file: str, what: str) -> str:
    """The text of FILE (stdin for `-`); InputNotFoundError saying what it should be."""
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text(errors="replace")
    except OSError as exc:
        from tunelog.exceptions import InputNotFoundError

        raise InputNotFoundError(
            f"cannot read {display_path(file)}: {exc.strerror or exc}; give the path of {what}, "
            "or - for standard input"
        ) from None
