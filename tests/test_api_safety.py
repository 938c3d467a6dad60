"""The Python API gets the CLI's safety: SQLite failures as domain errors, failed merges undone."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import EDGE, X86, runner
from tunelog.api.diagnosing import each_error
from tunelog.api.listing import each_layer
from tunelog.cli import app
from tunelog.exceptions import (
    DatabaseAccessError,
    DatabaseDamagedError,
    DatabaseReadOnlyError,
    DatabaseUnavailableError,
    InputNotFoundError,
    NotATunelogDatabaseError,
    StreamStillOpenError,
    TunelogError,
)
from tunelog.filters import Filters
from tunelog.store import Store


def _not_a_database(tmp_path: Path) -> Path:
    path = tmp_path / "notes.db"
    path.write_text("not a database\n")
    return path


def test_sqlite_failure_inside_a_store_block_is_a_domain_error(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    with pytest.raises(DatabaseAccessError) as raised, Store(db) as store:
        store.conn.execute("SELECT * FROM no_such_table")
    assert str(raised.value) == (
        f"database {db}: no such table: no_such_table; check the disk and the file"
    )
    assert isinstance(raised.value, DatabaseUnavailableError)
    assert isinstance(raised.value.__cause__, sqlite3.OperationalError)


def test_other_errors_leave_a_store_block_unchanged(tmp_path: Path) -> None:
    with pytest.raises(KeyError), Store(str(tmp_path / "t.db")):
        raise KeyError("x")


@pytest.mark.parametrize(
    ("other", "error"),
    [
        (_not_a_database, NotATunelogDatabaseError),
        (lambda tmp_path: tmp_path / "missing.db", InputNotFoundError),
    ],
)
def test_a_failed_merge_into_a_new_path_leaves_no_database(
    tmp_path: Path, other: object, error: type[TunelogError]
) -> None:
    target = tmp_path / "all.db"
    source = other(tmp_path)  # type: ignore[operator]
    with pytest.raises(error):
        tunelog.merge(str(target), [str(source)])
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("all.db")) == []


def test_a_failed_merge_into_an_existing_database_keeps_it(tmp_path: Path) -> None:
    target = tmp_path / "all.db"
    with Store(str(target)) as store:
        tunelog.import_paths(store, [str(X86)])
    with pytest.raises(NotATunelogDatabaseError):
        tunelog.merge(str(target), [str(_not_a_database(tmp_path))])
    with Store(str(target)) as store:
        assert len(store.sources()) == 1


def test_merge_into_a_path_creates_the_database(tmp_path: Path) -> None:
    box = tmp_path / "box.db"
    with Store(str(box)) as store:
        tunelog.import_paths(store, [str(X86)])
    [report] = tunelog.merge(str(tmp_path / "all.db"), [str(box)])
    assert report.new > 0
    with Store(str(tmp_path / "all.db")) as merged, Store(str(box)) as original:
        assert [s.path for s in merged.sources()] == [s.path for s in original.sources()]


def test_the_cli_prints_the_domain_error_of_a_failed_merge(tmp_path: Path) -> None:
    target = tmp_path / "all.db"
    other = _not_a_database(tmp_path)
    result = runner.invoke(app, ["--db", str(target), "merge", str(other)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {other} is not a tunelog database")
    assert not target.exists()


# How a database's stored lines get damaged outside tunelog, and what the error says of it.
DAMAGES = {
    "blocks deleted": ("DELETE FROM blocks", "its block is missing"),
    "a block garbled": (
        "UPDATE blocks SET data = x'28b52ffd0000'",
        "its block does not decompress: could not determine content size in frame header",
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("command", [["export", "out.log"], ["best", "--knobs"]])
def test_a_damaged_database_is_one_error_line_saying_what_to_do(
    tmp_path: Path, damage: str, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    statement, why = DAMAGES[damage]
    db = str(tmp_path / "t.db")
    assert runner.invoke(app, ["--db", db, "import", str(X86)]).exit_code == 0
    with sqlite3.connect(db) as conn:
        conn.execute(statement)
    conn.close()
    result = runner.invoke(app, ["--db", db, *command])
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: the database is damaged: no stored line for record 6 ({why}); import the "
        "logs again into a new database, or restore a backup\n",
    )
    assert not (tmp_path / "out.log").exists()
    with Store(db) as store, pytest.raises(DatabaseDamagedError, match="is damaged"):
        tunelog.export(store, str(tmp_path / "api.log"))


def test_tunelog_api_is_an_attribute_without_its_own_import() -> None:
    """The README writes `tunelog.api.each_best(store)` after `import tunelog` alone."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "import tunelog; print(tunelog.api.each_best.__name__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "each_best\n", "")


