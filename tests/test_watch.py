"""`tunelog watch`: following logs a tuner appends to, against a one-shot import of the result."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import (
    EDGE_LINES,
    REPO,
    SHORT_LINES,
    X86,
    X86_LINES,
    assert_tallies_match_records,
    database_contents,
    one_shot,
    run,
)
from tunelog.api import watching as live
from tunelog.live import Refresh
from tunelog.store import Store, importer


def slow_writer(log: Path, lines: list[bytes], *, pause: float) -> threading.Thread:
    """A tuner: appends the lines one at a time, each in two writes (a reader may see half)."""

    def write() -> None:
        with log.open("ab", buffering=0) as out:
            for line in lines:
                half = len(line) // 2
                out.write(line[:half])
                time.sleep(pause)
                out.write(line[half:])

    return threading.Thread(target=write, daemon=True)


def test_watching_a_file_being_written_ends_as_a_one_shot_import(tmp_path: Path) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:20]))
    writer = slow_writer(log, X86_LINES[20:] + EDGE_LINES + SHORT_LINES, pause=0.0005)
    seen: list[Refresh] = []
    with Store(tmp_path / "watch.db") as store:
        writer.start()
        tunelog.watch(store, [str(log)], on_refresh=seen.append, interval=0.005, until_idle=0.5)
        writer.join()
        assert_tallies_match_records(store.conn)
        watched = database_contents(store.conn)
    assert len(seen) > 3  # it did follow the writer, several lines at a time
    assert sum(r.lines for r in seen) == len(X86_LINES + EDGE_LINES + SHORT_LINES)
    assert any(r.held_back_bytes for r in seen)  # and saw half-written lines, left for later
    assert watched == one_shot(tmp_path, log)


def test_watch_imports_new_files_of_a_directory_and_waits_for_missing_ones(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    later = tmp_path / "later.log"
    seen: list[Refresh] = []

    def tuner(_: float) -> None:  # between refreshes: a tuner starts files
        logs.mkdir(exist_ok=True)
        (logs / f"run{len(seen)}.log").write_bytes(b"".join(X86_LINES[len(seen) * 10 :][:10]))
        if len(seen) == 2:
            later.write_bytes(b"".join(SHORT_LINES[:5]))

    with Store(tmp_path / "watch.db") as store:
        live.follow(
            store,
            [str(logs), str(later)],
            on_refresh=seen.append,
            refreshes=4,
            sleep=tuner,
        )
        watched = database_contents(store.conn)
    assert [(r.new, r.waiting_for) for r in seen] == [
        (0, [str(logs), str(later)]),
        (10, [str(later)]),
        (10 + 5, []),
        (10, []),
    ]
    runs = sorted(logs.iterdir())
    assert [run.name for run in runs] == ["run1.log", "run2.log", "run3.log"]
    assert watched == one_shot(tmp_path, *runs[:2], later, runs[2])  # in the order they came


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNELOG_DB", raising=False)
    return str(tmp_path / "cli.db")


def failing(line: bytes, error_no: int) -> bytes:
    """The same trial, failed with `error_no` (AutoTVM writes a cost of 1e9 then)."""
    record = json.loads(line)
    record["result"][0] = [1e9]
    record["result"][1] = error_no
    return json.dumps(record).encode() + b"\n"


def test_watch_says_a_file_rewritten_since_it_was_read_is_read_again(db: str) -> None:
    """A file truncated or rewritten under watch was read in full again, unsaid, and what its
    earlier read held stayed: the database no longer was one import of the final files."""
    Path("tuning.log").write_bytes(b"".join(X86_LINES[:40]))
    assert run("--db", db, "import", "tuning.log")[0] == 0
    Path("tuning.log").write_bytes(b"".join(X86_LINES[40:45]))
    code, _, err = run("--db", db, "watch", "tuning.log", "--refreshes", "1", "--interval", "0")
    assert code == 0
    assert err == (
        "tuning.log was read in full again, as another source (it changed since it was read: "
        "rewritten, truncated or rotated; or its last line then had no line end): its earlier "
        "reads' records stay (`tunelog sources remove` them to drop them)\n"
    )


def test_watch_without_a_terminal_prints_one_line_per_refresh(db: str) -> None:
    # Layer 1 (40 trials): only failures; layer 3: 30 of 40 BUILD_TIMEOUT.
    lines = [failing(line, 1) if i < 40 else line for i, line in enumerate(X86_LINES[:120])]
    lines = [failing(line, 6) if 80 <= i < 110 else line for i, line in enumerate(lines)]
    Path("tuning.log").write_bytes(b"".join(lines) + EDGE_LINES[14])  # + a rejected line
    code, out, err = run("--db", db, "watch", "tuning.log", "--refreshes", "2", "--interval", "0")
    assert code == 0
    totals = "3 layer(s), 120 trial(s) (50 valid, 70 failed); 1 layer(s) mostly BUILD_TIMEOUT; "
    totals += "1 layer(s) only failures"
    assert out == (
        f"refresh 1: +120 new record(s) from 121 line(s); {totals}\n"
        f"refresh 2: +0 new record(s) from 0 line(s); {totals}\n"
        f"stopped after 2 refresh(es): {totals}; every complete line read is in the database\n"
    )
    assert err == (
        "tuning.log:121: auto_scheduler record starting with a space: TVM's reader skips it\n"
    )


def test_the_last_summary_says_a_last_line_without_its_end_was_left_out(db: str) -> None:
    Path("tuning.log").write_bytes(b"".join(X86_LINES[:5]).rstrip(b"\n"))
    code, out, _ = run("--db", db, "watch", "tuning.log", "--refreshes", "3", "--interval", "0")
    assert code == 0
    held = len(X86_LINES[4].rstrip(b"\n"))
    assert out.splitlines()[-1].endswith(
        f"every complete line read is in the database; {held} byte(s) of a last line without "
        "its line end were left out (`tunelog import` reads it as it is)"
    )


def test_a_named_file_that_holds_no_record_is_said_once_as_import_says_it(db: str) -> None:
    Path("README.md").write_text("# Notes\n\nTuned on the lab's T4.\nSee {below}.\n")
    code, out, err = run("--db", db, "watch", "README.md", "--refreshes", "2", "--interval", "0")
    assert code == 0 and out.startswith("refresh 1: +0 new record(s) from 4 line(s); ")
    assert err == (
        "warning: README.md holds no tuning record: it looks like Markdown text (2 line(s) "
        "rejected: `tunelog rejects README.md`); name log files, or a directory to import the "
        "logs in it\n"
    )


def test_ctrl_c_between_refreshes_exits_0_with_a_summary(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("tuning.log").write_bytes(b"".join(X86_LINES[:10]))

    def interrupted(_: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(live, "pause", interrupted)
    code, out, _ = run("--db", db, "watch", "tuning.log")
    assert code == 0
    assert out.splitlines()[-1] == (
        "interrupted after 1 refresh(es): 1 layer(s), 10 trial(s) (10 valid, 0 failed) as of "
        "refresh 1; every complete line read is in the database"
    )


def test_ctrl_c_during_an_import_keeps_the_database_consistent(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = Path("tuning.log")
    log.write_bytes(b"".join(X86_LINES[:50]))
    assert run("--db", db, "watch", "tuning.log", "--once")[0] == 0
    with Store(db) as store:
        before = database_contents(store.conn)
    with log.open("ab") as appended:
        appended.writelines(X86_LINES[50:])
    real_add = importer.ImportWriter.add

    def interrupted_add(self: importer.ImportWriter, line_no: int, *args: Any) -> None:
        if line_no == 120:
            raise KeyboardInterrupt
        real_add(self, line_no, *args)

    with monkeypatch.context() as patch:
        patch.setattr(importer.ImportWriter, "add", interrupted_add)
        code, out, _ = run("--db", db, "watch", "tuning.log")
    assert code == 0
    assert out.startswith(INTERRUPTED_IN_FIRST_REFRESH)
    with Store(db) as store:
        assert database_contents(store.conn) == before  # the grown part rolled back whole
    assert run("--db", db, "watch", "tuning.log", "--once")[0] == 0
    with Store(db) as store:
        assert database_contents(store.conn) == one_shot(tmp_path, log)


def test_watch_draws_a_live_table_on_a_terminal(tmp_path: Path) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:60]))
    controller, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": "140", "LINES": "40", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    command = [sys.executable, "-m", "tunelog", "--db", str(tmp_path / "t.db"), "watch"]
    process = subprocess.Popen(
        [*command, str(log), "--refreshes", "2", "--interval", "0.1"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=REPO,
        env=env,
        close_fds=True,
    )
    os.close(terminal)
    screen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            screen += chunk
        elif process.poll() is not None:
            break
    os.close(controller)
    assert process.wait(timeout=30) == 0
    text = screen.decode(errors="replace")
    assert "\x1b[" in text  # drawn with terminal control sequences (rich Live), not lines
    assert "tunelog watch: refresh 2" in text
    for header in ("operator", "shapes", "trials", "valid/failed", "best", "GFLOPS", "warning"):
        assert header in text
    assert "1x3x32x32 * 16x3x3x3 s1 p1" in text and "40/0" in text
    assert "refresh 1: " not in text  # no summary lines on a terminal
    assert "stopped after 2 refresh(es): 2 layer(s), 60 trial(s)" in text


def test_watch_says_once_that_it_waits_for_a_missing_file(db: str) -> None:
    code, out, err = run("--db", db, "watch", "later.log", "--refreshes", "3", "--interval", "0")
    assert code == 0
    assert err == "waiting for later.log (does not exist yet)\n"
    assert out.splitlines()[-1] == (
        "stopped after 3 refresh(es): 0 layer(s), 0 trial(s) (0 valid, 0 failed); "
        "every complete line read is in the database"
    )


def test_watch_refuses_stdin(db: str) -> None:
    code, _, err = run("--db", db, "watch", "-")
    assert code == 2
    assert "watch follows files; import stdin with `tunelog import -`" in err


INTERRUPTED_IN_FIRST_REFRESH = (
    "interrupted during the first refresh: the files whose import had finished are in the "
    "database (`tunelog sources`); run watch again to go on\n"
)


def test_an_interrupt_in_the_first_refresh_keeps_the_files_it_finished(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first refresh commits file after file: the message never says nothing was
    imported when a file was (it used to)."""
    Path("a.log").write_bytes(b"".join(X86_LINES[:50]))
    Path("b.log").write_bytes(b"".join(X86_LINES[50:]))
    real_add = importer.ImportWriter.add

    def interrupted_add(self: importer.ImportWriter, line_no: int, *args: Any) -> None:
        if Path(self.report.path).name == "b.log" and line_no == 20:
            raise KeyboardInterrupt
        real_add(self, line_no, *args)

    with monkeypatch.context() as patch:
        patch.setattr(importer.ImportWriter, "add", interrupted_add)
        code, out, _ = run("--db", db, "watch", "a.log", "b.log")
    assert (code, out) == (0, INTERRUPTED_IN_FIRST_REFRESH)
    with Store(db) as store:
        assert [Path(s.path).name for s in store.sources()] == ["a.log"]


