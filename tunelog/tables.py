"""Plain-text tables: tabulate's "simple" format, fitted into a terminal width. No printing.

The CLI prints tabulate's "simple" format: columns as wide as their widest cell, two spaces
apart. `simple_table` writes it without importing tabulate (whose import, with html's, costs
every listing milliseconds of start-up) for the cells tabulate prints as they are.

Each table declares its columns once (`Column`): a rank saying how readily the column may go
(0: a key column, kept whatever the width) and whether it holds paths. When the table is wider
than the terminal, `fit_table` first drops the columns of the highest rank, then wraps the
widest cells onto more lines (at spaces where it can): no cell is ever cut, so what is shown
is whole. Paths are shown by their shortest unique tail (`…/t4/bert.log`).
"""

from __future__ import annotations

import itertools
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

MIN_WIDTH = 10  # narrower wrapped cells are harder to read than a wider table
COMFORTABLE = 20  # columns are dropped until wrapped cells get at least this width
SEPARATOR = 2  # spaces between columns in tabulate's "simple" format
HEADER_PADDING = 2  # tabulate makes a column at least its header's width plus 2
ELLIPSIS = "…"
# Printable ASCII and ELLIPSIS are one column wide whatever tabulate measures with (len, or
# wcwidth when installed), and tabulate prints them as they are (no line breaks, tabs or escape
# codes): `simple_table` writes those cells, tabulate the others.


@dataclass(frozen=True)
class Column:
    """One column of a table: its header, how readily it is dropped, whether it holds paths.

    `rank` 0: a key column, never dropped; otherwise the higher the rank, the sooner the column
    is dropped to fit a narrow terminal. `path`: cells are paths (optionally `path:line`).
    """

    name: str
    rank: int = 0
    path: bool = False


def columns_of(headers: Sequence[str | Column]) -> list[Column]:
    """`headers` as Columns: a plain string is a key column."""
    return [h if isinstance(h, Column) else Column(h) for h in headers]


def simple_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str | None:
    """`tabulate(rows, headers, tablefmt="simple", disable_numparse=True)`, for string cells.

    None when a cell or header holds anything but printable ASCII and "…", or a row has not
    one cell per header (callers ask tabulate then): tabulate treats those specially.
    Column by column, not cell by cell: 80,000 rows of 8 columns take a third of tabulate's
    time (see BENCHMARKS.md, "tables of many rows").
    """
    if not rows or not _plain("".join(headers)):
        return None
    # Built-ins mapped over the cells rather than a Python loop per cell or row: 80k rows.
    if set(map(len, rows)) != {len(headers)}:
        return None
    raw = list(zip(*rows, strict=True))
    if any("\n" in "".join(column) for column in raw):
        return None  # tabulate lays a cell with a line break out on lines (a blank one on none)
    columns = [list(map(str.strip, column)) for column in raw]
    if not all(_plain("".join(column)) for column in columns):
        return None  # tabulate strips cells, not headers
    widths = [
        max(len(h) + HEADER_PADDING, max(map(len, column)))
        for h, column in zip(headers, columns, strict=True)
    ]
    gap = " " * SEPARATOR
    line = gap.join(f"{{:<{w}}}" for w in widths).format
    out = [line(*headers).rstrip(), gap.join("-" * w for w in widths)]
    out += map(str.rstrip, itertools.starmap(line, zip(*columns, strict=True)))
    return "\n".join(out)


def _plain(text: str) -> bool:
    """Whether `text` holds printable ASCII and "…" only (one column each, as they are)."""
    text = text.replace(ELLIPSIS, "")
    return text.isascii() and text.isprintable()


def wrapped_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """The "simple" format for cells `fit_table` wrapped onto several lines ("\n").

    A blank line separates the rows, so a wrapped row reads as one.
    """
    cells = [[cell.split("\n") for cell in row] for row in rows]
    return _render(cells, headers, spaced=True)


def _render(cells: list[list[list[str]]], headers: Sequence[str], *, spaced: bool) -> str:
    widths = [len(h) + HEADER_PADDING for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], *(len(line) for line in cell))
    gap = " " * SEPARATOR
    out = [
        gap.join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
        gap.join("-" * w for w in widths).rstrip(),
    ]
    for number, row in enumerate(cells):
        if spaced and number:
            out.append("")
        for n in range(max(len(cell) for cell in row)):
            parts = [cell[n] if n < len(cell) else "" for cell in row]
            out.append(gap.join(p.ljust(w) for p, w in zip(parts, widths, strict=True)).rstrip())
    return "\n".join(out)


@dataclass(frozen=True)
class Fitted:
    """A table fitted to a width: its rows, headers, and the names of the columns dropped."""

    rows: list[list[str]]
    headers: list[str]
    dropped: list[str]


