"""Entries that cannot be read are skipped with a named reason, and the rest is imported: files
that vanish mid-import (a tuner's temporary files), dangling symlinks, unreadable directories;
`watch` never dies of them. A path named on the command line that cannot be read is an error
(exit 1), once the other files are imported."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import tunelog
from tests.conftest import EDGE, X86, runner
from tunelog.api import importing
from tunelog.cli import app
from tunelog.exceptions import InvalidValueError
from tunelog.inputs import LogInput
from tunelog.store import Store


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory of three logs (a.log, b.log, c.log); the working directory is its parent."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    directory = tmp_path / "logs"
    directory.mkdir()
    shutil.copy(X86, directory / "a.log")
    shutil.copy(EDGE, directory / "b.log")
    (directory / "c.log").write_bytes(X86.read_bytes().replace(b"0.16.dev0", b"0.17"))
    return directory


def vanish_before_open(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Delete the file called `name` just before the import opens it."""
    real = importing._metaschedule_files

    def deleting(source: LogInput) -> tuple[Path, Path | None] | None:
        if Path(source.path).name == name:
            os.unlink(source.path)
        return real(source)

    monkeypatch.setattr(importing, "_metaschedule_files", deleting)


def _import_json(*args: str) -> tuple[int, dict[str, object], str]:
    result = runner.invoke(app, ["--db", "t.db", "import", "--json", *args])
    return result.exit_code, json.loads(result.stdout or "{}"), result.stderr


def _files(data: dict[str, object]) -> list[tuple[object, ...]]:
    files = data["files"]
    assert isinstance(files, list)
    return [(f["path"], f["new"], f["unreadable"]) for f in files]


