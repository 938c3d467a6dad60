"""Parsing single lines: records, comments, blanks and the reasons for rejecting the rest."""

from __future__ import annotations

import functools
import json
import math
import operator
from pathlib import Path

import msgspec
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunelog import recordmodels, records, recordstructs
from tunelog.records import (
    UTF8_BOM,
    Blank,
    Comment,
    Measurement,
    RecordV01,
    RecordV02,
    Rejected,
    TuningRecord,
    numpy_mean,
    parse_line,
    repair_line,
    scan_line,
)
from tunelog.recordvalues import make_measurement, measurement_of, stored_measurement
from tunelog.rules.layout import MARKED_V01

V02 = (
    b'{"input": ["cuda -model=titanx", "conv2d_nchw.cuda", [["TENSOR", [1, 3, 8, 8], "float32"],'
    b' ["TENSOR", [4, 3, 3, 3], "float32"], [1, 1], [1, 1, 1, 1], [1, 1], "float32"], {}],'
    b' "config": {"index": 42, "code_hash": null, "entity": [["tile_f", "sp", [-1, 2, 2, 1]],'
    b' ["unroll_explicit", "ot", 1]]}, "result": [[0.001, 0.003], 0, 1.5, 1600000000.5],'
    b' "version": 0.2, "tvm_version": "0.8.dev0"}'
)
V01 = (
    b'{"i": ["cuda -model=1080ti", "topi_nn_conv2d", [["TENSOR", [1, 3, 8, 8], "float32"],'
    b' ["TENSOR", [4, 3, 3, 3], "float32"], [1, 1], [1, 1], "NCHW", "float32"], {},'
    b' ["conv2d", [1, 3, 8, 8, "float32"], [4, 3, 3, 3, "float32"], [1, 1], [1, 1], "NCHW",'
    b' "float32"], {"i": 7, "t": "winograd", "c": null, "e": [["tile_b", "sp", [1, 1, 1, 1]]]}],'
    b' "r": [[0.5], 0, 2.0, 1535340502.6], "v": 0.1}'
)


def _mutate(line: bytes, path: list[str | int], value: object) -> bytes:
    data = json.loads(line)
    node = data
    for step in path[:-1]:
        node = node[step]
    if value is _DELETE and isinstance(node, dict):
        node.pop(path[-1], None)
    elif value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return json.dumps(data).encode()


_DELETE = object()


def test_v02_record_fields() -> None:
    record = parse_line(V02 + b"\n")
    assert isinstance(record, RecordV02)
    assert (record.log_version, record.target, record.task_name) == (
        "0.2",
        "cuda -model=titanx",
        "conv2d_nchw.cuda",
    )
    assert record.config_index == 42
    assert record.error_no == 0
    assert record.mean_cost == pytest.approx(0.002)
    assert record.costs == (0.001, 0.003)
    assert record.all_cost == 1.5
    assert record.timestamp == 1600000000.5
    assert record.tvm_version == "0.8.dev0"
    assert record.template_key == ""
    assert record.entity[0] == ("tile_f", "sp", [-1, 2, 2, 1])
    assert record.args_json.startswith('[["TENSOR",[1,3,8,8],"float32"]')


