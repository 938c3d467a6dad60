"""Commands that write files: `export`, `export-metaschedule`, `report`."""

from __future__ import annotations

import functools
import shlex
from typing import Annotated

import typer

from tunelog import optionvalues
from tunelog.cli.app import app, example
from tunelog.cli.options import (
    NO_FILTERS,
    TopKOption,
    filter_options,
)
from tunelog.cli.output import _err
from tunelog.cli.running import checked, handles_errors, opened_store
from tunelog.filters import Filters

# -- export -----------------------------------------------------------------------------------


@app.command(epilog=example("tunelog export --for-target 'cuda -model=t4' t4.log"))
@handles_errors
@filter_options()
def export(
    out: Annotated[
        str,
        typer.Argument(
            help="Output log file, or - for stdout.", callback=checked(optionvalues.output_path)
        ),
    ],
    top_k: TopKOption = 1,
    filters: Filters = NO_FILTERS,
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
    for warning in report.load_warnings:  # the cross-machine ones grouped below
        _err(f"warning: {warning}")
    if report.cross_machine:
        from tunelog.cli.notes import _warn_all

        asked = shlex.quote(filters.for_target or "")
        _warn_all(
            [w for w, count in report.cross_machine.items() for _ in range(count)],
            listed_by=f"tunelog best --for-target {asked} --json",
        )
    if out != "-":
        _err(f"wrote {report.written} record(s) to {out}")


# -- report -----------------------------------------------------------------------------------


@app.command(epilog=example("tunelog report --for-target 'cuda -model=t4' t4.html"))
@handles_errors
@filter_options()
def report(
    out: Annotated[
        str,
        typer.Argument(
            metavar="OUT",
            help="The HTML file to write (- for stdout).",
            callback=checked(optionvalues.output_path),
        ),
    ],
    filters: Filters = NO_FILTERS,
    force: Annotated[bool, typer.Option(help="Replace OUT if it exists.")] = False,
) -> None:
    """One self-contained HTML page: summary, layers, charts, failures (opens offline)."""
    from tunelog import api  # plotly is imported by api.write_report, only here

    with opened_store() as store:
        written = api.write_report(store, out, filters, force=force)
    if out != "-":
        _err(
            f"wrote {out} ({written.bytes / 1e6:.1f} MB): {written.layers} layer(s), "
            f"{written.untuned} untuned, {written.failures} template(s) with failures"
        )


# -- metaschedule -------------------------------------------------------------------------------


@app.command("export-metaschedule", epilog=example("tunelog export-metaschedule pruned_db/"))
@handles_errors
@filter_options()
def export_metaschedule(
    directory: Annotated[
        str,
        typer.Argument(
            help="Directory for the pruned database.",
            callback=checked(functools.partial(optionvalues.output_path, name="DIRECTORY")),
        ),
    ],
    top_k: TopKOption = 1,
    filters: Filters = NO_FILTERS,
    force: Annotated[bool, typer.Option(help="Replace the database files if they exist.")] = False,
) -> None:
    """Write a pruned MetaSchedule database: the best valid record of each workload (as
    `export --metaschedule DIR`, with the same filters and --top-k)."""
    _export_metaschedule(directory, force, filters, top_k)


def _export_metaschedule(directory: str, force: bool, filters: Filters, top_k: int) -> None:
    from tunelog import api

    if directory == "-":
        raise typer.BadParameter(
            "a MetaSchedule database is two files: give a directory to write them in, not - "
            "(stdout)",
            param_hint="OUT",
        )
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
