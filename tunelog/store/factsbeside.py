"""The facts of the workloads an import adds, computed in a worker process beside it.

A workload's facts (migration 12's columns, `store.workloadfacts.columns_of`) cost 60 us of
pure Python each: at 80k workloads in a million lines, a fifth of a `json.loads` loop over the
log, and a thread would only take turns with the parser under the GIL. Once the process has
added `INLINE_FIRST` workloads, each batch's new ones go to a worker process on another core; the
importer inserts them with NULL facts, and their facts are written in as the worker returns
them, all in the file's transaction. Whatever the worker does not return (it died, hung, or
could not be started) is left NULL, and `fill_workload_facts`, run before every commit,
computes it here: the stored facts are the same either way.

The worker is this module's `serve`, run by the same Python in isolated mode (`-I -c`, this
tunelog's directory first on its path), not a `multiprocessing` child: those run the caller's
main script again, which a script that imports logs through the Python API does not expect. It
greets with the directory it was imported from, then answers each JSON line of workload rows
with a JSON line of their facts on stdout, until a `null` line. An answer that is not what was
asked (another program, another tunelog, a start-up hook that prints) ends it, as a death does.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import sqlite3
import subprocess
import sys
import threading
import weakref
from collections import deque
from collections.abc import Sequence
from typing import IO, Any

from tunelog.inputs import has_spare_core
from tunelog.store.workloadfacts import columns_of

# A workload's own columns, as `ImportIds` inserts them: id, task_name, template_key, args,
# version, spelling.
WorkloadRow = tuple[int, str, str, str, str, str | None]

# The workloads whose facts the process computes itself before the worker is asked, in one
# file or many: logs of a few models never start a process (~0.1 s of the other core), and a
# directory of many small logs uses it as one large log would.
INLINE_FIRST = 1024
# Batches handed to the worker and not yet written in: when it falls behind (a log of one line
# per workload), the next batch is computed here instead of queueing without bound.
MAX_IN_FLIGHT = 32
# Seconds to wait for a batch's answer before the worker is given up on (a batch of 512
# workloads takes 30 ms): its batches are then computed here.
ANSWER_TIMEOUT = 60.0

_SET_FACTS_SQL = (
    "UPDATE workloads SET layer_key = ?, facts = ?, family = ?, shapes = ?, flops = ? WHERE id = ?"
)


def facts_of_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """`_SET_FACTS_SQL`'s parameters for these workload rows (`WorkloadRow`s)."""
    return [(*columns_of(*row), row[0]) for row in rows]


# This tunelog's package directory: the worker imports it from there, and says so first.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The worker's program: its module path (argv[1]) is `worker_path()`'s, not the one its own
# start-up would make (isolated mode: no current directory, no PYTHONPATH, no user site).
_WORKER_MAIN = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "import tunelog.store.factsbeside as m; m.serve()"
)


def worker_path() -> list[str]:
    """The worker's module path: this tunelog's directory first, then this process's path
    (where the dependencies were found: PYTHONPATH, the user site), without its current
    directory entry ('': the worker's current directory may hold anything)."""
    return [os.path.dirname(_PACKAGE), *(entry for entry in sys.path if entry)]


def _greeting(package: str) -> bytes:
    """The worker's first line: which tunelog answers."""
    return json.dumps(["tunelog", package]).encode() + b"\n"


def _well_formed(answer: Any) -> bool:
    """Whether a worker's line is [lease, facts rows] (`facts_of_rows`' shape)."""
    return (
        isinstance(answer, list)
        and len(answer) == 2
        and isinstance(answer[0], int)
        and isinstance(answer[1], list)
        and all(
            isinstance(row, list)
            and len(row) == 6
            and isinstance(row[5], int)
            and all(value is None or isinstance(value, str) for value in row[:5])
            for row in answer[1]
        )
    )