def test_v01_record_keeps_its_template_key() -> None:
    record = parse_line(V01)
    assert isinstance(record, RecordV01)
    assert (record.log_version, record.task_name, record.template_key) == (
        "0.1",
        "topi_nn_conv2d",
        "winograd",
    )
    assert record.config_index == 7


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"# TopHub section header\n", Comment),
        (b"\n", Blank),
        (b"   \t \r\n", Blank),
        (b"\xef\xbb\xbf" + V02 + b"\r\n", RecordV02),
        (V02 + b"\r\n", RecordV02),
        (b"\xef\xbb\xbf# comment after a BOM\n", Comment),
    ],
)
def test_line_kinds(raw: bytes, kind: type) -> None:
    assert isinstance(parse_line(raw), kind)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (V02[:57], "invalid JSON at column 57"),
        # Python's json reads these (half a character each); no text can hold them.
        (
            V02[:12] + b"\\ud800" + V02[12:],
            "a lone UTF-16 surrogate escape (half a character) at column 19",
        ),
        (
            V02[:12] + b"\\udc00" + V02[12:],
            "a lone UTF-16 surrogate escape (half a character) at column 18",
        ),
        (V02[:12] + b"\\u12" + V02[12:], "invalid JSON at column 18"),
        # Valid JSON, which Python's int() limit refuses: "invalid JSON at column" said nothing.
        (
            V02.replace(b'"index": 42', b'"index": ' + b"7" * 5001, 1),
            "an integer of 5001 digits: Python's json (TVM's reader) refuses integers of more "
            "than 4300 digits",
        ),
        (
            b"No: 1\tGFLOPS: 0.00\tresult: MeasureResult(costs=...)",
            "tab-separated text, not a JSON record",
        ),
        (
            b"gAJjdHZtLmF1dG90dm0=\tgAJjdHZtLnRhcmdldA==\tgAJLAC4uLi4uLg==",
            "pickle-protocol record (never unpickled)",
        ),
        (b"Get devices for measurement successfully!", "not JSON (text line)"),
        (b"[1, 2, 3]", "JSON list is not an AutoTVM record"),
        (b'{"a": 1}', "JSON object is not an AutoTVM record (no input/i field)"),
        (_mutate(V02, ["config", "entity"], _DELETE), "missing field config.entity"),
        (_mutate(V02, ["result"], [[0.1], 0, 1.0]), "wrong number of items in result"),
        (_mutate(V02, ["result", 0], []), "empty result costs"),
        (_mutate(V02, ["result", 0], [-1.0]), "negative cost -1.0"),
        (_mutate(V02, ["input", 0], ""), "bad target: empty target string"),
        (_mutate(V02, ["input", 1], ""), "empty task name"),
        (
            _mutate(V02, ["config", "entity", 0, 1], "xx"),
            "unexpected value in config.entity[0][1]: Input should be 'sp', 're', 'an' or 'ot'",
        ),
        (
            b'{"i": [["[\\"k\\"]", "llvm", [4, 64, 64, 0, 0, 0, 0, 0], "", 0, []], [[], []]], '
            b'"v": "v0.6"}',
            "auto_scheduler record: r must be [costs, error_no, all_cost, timestamp]",
        ),
        (
            b'[0, [[[], []], [0.1], {"kind": "llvm"}, []]]',
            "a MetaSchedule tuning record, read only from its database: import the file with its "
            "workload file beside it",
        ),
        (
            b'["12345", "YWJj"]',
            "a MetaSchedule workload line, read with its database's records file: import that file",
        ),
        (
            V02.replace(b'"', "“".encode(), 4),
            "typographic quotes (pasted from a web page?): use --repair",
        ),
        # Prose quoted by a word processor is no record to repair.
        ("It \u201cworks\u201d fine".encode(), "not JSON (text line)"),
        (V02 + b" " + V02, "several records run together on one line: use --repair"),
        (b'{"input": \xff\xfe}', "invalid UTF-8 at byte 11"),
        (b'{"input": "\x00"}', "NUL byte in line (binary data?)"),
        (_mutate(V02, ["v"], 0.1), MARKED_V01),
    ],
)
def test_rejection_reasons(raw: bytes, reason: str) -> None:
    parsed = parse_line(raw)
    assert isinstance(parsed, Rejected)
    assert parsed.reason == reason


@pytest.mark.parametrize(
    ("mark", "kept"), [(0.1, False), (0.10, False), (0.2, True), ("0.1", True)]
)
def test_a_v02_record_marked_v01_is_skipped_as_tvm_skips_it(mark: object, kept: bool) -> None:
    """TVM's decode reads `"v" == 0.1` before the layout and returns None: the record is never
    loaded, however good its v0.2 fields (tunelog kept it, and could export it as the winner)."""
    line = _mutate(V02, ["v"], mark)
    escaped = line.replace(b'"v"', b'"\\u0076"')  # the same key to TVM's json.loads
    for read in (parse_line, scan_line):
        for text in (line, escaped):
            verdict = read(text)
            assert not isinstance(verdict, Rejected) if kept else verdict == Rejected(MARKED_V01)


