"""The target-key rule (tvm-reference §2) and the targets found in the corpus."""

from __future__ import annotations

import json

import pytest

from tests.conftest import corpus_log_for, golden_files, require_shared
from tunelog.exceptions import TargetParseError
from tunelog.records import TuningRecord, parse_line
from tunelog.targets import parse_target


@pytest.mark.parametrize(
    ("target", "keys", "model"),
    [
        # The examples of tvm-reference §2.
        ("opencl -device=mali", ("mali", "opencl", "gpu"), "unknown"),
        ("llvm -device=arm_cpu -model=rk3399", ("arm_cpu", "cpu"), "rk3399"),
        ("llvm -keys=foo", ("foo",), "unknown"),
        ("ext_dev -device=vta", ("vta",), "unknown"),
        ("cuda -device=foo -keys=bar,gpu", ("bar", "gpu", "foo"), "unknown"),
        ("cuda -model=titanx", ("cuda", "gpu"), "titanx"),
        (
            "llvm -keys=cpu -link-params=0 -mcpu=skylake-avx512 -model=platinum-8124m",
            ("cpu",),
            "platinum-8124m",
        ),
        # Targets from the corpus, including the aarch64 parser rule the golden files show.
        ("llvm -keys=cpu ", ("cpu",), "unknown"),
        (
            "llvm -keys=cpu -link-params=0 -mcpu=cortex-a75 -mtriple=aarch64-linux-gnu",
            ("cpu", "arm_cpu"),
            "unknown",
        ),
        (
            "llvm -device=arm_cpu -model=pynq -target=armv7a-linux-eabi -mattr=+neon",
            ("arm_cpu", "cpu"),
            "pynq",
        ),
        ("opencl -model=rk3399 -device=mali", ("mali", "opencl", "gpu"), "rk3399"),
        (
            "opencl -device=intel_graphics -model=unknown",
            ("intel_graphics", "opencl", "gpu"),
            "unknown",
        ),
        (
            "opencl -keys=adreno,opencl,gpu -device=adreno -max_num_threads=256",
            ("adreno", "opencl", "gpu"),
            "unknown",
        ),
        ("ext_dev -device=vta -keys=cpu -model=pynq_1x16", ("cpu", "vta"), "pynq_1x16"),
        ("vulkan -model=v1000", ("vulkan", "gpu"), "v1000"),
        ("rocm -model=gfx900", ("rocm", "gpu"), "gfx900"),
        ("llvm -mcpu=cortex-m7", ("arm_cpu", "cpu"), "unknown"),
        # The `c` kind takes the same CPU parser (microTVM; as TVM 0.16 parses these).
        ("c -mcpu=cortex-m55", ("arm_cpu", "cpu"), "unknown"),
        ("c -mcpu=cortex-m7 -model=stm32", ("arm_cpu", "cpu"), "stm32"),
        ("c -keys=foo -mcpu=cortex-m4", ("foo", "arm_cpu", "cpu"), "unknown"),
        ("c -device=arm_cpu", ("arm_cpu", "cpu"), "unknown"),
        ("c", ("cpu",), "unknown"),
        ("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512", ("cpu",), "unknown"),
    ],
)
def test_keys_and_model(target: str, keys: tuple[str, ...], model: str) -> None:
    parsed = parse_target(target)
    assert parsed.keys == keys
    assert parsed.model == model


def test_legacy_target_option_becomes_mtriple() -> None:
    parsed = parse_target("llvm -device=arm_cpu -target=aarch64-linux-gnu")
    assert parsed.option("mtriple") == "aarch64-linux-gnu"
    assert parsed.option("target") is None


@pytest.mark.parametrize(
    ("target", "sanitized"),
    [
        (
            "llvm -keys=cpu -link-params=0 -mcpu=skylake-avx512",
            "llvm -keys=cpu -mcpu=skylake-avx512",
        ),
        ("c -keys=cpu -link-params=0 -model=host -runtime=c", "c -keys=cpu -model=host"),
        (
            "llvm -system-lib -mtriple=wasm32-unknown-unknown",
            "llvm -mtriple=wasm32-unknown-unknown",
        ),
    ],
)
def test_options_tvm_rejects_are_load_problems_and_dropped_by_sanitized(
    target: str, sanitized: str
) -> None:
    parsed = parse_target(target)
    assert parsed.load_problems
    assert parsed.sanitized() == sanitized
    assert not parse_target(parsed.sanitized()).load_problems


@pytest.mark.parametrize(
    ("target", "problems"),
    [
        ("cuda -model", ("option -model has no value: write -model=VALUE",)),
        ("llvm -keys=", ("option -keys= has an empty value",)),
        # a boolean flag needs no value, but TVM 0.16 refuses this one (checked)
        (
            "llvm -system-lib -mcpu=znver3",
            ("TVM 0.16 rejects the -system-lib target option (relay.build's runtime now)",),
        ),
        ("cuda -model=t4", ()),
        # refused by TVM 0.16 (checked), found by a round-trip hunt: exported unflagged
        (
            "c -keys=cpu -model=host -runtime=c",
            ("TVM 0.16 rejects the -runtime target option (relay.build's runtime now)",),
        ),
        (
            "c -executor=aot -interface-api=c -unpacked-api=1",
            (
                "TVM 0.16 rejects the -executor target option (relay.build's executor now)",
                "TVM 0.16 rejects the -interface-api target option (relay.build's executor now)",
                "TVM 0.16 rejects the -unpacked-api target option (relay.build's executor now)",
            ),
        ),
        ("cuda -model=a -model=b", ("option -model is given twice",)),
    ],
)
def test_an_option_without_a_value_is_a_load_problem(
    target: str, problems: tuple[str, ...]
) -> None:
    # The record is read (AutoTVM's decoder), but TVM's target parser reads it otherwise.
    assert parse_target(target).load_problems == problems


def test_unknown_kind_is_a_load_problem() -> None:
    assert parse_target("tpu -model=x").load_problems == ("unknown target kind 'tpu'",)


@pytest.mark.parametrize("bad", ["", "   ", "-keys=cpu", "cuda model=x", "cuda -=x"])
def test_malformed_targets_raise(bad: str) -> None:
    with pytest.raises(TargetParseError):
        parse_target(bad)


@pytest.mark.slow
@pytest.mark.parametrize("golden", golden_files(), ids=[g.name for g in golden_files()])
def test_every_corpus_target_keys_match_golden_slots(golden: object) -> None:
    """Each golden key slot names a key our rule gives that record's target, and vice versa."""
    require_shared()
    from pathlib import Path

    assert isinstance(golden, Path)
    expected = json.loads(golden.read_text())
    keys_by_line: dict[int, set[str]] = {}
    for slot, holder in expected["by_targetkey"].items():
        keys_by_line.setdefault(holder["line"], set()).add(slot.split("\t", 1)[0])
    lines = corpus_log_for(golden).read_bytes().splitlines()
    for line_no, keys in keys_by_line.items():
        record = parse_line(lines[line_no - 1])
        assert isinstance(record, TuningRecord)
        assert keys <= set(parse_target(record.target).keys), (line_no, record.target)
