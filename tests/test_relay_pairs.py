"""export --winners-only keeps relay's template and config on pairs of TopHub packages.

Checked against an emulation of relay written apart from `tunelog.strategy_conditions`: the
if/else of TVM v0.19's strategy functions (python/tvm/relay/op/strategy/{cuda,rocm,adreno,mali,
intel_graphics,arm_cpu,x86}.py) transcribed for the operators these files hold (NCHW conv2d,
depthwise conv2d, conv2d_transpose, conv1d_transpose, dense, batch_matmul; no -libs, no int8),
and apply_history_best written out again (tvm-reference §3). For every target string of both
files, and each with a `-model` the files never saw, and every layer of either file, relay's
choice (template and config) over the exported file must be its choice over the two files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import tunelog
from tests.conftest import CORPUS, require_shared
from tunelog import api
from tunelog.store import Store
from tunelog.targets import parse_target

TOPHUB = CORPUS / "tophub"
OTHER_GPU_KINDS = ("adreno", "mali", "intel_graphics", "rocm", "amd_apu", "opencl")

# Pairs of packages of different device kinds that share a key: the newest versions, or with
# TUNELOG_ALL_TOPHUB_PAIRS=1 every pair of versions holding v0.2 records (133 pairs, ~2 min).
PAIRS = [
    ("cuda_v0.10.log", "adreno_v0.02.log"),
    ("cuda_v0.10.log", "adreno_v0.01.log"),
    ("cuda_v0.10.log", "mali_v0.06.log"),
    ("cuda_v0.10.log", "intel_graphics_v0.02.log"),
    ("cuda_v0.10.log", "rocm_v0.05.log"),
    ("cuda_v0.10.log", "amd_apu_v0.01.log"),
    ("cuda_v0.10.log", "opencl_v0.04.log"),
    ("llvm_v0.04.log", "arm_cpu_v0.08.log"),
]
NEWEST = list(PAIRS)
if os.environ.get("TUNELOG_ALL_TOPHUB_PAIRS") == "1":

    def _versions(kind: str) -> list[str]:
        return sorted(path.name for path in TOPHUB.glob(f"{kind}_v*.log"))

    PAIRS = [
        (first, second)
        for kinds in [("cuda", k) for k in OTHER_GPU_KINDS] + [("llvm", "arm_cpu")]
        for first in _versions(kinds[0])
        for second in _versions(kinds[1])
        if b'{"input"' in (TOPHUB / first).read_bytes() + (TOPHUB / second).read_bytes()
    ]


class Record(NamedTuple):
    target: str
    task: str
    args: list[Any]
    workload: str  # task and args as apply_history_best keys them
    cost: float  # mean of the costs; error_no != 0 never gets here
    config: int


def _records(lines: Iterable[bytes]) -> list[Record]:
    found = []
    for raw in lines:
        text = raw.decode().strip()
        if not text or text.startswith("#"):
            continue
        row = json.loads(text)
        if "input" not in row:
            continue  # a v0.1 line ({"i": ...}): TVM >= 0.7 skips it
        target, task, args = row["input"][0], row["input"][1], row["input"][2]
        costs, error_no = row["result"][0], row["result"][1]
        if error_no != 0 or row.get("version") == 0.1 or not task.count("."):
            continue  # TVM >= 0.7 skips v0.1 records
        workload = json.dumps([task, args])
        found.append(
            Record(target, task, args, workload, sum(costs) / len(costs), row["config"]["index"])
        )
    return found


def _history(records: list[Record]) -> dict[tuple[str, str], Record]:
    """apply_history_best's slots: per key (and model), the strictly fastest record first seen."""
    slots: dict[tuple[str, str], Record] = {}
    for record in records:
        parsed = parse_target(record.target)
        names = list(parsed.keys) + ([parsed.model] if parsed.model != "unknown" else [])
        for name in names:
            holder = slots.get((name, record.workload))
            if holder is None or holder.cost > record.cost:
                slots[(name, record.workload)] = record
    return slots


def _query(slots: dict[tuple[str, str], Record], target: str, workload: str) -> Record | None:
    parsed = parse_target(target)
    for name in [parsed.model, *parsed.keys]:
        if (name, workload) in slots:
            return slots[(name, workload)]
    return None


# -- relay, transcribed -------------------------------------------------------------------------


