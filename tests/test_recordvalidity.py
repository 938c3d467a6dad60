"""Record validity (tunelog.rules.recordvalidity): one table of records run through
`check_values`, `checked` (its quick yes, else its verdict), and the two parsers' paths that
apply them (the msgspec path of `records.scan_content` and the pydantic models)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from tunelog.records import Measurement, Rejected, parse_line, scan_line
from tunelog.rules import recordvalidity
from tunelog.rules.recordvalidity import check_values, checked

TARGET = "llvm -keys=cpu"
BASE: dict[str, Any] = {
    "target": TARGET,
    "task_name": "dense_nopack.x86",
    "config_index": 3,
    "costs": (0.5, 0.25),
    "error_no": 0,
    "all_cost": 1.0,
    "timestamp": 1700000000.0,
}
# (changes to BASE, None if valid else the reason)
CASES: list[tuple[dict[str, Any], str | None]] = [
    ({}, None),
    ({"costs": (0.5,)}, None),
    ({"costs": (0.0, 0.0)}, None),
    ({"error_no": 4, "costs": (1e9,)}, None),
    ({"all_cost": -1.0, "timestamp": -5.0}, None),
    ({"config_index": (1 << 63) - 1, "error_no": -(1 << 63)}, None),
    ({"costs": ()}, "empty result costs"),
    ({"costs": (0.5, -0.1)}, "negative cost -0.1"),
    ({"costs": (-0.5,)}, "negative cost -0.5"),
    ({"costs": (1e308, 1e308)}, "mean cost overflows a float"),
    ({"task_name": ""}, "empty task name"),
    ({"config_index": 1 << 63}, f"config index {1 << 63} does not fit in 64 bits"),
    ({"error_no": -(1 << 63) - 1}, f"error number {-(1 << 63) - 1} does not fit in 64 bits"),
    ({"target": "-keys=cpu"}, "bad target: target string starts with an option"),
]
IDS = [f"case{i}" for i in range(len(CASES))]


def _record(changes: dict[str, Any]) -> Measurement:
    fields = {**BASE, **changes}
    costs = fields["costs"]
    mean = sum(costs) / len(costs) if costs else float("nan")
    return Measurement(
        "0.2", fields["target"], fields["task_name"], "", "[]", fields["config_index"], costs,
        fields["error_no"], fields["all_cost"], fields["timestamp"], None, mean,
    )  # fmt: skip


def _line(changes: dict[str, Any]) -> bytes:
    fields = {**BASE, **changes}
    return json.dumps(
        {
            "input": [fields["target"], fields["task_name"], [], {}],
            "config": {"index": fields["config_index"], "code_hash": None, "entity": []},
            "result": [list(fields["costs"]), fields["error_no"], fields["all_cost"],
                       fields["timestamp"]],
            "version": 0.2,
            "tvm_version": "0.8.0",
        }
    ).encode()  # fmt: skip


def _verdict(checked: object) -> str | None:
    return checked.reason if isinstance(checked, Rejected) else None


@pytest.mark.parametrize(("changes", "reason"), CASES, ids=IDS)
def test_check_values_says_why(changes: dict[str, Any], reason: str | None) -> None:
    verdict = _verdict(check_values(_record(changes)))
    assert verdict == reason or (reason is not None and (verdict or "").startswith(reason))


@pytest.mark.parametrize(("changes", "reason"), CASES, ids=IDS)
def test_checked_answers_valid_records_from_comparisons_alone(
    changes: dict[str, Any], reason: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _record(changes)
    check_values(_record({}))  # the target is known from here on
    asked: list[Measurement] = []

    def check_values_spy(record: Measurement) -> Measurement | Rejected:
        asked.append(record)
        return check_values(record)

    monkeypatch.setattr(recordvalidity, "check_values", check_values_spy)
    verdict = checked(*record)  # the values as a parser hands them, in field order
    assert _verdict(verdict) == _verdict(check_values(record))
    assert asked == ([] if reason is None else [record])  # a valid record: no full check
    if reason is None:
        assert type(verdict) is Measurement
        assert verdict == record


@pytest.mark.parametrize(("changes", "reason"), CASES, ids=IDS)
def test_both_parsers_reject_alike(changes: dict[str, Any], reason: str | None) -> None:
    line = _line(changes)
    fast = scan_line(line)  # the strict msgspec path and `checked`
    model = parse_line(line)  # the pydantic models
    expected = _verdict(check_values(_record(changes)))
    assert _verdict(fast) == expected
    assert _verdict(model) == expected
    if reason is None:
        assert isinstance(fast, Measurement)


@pytest.mark.parametrize("text", [b"1e999", b"-1e999", b"NaN", b"Infinity", b"-Infinity"])
@pytest.mark.parametrize("field", ["all_cost", "timestamp"])
def test_a_non_finite_float_never_reaches_checked(text: bytes, field: str) -> None:
    """`checked` compares no float but the mean and the costs' signs: msgspec, whose values it
    is handed, decodes no infinity or NaN, so such a line takes the models' path and verdict."""
    with pytest.raises(msgspec.DecodeError):
        msgspec.json.decode(text, type=float)
    line = _line({field: 7.25}).replace(b"7.25", text)
    assert isinstance(scan_line(line), Rejected)
    assert scan_line(line) == parse_line(line)
