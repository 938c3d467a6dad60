"""The facts of the workloads an import adds, computed in a worker process beside it.

A workload's facts (migration 12's columns, `store.workloadfacts.columns_of`) cost 60 us of
pure Python each: at 80k workloads in a million lines, a fifth of a `json.loads` loop over the
log, and a thread would only take turns with the parser under the GIL. Once the process has
added `INLINE_FIRST` workloads, each batch's new ones go to a worker process on another core; the
importer inserts them with NULL facts, and their facts are written in as the worker returns
them, all in the file's transaction. Whatever the worker does not return (it died, hung, or
could not be started) is left NULL, and `fill_workload_facts`, run before every commit,
computes it here: the stored facts are the same either way.

The worker is this module's `serve`, run by the same Python (`sys.executable -c`), not a
`multiprocessing` child: those run the caller's main script again, which a script that
imports logs through the Python API does not expect. It reads a JSON line of workload rows at
a time on stdin and answers each with a JSON line of their facts on stdout.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import subprocess
import sys
import threading
import weakref
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


class _Worker:
    """The worker process, and the two threads that write its batches and read its answers
    (so the importer never blocks on a full pipe). One import at a time holds it (`lease`):
    answers are tagged with the lease they answer, so those of an import that failed halfway
    are dropped, not taken for the next one's."""

    def __init__(self) -> None:
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER_MAIN, package_parent],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # Its failures are handled here (the facts are computed here): no traceback of its
            # reaches the user's terminal.
            stderr=subprocess.DEVNULL,
        )
        self.batches: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        # Each batch's answer, as [lease, facts rows], in order; None once the worker ended.
        self.answers: queue.SimpleQueue[list[Any] | None] = queue.SimpleQueue()
        self.alive = True
        self._holder: weakref.ref[FactsBeside] | None = None
        self._leases = 0
        for target in (self._write, self._read):
            threading.Thread(target=target, daemon=True, name="tunelog-facts").start()

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
        """End the worker: no more batches (it exits at the end of its input)."""
        self.alive = False
        self.batches.put(None)

    def give_up(self) -> None:
        """End a worker that stopped answering."""
        self.alive = False
        self.process.kill()

    def _write(self) -> None:
        stdin: IO[bytes] = self.process.stdin  # type: ignore[assignment]
        try:
            while (batch := self.batches.get()) is not None:
                stdin.write(batch)
                stdin.flush()
            stdin.close()
        except OSError:  # the worker ended: `_read` says so
            pass

    def _read(self) -> None:
        stdout: IO[bytes] = self.process.stdout  # type: ignore[assignment]
        try:
            for line in stdout:
                self.answers.put(json.loads(line))
        except (OSError, ValueError):
            pass
        self.alive = False
        self.answers.put(None)
        self.process.wait()


# The worker's program: `package_parent` (argv[1]) is where this tunelog was imported from, in
# case the child's own path does not lead there (PYTHONPATH set by the caller's code).
_WORKER_MAIN = (
    "import sys; sys.path.append(sys.argv[1]); import tunelog.store.factsbeside as m; m.serve()"
)

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


_computed_here = 0  # workloads whose facts this process computed itself (see INLINE_FIRST)


if hasattr(os, "register_at_fork"):  # not on Windows, which never forks
    os.register_at_fork(after_in_child=_forget_worker)


@atexit.register
def _stop_worker() -> None:
    """Let the worker end with this process (and be counted in its CPU time)."""
    if _worker is not None:
        _worker.stop()
        try:
            _worker.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _worker.process.kill()


def _leased_worker(holder: FactsBeside) -> tuple[_Worker, int] | None:
    """The worker process (started on first use) and a lease of it for `holder`; None if it
    cannot run or another import holds it."""
    global _worker, _worker_failed
    with _worker_lock:
        if _worker is not None and not _worker.alive:
            _worker, _worker_failed = None, True
        if _worker is None and not _worker_failed:
            try:
                if not sys.executable:
                    raise OSError("no Python executable to start")
                _worker = _Worker()
            except OSError:
                _worker_failed = True
        if _worker is None:
            return None
        lease = _worker.lease(holder)
        return None if lease is None else (_worker, lease)


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """The worker's loop: a JSON line of [lease, workload rows] in, a JSON line of
    [lease, their facts] out."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    for line in stdin:
        lease, rows = json.loads(line)
        stdout.write(json.dumps([lease, facts_of_rows(rows)]).encode() + b"\n")
        stdout.flush()


class FactsBeside:
    """The facts of one file's new workloads: computed here, or by the worker process."""

    def __init__(self, conn: Any, *, beside: bool | None = None) -> None:
        """`conn`: the import's connection (sqlite3); `beside`: whether the worker may be
        asked (default: when this process may run on more than one CPU)."""
        self.conn = conn
        self._beside = has_spare_core() if beside is None else beside
        self._in_flight = 0
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
        if self._leased is not None:
            self._leased.release(self)

    def _hand_over(self, rows: Sequence[WorkloadRow]) -> bool:
        if not rows or not self._beside or _computed_here < INLINE_FIRST:
            return False
        if self._in_flight >= MAX_IN_FLIGHT:
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
        self._in_flight += 1
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
            if answer is None:  # the worker ended: what it did not answer stays NULL
                self._in_flight = 0
                self._worker = None
                return
            lease, facts = answer
            if lease == self._lease:  # not a batch of an import that failed halfway
                self._in_flight -= 1
                self.conn.executemany(_SET_FACTS_SQL, facts)
