"""Record validity: the value checks a schema cannot express, one home for every parser.

The schemas (the pydantic models of `tunelog.recordmodels`, their msgspec mirrors in
`tunelog.recordstructs`, `tunelog.ansor.parse_ansor`) say which fields a line holds and of what
type; what is left is here. `check_values` says why a record is rejected; `checked` is what the
parsers' msgspec paths call with the values they decoded: the record's Measurement when it is
plainly valid (a cached target, every number in range, from comparisons alone), else
`check_values`' verdict. `tests/test_recordvalidity.py` runs one table
of records through both and through both parsers.
"""

from __future__ import annotations

import math
import sys

from tunelog.exceptions import TargetParseError
from tunelog.recordvalues import Measurement, Rejected, measurement_of
from tunelog.targets import parse_target

__all__ = [
    "FLOAT_MAX",
    "INT64_LIMIT",
    "VALID_TARGETS",
    "VALID_TARGETS_KEPT",
    "check_values",
    "checked",
]

# SQLite stores integers in 64 bits; TVM would load a larger config index or error number, but
# no config space or error code is that large, so such a line is rejected, never crashes a store.
INT64_LIMIT = 1 << 63
# Target strings that parsed (bounded: a hostile file must not grow it without end).
VALID_TARGETS: set[str] = set()
VALID_TARGETS_KEPT = 4096
# Comparisons with the largest float are false for infinities and NaN.
FLOAT_MAX = sys.float_info.max
# The lower bound, computed once: `checked` compares with it once per record line.
_INT64_MIN = -INT64_LIMIT


def checked(
    log_version: str,
    target: str,
    task_name: str,
    template_key: str,
    args_json: str,
    config_index: int,
    costs: tuple[float, ...],
    error_no: int,
    all_cost: float,
    timestamp: float,
    tvm_version: str | None,
    mean_cost: float,
    spelling: str | None,
    /,
) -> Measurement | Rejected:
    """The Measurement of a parsed record's values (positional, in `Measurement`'s field order),
    or why it is rejected: `check_values`' verdict, answered from comparisons alone when the
    record is plainly valid (its target parsed before, every number msgspec can hand it out of
    range in range).

    Every AutoTVM parser's msgspec path calls this once per record line, with the values the
    decoder read: checking them before the Measurement exists and building it here (by
    `recordvalues.measurement_of`, a C call) keeps the usual line to one Python frame for both.
    msgspec decodes only finite floats (it refuses 1e999, and JSON has no NaN or infinity), so
    of the floats only the mean, which a sum may overflow, and the costs' signs are compared.
    """
    record = measurement_of(
        (
            log_version,
            target,
            task_name,
            template_key,
            args_json,
            config_index,
            costs,
            error_no,
            all_cost,
            timestamp,
            tvm_version,
            mean_cost,
            spelling,
        )
    )
    if (
        0.0 <= mean_cost <= FLOAT_MAX
        and (len(costs) == 1 or min(costs) >= 0.0)
        and task_name
        and target in VALID_TARGETS
        and _INT64_MIN <= config_index < INT64_LIMIT
        and _INT64_MIN <= error_no < INT64_LIMIT
    ):
        return record
    return check_values(record)


def check_values(record: Measurement) -> Measurement | Rejected:
    """The record, or why it is rejected: the checks a schema cannot express."""
    costs = record.costs
    if not costs:
        return Rejected("empty result costs")
    # A finite mean means no cost is infinite or NaN; then only the sign needs a look.
    if not math.isfinite(record.mean_cost) or min(costs) < 0:
        for cost in costs:
            if not math.isfinite(cost):
                return Rejected(f"non-finite cost {cost!r}")
            if cost < 0:
                return Rejected(f"negative cost {cost!r}")
        return Rejected("mean cost overflows a float")
    if not (math.isfinite(record.all_cost) and math.isfinite(record.timestamp)):
        return Rejected("non-finite all_cost or timestamp")
    if not record.task_name:
        return Rejected("empty task name")
    for name, number in (("config index", record.config_index), ("error number", record.error_no)):
        if not -INT64_LIMIT <= number < INT64_LIMIT:
            return Rejected(f"{name} {number} does not fit in 64 bits")
    try:
        parse_target(record.target)
    except TargetParseError as exc:
        return Rejected(f"bad target: {exc}")
    if len(VALID_TARGETS) < VALID_TARGETS_KEPT:
        VALID_TARGETS.add(record.target)
    return record
