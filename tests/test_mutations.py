"""A mutation corpus made from real lines: nothing may raise, every bad line gets a reason.

Mutations of real v0.2 and v0.1 records (sample logs, and the corpus when ../shared is there):
truncation, flipped bytes, a wrong JSON type in every field, non-finite and huge numbers,
negative and empty costs, deep nesting, and the line-end and BOM variants that must still load.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import CORPUS, SAMPLE_LOGS
from tunelog.records import Rejected, TuningRecord, parse_line, scan_line

WRONG_TYPES: list[Any] = [None, True, 7, -1.5, "text", [], [1, "a"], {}, {"k": [1]}]


def _real_lines() -> list[bytes]:
    lines = [SAMPLE_LOGS.joinpath("x86_mini_llvm.log").read_bytes().splitlines()[5]]
    edge = SAMPLE_LOGS.joinpath("edge_cases.log").read_bytes().splitlines()
    lines += [line for line in edge if line.endswith(b'"v": 0.1}')]  # a v0.1 record
    for name in (
        "tophub/cuda_v0.10.log",
        "tophub/mali_v0.05.log",
        "WoongQ__RoboticAI2023_TVM/conv2d.log",
    ):
        path = CORPUS / name
        if path.is_file():
            lines += [line for line in path.read_bytes().splitlines() if line.startswith(b"{")][:1]
    return lines


REAL = _real_lines()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside a parsed record (lists and dicts, a few levels deep)."""
    if len(prefix) > 4:
        return
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))[:4]
    for key, child in items:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


def _replaced(line: bytes, path: tuple[Any, ...], new: Any) -> bytes:
    data = json.loads(line)
    node = data
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = new
    return json.dumps(data).encode()


def _type_mutations() -> list[bytes]:
    found = []
    for line in REAL:
        for path in _paths(json.loads(line)):
            for new in WRONG_TYPES:
                found.append(_replaced(line, path, new))
    return found


def _assert_never_raises_and_explains(raw: bytes) -> None:
    for parse in (parse_line, scan_line):
        parsed = parse(raw)
        if isinstance(parsed, Rejected):
            assert parsed.reason.strip()


def test_wrong_type_in_every_field_is_handled() -> None:
    mutations = _type_mutations()
    assert len(mutations) > 500
    for raw in mutations:
        _assert_never_raises_and_explains(raw)
    # Swapping the target string for a number must never produce a record.
    for line in REAL:
        key = "input" if b'"input"' in line else "i"
        assert isinstance(parse_line(_replaced(line, (key, 0), 7)), Rejected)


@pytest.mark.parametrize("line", REAL, ids=range(len(REAL)))
def test_every_truncation_is_rejected(line: bytes) -> None:
    for cut in range(1, len(line)):
        parsed = scan_line(line[:cut])
        assert isinstance(parsed, Rejected) or line[:cut].strip() == b"", cut


@pytest.mark.parametrize("line", REAL, ids=range(len(REAL)))
def test_flipped_bytes_never_raise(line: bytes) -> None:
    rng = random.Random(1234)
    for _ in range(300):
        mutated = bytearray(line)
        for _ in range(rng.randint(1, 3)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        _assert_never_raises_and_explains(bytes(mutated))


@pytest.mark.parametrize(
    "number",
    [
        b"NaN",
        b"Infinity",
        b"-Infinity",
        b"1e999",
        b"-1e999",
        b"-0.5",
        b"123456789012345678901234567890",
    ],
)
def test_odd_numbers_as_costs_are_rejected(number: bytes) -> None:
    for line in REAL:
        key = "result" if b'"result"' in line else "r"
        data = json.loads(line)
        data[key][0] = ["COST"]
        raw = json.dumps(data).encode().replace(b'"COST"', number)
        parsed = parse_line(raw)
        if number == b"123456789012345678901234567890":
            # A huge but finite cost is a (silly) valid measurement, like in TVM.
            assert isinstance(parsed, TuningRecord), parsed
        else:
            assert isinstance(parsed, Rejected), number
        # The import's fast path must reach the same verdict as the models.
        assert isinstance(scan_line(raw), Rejected) is isinstance(parsed, Rejected), number


def test_empty_costs_are_rejected() -> None:
    for line in REAL:
        key = "result" if b'"result"' in line else "r"
        assert isinstance(parse_line(_replaced(line, (key, 0), [])), Rejected)


@pytest.mark.parametrize("depth", [50, 5_000, 200_000])
def test_deeply_nested_arguments_never_raise(depth: int) -> None:
    line = REAL[0]
    nested = b"[" * depth + b"1" + b"]" * depth
    raw = line.replace(b'"TENSOR"', nested, 1)
    _assert_never_raises_and_explains(raw)


def test_a_ten_megabyte_line_is_rejected_quickly() -> None:
    raw = b'{"input": ["' + b"x" * (10 * 1024 * 1024) + b'"]}'
    parsed = scan_line(raw)
    assert isinstance(parsed, Rejected)


@pytest.mark.parametrize(
    "variant",
    [
        lambda line: line + b"\r\n",
        lambda line: b"\xef\xbb\xbf" + line + b"\n",
        lambda line: b"\xef\xbb\xbf" + line + b"\r\n",
        lambda line: line + b"   \n",
    ],
    ids=["crlf", "bom", "bom_crlf", "trailing_spaces"],
)
def test_line_end_and_bom_variants_load_as_the_same_record(variant: Any) -> None:
    for line in REAL:
        plain, varied = parse_line(line), parse_line(variant(line))
        assert isinstance(plain, TuningRecord) and isinstance(varied, TuningRecord)
        assert varied.measurement() == plain.measurement()


def test_nul_bytes_and_invalid_utf8_are_rejected_with_a_reason() -> None:
    for line in REAL:
        for bad in (line[:20] + b"\x00" + line[20:], line[:20] + b"\xff\xfe" + line[20:]):
            parsed = scan_line(bad)
            assert isinstance(parsed, Rejected) and parsed.reason


def test_the_corpus_lines_are_real() -> None:
    """Guard: the mutation corpus is made of lines that parse before mutation."""
    assert all(isinstance(parse_line(line), TuningRecord) for line in REAL)
    assert len(REAL) >= 2