def test_a_file_vanishing_during_a_directory_import_is_skipped(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vanish_before_open(monkeypatch, "b.log")
    code, data, err = _import_json("logs")
    assert code == 0
    assert _files(data) == [
        ("logs/a.log", 200, None),
        ("logs/b.log", 0, "vanished before it could be read"),
        ("logs/c.log", 200, None),
    ]
    assert "logs/b.log vanished before it could be read: skipped\n" in err


def test_the_api_skips_a_vanished_file_and_imports_the_rest(
    logs: Path, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    vanish_before_open(monkeypatch, "a.log")
    reports = tunelog.import_paths(store, [str(logs)])
    assert [(Path(r.path).name, r.new, r.unreadable) for r in reports] == [
        ("a.log", 0, "vanished before it could be read"),
        ("b.log", 8, None),
        ("c.log", 200, None),
    ]


def test_a_dangling_symlink_is_reported_not_silently_skipped(logs: Path) -> None:
    (logs / "b-link.log").symlink_to(logs / "gone.log")
    code, data, err = _import_json("logs")
    assert code == 0
    assert ("logs/b-link.log", 0, "is a dangling symlink (its target does not exist)") in _files(
        data
    )
    assert "logs/b-link.log is a dangling symlink (its target does not exist): skipped\n" in err
    assert sum(f[1] for f in _files(data) if isinstance(f[1], int)) == 408


def test_an_unreadable_subdirectory_is_reported(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (logs / "sub").mkdir()
    real_walk = os.walk

    def walk(top: str, onerror: object = None, followlinks: bool = False) -> object:
        for root, dirs, files in real_walk(top):
            if Path(root).name == "sub":
                assert callable(onerror)
                onerror(PermissionError(13, "Permission denied", root))
                continue
            yield root, dirs, files

    monkeypatch.setattr(os, "walk", walk)
    code, data, err = _import_json("logs")
    assert code == 0
    reason = "is a directory that cannot be read (Permission denied)"
    assert ("logs/sub", 0, reason) in _files(data)
    assert f"logs/sub {reason}: skipped\n" in err


def test_an_unreadable_subdirectory_for_real(logs: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads directories without read permission")
    sub = logs / "sub"
    sub.mkdir()
    sub.chmod(0)
    try:
        code, data, _ = _import_json("logs")
    finally:
        sub.chmod(0o755)
    assert code == 0
    assert any(f[0] == str(sub) and f[2] for f in _files(data))


def test_a_missing_named_path_is_an_error_after_the_others_are_imported(logs: Path) -> None:
    result = runner.invoke(app, ["--db", "t.db", "import", "logs/a.log", "nope.log", "logs/c.log"])
    assert result.exit_code == 1
    assert result.stderr.endswith("Error: nope.log does not exist: check the path\n")
    assert "logs/a.log" in result.stdout and "logs/c.log" in result.stdout
    stats = runner.invoke(app, ["--db", "t.db", "stats", "--json"])
    assert json.loads(stats.stdout)["sources"] == 2


def test_a_missing_named_path_in_json_is_listed_with_its_reason(logs: Path) -> None:
    code, data, _ = _import_json("nope.log", "logs/a.log")
    assert code == 1
    assert _files(data) == [
        ("nope.log", 0, "does not exist: check the path"),
        ("logs/a.log", 200, None),
    ]


def test_watch_survives_temporary_files_deleted_under_it(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (logs / "tmp123.log").write_bytes(X86.read_bytes()[:2000])
    vanish_before_open(monkeypatch, "tmp123.log")
    result = runner.invoke(app, ["--db", "t.db", "watch", "logs", "--once", "--interval", "0"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("refresh 1: +408 new record(s)")
    assert "stopped after 1 refresh(es)" in result.stdout
    assert "tmp123.log vanished before it could be read: skipped" in result.stderr


def test_diff_of_a_missing_log_is_an_error(logs: Path) -> None:
    result = runner.invoke(app, ["diff", "logs/a.log", "nope.log"])
    assert result.exit_code == 1
    assert result.stderr == "Error: nope.log does not exist: check the path\n"


def test_a_log_that_fails_while_it_is_opened_leaves_no_file_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file was opened before its first bytes were looked at: a failure there (a read
    error on the first block) used to leave it open (a ResourceWarning, a descriptor kept)."""
    import gc
    import warnings

    from tunelog import inputs

    def failing(head: bytes) -> str | None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(inputs, "detect_compression", failing)
    log = tmp_path / "x.log"
    log.write_bytes(X86.read_bytes())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(OSError, match="Input/output error"):
            inputs.OpenedLog(inputs.LogInput(str(log)))
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


NOT_UTF8 = os.fsdecode(b"b\xff.log")  # a name of bytes, legal on Linux: a lone surrogate here


def test_a_file_whose_name_is_not_utf8_is_skipped_and_the_rest_imported(logs: Path) -> None:
    """SQLite keeps paths as UTF-8 text: such a name failed with a traceback, and the files
    after it were never read."""
    (logs / "b.log").rename(logs / NOT_UTF8)
    result = runner.invoke(app, ["--db", "t.db", "import", "logs"])
    assert result.exit_code == 0, result.stderr
    assert (
        "logs/b\\udcff.log has a name that is not UTF-8 text, which the database cannot keep: "
        "rename it to import it: skipped"
    ) in result.stderr
    with Store("t.db") as store:
        assert [Path(s.path).name for s in store.sources()] == ["a.log", "c.log"]
    # As JSON, the name is an escape Python's json reads back (raw, it is no UTF-8).
    listed = runner.invoke(app, ["--db", "j.db", "import", "--json", "logs"])
    assert "\\udcff" in listed.stdout
    assert [Path(f["path"]).name for f in json.loads(listed.stdout)["files"]] == [
        "a.log",
        NOT_UTF8,
        "c.log",
    ]
    named = runner.invoke(app, ["--db", "t.db", "import", str(Path("logs") / NOT_UTF8)])
    assert named.exit_code == 1
    assert named.stderr.startswith("Error: logs/b\\udcff.log has a name that is not UTF-8")


@pytest.mark.parametrize(
    ("label", "why"),
    [
        (NOT_UTF8, "--label 'b\\udcff.log' is not UTF-8 text: give one that is"),
        ("", "--label is empty: give a value, or leave the option out"),  # never choosable
        (" ", "--label is empty: give a value, or leave the option out"),
    ],
)
def test_a_label_the_database_cannot_keep_or_choose_is_a_usage_error(
    logs: Path, label: str, why: str
) -> None:
    result = runner.invoke(app, ["--db", "t.db", "import", "--label", label, "logs"])
    assert result.exit_code == 2
    assert why in result.stderr
    assert not Path("t.db").exists()
    with Store(Path("api.db")) as store, pytest.raises(InvalidValueError):
        tunelog.import_paths(store, ["logs"], label=label)


EMPTY_PATH = (
    "an empty path names no file (an unset shell variable?): give a log or a directory "
    "(. for this one)"
)


@pytest.mark.parametrize("command", [["import"], ["watch", "--refreshes", "1"]])
def test_an_empty_path_is_a_usage_error_not_the_working_directory(
    logs: Path, command: list[str]
) -> None:
    """`tunelog import "$LOG"` with LOG unset imported every log under the working directory."""
    result = runner.invoke(app, ["--db", "t.db", *command, "", "logs/a.log"])
    assert result.exit_code == 2
    assert EMPTY_PATH in " ".join(result.stderr.split())
    assert not Path("t.db").exists()
    with Store(Path("api.db")) as store, pytest.raises(InvalidValueError, match="unset"):
        tunelog.import_paths(store, [""])


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["export", ""], "OUT"),
        (["export", "--metaschedule", ""], "OUT"),
        (["export-metaschedule", ""], "DIRECTORY"),
        (["report", ""], "OUT"),
    ],
)
def test_an_empty_output_path_is_a_usage_error(logs: Path, command: list[str], name: str) -> None:
    """It named the working directory: "cannot write : Device or resource busy"."""
    with Store(Path("t.db")) as store:
        tunelog.import_paths(store, ["logs/a.log"])
    result = runner.invoke(app, ["--db", "t.db", *command])
    assert result.exit_code == 2
    assert f"{name} is empty (an unset shell variable?): give a path" in " ".join(
        result.stderr.split()
    )


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="no /proc here")
def test_a_file_whose_size_says_zero_is_read_to_its_end(tmp_path: Path) -> None:
    """/proc's files say 0 bytes whatever they hold: they were read as empty (exit 0)."""
    with Store(tmp_path / "t.db") as store:
        (report,) = tunelog.import_paths(store, ["/proc/self/status"])
    assert report.lines > 5 and report.rejected + report.blank == report.lines


@pytest.mark.parametrize("loop", [["self"], ["a", "b"]], ids=["to itself", "a to b to a"])
def test_a_symlink_loop_is_called_a_loop_not_a_dangling_link(
    tmp_path: Path, loop: list[str]
) -> None:
    for name, target in zip(loop, [*loop[1:], loop[0]], strict=True):
        (tmp_path / name).symlink_to(target)
    result = runner.invoke(app, ["--db", str(tmp_path / "t.db"), "import", str(tmp_path / loop[0])])
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {tmp_path / loop[0]} is a symlink loop (its links lead back to themselves): "
        "fix or remove it\n"
    )
