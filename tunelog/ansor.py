"""auto_scheduler (Ansor) records: recognising and checking one line (tvm-reference §8).

Pure: a decoded JSON value in, an `AnsorRecord` or the reason TVM could not read it out
(`parse_ansor`); a line's bytes in, the record and its `Measurement` or that reason out
(`scan_ansor_line`, and `scan_ansor_line_fast`, its msgspec path for the usual line, which the
tests hold to the same verdicts).

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
import re
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from tunelog.recordvalues import JsonValue, Measurement, Rejected, numpy_mean
from tunelog.rules.recordvalidity import check_values
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


# HardwareParams' fields as an auto_scheduler record lists them (num_cores, vector_unit_bytes,
# cache_line_bytes, max_shared_memory_per_block, max_local_memory_per_block,
# max_threads_per_block, max_vthread_extent, warp_size).
HARDWARE_PARAMS = 8


def task_problem(task: list[Any]) -> str | None:
    """Why parse_ansor refuses a task (`i[0]`), or None."""
    if not 2 <= len(task) <= 6:
        return f"task has {len(task)} items (2 to 6 expected)"
    if not isinstance(task[0], str) or not task[0]:
        return "workload key is not a non-empty string"
    if not isinstance(task[1], str):
        return "target is not a string"
    hardware = task[2] if len(task) > 2 else None
    if len(task) > 2 and not (isinstance(hardware, list) and all(_is_int(x) for x in hardware)):
        return "hardware parameters are not a list of integers"  # null too: TVM's reader aborts
    if hardware is not None and len(hardware) != HARDWARE_PARAMS:
        # TVM reads exactly its HardwareParams' fields: its reader aborts on any other count
        # (checked 0-7, 9, 10 with TVM 0.16), and an export of the line would not load.
        return (
            f"{len(hardware)} hardware parameters ({HARDWARE_PARAMS} expected: TVM's reader "
            "aborts on the line)"
        )
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


def ansor_measurement(record: AnsorRecord) -> Measurement:
    """The store's view of an auto_scheduler record: its workload is (hash, flattened args)."""
    task_name, args_json = record.workload
    return Measurement(
        log_version=ANSOR_VERSION,
        target=record.target,
        task_name=task_name,
        template_key="",
        args_json=args_json,
        config_index=record.config_index,
        costs=record.costs,
        error_no=record.error_no,
        all_cost=record.all_cost,
        timestamp=record.timestamp,
        tvm_version=None,
        mean_cost=numpy_mean(record.costs),
        spelling=record.workload_key,
    )


# auto_scheduler's reader skips lines starting with a space (AutoTVM's does not); --repair must
# not recover them either: the exported line would be read where the original was not.
SKIPPED_BY_ANSOR_READER = Rejected(
    "auto_scheduler record starting with a space: TVM's reader skips it"
)


# The string escapes TVM's auto_scheduler reader (dmlc's C++ JSON reader) reads: it aborts on
# any other (`\u00e9`, which Python's json.dumps writes for any non-ASCII text, `\/`, `\b`,
# `\f`), and the whole file's load with it. Matched from the line's start, each character or
# escape once (linear): a match ends at the first escape it does not read.
_OTHER_ESCAPE = re.compile(rb"\\[u/bf]")  # one maybe (an escaped backslash may come first)
_UNREAD_ESCAPE = re.compile(rb'(?:[^\\]|\\[rnt"\\])*\\([^rnt"\\])', re.DOTALL)


def unread_escape(line: bytes) -> str | None:
    """Why TVM's auto_scheduler reader cannot read the line's strings, or None."""
    if _OTHER_ESCAPE.search(line) is None:
        return None  # the usual line: one quick look (a fifth of four `in` tests' time)
    found = _UNREAD_ESCAPE.match(line)
    if found is None:
        return None
    escape = found.group(1).decode("ascii", "replace")
    return (
        f"auto_scheduler record with the JSON escape \\{escape}, which TVM's reader does not "
        "read (it aborts the whole file's load)"
    )


def scan_ansor_line(line: bytes) -> tuple[AnsorRecord, Measurement] | Rejected | None:
    """The line as an auto_scheduler record and its measurement, or why TVM cannot read it;
    None if it is not one."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not looks_like_ansor(value):
        return None
    if line[:1] == b" ":
        return SKIPPED_BY_ANSOR_READER
    escape = unread_escape(line)
    if escape is not None:
        return Rejected(escape)
    parsed = parse_ansor(value)
    if isinstance(parsed, str):
        return Rejected(parsed)
    checked = check_values(ansor_measurement(parsed))
    return (parsed, checked) if isinstance(checked, Measurement) else checked


class _FastAnsorRecord(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    """An auto_scheduler line parse_ansor accepts, for msgspec; the task stays raw text (each
    distinct task is checked once, see _ansor_task) and the steps are checked in Python."""

    i: tuple[msgspec.Raw, tuple[list[JsonValue], list[list[JsonValue]]]]
    r: tuple[tuple[float, ...], int, float, float]
    v: str


_FAST_ANSOR = msgspec.json.Decoder(_FastAnsorRecord)
# The integers orjson reads as integers (it reads larger ones as floats).
_ORJSON_INTS = (-(1 << 63), 1 << 64)
# Per raw task text: (workload key, target, target host) if parse_ansor accepts it, else None.
_ANSOR_TASKS: dict[bytes, tuple[str, str, str] | None] = {}
_ANSOR_TASKS_KEPT = 4096


def scan_ansor_line_fast(line: bytes) -> tuple[AnsorRecord, Measurement] | Rejected | None:
    """`scan_ansor_line` for the usual auto_scheduler line, or None to let `scan_ansor_line`
    say what is wrong.

    Accepts only what `scan_ansor_line` accepts, with the same record (the tests hold the two
    equal): orjson and parse_ansor's checks cost three quarters of an Ansor line's import.
    """
    if line[:1] == b" " or unread_escape(line) is not None:
        return None
    try:
        fast = _FAST_ANSOR.decode(line)
    except (ValueError, RecursionError):
        return None
    raw_task, (_stages, steps) = fast.i
    if not _ORJSON_INTS[0] <= fast.r[1] < _ORJSON_INTS[1]:
        return None  # orjson reads such an error number as a float: let parse_ansor say so
    task_text = bytes(raw_task)
    task = _ANSOR_TASKS.get(task_text) if task_text in _ANSOR_TASKS else _ansor_task(task_text)
    costs, error_no, all_cost, timestamp = fast.r
    # (msgspec refuses numbers out of a float's range: the costs are finite, as parse_ansor
    # requires.)
    if task is None or not all(step and type(step[0]) is str for step in steps):
        return None
    record = AnsorRecord(
        workload_key=task[0],
        target=task[1],
        target_host=task[2],
        steps=steps,
        costs=costs,
        error_no=error_no,
        all_cost=all_cost,
        timestamp=timestamp,
        version=fast.v,
    )
    try:
        checked = check_values(ansor_measurement(record))
    except orjson.JSONEncodeError:  # steps orjson cannot write (integers past 64 bits)
        return None
    return (record, checked) if isinstance(checked, Measurement) else checked


def _ansor_task(text: bytes) -> tuple[str, str, str] | None:
    try:
        task = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    found = None
    if isinstance(task, list) and task_problem(task) is None:
        try:
            ansor_workload(task[0])
        except AnsorKeyError:
            pass
        else:
            found = (task[0], task[1], task[3] if len(task) > 3 else "")
    if len(_ANSOR_TASKS) >= _ANSOR_TASKS_KEPT:
        _ANSOR_TASKS.clear()
    _ANSOR_TASKS[text] = found
    return found
