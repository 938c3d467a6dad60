"""The `tunelog` typer app: global options anywhere, plain help, quiet broken pipes."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperArgument, TyperGroup, TyperOption

from tunelog import optionvalues
from tunelog.cli.output import echo
from tunelog.cli.running import checked
from tunelog.cli.state import DEFAULT_DB, state

if TYPE_CHECKING:
    from typer import _click as click  # typer < 0.29 vendors click: its classes, not click's


# -- how every command behaves: global options anywhere, plain help, quiet broken pipes --------

# Options of the whole program that users also type after the command (`best --db x.db`):
# moved in front of it before parsing, so every command accepts them, present and future.
GLOBAL_OPTIONS = {"--db": True, "--wide": False}  # name -> takes a value

EXIT_CODES = """\b
Exit codes: 0 done, also when a listing is empty (a note on stderr says so);
1 an error (one "Error:" line on stderr), nothing to export, a --strict roll-back,
or untuned layers under `untuned --check`; 2 a usage error.
Trials: every measurement (valid or failed) of a template's workload on targets with
the same keys and -model as the row's target."""


def hoist_global_options(args: Sequence[str]) -> list[str]:
    """`args` with the GLOBAL_OPTIONS given after the command moved in front of it."""
    args = list(args)
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        i += 2 if GLOBAL_OPTIONS.get(args[i]) else 1
    front, rest, moved = args[:i], args[i:], []
    kept: list[str] = []
    j = 0
    while j < len(rest):
        arg = rest[j]
        if arg == "--":
            kept += rest[j:]
            break
        name = arg.split("=", 1)[0]
        if j > 0 and name in GLOBAL_OPTIONS:
            takes_value = GLOBAL_OPTIONS[name] and "=" not in arg
            moved += rest[j : j + 1 + takes_value]
            j += 1 + takes_value
            continue
        kept.append(arg)
        j += 1
    return front + moved + kept


class _PlainArgument(TyperArgument):
    """An argument shown as `PATH...` / `[SOURCE]` in help, not `{paths}...`."""

    def make_metavar(self, ctx: click.Context, *, usage: bool = False) -> str:
        var = self.metavar or (self.name or "").upper()
        if self.nargs != 1:
            var += "..."
        return f"[{var}]" if usage and not self.required else var


def plain_help(command: click.Command) -> None:
    """Plain metavars (`--top-k TOP_K`, not `<int range>`) and flags without `--no-` twins."""
    for param in command.params:
        if isinstance(param, TyperArgument):
            param.__class__ = _PlainArgument
        elif isinstance(param, TyperOption):
            if param.is_flag:
                param.secondary_opts = []
                param.show_default = False
            elif param.metavar is None:
                param.metavar = (param.name or "value").upper()
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            plain_help(sub)


def _silence_stdout() -> None:
    """The reader left (`| head`): send what is still buffered nowhere, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file (tests capture stdout): nothing is flushed to a closed pipe


class TunelogGroup(TyperGroup):
    """The `tunelog` command group: what every command gets without asking."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_help(self)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(args))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # inside the guard: a closed pipe shows up at the last flush
            return result
        except BrokenPipeError:
            # `tunelog stats | head`: the reader has what it wanted; that is success.
            _silence_stdout()
            raise typer.Exit(0) from None


def example(*commands: str) -> str:
    """A command's help epilog: its example(s), kept on their own lines."""
    return "\b\nExample:\n" + "\n".join(f"  {c}" for c in commands)


app = typer.Typer(
    name="tunelog",
    cls=TunelogGroup,
    help=(
        "Import, query and clean Apache TVM tuning logs: AutoTVM, auto_scheduler, MetaSchedule "
        "(no TVM needed)."
    ),
    epilog=EXIT_CODES,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click messages: usage errors stay a few grep-able lines
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from tunelog import __version__

        echo(f"tunelog {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            envvar="TUNELOG_DB",
            metavar="PATH",
            help="Database file (default: ./tunelog.db; env TUNELOG_DB); before or after the "
            "command. import, watch and merge create it.",
            show_default=False,
        ),
    ] = None,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Print every column at full width (default on a terminal: lower-priority "
            "columns left out and long cells wrapped to fit its width; a pipe gets full width).",
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="Print the version."
        ),
    ] = False,
) -> None:
    """tunelog: TVM tuning logs (AutoTVM, auto_scheduler, MetaSchedule) in SQLite."""
    state.db_path = db or DEFAULT_DB
    state.wide = wide
    checked(optionvalues.columns)(os.environ.get("COLUMNS", ""))  # before any work is done
