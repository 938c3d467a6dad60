"""MetaSchedule JSONDatabase directories: reading their two files (tvm-reference §9).

Pure (files in, values out; no SQLite). A database is a directory with

* `database_workload.json`: one `["<structural hash>", "<base64 IRModule>"]` per line;
* `database_tuning_record.json`: one `[workload_index, [trace, run_secs, target, args_info]]`
  per line, the index being the 0-based line of the workload file.

TVM recomputes the structural hash on load and ignores the stored one, so equal modules are one
workload: here a workload is the SHA-256 of its module text. Records become `Measurement`s with
log version "metaschedule", whose single slot ignores the target (selection.slots_of).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tunelog.discovery import METASCHEDULE_RECORD_FILE, METASCHEDULE_WORKLOAD_FILE
from tunelog.linesplit import OverlongLine, split_lines
from tunelog.records import Measurement, Rejected, ScannedLine
from tunelog.selection import (
    METASCHEDULE_FAILED,
    METASCHEDULE_VERSION,
    metaschedule_mean,
    metaschedule_valid,
)

WORKLOAD_FILE = METASCHEDULE_WORKLOAD_FILE
RECORD_FILE = METASCHEDULE_RECORD_FILE
TASK_NAME = "metaschedule"
# error_no of a record MetaSchedule does not count (no trace, or no run time but 1e10).
INVALID_ERROR_NO = 8


def is_database(path: Path) -> bool:
    """True for a directory holding a MetaSchedule tuning-record file."""
    return path.is_dir() and (path / RECORD_FILE).is_file()


@dataclass(frozen=True, slots=True)
class Workload:
    """One line of the workload file: its identity and the line as written."""

    identity: str
    stored_hash: str
    line: bytes


def read_workloads(directory: Path) -> list[Workload | str]:
    """Each line of the workload file, as a Workload or the reason it cannot be read."""
    path = directory / WORKLOAD_FILE
    if not path.is_file():
        return []
    found: list[Workload | str] = []
    with open(path, "rb") as file:
        # Line by line, as the records' file: a line past the cap is never held whole.
        for raw in split_lines(file.read):
            if isinstance(raw, OverlongLine):
                found.append(raw.reason)
            else:
                found.append(_workload(raw.rstrip(b"\r\n")))
    return found


def _workload(raw: bytes) -> Workload | str:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return "invalid JSON"
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], str)
        or not isinstance(value[1], str)
    ):
        return 'not ["<hash>", "<base64 module>"]'
    module = value[1].encode()
    return Workload(hashlib.sha256(module).hexdigest(), value[0], raw)


def target_text(target: object) -> str:
    """A target string for a MetaSchedule target dict: kind, keys and the scalar attributes.

    For display and grouping only: MetaSchedule's query ignores the target.
    """
    if not isinstance(target, dict) or not isinstance(target.get("kind"), str):
        return "unknown"
    parts = [target["kind"]]
    keys = target.get("keys")
    if isinstance(keys, list) and keys and all(isinstance(k, str) for k in keys):
        parts.append("-keys=" + ",".join(keys))
    for name, value in sorted(target.items()):
        if name in ("kind", "keys", "host", "tag") or isinstance(value, (dict, list)):
            continue
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if text and " " not in text and " " not in name:
            parts.append(f"-{name}={text}")
    return " ".join(parts)


def record_scanner(workloads: list[Workload | str]) -> Callable[[bytes], ScannedLine]:
    """A line scanner for the record file whose workload file gave `workloads`."""

    def scan(line: bytes) -> ScannedLine:
        return scan_record(line, workloads)

    return scan


def scan_record(line: bytes, workloads: list[Workload | str]) -> ScannedLine:
    """One record line as a Measurement, or why it cannot be used."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return Rejected("MetaSchedule record: invalid JSON")
    problem = _record_problem(value)
    if problem is not None:
        return Rejected(f"MetaSchedule record: {problem}")
    index, (trace, run_secs, target, _args_info) = value
    if not workloads:
        return Rejected(f"MetaSchedule record: no {WORKLOAD_FILE} beside it, workload unknown")
    if not 0 <= index < len(workloads):
        return Rejected(f"MetaSchedule record: workload {index} is not in {WORKLOAD_FILE}")
    workload = workloads[index]
    if isinstance(workload, str):
        return Rejected(f"MetaSchedule record: workload line {index + 1} unreadable ({workload})")
    instructions = [inst[0] for inst in trace[0]]
    costs = tuple(float(x) for x in run_secs or [])
    valid = metaschedule_valid(instructions, list(costs))
    return Measurement(
        log_version=METASCHEDULE_VERSION,
        target=target_text(target),
        task_name=TASK_NAME,
        template_key="",
        args_json=orjson.dumps([workload.identity]).decode(),
        config_index=_trace_number(trace),
        costs=costs or (METASCHEDULE_FAILED,),
        error_no=0 if valid else INVALID_ERROR_NO,
        all_cost=0.0,
        timestamp=0.0,
        tvm_version=None,
        mean_cost=metaschedule_mean(list(costs)),
        spelling=workload.line.decode("utf-8", "replace"),
    )


def _record_problem(value: Any) -> str | None:
    if not isinstance(value, list) or len(value) != 2:
        return "not [workload_index, [trace, run_secs, target, args_info]]"
    index, body = value
    if not isinstance(index, int) or isinstance(index, bool):
        return "workload index is not an integer"
    if not isinstance(body, list) or len(body) != 4:
        return "not [trace, run_secs, target, args_info]"
    trace, run_secs = body[0], body[1]
    if not isinstance(trace, list) or len(trace) != 2 or not isinstance(trace[0], list):
        return "trace is not [instructions, decisions]"
    if not all(isinstance(inst, list) and inst and isinstance(inst[0], str) for inst in trace[0]):
        return "a trace instruction is not a list starting with its kind"
    if run_secs is not None and not (
        isinstance(run_secs, list)
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in run_secs)
    ):
        return "run_secs is not a list of numbers"
    return None


def _trace_number(trace: Any) -> int:
    """A stable number for a schedule (hash of its trace), as for auto_scheduler steps."""
    digest = hashlib.blake2b(orjson.dumps(trace), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2


def pruned_database(
    winners: list[tuple[bytes, bytes]],
) -> tuple[list[bytes], list[bytes]]:
    """The files of a pruned database: `(workload line, record line)` per workload, in order.

    Each record's workload index is rewritten to the line its workload takes in the new file;
    every other byte of both lines is kept.
    """
    workload_lines: list[bytes] = []
    record_lines: list[bytes] = []
    for new_index, (workload_line, record_line) in enumerate(winners):
        workload_lines.append(workload_line)
        rest = record_line.lstrip()[1:].lstrip()  # after "["
        digits = len(rest) - len(rest.lstrip(b"-0123456789"))
        record_lines.append(b"[" + str(new_index).encode() + rest[digits:])
    return workload_lines, record_lines
