"""How values look in a table cell or a line: latencies, paths, templates, errors."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from tunelog.cli.emitters import _json_text
from tunelog.filters import Filters


def _source_ref(ref: str) -> str:
    """`#id path` of a stored source, its path shown as `display_path` shows it."""
    number, _, path = ref.partition(" ")
    return f"{number} {display_path(path)}" if path else ref


def display_path(path: str) -> str:
    """A stored (absolute) path as users read it: relative below the working directory."""
    if path == "-" or not os.path.isabs(path):
        return path
    try:
        return _relative_below(path, os.getcwd())
    except (OSError, ValueError):
        return path


@functools.lru_cache(maxsize=1024)
def _relative_below(path: str, cwd: str) -> str:
    # Cached: `best` shows one of a few source paths on each of tens of thousands of rows.
    return os.path.relpath(path, cwd) if Path(path).is_relative_to(Path(cwd)) else path


def format_seconds(seconds: float) -> str:
    """A latency in readable units: `671.6 us`, `12.40 ms`, `1.20 s`, `1e+09 s`.

    Always a valid measurement's: a mean of 1e9 s with error 0 is what TVM compares, so it is
    shown as such (a failed trial's stub cost never reaches a latency cell)."""
    if seconds >= 1e4:
        return f"{seconds:.3g} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if 0 < seconds < 5e-8:  # would read "0.0 us", as if it took no time
        return f"{seconds * 1e9:.1f} ns"
    return f"{seconds * 1e6:.1f} us"


def _template_text(task_name: str, template_key: object) -> str:
    """A template as `best` shows it: v0.1 task names with their template key (`[direct]`)."""
    return task_name + (f" [{template_key}]" if template_key else "")


def _compact(value: object) -> str:
    return _json_text(value).replace('"', "")


_SEE_WHAT_THERE_IS = "see `tunelog workloads` and `tunelog stats` for what there is"


def _nothing_matches(filters: Filters, *, then: str = "", named: str | None = None) -> str:
    """What to say when no layer matches the filters (a note, or an error under --check)."""
    given = " ".join(
        text for text in (repr(named) if named is not None else "", filters.describe()) if text
    )
    what = f"no layer matches {given}" if given else "the database has no layer"
    return f"{what}{then}; {_SEE_WHAT_THERE_IS}"


def _errors_text(counts: dict[int, int]) -> str:
    from tunelog.errorcodes import error_name

    failed = sorted(((c, n) for n, c in counts.items() if n != 0), reverse=True)
    return ", ".join(f"{error_name(n)} x{c}" for c, n in failed)
