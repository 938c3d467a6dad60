"""The pydantic record models: AutoTVM's two JSON layouts, validated field by field.

Pure, like `tunelog.records`, which imports this module only when a line needs it: a line the
msgspec fast paths refuse (to say precisely what is wrong with it), `parse_line` (records as
models), and the Python API. An import of well-formed lines never loads pydantic, which saves
every such command a tenth of a second of start-up. The msgspec structs of
`tunelog.recordstructs` mirror these models for that fast path (why both exist is said there;
`tests/test_records.py` holds them to the same fields and verdicts).
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

import orjson
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from tunelog.recordvalues import (
    JsonValue,
    KnobType,
    Measurement,
    Rejected,
    numpy_mean,
)
from tunelog.rejectreasons import foreign_format, non_json_reason, pydantic_reason
from tunelog.rules.layout import MARKED_V01, has_input_key, marked_v01
from tunelog.rules.recordvalidity import check_values
from tunelog.rules.workloadidentity import canonical_json, workload_json
from tunelog.versions import V01, V02

# defer_build: the models are built on first use, not when this module is imported.
_STRICT = ConfigDict(strict=True, frozen=True, extra="ignore", defer_build=True)

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


def _error_number(value: object) -> object:
    """An error number as TVM compares it (`error_no != 0`): `false` and `0.0` are 0, `true`
    and `6.0` are 1 and 6, as Python's equality has them; anything else is left to refuse."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An error number written `0.0` or `false`: TVM loads the record as valid (tunelog rejected it).
ErrorNumber: TypeAlias = Annotated[int, BeforeValidator(_error_number)]

_Result = tuple[list[Number], ErrorNumber, Number, Number]


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
        return V02

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
        return V01

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


def validate(line: bytes, v01_first: bool) -> TuningRecord | Rejected:
    """A line (stripped, not too deep, not auto_scheduler) through the models: a record or why not.

    `v01_first`: try the v0.1 layout first (the line has a "v" key and no "input" key).
    """
    first: type[TuningRecord] = RecordV01 if v01_first else RecordV02
    try:
        record: TuningRecord = first.model_validate_json(line)
    except ValidationError as exc:
        # A failed v0.1 guess with an "input" key is read as v0.2, as TVM reads it (rules.layout);
        # so no line with that key reaches `_explain_rejection` having tried v0.1.
        if first is RecordV01 and has_input_key(line):
            return validate(line, False)
        return _explain_rejection(line, first, exc)
    except (ValueError, RecursionError) as exc:  # pragma: no cover - defensive
        return Rejected(f"unreadable line ({type(exc).__name__})")
    if isinstance(record, RecordV01) and record.v != 0.1:
        return Rejected(f"unknown log version {record.v!r} (AutoTVM writes 0.1 or 0.2)")
    if isinstance(record, RecordV02) and marked_v01(line):
        return Rejected(MARKED_V01)
    checked = check_values(record.measurement())
    return record if isinstance(checked, Measurement) else checked


def _explain_rejection(line: bytes, tried: type[TuningRecord], exc: ValidationError) -> Rejected:
    """Turn a failed validation into the most specific reason we can give."""
    errors = exc.errors(include_url=False, include_context=True, include_input=False)
    if errors and errors[0]["type"] == "json_invalid":
        return Rejected(non_json_reason(line, str(errors[0].get("ctx", {}).get("error", ""))))
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        # pydantic accepted the JSON but orjson did not (NaN, 1e400, huge integers): an
        # auto_scheduler record is still named as one (not by the v0.1 field it lacks).
        fmt = foreign_format(_leniently_read(line))
        return Rejected(fmt if fmt is not None else pydantic_reason(errors))
    fmt = foreign_format(value)
    if fmt is not None:
        return Rejected(fmt)
    if isinstance(value, dict) and tried is RecordV02 and "v" in value and "i" in value:
        try:
            return _check_values_or_reject(RecordV01.model_validate(value))
        except ValidationError as exc01:
            return Rejected(pydantic_reason(exc01.errors(include_url=False)))
    if not isinstance(value, dict):
        return Rejected(f"JSON {type(value).__name__} is not an AutoTVM record")
    if "input" not in value and "i" not in value:
        return Rejected("JSON object is not an AutoTVM record (no input/i field)")
    return Rejected(pydantic_reason(errors))


def _leniently_read(line: bytes) -> object:
    """The line as Python's json reads it (NaN, the infinities), or None."""
    import json

    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _check_values_or_reject(record: TuningRecord) -> Rejected:
    # Reached only when the fast path picked the wrong layout; re-check and report.
    checked = check_values(record.measurement())
    if isinstance(checked, Rejected):
        return checked
    return Rejected("record layout mixes v0.1 and v0.2 fields")
