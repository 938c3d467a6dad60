"""Reliability (issue 6): killed imports, concurrent importers and readers, hostile input.

The large logs are generated at test time from the sample log's lines (new timestamps and
costs, so every line is distinct) into temporary directories.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EDGE, REPO, X86, assert_tallies_match_records, run
from tunelog.api import import_paths
from tunelog.exceptions import NewerSchemaError
from tunelog.records import Measurement, scan_line
from tunelog.store import MIGRATIONS, LineReader, Store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals and FIFOs")

X86_LINES = 200
BIG_LINES = 60_000  # imports in about two seconds: long enough to be killed mid-way
JOB_LINES = 6_000
BOM = b"\xef\xbb\xbf"
POLL_SECONDS = 0.002
TIMEOUT_SECONDS = 120.0
REPORTED_REJECTS = 20  # the CLI lists the first 20 rejected lines of a file, then a count


_RESULT = re.compile(rb'"result": \[\[([^\],]+)\], (-?\d+), ([^,\]]+), ([^,\]]+)\]')


# -- generated logs ----------------------------------------------------------------------------


def make_log(path: Path, lines: int, seed: int) -> Path:
    """Write `lines` distinct v0.2 records made from the sample log's lines.

    Each line gets its own timestamp (unique per seed and line, never one of the sample's), so
    no two generated lines are equal, within a file or across seeds; valid costs vary too.
    """
    templates: list[tuple[bytes, float, int, bytes, bytes]] = []
    for line in X86.read_bytes().splitlines():
        match = _RESULT.search(line)
        assert match is not None, line
        head, tail = line[: match.start()], line[match.end() :]
        templates.append((head, float(match[1]), int(match[2]), match[3], tail))
    out: list[bytes] = []
    for k in range(lines):
        head, cost, error_no, all_cost, tail = templates[k % len(templates)]
        if error_no == 0:
            cost *= 1 + (k * 7919 % 1000) / 1000
        stamp = 1_600_000_000 + seed * 1_000_000 + k * 0.5
        result = b'"result": [[%r], %d, %s, %.1f]' % (cost, error_no, all_cost, stamp)
        out.append(head + result + tail + b"\n")
    path.write_bytes(b"".join(out))
    return path


# -- running tunelog ---------------------------------------------------------------------------


def child_env() -> dict[str, str]:
    """The environment of a `python -m tunelog` child: finds this checkout, no TUNELOG_DB."""
    env = {k: v for k, v in os.environ.items() if k != "TUNELOG_DB"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


def start(db: Path, *args: str, stdout: int = subprocess.PIPE) -> subprocess.Popen[bytes]:
    """Start `python -m tunelog --db DB ARGS...` in DB's directory."""
    return subprocess.Popen(
        [sys.executable, "-m", "tunelog", "--db", str(db), *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=child_env(),
        cwd=db.parent,
    )


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    """Wait for a child: (exit code, stdout, stderr)."""
    out, err = proc.communicate(timeout=TIMEOUT_SECONDS)
    return proc.returncode, (out or b"").decode(), err.decode()


def run_cli(db: Path, *args: str) -> tuple[int, str, str]:
    """Run the CLI in this process: (exit code, stdout, stderr); never an uncaught exception."""
    code, out, err = run("--db", str(db), *args)
    assert "Traceback" not in out + err
    return code, out, err


def cli_json(db: Path, *args: str) -> Any:
    code, out, err = run_cli(db, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def assert_quiet_success(code: int, err: str) -> None:
    """Exit 0 with no error, lock message or traceback on stderr."""
    assert code == 0, err
    for bad in ("locked", "Error", "Traceback"):
        assert bad not in err


def size(path: Path) -> int:
    """The file's size, or -1 when it does not exist."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return -1


def wal_of(db: Path) -> Path:
    return db.with_name(db.name + "-wal")


def import_and_kill(db: Path, log: Path, should_kill: Callable[[], bool]) -> bool:
    """Run `tunelog import LOG` and SIGKILL it once `should_kill()` holds.

    True when the kill landed while the import ran; False when it finished first (exit 0).
    """
    proc = start(db, "import", str(log), stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + TIMEOUT_SECONDS
    sent = False
    while proc.poll() is None and time.monotonic() < deadline:
        if should_kill():
            proc.send_signal(signal.SIGKILL)
            sent = True
            break
        time.sleep(POLL_SECONDS)
    code, _, err = finish(proc)
    if sent and code == -signal.SIGKILL:
        return True
    assert code == 0, err
    return False


# -- looking at a database ---------------------------------------------------------------------

Row = tuple[Any, ...]


@dataclass(frozen=True)
class Content:
    """What a database holds, independent of row ids and import times."""

    sources: list[Row]
    records: list[Row]
    slots: list[Row]
    rejects: list[Row]
    stats: Any

    def records_of(self, path: Path) -> list[Row]:
        return [r for r in self.records if r[0] == str(path)]

    def sources_of(self, path: Path) -> list[Row]:
        return [s for s in self.sources if s[0] == str(path)]


def content_of(db: Path) -> Content:
    """Sources (without imported_at), records with their decoded lines, slots, rejects, stats."""
    stats = cli_json(db, "stats")  # first: opening through tunelog migrates a bare file
    conn = sqlite3.connect(db)
    try:
        reader = LineReader(conn)
        sources = conn.execute(
            """SELECT path, label, sha256, size, lines, records, duplicates, comments, blank,
                      rejected FROM sources ORDER BY id"""
        ).fetchall()
        records = sorted(
            (path, line, config, error_no, cost, reader.line(record_id))
            for path, line, config, error_no, cost, record_id in conn.execute(
                """SELECT coalesce(s.path, '<no source>'), r.line, r.config_index, r.error_no,
                          r.mean_cost, r.id
                   FROM records r LEFT JOIN sources s ON s.id = r.source_id"""
            )
        )
        slots = sorted(
            conn.execute(
                """SELECT s.kind, s.name, w.task_name, w.template_key, w.args, src.path, r.line,
                          s.mean_cost
                   FROM slots s JOIN workloads w ON w.id = s.workload_id
                   JOIN records r ON r.id = s.record_id JOIN sources src ON src.id = r.source_id"""
            ).fetchall()
        )
        rejects = sorted(
            conn.execute(
                """SELECT s.path, j.line, j.reason FROM rejects j
                   JOIN sources s ON s.id = j.source_id"""
            ).fetchall()
        )
    finally:
        conn.close()
    return Content(sources, records, slots, rejects, stats)


def assert_sound(db: Path) -> None:
    """Integrity ok, tunelog can open it, and every source's accounting matches its rows."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    Store(db).close()  # usable: opens (and migrates a database killed before its schema)
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        orphan_slots = "SELECT count(*) FROM slots WHERE record_id NOT IN (SELECT id FROM records)"
        assert conn.execute(orphan_slots).fetchone() == (0,)
        assert_tallies_match_records(conn)
        for source_id, lines, records, accounted in conn.execute(
            """SELECT id, lines, records, duplicates + comments + blank + rejected + records
               FROM sources"""
        ).fetchall():
            (stored,) = conn.execute(
                "SELECT count(*) FROM records WHERE source_id = ?", (source_id,)
            ).fetchone()
            assert (stored, accounted) == (records, lines), f"source #{source_id}"
    finally:
        conn.close()


def is_imported(db: Path, log: Path, lines: int) -> bool:
    """False when the database holds nothing of LOG; True when it holds all of it, once."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT lines, records FROM sources WHERE path = ?", (str(log),)
        ).fetchall()
        stored = conn.execute(
            """SELECT count(*) FROM records r JOIN sources s ON s.id = r.source_id
               WHERE s.path = ?""",
            (str(log),),
        ).fetchone()[0]
    finally:
        conn.close()
    if not rows:
        assert stored == 0
        return False
    assert (rows, stored) == ([(lines, lines)], lines), "half-imported file"
    return True


def stored_lines(db: Path) -> dict[int, bytes]:
    """Line number -> decoded stored bytes, for a database holding one source."""
    conn = sqlite3.connect(db)
    try:
        reader = LineReader(conn)
        return {
            line: reader.line(record_id)
            for line, record_id in conn.execute("SELECT line, id FROM records")
        }
    finally:
        conn.close()


# -- crash safety ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BigLog:
    """A large generated log and what an uninterrupted import of it into a fresh db gives."""

    path: Path
    lines: int
    peak_wal: int
    content: Content


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> BigLog:
    root = tmp_path_factory.mktemp("big")
    log = make_log(root / "big.log", BIG_LINES, seed=1)
    db = root / "reference.db"
    proc = start(db, "import", str(log), stdout=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, size(wal_of(db)))
        time.sleep(POLL_SECONDS)
    code, _, err = finish(proc)
    assert code == 0, err
    content = content_of(db)
    assert len(content.records) == BIG_LINES
    return BigLog(log, BIG_LINES, peak, content)


def wal_reaches(db: Path, fraction: float, big_log: BigLog) -> Callable[[], bool]:
    """Kill condition: the import's write-ahead log has grown to `fraction` of its final size."""
    return lambda: size(wal_of(db)) >= fraction * big_log.peak_wal


@pytest.mark.slow
def test_sigkilled_import_leaves_all_or_nothing_and_rerun_matches_clean_import(
    big_log: BigLog, tmp_path: Path
) -> None:
    db = tmp_path / "crash.db"
    stages: list[Callable[[], bool]] = [
        db.exists,  # while the database is created and migrated
        wal_reaches(db, 0.1, big_log),
        wal_reaches(db, 0.4, big_log),
        wal_reaches(db, 0.75, big_log),
        lambda: size(db) > 1 << 20,  # after COMMIT, while the WAL is checkpointed on close
    ]
    killed_mid_import = 0
    for should_kill in stages:
        killed = import_and_kill(db, big_log.path, should_kill)
        assert_sound(db)
        if is_imported(db, big_log.path, big_log.lines):
            assert content_of(db) == big_log.content
        else:
            killed_mid_import += killed
            empty = content_of(db)
            assert (empty.sources, empty.records, empty.slots) == ([], [], [])
    assert killed_mid_import >= 1, "no kill landed during the import"

    code, _, err = finish(start(db, "import", str(big_log.path)))
    assert code == 0, err
    assert_sound(db)
    assert content_of(db) == big_log.content


@pytest.mark.slow
def test_sigkilled_import_keeps_files_imported_before(big_log: BigLog, tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    assert run_cli(db, "import", str(X86))[0] == 0
    before = content_of(db)
    assert len(before.records) == X86_LINES
    for fraction in (0.2, 0.7):
        import_and_kill(db, big_log.path, wal_reaches(db, fraction, big_log))
        assert_sound(db)
        after = content_of(db)
        assert after.sources_of(X86) == before.sources
        assert after.records_of(X86) == before.records
        if not is_imported(db, big_log.path, big_log.lines):
            assert after == before

    code, _, err = finish(start(db, "import", str(big_log.path)))
    assert code == 0, err
    assert_sound(db)
    final = content_of(db)
    assert final.records_of(X86) == before.records
    assert final.records_of(big_log.path) == big_log.content.records
    assert final.stats["records"] == X86_LINES + big_log.lines


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sent", "status"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143)],  # SIGTERM: timeout, kill, a CI cancel
    ids=["ctrl-c", "sigterm"],
)
def test_an_interrupted_import_rolls_back_and_exits_130_or_143_for_sigterm(
    big_log: BigLog, tmp_path: Path, sent: signal.Signals, status: int
) -> None:
    db = tmp_path / "interrupted.db"
    Store(db).close()
    proc = start(db, "import", str(big_log.path), stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while proc.poll() is None and time.monotonic() < deadline:
        if size(wal_of(db)) >= 0.3 * big_log.peak_wal:
            proc.send_signal(sent)
            break
        time.sleep(POLL_SECONDS)
    code, _, err = finish(proc)
    assert_sound(db)
    if code == 0:  # finished before the signal: nothing was interrupted
        assert is_imported(db, big_log.path, big_log.lines)
        return
    assert code == status, err
    assert err.startswith("Interrupted") and "Traceback" not in err
    assert not is_imported(db, big_log.path, big_log.lines)


# -- concurrency -------------------------------------------------------------------------------


@pytest.mark.slow
def test_four_concurrent_importers_all_succeed_with_exact_counts(tmp_path: Path) -> None:
    logs = [make_log(tmp_path / f"job{i}.log", JOB_LINES, seed=10 + i) for i in range(4)]
    db = tmp_path / "shared.db"
    Store(db).close()  # created first: see the test on opening a fresh database concurrently
    procs = [start(db, "import", "--json", str(log)) for log in logs]
    results = [finish(proc) for proc in procs]
    for code, _, err in results:
        assert_quiet_success(code, err)
    news = [json.loads(out)["files"][0]["new"] for _, out, _ in results]
    assert news == [JOB_LINES] * 4
    assert_sound(db)
    stats = cli_json(db, "stats")
    assert (stats["records"], stats["sources"]) == (4 * JOB_LINES, 4)
    for log in logs:
        assert is_imported(db, log, JOB_LINES)


@pytest.mark.slow
def test_the_same_file_imported_twice_at_once_is_stored_once(tmp_path: Path) -> None:
    log = make_log(tmp_path / "same.log", 4 * JOB_LINES, seed=20)
    db = tmp_path / "shared.db"
    Store(db).close()
    procs = [start(db, "import", "--json", str(log)) for _ in range(2)]
    results = [finish(proc) for proc in procs]
    for code, _, err in results:
        assert_quiet_success(code, err)
    reports = sorted((json.loads(out)["files"][0] for _, out, _ in results), key=lambda r: r["new"])
    assert [(r["new"], r["duplicates"]) for r in reports] == [
        (0, 4 * JOB_LINES),
        (4 * JOB_LINES, 0),
    ]
    assert reports[0]["already_imported_as"] is not None
    assert_sound(db)
    stats = cli_json(db, "stats")
    assert (stats["records"], stats["sources"]) == (4 * JOB_LINES, 1)


def _direct_counts(db: Path) -> tuple[int, int]:
    conn = sqlite3.connect(db, timeout=5)
    try:
        conn.execute("BEGIN")  # one snapshot for both counts
        (records,) = conn.execute("SELECT count(*) FROM records").fetchone()
        (sources,) = conn.execute("SELECT count(*) FROM sources").fetchone()
        conn.execute("COMMIT")
        return records, sources
    finally:
        conn.close()


def _read_in_child(db: Path, command: str) -> Any:
    """Run `tunelog COMMAND --json` as another process; it must succeed quietly."""
    code, out, err = finish(start(db, command, "--json"))
    assert_quiet_success(code, err)
    return json.loads(out)


@pytest.mark.slow
def test_queries_keep_working_while_an_import_runs(big_log: BigLog, tmp_path: Path) -> None:
    db = tmp_path / "busy.db"
    assert run_cli(db, "import", str(X86))[0] == 0
    before_stats, before_best = cli_json(db, "stats"), cli_json(db, "best")
    before_direct = _direct_counts(db)

    proc = start(db, "import", str(big_log.path), stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while proc.poll() is None and size(wal_of(db)) < 0.1 * big_log.peak_wal:
        assert time.monotonic() < deadline
        time.sleep(POLL_SECONDS)
    seen_direct: list[tuple[int, int]] = []
    seen_stats: list[dict[str, Any]] = []
    seen_best: list[list[Any]] = []
    while proc.poll() is None and time.monotonic() < deadline:
        seen_direct.append(_direct_counts(db))
        seen_stats.append(_read_in_child(db, "stats"))
        seen_best.append(_read_in_child(db, "best"))
    code, _, err = finish(proc)
    assert code == 0, err

    after_stats, after_best = cli_json(db, "stats"), cli_json(db, "best")
    after_direct = _direct_counts(db)
    assert after_direct == (before_direct[0] + big_log.lines, before_direct[1] + 1)
    assert seen_stats, "the import ended before any query ran"
    assert before_direct in seen_direct  # read while the import's transaction was open
    assert set(seen_direct) <= {before_direct, after_direct}
    assert all(best in (before_best, after_best) for best in seen_best)
    # Each figure of `stats` is its own query (see the snapshot test below): each is as
    # before or as after the import, never a half-imported count.
    for stats in seen_stats:
        assert all(stats[k] in (before_stats[k], after_stats[k]) for k in stats), stats


def test_stats_is_one_snapshot_while_an_import_commits(tmp_path: Path) -> None:
    db = tmp_path / "snapshot.db"
    with Store(db) as reader, Store(db) as writer:
        real = reader.conn
        calls = 0

        class ImportCommitsMidway:
            """The reader's connection; the other importer commits before its third query."""

            def execute(self, *args: Any) -> sqlite3.Cursor:
                nonlocal calls
                calls += 1
                if calls == 3:
                    import_paths(writer, [str(X86)])
                return real.execute(*args)

            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

        reader.conn = ImportCommitsMidway()  # type: ignore[assignment]
        stats = reader.stats()
        reader.conn = real
    assert calls > 3
    assert stats.records == stats.valid + stats.failed
    assert stats.records == sum(int(str(row["records"])) for row in stats.by_target)
    assert stats.records == sum(int(str(row["records"])) for row in stats.by_error)


@pytest.mark.slow
def test_opening_a_fresh_database_while_another_process_migrates_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Deterministic form of a race seen with four `tunelog import` processes started at once
    # on a new database path (about one run in thirty fails with exit 1). The other opener
    # runs in a thread so that, once the reads share one snapshot, it can wait for them.
    db = tmp_path / "fresh.db"
    real_connect = sqlite3.connect
    other_failed: list[BaseException] = []

    def open_and_migrate() -> None:
        try:
            Store(db).close()
        except BaseException as exc:
            other_failed.append(exc)

    other = threading.Thread(target=open_and_migrate)

    class OtherOpenerMigratesMidway(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql == "PRAGMA user_version" and other.ident is None:
                other.start()
                other.join(timeout=5)  # commits its migration now, unless held back
            return super().execute(sql, *args)

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        return real_connect(*args, factory=OtherOpenerMigratesMidway, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    with Store(db) as store:
        assert store.stats().records == 0
    other.join(timeout=TIMEOUT_SECONDS)
    assert other_failed == []


# -- hostile input through the CLI -------------------------------------------------------------


@dataclass(frozen=True)
class Hostile:
    """A hostile file, how many lines it has, the lines kept (as stored) and those rejected."""

    name: str
    data: bytes
    lines: int
    kept: dict[int, bytes]
    rejected: list[int]


def _lines(data: bytes) -> list[bytes]:
    """The lines as TVM's text-mode reader sees them (after each LF, CRLF or lone CR)."""
    return data.splitlines(keepends=True)


def _content(number: int, line: bytes) -> bytes:
    return (line.removeprefix(BOM) if number == 1 else line).rstrip(b"\r\n")


def _case(name: str, lines: list[bytes], bad: set[int]) -> Hostile:
    """A plain-text case: every line not in `bad` is a record kept byte for byte."""
    kept = {n: _content(n, line) for n, line in enumerate(lines, 1) if n not in bad}
    return Hostile(name, b"".join(lines), len(lines), kept, sorted(bad))


def _sample_lines() -> list[bytes]:
    return _lines(X86.read_bytes())


def _random_bytes() -> Hostile:
    data = random.Random(6).randbytes(64 * 1024)
    lines = _lines(data)
    rejected = [
        n
        for n, line in enumerate(lines, 1)
        if (s := line.rstrip(b"\r\n").strip()) and not s.startswith(b"#")
    ]
    return Hostile("random_bytes", data, len(lines), {}, rejected)


def _invalid_utf8() -> Hostile:
    lines = _sample_lines()
    lines[99] = lines[99][:50] + b"\xff\xfe\xc3" + lines[99][50:]
    return _case("invalid_utf8", lines, {100})


def _bom() -> Hostile:
    lines = _sample_lines()
    lines[0] = BOM + lines[0]
    return _case("bom", lines, set())


def _crlf() -> Hostile:
    return _case("crlf", [line.replace(b"\n", b"\r\n") for line in _sample_lines()], set())


def _nul_bytes() -> Hostile:
    lines = _sample_lines()
    lines[10] = lines[10][:30] + b"\x00\x00" + lines[10][30:]
    lines.insert(20, b"\x00" * 100 + b"\n")
    return _case("nul_bytes", lines, {11, 21})


def _ten_mb_garbage_line() -> Hostile:
    lines = _sample_lines()
    lines.insert(50, b"x" * 10_000_000 + b"\n")
    return _case("ten_mb_garbage_line", lines, {51})


def _ten_mb_record() -> Hostile:
    lines = _sample_lines()
    padding = b",".join([b"1"] * 5_000_000)  # a valid record whose args hold a huge list
    huge = lines[0].replace(b'"float32"], {}]', b'"float32", [' + padding + b"]], {}]", 1)
    assert len(huge) > 10_000_000
    return _case("ten_mb_record", [huge, *lines], set())


def _truncated_gzip() -> Hostile:
    packed = gzip.compress(X86.read_bytes())
    data = packed[: len(packed) // 2]
    readable = zlib.decompressobj(wbits=31).decompress(data)
    complete = [line for line in _lines(readable) if line.endswith((b"\n", b"\r"))]
    kept = {n: _content(n, line) for n, line in enumerate(complete, 1)}
    return Hostile("truncated_gzip", data, len(complete) + 1, kept, [len(complete) + 1])


HOSTILE = [
    pytest.param(_random_bytes, id="random_bytes"),
    pytest.param(_invalid_utf8, id="invalid_utf8"),
    pytest.param(_bom, id="bom"),
    pytest.param(_crlf, id="crlf"),
    pytest.param(_nul_bytes, id="nul_bytes"),
    pytest.param(_ten_mb_garbage_line, id="ten_mb_garbage_line"),
    pytest.param(_ten_mb_record, id="ten_mb_record"),
    pytest.param(_truncated_gzip, id="truncated_gzip"),
]


@pytest.fixture(params=HOSTILE)
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Hostile, Path]:
    case: Hostile = request.param()
    path = tmp_path / case.name
    path.write_bytes(case.data)
    return case, path


@pytest.mark.slow
def test_hostile_file_keeps_good_lines_and_accounts_for_every_line(
    hostile: tuple[Hostile, Path], tmp_path: Path
) -> None:
    case, path = hostile
    db = tmp_path / "json.db"
    code, out, _ = run_cli(db, "import", str(path), "--json")
    assert code == (0 if case.kept else 1)  # a file with no record at all is no log
    (report,) = json.loads(out)["files"]
    assert report["lines"] == case.lines
    assert report["lines"] == sum(
        report[k] for k in ("new", "duplicates", "comments", "blank", "rejected")
    )
    assert (report["new"], report["rejected"]) == (len(case.kept), len(case.rejected))
    assert [r["line"] for r in report["rejects"]] == case.rejected[:REPORTED_REJECTS]
    assert all(r["reason"] for r in report["rejects"])
    assert stored_lines(db) == case.kept
    assert_sound(db)


@pytest.mark.slow
def test_hostile_file_reports_each_bad_line_on_stderr(
    hostile: tuple[Hostile, Path], tmp_path: Path
) -> None:
    case, path = hostile
    code, out, err = run_cli(tmp_path / "table.db", "import", str(path))
    assert str(path) in out
    if not case.kept:  # no record at all: not a log, one error says so (`rejects` lists them)
        assert code == 1
        assert err.startswith(f"Error: {path} holds no tuning record: it looks like binary data")
        assert len(err.splitlines()) == 1
        return
    assert code == 0
    reported: list[int] = []
    pattern = re.compile(rf"{re.escape(str(path))}:(\d+): \S.*")
    lines = err.splitlines()
    if case.name == "truncated_gzip":  # said last: where reading stopped
        assert lines.pop() == (
            f"warning: {path} is damaged, reading stopped early (unreadable after line "
            f"{case.lines - 1}: Compressed file ended before the end-of-stream marker was "
            "reached): the lines before were imported"
        )
    for line in lines:
        match = pattern.fullmatch(line)
        if match is None:  # only the count of the rejected lines not listed may follow
            unlisted = len(case.rejected) - len(reported)
            assert line.startswith(f"{path}: ") and f" {unlisted} more" in line, line
            continue
        reported.append(int(match[1]))
        assert len(line) < 300  # a reason, not the line echoed back
    assert reported == case.rejected[:REPORTED_REJECTS]


def test_import_json_still_reports_rejected_lines_on_stderr(tmp_path: Path) -> None:
    case = _nul_bytes()
    path = tmp_path / "nul.log"
    path.write_bytes(case.data)
    code, out, err = run_cli(tmp_path / "json.db", "import", "--json", str(path))
    assert code == 0
    assert json.loads(out)["files"][0]["rejected"] == 2
    assert [line.split(": ")[0] for line in err.splitlines()] == [f"{path}:11", f"{path}:21"]


def test_crlf_and_bom_lines_are_the_same_records_as_plain_lines(tmp_path: Path) -> None:
    db = tmp_path / "same.db"
    for case in (_crlf(), _bom()):
        path = tmp_path / case.name
        path.write_bytes(case.data)
        (report,) = cli_json(db, "import", str(path))["files"]
        assert report["new"] + report["duplicates"] == X86_LINES
    (plain,) = cli_json(db, "import", str(X86))["files"]
    assert (plain["new"], plain["duplicates"]) == (0, X86_LINES)


# -- unusable databases and inputs -------------------------------------------------------------


def _assert_one_error_line(code: int, out: str, err: str) -> None:
    assert (code, out) == (1, "")
    assert err.startswith("Error: ") and err.count("\n") == 1, err


def _random_file(path: Path) -> None:
    path.write_bytes(random.Random(7).randbytes(8192))


def _newer_schema(path: Path) -> None:
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()


def _foreign_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("INSERT INTO notes (text) VALUES ('mine')")
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "make", [_random_file, _foreign_sqlite, _newer_schema], ids=["bytes", "sqlite", "newer"]
)
@pytest.mark.parametrize("command", [("stats",), ("import", str(X86))], ids=["stats", "import"])
def test_not_a_tunelog_database_is_one_error_line_and_left_untouched(
    tmp_path: Path, make: Callable[[Path], None], command: tuple[str, ...]
) -> None:
    db = tmp_path / "other.db"
    make(db)
    original = db.read_bytes()
    _assert_one_error_line(*run_cli(db, *command))
    assert db.read_bytes() == original


def test_a_refused_database_is_not_left_open(tmp_path: Path) -> None:
    db = tmp_path / "newer.db"
    _newer_schema(db)
    with pytest.raises(NewerSchemaError) as refused:  # keeps the traceback, as callers may
        Store(db)
    assert refused.value is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["newer.db"]


@pytest.mark.parametrize("where", ["directory", "missing_parent"])
def test_unusable_database_path_is_one_error_line(tmp_path: Path, where: str) -> None:
    db = tmp_path if where == "directory" else tmp_path / "no" / "such" / "dir.db"
    _assert_one_error_line(*run_cli(db, "stats"))


def _missing(path: Path) -> None:
    pass


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _no_permission(path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files without read permission")
    path.write_bytes(X86.read_bytes())
    path.chmod(0)


@pytest.mark.parametrize("make", [_missing, _fifo, _no_permission], ids=lambda f: f.__name__)
def test_unreadable_input_is_one_error_line_and_database_stays_usable(
    tmp_path: Path, make: Callable[[Path], None]
) -> None:
    db = tmp_path / "ok.db"
    bad = tmp_path / "input.log"
    make(bad)
    _assert_one_error_line(*run_cli(db, "import", str(bad)))
    (report,) = cli_json(db, "import", str(X86))["files"]
    assert report["new"] == X86_LINES
    assert cli_json(db, "stats")["sources"] == 1
    assert_sound(db)


def test_a_gzip_damaged_inside_keeps_nothing_and_says_so_last(tmp_path: Path) -> None:
    """Bytes zeroed inside a gzip decompress to garbage until its CRC fails at the end: no
    line read can be trusted, so the file is rolled back (exit 1), and the import says the
    file is damaged last (a note, a warning, an error), not only as its last reject."""
    packed = bytearray(gzip.compress(b"".join(X86.read_bytes() for _ in range(20))))
    packed[len(packed) // 2 : len(packed) // 2 + 40] = bytes(40)
    path = tmp_path / "damaged.log.gz"
    path.write_bytes(bytes(packed))
    code, out, err = run_cli(tmp_path / "d.db", "import", str(path), "--json")
    assert code == 1
    (report,) = json.loads(out)["files"]
    assert report["damaged"].startswith("unreadable after line ")
    assert (report["garbled"], report["rolled_back"], report["new"]) == (True, True, 0)
    assert report["discarded"] > 0
    assert err.splitlines()[-2].startswith(f"warning: {path} is damaged (unreadable after line")
    assert err.splitlines()[-1] == (
        f"Error: {path} is damaged: nothing of it was imported (see the warning above)"
    )
    code, out, err = run_cli(tmp_path / "e.db", "import", str(path))
    assert code == 1 and "rolled back (damaged): " in out
    assert cli_json(tmp_path / "e.db", "stats")["records"] == 0
    # Imported again, it is damaged again (nothing of it was kept to be known).
    code, out, err = run_cli(tmp_path / "e.db", "import", str(path))
    assert code == 1 and "rolled back (damaged): " in out


def _digit_flipped(packed: bytes, line: bytes) -> bytes:
    """`packed` (a gzip of stored blocks) with the first digit of `line`'s cost changed: a
    well-formed record that was never measured, which only the CRC tells."""
    at = packed.index(line) + line.index(b'"result": [[') + len(b'"result": [[')
    flipped = bytearray(packed)
    flipped[at] = ord("1") if flipped[at] != ord("1") else ord("2")
    return bytes(flipped)


def test_a_record_a_failed_crc_garbled_never_decides_best(tmp_path: Path) -> None:
    """A gzip stored without compression, one cost digit flipped: the line still reads as a
    record (a faster one), and only the CRC says so; it won `best` and was exported."""
    path = tmp_path / "rot.log.gz"
    stored = gzip.compress(X86.read_bytes(), compresslevel=0)
    flipped = _digit_flipped(stored, _LINES[1])
    path.write_bytes(flipped)
    # Stored blocks: the garbled line is in the file as it decompresses, a faster record.
    start = stored.index(_LINES[1])
    garbled, original = scan_line(flipped[start : start + len(_LINES[1]) - 1]), scan_line(_LINES[1])
    assert isinstance(garbled, Measurement) and isinstance(original, Measurement)
    assert garbled.mean_cost < original.mean_cost
    code, _, _ = run_cli(tmp_path / "r.db", "import", str(path))
    assert code == 1
    assert cli_json(tmp_path / "r.db", "stats")["records"] == 0


def test_junk_with_gzips_magic_after_a_complete_member_keeps_the_member(tmp_path: Path) -> None:
    """A sound member, then bytes that start like a member and are none: the member's lines
    were checked by its CRC and stay (review: any deflate error rolled the file back)."""
    path = tmp_path / "junk.log.gz"
    path.write_bytes(gzip.compress(X86.read_bytes()) + b"\x1f\x8b\x08\0\0\0\0\0\0\x03garbage")
    code, out, _ = run_cli(tmp_path / "j.db", "import", str(path), "--json")
    (report,) = json.loads(out)["files"]
    assert (code, report["new"], report["garbled"]) == (0, X86_LINES, False)
    assert report["damaged"].startswith(f"unreadable after line {X86_LINES}: ")


def test_watch_says_a_garbled_file_kept_nothing(tmp_path: Path) -> None:
    """watch said every complete line read was in the database, and named only the last
    reject ("unreadable input after line 200"), of a file it had rolled back."""
    watched = tmp_path / "wd"
    watched.mkdir()
    packed = bytearray(gzip.compress(X86.read_bytes()))
    packed[-8] ^= 0xFF  # the CRC
    (watched / "crc.log.gz").write_bytes(bytes(packed))
    code, out, err = run_cli(tmp_path / "w.db", "watch", "--refreshes", "1", str(watched))
    assert code == 0
    assert f"warning: {watched / 'crc.log.gz'} is damaged (unreadable after line" in err
    assert out.splitlines()[-1].endswith(
        "every complete line read is in the database, but those of 1 damaged file(s) "
        "(rolled back, above)"
    )


@pytest.mark.parametrize("suffix", ["xz", "bz2"])
def test_an_xz_or_bz2_stream_corrupt_after_giving_lines_keeps_nothing(
    tmp_path: Path, suffix: str
) -> None:
    data = b"".join(X86.read_bytes() for _ in range(40))
    packed = bytearray(_PACK[suffix](data))
    packed[len(packed) * 3 // 4] ^= 0xFF
    path = tmp_path / f"rot.log.{suffix}"
    path.write_bytes(bytes(packed))
    code, out, _ = run_cli(tmp_path / "r.db", "import", str(path), "--json")
    (report,) = json.loads(out)["files"]
    assert (code, report["garbled"], report["new"]) == (1, True, 0)


def test_a_compressed_file_damaged_before_its_first_line_says_it_is_damaged(
    tmp_path: Path,
) -> None:
    """Not 'holds no tuning record: it looks like an empty file' (the retrial)."""
    path = tmp_path / "tiny.log.gz"
    path.write_bytes(gzip.compress(X86.read_bytes())[:20])
    code, _, err = run_cli(tmp_path / "t.db", "import", str(path))
    assert (code, err) == (
        1,
        f"Error: {path} is damaged (unreadable from its start: Compressed file ended before "
        "the end-of-stream marker was reached): no tuning record could be read from it; give "
        "an undamaged copy\n",
    )


_PACK: dict[str, Callable[[bytes], bytes]] = {
    "gz": gzip.compress,
    "xz": lzma.compress,
    "bz2": bz2.compress,
}
_LINES = X86.read_bytes().splitlines(keepends=True)
_HALF = len(_LINES) // 2


@pytest.mark.parametrize("suffix", list(_PACK))
@pytest.mark.parametrize(
    ("between", "read_by"),
    [
        (b"", {"gz", "xz", "bz2"}),  # concatenated streams: gzip -d, xz -d, bzip2 -d read both
        (b"\0" * 8, {"gz", "xz"}),  # padding: gzip skips NUL bytes, xz takes them in fours
        (b"\0\0", {"gz"}),
        (b"junk", set()),
    ],
    ids=["streams", "padding", "odd-nuls", "junk"],
)
def test_what_follows_a_compressed_stream_is_read_or_said_to_be_damage(
    tmp_path: Path, suffix: str, between: bytes, read_by: set[str]
) -> None:
    """Python's LZMAFile and BZ2File stopped at the first bytes that start no stream, without
    a word: the second half of each file below was lost, even after valid .xz padding."""
    first, second = b"".join(_LINES[:_HALF]), b"".join(_LINES[_HALF:])
    path = tmp_path / f"two.log.{suffix}"
    path.write_bytes(_PACK[suffix](first) + between + _PACK[suffix](second))
    code, out, _ = run_cli(tmp_path / "t.db", "import", str(path), "--json")
    (report,) = json.loads(out)["files"]
    if suffix in read_by:
        assert (code, report["new"], report["rejected"], report["damaged"]) == (
            0,
            X86_LINES,
            0,
            None,
        )
    else:
        assert report["damaged"].startswith(f"unreadable after line {_HALF}: ")
        assert (report["new"], report["rejected"]) == (_HALF, 1)


@pytest.mark.parametrize(
    ("closed", "args", "said"),
    [
        (1, ["import", str(EDGE)], ""),  # committed, then a traceback and exit 1
        (1, ["best"], ""),
        (1, ["export", "-"], ""),
        (0, ["import", "-"], "-"),  # an empty standard input: its row says 0 lines
        (0, ["diagnose", "-"], "no 'Cannot find tuning records'"),
    ],
    ids=["import >&-", "best >&-", "export - >&-", "import - <&-", "diagnose - <&-"],
)
def test_a_closed_standard_stream_is_the_null_device_not_a_traceback(
    tmp_path: Path, closed: int, args: list[str], said: str
) -> None:
    """`>&-` and `<&-` left sys.stdout or sys.stdin None: AttributeError tracebacks."""
    db = tmp_path / "t.db"
    assert run_cli(db, "import", str(X86))[0] == 0
    proc = subprocess.run(
        [sys.executable, "-m", "tunelog", "--db", str(db), *args],
        stdout=subprocess.PIPE if closed != 1 else None,
        stderr=subprocess.PIPE,
        env=child_env(),
        preexec_fn=lambda: os.close(closed),
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert said in err + (proc.stdout or b"").decode()
    if args[0] == "import" and closed == 1:  # the import committed, its table went nowhere
        assert cli_json(db, "stats")["sources"] == 2