def test_a_file_that_could_not_be_read_is_tried_again_at_the_next_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unchanged since (its permissions fixed, a lock gone), it is imported next time; only a
    file imported is left alone until it changes."""
    from tunelog.api import importing

    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:20]))
    real = importing._import_one
    calls = iter([PermissionError(13, "Permission denied")])

    def failing_once(*args: Any, **kwargs: Any) -> Any:
        failure = next(calls, None)
        if failure is not None:
            raise failure
        return real(*args, **kwargs)

    monkeypatch.setattr(importing, "_import_one", failing_once)
    seen: list[Refresh] = []
    with Store(tmp_path / "w.db") as store:
        tunelog.watch(store, [str(log)], on_refresh=seen.append, interval=0, refreshes=3)
        assert [[(Path(r.path).name, bool(r.unreadable)) for r in s.reports] for s in seen] == [
            [("tuning.log", True)],
            [("tuning.log", False)],
            [],
        ]
        assert store.conn.execute("SELECT count(*) FROM records").fetchone() == (20,)


def test_a_file_that_stays_unreadable_is_said_to_be_skipped_once(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It is tried again at each refresh (above); the line saying so is not repeated."""
    from tunelog.api import importing

    Path("tuning.log").write_bytes(b"".join(X86_LINES[:20]))

    tries: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        tries.append(1)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(importing, "_import_one", failing)
    code, _, err = run(
        "--db", db, "watch", "tuning.log", "--interval", "0.02", "--until-idle", "0.3"
    )
    assert code == 0
    skipped = [line for line in err.splitlines() if line.endswith(": skipped")]
    assert skipped == [
        "tuning.log cannot be read (Permission denied; check its permissions): skipped"
    ]
    assert len(tries) > 1  # tried at each refresh, said once


