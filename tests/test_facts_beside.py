"""The facts of an import's new workloads are the same whether the worker process computes
them or the importer does, whatever becomes of the worker (`store.factsbeside`)."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import database_contents
from tunelog.store import Store, factsbeside, importer, workloadfacts
from tunelog.store.factsbeside import FactsBeside, facts_of_rows

REPO = Path(__file__).resolve().parents[1]
LOGS = [REPO / "sample_logs" / "x86_mini_llvm.log", REPO / "tests" / "data" / "nchwc_blocks.log"]
_FIRST_LINE = (REPO / "tests" / "data" / "x86_mini_pick_best.log").read_text().splitlines()[0]

# Worker programs that go wrong: each is run in place of the real one (argv[1]: the module
# path, as JSON).
_IMPORTED = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "import tunelog.store.factsbeside as m; "
)
_GREETS = _IMPORTED + "out = sys.stdout.buffer; out.write(m._greeting(m._PACKAGE)); out.flush(); "
_FIRST_BATCH = "lease, rows = json.loads(sys.stdin.buffer.readline()); "
_ANSWERS_ONCE_THEN_EXITS = (
    _IMPORTED + "import io; m.serve(io.BytesIO(sys.stdin.buffer.readline()), sys.stdout.buffer)"
)
_HANGS = "import time; time.sleep(60)"
_ANSWERS_GARBAGE = "import sys; print('not JSON', flush=True); sys.stdin.buffer.read()"
_ANSWERS_WRONG_SHAPE = (
    _GREETS + _FIRST_BATCH + "out.write(json.dumps([lease, [[1, 2]]]).encode() + b'\\n'); "
    "out.flush(); sys.stdin.buffer.read()"
)
_ANSWERS_FOR_OTHER_WORKLOADS = (
    _GREETS + _FIRST_BATCH + "rows = [[row[0] + 1, *row[1:]] for row in rows]; "
    "out.write(json.dumps([lease, m.facts_of_rows(rows)]).encode() + b'\\n'); out.flush(); "
    "sys.stdin.buffer.read()"
)
# Well-formed answers, for the workloads asked, with facts of its own (another version's).
_ANOTHER_TUNELOG = (
    "import json, sys; out = sys.stdout.buffer; "
    "out.write(json.dumps(['tunelog', '/elsewhere/tunelog']).encode() + b'\\n'); out.flush()\n"
    "for line in sys.stdin.buffer:\n"
    "    lease, rows = json.loads(line)\n"
    "    facts = [['other', '{}', 'conv2d', 'x', None, row[0]] for row in rows]\n"
    "    out.write(json.dumps([lease, facts]).encode() + b'\\n'); out.flush()\n"
)
_A_START_UP_HOOK_PRINTS = "print('[1, []]', flush=True); " + _IMPORTED + "m.serve()"


def many_workloads_log(path: Path, workloads: int) -> Path:
    """A log of `workloads` workloads (one conv2d with its input's height varied), two lines
    each."""
    record = json.loads(_FIRST_LINE)
    lines = []
    for n in range(workloads):
        record["input"][2][0][1][2] = 8 + n
        for index in (n, n + 1):
            record["config"]["index"] = index
            lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def fresh_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No worker started yet; the one a test starts is stopped after it."""
    monkeypatch.setattr(factsbeside, "_worker", None)
    monkeypatch.setattr(factsbeside, "_worker_failed", False)
    monkeypatch.setattr(factsbeside, "_computed_here", 0)
    yield
    if factsbeside._worker is not None:
        factsbeside._worker.stop()
        factsbeside._worker.process.kill()
        factsbeside._worker.process.wait()


def _imported(database: Path, logs: list[Path]) -> dict[str, list[tuple[object, ...]]]:
    with Store(database) as store:
        reports = tunelog.import_paths(store, [str(log) for log in logs])
        assert all(report.accounted for report in reports)
        (unfilled,) = store.conn.execute(
            "SELECT count(*) FROM workloads WHERE layer_key IS NULL"
        ).fetchone()
        assert unfilled == 0
        return database_contents(store.conn)


@pytest.mark.parametrize(
    ("worker_main", "handed_over"),
    [
        (None, True),  # the real worker
        (_ANSWERS_ONCE_THEN_EXITS, True),
        (_HANGS, True),
        (_ANSWERS_GARBAGE, True),
        (_ANSWERS_WRONG_SHAPE, True),
        (_ANSWERS_FOR_OTHER_WORKLOADS, True),
        (_ANOTHER_TUNELOG, True),
        (_A_START_UP_HOOK_PRINTS, True),
        ("", False),  # no worker: its Python cannot be started
    ],
    ids=[
        "worker",
        "dies",
        "hangs",
        "garbage",
        "wrong-shape",
        "other-workloads",
        "another-tunelog",
        "hook-prints",
        "cannot-start",
    ],
)
def test_the_facts_are_the_same_whatever_becomes_of_the_worker(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh_worker: None,
    worker_main: str | None,
    handed_over: bool,
) -> None:
    logs = [many_workloads_log(tmp_path / "many.log", 300), *LOGS]
    here = _imported(tmp_path / "here.db", logs)
    assert factsbeside._worker is None  # 305 workloads: fewer than INLINE_FIRST
    # Every batch of new workloads handed over, in batches of 64 records.
    monkeypatch.setattr(factsbeside, "INLINE_FIRST", 0)
    monkeypatch.setattr(importer, "BATCH_SIZE", 64)
    monkeypatch.setattr(factsbeside, "ANSWER_TIMEOUT", 0.5)
    if worker_main == _HANGS:
        monkeypatch.setattr(factsbeside, "MAX_IN_FLIGHT", 3)
    if worker_main is not None:
        monkeypatch.setattr(factsbeside, "_WORKER_MAIN", worker_main)
    if worker_main == "":
        monkeypatch.setattr(sys, "executable", str(tmp_path / "python-not-there"))
    sent: list[int] = []
    workers: set[factsbeside._Worker] = set()
    send = factsbeside._Worker.send

    def counted_send(worker: factsbeside._Worker, lease: int, rows: Sequence[Any]) -> None:
        sent.append(len(rows))
        workers.add(worker)
        send(worker, lease, rows)

    monkeypatch.setattr(factsbeside._Worker, "send", counted_send)
    caught_up: list[int] = []  # facts the catch-up before each commit computed
    fill = workloadfacts.fill_workload_facts

    def counted_fill(conn: sqlite3.Connection) -> int:
        caught_up.append(fill(conn))
        return caught_up[-1]

    monkeypatch.setattr(workloadfacts, "fill_workload_facts", counted_fill)
    beside = _imported(tmp_path / "beside.db", logs)
    assert beside == here
    assert bool(sent) == handed_over
    if worker_main is None:
        assert sum(sent) == len(here["workloads"]) and factsbeside._worker is not None
        assert caught_up == [0, 0, 0]  # the worker's answers were written in
        return
    # Given up on: the catch-up computed what it did not answer, the worker has ended, and
    # the next import computes the facts itself.
    assert sum(caught_up) > 0 if handed_over else caught_up == [0, 0, 0]
    for worker in workers:
        assert worker.process.wait(timeout=5) is not None
    assert factsbeside._worker is None and factsbeside._worker_failed
    if worker_main == _HANGS:  # never answered: no more batches than MAX_IN_FLIGHT asked
        assert len(sent) == 3


def test_the_worker_answers_each_batch_with_its_facts() -> None:
    rows = [
        (7, "dense_nopack.x86", "dense_nopack.x86", '[["TENSOR",[1,64],"float32"]]', "0.2", None)
    ]
    answered = io.BytesIO()
    asked = json.dumps([3, rows]).encode() + b"\nnull\n" + json.dumps([4, rows]).encode()
    factsbeside.serve(io.BytesIO(asked), answered)
    greeting, answer = answered.getvalue().splitlines()  # nothing after the null line
    assert json.loads(greeting) == ["tunelog", str(REPO / "tunelog")]
    lease, facts = json.loads(answer)
    assert lease == 3
    assert [tuple(row) for row in facts] == facts_of_rows(rows)
    assert facts[0][-1] == 7


def _rows(first: int, count: int) -> list[factsbeside.WorkloadRow]:
    record = json.loads(_FIRST_LINE)
    rows: list[factsbeside.WorkloadRow] = []
    for n in range(first, first + count):
        record["input"][2][0][1][2] = n
        args = json.dumps(record["input"][2], separators=(",", ":"))
        rows.append((n, "conv2d_NCHWc.x86", "conv2d_NCHWc.x86", args, "0.2", None))
    return rows


def _connection(rows: list[factsbeside.WorkloadRow]) -> sqlite3.Connection:
    """A database of these workloads, without facts, for a `FactsBeside` to write them in."""
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE workloads (id INTEGER PRIMARY KEY, layer_key, facts, family, shapes, flops)"
    )
    conn.executemany("INSERT INTO workloads (id) VALUES (?)", [(row[0],) for row in rows])
    return conn


