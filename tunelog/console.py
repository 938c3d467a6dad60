"""The `tunelog` command's first code (the console script, `python -m tunelog`): what must hold
before anything else is loaded, then `tunelog.cli.run`.

- SIGTERM (`timeout`, `kill`, a cancelled CI job) stops as Ctrl-C does (`tunelog.interrupts`).
- Ctrl-C while Python still loads the command, before any command catches it, ends in one
  line, not a traceback from the import machinery.
- A standard stream the caller closed (`>&-`, `<&-`) is the null device, as Python's `print`
  treats a closed stdout: an import still ends with exit 0, not a traceback after its commit.
"""

from __future__ import annotations

import os
import sys
from typing import IO


def main() -> None:
    """Run the `tunelog` command line (exits with its status)."""
    from tunelog.interrupts import exit_status, terminate_as_interrupt

    try:
        _closed_streams_opened()
        terminate_as_interrupt()
        from tunelog.cli.startup import run

        run()
    except KeyboardInterrupt as exc:  # raised before a command could catch it
        sys.stderr.write("Interrupted\n")
        sys.exit(exit_status(exc))


def _closed_streams_opened() -> None:
    """Give each standard stream the caller closed the null device (the lowest free file
    descriptor: its own number, so a child process inherits a valid one too)."""
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            stream: IO[str] = open(os.open(os.devnull, os.O_RDWR), mode)  # noqa: SIM115
            setattr(sys, name, stream)
