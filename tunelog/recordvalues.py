"""A record's values, whatever parser read it: the normalised `Measurement` and its one
constructor for the paths that build one per line (`measurement_of`, fed a tuple of the
values; `make_measurement`, the same with positional arguments), the kinds of
line that are not records (the value checks a schema cannot express:
`tunelog.rules.recordvalidity`; canonical JSON and the workload identity:
`tunelog.rules.workloadidentity`).

Pure and below both record parsers (`tunelog.records` with the msgspec structs of
`tunelog.recordstructs`, and `tunelog.recordmodels`, the pydantic models), which share these.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeAlias

import orjson

from tunelog.rules.workloadidentity import workload_json

JsonValue: TypeAlias = Any
KnobType: TypeAlias = Literal["sp", "re", "an", "ot"]
Knob: TypeAlias = tuple[str, KnobType, JsonValue]


def numpy_mean(values: tuple[float, ...] | list[float]) -> float:
    """Mean exactly as `numpy.mean` computes it for a float64 vector.

    AutoTVM compares `np.mean(costs)` with strict `>`, so the last bit matters for ties:
    numpy sums with 8-way unrolled pairwise summation, which differs from `sum()` from
    8 values on.
    """
    n = len(values)
    if n == 1:
        return float(values[0])
    if n == 0:
        return math.nan
    if n < 8:  # numpy's plain loop from 0.0; reduce runs it in C (sum() compensates on 3.12+)
        return float(functools.reduce(operator.add, values, 0.0)) / n
    return _pairwise_sum(values, 0, n) / n


def _pairwise_sum(values: tuple[float, ...] | list[float], start: int, n: int) -> float:
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    if n <= 128:
        r = [float(values[start + j]) for j in range(8)]
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += values[start + i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            total += values[start + i]
            i += 1
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_sum(values, start, half) + _pairwise_sum(values, start + half, n - half)


@dataclass(frozen=True, slots=True)
class Comment:
    """A `#` line (TopHub section headers, notes)."""


@dataclass(frozen=True, slots=True)
class Blank:
    """An empty or whitespace-only line."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """A line that is not an importable AutoTVM record, and why."""

    reason: str


class Measurement(NamedTuple):
    """The normalised view of one validated record: what the store keeps and ranks.

    Only scalars (the arguments as canonical JSON), so millions can stream through an import
    without giving the garbage collector anything to traverse; a NamedTuple because it is
    built once per line (a frozen dataclass costs several times more). Knob values stay in
    the line.
    """

    log_version: str
    target: str
    task_name: str
    template_key: str
    args_json: str
    config_index: int
    costs: tuple[float, ...]
    error_no: int
    all_cost: float
    timestamp: float
    tvm_version: str | None
    mean_cost: float
    # How the log spells the workload when its identity normalises it (auto_scheduler's
    # workload key); None for AutoTVM, whose task name and args are the spelling.
    spelling: str | None = None

    @property
    def args(self) -> list[JsonValue]:
        """The task arguments as JSON values."""
        value: list[JsonValue] = orjson.loads(self.args_json)
        return value

    @property
    def workload_json(self) -> str:
        """`[task_name, *args]` as compact JSON, the form golden files and TVM use."""
        return workload_json(self.task_name, self.args_json)


# The one constructor of a Measurement from its values, in field order, as one tuple:
# `tuple.__new__(Measurement, values)`, the tuple NamedTuple's `__new__` builds, without that
# Python-level `__new__` (a C call: the parsers build one per line, see
# `rules.recordvalidity.checked`). `tests/test_records.py` holds it equal to `Measurement(...)`.
measurement_of: Callable[[tuple[Any, ...]], Measurement] = functools.partial(
    tuple.__new__, Measurement
)


def make_measurement(
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
) -> Measurement:
    """`Measurement(...)` for the paths that build one per stored record (a merge, a removal's
    replay): `measurement_of` its arguments, positional in `Measurement`'s field order (callers
    name each in a comment; thirteen keyword arguments cost about 2 % of an import's
    instructions). `tests/test_records.py` holds the constructors equal.
    """
    return measurement_of(
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


def stored_measurement(
    identity: tuple[str, str, str, str, str],
    *,
    config_index: int,
    error_no: int,
    all_cost: float,
    timestamp: float,
    mean_cost: float,
    spelling: str | None,
) -> Measurement:
    """A record read back from a store, as a merge or a removal's replay hands it on.

    `identity` is its (target, workload) in `IDENTITY_FIELDS` order (`rules.workloadidentity`);
    the costs and the TVM version are not stored (the import's writer reads the mean).
    """
    log_version, target, task_name, template_key, args_json = identity
    return make_measurement(
        log_version,
        target,
        task_name,
        template_key,
        args_json,
        config_index,
        (),  # costs: not stored
        error_no,
        all_cost,
        timestamp,
        None,  # tvm_version: not stored
        mean_cost,
        spelling,
    )


# What a pasted line's reason ends with; an import under --repair says instead that it tried.
REPAIR_HINT = ": use --repair"
REPAIR_TRIED = ": --repair recovered no record from it"


def tried_repair(reason: str) -> str:
    """A rejected line's reason as an import under --repair gives it: not advising --repair."""
    return (
        reason.removesuffix(REPAIR_HINT) + REPAIR_TRIED if reason.endswith(REPAIR_HINT) else reason
    )


_BASE64_FIELD = re.compile(rb"^[A-Za-z0-9+/]{8,}={0,2}$")


def non_json_shape(line: bytes) -> str | None:
    """What a line that is not JSON looks like, from its bytes alone; None for a line that
    starts like JSON and shows nothing else (the parser's error then says where it breaks).
    """
    if line.lstrip().startswith(b"{") and (
        "\u201c".encode() in line or "\u201d".encode() in line
    ):  # a record as a web page shows it; prose with such quotes is no record to repair
        return "typographic quotes (pasted from a web page?)" + REPAIR_HINT
    if line.count(b'{"input"') + line.count(b'{"i"') > 1 or b"} {" in line:
        return "several records run together on one line" + REPAIR_HINT
    if b"\t" in line:
        fields = line.split(b"\t")
        if len(fields) >= 2 and all(_BASE64_FIELD.match(f.strip()) for f in fields if f.strip()):
            return "pickle-protocol record (never unpickled)"
        return "tab-separated text, not a JSON record"
    if b"\x00" in line:
        return "NUL byte in line (binary data?)"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"invalid UTF-8 at byte {exc.start + 1}"
    # Python's whitespace here, not JSON's: `\x0b{...}` has always been "invalid JSON at
    # column 1" (a None here leaves the reason to the parser's error).
    if not line.lstrip().startswith((b"{", b"[")):
        return "not JSON (text line)"
    return None
