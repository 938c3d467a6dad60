"""Workload identity and its canonical JSON: the one home of both.

An AutoTVM workload is (task name, template key, arguments, log version), the arguments held as
canonical JSON text; a record's (target, workload) is the first five fields of a `Measurement`
(`IDENTITY_FIELDS`, `IDENTITY_LENGTH`). The store's `workloads` table has this tuple UNIQUE.

Two JSON writers live here, and they differ in bytes on purpose, because each output was
written with one of them and must not change:

* `canonical_json` writes the stored `args_json` (compact, keys in their log order, non-ASCII
  as UTF-8, a float in orjson's spelling). The identity, the database and every exported line
  depend on these bytes.
* `sorted_json` writes what `json.dumps(args, sort_keys=True, separators=(",", ":"),
  default=repr)` would (keys sorted, non-ASCII escaped, never raising). Only derived text
  depends on it: the fallback layer key (`<task>|args=<sorted_json>`, `workloads.layer_key`)
  and the short text of arguments no template reads (`workloads.short_args`).

`tests/test_workloadidentity.py` runs a table of inputs through both and pins the bytes of each.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, Final, Protocol

__all__ = [
    "IDENTITY_FIELDS",
    "IDENTITY_LENGTH",
    "WorkloadKey",
    "canonical_json",
    "sorted_json",
    "workload_json",
    "workload_key",
]

# The fields of a Measurement that name its (target, workload): its first IDENTITY_LENGTH
# fields, in this order (a test holds the two equal). The importer groups records on
# `rec[:IDENTITY_LENGTH]`, a slice, because it runs once per record; Final, so that mypy knows
# the slice's type.
IDENTITY_FIELDS = ("log_version", "target", "task_name", "template_key", "args_json")
IDENTITY_LENGTH: Final = 5

# (task name, template key, args JSON, log version): a row of the workloads table.
WorkloadKey = tuple[str, str, str, str]


class _Identified(Protocol):
    """What `workload_key` reads (a Measurement, or a parsed record's model)."""

    @property
    def task_name(self) -> str: ...
    @property
    def template_key(self) -> str: ...
    @property
    def args_json(self) -> str: ...
    @property
    def log_version(self) -> str: ...


def workload_key(record: _Identified) -> WorkloadKey:
    """The workload a record tuned, as the store keys it (UNIQUE in its workloads table)."""
    return (record.task_name, record.template_key, record.args_json, record.log_version)


def canonical_json(value: Any) -> str:
    """Compact JSON of a decoded value: the canonical form of task arguments."""
    # orjson loaded here, not above: read commands import this module (for sorted_json) and
    # never write canonical JSON (tests/test_package.py holds them to not loading orjson).
    import orjson

    try:
        text = orjson.dumps(value).decode()
    except TypeError:  # an integer beyond 64 bits, which Python's json (and TVM) accept
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if "null" in text and _holds_non_finite(value):
        # orjson writes inf, -inf and nan as null: strides 1e400 and -1e400 (two workloads to
        # TVM) were one. Python's json keeps them apart (Infinity, -Infinity, NaN).
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text


def _holds_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list | tuple):
        return any(_holds_non_finite(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_non_finite(item) for item in value.values())
    return False


def workload_json(task_name: str, args_json: str) -> str:
    """`[task_name, *args]` as compact JSON (TVM's workload tuple), from canonical args JSON."""
    import orjson  # not above: see canonical_json

    inner = args_json[1:-1]
    return "[" + orjson.dumps(task_name).decode() + ("," + inner if inner else "") + "]"


# ---------------------------------------------------------------------------------------------
# sorted_json: json.dumps(sort_keys=True, compact, default=repr), without its failures


def _printable(number: int) -> bool:
    """Whether str() prints `number`: Python refuses ints longer than its digit limit."""
    limit = sys.get_int_max_str_digits()
    # bit_length first: cheap, and it settles every int of up to ~0.9 * limit digits
    return limit == 0 or number.bit_length() <= 3 * limit or abs(number) < 10**limit


def _json_float(value: float) -> str:
    """A float as json.dumps writes it (allow_nan: lenient readers hand over NaN and Infinity)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _json_scalar(value: object) -> str:
    """A value that is not a list, tuple or dict, as `json.dumps(..., default=repr)` writes it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        # Past the digit limit json.dumps raises; hex has no limit and reads as no decimal int.
        return int.__repr__(value) if _printable(value) else hex(value)
    if isinstance(value, float):
        return _json_float(value)
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(repr(value))  # not JSON (default=repr)


def _json_key(key: object) -> str:
    """A dict key as text: json.dumps turns int, float, bool and None keys into their JSON."""
    if isinstance(key, str):
        return key
    if isinstance(key, (int, float)) or key is None:
        return _json_scalar(key)
    return repr(key)  # json.dumps refuses other keys; no JSON reader makes them


_Container = list[object] | tuple[object, ...] | dict[object, object]


def _json_part(value: object) -> object:
    """A container's item as `sorted_json` stacks it: a nested container, or its text."""
    return value if isinstance(value, (list, tuple, dict)) else _json_scalar(value)


def _json_parts(container: _Container) -> list[object]:
    """What follows a container's opening bracket, in order: texts (str) and nested containers,
    then the closing bracket and the container's id (int), which ends its cycle watch."""
    parts: list[object] = []
    if isinstance(container, dict):
        # Sorted on the key text, not on (key, value) pairs: equal texts must not compare values.
        pairs = sorted(((_json_key(k), v) for k, v in container.items()), key=lambda kv: kv[0])
        for index, (key, value) in enumerate(pairs):
            parts += [("," if index else "") + json.dumps(key) + ":", _json_part(value)]
        close = "}"
    else:
        for index, value in enumerate(container):
            parts += [",", _json_part(value)] if index else [_json_part(value)]
        close = "]"
    return [*parts, close, id(container)]


def sorted_json(args: object) -> str:
    """What `json.dumps(args, sort_keys=True, separators=(",", ":"), default=repr)` writes.

    Written with a stack instead of recursion and without json.dumps' failures: nesting of any
    depth is written in full (so distinct args keep distinct keys), ints past Python's digit
    limit in hex, and a container met again inside itself (no JSON reader makes one) as
    "<cycle>".
    """
    out: list[str] = []
    open_ids: set[int] = set()  # containers being written
    todo: list[object] = [_json_part(args)]  # texts, containers to open, ids of containers closed
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, int):
            open_ids.discard(item)
        elif not isinstance(item, (list, tuple, dict)):
            raise AssertionError(f"_json_part stacked a {type(item).__name__}")
        elif id(item) in open_ids:
            out.append('"<cycle>"')
        else:
            open_ids.add(id(item))
            out.append("{" if isinstance(item, dict) else "[")
            todo += reversed(_json_parts(item))
    return "".join(out)
