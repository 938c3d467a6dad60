"""The console script: builds only the command a run names."""

from __future__ import annotations

import copy
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer
from typer.models import CommandInfo

from tunelog.cli.app import GLOBAL_OPTIONS, _silence_stdout, app

if TYPE_CHECKING:
    pass


def command_name(info: CommandInfo) -> str:
    """The name a registered command answers to (typer's own rule when it has none)."""
    if info.name:
        return info.name
    assert info.callback is not None  # every command here is a decorated function
    return typer.main.get_command_name(info.callback.__name__)


class _ListedOnly(Exception):
    """click chose a stand-in of the command listing (see `_listing`): run the real app."""


def _stand_in(info: CommandInfo) -> CommandInfo:
    """`info` with a callback of no parameters: the same name and help in a listing."""
    assert info.callback is not None  # every command here is a decorated function

    def stand_in() -> None:
        raise _ListedOnly

    stand_in.__name__ = info.callback.__name__
    stand_in.__doc__ = info.callback.__doc__
    listed = copy.copy(info)
    listed.callback = stand_in
    # Whatever follows the name reaches the stand-in, which hands it all to the real command.
    listed.add_help_option = False
    listed.context_settings = {"ignore_unknown_options": True, "allow_extra_args": True}
    return listed


def _listing() -> typer.Typer:
    """`app` as its help sees it: every command a stand-in without parameters.

    The group's help and its unknown-command errors need each command's name and help only;
    building the real commands read 17 signatures (about a fifth of `tunelog --help`). A
    stand-in never runs a command: if click ever picks one, `run` starts the real app.
    """
    listing = copy.copy(app)
    listing.registered_commands = [_stand_in(info) for info in app.registered_commands]
    return listing


def app_for(args: Sequence[str]) -> typer.Typer:
    """A copy of `app` holding only what the run `args` needs (same options, help and errors).

    typer turns every registered command into a click command on each run, reading each
    function's signature and evaluating its annotations: a fifth of a small command's start-up.
    A run that names a command after global options only (`--db PATH`, `--wide`) needs that
    one command; anything else (no command, an unknown one, `-h`/`--version` before it: the
    group's help lists every command) gets the listing (`_listing`).
    """
    i = 0
    while i < len(args):
        key, value, _ = args[i].partition("=")
        if key not in GLOBAL_OPTIONS:
            break
        i += 2 if GLOBAL_OPTIONS[key] and not value else 1  # `--db=PATH`: one argument
    if i >= len(args):
        return _listing()
    name = args[i]
    commands = [c for c in app.registered_commands if command_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return _listing()
    reduced = copy.copy(app)
    reduced.registered_commands = commands
    reduced.registered_groups = groups
    return reduced


def run() -> None:
    """Console-script entry point."""
    try:
        try:
            app_for(sys.argv[1:])()
        except _ListedOnly:
            app()  # a command named in a way app_for does not foresee (`-- best`)
    except BrokenPipeError:  # pragma: no cover - a pipe closed outside any command
        _silence_stdout()
        sys.exit(0)