def test_a_database_cut_short_is_called_damaged_not_another_file(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    assert runner.invoke(app, ["--db", str(db), "import", str(X86)]).exit_code == 0
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    result = runner.invoke(app, ["--db", str(db), "stats"])
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: the database {db} is damaged (SQLite says: database disk image is malformed): "
        "restore a backup, or import the logs again into a new database\n",
    )
    with pytest.raises(DatabaseDamagedError):
        Store(db)


@pytest.mark.parametrize("command", [["stats"], ["import", str(X86)]])
def test_a_directory_given_as_the_database_says_to_give_a_file(
    tmp_path: Path, command: list[str]
) -> None:
    """It used to say to check that 'its directory exists and is writable'."""
    result = runner.invoke(app, ["--db", str(tmp_path), *command])
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {tmp_path} is a directory: give the database file's path, e.g. "
        f"{tmp_path / 'tunelog.db'}\n",
    )
    with pytest.raises(DatabaseUnavailableError, match="is a directory"):
        Store(tmp_path)


@pytest.mark.parametrize("command", ["merge", "diff"])
def test_a_database_cut_short_given_to_merge_or_diff_is_called_damaged(
    tmp_path: Path, command: str
) -> None:
    """As --db is (it used to be 'not a tunelog database' there)."""
    good, half = tmp_path / "t.db", tmp_path / "half.db"
    assert runner.invoke(app, ["--db", str(good), "import", str(X86)]).exit_code == 0
    data = good.read_bytes()
    half.write_bytes(data[: len(data) // 2])
    args = [str(half)] if command == "merge" else [str(half), str(good)]
    result = runner.invoke(app, ["--db", str(tmp_path / "m.db"), command, *args])
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: the database {half} is damaged (SQLite says: database disk image is "
        "malformed): restore a backup, or import its logs again\n",
    )


def test_a_database_damaged_inside_is_refused_by_merge_naming_it(tmp_path: Path) -> None:
    """Pages overwritten in the middle: SQLite reads them only as far as it must, and merge
    copied what they held as records (or said the database merged into was damaged)."""
    source, into = tmp_path / "source.db", tmp_path / "into.db"
    logs = [str(X86), str(EDGE)]
    assert runner.invoke(app, ["--db", str(source), "import", *logs]).exit_code == 0
    assert runner.invoke(app, ["--db", str(into), "import", str(EDGE)]).exit_code == 0
    data = bytearray(source.read_bytes())
    for page in range(len(data) // 3, len(data) * 2 // 3, 4096):
        data[page + 100 : page + 132] = b"\xde\xad\xbe\xef" * 8
    source.write_bytes(bytes(data))
    before = into.read_bytes()
    result = runner.invoke(app, ["--db", str(into), "merge", str(source)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: the database {source} is damaged (SQLite's check: ")
    assert result.stderr.endswith(
        "): nothing was merged; restore a backup of it, or import its logs again\n"
    )
    assert into.read_bytes() == before


# Values the CLI refuses as usage errors, given to the API: one InvalidValueError each, before
# anything is read or written.
API_MISUSES: list[tuple[str, Any]] = [
    ("import of one path as a str", lambda s, d: tunelog.import_paths(s, str(X86))),
    ("merge of one database as a str", lambda s, d: tunelog.merge(s, str(d / "o.db"))),
    (
        "watch of one path as a str",
        lambda s, d: tunelog.watch(s, str(X86), on_refresh=print, refreshes=1),
    ),
    (
        "watch with no refresh",
        lambda s, d: tunelog.watch(s, [str(X86)], on_refresh=print, refreshes=0),
    ),
    ("layers sorted by an unknown key", lambda s, d: tunelog.layers(s, sort="slowest")),
    (
        "export in an unknown format",
        lambda s, d: tunelog.export(s, str(d / "out.log"), log_format="ansor"),
    ),
    (
        "tasks needing -1 trials",
        lambda s, d: tunelog.api.tuning_progress(s, "[]", "llvm", need_trials=-1),
    ),
    # Wrong types: each failed later with an AttributeError or TypeError, or was taken.
    ("a filter given a number", lambda s, d: tunelog.api.best(s, Filters(model=5))),  # type: ignore[arg-type]
    ("--for-target given a number", lambda s, d: Filters(for_target=5)),  # type: ignore[arg-type]
    ("rejects of a source given a number", lambda s, d: tunelog.api.rejects(s, 3)),  # type: ignore[arg-type]
    ("a source named by a number", lambda s, d: tunelog.api.find_source(s, 3)),  # type: ignore[arg-type]
    ("an import labelled with a number", lambda s, d: tunelog.import_paths(s, [str(X86)], label=5)),  # type: ignore[arg-type]
    ('strict="no"', lambda s, d: tunelog.import_paths(s, [str(X86)], strict="no")),  # type: ignore[arg-type]
    ("standard input named twice", lambda s, d: tunelog.import_paths(s, ["-", "-"])),
    ("a source to remove named by a number", lambda s, d: tunelog.api.remove_sources(s, 1)),  # type: ignore[arg-type]
    ('export with force="no"', lambda s, d: tunelog.export(s, str(d / "o.log"), force="no")),  # type: ignore[arg-type]
    ("a database path of None", lambda s, d: tunelog.open_store(None)),  # type: ignore[arg-type]
    ("a database path of 5", lambda s, d: tunelog.open_store(5)),  # type: ignore[arg-type]
    # Found by a new user of the API (each was taken, or failed half-way or later).
    ("an empty database path", lambda s, d: tunelog.open_store("")),
    ("a merge into an empty path", lambda s, d: tunelog.merge("", [str(d / "t.db")])),
    ("a merge of no database", lambda s, d: tunelog.merge(str(d / "new.db"), [])),
    ("exclude as one str", lambda s, d: tunelog.import_paths(s, [str(d)], exclude="*.log")),
    ("include as one str", lambda s, d: tunelog.api.find_logs([str(d)], include="*.log")),
    ("a path of bytes", lambda s, d: tunelog.import_paths(s, [str(X86), b"x.log"])),  # type: ignore[list-item]
    (
        "watch of standard input",
        lambda s, d: tunelog.watch(s, ["-"], on_refresh=print, refreshes=1),
    ),
    ("knobs of a knob named ''", lambda s, d: tunelog.api.knobs(s, tunelog.layers(s)[0], "")),
    (
        "tasks on a target TVM refuses",
        lambda s, d: tunelog.api.tuning_progress(s, "[]", "nonsense_kind"),
    ),
    (
        "diagnose for a target TVM refuses",
        lambda s, d: tunelog.api.diagnose_untuned(s, "[]", target="cuda -model"),
    ),
    ("an export to an empty path", lambda s, d: tunelog.export(s, "")),
    ("a report to an empty path", lambda s, d: tunelog.api.write_report(s, "")),
    ("a MetaSchedule export to ''", lambda s, d: tunelog.api.export_metaschedule(s, "")),
]


@pytest.mark.parametrize(("what", "call"), API_MISUSES, ids=[m[0] for m in API_MISUSES])
def test_the_api_refuses_what_the_command_line_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, call: Any
) -> None:
    from tunelog.exceptions import InvalidValueError

    monkeypatch.chdir(tmp_path)  # where a database path of None made a file named "None"
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(X86)])
        before = store.stats().records
        with pytest.raises(InvalidValueError):
            call(store, tmp_path)
        assert store.stats().records == before


def test_tuning_progress_takes_workloads_written_with_lists(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(X86)])
        row = store.best()[0]
        target = "llvm -keys=cpu -mcpu=skylake-avx512 -mtriple=x86_64-pc-linux-gnu"
        (as_lists,) = tunelog.api.tuning_progress(store, [(row.task_name, *row.args)], target)
        (as_json,) = tunelog.api.tuning_progress(
            store, json.dumps([[row.task_name, *row.args]]), target
        )
    assert as_lists == as_json and as_lists.convergence.valid > 0


def test_the_layer_listings_answer_while_an_each_best_iterator_is_open(tmp_path: Path) -> None:
    # SQLite drops no table while another statement of the connection is being read: the
    # layer stream's temporary tables wait, and its answer is the same.
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)])
        expected = (tunelog.layers(store), tunelog.untuned(store), tunelog.api.errors(store))
        rows = store.each_best()
        first = next(rows)
        during = (tunelog.layers(store), tunelog.untuned(store), tunelog.api.errors(store))
        assert during == expected and store.leftover_tables
        assert [first, *rows] == store.best()
        assert tunelog.layers(store) == expected[0] and store.leftover_tables == []