class Call(NamedTuple):
    """One relay operator call, as these files spell it."""

    op: str  # conv2d (groups 1 or depthwise), conv2d_transpose, conv1d_transpose, dense, ...
    depthwise: bool
    data: tuple[int, ...]
    kernel: tuple[int, ...]
    dtype: str
    strides: tuple[int, ...]
    dilation: tuple[int, ...]
    rest: str  # everything else, to tell calls apart


def _pair(value: Any) -> tuple[int, ...]:
    return (value, value) if isinstance(value, int) else tuple(value)


def _call(task: str, args: list[Any]) -> Call:
    stem = task.split(".")[0]
    data, kernel = tuple(args[0][1]), tuple(args[1][1])
    dtype = args[0][2]
    if stem.startswith(("dense", "batch_matmul")):
        return Call(stem.split("_")[0] if stem.startswith("dense") else "batch_matmul", False,
                    data, kernel, dtype, (), (), json.dumps(args[2:]))  # fmt: skip
    if "transpose" in stem:
        op = "conv1d_transpose" if stem.startswith("conv1d") else "conv2d_transpose"
        return Call(op, False, data, kernel, dtype, (), (), json.dumps(args[2:]))
    strides, dilation = _pair(args[2]), _pair(args[4])
    padding = args[3] if len(args[3]) == 4 else args[3] * 2
    return Call("conv2d", stem.startswith("depthwise"), data, kernel, dtype, strides, dilation,
                json.dumps([padding, args[-1]]))  # fmt: skip


def _conv2d(key: str, kind: str, call: Call) -> list[str]:
    """The conv2d strategy of `key` for an NCHW float call (groups 1, or depthwise)."""
    oc, _, kh, kw = call.kernel
    unit = call.strides == (1, 1) and call.dilation == (1, 1)
    if call.depthwise:
        multiplier = call.kernel[1]
        if key in ("cuda", "gpu", "rocm"):
            return ["depthwise_conv2d_nchw.cuda"]  # cuda.py:380-389
        if key == "adreno":  # adreno.py:142-160
            return ["depthwise_conv2d_nchw.cuda" if oc < 4 else "depthwise_conv2d_nchwc.image2d"]
        if key == "mali":
            return ["depthwise_conv2d_nchw.mali"]  # mali.py:135-142
        if key == "intel_graphics":
            return ["depthwise_conv2d_nchw.intel_graphics"]  # intel_graphics.py:56-63
        x86 = ["depthwise_conv2d_NCHWc.x86"] if multiplier == 1 and call.dilation == (1, 1) else []
        if key == "arm_cpu":  # arm_cpu.py:308-350 (float data: no DSP)
            return ["depthwise_conv2d_nchw.arm_cpu", *x86]
        return x86  # x86.py:205-214
    if key in ("cuda", "gpu", "rocm"):  # cuda.py:148-204
        int8 = kind in ("cuda", "vulkan", "rocm") and call.dtype in ("int8", "uint8")
        names = ["conv2d_NCHWc_int8.cuda" if int8 else "conv2d_nchw.cuda"]
        if 2 < kh < 8 and 2 < kw < 8 and kh == kw and unit:
            names.append("conv2d_nchw_winograd.cuda")
        return names
    if key == "adreno":  # adreno.py:38-74
        if oc < 4:
            return ["conv2d_nchw.cuda"]
        names = ["conv2d_nchwc.image2d"]
        if 2 < kh < 8 and 2 < kw < 8 and kh == kw and unit:
            names.append("conv2d_nchw_winograd.image2d")
        return names
    if key == "mali":  # mali.py:43-65
        return ["conv2d_nchw_spatial_pack.mali"] + (
            ["conv2d_nchw_winograd.mali"] if (kh, kw) == (3, 3) and unit else []
        )
    if key == "intel_graphics":
        return ["conv2d_NCHWc.intel_graphics"]  # intel_graphics.py:36-53
    if key == "arm_cpu":  # arm_cpu.py:125-173 (float data)
        names = ["conv2d_nchw_spatial_pack.arm_cpu", "conv2d_NCHWc.x86"]
        if (kh, kw) == (3, 3) and unit:
            names.append("conv2d_nchw_winograd.arm_cpu")
        return names
    return ["conv2d_NCHWc.x86"]  # x86.py:117-137 (float data, no -libs=dnnl)


