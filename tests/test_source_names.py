"""Which source the user meant (`tunelog.rules.sourcenames`): one table of spellings, each run
through every command path that takes a source's name: `sources remove`, `--source`, diff's
`source:` and `rejects` (`api.find_source`)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import tunelog
from tests.conftest import SAMPLE_LOGS, run
from tunelog.api.comparing import _selected_sources
from tunelog.exceptions import (
    AmbiguousSourceError,
    InvalidValueError,
    SourceNotFoundError,
    UnknownSourceError,
)
from tunelog.filters import Filters
from tunelog.rules.sourcenames import SourceNames, named_by_label, sources_named

# Imported in this order from the directory below, so their ids are 1, 2, 3: a file called
# `3` is source 2, and `link.log` is a symbolic link to c.log.
FILES = {"a.log": "base", "3": None, "c.log": "base"}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the three logs and their database (tests copy it before writing)."""
    where = tmp_path_factory.mktemp("names")
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines(keepends=True)
    for n, (name, label) in enumerate(FILES.items()):
        (where / name).write_text("".join(lines[n * 50 : (n + 1) * 50]))
        with tunelog.open_store(str(where / "names.db")) as store:
            tunelog.import_paths(store, [str(where / name)], label=label)
    (where / "sub").mkdir()
    (where / "link.log").symlink_to(where / "c.log")
    return where


@pytest.fixture
def here(imported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The working directory: the logs' directory, with a fresh copy of their database."""
    monkeypatch.chdir(imported)
    shutil.copy(imported / "names.db", tmp_path / "names.db")
    yield tmp_path / "names.db"


# (spelling, sources it names where labels are names too (`sources remove`), where they are
# not (`--source`, `source:`, `rejects`)); a path spelling is relative to the logs' directory.
SPELLINGS = [
    ("1", [1], [1]),
    ("#1", [1], [1]),
    ("01", [1], [1]),
    ("3", [3], [3]),  # an id first, even with a file called `3`
    ("./3", [2], [2]),  # ... which a path names
    ("{dir}/3", [2], [2]),
    ("c.log", [3], [3]),
    ("{dir}/c.log", [3], [3]),
    ("sub/../a.log", [1], [1]),
    ("link.log", [3], [3]),  # the same file by its real path
    ("base", [1, 3], []),  # a label
    ("9", [], []),  # no source 9, no file 9
    ("missing.log", [], []),
]


def _spelled(ref: str, directory: Path) -> str:
    return ref.replace("{dir}", str(directory))


@pytest.mark.parametrize(("ref", "with_labels", "without_labels"), SPELLINGS)
def test_sources_remove_removes_the_sources_a_spelling_names(
    here: Path, ref: str, with_labels: list[int], without_labels: list[int]
) -> None:
    code, _, err = run("--db", str(here), "sources", "remove", _spelled(ref, Path.cwd()))
    if not with_labels:
        assert (code, err.startswith("Error: no imported source has id, label or path")) == (
            1,
            True,
        )
        return
    assert code == 0
    removed = [int(line.split()[1].lstrip("#")) for line in err.splitlines()]
    assert removed == with_labels


@pytest.mark.parametrize(("ref", "with_labels", "without_labels"), SPELLINGS)
def test_the_source_filter_selects_the_sources_a_spelling_names(
    here: Path, ref: str, with_labels: list[int], without_labels: list[int]
) -> None:
    code, out, err = run("--db", str(here), "best", "--json", "--source", _spelled(ref, Path.cwd()))
    if not without_labels:
        assert (code, err.startswith("Error: no imported source matches source")) == (1, True)
        return
    assert code == 0, err
    shown = {Path(row["source"]).name for row in json.loads(out)}
    assert shown == {list(FILES)[i - 1] for i in without_labels}


@pytest.mark.parametrize(("ref", "with_labels", "without_labels"), SPELLINGS)
def test_diff_and_rejects_take_the_sources_a_spelling_names(
    here: Path, ref: str, with_labels: list[int], without_labels: list[int]
) -> None:
    spelled = _spelled(ref, Path.cwd())
    if not without_labels:
        with pytest.raises(UnknownSourceError):
            _selected_sources("source:" + spelled, str(here))
        with tunelog.open_store(str(here)) as store, pytest.raises(SourceNotFoundError):
            tunelog.api.find_source(store, spelled)
        return
    assert _selected_sources("source:" + spelled, str(here)) == without_labels
    with tunelog.open_store(str(here)) as store:
        assert tunelog.api.find_source(store, spelled).id == without_labels[0]


@pytest.mark.parametrize("ref", ["\u00b2", "#\u0663", "99999999999999999999999"])
def test_digits_that_can_be_no_id_are_refused_by_every_command(here: Path, ref: str) -> None:
    assert run("--db", str(here), "sources", "remove", ref)[0] == 2
    assert run("--db", str(here), "best", "--source", ref)[0] == 2
    with pytest.raises(InvalidValueError):
        _selected_sources("source:" + ref, str(here))
    with tunelog.open_store(str(here)) as store, pytest.raises(InvalidValueError):
        tunelog.api.find_source(store, ref)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (Filters(label="base"), [1, 3]),
        (Filters(source="3", label="base"), [3]),
        (Filters(source="./3", label="base"), []),  # source 2 has no label
        (Filters(source="1", label="other"), []),
    ],
)
def test_source_and_label_filters_select_the_sources_both_name(
    here: Path, filters: Filters, expected: list[int]
) -> None:
    with tunelog.open_store(str(here)) as store:
        if not expected:
            with pytest.raises(UnknownSourceError):
                store.selected_sources(filters)
        else:
            assert store.selected_sources(filters) == expected