def _written(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return conn.execute(
        "SELECT layer_key, facts, family, shapes, flops, id FROM workloads "
        "WHERE layer_key IS NOT NULL ORDER BY id"
    ).fetchall()


def _handed_over(rows: list[factsbeside.WorkloadRow]) -> tuple[sqlite3.Connection, FactsBeside]:
    """A database of `rows` and the `FactsBeside` that handed them to the worker."""
    conn = _connection(rows)
    facts = FactsBeside(conn, beside=True)
    assert facts.inserted_rows(rows)[0][-5:] == (None,) * 5  # NULL facts: handed over
    return conn, facts


def test_answers_for_an_import_that_failed_halfway_are_not_taken_for_the_next(
    monkeypatch: pytest.MonkeyPatch, fresh_worker: None
) -> None:
    monkeypatch.setattr(factsbeside, "INLINE_FIRST", 0)
    _, failed = _handed_over(_rows(10, 5))
    del failed  # never finished: its answer is still to come
    rows = _rows(100, 3)
    conn, facts = _handed_over(rows)
    facts.finish()
    assert _written(conn) == facts_of_rows(rows)


def test_a_second_import_at_the_same_time_computes_its_own_facts(
    monkeypatch: pytest.MonkeyPatch, fresh_worker: None
) -> None:
    monkeypatch.setattr(factsbeside, "INLINE_FIRST", 0)
    first_rows, rows = _rows(10, 2), _rows(20, 2)
    first = FactsBeside(_connection(first_rows), beside=True)
    second = FactsBeside(_connection(rows), beside=True)
    first.inserted_rows(first_rows)
    assert second.inserted_rows(rows) == [
        (*row, *facts[:-1]) for row, facts in zip(rows, facts_of_rows(rows), strict=True)
    ]
    first.finish()
    conn, third = _handed_over(rows)  # the worker is free again
    third.finish()
    assert _written(conn) == facts_of_rows(rows)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_starts_its_own_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_worker: None
) -> None:
    monkeypatch.setattr(factsbeside, "INLINE_FIRST", 0)
    log = many_workloads_log(tmp_path / "many.log", 100)
    with Store(tmp_path / "parent.db", create=True) as parent:
        tunelog.import_paths(parent, [str(log)])
    parent_worker = factsbeside._worker
    assert parent_worker is not None
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only with every workload's facts, and 2 if stuck
        signal.alarm(20)
        try:
            with Store(tmp_path / "child.db", create=True) as child:
                tunelog.import_paths(child, [str(log)])
                (unfilled,) = child.conn.execute(
                    "SELECT count(*) FROM workloads WHERE layer_key IS NULL"
                ).fetchone()
            started = factsbeside._worker not in (None, parent_worker)
            os._exit(0 if unfilled == 0 and started else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_many_small_logs_use_the_worker_once_their_workloads_add_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_worker: None
) -> None:
    monkeypatch.setattr(factsbeside, "INLINE_FIRST", 40)
    logs = []
    for n in range(4):  # 30 workloads each, none alike
        log = many_workloads_log(tmp_path / f"{n}.log", 30 * (n + 1))
        lines = log.read_text().splitlines(keepends=True)
        log.write_text("".join(lines[60 * n :]))
        logs.append(log)
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(log) for log in logs])
        (unfilled,) = store.conn.execute(
            "SELECT count(*) FROM workloads WHERE layer_key IS NULL"
        ).fetchone()
    assert unfilled == 0
    assert factsbeside._computed_here == 60  # the first two files; the worker the next two
    assert factsbeside._worker is not None