def _templates(target: str, call: Call) -> list[str]:
    """What relay's strategy for `target` offers `call` (tuning task names)."""
    parsed = parse_target(target)
    registered = {  # which keys register each operator's strategy
        "conv2d": ("cuda", "gpu", "rocm", "adreno", "mali", "intel_graphics", "arm_cpu", "cpu"),
        "conv2d_transpose": ("cuda", "gpu", "adreno", "arm_cpu", "cpu"),
        "conv1d_transpose": ("cuda", "gpu", "cpu"),
        "dense": ("cuda", "gpu", "rocm", "mali", "arm_cpu", "cpu"),
        "batch_matmul": ("cuda", "gpu", "rocm", "cpu"),
    }[call.op]
    key = next((k for k in parsed.keys if k in registered), None)
    if key is None:
        return []
    if call.op == "conv2d":
        return _conv2d(key, parsed.kind, call)
    if call.op == "conv2d_transpose":
        if key == "adreno":  # adreno.py:258-281: IOHW kernel, output channels kernel[1]
            return ["conv2d_transpose_nchw.cuda" if call.kernel[1] < 4 else
                    "conv2d_transpose_nchwc.image2d"]  # fmt: skip
        return {"arm_cpu": ["conv2d_transpose_nchw.arm_cpu"], "cpu": []}.get(
            key, ["conv2d_transpose_nchw.cuda"]
        )
    if call.op == "conv1d_transpose":
        return ["conv1d_transpose_nchw.cuda"] if key in ("cuda", "gpu") else []
    if call.op == "dense":
        if key == "mali":
            return ["dense.mali"]  # mali.py:212-234
        if key in ("arm_cpu", "cpu"):
            return ["dense_nopack.x86", "dense_pack.x86"]  # x86.py:531-541, arm_cpu.py:752-761
        names = [] if parsed.kind == "rocm" else ["dense_small_batch.gpu"]  # cuda.py:911-927
        if parsed.kind == "rocm" or call.data[0] >= 32:
            names.append("dense_large_batch.gpu")
        return names
    return ["batch_matmul.cuda"] if key != "cpu" else ["batch_matmul.x86"]  # cuda.py:978-983


def _relay_choice(
    slots: dict[tuple[str, str], Record], target: str, call: Call, spellings: dict[str, set[str]]
) -> tuple[str, int, float] | None:
    """Relay's pick: the offered template whose answer is strictly fastest (first on ties)."""
    best: Record | None = None
    for template in _templates(target, call):
        for workload in sorted(spellings.get(template, ())):
            holder = _query(slots, target, workload)
            if holder is not None and (best is None or holder.cost < best.cost):
                best = holder
    return None if best is None else (best.task, best.config, best.cost)


def _target_strings(records: list[Record]) -> list[str]:
    seen = list(dict.fromkeys(r.target for r in records))
    unseen = []
    for target in seen:
        words = [w for w in target.split() if not w.startswith("-model=")]
        unseen.append(" ".join([*words, "-model=never-seen"]))
    return seen + unseen


def _choices(
    lines: list[bytes], targets: list[str], calls: dict[Call, dict[str, set[str]]]
) -> dict[tuple[str, Call], object]:
    slots = _history(_records(lines))
    return {
        (target, call): _relay_choice(slots, target, call, spellings)
        for target in targets
        for call, spellings in calls.items()
    }


@pytest.mark.slow
@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_winners_only_keeps_relays_template_and_config_for_every_target_and_layer(
    tmp_path: Path, first: str, second: str
) -> None:
    require_shared()
    paths = [TOPHUB / first, TOPHUB / second]
    full = [line for path in paths for line in path.read_bytes().splitlines()]
    records = _records(full)
    calls: dict[Call, dict[str, set[str]]] = {}
    for record in records:
        spelled = calls.setdefault(_call(record.task, record.args), {})
        spelled.setdefault(record.task, set()).add(record.workload)
    targets = _target_strings(records)
    out = tmp_path / "winners.log"
    with Store(tmp_path / "pair.db") as store:
        tunelog.import_paths(store, [str(p) for p in paths])
        report = api.export(store, str(out), winners_only=True)
    if (first, second) in NEWEST:
        assert report.skipped_losing_templates > 0  # something was left out ...
    expected = _choices(full, targets, calls)
    answered = sum(1 for choice in expected.values() if choice is not None)
    assert answered > (100 if (first, second) in NEWEST else 0)
    assert _choices(out.read_bytes().splitlines(), targets, calls) == expected  # ... safely