def test_diff_label_takes_every_source_of_the_label(here: Path) -> None:
    assert _selected_sources("label:base", str(here)) == [1, 3]


SOURCES = [
    SourceNames(1, "base", ("/logs/a.log",)),
    SourceNames(2, None, ("/logs/b.log", "/elsewhere/b.log")),
    SourceNames(3, "base", ("/logs/c.log",)),
    SourceNames(4, None, ("-",)),
]


@pytest.mark.parametrize(
    ("ref", "labels", "expected"),
    [
        ("2", False, [2]),
        ("#2", False, [2]),
        ("base", True, [1, 3]),
        ("base", False, []),
        ("/elsewhere/b.log", False, [2]),  # a path it was imported from again
        ("-", False, [4]),  # standard input
        ("/logs/a.log", True, [1]),
        ("", True, []),
    ],
)
def test_the_rule_alone(ref: str, labels: bool, expected: list[int]) -> None:
    assert sources_named(ref, SOURCES, labels=labels) == expected


def test_named_by_label_keeps_import_order() -> None:
    assert named_by_label("base", SOURCES) == [1, 3]


def test_a_file_rewritten_after_its_last_line_was_rejected_is_two_sources_every_command_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log imported while a tuner was writing its last line keeps that line rejected, with
    a hint; rewritten since (a new run in the same file), the file is read in full (said so),
    as a second source of the same path: `rejects` and `sources remove` take both,
    `find_source` asks for an id. (A file that only grew is read on from that line, under
    its one source: tests/test_incremental.py.)"""
    monkeypatch.chdir(tmp_path)
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_bytes().splitlines(keepends=True)
    log = Path("grow.log")
    log.write_bytes(b"".join(lines[:10]) + lines[10][:100])
    db = str(tmp_path / "g.db")
    code, _, err = run("--db", db, "import", str(log))
    assert (code, err) == (
        0,
        "grow.log:11: invalid JSON at column 100 (the file's last line, without line end: "
        "still being written?)\n",
    )
    log.write_bytes(b"".join(lines[1:21]))  # its first line changed: rewritten
    code, out, _ = run("--db", db, "import", str(log))
    assert code == 0 and out.splitlines()[2].endswith("changed since its last import: read in full")
    code, out, _ = run("--db", db, "rejects", "grow.log", "--json")
    assert [(r["source_id"], r["line"]) for r in json.loads(out)] == [(1, 11)]
    with tunelog.open_store(db) as store:
        assert [s.id for s in tunelog.api.find_sources(store, "grow.log")] == [1, 2]
        assert tunelog.api.find_source(store, "2").id == 2
        with pytest.raises(AmbiguousSourceError, match=r"names 2 sources .* \(#1, #2, "):
            tunelog.api.find_source(store, "grow.log")
    code, out, _ = run("--db", db, "sources", "remove", "grow.log")
    assert code == 0 and "#1" in out + _ and "#2" in out + _
