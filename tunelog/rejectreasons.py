"""Why a line is no AutoTVM record, as a reject reason says it: the text of JSON that does
not parse (a lone surrogate escape, an integer past Python's digit limit, where the error is),
of a known foreign format (auto_scheduler, MetaSchedule lines) and of a model's first error.

Pure: `tunelog.recordmodels` asks it once a line failed validation.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from tunelog.recordvalues import JsonValue, non_json_shape

_JSON_COLUMN = re.compile(r"column (\d+)")


def foreign_format(value: JsonValue) -> str | None:
    """Name a known non-AutoTVM format, or None."""
    if isinstance(value, dict):
        version = value.get("v")
        i = value.get("i")
        if isinstance(i, list) and i and isinstance(i[0], list):  # [task, state]
            if not isinstance(version, str):
                return (
                    f"auto_scheduler record whose version (v) is {json.dumps(version)}, not a "
                    "string (TVM's reader aborts on it)"
                )
            # Reached only when the line is not plain JSON (see records.parse_content).
            return f"auto_scheduler record {version} that is not plain JSON"
        return None
    if isinstance(value, list):
        if len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], list):
            return (
                "a MetaSchedule tuning record, read only from its database: import the file "
                "with its workload file beside it"
            )
        if (
            len(value) == 2
            and isinstance(value[0], str)
            and value[0].isdigit()
            and isinstance(value[1], str)
        ):
            return (
                "a MetaSchedule workload line, read with its database's records file: import "
                "that file"
            )
    return None


def non_json_reason(line: bytes, detail: str) -> str:
    """Why a line that does not parse as JSON is rejected (`detail`: the parser's error)."""
    shape = non_json_shape(line)
    if shape is not None:
        return shape
    match = _JSON_COLUMN.search(detail)
    if match and b"\\u" in line and _lone_surrogate(line):
        return f"a lone UTF-16 surrogate escape (half a character) at column {match.group(1)}"
    digits = _integer_at(line, int(match.group(1))) if match and _DIGIT_LIMIT else None
    if digits is not None:
        return (
            f"an integer of {digits} digits: Python's json (TVM's reader) refuses integers of "
            f"more than {_DIGIT_LIMIT} digits"
        )
    if match:
        return f"invalid JSON at column {match.group(1)}"
    return f"invalid JSON ({detail})" if detail else "invalid JSON"


# A run of digits past Python's limit on int() of text (4300 by default; 0: none): valid JSON
# that Python's json refuses, with an error that only names a column.
_DIGIT_LIMIT = sys.get_int_max_str_digits()
_TOO_MANY_DIGITS = re.compile(rb"\d{%d,}(?![.eE\d])" % (_DIGIT_LIMIT + 1))


def _integer_at(line: bytes, column: int) -> int | None:
    """The digit count of an integer past `_DIGIT_LIMIT` where the error points (a column
    counted from 1, in or just after it), if there is one: not a float's digits."""
    for run in _TOO_MANY_DIGITS.finditer(line):
        if run.start() <= column <= run.end() + 1 and line[run.start() - 1 : run.start()] != b".":
            return run.end() - run.start()
    return None


def _lone_surrogate(line: bytes) -> bool:
    """Whether Python's json (TVM's reader) reads the line, into a string holding half a
    character ("\\ud800" alone): JSON that is not text, which no stricter parser takes."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return True
    return False


def _loc(loc: tuple[str | int, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts)


def pydantic_reason(errors: Any) -> str:
    """The first of a pydantic validation's errors as a reject reason."""
    if not errors:
        return "not an AutoTVM record"
    err = errors[0]
    where = _loc(tuple(err["loc"]))
    kind = err["type"]
    if kind == "missing" and err["loc"] and isinstance(err["loc"][-1], int):
        return f"wrong number of items in {_loc(tuple(err['loc'][:-1]))}"
    if kind == "missing":
        return f"missing field {where}"
    if kind in ("too_short", "too_long"):
        return f"wrong number of items in {where}"
    if kind == "literal_error":
        return f"unexpected value in {where}: {err['msg']}"
    return f"bad field {where}: {err['msg']}"
