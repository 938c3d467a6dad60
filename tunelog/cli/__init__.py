"""The `tunelog` command: a thin typer layer that formats what the library returns.

stdout carries only tables or JSON (safe for pipes); progress, warnings and errors go to stderr.
A user's mistake ends in one `Error: ...` line and exit code 1 (usage errors: 2).

One module per group of commands (`importing`, `sources`, `queries`, `writing`, `diagnosing`,
`trials`, `watching`); the plumbing they share: `app` (the typer app), `running` (errors, the
store), `options` (options several commands take), `output`, `cells` and `emitters` (what
stdout and stderr get).
"""

from tunelog.cli import diagnosing, importing, queries, sources, trials, watching, writing
from tunelog.cli.app import app, hoist_global_options
from tunelog.cli.cells import display_path, format_seconds
from tunelog.cli.emitters import _json_text, emit_json, emit_table
from tunelog.cli.output import echo, shown
from tunelog.cli.running import handles_errors, opened_store
from tunelog.cli.startup import app_for, command_name, run
from tunelog.cli.watching import _watch_table

__all__ = [
    "COMMAND_ORDER",
    "_json_text",
    "_watch_table",
    "app",
    "app_for",
    "display_path",
    "echo",
    "emit_json",
    "emit_table",
    "format_seconds",
    "handles_errors",
    "hoist_global_options",
    "opened_store",
    "run",
    "shown",
]
# The command modules register their commands on `app` when imported.
_COMMANDS = (diagnosing, importing, queries, sources, trials, watching, writing)

# The order `tunelog --help` lists the commands in.
COMMAND_ORDER = (
    "import",
    "stats",
    "best",
    "export",
    "workloads",
    "untuned",
    "diagnose",
    "tasks",
    "network",
    "errors",
    "explain",
    "curve",
    "knobs",
    "report",
    "rejects",
    "export-metaschedule",
    "merge",
    "diff",
    "watch",
)
app.registered_commands.sort(key=lambda info: COMMAND_ORDER.index(command_name(info)))
