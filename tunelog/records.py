"""Parsing one log line: AutoTVM v0.2 / v0.1 records, comments, blanks, and rejections.

Pure: bytes in, a `ParsedLine` or `ScannedLine` out, never an exception. Well-formed lines are
decoded by msgspec against `tunelog.recordstructs`, mirrors of the pydantic models of
`tunelog.recordmodels` (the JSON AutoTVM writes, tvm-reference §1; why both exist is said
there); every other line goes through those models, imported only then (a line that is plainly
not JSON is named from its bytes), and is rejected with a reason a person can act on. Every
record's values pass `rules.recordvalidity.checked`, which builds its Measurement
(`recordvalues.measurement_of`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TypeAlias

from tunelog.ansor import SKIPPED_BY_ANSOR_READER as SKIPPED_BY_ANSOR_READER
from tunelog.ansor import AnsorRecord, scan_ansor_line, scan_ansor_line_fast
from tunelog.ansor import ansor_measurement as ansor_measurement
from tunelog.linetext import UTF8_BOM as UTF8_BOM
from tunelog.linetext import repair_line as repair_line
from tunelog.linetext import strip_line as strip_line
from tunelog.recordstructs import (
    ARGS_JSON,
    FAST_V01,
    FAST_V02,
    STRICT_V01,
    STRICT_V02,
    FastRecordV01,
    FastRecordV02,
    StrictRecordV01,
    args_json,
    valid_workload,
)
from tunelog.recordvalues import Blank as Blank
from tunelog.recordvalues import Comment as Comment
from tunelog.recordvalues import JsonValue as JsonValue
from tunelog.recordvalues import Knob as Knob
from tunelog.recordvalues import KnobType as KnobType
from tunelog.recordvalues import Measurement as Measurement
from tunelog.recordvalues import Rejected as Rejected
from tunelog.recordvalues import non_json_shape as non_json_shape
from tunelog.recordvalues import numpy_mean as numpy_mean
from tunelog.rules.layout import MARKED_V01, marked_v01, v01_layout_first
from tunelog.rules.nesting import MAX_NESTING as MAX_NESTING
from tunelog.rules.nesting import TOO_DEEP_REASON, too_deep
from tunelog.rules.nesting import nesting_depth as nesting_depth
from tunelog.rules.recordvalidity import check_values as check_values
from tunelog.rules.recordvalidity import checked
from tunelog.rules.workloadidentity import canonical_json as canonical_json
from tunelog.rules.workloadidentity import workload_json as workload_json
from tunelog.versions import V01, V02

if TYPE_CHECKING:  # at run time, `__getattr__` below
    from tunelog.recordmodels import RecordV01 as RecordV01
    from tunelog.recordmodels import RecordV02 as RecordV02
    from tunelog.recordmodels import TuningRecord as TuningRecord


# A failed measurement is written with this cost (MeasureResult for errors).
FAILED_COST = 1e9


# A record as `parse_line` returns it: a `tunelog.recordmodels.TuningRecord` (pydantic, imported
# only when needed) or an auto_scheduler record; the string keeps pydantic off this import.
ParsedLine: TypeAlias = "TuningRecord | AnsorRecord | Comment | Blank | Rejected"
ScannedLine: TypeAlias = Measurement | Comment | Blank | Rejected

COMMENT = Comment()
BLANK = Blank()


def parse_line(raw: bytes) -> ParsedLine:
    """Classify one line of a log (line end and BOM allowed); records come back as models."""
    return parse_content(strip_line(raw))


def parse_content(line: bytes) -> ParsedLine:
    """`parse_line` for a line already stripped of its BOM and line end (see `strip_line`)."""
    stripped = line.strip()
    if not stripped:
        return BLANK
    if stripped.startswith(b"#"):
        return COMMENT
    if too_deep(line):
        return _TOO_DEEP
    v01_first = v01_layout_first(line)
    if v01_first and has_string_version(line):  # auto_scheduler writes "v": "v0.6"
        ansor = scan_ansor_line(line)
        if ansor is not None:
            return ansor if isinstance(ansor, Rejected) else ansor[0]
    if _models_cannot_start_reading(line):
        # Text, a forum paste: what the models would say, without loading pydantic (a tenth
        # of a second) for the one stray line of a directory of logs. The shape alone is not
        # enough: a valid record may hold a tab or a typographic quote inside a string.
        shape = non_json_shape(line)
        if shape is not None:
            return Rejected(shape)
    from tunelog import recordmodels

    return recordmodels.validate(line, v01_first)


# A "v" key with a string value: an auto_scheduler record's version ("v0.6"; TVM's reader
# takes any string there, "v1.0" too), where AutoTVM's v0.1 writes a number.
_STRING_VERSION = re.compile(rb'"v"[ \t\r\n]*:[ \t\r\n]*"')


def has_string_version(line: bytes) -> bool:
    """Whether the line has a "v" key with a string value (`_STRING_VERSION`). auto_scheduler
    writes it last: looked for from the end (a search from the start tries every quote of
    the line, a fifth of an auto_scheduler line's import)."""
    at = line.rfind(b'"v"')
    if at < 0:
        return False
    return _STRING_VERSION.match(line, at) is not None or _STRING_VERSION.search(line) is not None


# How a JSON value can start, after JSON's own whitespace, as pydantic's parser reads JSON
# (it also reads NaN and the infinities); an object's first key is a string.
_JSON_START = re.compile(
    rb'[ \t\r\n]*(?:\{[ \t\r\n]*["}]|[\["0-9]|-[0-9]|true|false|null|NaN|-?Infinity)'
)


def _models_cannot_start_reading(line: bytes) -> bool:
    """True when the models' JSON parser fails on the line's first bytes (`_JSON_START`).

    False is no verdict: the line may still be malformed further on.
    """
    return _JSON_START.match(line) is None


def scan_line(raw: bytes) -> ScannedLine:
    """Like `parse_line`, but records come back as `Measurement`s: the import's hot path.

    Well-formed lines are decoded by msgspec against mirrors of the pydantic models (the tests
    hold them to the same verdicts); every other line goes through the models, which say
    precisely what is wrong.
    """
    return scan_content(strip_line(raw))


def scan_content(line: bytes) -> ScannedLine:
    """`scan_line` for a line already stripped of its BOM and line end (see `strip_line`).

    The usual line is decoded by a strict schema (`recordstructs.StrictRecordV02`); anything
    it refuses takes `_scan_other`. A v0.2 record, decoded by either v0.2 schema, becomes its
    Measurement here, through `checked` (the usual line runs no other Python function of ours).
    """
    try:
        fast: FastRecordV02 | None = STRICT_V02.decode(line)  # a StrictRecordV02
    except (ValueError, RecursionError):  # msgspec.DecodeError, UnicodeDecodeError
        fast = None
    # The nesting limit (rules.nesting), as parse_line applies it. A line the strict schema
    # read nests deep only in its raw arguments, which `args_json` checks, if it has one
    # "input" key: the schema bounds every value it reads but those arguments, and the raw
    # arguments of an "input" that a later one overrides are never looked at. A line with a
    # backslash may spell the key `\u0069nput`, so it may have two. Every other line is
    # measured first. (The usual line starts its object at once: msgspec also reads a line
    # after a second UTF-8 BOM, which no other reader does.)
    if fast is None or line[0] != _OPEN_OBJECT or line.count(b'"input"') != 1 or _BACKSLASH in line:
        if too_deep(line) or line.startswith(UTF8_BOM):
            return _fallback(line)  # a comment may hold any brackets
        if fast is None:
            other = _scan_other(line)
            if not isinstance(other, FastRecordV02):
                return other
            fast = other
    target, task_name, raw_args, _kwargs = fast.input
    args = ARGS_JSON.get(raw_text := bytes(raw_args)) or args_json(raw_text)
    if args is None:  # not a list, or nested too deep: let the models say what is wrong
        return _fallback(line)
    costs, error_no, all_cost, timestamp = fast.result
    return checked(
        V02,  # log_version
        target,
        task_name,
        "",  # template_key
        args,  # args_json
        fast.config.index,  # config_index
        costs,
        error_no,
        all_cost,
        timestamp,
        fast.tvm_version,
        costs[0] if len(costs) == 1 else numpy_mean(costs),  # mean_cost
        None,  # spelling
    )


def _scan_other(line: bytes) -> ScannedLine | FastRecordV02:
    """Lines (not too deep: `too_deep`) the strict v0.2 schema refuses or cannot bound: v0.1
    records, unknown keys, deeper values, other formats, errors. A v0.2 record comes back
    decoded, for `scan_content` to measure."""
    if not v01_layout_first(line):
        if marked_v01(line):  # TVM skips it: `"v": 0.1` is read before the layout
            return Rejected(MARKED_V01)
        try:
            return FAST_V02.decode(line)
        except (ValueError, RecursionError):
            return _fallback(line)
    try:
        strict01 = STRICT_V01.decode(line)
    except (ValueError, RecursionError):
        pass
    else:
        if valid_workload(bytes(strict01.i[4])):
            return _v01_measurement(strict01, line)
    if has_string_version(line):
        ansor = scan_ansor_line_fast(line) or scan_ansor_line(line)
        if ansor is not None:
            return ansor if isinstance(ansor, Rejected) else ansor[1]
    try:
        fast01 = FAST_V01.decode(line)
    except (ValueError, RecursionError):
        return _fallback(line)
    return _v01_measurement(fast01, line)


def _v01_measurement(fast: StrictRecordV01 | FastRecordV01, line: bytes) -> ScannedLine:
    """A decoded v0.1 record's Measurement, through `checked`."""
    if fast.v != 0.1:
        return _fallback(line)
    target, task_name, raw_args, _kwargs, _workload, config = fast.i
    args = ARGS_JSON.get(raw_text := bytes(raw_args)) or args_json(raw_text)
    if args is None:
        return _fallback(line)
    costs, error_no, all_cost, timestamp = fast.r
    return checked(
        V01,  # log_version
        target,
        task_name,
        config.t,  # template_key
        args,  # args_json
        config.i,  # config_index
        costs,
        error_no,
        all_cost,
        timestamp,
        None,  # tvm_version
        costs[0] if len(costs) == 1 else numpy_mean(costs),  # mean_cost
        None,  # spelling
    )


def _fallback(line: bytes) -> ScannedLine:
    # Blank lines and comments are not JSON either: they are classified here, off the hot path.
    validated = parse_content(line)  # stripped once already: a second BOM is no BOM
    if isinstance(validated, (Comment, Blank, Rejected)):
        return validated
    if isinstance(validated, AnsorRecord):
        return ansor_measurement(validated)
    return validated.measurement()


_TOO_DEEP = Rejected(TOO_DEEP_REASON)
# As an int, `in` looks for the byte with memchr (a one-byte bytes object: a slower search).
_BACKSLASH = ord("\\")
_OPEN_OBJECT = ord("{")


def __getattr__(name: str) -> Any:
    # The models live in tunelog.recordmodels (pydantic is imported only when they are needed);
    # `from tunelog.records import TuningRecord` keeps working.
    if name in ("TuningRecord", "RecordV01", "RecordV02"):
        from tunelog import recordmodels

        return getattr(recordmodels, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
