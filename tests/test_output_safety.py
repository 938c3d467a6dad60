"""Outputs never destroy the database or a device node: `export`/`report --force` onto the open
database (or its side files) is refused, special files are written through, symlinks followed."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_LOGS, cli_import, runner
from tunelog.cli import app
from tunelog.exceptions import OutputIsDatabaseError
from tunelog.exporting import write_lines_atomically

X86 = str(SAMPLE_LOGS / "x86_mini_llvm.log")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database of the x86 sample log, with its -wal and -shm files."""
    path = tmp_path / "e.db"
    cli_import(path, X86)
    (tmp_path / "e.db-wal").touch()
    (tmp_path / "e.db-shm").touch()
    return path


def _stats(db: Path) -> str:
    result = runner.invoke(app, ["--db", str(db), "stats", "--json"])
    assert result.exit_code == 0, result.output
    return result.stdout


def _hard_link(db: Path) -> Path:
    link = db.with_name("hard.db")
    os.link(db, link)
    return link


def _symlink(db: Path) -> Path:
    link = db.with_name("soft.db")
    link.symlink_to(db)
    return link


OUTPUTS: dict[str, Callable[[Path], Path]] = {
    "database": lambda db: db,
    "wal": lambda db: db.with_name("e.db-wal"),
    "shm": lambda db: db.with_name("e.db-shm"),
    "relative": lambda db: Path(os.path.relpath(db)),
    "symlink": _symlink,
    "hard link": _hard_link,
}


@pytest.mark.slow
@pytest.mark.parametrize("command", ["export", "report"])
@pytest.mark.parametrize("output", list(OUTPUTS))
def test_writing_onto_the_open_database_is_refused_even_with_force(
    db: Path, command: str, output: str
) -> None:
    if command == "report":
        pytest.importorskip("plotly")
    before = _stats(db)
    out = OUTPUTS[output](db)
    result = runner.invoke(app, ["--db", str(db), command, "--force", str(out)])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"Error: {out} is the database being read"), result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert _stats(db) == before


@pytest.mark.slow
@pytest.mark.parametrize("command", [["export"], ["export", "--metaschedule"], ["report"]])
def test_a_source_filtered_output_onto_the_database_is_refused_too(
    db: Path, command: list[str]
) -> None:
    if command == ["report"]:
        pytest.importorskip("plotly")
    # --source answers from a temporary database of the chosen file: still the user's it guards.
    edge = str(SAMPLE_LOGS / "edge_cases.log")
    assert runner.invoke(app, ["--db", str(db), "import", edge]).exit_code == 0
    before = _stats(db)
    result = runner.invoke(app, ["--db", str(db), *command, "--source", "1", "--force", str(db)])
    assert result.exit_code == 1, result.output
    assert _stats(db) == before


def test_the_api_refuses_the_database_too(db: Path) -> None:
    with pytest.raises(OutputIsDatabaseError):
        write_lines_atomically(str(db), [b"x"], force=True, protected=[str(db)])


def _exported(db: Path) -> bytes:
    out = db.with_name("reference.log")
    assert runner.invoke(app, ["--db", str(db), "export", "--force", str(out)]).exit_code == 0
    return out.read_bytes()


