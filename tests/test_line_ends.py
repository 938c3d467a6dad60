"""Lines as TVM reads them (LF, CRLF or a lone CR end a line) and never more than a cap of one
held in memory: a longer line is counted and rejected with `file:line: reason` on every path."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import random
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tunelog
from tests.conftest import DATA, X86, database_contents, one_shot, runner
from tunelog import linesplit
from tunelog.cli import app
from tunelog.linesplit import OverlongLine, split_lines
from tunelog.models import FileReport
from tunelog.store import Store

X86_CONTENT = [line.rstrip(b"\n") for line in X86.read_bytes().splitlines(keepends=True)]
CAP = 4000  # the line limit in these tests (a record of the sample log is ~600 bytes)


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    """A line limit of CAP bytes, so that an overlong line is a few kB."""
    monkeypatch.setattr(linesplit, "MAX_LINE_BYTES", CAP)
    return CAP


def as_read(data: bytes, chunk: int) -> Callable[[int], bytes]:
    """A `read` returning at most `chunk` bytes a call, as a pipe or decompressor may."""
    stream = io.BytesIO(data)
    return lambda size: stream.read(min(size, chunk))


def universal(data: bytes, cap: int) -> list[object]:
    """The lines Python's text mode reads (newline=None), overlong ones as (length, end)."""
    return [
        (len(line), linesplit.line_end(line)) if len(line) > cap else line
        for line in data.splitlines(keepends=True)
    ]


def split(data: bytes, cap: int, chunk: int) -> list[object]:
    return [
        (line.length, bytes(line)) if isinstance(line, OverlongLine) else line
        for line in split_lines(as_read(data, chunk), cap=cap, chunk=chunk)
    ]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b"b", b"\r", b"\n", b"\r\n", b"x" * 7])).map(b"".join),
    cap=st.integers(1, 12),
    chunk=st.integers(1, 12),
)
def test_lines_split_as_universal_newlines_whatever_the_chunks(
    data: bytes, cap: int, chunk: int
) -> None:
    assert split(data, cap, chunk) == universal(data, cap)


def test_a_line_far_over_the_cap_is_never_held() -> None:
    megabyte = b"a" * (1 << 20)
    chunks = iter([megabyte] * 64 + [b"\n", b"tail\n"])
    tracemalloc.start()
    try:
        lines = [
            (type(line), len(line))
            for line in split_lines(lambda _size: next(chunks, b""), cap=8 << 20)
        ]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines == [(OverlongLine, 1), (bytes, 5)]
    assert peak < 12 << 20  # the cap and a chunk or two, not the 64 MB line


def _records(ending: bytes) -> bytes:
    return b"".join(line + ending for line in X86_CONTENT)


def _text_mode_lines(path: Path) -> int:
    """How many lines TVM's reader (`for row in open(path)`) sees."""
    with open(path, encoding="utf-8") as file:
        return sum(1 for _ in file)


@pytest.mark.parametrize("ending", [b"\r", b"\r\n", b"\n"], ids=["cr", "crlf", "lf"])
@pytest.mark.parametrize("repair", [False, True], ids=["plain", "repair"])
def test_every_line_end_tvm_reads_gives_every_record(
    store: Store, tmp_path: Path, ending: bytes, repair: bool
) -> None:
    log = tmp_path / "mac.log"
    log.write_bytes(b"# old Mac file" + ending + _records(ending) + b"oops" + ending)
    (report,) = tunelog.import_paths(store, [str(log)], repair=repair)
    assert _text_mode_lines(log) == report.lines == len(X86_CONTENT) + 2
    assert (report.new, report.comments, report.rejected) == (len(X86_CONTENT), 1, 1)
    assert [r.line for r in report.rejects] == [len(X86_CONTENT) + 2]
    stored = database_contents(store.conn)["lines"]
    assert [line for _, line in stored] == X86_CONTENT


def test_a_cr_only_log_exports_what_the_lf_log_exports(tmp_path: Path) -> None:
    exported: list[bytes] = []
    for ending in (b"\r", b"\n"):
        log = tmp_path / f"log{len(exported)}.log"
        log.write_bytes(_records(ending))
        db = str(tmp_path / f"{len(exported)}.db")
        out = tmp_path / f"best{len(exported)}.log"
        assert runner.invoke(app, ["--db", db, "import", str(log)]).exit_code == 0
        assert runner.invoke(app, ["--db", db, "export", str(out)]).exit_code == 0
        exported.append(out.read_bytes())
    assert exported[0] == exported[1] != b""


# -- growing files with every kind of line end ------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("follow", [False, True], ids=["import", "watch"])
@pytest.mark.parametrize("seed", range(6))
def test_a_file_grown_in_any_pieces_ends_as_one_import_of_it(
    tmp_path: Path, follow: bool, seed: int
) -> None:
    rng = random.Random(seed)
    data = b"".join(
        line + rng.choice([b"\r", b"\n", b"\r\n"]) + rng.choice([b"", b"", b"\r", b"\r\n"])
        for line in X86_CONTENT[:40]
    )
    # A plain import takes a last line without end as it is (then reads the file in full when
    # it grows): it is cut after line ends only, a watch anywhere.
    places = [n for n in range(1, len(data)) if follow or data[n - 1] in b"\r\n"]
    cuts = rng.sample(places, 6)
    # A cut between the CR and the LF of a CRLF on purpose: the LF comes in the next piece.
    crlf = data.index(b"\r\n") + 1
    cuts = sorted({*cuts, crlf})
    log = tmp_path / "growing.log"
    log.write_bytes(b"")
    with Store(tmp_path / "grown.db") as store:
        for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
            with log.open("ab") as out:
                out.write(data[start:end])
            (report,) = tunelog.import_paths(store, [str(log)], follow=follow)
            assert report.accounted, report
        if follow:  # the last line is complete: a plain import takes any line held back
            tunelog.import_paths(store, [str(log)])
        grown = database_contents(store.conn)
    assert grown == one_shot(tmp_path, log)
    assert grown["sources"][0][4] == _text_mode_lines(log)  # lines, as TVM counts them


