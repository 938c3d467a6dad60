"""auto_scheduler (Ansor) records: recognising and checking one line (tvm-reference §8).

Pure: a decoded JSON value in, an `AnsorRecord` or the reason TVM could not read it out.

    {"i": [[WORKLOAD_KEY, TARGET, HARDWARE_PARAMS, TARGET_HOST, LAYOUT_REWRITE, INPUT_NAMES],
           [[], STEPS]],
     "r": [COSTS, ERROR_NO, ALL_COST, TIMESTAMP], "v": "v0.6"}

v0.2 writes only the key and target, v0.3 adds the hardware parameters, v0.4 the host, v0.5 the
layout-rewrite number and v0.6 the input names; TVM 0.8-0.19 read all of them. auto_scheduler's
C++ reader aborts the whole load on a line it cannot read (a missing field, a wrong type, an
unknown top-level key), so such a line is rejected here, and never exported.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import orjson

from tunelog.selection import AnsorKeyError, ansor_workload
from tunelog.versions import ANSOR_VERSION as ANSOR_VERSION

# The config index of an auto_scheduler record: its schedule (the transform steps) has no index
# in a config space, so it is a 62-bit hash of the steps; equal schedules get equal numbers.
_CONFIG_BITS = 62


@dataclass(frozen=True, slots=True)
class AnsorRecord:
    """One auto_scheduler measurement, as its line holds it."""

    workload_key: str
    target: str
    target_host: str
    steps: list[Any]
    costs: tuple[float, ...]
    error_no: int
    all_cost: float
    timestamp: float
    version: str

    @property
    def workload(self) -> tuple[str, str]:
        """`(hash, canonical flattened args)`: the workload auto_scheduler keys it by."""
        return ansor_workload(self.workload_key)

    @property
    def config_index(self) -> int:
        """A stable number for the schedule (a hash of its steps): equal steps, equal numbers."""
        digest = hashlib.blake2b(orjson.dumps(self.steps), digest_size=8).digest()
        return int.from_bytes(digest, "big") >> (64 - _CONFIG_BITS)


def ansor_shapes(workload_key: str) -> str:
    """The items of a workload key after its hash, as written: `[1, 7, 7, 512], [3, 3, 512]`."""
    try:
        value = json.loads(workload_key)
    except (ValueError, RecursionError):
        return ""
    if not isinstance(value, list):
        return ""
    return ", ".join(json.dumps(item, separators=(", ", ": ")) for item in value[1:])


def looks_like_ansor(value: object) -> bool:
    """True for a JSON object shaped like an auto_scheduler record (string "v", list "i")."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("v"), str)
        and isinstance(value.get("i"), list)
        and "input" not in value
    )


def parse_ansor(value: dict[str, Any]) -> AnsorRecord | str:
    """Check a decoded auto_scheduler record; return it, or why TVM's reader would abort on it."""
    unknown = sorted(set(value) - {"i", "r", "v"})
    if unknown:
        return f"auto_scheduler record with unknown key {unknown[0]!r} (TVM aborts the load)"
    version = value["v"]
    inp = value["i"]
    if len(inp) != 2 or not isinstance(inp[0], list) or not isinstance(inp[1], list):
        return "auto_scheduler record: i must be [task, state]"
    task, state = inp
    problem = task_problem(task)
    if problem is None:
        problem = _state_problem(state)
    if problem is not None:
        return f"auto_scheduler record: {problem}"
    result = value.get("r")
    parsed = _result(result)
    if isinstance(parsed, str):
        return f"auto_scheduler record: {parsed}"
    costs, error_no, all_cost, timestamp = parsed
    try:
        ansor_workload(task[0])
    except AnsorKeyError as exc:
        return f"auto_scheduler record: {exc}"
    return AnsorRecord(
        workload_key=task[0],
        target=task[1],
        target_host=task[3] if len(task) > 3 else "",
        steps=state[1],
        costs=costs,
        error_no=error_no,
        all_cost=all_cost,
        timestamp=timestamp,
        version=version,
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def task_problem(task: list[Any]) -> str | None:
    """Why parse_ansor refuses a task (`i[0]`), or None."""
    if not 2 <= len(task) <= 6:
        return f"task has {len(task)} items (2 to 6 expected)"
    if not isinstance(task[0], str) or not task[0]:
        return "workload key is not a non-empty string"
    if not isinstance(task[1], str):
        return "target is not a string"
    hardware = task[2] if len(task) > 2 else None
    if hardware is not None and not (
        isinstance(hardware, list) and all(_is_int(x) for x in hardware)
    ):
        return "hardware parameters are not a list of integers"
    if len(task) > 3 and not isinstance(task[3], str):
        return "target host is not a string"
    if len(task) > 4 and not _is_int(task[4]):
        return "layout-rewrite option is not an integer"
    if len(task) > 5 and (
        not isinstance(task[5], list) or not all(isinstance(x, str) for x in task[5])
    ):
        return "input names are not a list of strings"
    return None


def _state_problem(state: list[Any]) -> str | None:
    if len(state) != 2 or not isinstance(state[0], list) or not isinstance(state[1], list):
        return "state must be [stages, steps]"
    for step in state[1]:
        if not isinstance(step, list) or not step or not isinstance(step[0], str):
            return "a transform step is not a list starting with its kind"
    return None


def _result(result: object) -> tuple[tuple[float, ...], int, float, float] | str:
    if not isinstance(result, list) or len(result) != 4:
        return "r must be [costs, error_no, all_cost, timestamp]"
    costs, error_no, all_cost, timestamp = result
    if not isinstance(costs, list) or not all(_is_number(c) for c in costs):
        return "costs are not a list of numbers"
    if not _is_int(error_no):
        return "error number is not an integer"
    if not _is_number(all_cost) or not _is_number(timestamp):
        return "all_cost or timestamp is not a number"
    floats = tuple(float(c) for c in costs)
    if not all(math.isfinite(c) for c in floats):
        return "non-finite cost"
    return floats, error_no, float(all_cost), float(timestamp)