def test_a_character_device_is_written_through_not_replaced(db: Path, tmp_path: Path) -> None:
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a node like /dev/null
    except PermissionError:
        pytest.skip("creating a device node needs root")
    result = runner.invoke(app, ["--db", str(db), "export", "--force", str(null)])
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(null.stat().st_mode)


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "force"])
def test_a_named_pipe_is_written_through(db: Path, tmp_path: Path, force: list[str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer can open it
    try:
        result = runner.invoke(app, ["--db", str(db), "export", *force, str(fifo)])
        assert result.exit_code == 0, result.output
        received = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert received == _exported(db)


def test_dev_stdout_is_written_through(db: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tunelog", "--db", str(db), "export", "/dev/stdout"],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == _exported(db)
    assert os.path.islink("/dev/stdout") or stat.S_ISCHR(os.stat("/dev/stdout").st_mode)


def test_a_symlink_keeps_pointing_at_the_replaced_target(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "real.log"
    target.write_text("old\n")
    link = tmp_path / "best.log"
    link.symlink_to(target)
    result = runner.invoke(app, ["--db", str(db), "export", "--force", str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink()
    assert target.read_bytes() == _exported(db)


def test_a_symlink_without_force_is_still_refused(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "real.log"
    target.write_text("old\n")
    link = tmp_path / "best.log"
    link.symlink_to(target)
    result = runner.invoke(app, ["--db", str(db), "export", str(link)])
    assert result.exit_code == 1
    assert "already exists" in result.stderr
    assert target.read_text() == "old\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_output_to_a_full_disk_is_one_error_line_naming_the_output(tmp_path: Path) -> None:
    """stdout that cannot be written (a full disk) used to say only 'No space left on
    device'."""
    db = tmp_path / "t.db"
    assert runner.invoke(app, ["--db", str(db), "import", str(X86)]).exit_code == 0
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "tunelog", "--db", str(db), "best", "--json"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert (done.returncode, done.stderr) == (
        1,
        "Error: cannot write the output: No space left on device; check the disk it goes to\n",
    )


def test_a_device_named_to_import_says_how_to_read_it(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--db", str(tmp_path / "t.db"), "import", "/dev/null"])
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: /dev/null is not a regular file or directory: to read it, "
        "`tunelog import - < /dev/null`\n",
    )


def _lines(out: Path, appear: bytes | None) -> Iterator[bytes]:
    """Lines to write; once the first is written, `appear` becomes a file at `out` (the
    user's, written while the export ran), if given."""
    yield b"new line 1"
    if appear is not None:
        out.write_bytes(appear)
    yield b"new line 2"


def test_a_file_that_appears_at_the_output_meanwhile_is_refused_not_replaced(
    tmp_path: Path,
) -> None:
    """Without --force an existing OUT is refused; one written while the export ran was
    replaced silently (the check came before the rename)."""
    from tunelog.exceptions import OutputExistsError
    from tunelog.exporting import write_files_atomically

    first, second = tmp_path / "database_workload.json", tmp_path / "database_tuning_record.json"
    with pytest.raises(OutputExistsError, match="already exists"):
        write_files_atomically(
            [(str(first), _lines(first, None)), (str(second), _lines(second, b"mine\n"))],
            kind="MetaSchedule database file",
        )
    assert second.read_bytes() == b"mine\n"
    # The first file, linked in already, went again: none of the output was placed.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["database_tuning_record.json"]


def test_an_interrupt_between_the_renames_waits_for_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C between the renames of a MetaSchedule export left the new workload file beside
    the old records file (which TVM refuses to load)."""
    import signal

    from tunelog.exporting import write_files_atomically

    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_bytes(b"old a\n")
    second.write_bytes(b"old b\n")
    real_replace = os.replace
    calls: list[str] = []

    def interrupted_replace(src: str, dst: Path) -> None:
        real_replace(src, dst)
        calls.append(str(dst))
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C right after the first rename

    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        write_files_atomically([(str(first), [b"new a"]), (str(second), [b"new b"])], force=True)
    assert (first.read_bytes(), second.read_bytes()) == (b"new a\n", b"new b\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_a_signal_handler_not_set_from_python_is_not_held_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One that `signal.getsignal` cannot name (set by C code embedding Python) could not be
    put back after the block: it would stay replaced, Ctrl-C swallowed for good."""
    import signal

    from tunelog.interrupts import interrupts_deferred

    set_to: list[object] = []
    monkeypatch.setattr(signal, "getsignal", lambda sig: None)
    monkeypatch.setattr(signal, "signal", lambda sig, handler: set_to.append(handler))
    with interrupts_deferred():
        pass
    assert set_to == []
