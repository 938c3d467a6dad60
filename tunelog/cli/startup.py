"""The console script: a run that names a command loads and builds that command alone.

typer turns every registered command into a click command on each run, reading each function's
signature and evaluating its annotations: 13.5 ms of CPU for all 19, 1.4 ms for `best` alone
(BENCHMARKS.md), more than the start-up budget leaves. A run that names
one command after global options only (`--db PATH`, `--wide`) gets a copy of `app` holding that
command; any other run (no command, an unknown one, `-h` or `--version` first: the group's help
lists every command) gets `app` itself. Likewise only the module of the named command is
imported (`COMMAND_MODULES`): a listing does not load the code of the other 18 commands.
"""

from __future__ import annotations

import copy
import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer

from tunelog.cli.app import GLOBAL_OPTIONS, _silence_stdout, app

if TYPE_CHECKING:
    from typer.models import CommandInfo


# Every command (and the `sources` group) -> the module under tunelog.cli that registers it on
# `app` when imported, in the order `tunelog --help` lists them.
COMMAND_MODULES = {
    "import": "importing",
    "stats": "sources",
    "best": "queries",
    "export": "writing",
    "workloads": "queries",
    "untuned": "queries",
    "diagnose": "diagnosing",
    "tasks": "diagnosing",
    "network": "network",
    "errors": "queries",
    "explain": "trials",
    "curve": "trials",
    "knobs": "trials",
    "report": "writing",
    "rejects": "trials",
    "export-metaschedule": "writing",
    "merge": "combining",
    "diff": "combining",
    "watch": "watching",
    "sources": "sources",
}


def load_commands(names: Sequence[str] | None = None) -> typer.Typer:
    """`app` with these commands registered (None: every command), in `--help` order.

    Importing a command module registers its commands; a module is imported once.
    """
    wanted = COMMAND_MODULES if names is None else names
    for module in dict.fromkeys(COMMAND_MODULES[name] for name in wanted):
        importlib.import_module(f"tunelog.cli.{module}")
    order = list(COMMAND_MODULES)
    app.registered_commands.sort(key=lambda info: order.index(command_name(info)))
    return app


def command_name(info: CommandInfo) -> str:
    """The name a registered command answers to (typer's own rule when it has none)."""
    if info.name:
        return info.name
    assert info.callback is not None  # every command here is a decorated function
    return typer.main.get_command_name(info.callback.__name__)


def app_for(args: Sequence[str]) -> typer.Typer:
    """`app`, or a copy of it holding only the command the run `args` names (same options,
    help and errors)."""
    i = 0
    while i < len(args):
        key, value, _ = args[i].partition("=")
        if key not in GLOBAL_OPTIONS:
            break
        i += 2 if GLOBAL_OPTIONS[key] and not value else 1  # `--db=PATH`: one argument
    if i >= len(args) or args[i] not in COMMAND_MODULES:
        return load_commands()
    name = args[i]
    load_commands([name])
    commands = [c for c in app.registered_commands if command_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    reduced = copy.copy(app)
    reduced.registered_commands = commands
    reduced.registered_groups = groups
    return reduced


def run() -> None:
    """Console-script entry point."""
    try:
        app_for(sys.argv[1:])()
    except BrokenPipeError:  # pragma: no cover - a pipe closed outside any command
        _silence_stdout()
        sys.exit(0)
