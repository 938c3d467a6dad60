"""MetaSchedule JSONDatabase directories: reading their two files (tvm-reference §9).

Pure (files in, values out; no SQLite). A database is a directory with

* `database_workload.json`: one `["<structural hash>", "<base64 IRModule>"]` per line;
* `database_tuning_record.json`: one `[workload_index, [trace, run_secs, target, args_info]]`
  per line, the index being the 0-based line of the workload file.

TVM recomputes the structural hash on load and ignores the stored one, so structurally equal
modules (equal but for the names of variables, buffers and blocks) are one workload: here a
workload is `tunelog.msmodule.structural_identity` of its module. Records become `Measurement`s with
log version "metaschedule", whose single slot ignores the target (rules.slots.slots_of).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tunelog.errorcodes import MS_NO_SCHEDULE, MS_NOT_MEASURED
from tunelog.exceptions import TargetParseError
from tunelog.linesplit import OverlongLine, split_lines
from tunelog.msfiles import METASCHEDULE_RECORD_FILE, METASCHEDULE_WORKLOAD_FILE
from tunelog.msmodule import ModuleError, decode, structural_identity
from tunelog.mssummary import Summary, summarise, summary_args, summary_text
from tunelog.records import Measurement, Rejected, ScannedLine
from tunelog.selection import (
    METASCHEDULE_FAILED,
    METASCHEDULE_VERSION,
    metaschedule_mean,
    metaschedule_schedules,
    metaschedule_valid,
)
from tunelog.targets import parse_target
from tunelog.versions import METASCHEDULE_TASK

WORKLOAD_FILE = METASCHEDULE_WORKLOAD_FILE
RECORD_FILE = METASCHEDULE_RECORD_FILE
TASK_NAME = METASCHEDULE_TASK


@dataclass(frozen=True, slots=True)
class Workload:
    """One line of the workload file: its identity, the line as written, what it computes."""

    identity: str
    stored_hash: str
    line: bytes
    tvm_version: str | None
    summary: Summary | None
    # Made once per line, not per record: the importer hashes and compares the spelling of
    # every record (store.ownspellings), and a line may be 75 kB.
    args_json: str = field(init=False)
    spelling: str = field(init=False)  # the line as text: each record's own spelling

    def __post_init__(self) -> None:
        # The workload's arguments as stored: its identity, then what the module computes.
        described = [] if self.summary is None else [summary_args(self.summary)]
        object.__setattr__(self, "args_json", orjson.dumps([self.identity, *described]).decode())
        object.__setattr__(self, "spelling", self.line.decode("utf-8", "replace"))


def read_workloads(path: Path) -> list[Workload | str]:
    """Each line of a workload file (or a database directory's default one), as a Workload or
    the reason it cannot be read."""
    if path.is_dir():
        path = path / WORKLOAD_FILE
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


def workload_args(spelling: str) -> str | None:
    """The workload arguments (`Workload.args_json`) a stored spelling (a workload line) is
    filed under, as an import reads that line now; None if the line cannot be read."""
    found = _workload(spelling.encode())
    return found.args_json if isinstance(found, Workload) else None


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
    try:
        graph = decode(value[1])
        identity = structural_identity(graph)
    except ModuleError as exc:
        # TVM's JSONDatabase cannot load it either (invalid base64, no JSON graph): it refuses
        # the whole database, so its records are rejected, each saying so.
        return str(exc)
    try:
        return Workload(identity, value[0], raw, graph.tvm_version, summarise(graph))
    except (RecursionError, OverflowError, TypeError, ValueError):
        # A graph tunelog cannot summarise (hostile values): shown by its identity alone.
        return Workload(identity, value[0], raw, graph.tvm_version, None)


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


class RecordScanner:
    """The line scanner of a records file whose workload file gave `workloads` (`scan_record`),
    noting the workloads its records name: the others have no record, and TVM compiles them
    with no tuned schedule."""

    def __init__(self, workloads: list[Workload | str]) -> None:
        self.workloads = workloads
        self._named: set[str] = set()  # the named workloads' identities (`args_json`)

    def __call__(self, line: bytes) -> ScannedLine:
        found = scan_record(line, self.workloads)
        if type(found) is Measurement:
            self._named.add(found.args_json)
        return found

    def unreadable_workloads(self) -> list[str]:
        """The workload file's lines that cannot be read, as `line N: why`."""
        return [f"line {n}: {w}" for n, w in enumerate(self.workloads, 1) if isinstance(w, str)]

    def unrecorded(self) -> int:
        """How many workloads (one per structural identity) no record read so far names."""
        every = {w.args_json for w in self.workloads if isinstance(w, Workload)}
        return len(every - self._named)

    def unrecorded_names(self) -> list[str]:
        """What each workload no record read so far names computes (`main: 16x16 -> 16x16
        float32`; its workload line's number when tunelog cannot summarise it), once each."""
        names: dict[str, str] = {}
        for number, workload in enumerate(self.workloads, 1):
            if isinstance(workload, Workload) and workload.args_json not in self._named:
                summary = workload.summary
                names.setdefault(
                    workload.args_json,
                    summary_text(summary) if summary is not None else f"workload line {number}",
                )
        return list(names.values())


def record_scanner(workloads: list[Workload | str]) -> RecordScanner:
    """A line scanner for the record file whose workload file gave `workloads`."""
    return RecordScanner(workloads)


def scan_record(line: bytes, workloads: list[Workload | str]) -> ScannedLine:
    """One record line as a Measurement, or why it cannot be used."""
    if not line.strip():
        return Rejected("MetaSchedule record: a blank line, which TVM's JSONDatabase cannot read")
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
    if metaschedule_valid(instructions, list(costs)):
        error_no = 0
    elif metaschedule_schedules(instructions):
        error_no = MS_NOT_MEASURED
    else:
        error_no = MS_NO_SCHEDULE
    shown_target = target_text(target)
    try:
        parse_target(shown_target)
    except TargetParseError as exc:  # no kind TVM could name (`{"kind": ""}`)
        return Rejected(f"MetaSchedule record: its target cannot be read ({exc})")
    try:
        number = _trace_number(trace)
    except TypeError:  # orjson writes 254 levels (no trace nests a tenth of that)
        return Rejected("MetaSchedule record: its trace nests too deep to read (254 levels)")
    return Measurement(
        log_version=METASCHEDULE_VERSION,
        target=shown_target,
        task_name=TASK_NAME,
        template_key=workload.tvm_version or "",  # databases of two TVMs never mix
        args_json=workload.args_json,
        config_index=number,
        costs=costs or (METASCHEDULE_FAILED,),
        error_no=error_no,
        all_cost=0.0,
        timestamp=0.0,
        tvm_version=workload.tvm_version,
        mean_cost=metaschedule_mean(list(costs)),
        spelling=workload.spelling,
    )


def trace_knobs(line: bytes) -> dict[str, tuple[str, object]] | None:
    """A record's sampling decisions as knobs: `SamplePerfectTile(l2)` -> (kind, decision).

    A sampling instruction (SamplePerfectTile, SampleCategorical, SampleComputeLocation, ...) is
    named by its kind and its input random variables (its outputs when it has no inputs), which
    are the same in every trace of one design space. None for a line that is not a record.
    """
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if _record_problem(value) is not None:
        return None
    instructions, decisions = value[1][0]
    decided = {
        d[0]: d[1]
        for d in (decisions if isinstance(decisions, list) else ())
        if isinstance(d, list) and len(d) == 2 and isinstance(d[0], int)
    }
    knobs: dict[str, tuple[str, object]] = {}
    for position, instruction in enumerate(instructions):
        if position not in decided or len(instruction) < 4:
            continue
        kind, inputs, attrs, outputs = instruction[:4]
        variables = inputs if isinstance(inputs, list) and inputs else outputs
        names = (
            ",".join(v for v in variables if isinstance(v, str))
            if isinstance(variables, list)
            else ""
        )
        knobs[f"{kind}({names})"] = (kind, _decided_value(kind, attrs, decided[position]))
    return knobs


def _decided_value(kind: str, attrs: Any, decision: object) -> object:
    """SampleCategorical decides an index into its candidates: the candidate is the value."""
    if kind == "SampleCategorical" and isinstance(attrs, list) and attrs:
        candidates = attrs[0]
        if (
            isinstance(candidates, list)
            and isinstance(decision, int)
            and 0 <= decision < len(candidates)
        ):
            return candidates[decision]
    return decision


def _record_problem(value: Any) -> str | None:
    """Why TVM's JSONDatabase cannot read a decoded record line (it then refuses the whole
    database), or None. JSON's `true` and `false` are numbers to it (1 and 0), as here."""
    if not isinstance(value, list) or len(value) != 2:
        return "not [workload_index, [trace, run_secs, target, args_info]]"
    index, body = value
    if not isinstance(index, int):
        return "workload index is not an integer"
    if not isinstance(body, list) or len(body) != 4:
        return "not [trace, run_secs, target, args_info]"
    trace, run_secs, target = body[0], body[1], body[2]
    if not isinstance(trace, list) or len(trace) != 2 or not isinstance(trace[0], list):
        return "trace is not [instructions, decisions]"
    if not all(_is_instruction(inst) for inst in trace[0]):
        return "a trace instruction is not [kind, inputs, attrs, outputs]"
    if run_secs is not None and not (
        isinstance(run_secs, list) and all(isinstance(x, (int, float)) for x in run_secs)
    ):
        return "run_secs is not a list of numbers"
    return None if target is None else _target_problem(target)


def _is_instruction(inst: Any) -> bool:
    """TVM reads each trace instruction as `[kind, inputs, attrs, outputs]` (decoded JSON:
    exact types, so `type` is asked, the cheaper question for every instruction of every
    record)."""
    return (
        type(inst) is list
        and len(inst) == 4
        and type(inst[0]) is str
        and type(inst[1]) is list
        and type(inst[2]) is list
        and type(inst[3]) is list
    )


def _target_problem(target: Any) -> str | None:
    """Why TVM cannot make a target of a record's target JSON (a string is not one). Its kind
    is not asked: the TVM that wrote the database registered it (a BYOC kind, a fork's own),
    whether or not the TVMs tunelog knows do."""
    if not isinstance(target, dict) or not isinstance(target.get("kind"), str):
        return "target is not a target's JSON object with its kind"
    host = target.get("host")
    return None if host is None or isinstance(host, str) else _target_problem(host)


def _trace_number(trace: Any) -> int:
    """A stable number for a schedule (hash of its trace), as for auto_scheduler steps."""
    digest = hashlib.blake2b(orjson.dumps(trace), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2


def pruned_database(rows: list[tuple[int, bytes, bytes]]) -> tuple[list[bytes], list[bytes]]:
    """The two files of a pruned database from `(workload key, workload line, record line)` rows.

    Each distinct workload line is written once, in the order its first record comes; each
    record's workload index is rewritten to its own line's new place, every other byte of both
    lines kept. A workload may be written as several lines (records measured against modules
    that name things otherwise): TVM makes them one workload again, and replays each record's
    trace against its own line.
    """
    new_index: dict[bytes, int] = {}
    workload_lines: list[bytes] = []
    record_lines: list[bytes] = []
    for _key, workload_line, record_line in rows:
        index = new_index.get(workload_line)
        if index is None:
            index = new_index[workload_line] = len(workload_lines)
            workload_lines.append(workload_line)
        # The index as written (digits, or JSON's true and false, which TVM reads as 1 and 0).
        index_token = _INDEX_TOKEN.match(record_line)
        rest = record_line[index_token.end() :] if index_token else record_line.lstrip()[1:]
        record_lines.append(b"[" + str(index).encode() + rest)
    return workload_lines, record_lines


_INDEX_TOKEN = re.compile(rb"\s*\[\s*(?:-?\d+|true|false)")


def release(version: str) -> str:
    """The release a TVM version belongs to (`0.27.0.post1` -> `0.27`): one database format."""
    return ".".join(version.split(".")[:2])


def mixed_releases(versions: set[str]) -> list[str]:
    """The TVM versions named, sorted, when they span releases no one TVM loads together.

    Empty when they are one release (or unknown): apache-tvm 0.27 cannot read a 0.26 database
    and no release reads another's (tvm-reference §9).
    """
    known = sorted(v for v in versions if v)
    return known if len({release(v) for v in known}) > 1 else []
