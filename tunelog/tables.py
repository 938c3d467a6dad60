"""Plain-text tables: tabulate's "simple" format, fitted into a terminal width. No printing.

The CLI prints tabulate's "simple" format: columns as wide as their widest cell, two spaces
apart. `simple_table` writes it without importing tabulate (whose import, with html's, costs
every listing milliseconds of start-up) for the cells tabulate prints as they are.

When that is wider than the terminal, the widest columns are cut to one common width (never
below MIN_WIDTH, so narrow columns such as counts stay whole), and each cell or header longer
than that ends with "…". Every row stays one line, so `grep` and `wc -l` keep working.
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_WIDTH = 6  # "dense…": below this a cut cell says nothing
SEPARATOR = 2  # spaces between columns in tabulate's "simple" format
HEADER_PADDING = 2  # tabulate makes a column at least its header's width plus 2
ELLIPSIS = "…"
# Characters whose width is one column whatever tabulate measures with (len, or wcwidth when
# installed) and that tabulate prints as they are (no line breaks, tabs or escape codes).
_PLAIN = frozenset(map(chr, range(0x20, 0x7F))) | {ELLIPSIS}


def simple_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str | None:
    """`tabulate(rows, headers, tablefmt="simple", disable_numparse=True)`, for string cells.

    None when a cell or header holds anything but printable ASCII and "…", or a row has not
    one cell per header (callers ask tabulate then): tabulate treats those specially.
    """
    if not rows or not all(_PLAIN.issuperset(h) for h in headers):
        return None
    cells: list[list[str]] = []
    for row in rows:
        if len(row) != len(headers) or not all(_PLAIN.issuperset(cell) for cell in row):
            return None
        cells.append([cell.strip() for cell in row])  # tabulate strips cells, not headers
    widths = [len(h) + HEADER_PADDING for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    gap = " " * SEPARATOR
    lines = [
        gap.join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
        gap.join("-" * w for w in widths).rstrip(),
    ]
    lines += [
        gap.join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in cells
    ]
    return "\n".join(lines)


def fit_table(
    rows: Sequence[Sequence[str]], headers: Sequence[str], width: int
) -> tuple[list[list[str]], list[str]]:
    """Rows and headers cut so the table is at most `width` columns wide (when it can be)."""
    cap = column_cap([len(h) + HEADER_PADDING for h in headers], rows, width)
    if cap is None:
        return [list(row) for row in rows], list(headers)
    cut_headers = [_cut(h, cap - HEADER_PADDING) for h in headers]
    return [[_cut(cell, cap) for cell in row] for row in rows], cut_headers


def column_cap(
    header_widths: Sequence[int], rows: Sequence[Sequence[str]], width: int
) -> int | None:
    """The widest a column may be so that the table fits `width`; None when it fits as is.

    `header_widths`: the least width each column takes for its header.
    The largest cap whose total fits; MIN_WIDTH when even that does not fit.
    """
    widths = list(header_widths)
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    budget = width - SEPARATOR * (len(widths) - 1)
    if sum(widths) <= budget:
        return None
    for cap in range(max(widths) - 1, MIN_WIDTH - 1, -1):
        if sum(min(w, cap) for w in widths) <= budget:
            return cap
    return MIN_WIDTH


def _cut(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + ELLIPSIS