# -- lines over the limit, on every reader path ---------------------------------------------


def _overlong_log(extra: bytes = b"") -> bytes:
    """Two records, a line of 3 CAP bytes (no JSON), a record, and `extra` at the end."""
    return (
        X86_CONTENT[0]
        + b"\n"
        + X86_CONTENT[1]
        + b"\r\n"
        + b'{"x": "'
        + b"a" * (3 * CAP)
        + b'"}\n'
        + X86_CONTENT[2]
        + b"\n"
        + extra
    )


OVERLONG_REASON = f"line of {3 * CAP + 10:,} bytes is longer than the limit of {CAP:,} bytes"
COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "plain": lambda data: data,
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
}


def _one_reject(report: FileReport, line: int, reason: str) -> None:
    assert report.accounted, report
    assert report.rejected == 1
    (rejected,) = report.rejects
    assert rejected.line == line
    assert rejected.reason.startswith(reason), rejected.reason


@pytest.mark.parametrize("compression", list(COMPRESSORS))
@pytest.mark.parametrize("repair", [False, True], ids=["plain", "repair"])
def test_an_overlong_line_is_rejected_and_counted(
    small_cap: int, store: Store, tmp_path: Path, compression: str, repair: bool
) -> None:
    log = tmp_path / "long.log"
    log.write_bytes(COMPRESSORS[compression](_overlong_log()))
    (report,) = tunelog.import_paths(store, [str(log)], repair=repair)
    _one_reject(report, 3, OVERLONG_REASON)
    assert (report.lines, report.new) == (4, 3)


def test_an_overlong_line_from_stdin_is_reported_as_file_and_line(
    small_cap: int, tmp_path: Path
) -> None:
    db = str(tmp_path / "stdin.db")
    result = runner.invoke(app, ["--db", db, "import", "--json", "-"], input=_overlong_log())
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)["files"]
    assert (entry["lines"], entry["new"], entry["rejected"]) == (4, 3, 1)
    assert result.stderr.startswith(f"-:3: {OVERLONG_REASON}; not read\n")


@pytest.mark.parametrize("follow", [False, True], ids=["import", "watch"])
def test_an_overlong_line_appended_to_a_grown_file_is_rejected(
    small_cap: int, store: Store, tmp_path: Path, follow: bool
) -> None:
    log = tmp_path / "grown.log"
    log.write_bytes(X86_CONTENT[5] + b"\n")
    tunelog.import_paths(store, [str(log)], follow=follow)
    with log.open("ab") as out:
        out.write(_overlong_log())
    (report,) = tunelog.import_paths(store, [str(log)], follow=follow)
    assert report.skipped_lines == 1
    _one_reject(report, 4, OVERLONG_REASON)


def test_an_overlong_last_line_without_end_is_held_back_while_watching(
    small_cap: int, store: Store, tmp_path: Path
) -> None:
    log = tmp_path / "writing.log"
    log.write_bytes(_overlong_log(b"b" * (2 * CAP)))
    (report,) = tunelog.import_paths(store, [str(log)], follow=True)
    assert (report.lines, report.rejected, report.held_back_bytes) == (4, 1, 2 * CAP)
    (report,) = tunelog.import_paths(store, [str(log)])
    _one_reject(report, 5, f"line of {2 * CAP:,} bytes")


def test_overlong_metaschedule_lines_are_rejected(
    monkeypatch: pytest.MonkeyPatch, store: Store, tmp_path: Path
) -> None:
    cap = 64 << 10  # above the 28 kB workload line of the fixture
    monkeypatch.setattr(linesplit, "MAX_LINE_BYTES", cap)
    database = tmp_path / "ms"
    shutil.copytree(DATA / "metaschedule_gmm", database)
    records = database / "database_tuning_record.json"
    workloads = database / "database_workload.json"
    first_record = records.read_bytes().splitlines()[0]
    with records.open("ab") as out:
        out.write(b"[0, " + b" " * (2 * cap) + b"]\n")
    with workloads.open("ab") as out:
        out.write(b'["' + b"h" * (2 * cap) + b'", ""]\n')
    index = workloads.read_bytes().count(b"\n") - 1
    with records.open("ab") as out:  # a record of that last, overlong workload line
        out.write(first_record.replace(b"[0,", b"[%d," % index, 1) + b"\n")
    record_lines = records.read_bytes().count(b"\n")
    (report,) = tunelog.import_paths(store, [str(database)])
    assert report.accounted, report
    assert report.lines == record_lines
    reasons = {r.line: r.reason for r in report.rejects}
    assert reasons == {
        record_lines - 1: f"line of {2 * cap + 6:,} bytes is longer than the limit of 64 KiB"
        "; not read",
        record_lines: f"MetaSchedule record: workload line {index + 1} unreadable (line of "
        f"{2 * cap + 9:,} bytes is longer than the limit of 64 KiB; not read)",
    }
