"""What AutoTVM's error numbers and a record's fields mean (`tunelog explain`), for the API."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tunelog.errorcodes import ErrorCode
    from tunelog.recordfields import FieldLine


def explain_error(code: str | int) -> ErrorCode:
    """An AutoTVM error number (0-8) or name (`build_timeout`): its meaning, common causes and
    what to change. Raises UnknownErrorCodeError for one AutoTVM does not define."""
    from tunelog.errorcodes import lookup_error_code

    return lookup_error_code(code)


def explain_fields(name: str | None = None) -> dict[str, str]:
    """What each field of an AutoTVM record means (`name`: that field only, by any of its
    spellings: `cost`, `all_cost`, `error_no`...). Raises InvalidValueError for a name that
    is no field."""
    from tunelog.exceptions import InvalidValueError
    from tunelog.recordfields import FIELDS, field_name

    if name is None:
        return dict(FIELDS)
    field = field_name(name)
    if field is None:
        raise InvalidValueError(f"{name!r} is no record field: one of {', '.join(FIELDS)}")
    return {field: FIELDS[field]}


def explain_record(line: str) -> list[FieldLine]:
    """Each field of an AutoTVM record line: its value and what the value means. Raises
    NotARecordError saying what the line is otherwise (an auto_scheduler or MetaSchedule
    record, or why it is no record)."""
    from tunelog.exceptions import NotARecordError
    from tunelog.recordfields import explain_record as fields_of
    from tunelog.recordmodels import TuningRecord
    from tunelog.records import parse_line

    # A command line's bytes that are not UTF-8 come as lone surrogates: back to those bytes.
    parsed = parse_line(line.encode("utf-8", "surrogateescape"))
    if not isinstance(parsed, TuningRecord):
        raise NotARecordError(_not_autotvm(line, getattr(parsed, "reason", None)))
    return fields_of(parsed, line)


def _not_autotvm(line: str, reason: str | None) -> str:
    """Why `explain` cannot read a record line: what it is instead, and what it reads."""
    reads = "explain reads AutoTVM record lines (a JSON object with input, config, result)"
    if reason is None:  # read as a record of another kind
        return (
            f"an auto_scheduler (Ansor) record: {reads}; `tunelog explain N` explains its "
            "error number"
        )
    if line.lstrip().startswith("["):
        return f"a JSON array, not an AutoTVM record (a MetaSchedule record?): {reads}"
    return f"{reason}: {reads}"
