"""Parsing one log line: AutoTVM v0.2 / v0.1 records, comments, blanks, and rejections.

Pure: bytes in, a `ParsedLine` out, never an exception. The record models are pydantic models
that mirror the JSON AutoTVM writes (tvm-reference §1), validated straight from the line bytes
(pydantic parses and validates the JSON in one pass, which is the import's hot path). Anything
that is not an AutoTVM record is rejected with a reason a person can act on.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import operator
import re
import sys
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeAlias

import msgspec
import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tunelog.ansor import ANSOR_VERSION, AnsorRecord, looks_like_ansor, parse_ansor
from tunelog.exceptions import TargetParseError
from tunelog.targets import parse_target

JsonValue: TypeAlias = Any
KnobType: TypeAlias = Literal["sp", "re", "an", "ot"]
Knob: TypeAlias = tuple[str, KnobType, JsonValue]

# A failed measurement is written with this cost (MeasureResult for errors).
FAILED_COST = 1e9

# defer_build: the models are built on first use; an import of clean v0.2 lines never
# needs them (the msgspec fast path), which saves a tenth of a second of start-up.
_STRICT = ConfigDict(strict=True, frozen=True, extra="ignore", defer_build=True)


def workload_json(task_name: str, args_json: str) -> str:
    """`[task_name, *args]` as compact JSON (TVM's workload tuple), from canonical args JSON."""
    inner = args_json[1:-1]
    return "[" + orjson.dumps(task_name).decode() + ("," + inner if inner else "") + "]"


def canonical_json(value: Any) -> str:
    """Compact JSON of a decoded value: the canonical form of task arguments."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an integer beyond 64 bits, which Python's json (and TVM) accept
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


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


# Under strict mode a float field takes JSON ints and floats, never strings or booleans.
Number: TypeAlias = float


class _ConfigV02(BaseModel):
    model_config = _STRICT
    index: int
    code_hash: str | None
    entity: list[tuple[str, KnobType, JsonValue]]


class _ConfigV01(BaseModel):
    model_config = _STRICT
    i: int
    t: str = ""
    c: str | None = None
    e: list[tuple[str, KnobType, JsonValue]]


_Result = tuple[list[Number], int, Number, Number]


class TuningRecord(BaseModel):
    """One AutoTVM measurement, whichever log version wrote it.

    Subclasses mirror the two JSON layouts; this base gives the common, normalised view.
    """

    model_config = _STRICT

    @property
    def log_version(self) -> str:
        """`"0.2"` or `"0.1"`."""
        raise NotImplementedError

    @property
    def target(self) -> str:
        """The target string exactly as written."""
        raise NotImplementedError

    @property
    def task_name(self) -> str:
        """The AutoTVM task (template) name, e.g. `conv2d_nchw.cuda`."""
        raise NotImplementedError

    @property
    def template_key(self) -> str:
        """v0.1 template key (`direct`, `winograd`, ...); empty for v0.2."""
        return ""

    @property
    def args(self) -> list[JsonValue]:
        """The task arguments as JSON values."""
        raise NotImplementedError

    @property
    def config_index(self) -> int:
        """Index of the config in the template's config space."""
        raise NotImplementedError

    @property
    def entity(self) -> list[tuple[str, str, JsonValue]]:
        """The knob values: `(name, type, value)` with type sp/re/an/ot."""
        raise NotImplementedError

    @property
    def result(self) -> _Result:
        raise NotImplementedError

    @property
    def tvm_version(self) -> str | None:
        """The TVM version that wrote the line (not necessarily the one that tuned it)."""
        return None

    @property
    def costs(self) -> tuple[float, ...]:
        """Measured run times in seconds (1e9 for a failed measurement)."""
        return tuple(self.result[0])

    @property
    def error_no(self) -> int:
        """AutoTVM MeasureErrorNo: 0 for a valid measurement."""
        return self.result[1]

    @property
    def all_cost(self) -> float:
        """Wall time of the whole measurement (build + run), seconds."""
        return self.result[2]

    @property
    def timestamp(self) -> float:
        """Unix time the measurement was written."""
        return self.result[3]

    @property
    def mean_cost(self) -> float:
        """`np.mean(costs)`, the value AutoTVM ranks by."""
        return numpy_mean(self.result[0])

    @property
    def args_json(self) -> str:
        """Canonical (compact) JSON of the arguments: the workload identity with the task name."""
        return canonical_json(self.args)

    def measurement(self) -> Measurement:
        """The normalised view the store keeps."""
        costs, error_no, all_cost, timestamp = self.result
        return Measurement(
            log_version=self.log_version,
            target=self.target,
            task_name=self.task_name,
            template_key=self.template_key,
            args_json=self.args_json,
            config_index=self.config_index,
            costs=tuple(costs),
            error_no=error_no,
            all_cost=all_cost,
            timestamp=timestamp,
            tvm_version=self.tvm_version,
            mean_cost=numpy_mean(costs),
        )

    @property
    def workload_json(self) -> str:
        """`[task_name, *args]` as compact JSON, the form golden files and TVM use."""
        return workload_json(self.task_name, self.args_json)


class RecordV02(TuningRecord):
    """AutoTVM v0.2 layout: `{"input", "config", "result", "version", "tvm_version"}`."""

    input: tuple[str, str, list[JsonValue], dict[str, JsonValue]]
    config: _ConfigV02
    result_: _Result = Field(alias="result")
    version: Number | None = None
    tvm_version_: str | None = Field(default=None, alias="tvm_version")

    @property
    def log_version(self) -> str:
        return "0.2"

    @property
    def target(self) -> str:
        return self.input[0]

    @property
    def task_name(self) -> str:
        return self.input[1]

    @property
    def args(self) -> list[JsonValue]:
        return self.input[2]

    @property
    def config_index(self) -> int:
        return self.config.index

    @property
    def entity(self) -> list[tuple[str, str, JsonValue]]:
        return list(self.config.entity)

    @property
    def result(self) -> _Result:
        return self.result_

    @property
    def tvm_version(self) -> str | None:
        return self.tvm_version_


class RecordV01(TuningRecord):
    """AutoTVM v0.1 layout: `{"i": [target, task, args, kwargs, workload, config], "r", "v"}`."""

    i: tuple[str, str, list[JsonValue], dict[str, JsonValue], JsonValue, _ConfigV01]
    r: _Result
    v: Number

    @property
    def log_version(self) -> str:
        return "0.1"

    @property
    def target(self) -> str:
        return self.i[0]

    @property
    def task_name(self) -> str:
        return self.i[1]

    @property
    def template_key(self) -> str:
        return self.i[5].t

    @property
    def args(self) -> list[JsonValue]:
        return self.i[2]

    @property
    def config_index(self) -> int:
        return self.i[5].i

    @property
    def entity(self) -> list[tuple[str, str, JsonValue]]:
        return list(self.i[5].e)

    @property
    def result(self) -> _Result:
        return self.r


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


ParsedLine: TypeAlias = TuningRecord | AnsorRecord | Comment | Blank | Rejected
ScannedLine: TypeAlias = Measurement | Comment | Blank | Rejected

COMMENT = Comment()
BLANK = Blank()

UTF8_BOM = b"\xef\xbb\xbf"
_BASE64_FIELD = re.compile(rb"^[A-Za-z0-9+/]{8,}={0,2}$")
_JSON_COLUMN = re.compile(r"column (\d+)")


def strip_line(raw: bytes) -> bytes:
    """The line's content: without a UTF-8 BOM and without the line end (LF, CRLF or CR)."""
    if raw.startswith(UTF8_BOM):
        raw = raw[3:]
    return raw.rstrip(b"\r\n")


def parse_line(raw: bytes) -> ParsedLine:
    """Classify one line of a log (line end and BOM allowed); records come back as models."""
    line = strip_line(raw)
    stripped = line.strip()
    if not stripped:
        return BLANK
    if stripped.startswith(b"#"):
        return COMMENT
    return _validate(line)


def scan_line(raw: bytes) -> ScannedLine:
    """Like `parse_line`, but records come back as `Measurement`s: the import's hot path.

    Well-formed v0.2 lines are decoded by msgspec against `_FastRecordV02`, a mirror of the
    `RecordV02` model (the tests hold the two to the same verdicts); every other line goes
    through the pydantic models, which say precisely what is wrong.
    """
    return scan_content(strip_line(raw))


def scan_content(line: bytes) -> ScannedLine:
    """`scan_line` for a line already stripped of its BOM and line end (see `strip_line`)."""
    if line.count(b"[") + line.count(b"{") > MAX_NESTING and nesting_depth(line) > MAX_NESTING:
        return _TOO_DEEP
    try:
        fast = _FAST_V02.decode(line)
    except (ValueError, RecursionError):  # msgspec.DecodeError, and UnicodeDecodeError in strings
        return _scan_v01(line)
    target, task_name, raw_args, _kwargs = fast.input
    raw_text = bytes(raw_args)
    args_json = _ARGS_JSON.get(raw_text) or _args_json(raw_text)
    if args_json is None:  # not a list: let the models say what is wrong
        return _fallback(line)
    costs, error_no, all_cost, timestamp = fast.result
    mean = costs[0] if len(costs) == 1 else numpy_mean(costs)
    record: Measurement = _new_tuple(
        Measurement,  # what Measurement(...) does, without its Python-level __new__
        (
            "0.2",
            target,
            task_name,
            "",
            args_json,
            fast.config.index,
            costs,
            error_no,
            all_cost,
            timestamp,
            fast.tvm_version,
            mean,
            None,
        ),
    )
    # The checks of `_check_values` for the usual record, inline (comparisons with the
    # largest float are false for infinities and NaN).
    if (
        0.0 <= mean <= _FLOAT_MAX
        and (len(costs) == 1 or min(costs) >= 0.0)
        and -_FLOAT_MAX <= all_cost <= _FLOAT_MAX
        and -_FLOAT_MAX <= timestamp <= _FLOAT_MAX
        and task_name
        and target in _VALID_TARGETS
        and -_INT64_LIMIT <= fast.config.index < _INT64_LIMIT
        and -_INT64_LIMIT <= error_no < _INT64_LIMIT
    ):
        return record
    return _check_values(record)


def _scan_v01(line: bytes) -> ScannedLine:
    """The fast path for v0.1 records (about half the lines of old logs); others fall back."""
    if b'"v"' not in line or b'"input"' in line:  # the layout `_validate` would try first
        return _fallback(line)
    try:
        fast = _FAST_V01.decode(line)
    except (ValueError, RecursionError):
        return _fallback(line)
    if fast.v != 0.1:
        return _fallback(line)
    target, task_name, raw_args, _kwargs, _workload, config = fast.i
    raw_text = bytes(raw_args)
    args_json = _ARGS_JSON.get(raw_text) or _args_json(raw_text)
    if args_json is None:
        return _fallback(line)
    costs, error_no, all_cost, timestamp = fast.r
    record: Measurement = _new_tuple(
        Measurement,
        (
            "0.1",
            target,
            task_name,
            config.t,
            args_json,
            config.i,
            costs,
            error_no,
            all_cost,
            timestamp,
            None,
            numpy_mean(costs),
            None,
        ),
    )
    return _check_values(record)


def _fallback(line: bytes) -> ScannedLine:
    # Blank lines and comments are not JSON either: they are classified here, off the hot path.
    validated = parse_line(line)
    if isinstance(validated, TuningRecord):
        return validated.measurement()
    if isinstance(validated, AnsorRecord):
        return ansor_measurement(validated)
    return validated


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


def _ansor(line: bytes) -> ParsedLine | None:
    """The line as an auto_scheduler record (or why TVM cannot read it); None if it is not one."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not looks_like_ansor(value):
        return None
    if line[:1] == b" ":
        return SKIPPED_BY_ANSOR_READER
    parsed = parse_ansor(value)
    if isinstance(parsed, str):
        return Rejected(parsed)
    checked = _check_values(ansor_measurement(parsed))
    return parsed if isinstance(checked, Measurement) else checked


# Canonical JSON by raw argument text: the lines of one workload repeat the same text, so
# decoding and re-encoding it once per workload instead of once per line saves a fifth of the
# parse. Bounded, so that a file of distinct arguments cannot grow it without end.
_ARGS_JSON: dict[bytes, str] = {}
_ARGS_JSON_KEPT = 4096


def _args_json(raw: bytes) -> str | None:
    """Canonical JSON of raw argument text not yet cached, or None if not a valid list."""
    try:
        value = msgspec.json.decode(raw)
    except (ValueError, RecursionError):  # raw text skips UTF-8 checks inside its strings
        return None
    if not isinstance(value, list):
        return None
    canonical = canonical_json(value)
    if len(_ARGS_JSON) >= _ARGS_JSON_KEPT:
        _ARGS_JSON.clear()
    _ARGS_JSON[raw] = canonical
    return canonical


# Lists and objects nested deeper than this are rejected. AutoTVM records nest 5 levels deep
# (record, input, arguments, tensor, shape); the parsers part ways far above that (pydantic
# refuses ~200 levels, msgspec ~1000, orjson cannot write 255, Python's json and TVM's loader
# hit the recursion limit near 1000), so one limit well below all of them keeps every reader
# of a stored line in agreement.
MAX_NESTING = 100
_TOO_DEEP = Rejected(f"lists or objects nested more than {MAX_NESTING} levels deep")
# Bracket text of a line without its strings, and each bracket's step in depth.
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting_depth(line: bytes) -> int:
    """How deep the line's lists and objects nest (brackets inside JSON strings ignored)."""
    brackets = _JSON_STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


_new_tuple: Any = tuple.__new__
_FLOAT_MAX = sys.float_info.max
# SQLite stores integers in 64 bits; TVM would load a larger config index or error number, but
# no config space or error code is that large, so such a line is rejected, never crashes a store.
_INT64_LIMIT = 1 << 63
# Target strings that parsed (bounded: a hostile file must not grow it without end).
_VALID_TARGETS: set[str] = set()
_VALID_TARGETS_KEPT = 4096


class _FastConfigV02(msgspec.Struct, gc=False):
    index: int
    code_hash: str | None
    entity: list[tuple[str, KnobType, JsonValue]]


class _FastRecordV02(msgspec.Struct, gc=False):
    """RecordV02's schema for msgspec: same fields, same strictness (ints pass as floats)."""

    # The arguments stay raw text (still checked to be JSON): see _args_json.
    input: tuple[str, str, msgspec.Raw, dict[str, JsonValue]]
    config: _FastConfigV02
    result: tuple[tuple[float, ...], int, float, float]
    version: float | None = None
    tvm_version: str | None = None


_FAST_V02 = msgspec.json.Decoder(_FastRecordV02)


class _FastConfigV01(msgspec.Struct, gc=False):
    i: int
    e: list[tuple[str, KnobType, JsonValue]]
    t: str = ""
    c: str | None = None


class _FastRecordV01(msgspec.Struct, gc=False):
    """RecordV01's schema for msgspec (see _FastRecordV02)."""

    i: tuple[str, str, msgspec.Raw, dict[str, JsonValue], JsonValue, _FastConfigV01]
    r: tuple[tuple[float, ...], int, float, float]
    v: float


_FAST_V01 = msgspec.json.Decoder(_FastRecordV01)


def _validate(line: bytes) -> ParsedLine:
    if line.count(b"[") + line.count(b"{") > MAX_NESTING and nesting_depth(line) > MAX_NESTING:
        return _TOO_DEEP
    first = RecordV01 if b'"v"' in line and b'"input"' not in line else RecordV02
    if first is RecordV01 and b'"v0.' in line:  # auto_scheduler writes "v": "v0.6"
        ansor = _ansor(line)
        if ansor is not None:
            return ansor
    try:
        record: TuningRecord = first.model_validate_json(line)
    except ValidationError as exc:
        return _explain_rejection(line, first, exc)
    except (ValueError, RecursionError) as exc:  # pragma: no cover - defensive
        return Rejected(f"unreadable line ({type(exc).__name__})")
    if isinstance(record, RecordV01) and record.v != 0.1:
        return Rejected(f"unknown log version {record.v!r} (AutoTVM writes 0.1 or 0.2)")
    checked = _check_values(record.measurement())
    return record if isinstance(checked, Measurement) else checked


# Quote characters a web page or word processor substitutes for ASCII `"`.
_TYPOGRAPHIC_QUOTES = str.maketrans({c: '"' for c in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"})
_DECODER = json.JSONDecoder()


def repair_line(raw: bytes) -> list[bytes]:
    """Recover the records of a line pasted from a web page, or [] when nothing is recoverable.

    Undoes the two things forums do to AutoTVM logs: typographic quotes instead of `"`, and
    several records run together on one line. Each piece is returned as the text of one record
    (AutoTVM's strings never contain quotes, so replacing them cannot change a value).
    """
    try:
        text = strip_line(raw).decode("utf-8")
    except UnicodeDecodeError:
        return []
    text = text.translate(_TYPOGRAPHIC_QUOTES)
    pieces: list[bytes] = []
    position = 0
    while position < len(text):
        while position < len(text) and text[position] in " \t,;":
            position += 1
        if position >= len(text):
            break
        try:
            _, end = _DECODER.raw_decode(text, position)
        except ValueError:
            return []
        pieces.append(text[position:end].encode("utf-8"))
        position = end
    return pieces


def _check_values(record: Measurement) -> ScannedLine:
    """Semantic checks the schema cannot express."""
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
        if not -_INT64_LIMIT <= number < _INT64_LIMIT:
            return Rejected(f"{name} {number} does not fit in 64 bits")
    try:
        parse_target(record.target)
    except TargetParseError as exc:
        return Rejected(f"bad target: {exc}")
    if len(_VALID_TARGETS) < _VALID_TARGETS_KEPT:
        _VALID_TARGETS.add(record.target)
    return record


def _explain_rejection(line: bytes, tried: type[TuningRecord], exc: ValidationError) -> Rejected:
    """Turn a failed validation into the most specific reason we can give."""
    errors = exc.errors(include_url=False, include_context=True, include_input=False)
    if errors and errors[0]["type"] == "json_invalid":
        return Rejected(_non_json_reason(line, str(errors[0].get("ctx", {}).get("error", ""))))
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        # pydantic accepted the JSON but orjson did not (e.g. NaN, huge integers).
        return Rejected(_pydantic_reason(errors))
    fmt = _foreign_format(value)
    if fmt is not None:
        return Rejected(fmt)
    if isinstance(value, dict) and tried is RecordV02 and "v" in value and "i" in value:
        try:
            return _check_values_or_reject(RecordV01.model_validate(value))
        except ValidationError as exc01:
            return Rejected(_pydantic_reason(exc01.errors(include_url=False)))
    if isinstance(value, dict) and tried is RecordV01 and "input" in value:
        try:
            return _check_values_or_reject(RecordV02.model_validate(value))
        except ValidationError as exc02:
            return Rejected(_pydantic_reason(exc02.errors(include_url=False)))
    if not isinstance(value, dict):
        return Rejected(f"JSON {type(value).__name__} is not an AutoTVM record")
    if "input" not in value and "i" not in value:
        return Rejected("JSON object is not an AutoTVM record (no input/i field)")
    return Rejected(_pydantic_reason(errors))


def _check_values_or_reject(record: TuningRecord) -> Rejected:
    # Reached only when the fast path picked the wrong layout; re-check and report.
    checked = _check_values(record.measurement())
    if isinstance(checked, Rejected):
        return checked
    return Rejected("record layout mixes v0.1 and v0.2 fields")


def _foreign_format(value: JsonValue) -> str | None:
    """Name a known non-AutoTVM format, or None."""
    if isinstance(value, dict):
        version = value.get("v")
        i = value.get("i")
        if isinstance(version, str) and isinstance(i, list) and i and isinstance(i[0], list):
            # Reached only when the line is not plain JSON (see _ansor).
            return f"auto_scheduler record {version} that is not plain JSON"
        return None
    if isinstance(value, list):
        if len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], list):
            return "MetaSchedule tuning record (not supported yet)"
        if (
            len(value) == 2
            and isinstance(value[0], str)
            and value[0].isdigit()
            and isinstance(value[1], str)
        ):
            return "MetaSchedule workload entry (not supported yet)"
    return None


def _non_json_reason(line: bytes, detail: str) -> str:
    if "“".encode() in line or "”".encode() in line:
        return "typographic quotes (pasted from a web page?): use --repair"
    if line.count(b'{"input"') + line.count(b'{"i"') > 1 or b"} {" in line:
        return "several records run together on one line: use --repair"
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
    if not line.lstrip().startswith((b"{", b"[")):
        return "not JSON (text line)"
    match = _JSON_COLUMN.search(detail)
    if match:
        return f"invalid JSON at column {match.group(1)}"
    return f"invalid JSON ({detail})" if detail else "invalid JSON"


def _loc(loc: tuple[str | int, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts)


def _pydantic_reason(errors: Any) -> str:
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