def test_a_write_while_an_iterator_is_open_says_to_finish_it(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)])
    store = Store(tmp_path / "t.db")
    rows = store.each_best()
    next(rows)
    locked = pytest.raises(DatabaseAccessError, match=r"still being read .* finish or close it")
    with locked, store:
        store.remove_sources("1")
    store.close()
    with pytest.raises(DatabaseAccessError, match="the store is closed: open it again"), store:
        store.best()


def test_a_closed_store_says_so_outside_a_with_block_too(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.db")
    tunelog.import_paths(store, [str(X86)])
    store.close()
    for call in (store.best, lambda: tunelog.layers(store), store.stats):
        with pytest.raises(DatabaseAccessError, match="the store is closed: open it again"):
            call()


_STREAMS: dict[str, Callable[[Store], Iterator[object]]] = {
    "each_best": lambda store: store.each_best(),
    "each_layer": lambda store: each_layer(store, Filters()),
    "each_error": lambda store: each_error(store),
    "trials_in_import_order": lambda store: store.trials_in_import_order(),
}


@pytest.mark.parametrize("stream", _STREAMS.values(), ids=list(_STREAMS))
def test_a_stream_read_on_after_its_store_closed_says_the_store_is_closed(
    tmp_path: Path, stream: Callable[[Store], Iterator[object]]
) -> None:
    # Not SQLite's "Cannot operate on a closed database": its statement went with the store.
    store = Store(tmp_path / "t.db")
    tunelog.import_paths(store, [str(X86), str(EDGE)])
    rows = stream(store)
    next(rows)
    store.close()
    with pytest.raises(DatabaseAccessError, match="the store is closed: open it again"):
        list(rows)


def test_paths_may_be_path_objects_wherever_a_path_is_taken(tmp_path: Path) -> None:
    """`Path` failed half-way through an import (AttributeError after the first file), and in
    merge and diff."""
    with Store(tmp_path / "a.db") as store:
        (report,) = tunelog.import_paths(store, [X86])
        assert report.new > 0
        assert tunelog.api.find_logs([X86]).inputs
    with Store(tmp_path / "b.db") as store:
        (merged,) = tunelog.merge(store, [tmp_path / "a.db"])
        assert merged.new == report.new
    (merged,) = tunelog.merge(tmp_path / "c.db", [tmp_path / "a.db"])
    assert merged.new == report.new
    compared = tunelog.api.diff(tmp_path / "a.db", tmp_path / "c.db")
    assert compared.layers and all(lay.status == "same" for lay in compared.layers)


def test_a_stream_dropped_after_its_store_closed_says_nothing(tmp_path: Path) -> None:
    """Dropping it printed "Exception ignored" and a traceback on stderr (its cursor's close
    raised on the closed connection)."""
    import gc
    import sys

    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)])
        streams: list[Iterator[object]] = [stream(store) for stream in _STREAMS.values()]
        for rows in streams:
            next(rows)
    unraisable: list[object] = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        del rows, streams
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert unraisable == []