def test_the_worker_is_this_tunelog_whatever_the_current_directory_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_worker: None
) -> None:
    """Neither a `tunelog` package nor a `json.py` in the current directory or on PYTHONPATH
    is imported by the worker."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "tunelog").mkdir(parents=True)
    (elsewhere / "tunelog" / "__init__.py").write_text("raise SystemExit('another tunelog')\n")
    (elsewhere / "json.py").write_text("raise SystemExit('a user script')\n")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("PYTHONPATH", str(elsewhere))
    monkeypatch.setattr(factsbeside, "INLINE_FIRST", 0)
    rows = _rows(10, 4)
    conn, facts = _handed_over(rows)
    facts.finish()
    assert _written(conn) == facts_of_rows(rows)  # answered by the worker


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_the_worker_ends_when_told_though_a_forked_child_holds_its_pipe(
    monkeypatch: pytest.MonkeyPatch, fresh_worker: None
) -> None:
    monkeypatch.setattr(factsbeside, "INLINE_FIRST", 0)
    _, facts = _handed_over(_rows(10, 2))
    facts.finish()
    worker = factsbeside._worker
    assert worker is not None
    pid = os.fork()
    if pid == 0:  # the child holds the pipes a while
        time.sleep(10)
        os._exit(0)
    try:
        worker.stop()
        assert worker.process.wait(timeout=5) == 0
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_the_worker_finds_the_dependencies_where_this_process_found_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Isolated mode drops PYTHONPATH and the user site: the worker gets this process's path,
    this tunelog's directory first and the current directory's entry left out."""
    monkeypatch.setattr(sys, "path", ["", "/deps/on/pythonpath", *sys.path])
    path = factsbeside.worker_path()
    assert path[0] == str(REPO)
    assert "" not in path
    assert "/deps/on/pythonpath" in path


