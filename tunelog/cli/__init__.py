"""The `tunelog` command: a thin typer layer that formats what the library returns.

stdout carries only tables or JSON (safe for pipes); progress, warnings and errors go to stderr.
A user's mistake ends in one `Error: ...` line and exit code 1 (usage errors: 2).

One module per group of commands (`importing`, `sources`, `queries`, `writing`, `combining`,
`diagnosing`, `network`, `trials`, `watching`), each imported when a run names one of its commands
(`startup.COMMAND_MODULES`; `load_commands()` registers them all on `app`, for `--help` or a
caller that runs `app` itself); the plumbing they share: `app` (the typer app), `running`
(errors, the store), `options` (options several commands take), `output`, `cells` and
`emitters` (what stdout and stderr get).
"""

from tunelog.cli.app import app, hoist_global_options
from tunelog.cli.cells import display_path, format_seconds
from tunelog.cli.emitters import _json_text, emit_json, emit_table
from tunelog.cli.output import echo, shown
from tunelog.cli.running import handles_errors, opened_store
from tunelog.cli.startup import COMMAND_MODULES, app_for, load_commands, run

__all__ = [
    "COMMAND_MODULES",
    "_json_text",
    "app",
    "app_for",
    "display_path",
    "echo",
    "emit_json",
    "emit_table",
    "format_seconds",
    "handles_errors",
    "hoist_global_options",
    "load_commands",
    "opened_store",
    "run",
    "shown",
]
