"""Workload identity and its two JSON writers (tunelog.rules.workloadidentity), one table of
cases run through every output that depends on each writer.

`canonical_json` gives the stored args (both record parsers, the database, exported lines);
`sorted_json` gives derived text (the fallback layer key, the short text of unread args). The
two differ in bytes on purpose; each case pins the bytes of both, as they were before the
writers had one home.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from tunelog.records import Measurement, parse_line, scan_line
from tunelog.recordvalues import Rejected
from tunelog.rules.workloadidentity import (
    IDENTITY_FIELDS,
    IDENTITY_LENGTH,
    canonical_json,
    sorted_json,
    workload_json,
    workload_key,
)
from tunelog.workloads import layer_key, short_args

NAN, INF = float("nan"), float("inf")

# (args, canonical_json, sorted_json): where the writers agree and every way they differ.
CASES: list[tuple[list[Any], str, str]] = [
    ([], "[]", "[]"),
    ([[[]]], "[[[]]]", "[[[]]]"),
    ([1, "a", None, True, False], '[1,"a",null,true,false]', '[1,"a",null,true,false]'),
    (
        [["TENSOR", [1, 3, 224, 224], "float32"], [1, 1], "NCHW"],
        '[["TENSOR",[1,3,224,224],"float32"],[1,1],"NCHW"]',
        '[["TENSOR",[1,3,224,224],"float32"],[1,1],"NCHW"]',
    ),
    # keys: log order vs sorted
    ([{"b": 1, "a": [2]}], '[{"b":1,"a":[2]}]', '[{"a":[2],"b":1}]'),
    # non-ASCII: UTF-8 vs escaped; control characters escaped by both
    (
        ["é", "\u2028", "\x01", "/"],
        '["é","\u2028","\\u0001","/"]',
        '["\\u00e9","\\u2028","\\u0001","/"]',
    ),
    # floats: orjson's and Python's spellings differ on small exponents
    (
        [1e16, 0.1, -0.0, 1.0, 1e-7, 123456789.0],
        "[1e+16,0.1,-0.0,1.0,1e-7,123456789.0]",
        "[1e+16,0.1,-0.0,1.0,1e-07,123456789.0]",
    ),
    # past 64 bits: canonical_json falls back to Python's json
    (
        [2**64, -(2**63) - 1],
        "[18446744073709551616,-9223372036854775809]",
        "[18446744073709551616,-9223372036854775809]",
    ),
    # not JSON (a lenient reader's NaN; 1e400 reads as inf): Python's spellings in both (orjson
    # writes null for each, which made strides 1e400 and -1e400 one workload)
    ([NAN, INF, -INF], "[NaN,Infinity,-Infinity]", "[NaN,Infinity,-Infinity]"),
    ([[INF, 1], None], "[[Infinity,1],null]", "[[Infinity,1],null]"),
]
IDS = [f"case{i}" for i in range(len(CASES))]


def _is_json(args: list[Any]) -> bool:
    return not any(isinstance(a, float) and not math.isfinite(a) for a in args)


def _line(args_text: str) -> bytes:
    record = {
        "input": ["llvm -keys=cpu", "my_template", "@ARGS@", {}],
        "config": {"index": 1, "code_hash": None, "entity": []},
        "result": [[0.5], 0, 1.0, 1700000000.0],
        "version": 0.2,
        "tvm_version": "0.8.0",
    }
    return json.dumps(record).replace('"@ARGS@"', args_text).encode()


@pytest.mark.parametrize(("args", "canonical", "ordered"), CASES, ids=IDS)
def test_each_writer_keeps_its_bytes(args: list[Any], canonical: str, ordered: str) -> None:
    assert canonical_json(args) == canonical
    assert sorted_json(args) == ordered


@pytest.mark.parametrize(("args", "canonical", "ordered"), CASES, ids=IDS)
def test_sorted_json_is_what_json_dumps_writes(
    args: list[Any], canonical: str, ordered: str
) -> None:
    assert ordered == json.dumps(args, sort_keys=True, separators=(",", ":"), default=repr)


@pytest.mark.parametrize(("args", "canonical", "ordered"), CASES, ids=IDS)
def test_both_record_parsers_store_canonical_json(
    args: list[Any], canonical: str, ordered: str
) -> None:
    if not _is_json(args):
        pytest.skip("a JSON log cannot hold NaN")
    line = _line(json.dumps(args, ensure_ascii=False))
    fast = scan_line(line)  # the msgspec path
    assert isinstance(fast, Measurement), fast
    model = parse_line(line)  # the pydantic models
    assert not isinstance(model, Rejected), model
    stored = model.measurement()  # type: ignore[union-attr]
    assert fast.args_json == stored.args_json == canonical
    assert fast.workload_json == workload_json("my_template", canonical)


@pytest.mark.parametrize(("args", "canonical", "ordered"), CASES, ids=IDS)
def test_fallback_layer_key_and_short_text_use_sorted_json(
    args: list[Any], canonical: str, ordered: str
) -> None:
    assert layer_key("my_template", "", args) == f"my_template|args={ordered}"
    if args and all(not isinstance(a, (list, str)) and a is not None for a in args):
        assert short_args("my_template", args) == " ".join(sorted_json(a) for a in args)[:120]


def test_workload_json_puts_the_task_name_first() -> None:
    assert workload_json("conv2d_nchw.cuda", "[1,2]") == '["conv2d_nchw.cuda",1,2]'
    assert workload_json("té", "[]") == '["té"]'


def test_identity_fields_are_a_measurements_first_fields() -> None:
    """The importer groups on `rec[:IDENTITY_LENGTH]` and `recordvalues.stored_measurement`
    takes a stored record's identity in this order: both rely on it."""
    assert Measurement._fields[:IDENTITY_LENGTH] == IDENTITY_FIELDS
    fast = scan_line(_line("[1]"))
    assert isinstance(fast, Measurement)
    assert fast[:IDENTITY_LENGTH] == ("0.2", "llvm -keys=cpu", "my_template", "", "[1]")
    assert workload_key(fast) == ("my_template", "", "[1]", "0.2")


def test_strides_beyond_every_float_of_either_sign_are_two_workloads() -> None:
    """1e400 and -1e400 read as inf and -inf (as TVM's json.loads reads them): two workloads
    to TVM, one to tunelog while their canonical JSON was orjson's (null for both)."""
    texts = ['[[1e400, 1], "NCHW"]', '[[-1e400, 1], "NCHW"]']
    fast = [scan_line(_line(text)) for text in texts]
    assert all(isinstance(m, Measurement) for m in fast)
    assert [m.args_json for m in fast] == [  # type: ignore[union-attr]
        '[[Infinity,1],"NCHW"]',
        '[[-Infinity,1],"NCHW"]',
    ]
    model = [parse_line(_line(text)).measurement() for text in texts]  # type: ignore[union-attr]
    assert [m.args_json for m in model] == [m.args_json for m in fast]  # type: ignore[union-attr]