@pytest.mark.parametrize("way", ["import", "merge"])
def test_an_import_that_failed_lets_the_next_one_use_the_worker_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_worker: None, way: str
) -> None:
    """The lease is given back when an import (or a merge, which imports through the same
    writer) fails, not when its objects are collected: a caller keeping the exception (its
    traceback holds the failed import) used to leave the next imports computing every fact
    themselves."""
    monkeypatch.setattr(factsbeside, "INLINE_FIRST", 0)
    monkeypatch.setattr(importer, "BATCH_SIZE", 64)
    log = many_workloads_log(tmp_path / "many.log", 300)
    if way == "merge":
        with Store(tmp_path / "other.db") as other:
            tunelog.import_paths(other, [str(log)])

    def bring_in(store: Store) -> int:
        if way == "merge":
            (merged,) = tunelog.merge(store, [str(tmp_path / "other.db")])
            return merged.new
        (imported,) = tunelog.import_paths(store, [str(log)])
        return imported.new

    sent: list[int] = []
    send = factsbeside._Worker.send

    def counted_send(worker: factsbeside._Worker, lease: int, rows: Sequence[Any]) -> None:
        sent.append(lease)
        send(worker, lease, rows)

    monkeypatch.setattr(factsbeside._Worker, "send", counted_send)
    real_add = importer.ImportWriter.add

    def failing_add(self: importer.ImportWriter, line_no: int, *args: Any) -> None:
        if line_no == 400:
            raise RuntimeError("interrupted")
        real_add(self, line_no, *args)

    with Store(tmp_path / "t.db") as store:
        with monkeypatch.context() as patch:
            patch.setattr(importer.ImportWriter, "add", failing_add)
            with pytest.raises(RuntimeError) as failed:  # kept: it holds the failed import
                bring_in(store)
        assert sent, "the failed import handed batches over"
        first_lease, before = sent[-1], len(sent)
        assert bring_in(store) == 600
        assert len(sent) > before and sent[-1] != first_lease  # the worker, under a new lease
    assert failed.value is not None
