"""What each field of an AutoTVM record means (tvm-reference §1, §6): for `tunelog explain`.

Pure. `FIELDS` names the v0.2 fields in record order with their meaning; `explain_record`
annotates one parsed record's values (v0.1 records name the same values differently).
"""

from __future__ import annotations

import datetime
import json
import math
from typing import NamedTuple

from tunelog.errorcodes import BUILD_TIMEOUT, RUN_TIMEOUT, error_name
from tunelog.recordmodels import TuningRecord
from tunelog.targets import parse_target
from tunelog.versions import V01

FAILED_COST = 1e9  # what AutoTVM writes as the cost of a failed measurement

FIELDS: dict[str, str] = {
    "target": "input[0]: the target string the measurement was made for; its keys and -model "
    "decide which compile targets' queries it can answer (-mcpu and others do not)",
    "task": "input[1]: the tuning task (template) name, e.g. conv2d_NCHWc.x86; with the "
    "arguments it is the workload TVM looks records up by",
    "args": "input[2]: the task's arguments (tensor shapes and dtypes, strides, padding, "
    "dilation, layouts, out dtype), exactly as the template was called",
    "config": "config.index and config.entity: the config's index in the template's space "
    "and its knob values (sp split, re reorder, an annotate, ot other)",
    "cost": "result[0], `costs`: seconds per run of the kernel, one number per repeat; their "
    "mean is what AutoTVM ranks configs by and apply_history_best picks the lowest of. A failed "
    "measurement writes [1000000000.0]",
    "error_no": "result[1]: the MeasureErrorNo, 0 when the measurement is valid; any other "
    "value means the config failed and its costs are meaningless (tunelog explain 0-8)",
    "all_cost": "result[2]: wall time of the whole measurement (build, upload, run, "
    "overhead) in seconds; never used to rank configs. Timeouts often write the timeout here "
    "(e.g. 10)",
    "timestamp": "result[3]: Unix time the measurement finished; says when it was tuned, not "
    "the order of trials (a batch is written at once)",
    "version": "the log format: 0.2 (TVM >= 0.7); 0.1 records are skipped by TVM >= 0.7",
    "tvm_version": "the TVM version that wrote the line, not necessarily the one that tuned "
    "it (TopHub's converted files say 0.7.dev0 on 2018 timestamps)",
}

_ALIASES = {
    "costs": "cost",
    "result": "cost",
    "input": "target",
    "task_name": "task",
    "template": "task",
    "arguments": "args",
    "index": "config",
    "entity": "config",
    "knobs": "config",
    "errno": "error_no",
    "error": "error_no",
    "allcost": "all_cost",
    "time": "timestamp",
    "v": "version",
}


class FieldLine(NamedTuple):
    """One field of a record: its name, its value as text, and what the value means."""

    field: str
    value: str
    meaning: str


def field_name(text: str) -> str | None:
    """The field `text` names (`all_cost`, `all-cost`, `costs`, ...), or None."""
    key = text.strip().lower().replace("-", "_")
    if key in FIELDS:
        return key
    return _ALIASES.get(key.replace("_", "")) or _ALIASES.get(key)


def _seconds(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    if value >= 1:
        return f"{value:.3g} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} us"


def _json(value: object) -> str:
    return json.dumps(value, separators=(", ", ": "), allow_nan=True)


def _written_result(line: str | None) -> list[str] | None:
    """The line's result values (costs, error number, all_cost, timestamp) as JSON text, as
    written; None when the line is not one object with a four-value result (v0.2's `result`,
    v0.1's `r`)."""
    try:
        item = json.loads(line) if line is not None else None
    except (ValueError, RecursionError):
        return None
    result = item.get("result", item.get("r")) if isinstance(item, dict) else None
    if not isinstance(result, list) or len(result) != 4:
        return None
    return [_json(value) for value in result]


def _when(timestamp: float) -> str:
    try:
        moment = datetime.datetime.fromtimestamp(timestamp, tz=datetime.UTC)
    except (OverflowError, OSError, ValueError):
        return "not a valid time"
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _all_cost_note(record: TuningRecord) -> str:
    text = _seconds(record.all_cost)
    if record.error_no in (BUILD_TIMEOUT, RUN_TIMEOUT):
        return f"{text}: for a timeout, AutoTVM writes the timeout in effect here"
    return f"{text} for the whole measurement (build + run + overhead); not ranked"


def explain_record(record: TuningRecord, line: str | None = None) -> list[FieldLine]:
    """Each field of `record` with its value and what that value means here; with the `line`
    it was read from, the measured values as that line writes them (`10`, not `10.0`)."""
    written = _written_result(line)
    target = parse_target(record.target)
    costs = record.costs
    failed = record.error_no != 0
    cost_note = (
        "a failed measurement: the cost is a placeholder"
        if failed
        else f"mean {_seconds(record.mean_cost)} over {len(costs)} run(s): the number ranked"
    )
    entity = " ".join(f"{name}={_json(value)}" for name, _, value in record.entity)
    lines = [
        FieldLine(
            "target",
            record.target,
            f"keys {','.join(target.keys) or '(none)'}, model {target.model}: answers queries "
            "of targets sharing a key or the model",
        ),
        FieldLine("task", record.task_name, "the template, part of the workload"),
        FieldLine("args", _json(record.args), "the template's call: part of the workload"),
        FieldLine("config", f"index {record.config_index}: {entity}", "the config measured"),
        FieldLine("cost", written[0] if written else _json(list(costs)), cost_note),
        FieldLine(
            "error_no",
            str(record.error_no),
            f"{error_name(record.error_no)}: "
            + ("never chosen by apply_history_best" if failed else "a valid measurement"),
        ),
        FieldLine(
            "all_cost", written[2] if written else str(record.all_cost), _all_cost_note(record)
        ),
        FieldLine(
            "timestamp", written[3] if written else str(record.timestamp), _when(record.timestamp)
        ),
        FieldLine(
            "version",
            record.log_version,
            "skipped by TVM >= 0.7" if record.log_version == V01 else "read by TVM >= 0.7",
        ),
    ]
    if record.tvm_version is not None:
        lines.append(FieldLine("tvm_version", record.tvm_version, "the TVM that wrote the line"))
    return lines