def test_an_import_while_a_stream_is_read_says_to_finish_it(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(X86)])
        layers = store.layer_candidates()
        next(layers)
        with pytest.raises(StreamStillOpenError, match=r"still being read .* finish or close"):
            tunelog.import_paths(store, [str(EDGE)])


def test_a_removal_outside_a_with_block_says_sqlites_errors_as_domain_errors(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "t.db")
    tunelog.import_paths(store, [str(X86), str(EDGE)])
    rows = store.trials_in_import_order()
    next(rows)
    with pytest.raises(DatabaseAccessError, match=r"still being read .* finish or close"):
        tunelog.api.remove_sources(store, "1")
    store.close()


@pytest.mark.parametrize(
    ("unwritable", "says"),
    [
        ("t.db", r"t\.db is read-only: make it writable \(chmod u\+w "),
        ("t.db-wal", r"the -wal/-shm files beside .*t\.db are read-only .*\(chmod u\+w "),
        ("", r"its directory is not writable"),
    ],
    ids=["database", "side files", "directory"],
)
def test_a_write_sqlite_refuses_as_read_only_says_which_file_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unwritable: str, says: str
) -> None:
    """A read while the file was read-only leaves its -wal/-shm read-only (SQLite gives them
    the database's mode), and every write after it failed with "attempt to write a readonly
    database" (the permissions are simulated: tests may run as root, who may write anything)."""
    import os

    from tunelog.store.readonly import write_refusal

    db = tmp_path / "t.db"
    for name in ("t.db", "t.db-wal", "t.db-shm"):
        (tmp_path / name).write_bytes(b"")
    real_access = os.access
    blocked = str(tmp_path / unwritable) if unwritable else str(tmp_path)

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        if mode & os.W_OK and os.path.realpath(path) == os.path.realpath(blocked):
            return False
        return real_access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    refused = write_refusal(str(db), sqlite3.OperationalError("attempt to write a readonly db"))
    assert isinstance(refused, DatabaseReadOnlyError) and re.search(says, str(refused))
    assert write_refusal(str(db), sqlite3.OperationalError("database is locked")) is None


