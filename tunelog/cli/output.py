"""Text for the terminal and the streams: control characters escaped, stderr notes."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable

import typer

from tunelog import optionvalues
from tunelog.cli.state import state
from tunelog.escaping import shown as shown  # the rule lives there; commands import it here


def echo(text: str = "") -> None:
    """One line on stdout, control characters escaped, line breaks too: a path or log text in
    it stays on its line (`echo_lines` writes several)."""
    typer.echo(shown(text))


def echo_lines(lines: Iterable[str]) -> None:
    """Lines on stdout, each escaped as `echo` escapes one."""
    typer.echo("\n".join(shown(line) for line in lines))


def echo_shown(text: str) -> None:
    """Text made of `shown` pieces and the line breaks between them, on stdout as it is.

    A table page is that (its cells and headers each escaped, `emitters._page_cells`): megabytes
    at 10,000 rows, which `echo` would check character by character again, and click again
    for terminal escapes, which `shown` left none of.
    """
    sys.stdout.write(text + "\n")
    sys.stdout.flush()  # as `echo` does: a page reaches a pipe as soon as it is made


def _err(message: str, *, lines: bool = False) -> None:
    """A message on stderr, control characters escaped, line breaks too unless `lines` (a
    message of several lines: a path or log text in it is escaped by its maker)."""
    sys.stderr.write(shown(message, keep_newlines=lines) + "\n")
    sys.stderr.flush()


def terminal_width() -> int | None:
    """Columns to fit tables into: $COLUMNS, else the terminal's; None for --wide or a pipe."""
    if state.wide:
        return None
    columns = optionvalues.columns(os.environ.get("COLUMNS", ""))
    if columns is not None:
        return columns
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None  # a file or a pipe: whole lines for grep and friends
