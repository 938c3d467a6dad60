"""Option values outside what they allow are usage errors (exit 2), in the API InvalidValueError:
NaN percentages and seconds, endless intervals, ids and widths in other than ASCII digits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import tunelog
from tests.conftest import SAMPLE_LOGS, cli_import, runner
from tunelog import api, optionvalues
from tunelog.cli import app
from tunelog.exceptions import InvalidValueError
from tunelog.store import Store

X86 = str(SAMPLE_LOGS / "x86_mini_llvm.log")
SOURCE_ID = "a source id is ASCII digits from 0 to 9223372036854775807"
PERCENT = "must be a finite number of percent >= 0"
SECONDS = "must be a finite number of seconds >= 0"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database holding the x86 sample log as source #1."""
    monkeypatch.delenv("COLUMNS", raising=False)
    path = str(tmp_path / "values.db")
    cli_import(path, X86)
    return path


@pytest.mark.parametrize(
    ("args", "allowed"),
    [
        (["diff", "{db}", "{db}", "--fail-on-regression", "nan"], PERCENT),
        (["diff", "{db}", "{db}", "--fail-on-regression", "-5"], PERCENT),
        (["diff", "{db}", "{db}", "--threshold", "nan"], PERCENT),
        (["diff", "{db}", "{db}", "--threshold", "inf"], PERCENT),
        (["watch", X86, "--until-idle", "nan"], SECONDS),
        (["watch", X86, "--interval", "1e308"], f"{SECONDS} and <= 86400"),
        (["watch", X86, "--interval", "nan"], SECONDS),
        (["sources", "remove", "²"], SOURCE_ID),
        (["sources", "remove", "١"], SOURCE_ID),
        (["sources", "remove", "99999999999999999999999"], SOURCE_ID),
        (["sources", "remove", "9" * 5000], SOURCE_ID),
        (["rejects", "²"], SOURCE_ID),
        (["best", "--source", "١"], SOURCE_ID),
    ],
    ids=lambda value: " ".join(value)[:40] if isinstance(value, list) else "",
)
def test_a_value_out_of_range_is_a_usage_error_saying_what_is_allowed(
    db: str, args: list[str], allowed: str
) -> None:
    result = runner.invoke(app, ["--db", db, *(a.replace("{db}", db) for a in args)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert allowed in error
    assert tunelog.Store(db).sources()[0].id == 1  # nothing was removed


@pytest.mark.parametrize("columns", ["²", "١٢٠", "80x", "-1"])
def test_columns_in_other_than_ascii_digits_is_a_usage_error(
    db: str, monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    result = runner.invoke(app, ["--db", db, "stats"])
    assert result.exit_code == 2, result.output
    assert "COLUMNS must be a whole number of columns in ASCII digits" in result.stderr


@pytest.mark.parametrize(("columns", "width"), [("", None), ("0", None), ("120", 120)])
def test_columns_unset_empty_or_a_number(columns: str, width: int | None) -> None:
    assert optionvalues.columns(columns) == width


def test_diff_gate_fails_on_a_regression_with_a_finite_percentage(db: str, tmp_path: Path) -> None:
    slower = tmp_path / "slower.log"
    slower.write_text(Path(X86).read_text().replace("e-05], 0,", "e-04], 0,"))
    other = str(tmp_path / "slower.db")
    assert runner.invoke(app, ["--db", other, "import", str(slower)]).exit_code == 0
    result = runner.invoke(app, ["diff", db, other, "--fail-on-regression", "10"])
    assert result.exit_code == 1
    assert "slower in B by more than 10%" in result.stderr


def _watch(store: Store, *, interval: float = 0.0, until_idle: float | None = None) -> object:
    return api.watch(
        store,
        [X86],
        on_refresh=lambda _r: None,
        refreshes=1,
        interval=interval,
        until_idle=until_idle,
    )


API_CALLS: list[tuple[str, Callable[[Store, str], object]]] = [
    ("remove ²", lambda store, db: api.remove_sources(store, "²")),
    ("remove 10**23", lambda store, db: api.remove_sources(store, "9" * 23)),
    ("rejects ١", lambda store, db: api.rejects(store, "١")),
    ("find ²", lambda store, db: api.find_source(store, "²")),
    ("diff nan", lambda store, db: api.diff(db, db, threshold_pct=float("nan"))),
    ("diff source:²", lambda store, db: api.diff("source:²", db, db=db)),
    ("regressions nan", lambda store, db: api.diff(db, db).regressions(float("nan"))),
    ("watch interval", lambda store, db: _watch(store, interval=1e308)),
    ("watch until_idle", lambda store, db: _watch(store, until_idle=float("nan"))),
]


@pytest.mark.parametrize("call", [c for _, c in API_CALLS], ids=[n for n, _ in API_CALLS])
def test_the_api_refuses_the_same_values(db: str, call: Callable[[Store, str], object]) -> None:
    with Store(db) as store:
        with pytest.raises(InvalidValueError):
            call(store, db)
        assert [s.id for s in store.sources()] == [1]


def test_an_ascii_id_still_removes_its_source(db: str) -> None:
    result = runner.invoke(app, ["--db", db, "sources", "remove", "1"])
    assert result.exit_code == 0, result.output
    assert "removed #1" in result.stderr
