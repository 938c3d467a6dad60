"""What every command runs inside: domain errors as one line, the store it opens."""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import typer

from tunelog.cli.output import _err, shown
from tunelog.cli.state import state
from tunelog.exceptions import AmbiguousLayerError, TunelogError
from tunelog.interrupts import exit_status

if TYPE_CHECKING:
    from tunelog.store import Store


P = ParamSpec("P")
R = TypeVar("R")


def checked(check: Callable[[Any], object]) -> Callable[[Any], Any]:
    """A typer callback running one of `tunelog.optionvalues`' checks on an option's value:
    a value it refuses is a usage error (exit 2) saying what is allowed."""

    def callback(value: Any) -> Any:
        if value is not None:
            from tunelog.exceptions import InvalidValueError

            try:
                check(value)
            except InvalidValueError as exc:
                raise typer.BadParameter(str(exc)) from None
        return value

    return callback


# What a write to a full disk fails with: naming no file, it is the output's (stdout).
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def handles_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn domain errors into one `Error:` line and exit 1, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            raise  # not an error: TunelogGroup.invoke ends quietly
        except AmbiguousLayerError as exc:  # its candidates a line each, each line escaped
            _err("Error: " + "\n".join(shown(line) for line in exc.lines), lines=True)
            raise typer.Exit(1) from None
        except TunelogError as exc:
            _err(f"Error: {exc}")  # one line, whatever a path or log text in it holds
            raise typer.Exit(1) from None
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if exc.filename is None and exc.errno in _FULL:  # no file named: stdout is full
                _err(f"Error: cannot write the output: {reason}; check the disk it goes to")
            else:
                _err(f"Error: {reason}: {exc.filename or ''}".rstrip(": "))
            raise typer.Exit(1) from None
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (tunelog.interrupts)
            # True whenever the interrupt came (merge says its own): an output is renamed into
            # place whole or not at all; a file whose import had committed is whole in the
            # database, one that had not left nothing.
            _err(
                "Interrupted: no file was left half-written (what went to standard output "
                "stops where it was)"
                + (
                    " (an import keeps the files it had finished: run it again to add the rest)"
                    if func.__name__ == "import_command"
                    else ""
                )
            )
            raise typer.Exit(exit_status(exc)) from None

    return wrapper


@contextmanager
def opened_store(*, create: bool = False) -> Iterator[Store]:
    """The database named by --db, TUNELOG_DB or ./tunelog.db.

    Only commands that add data pass `create`: a read command on a missing file says so
    instead of answering from a new, empty database.
    """
    from tunelog.store import Store

    with Store(state.db_path, create=create) as store:  # SQLite's errors as domain errors
        yield store