def test_a_database_named_to_watch_is_skipped_once_as_import_skips_it(
    db: str, tmp_path: Path
) -> None:
    """An SQLite database is never a log: watch says so once (and how to add its records),
    as `import` does, instead of watching it as an empty file."""
    other = tmp_path / "other.db"
    with Store(other) as store:
        tunelog.import_paths(store, [str(X86)])
    Path("tuning.log").write_bytes(b"".join(X86_LINES[:20]))
    code, _, err = run(
        "--db", db, "watch", str(other), "tuning.log", "--interval", "0.02", "--until-idle", "0.3"
    )
    assert code == 0
    skipped = [line for line in err.splitlines() if line.endswith(": skipped")]
    assert skipped == [
        f"{other} is an SQLite database, not a log: to add a tunelog database's records, use "
        f"`tunelog merge {other}`: skipped"
    ]


def test_a_refresh_while_another_program_holds_the_write_lock_reads_the_files_next_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write lock held longer than tunelog waits stopped watch ("database is locked", exit 1),
    which the README says exits 0: the refresh says so, keeps what it imported before the lock
    (a.log), and the next one reads the rest (b.log)."""
    import sqlite3

    import tunelog
    from tunelog.exceptions import DatabaseBusyError
    from tunelog.store import Store, connection

    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 50)
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    logs[0].write_bytes(b"".join(X86_LINES[:20]))
    logs[1].write_bytes(b"".join(X86_LINES[20:30]))
    db = tmp_path / "t.db"
    Store(db).close()
    other = sqlite3.connect(db, isolation_level=None)
    real_import = tunelog.api.importing._import_one

    locked: list[bool] = []

    def locked_after_a(store: Store, source: Any, *args: Any, **kwargs: Any) -> Any:
        if source.path.endswith("b.log") and not locked:
            locked.append(True)
            other.execute("BEGIN IMMEDIATE")  # another program starts writing, once
        return real_import(store, source, *args, **kwargs)

    monkeypatch.setattr(tunelog.api.importing, "_import_one", locked_after_a)
    refreshes: list[tunelog.api.Refresh] = []

    def seen(refresh: tunelog.api.Refresh) -> None:
        refreshes.append(refresh)
        if other.in_transaction:
            other.execute("ROLLBACK")  # it is done

    with Store(db) as store:
        tunelog.watch(store, [str(p) for p in logs], on_refresh=seen, refreshes=2, interval=0)
        assert store.stats().records == 30
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(DatabaseBusyError, match="another program is writing it"):
            tunelog.import_paths(store, [str(logs[0])])  # bytes it holds: a write all the same
        other.execute("ROLLBACK")
    other.close()
    assert [(r.busy, r.new, [Path(x.path).name for x in r.reports]) for r in refreshes] == [
        ("another program held the database's write lock", 20, ["a.log"]),
        (None, 10, ["b.log"]),
    ]


def test_until_idle_counts_once_a_named_path_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch started with a tuner whose first line takes longer than --until-idle stopped
    before the log existed, with nothing read (found by a new user against TVM 0.16)."""
    log = tmp_path / "tuning.log"
    refreshes: list[int] = []

    def sleep(_: float) -> None:
        refreshes.append(1)
        if len(refreshes) == 5:  # the tuner writes its first lines late
            log.write_bytes(b"".join(X86_LINES[:10]))
        time.sleep(0.02)

    monkeypatch.setattr(live, "pause", sleep)
    with Store(tmp_path / "w.db") as store:
        last = tunelog.watch(store, [str(log)], on_refresh=lambda _: None, until_idle=0.05)
        assert len(refreshes) > 5 and not last.waiting_for
        assert store.stats().records == 10


def test_a_path_that_never_comes_beside_one_there_does_not_keep_the_watch_going(
    tmp_path: Path,
) -> None:
    """One named path there is enough for --until-idle to count (a typo beside the log)."""
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:10]))
    with Store(tmp_path / "w.db") as store:
        last = tunelog.watch(
            store,
            [str(log), str(tmp_path / "typo.lg")],
            on_refresh=lambda _: None,
            interval=0.01,
            until_idle=0.05,
            refreshes=500,
        )
    assert last.number < 500 and last.waiting_for == [str(tmp_path / "typo.lg")]