def fit_table(rows: Sequence[Sequence[str]], columns: Sequence[str | Column], width: int) -> Fitted:
    """Rows and headers made to fit `width` columns (when they can) without cutting a cell.

    Path columns show each path's shortest unique tail; then the columns of the highest rank
    are dropped while the table is too wide; then the widest cells wrap onto more lines.
    """
    specs = columns_of(columns)
    table = [list(row) for row in rows]
    for i, spec in enumerate(specs):
        if spec.path:
            tails = short_paths([row[i] for row in table], width * 2 // 3)
            for row, tail in zip(table, tails, strict=True):
                row[i] = tail
    keep = list(range(len(specs)))
    # One at a time: the highest rank first, the rightmost of a rank first.
    for i in sorted(keep, key=lambda i: (-specs[i].rank, -i)):
        if specs[i].rank == 0 or _fits(table, specs, keep, width):
            break
        keep.remove(i)
    dropped = [s.name for i, s in enumerate(specs) if i not in keep]
    kept_rows = [[row[i] for i in keep] for row in table]
    headers = [specs[i].name for i in keep]
    cap = column_cap(_floors(table, specs, keep, width), kept_rows, width)
    if cap is not None:
        floors = _floors(table, specs, keep, width)
        kept_rows = [
            [_wrap(cell, max(cap, floor)) for cell, floor in zip(row, floors, strict=True)]
            for row in kept_rows
        ]
    return Fitted(kept_rows, headers, dropped)


def _fits(
    table: Sequence[Sequence[str]], specs: Sequence[Column], keep: list[int], width: int
) -> bool:
    """Whether the kept columns fit `width` as they are or with cells wrapped at COMFORTABLE."""
    cap = column_cap(
        _floors(table, specs, keep, width), [[row[i] for i in keep] for row in table], width
    )
    return cap is None or cap >= COMFORTABLE


def _floors(
    table: Sequence[Sequence[str]], specs: Sequence[Column], keep: list[int], width: int
) -> list[int]:
    """The least width of each kept column: its header's, and its longest word's (a name or
    a path broken over lines cannot be read or copied), up to two thirds of the width."""
    floors = []
    for i in keep:
        longest_word = max((len(word) for row in table for word in row[i].split()), default=0)
        floors.append(max(len(specs[i].name) + HEADER_PADDING, min(width * 2 // 3, longest_word)))
    return floors


def column_cap(
    header_widths: Sequence[int], rows: Sequence[Sequence[str]], width: int
) -> int | None:
    """The widest a column may be so that the table fits `width`; None when it fits as is.

    `header_widths`: the least width each column takes (its header is never wrapped).
    The largest cap whose total fits; MIN_WIDTH when even that does not fit.
    """
    widths = [0] * len(header_widths)
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    floor = list(header_widths)
    budget = width - SEPARATOR * (len(widths) - 1)
    if sum(max(w, f) for w, f in zip(widths, floor, strict=True)) <= budget:
        return None
    for cap in range(max(widths) - 1, MIN_WIDTH - 1, -1):
        if sum(max(min(w, cap), f) for w, f in zip(widths, floor, strict=True)) <= budget:
            return cap
    return MIN_WIDTH


def _wrap(text: str, cap: int) -> str:
    """`text` on lines of at most `cap` characters, broken at spaces where it can."""
    if len(text) <= cap:
        return text
    lines = textwrap.wrap(text, cap, break_on_hyphens=False, drop_whitespace=True)
    return "\n".join(lines)


def short_paths(cells: Sequence[str], limit: int | None = None) -> list[str]:
    """Each path (or `path:line`) as its shortest tail of whole parts that no other path has.

    Relative paths stay as they are (they are short already); an absolute one becomes
    `…/dir/file.log`: its directory and as many more as needed to tell it from the others,
    or the file name alone when that is unique and the tail with its directory is longer
    than `limit` (a path wrapped over lines cannot be copied).
    """
    split = [_path_and_line(cell) for cell in cells]
    absolute = sorted({path for path, _ in split if path.startswith("/")})
    tails = _unique_tails(absolute, 2)
    if limit is not None and any(len(tail) > limit for tail in tails.values()):
        names = _unique_tails(absolute, 1)
        tails = {p: names[p] if len(tails[p]) > limit else tails[p] for p in tails}
    return [tails.get(path, path) + line for path, line in split]


def _path_and_line(cell: str) -> tuple[str, str]:
    path, sep, line = cell.rpartition(":")
    if sep and line.isdigit():
        return path, sep + line
    return cell, ""


def _unique_tails(paths: Sequence[str], least: int) -> dict[str, str]:
    """`…/` and the shortest tail of at least `least` parts that no other path ends with."""
    parts = {path: path.split("/") for path in paths}
    tails: dict[str, str] = {}
    longest = max((len(own) for own in parts.values()), default=0)
    for n in range(least, longest):
        left = [p for p in parts if p not in tails]
        if not left:
            break
        counts = Counter(tuple(own[-n:]) for own in parts.values())
        for path in left:
            tail = tuple(parts[path][-n:])
            if counts[tail] == 1 and n < len(parts[path]) - 1:
                tails[path] = ELLIPSIS + "/" + "/".join(tail)
    return {path: tails.get(path, path) for path in parts}