@pytest.mark.parametrize(
    ("written", "error_no"), [(0.0, 0), (False, 0), (True, 1), (6.0, 6), (0.5, None), ("0", None)]
)
def test_an_error_number_is_read_as_tvm_compares_it(written: object, error_no: int | None) -> None:
    """TVM keeps a record when `error_no != 0` is false: `0.0` and `false` are valid records
    (tunelog rejected them, and answered with a slower config than TVM's)."""
    line = _mutate(V02, ["result", 1], written)
    for read in (parse_line, scan_line):
        verdict = read(line)
        if error_no is None:
            assert isinstance(verdict, Rejected)
        else:
            assert isinstance(verdict, TuningRecord | Measurement)
            assert verdict.error_no == error_no


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_non_finite_costs_are_rejected(literal: bytes) -> None:
    raw = V02.replace(b"[[0.001, 0.003]", b"[[" + literal + b"]")
    assert isinstance(parse_line(raw), Rejected)


def test_error_records_keep_their_number_and_int_all_cost() -> None:
    raw = V02.replace(b"[[0.001, 0.003], 0, 1.5,", b"[[1000000000.0], 6, 10,")
    record = parse_line(raw)
    assert isinstance(record, TuningRecord)
    assert (record.error_no, record.all_cost, record.mean_cost) == (6, 10.0, 1e9)


def test_arguments_beyond_64_bit_integers_are_kept_exactly() -> None:
    raw = V02.replace(b"[1, 1], [1, 1, 1, 1]", b"[1, 1], [18446744073709551616, -1]")
    scanned, parsed = scan_line(raw), parse_line(raw)
    assert isinstance(scanned, Measurement) and isinstance(parsed, TuningRecord)
    assert "[18446744073709551616,-1]" in scanned.args_json
    assert scanned.args_json == parsed.args_json


def test_missing_version_is_read_as_v02_like_tvm_does() -> None:
    assert isinstance(parse_line(_mutate(V02, ["version"], _DELETE)), RecordV02)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([0.5], 0.5),
        ([0.1, 0.2, 0.3], (0.1 + 0.2 + 0.3) / 3),
        # From 8 values numpy sums 8 lanes then combines them pairwise.
        ([0.1] * 9, ((((0.1 + 0.1) + (0.1 + 0.1)) + ((0.1 + 0.1) + (0.1 + 0.1))) + 0.1) / 9),
    ],
)
def test_numpy_mean_matches_numpy_summation(values: list[float], expected: float) -> None:
    assert numpy_mean(values) == expected


def test_numpy_mean_differs_from_naive_sum_where_numpy_does() -> None:
    # `!=` alone held for any wrong mean (NaN included): pin numpy's value, and show the case
    # tells numpy's pairwise sum from a left-to-right one (sum() itself compensates on 3.12+).
    values = [0.1] * 9
    numpy_value = ((((0.1 + 0.1) + (0.1 + 0.1)) + ((0.1 + 0.1) + (0.1 + 0.1))) + 0.1) / 9
    left_to_right = functools.reduce(operator.add, values, 0.0) / 9
    assert numpy_value != left_to_right
    assert numpy_mean(values) == numpy_value


@settings(max_examples=300)
@given(st.binary(max_size=400))
def test_parse_line_never_raises_on_bytes(raw: bytes) -> None:
    assert parse_line(raw) is not None


@settings(max_examples=300)
@given(st.integers(min_value=0, max_value=len(V02)), st.binary(min_size=1, max_size=3))
def test_damaged_records_are_rejected_or_parsed_never_raise(position: int, noise: bytes) -> None:
    damaged = V02[:position] + noise + V02[position:]
    parsed = parse_line(damaged)
    assert isinstance(parsed, (TuningRecord, Rejected, Comment, Blank))
    if isinstance(parsed, Rejected):
        assert parsed.reason


@settings(max_examples=200)
@given(st.integers(min_value=1, max_value=len(V02) - 1))
def test_truncated_records_are_rejected(cut: int) -> None:
    assert isinstance(parse_line(V02[:cut]), Rejected)


# Lines that start as no JSON can: text, pastes, pickles, binary (parse_line names them without
# the models), and some that start like JSON, which the models must still see.
_NOT_JSON_STARTS = st.sampled_from(
    [
        b"",
        b" ",
        b"\t",
        b"\x0c",
        b"{",
        b"{ ",
        b"[",
        b"-",
        b"t",
        b"n",
        b"N",
        b"I",
        b"\xff",
        b"\xef\xbb\xbf",
    ]
)
_NOT_JSON_PIECES = st.lists(
    st.sampled_from(
        [
            b"x",
            b"9",
            b'"',
            "\u201c".encode(),
            "\u201d".encode(),
            b"\t",
            b"\x00",
            b"\xc3",
            b"{",
            b"}",
            b"} {",
            b'{"i"',
            b'{"input"',
            b"QUJDREVGR0g=",
            b"true",
            b"Infinity",
            b" ",
        ]
    ),
    max_size=8,
)


