"""Interrupts: SIGTERM said as Ctrl-C is, and steps that an interrupt must not split.

`timeout`, `kill` and a CI job cancelled send SIGTERM, whose default ends the process at once:
temporary files (an export's, a `--source` selection's) stayed behind and `watch` gave no
summary. `terminate_as_interrupt` makes it raise `Terminated`, a KeyboardInterrupt, so every
clean-up Ctrl-C runs runs for it too. `interrupts_deferred` holds both back over a few steps
that must happen together (the renames that put a MetaSchedule database's two files in place:
an interrupt between them left a new workload file beside an old records file, which TVM
refuses).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_HELD = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: stop as for Ctrl-C (exit status 143, the shell's 128 + 15)."""


def exit_status(interrupt: KeyboardInterrupt) -> int:
    """The exit status of a run stopped by `interrupt`: 130 for Ctrl-C, 143 for SIGTERM."""
    return 143 if isinstance(interrupt, Terminated) else 130


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def terminate_as_interrupt() -> None:
    """From now on, SIGTERM raises `Terminated` in the main thread (the console script's)."""
    signal.signal(signal.SIGTERM, _terminated)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C and SIGTERM arriving in the block take effect when it ends (only the main thread
    receives signals: elsewhere the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    # A handler not set from Python (getsignal: None) could not be put back: not held.
    previous = {sig: signal.getsignal(sig) for sig in _HELD}
    previous = {sig: handler for sig, handler in previous.items() if handler is not None}
    for sig in previous:
        signal.signal(sig, lambda signum, _: received.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if received:
            signal.raise_signal(received[0])  # to the handler it would have reached