class _Worker:
    """The worker process, and the two threads that write its batches and read its answers
    (so the importer never blocks on a full pipe). One import at a time holds it (`lease`):
    answers are tagged with the lease they answer, so those of an import that failed halfway
    are dropped, not taken for the next one's."""

    def __init__(self, executable: str) -> None:
        self.process = subprocess.Popen(
            [executable, "-I", "-c", _WORKER_MAIN, json.dumps(worker_path())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # Its failures are handled here (the facts are computed here): no traceback of its
            # reaches the user's terminal, and no window opens for it on Windows.
            stderr=subprocess.DEVNULL,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
        self.batches: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        # Each batch's answer, as [lease, facts rows], in order; None once the worker ended.
        self.answers: queue.SimpleQueue[list[Any] | None] = queue.SimpleQueue()
        self.alive = True
        self._holder: weakref.ref[FactsBeside] | None = None
        self._leases = 0
        try:
            for name, target in (("writer", self._write), ("reader", self._read)):
                threading.Thread(target=target, daemon=True, name=f"tunelog-facts-{name}").start()
        except RuntimeError:  # no thread could be started
            self.give_up()
            raise

    def lease(self, holder: FactsBeside) -> int | None:
        """A lease number for `holder`, or None while another live import holds the worker."""
        current = self._holder() if self._holder is not None else None
        if current is not None and current is not holder:
            return None
        self._holder = weakref.ref(holder)
        self._leases += 1
        return self._leases

    def release(self, holder: FactsBeside) -> None:
        """Let another import use the worker."""
        if self._holder is not None and self._holder() is holder:
            self._holder = None

    def send(self, lease: int, rows: Sequence[WorkloadRow]) -> None:
        """Hand a batch over (its answer comes in order on `answers`)."""
        self.batches.put(json.dumps([lease, rows]).encode() + b"\n")

    def stop(self) -> None:
        """End the worker: no more batches. It is told to end, not left to see the end of its
        input: a child forked since holds the pipe open too."""
        self.alive = False
        self.batches.put(None)

    def give_up(self) -> None:
        """End a worker that stopped answering, or cannot be used."""
        self.alive = False
        self.process.kill()
        self.batches.put(None)  # the writer thread ends

    def _write(self) -> None:
        stdin: IO[bytes] = self.process.stdin  # type: ignore[assignment]
        try:
            while (batch := self.batches.get()) is not None:
                stdin.write(batch)
                stdin.flush()
            stdin.write(b"null\n")  # the end
            stdin.flush()
        except OSError:  # the worker ended: `_read` says so
            pass
        finally:
            _close(stdin)

    def _read(self) -> None:
        stdout: IO[bytes] = self.process.stdout  # type: ignore[assignment]
        try:
            # Another program (sys.executable is not always Python) or another tunelog, or
            # a start-up hook that prints: never asked.
            if stdout.readline() == _greeting(_PACKAGE):
                for line in stdout:
                    answer = json.loads(line)
                    if not _well_formed(answer):
                        break
                    self.answers.put(answer)
        except (OSError, ValueError):
            pass
        finally:
            self.answers.put(None)
            if self.alive:  # it ended, or said what it should not: never to be asked again
                self.give_up()
            _close(stdout)
            self.process.wait()


def _close(pipe: IO[bytes]) -> None:
    with contextlib.suppress(OSError):  # a write left in its buffer to a worker that ended
        pipe.close()


_worker: _Worker | None = None
_worker_failed = False  # it could not be started, or ended early: compute here from then on
_worker_lock = threading.Lock()
_computed_here = 0  # workloads whose facts this process computed itself (see INLINE_FIRST)


def _forget_worker() -> None:
    """In a forked child: the parent's worker and threads are the parent's; the child starts
    its own if it needs one."""
    global _worker, _worker_lock
    _worker = None
    _worker_lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # not on Windows, which never forks
    os.register_at_fork(after_in_child=_forget_worker)


@atexit.register
def _stop_worker() -> None:
    """Let the worker end with this process (and be counted in its CPU time)."""
    if _worker is not None:
        _worker.stop()
        try:
            _worker.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            _worker.give_up()


def _python() -> str | None:
    """This Python's executable, if it is one: an embedding program's (uWSGI, Blender) is not
    started again."""
    executable = sys.executable
    name = os.path.basename(executable or "").lower()
    return executable if name.startswith(("python", "pypy")) else None


def _leased_worker(holder: FactsBeside) -> tuple[_Worker, int] | None:
    """The worker process (started on first use) and a lease of it for `holder`; None if it
    cannot run or another import holds it."""
    global _worker, _worker_failed
    with _worker_lock:
        if _worker is not None and not _worker.alive:
            _worker, _worker_failed = None, True
        if _worker is None and not _worker_failed:
            executable = _python()
            try:
                if executable is None:
                    raise OSError("no Python executable to start")
                _worker = _Worker(executable)
            except (OSError, RuntimeError):  # no process, or no thread, could be started
                _worker_failed = True
        if _worker is None:
            return None
        lease = _worker.lease(holder)
        return None if lease is None else (_worker, lease)


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """The worker's loop: its greeting, then a JSON line of [lease, workload rows] in, a JSON
    line of [lease, their facts] out, until a `null` line."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    stdout.write(_greeting(_PACKAGE))
    stdout.flush()
    for line in stdin:
        request = json.loads(line)
        if request is None:
            return
        lease, rows = request
        stdout.write(json.dumps([lease, facts_of_rows(rows)]).encode() + b"\n")
        stdout.flush()


class FactsBeside:
    """The facts of one file's new workloads: computed here, or by the worker process."""

    def __init__(self, conn: sqlite3.Connection, *, beside: bool | None = None) -> None:
        """`conn`: the import's connection; `beside`: whether the worker may be asked
        (default: when this process may run on more than one CPU)."""
        self.conn = conn
        self._beside = has_spare_core() if beside is None else beside
        # The workload ids of each batch handed over and not yet answered, in order.
        self._in_flight: deque[list[int]] = deque()
        self._worker: _Worker | None = None
        self._lease = 0
        self._leased: _Worker | None = None  # released at the end, even if given up on
        self._asked = False  # for a lease (once: if none was given, the worker is not asked)

    def inserted_rows(self, rows: Sequence[WorkloadRow]) -> list[tuple[Any, ...]]:
        """The `workloads` rows to insert for these new workloads (own columns, then
        `FACT_COLUMNS`): with their facts, or with NULL facts when the worker computes them
        (written in by a later call or `finish`, once the rows are inserted)."""
        self._write_answers(wait=False)
        if self._hand_over(rows):
            return [(*row, None, None, None, None, None) for row in rows]
        global _computed_here
        _computed_here += len(rows)
        return [(*row, *columns_of(*row)) for row in rows]

    def finish(self) -> None:
        """Write in the facts of every batch handed over (call before the commit)."""
        self._write_answers(wait=True)
        self.release()

    def release(self) -> None:
        """Let another import use the worker (at once, also when this import failed: its late
        answers carry its lease, and are dropped)."""
        if self._leased is not None:
            self._leased.release(self)
            self._leased = None

    def _hand_over(self, rows: Sequence[WorkloadRow]) -> bool:
        if not rows or not self._beside or _computed_here < INLINE_FIRST:
            return False
        if len(self._in_flight) >= MAX_IN_FLIGHT:
            return False
        if not self._asked:
            self._asked = True
            leased = _leased_worker(self)
            if leased is not None:
                self._worker, self._lease = leased
                self._leased = self._worker
        if self._worker is None or not self._worker.alive:
            return False
        self._worker.send(self._lease, rows)
        self._in_flight.append([row[0] for row in rows])
        return True

    def _write_answers(self, *, wait: bool) -> None:
        """Write in the facts the worker returned (every batch's, `wait`), in order."""
        worker = self._worker
        while self._in_flight and worker is not None:
            try:
                answer = worker.answers.get(block=wait, timeout=ANSWER_TIMEOUT if wait else None)
            except queue.Empty:
                if not wait:
                    return
                answer = None  # hung: given up on, its batches computed here
                worker.give_up()
            if answer is not None and answer[0] != self._lease:
                continue  # a batch of an import that failed halfway
            if answer is None or [row[5] for row in answer[1]] != self._in_flight[0]:
                # The worker ended, or answered for other workloads: what it did not answer
                # stays NULL (computed before the commit), and it is not asked again.
                worker.give_up()
                self._in_flight.clear()
                self._worker = None
                return
            self._in_flight.popleft()
            self.conn.executemany(_SET_FACTS_SQL, answer[1])