def test_a_full_disk_says_which_files_were_imported_and_which_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error named only the file being written: the ones before it were imported (nothing
    said on stdout) and the ones after it silently not read."""
    from tunelog.api import importing
    from tunelog.exceptions import DiskFullError

    logs = []
    for name in ("a.log", "b.log", "c.log", "d.log"):
        (tmp_path / name).write_bytes(X86.read_bytes())
        logs.append(str(tmp_path / name))
    real = importing._import_one

    def full_at_b(store: Store, source: Any, *args: Any, **kwargs: Any) -> Any:
        if source.path.endswith("b.log"):
            raise DiskFullError(f"the disk holding t.db is full; nothing of {source.path} was kept")
        return real(store, source, *args, **kwargs)

    monkeypatch.setattr(importing, "_import_one", full_at_b)
    with Store(tmp_path / "t.db") as store, pytest.raises(DiskFullError) as raised:
        tunelog.import_paths(store, logs)
    assert str(raised.value) == (
        f"the disk holding t.db is full; nothing of {logs[1]} was kept; 1 file(s) before it are "
        f"imported, 2 after it were not read ({logs[2]}, {logs[3]})"
    )


def test_outputs_given_as_path_objects_are_reported_as_text(tmp_path: Path) -> None:
    """ExportReport.path held the Path it was given, though typed (and documented) as text."""
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(X86)])
        report = tunelog.export(store, tmp_path / "best.log")
    assert report.path == str(tmp_path / "best.log") and report.written > 0


def test_watch_stops_when_its_database_is_removed(tmp_path: Path) -> None:
    """It went on importing into the removed file ("every complete line read is in the
    database"), all of it lost when it stopped."""
    from tunelog.exceptions import DatabaseNotFoundError

    log = tmp_path / "tuning.log"
    log.write_bytes(X86.read_bytes())
    seen: list[object] = []

    def remove_the_database(refresh: object) -> None:
        seen.append(refresh)
        for suffix in ("", "-wal", "-shm"):
            (tmp_path / f"t.db{suffix}").unlink(missing_ok=True)

    with (
        Store(tmp_path / "t.db") as store,
        pytest.raises(DatabaseNotFoundError, match="was removed while watching"),
    ):
        tunelog.watch(store, [str(log)], on_refresh=remove_the_database, refreshes=2, interval=0)
    assert len(seen) == 1
