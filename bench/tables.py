"""What formatting a table of many rows costs: tabulate, `tables.simple_table`, the CLI's pages.

Issue 28/29. Usage: .venv/bin/python bench/tables.py [--rows N] [--runs R]

Rows shaped like `tunelog best`'s (8 string columns: target, slots, template, args, config,
latency, trials, source), N of them (default 80,000). For each way of writing the table: the
median CPU seconds of R runs and the peak of memory allocated while formatting (tracemalloc, in
a run of its own), the rows themselves not counted where a way reads them from a generator.
- `tabulate`: `tabulate(rows, headers, tablefmt="simple", disable_numparse=True)`, all rows;
- `simple_table`: tunelog.tables.simple_table, all rows at once;
- `emit_table (pages)`: tunelog.cli.emit_table reading a generator, PAGE_ROWS rows a page,
  written to a discarded stdout;
- `emit_json (streamed)`: tunelog.cli.emit_json of a generator of the rows as objects.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence

from tabulate import tabulate

from tunelog.cli import emit_json, emit_table
from tunelog.tables import simple_table

HEADERS = ["target", "slots", "template", "args", "config", "latency", "trials", "source"]


def rows(n: int) -> Iterator[list[str]]:
    """`n` rows like `tunelog best`'s."""
    for i in range(n):
        yield [
            "llvm -keys=cpu -mcpu=skylake-avx512",
            "cpu",
            "conv2d_NCHWc.x86",
            f"1x{i % 512}x56x56 * 64x{i % 512}x3x3",
            str(i * 7919 % 100_000),
            f"{(i * 37 % 1000) / 10:.1f} us",
            str(i % 300),
            f"logs/run{i % 7}.log:{i}",
        ]


def ways(n: int) -> dict[str, Callable[[], object]]:
    """Each way of writing the table, as a function of no arguments."""
    whole = list(rows(n))
    return {
        "tabulate": lambda: tabulate(
            whole, headers=HEADERS, tablefmt="simple", disable_numparse=True
        ),
        "simple_table": lambda: simple_table(whole, HEADERS),
        "emit_table (pages)": lambda: emit_table(rows(n), HEADERS),
        "emit_json (streamed)": lambda: emit_json(
            dict(zip(HEADERS, row, strict=True)) for row in rows(n)
        ),
    }


def cpu_seconds(way: Callable[[], object]) -> float:
    """CPU seconds of one call, stdout discarded."""
    sys.stdout = _Discard()
    try:
        start = time.process_time()
        way()
        return time.process_time() - start
    finally:
        sys.stdout = sys.__stdout__


def peak_bytes(way: Callable[[], object]) -> int:
    """Peak bytes allocated during one call, stdout discarded."""
    sys.stdout = _Discard()
    tracemalloc.start()
    try:
        way()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        sys.stdout = sys.__stdout__


class _Discard(io.TextIOBase):
    """A stdout that keeps nothing."""

    def write(self, text: str) -> int:
        return len(text)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure each way and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=80_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    lines = [
        f"| {args.rows:,} rows x 8 columns | CPU s (median of {args.runs}) | peak MB |",
        "| --- | ---: | ---: |",
    ]
    for name, way in ways(args.rows).items():
        seconds = statistics.median(cpu_seconds(way) for _ in range(args.runs))
        lines.append(f"| {name} | {seconds:.2f} | {peak_bytes(way) / 1e6:.0f} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