@pytest.mark.slow
@settings(max_examples=600)
@given(_NOT_JSON_STARTS, _NOT_JSON_PIECES, st.booleans())
def test_lines_named_without_the_models_get_the_models_reason(
    start: bytes, pieces: list[bytes], v01_first: bool
) -> None:
    line = start + b"".join(pieces)
    shape = records.non_json_shape(line)
    if line.strip() and records._models_cannot_start_reading(line) and shape is not None:
        assert recordmodels.validate(line, v01_first) == Rejected(shape)


def test_sample_log_lines_all_parse() -> None:
    sample = Path(__file__).resolve().parents[1] / "sample_logs" / "x86_mini_llvm.log"
    lines = sample.read_bytes().splitlines()
    assert lines and all(isinstance(parse_line(line), TuningRecord) for line in lines)


def test_repair_undoes_typographic_quotes_and_splits_joined_records() -> None:
    pasted = (V02 + b"  " + V02.replace(b"42", b"43")).replace(b'"', "“".encode(), 3)
    pieces = repair_line(pasted + b"\n")
    assert pieces == [V02, V02.replace(b"42", b"43")]
    assert all(isinstance(parse_line(piece), RecordV02) for piece in pieces)


@pytest.mark.parametrize("hopeless", [b"not json at all", b'{"input": [', b"\xff\xfe"])
def test_repair_gives_up_on_lines_it_cannot_recover(hopeless: bytes) -> None:
    assert repair_line(hopeless) == []


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=5)
    | st.sampled_from(["sp", "re", "an", "ot", "cuda", "0.2"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_JSON_PADDING = st.text(alphabet=" \t\r\n", max_size=3)


@pytest.mark.slow
@settings(max_examples=400)
@given(_JSON_PADDING, _JSON_VALUES | st.just(math.nan), _JSON_PADDING)
def test_json_texts_are_always_left_to_the_models(before: str, value: object, after: str) -> None:
    text = (before + json.dumps(value) + after).encode()
    assert not records._models_cannot_start_reading(text)


@pytest.mark.parametrize(
    "line",
    [
        b"NaN",
        b"null",
        b"false",
        b"true",
        b"-5",
        b"-Infinity",
        b"Infinity",
        b"{}\t",
        b'{ "a": 1}',
        b'"text"',
        b"[1]",
        b"\t" + V02,
    ],
)
def test_lines_that_start_like_json_are_left_to_the_models(line: bytes) -> None:
    assert not records._models_cannot_start_reading(line)


_PATHS = [
    ["input"],
    ["input", 0],
    ["input", 1],
    ["input", 2],
    ["input", 3],
    ["config"],
    ["config", "index"],
    ["config", "code_hash"],
    ["config", "entity"],
    ["config", "entity", 0],
    ["config", "entity", 0, 0],
    ["config", "entity", 0, 1],
    ["config", "entity", 0, 2],
    ["result"],
    ["result", 0],
    ["result", 0, 0],
    ["result", 1],
    ["result", 2],
    ["result", 3],
    ["version"],
    ["tvm_version"],
    ["unknown"],
    ["config", "unknown"],
    ["input", 3, "kwarg"],
]


@pytest.mark.slow
@settings(max_examples=600)
@given(st.sampled_from(_PATHS), _JSON_VALUES | st.just(_DELETE))
def test_fast_path_and_pydantic_models_agree(path: list[str | int], value: object) -> None:
    """scan_line's msgspec schema must accept exactly what the pydantic models accept."""
    mutated = _mutate(V02, path, value)
    fast, model = scan_line(mutated), parse_line(mutated)
    assert isinstance(fast, Measurement) == isinstance(model, TuningRecord), mutated
    if isinstance(model, TuningRecord):
        assert fast == model.measurement()
    else:
        assert isinstance(fast, Rejected) and isinstance(model, Rejected)


_V01_PATHS = [
    ["i"],
    ["i", 0],
    ["i", 1],
    ["i", 2],
    ["i", 3],
    ["i", 4],
    ["i", 5],
    ["i", 5, "i"],
    ["i", 5, "t"],
    ["i", 5, "c"],
    ["i", 5, "e"],
    ["i", 5, "e", 0],
    ["i", 5, "e", 0, 1],
    ["i", 5, "e", 0, 2],
    ["r"],
    ["r", 0],
    ["r", 0, 0],
    ["r", 1],
    ["r", 2],
    ["r", 3],
    ["v"],
    ["input"],
    ["unknown"],
    ["i", 3, "kwarg"],
    ["i", 5, "unknown"],
    ["i", 4, 1],
]


@pytest.mark.slow
@settings(max_examples=600)
@given(st.sampled_from(_V01_PATHS), _JSON_VALUES | st.just(_DELETE) | st.just(0.1))
def test_v01_fast_path_and_pydantic_models_agree(path: list[str | int], value: object) -> None:
    """The v0.1 fast path accepts exactly what RecordV01 accepts, with the same values."""
    mutated = _mutate(V01, path, value)
    fast, model = scan_line(mutated), parse_line(mutated)
    assert isinstance(fast, Measurement) == isinstance(model, TuningRecord), mutated
    if isinstance(model, TuningRecord):
        assert fast == model.measurement()
    else:
        assert isinstance(fast, Rejected) and isinstance(model, Rejected)
        assert fast.reason == model.reason


# Each msgspec struct and the pydantic model it mirrors (recordstructs says why both exist).
_MIRRORS = [
    (recordstructs.FastRecordV02, recordmodels.RecordV02),
    (recordstructs.StrictRecordV02, recordmodels.RecordV02),
    (recordstructs.FastConfigV02, recordmodels._ConfigV02),
    (recordstructs.FastRecordV01, recordmodels.RecordV01),
    (recordstructs.StrictRecordV01, recordmodels.RecordV01),
    (recordstructs.FastConfigV01, recordmodels._ConfigV01),
]


@pytest.mark.parametrize(("struct", "model"), _MIRRORS, ids=lambda c: c.__name__)
def test_the_msgspec_structs_have_the_models_fields_and_defaults(
    struct: type[msgspec.Struct], model: type[pydantic.BaseModel]
) -> None:
    """A field added to, dropped from or given a default in one schema only fails here, before
    the mutation tests above look for a line the two read apart."""
    names, defaults = struct.__struct_fields__, struct.__struct_defaults__
    first_default = len(names) - len(defaults)  # msgspec's defaults are the last fields'
    mirrored = {
        name: defaults[at - first_default] if at >= first_default else "required"
        for at, name in enumerate(names)
    }
    modelled = {
        field.alias or name: "required" if field.is_required() else field.default
        for name, field in model.model_fields.items()
    }
    assert mirrored == modelled


def test_make_measurement_and_measurement_of_are_measurements_constructor() -> None:
    fields = dict(
        log_version="0.2", target="llvm", task_name="dense_nopack.x86", template_key="",
        args_json="[1]", config_index=3, costs=(0.5,), error_no=0, all_cost=1.0,
        timestamp=2.0, tvm_version="0.8", mean_cost=0.5, spelling=None,
    )  # fmt: skip
    assert tuple(fields) == Measurement._fields  # the arguments' order is the fields'
    made = make_measurement(*fields.values())  # type: ignore[arg-type]
    assert type(made) is Measurement
    assert made == Measurement(**fields)  # type: ignore[arg-type]
    assert made._asdict() == fields
    of_tuple = measurement_of(tuple(fields.values()))
    assert type(of_tuple) is Measurement
    assert of_tuple._asdict() == fields
    stored = stored_measurement(
        ("0.2", "llvm", "dense_nopack.x86", "", "[1]"), config_index=3, error_no=0,
        all_cost=1.0, timestamp=2.0, mean_cost=0.5, spelling=None,
    )  # fmt: skip
    assert stored == made._replace(costs=(), tvm_version=None)


def test_clean_v01_records_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fallback(line: bytes) -> None:
        raise AssertionError(f"pydantic path taken for {line[:40]!r}")

    monkeypatch.setattr(records, "_fallback", no_fallback)
    scanned = scan_line(V01)
    assert isinstance(scanned, Measurement)
    assert (scanned.log_version, scanned.template_key, scanned.config_index) == (
        "0.1",
        "winograd",
        7,
    )


@pytest.mark.parametrize(("line", "key"), [(V02, "input"), (V01, "i")], ids=["v0.2", "v0.1"])
def test_a_deep_value_under_a_repeated_key_is_rejected_by_both_parsers(
    line: bytes, key: str
) -> None:
    """JSON readers keep the last of repeated keys, but must still read the first one."""
    text = line.decode()
    first = json.loads(text)[key]
    first[2] = _nested(120)
    raw = text.replace("{", "{" + json.dumps(key) + ": " + json.dumps(first) + ", ", 1).encode()
    assert records.nesting_depth(raw) > records.MAX_NESTING
    for parse in (parse_line, scan_line):
        assert parse(raw) == Rejected("lists or objects nested more than 100 levels deep")


def test_a_comment_with_many_brackets_is_a_comment() -> None:
    raw = b"# " + b"[" * 150
    assert scan_line(raw) == parse_line(raw) == Comment()


def test_a_v01_record_mentioning_input_is_read_as_parse_line_reads_it() -> None:
    """parse_line tries the v0.2 layout first when "input" appears anywhere in the line."""
    raw = V01.replace(b'"topi_nn_conv2d"', b'"input"')
    assert isinstance(parse_line(raw), Rejected)
    assert scan_line(raw) == parse_line(raw)


def _nested(levels: int) -> object:
    value: object = "x"
    for _ in range(levels):
        value = [value]
    return value


def _repeated_input(spelling: str) -> bytes:
    """V02 with a first "input" key (spelled as given) whose arguments nest 120 levels."""
    first = json.loads(V02)["input"]
    first[2] = _nested(120)
    return V02.replace(b"{", ("{" + spelling + ": " + json.dumps(first) + ", ").encode(), 1)


# Lines the strict v0.2 schema reads, nested past the limit where it reads no value or one it
# keeps raw: each must still be counted (rules.nesting) and rejected by both parsers.
_DEEP_WHERE_THE_STRICT_SCHEMA_DOES_NOT_LOOK = {
    "input repeated": _repeated_input('"input"'),
    "input repeated, spelled with an escape": _repeated_input('"\\u0069nput"'),
    "input repeated, an escape elsewhere": _repeated_input('"input"').replace(
        b'"float32"', b'"float\\u0033\\u0032"', 1
    ),
}


@pytest.mark.parametrize(
    "raw",
    _DEEP_WHERE_THE_STRICT_SCHEMA_DOES_NOT_LOOK.values(),
    ids=_DEEP_WHERE_THE_STRICT_SCHEMA_DOES_NOT_LOOK.keys(),
)
def test_deep_values_the_strict_schema_skips_are_rejected_by_both_parsers(raw: bytes) -> None:
    assert recordstructs.STRICT_V02.decode(raw) is not None  # the strict schema reads it...
    assert records.nesting_depth(raw) > records.MAX_NESTING  # ...and it nests too deep
    for parse in (parse_line, scan_line):
        assert parse(raw) == Rejected("lists or objects nested more than 100 levels deep")


def test_the_usual_line_is_read_without_counting_its_brackets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The strict schema bounds what it reads (recordstructs.SHALLOW_LEVELS): the usual line's
    depth is known without the bracket count that every other line pays."""

    def no_count(line: bytes) -> bool:
        raise AssertionError(f"brackets counted for {line[:40]!r}")

    monkeypatch.setattr(records, "too_deep", no_count)
    assert isinstance(scan_line(V02 + b"\n"), Measurement)


@pytest.mark.parametrize(
    ("path", "levels"),
    [
        (["config", "entity", 0, 2], recordstructs.SHALLOW_LEVELS + 1),
        (["input", 3, "kwarg"], recordstructs.SHALLOW_LEVELS + 1),
        (["config", "entity", 0, 2], 90),
    ],
)
def test_values_deeper_than_the_strict_schema_reads_are_still_records(
    path: list[str | int], levels: int
) -> None:
    """A knob value or keyword argument nested past SHALLOW_LEVELS (within the limit) takes the
    tolerant schema: the same record as the models read."""
    raw = _mutate(V02, path, _nested(levels))
    with pytest.raises(ValueError):
        recordstructs.STRICT_V02.decode(raw)
    scanned = scan_line(raw)
    assert isinstance(scanned, Measurement)
    assert scanned == parse_line(raw).measurement()  # type: ignore[union-attr]


# Where a deep value can sit, and the depth of that place in the record: a value at depth d
# with `levels` lists nests the line d + levels deep.
_DEEP_PLACES = [
    (V02, ["input", 3, "kwarg"], 3),
    (V02, ["config", "entity", 0, 2], 4),
    (V02, ["unknown"], 1),
    (V02, ["config", "unknown"], 2),
    (V01, ["i", 4], 2),
    (V01, ["i", 3, "kwarg"], 3),
    (V01, ["i", 5, "e", 0, 2], 5),
    (V01, ["unknown"], 1),
]


@pytest.mark.parametrize(("line", "path", "depth"), _DEEP_PLACES)
@pytest.mark.parametrize("over", [0, 1])
def test_deep_values_anywhere_are_rejected_by_both_parsers(
    line: bytes, path: list[str | int], depth: int, over: int
) -> None:
    """Past the limit by one level, wherever the nesting is, both parsers reject the line."""
    raw = _mutate(line, path, _nested(records.MAX_NESTING - depth + over))
    assert records.nesting_depth(raw) == records.MAX_NESTING + over
    for parse in (parse_line, scan_line):
        result = parse(raw)
        if over:
            assert result == Rejected("lists or objects nested more than 100 levels deep")
        else:
            assert not isinstance(result, Rejected), (parse, result)


@pytest.mark.parametrize(
    ("levels", "rejected"), [(1, False), (98, False), (99, True), (2000, True)]
)
@pytest.mark.parametrize("line", [V02, V01], ids=["v0.2", "v0.1"])
def test_lines_nested_past_the_limit_are_rejected_by_both_parsers(
    line: bytes, levels: int, rejected: bool
) -> None:
    """The argument list is the third level: `levels` nested lists in its place reach 2 + levels."""
    key = "input" if line is V02 else "i"
    args = json.dumps(json.loads(line)[key][2]).encode()
    raw = line.replace(args, b"[" * levels + b'"x"' + b"]" * levels)
    assert raw != line
    if levels > 10:
        assert records.nesting_depth(raw) == 2 + levels
    for parse in (parse_line, scan_line):
        result = parse(raw)
        if rejected:
            assert result == Rejected("lists or objects nested more than 100 levels deep")
        else:
            assert not isinstance(result, Rejected), result


# Lines on which a byte test or msgspec's leniency once parted the two parsers (found by an
# adversarial review): each must get the same verdict from both.
_PARTED_ONCE = {
    # No literal "input" but a "v" string: the bytes test tries v0.1 first; TVM reads the keys.
    "input key escaped, a string v": V02.replace(b'"input"', b'"\\u0069nput"').replace(
        b'"0.8.dev0"', b'"v"'
    ),
    # The same with a "v" key: read as v0.2 as when "input" is written plainly.
    "input key escaped, a v key": V02.replace(b'"input"', b'"\\u0069nput"').replace(
        b'"version"', b'"v"'
    ),
    # strip_line takes one BOM; msgspec skipped the second one, the models do not.
    "two BOMs": UTF8_BOM + UTF8_BOM + V02,
}


@pytest.mark.parametrize("raw", _PARTED_ONCE.values(), ids=_PARTED_ONCE.keys())
def test_both_parsers_read_lines_that_once_parted_them_alike(raw: bytes) -> None:
    scanned, parsed = scan_line(raw), parse_line(raw)
    if isinstance(parsed, (Rejected, Comment, Blank)):
        assert scanned == parsed
    else:
        assert scanned == parsed.measurement()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "plain",
    [V02.replace(b'"0.8.dev0"', b'"v"'), V02.replace(b'"version"', b'"v"')],
    ids=["a string v", "a v key"],
)
def test_an_escaped_input_key_reads_as_the_plain_one(plain: bytes) -> None:
    """TVM reads the decoded keys (rules.layout): `"\\u0069nput"` is the "input" key."""
    escaped = plain.replace(b'"input"', b'"\\u0069nput"')
    for parse in (scan_line, parse_line):
        assert parse(escaped) == parse(plain)
    assert isinstance(scan_line(plain), Measurement)
