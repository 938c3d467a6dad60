"""The CLI's tables and JSON written from an iterable: a page of rows at a time (issue 29)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import orjson
import pytest
from tabulate import tabulate

from tunelog.cli import emit_json, emit_table, emitters
from tunelog.cli.output import shown

HEADERS = ["layer", "latency"]


def _rows(n: int) -> Iterator[list[str]]:
    """Rows whose widths grow with their number: each page of them gets its own widths."""
    for i in range(n):
        yield [f"conv{i}" + "x" * i, f"{i}.0 us"]


def _table(rows: list[list[str]]) -> str:
    return tabulate(rows, headers=HEADERS, tablefmt="simple", disable_numparse=True) + "\n"


@pytest.mark.parametrize("count", [0, 1, 3, 4, 5, 8, 9])
def test_a_table_is_written_a_page_at_a_time_with_each_pages_widths(
    count: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(emitters, "PAGE_ROWS", 4)
    monkeypatch.setenv("COLUMNS", "")
    emit_table(_rows(count), HEADERS, empty="nothing")
    out, err = capsys.readouterr()
    rows = list(_rows(count))
    pages = [rows[i : i + 4] for i in range(0, count, 4)]
    assert out == "\n".join(_table(page) for page in pages)
    assert err == ("" if count else "nothing\n")


@pytest.mark.parametrize(
    "items",
    [
        [],
        [1, "two", None, 2.5e-05],
        [{}, [], {"a": [], "b": {"c": [1, {"d": "\x9b"}]}}],
        [{"big": 10**40, "small": 1e-07}],
    ],
    ids=["empty", "scalars", "nested", "past-64-bits"],
)
def test_a_json_array_from_an_iterator_is_the_array_written_at_once(
    items: list[object], capsys: pytest.CaptureFixture[str]
) -> None:
    emit_json(iter(items))
    streamed = capsys.readouterr().out
    emit_json(items)
    assert capsys.readouterr().out == streamed
    assert json.loads(streamed) == json.loads(json.dumps(items))
    if not any(isinstance(v, dict) and "big" in v for v in items):
        whole = orjson.dumps(items, option=orjson.OPT_INDENT_2).decode()
        assert streamed == whole.replace("\x9b", "\\u009b") + "\n"


@pytest.mark.parametrize(
    "row",
    [
        ["conv2d", "1x3", "12.0 us"],
        ("conv2d", "", "x"),
        ["conv2d", 7, None, 2.5],
        ["tab\there", "ok"],
        ["a\x9bb", 3],
        [],
    ],
    ids=["text", "text-tuple", "mixed", "control", "c1-mixed", "empty"],
)
def test_a_rows_cells_are_shown_alike_whether_given_as_text_or_values(row: list[object]) -> None:
    """A row of text cells (the listings') takes the quick path: the cells every row gets."""
    texts = ["" if cell is None else str(cell) for cell in row]
    expected = texts if "".join(texts).isprintable() else [shown(t) for t in texts]
    assert emitters._shown_cells(row) == expected


@pytest.mark.parametrize(
    "rows",
    [
        [["conv2d", "1x3"], ["dense", "2x4"]],
        [["conv2d", "1x3"], ("dense", "a\x9bb")],
        [["conv2d", 3], ["dense", None]],
        [],
    ],
    ids=["text", "one-row-to-escape", "values", "empty"],
)
def test_a_page_of_rows_is_shown_as_its_rows_are_one_by_one(rows: list[list[object]]) -> None:
    assert emitters._page_cells(rows) == [emitters._shown_cells(row) for row in rows]
