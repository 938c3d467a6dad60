"""`tunelog sources` (and `sources remove`) and `tunelog stats`: what the database holds."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from tunelog import optionvalues
from tunelog.cli.app import app, example
from tunelog.cli.cells import _template_text, display_path
from tunelog.cli.emitters import emit_json, emit_table
from tunelog.cli.options import JsonOption
from tunelog.cli.output import _err, echo, echo_lines
from tunelog.cli.running import checked, handles_errors, opened_store
from tunelog.tables import Column

if TYPE_CHECKING:
    from tunelog.models import SourceImport


_NO_SOURCE = "no source imported yet (tunelog import LOGS)"


# -- listings ---------------------------------------------------------------------------------


_SOURCES_COLUMNS = (
    Column("id"),
    Column("path", path=True),
    Column("label", rank=1),
    Column("lines", rank=2),
    Column("records"),
    Column("dup", rank=2),
    # The rest of the line accounting: lines = records + dup + comments + blank + rejected
    # (plus the records --repair found run together on one line: the note, `--json`'s split).
    Column("comments", rank=3),
    Column("blank", rank=3),
    Column("rejected"),
    Column("sha256", rank=4),
    Column("imported", rank=3),
    Column("imports", rank=3),
    Column("merged from", rank=2),
    Column("note", rank=2),  # `--repair`'s (`rules.lineaccounting.repaired_text`), if any
)


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
    from tunelog.rules.lineaccounting import repaired_text

    with opened_store() as store:
        rows = store.sources()
    if as_json:
        emit_json([s.model_dump() for s in rows], empty=_NO_SOURCE)
        return
    table = [
        [
            s.id,
            display_path(s.path),
            s.label or "",
            s.lines,
            s.records,
            s.duplicates,
            s.comments,
            s.blank,
            s.rejected,
            s.sha256[:12],
            s.imported_at,
            _imports_text(s.imports),
            s.merged_from or "",
            repaired_text(s.repaired, s.split),
        ]
        for s in rows
    ]
    columns: tuple[Column, ...] = _SOURCES_COLUMNS
    if not any(row[-1] for row in table):  # the note column only where a file has one
        table = [row[:-1] for row in table]
        columns = columns[:-1]
    emit_table(table, columns, empty=_NO_SOURCE)


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
    by_error = result.by_error
    if as_json:
        emit_json(result.model_dump())
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
            echo_lines(["", f"{title}:"])
            emit_table([[row[h] for h in headers] for row in rows], headers)


@sources_app.command("remove")
@handles_errors
def sources_remove(
    ref: Annotated[
        str,
        typer.Argument(
            help="The source's id (`3`, `#3`), else its label, else a path it was imported from.",
            callback=checked(functools.partial(optionvalues.source_ref, name="REF")),
        ),
    ],
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Only list what would be removed (a label names all its files)."
        ),
    ] = False,
) -> None:
    """Remove a source as if it had never been imported (its records no other file held go)."""
    from tunelog import api

    if dry_run:
        with opened_store() as store:
            chosen = api.sources_to_remove(store, ref)
        echo_lines(
            f"would remove #{s.id} {display_path(s.path)}{f' ({s.label})' if s.label else ''}: "
            f"it held {s.held} record line(s)"
            for s in chosen
        )
        _err("nothing removed (--dry-run); a record a remaining source also holds would stay")
        return
    with opened_store() as store:
        removed = api.remove_sources(store, ref)
    for source in removed:
        label = f" ({source.label})" if source.label else ""
        _err(f"removed #{source.id} {source.path}{label}: {source.records} record(s)")
