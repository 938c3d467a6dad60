"""stdout's two shapes: JSON and plain-text tables fitted to the terminal."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice
from typing import Any

from tunelog.cli.output import _err, echo, echo_shown, shown, terminal_width
from tunelog.tables import Column

# DEL and the C1 controls: JSON escapes the C0 ones only, orjson writes these raw. And lone
# surrogates (a file name's byte that is not UTF-8, as Python decodes it): written raw, they
# are no UTF-8 (a strict stdout refuses them); escaped, Python's json reads the name back.
# And the characters the table output escapes too (tunelog.escaping): the line and paragraph
# separators and the bidi controls (U+202E shows the text after it reversed on a terminal).
_RAW_IN_JSON = re.compile(
    "[\x7f-\x9f\ud800-\udfff\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def emit_json(value: Any, *, empty: str | None = None) -> None:
    """Pretty JSON on stdout, every control character as an escape (`\\u009b`).

    A list, tuple or iterator is written element by element (an array of many rows is never
    held as one text): the same bytes as the whole array at once, except that an element
    holding an integer past 64 bits is written by Python's json alone, not the whole array.
    An empty array is followed by the `empty` note (if any) on stderr, as `emit_table` says it.
    """
    if isinstance(value, (list, tuple, Iterator)):
        if not _emit_json_array(value) and empty:
            _err(empty)
        return
    sys.stdout.write(_escaped(_json_text(value, indent=True)) + "\n")


JSON_ITEMS = (
    16  # array items written at a time (few: more would outlive a young-generation collection)
)


def _emit_json_array(items: Iterable[Any]) -> bool:
    """`[`, each item indented as orjson's OPT_INDENT_2 indents an array's items, `]`; whether
    there was any."""
    write = sys.stdout.write
    opening = "[\n  "
    iterator = iter(items)
    while batch := list(islice(iterator, JSON_ITEMS)):
        write(opening + _json_items(batch))
        opening = ",\n  "
    write("[]\n" if opening == "[\n  " else "\n]\n")
    return opening != "[\n  "


def _json_items(items: list[Any]) -> str:
    """Array items as `_emit_json_array` writes them, `,` and a line break between them."""
    import orjson

    try:
        # An array's items as orjson indents them: "[\n  " + items + "\n]".
        return _escaped(orjson.dumps(items, option=orjson.OPT_INDENT_2).decode()[4:-2])
    except orjson.JSONEncodeError:
        # JSON strings hold no raw line break: every "\n" is between values, indented.
        return ",\n  ".join(
            _escaped(_json_text(item, indent=True)).replace("\n", "\n  ") for item in items
        )


def _escaped(text: str) -> str:
    """`text` with DEL, the C1 controls, lone surrogates, line separators and bidi controls as
    JSON escapes (orjson writes them raw)."""
    if "\x7f" in text or not text.isascii():
        return _RAW_IN_JSON.sub(lambda match: f"\\u{ord(match[0]):04x}", text)
    return text


def _json_text(value: Any, *, indent: bool = False) -> str:
    """JSON of command output: orjson, or Python's json for integers orjson cannot write."""
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else None).decode()
    except orjson.JSONEncodeError:
        # Task arguments and knob values may hold integers past 64 bits (TVM's loader reads
        # them), and FLOPs of such shapes grow past them; orjson refuses both.
        import json

        return json.dumps(
            _as_plain_json(value), indent=2 if indent else None, ensure_ascii=False, allow_nan=False
        )


def _as_plain_json(value: Any) -> Any:
    """What orjson would write, as plain Python values: non-finite floats become null."""
    import dataclasses
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _as_plain_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_plain_json(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _as_plain_json(dataclasses.asdict(value))
    return value


PAGE_ROWS = 10_000  # rows formatted at once: column widths are a page's, memory stays bounded


def emit_table(
    rows: Iterable[Sequence[Any]],
    headers: Sequence[str | Column],
    *,
    empty: str | None = None,
) -> None:
    """A plain-text table on stdout, fitted to the terminal's width unless --wide or a pipe.

    `headers`: the table's columns, declared once (`tunelog.tables.Column`: which ones go
    first on a narrow terminal, which hold paths). No rows: nothing on stdout, and the `empty`
    note (if any) on stderr. Rows are read and written PAGE_ROWS at a time: more rows than a
    page make one table per page (each with its header and its own column widths), a blank
    line between them.
    """
    notes: set[str] = set()
    pages = 0
    iterator = iter(rows)
    while page := list(islice(iterator, PAGE_ROWS)):
        if pages:
            echo("")
        _emit_page(page, headers, notes)
        pages += 1
    if not pages and empty:
        _err(empty)


def _shown_cells(row: Sequence[Any]) -> list[str]:
    """A row's cells as text, control characters escaped (`output.shown`)."""
    try:  # a row of text cells (as the listings build theirs): nothing to convert
        joined = "".join(row)
        texts = list(row)
    except TypeError:
        texts = ["" if cell is None else str(cell) for cell in row]
        joined = "".join(texts)
    if joined.isprintable():  # the usual row: no cell has anything to escape
        return texts
    return [shown(text) for text in texts]


def _page_cells(rows: Sequence[Sequence[Any]]) -> list[list[str]]:
    """A page's rows as `_shown_cells` gives them; a page of text cells with nothing to escape
    (the listings' usual page) checked in one pass, not row by row."""
    try:
        printable = "".join(map("".join, rows)).isprintable()
    except TypeError:  # a cell that is not text yet
        printable = False
    if printable:
        return list(map(list, rows))
    return [_shown_cells(row) for row in rows]


def _emit_page(
    rows: Sequence[Sequence[Any]], headers: Sequence[str | Column], notes: set[str]
) -> None:
    """One table of `rows`; a note about columns left out, unless an earlier page gave it."""
    from tunelog.tables import columns_of, fit_table, simple_table, wrapped_table

    specs = columns_of(headers)
    cells = _page_cells(rows)
    names = [shown(spec.name) for spec in specs]
    width = terminal_width()
    if width is not None:
        fitted = fit_table(
            cells, [replace(s, name=n) for s, n in zip(specs, names, strict=True)], width
        )
        cells, names = fitted.rows, fitted.headers
        note = (
            f"note: {width} columns: not shown {', '.join(fitted.dropped)} "
            "(--wide or --json shows every column)"
        )
        if fitted.dropped and note not in notes:
            notes.add(note)
            _err(note)
        # Only fit_table breaks lines in a cell (`shown` escapes a cell's own line breaks).
        if any("\n" in "".join(row) for row in cells):
            echo_shown(wrapped_table(cells, names))
            return
    text = simple_table(cells, names)
    if text is None:  # characters whose width or treatment only tabulate knows
        from tabulate import tabulate

        echo_shown(tabulate(cells, headers=names, tablefmt="simple", disable_numparse=True))
        return
    echo_shown(text)  # the shown cells and headers, spaced: nothing more to escape
