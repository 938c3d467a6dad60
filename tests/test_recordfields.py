"""explain: what a record's fields mean (cost vs all_cost, error_no, timestamp)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import SAMPLE_LOGS, runner
from tunelog.cli import app
from tunelog.recordfields import FIELDS, field_name

LINES = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()
VALID = LINES[0]
TIMED_OUT = next(line for line in LINES if '"result": [[1000000000.0], 6, 10.0' in line)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("cost", "cost"),
        ("costs", "cost"),
        ("all_cost", "all_cost"),
        ("all-cost", "all_cost"),
        ("ALL_COST", "all_cost"),
        ("error_no", "error_no"),
        ("errno", "error_no"),
        ("timestamp", "timestamp"),
        ("entity", "config"),
        ("tvm_version", "tvm_version"),
        ("build_timeout", None),
        ("6", None),
    ],
)
def test_field_names_and_their_aliases(text: str, field: str | None) -> None:
    assert field_name(text) == field


def test_explain_a_field_prints_its_meaning() -> None:
    result = runner.invoke(app, ["explain", "all_cost"])
    assert result.exit_code == 0
    assert result.stdout == f"all_cost: {FIELDS['all_cost']}\n"
    assert "never used to rank" in result.stdout


def test_explain_fields_lists_every_field_as_json() -> None:
    result = runner.invoke(app, ["explain", "fields", "--json"])
    assert json.loads(result.stdout) == FIELDS


def test_explain_a_record_annotates_each_value() -> None:
    result = runner.invoke(app, ["--wide", "explain", VALID, "--json"])
    fields = {entry["field"]: entry for entry in json.loads(result.stdout)}
    assert list(fields) == [
        "target",
        "task",
        "args",
        "config",
        "cost",
        "error_no",
        "all_cost",
        "timestamp",
        "version",
        "tvm_version",
    ]
    assert fields["cost"]["meaning"] == "mean 31.1 us over 1 run(s): the number ranked"
    assert fields["error_no"]["meaning"] == "NO_ERROR: a valid measurement"
    assert fields["all_cost"]["meaning"] == (
        "136 ms for the whole measurement (build + run + overhead); not ranked"
    )
    assert fields["timestamp"]["meaning"] == "2026-11-22 05:11:33 UTC"


def test_explain_a_timed_out_record() -> None:
    result = runner.invoke(app, ["explain", TIMED_OUT, "--json"])
    fields = {entry["field"]: entry["meaning"] for entry in json.loads(result.stdout)}
    assert fields["cost"] == "a failed measurement: the cost is a placeholder"
    assert fields["error_no"] == "BUILD_TIMEOUT: never chosen by apply_history_best"
    assert fields["all_cost"] == "10 s: for a timeout, AutoTVM writes the timeout in effect here"


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("[[0.5], 6, 10, 1]", ["[0.5]", "10", "1"]),
        ("[[1], 0, 1.5e-3, 1610455199.463942]", ["[1]", "0.0015", "1610455199.463942"]),
        ("[[1e-05, 2e-05], 0, 0.25, 1.6e9]", ["[1e-05, 2e-05]", "0.25", "1600000000.0"]),
    ],
)
def test_explain_shows_the_measured_values_as_json_reads_them_from_the_line(
    written: str, shown: list[str]
) -> None:
    # An integer all_cost (the timeout TVM wrote) was shown as "10.0".
    line = VALID.split('"result": ')[0] + f'"result": {written}, "version": 0.2}}'
    result = runner.invoke(app, ["explain", line, "--json"])
    fields = {entry["field"]: entry["value"] for entry in json.loads(result.stdout)}
    assert [fields["cost"], fields["all_cost"], fields["timestamp"]] == shown


READS = "explain reads AutoTVM record lines (a JSON object with input, config, result)"
ANSOR_LINE = json.dumps(
    {
        "i": [
            ['["h1", [1, 64, 56, 56]]', "llvm -keys=cpu", [4, 64, 64, 0, 0, 0, 0, 0], "", 0, []],
            [[], []],
        ],
        "r": [[0.001], 0, 0.5, 1700000000],
        "v": "v0.6",
    }
)


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('{"a": 1}', f"JSON object is not an AutoTVM record (no input/i field): {READS}"),
        (ANSOR_LINE, f"an auto_scheduler (Ansor) record: {READS}; `tunelog explain N` explains "
         "its error number"),
        ('[0, [[[["GetSBlock", [], ["C", "main"], ["b0"]]], []], [0.001]]]',
         f"a JSON array, not an AutoTVM record (a MetaSchedule record?): {READS}"),
    ],
)  # fmt: skip
def test_explain_text_that_is_not_an_autotvm_record_says_what_it_is(line: str, error: str) -> None:
    """An Ansor line used to be 'not an AutoTVM record: not an AutoTVM record', and a
    MetaSchedule line an 'unknown error code' echoing the whole line."""
    result = runner.invoke(app, ["explain", line])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {error}\n")
