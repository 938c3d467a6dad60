"""Deterministic synthetic AutoTVM v0.2 tuning logs, shaped like the real corpus.

Usage: python bench/generate.py N OUT [--seed S]

The log mixes five targets (CUDA T4, two x86 CPUs, a Mali GPU, an ARM CPU) and their usual
templates over a few hundred workloads (ResNet, MobileNet and BERT layer shapes). Each workload is
tuned in one contiguous session: configs are drawn from the template's real config space (split,
reorder, annotate and other knobs; `index` is the mixed-radix position in that space), costs are
1-3 repeats around a per-workload latency, about 10% of trials fail (error 1, 4 or 6) and
timestamps strictly increase, so no two lines are equal. Lines are byte-identical to what
`json.dumps` writes for AutoTVM's key order.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TVM_VERSION = "0.9.dev0"
FAILED_COSTS = "[1000000000.0]"
FAILURE_RATE = 0.10
WRITE_CHUNK = 20_000

CUDA = "cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32"
X86 = "llvm -keys=cpu -mcpu=skylake-avx512 -model=platinum-8124m"
X86_GENERIC = "llvm -keys=cpu -link-params=0"
MALI = "opencl -device=mali -model=rk3399"
ARM = "llvm -device=arm_cpu -model=rk3399 -mtriple=aarch64-linux-gnu"

# Best achievable throughput per target (GFLOP/s): sets the scale of the measured latencies.
GFLOPS = {CUDA: 4000.0, X86: 900.0, X86_GENERIC: 300.0, MALI: 25.0, ARM: 15.0}

# Conv layers (in channels, input size, out channels, kernel, stride, padding), batch 1, square.
CONVS = sorted(
    {
        (3, 224, 64, 7, 2, 3),
        (3, 224, 32, 3, 2, 1),
        (32, 112, 64, 1, 1, 0),
        (64, 56, 64, 1, 1, 0),
        (64, 56, 64, 3, 1, 1),
        (64, 56, 256, 1, 1, 0),
        (256, 56, 64, 1, 1, 0),
        (64, 56, 128, 1, 1, 0),
        (64, 56, 128, 3, 2, 1),
        (64, 56, 128, 1, 2, 0),
        (128, 56, 128, 1, 1, 0),
        (128, 56, 128, 3, 2, 1),
        (128, 28, 128, 3, 1, 1),
        (128, 28, 256, 1, 1, 0),
        (128, 28, 256, 3, 2, 1),
        (128, 28, 256, 1, 2, 0),
        (128, 28, 512, 1, 1, 0),
        (512, 28, 128, 1, 1, 0),
        (256, 56, 512, 1, 2, 0),
        (256, 28, 256, 1, 1, 0),
        (256, 28, 256, 3, 2, 1),
        (512, 28, 256, 1, 1, 0),
        (256, 14, 256, 3, 1, 1),
        (256, 14, 512, 1, 1, 0),
        (256, 14, 512, 3, 2, 1),
        (256, 14, 512, 1, 2, 0),
        (256, 14, 1024, 1, 1, 0),
        (1024, 14, 256, 1, 1, 0),
        (512, 14, 512, 1, 1, 0),
        (512, 14, 512, 3, 2, 1),
        (512, 28, 1024, 1, 2, 0),
        (1024, 14, 512, 1, 1, 0),
        (512, 7, 512, 3, 1, 1),
        (512, 7, 1024, 1, 1, 0),
        (1024, 7, 1024, 1, 1, 0),
        (512, 7, 2048, 1, 1, 0),
        (2048, 7, 512, 1, 1, 0),
        (1024, 14, 2048, 1, 2, 0),
    }
)
# Depthwise layers (channels, input size, stride), 3x3, padding 1.
DEPTHWISE = [
    (32, 112, 1),
    (64, 112, 2),
    (128, 56, 1),
    (128, 56, 2),
    (256, 28, 1),
    (256, 28, 2),
    (512, 14, 1),
    (512, 14, 2),
    (1024, 7, 1),
]
# Dense layers (batch, in features, out features).
DENSE = [
    (1, 512, 1000),
    (1, 1024, 1000),
    (1, 2048, 1000),
    (1, 4096, 4096),
    (1, 25088, 4096),
    (1, 768, 768),
    (1, 768, 3072),
    (1, 3072, 768),
    (1, 768, 2),
]
DENSE_BATCHED = [(128, 768, 768), (128, 768, 3072), (128, 3072, 768), (128, 768, 2304)]
# Batch matmul (batch, M, N, K) as in BERT attention.
BATCH_MATMUL = [(12, 128, 128, 64), (12, 128, 64, 128), (16, 64, 64, 64), (12, 384, 384, 64)]

UNROLL_STEPS = ["0", "512", "1500"]
BOOLS = ["false", "true"]


def tensor(shape: Sequence[int]) -> list[Any]:
    """A TVM tensor argument as AutoTVM serializes it."""
    return ["TENSOR", list(shape), "float32"]


@cache
def factorizations(extent: int, parts: int) -> tuple[tuple[int, ...], ...]:
    """Every ordered way to split `extent` into `parts` factors (AutoTVM's split space)."""
    if parts == 1:
        return ((extent,),)
    out: list[tuple[int, ...]] = []
    for factor in range(1, extent + 1):
        if extent % factor == 0:
            out.extend((factor, *rest) for rest in factorizations(extent // factor, parts - 1))
    return tuple(out)


def knob_json(name: str, kind: str, values: Sequence[str]) -> tuple[str, ...]:
    """The serialized `[name, kind, value]` entity entries for each option of one knob."""
    return tuple(f'["{name}", "{kind}", {value}]' for value in values)


def split(name: str, extent: int, parts: int, limit: int = 0) -> tuple[str, ...]:
    """A split knob; the outer factor is written as -1, as modern AutoTVM does."""
    options = [f for f in factorizations(extent, parts) if not limit or f[-1] <= limit]
    return knob_json(name, "sp", [json.dumps([-1, *f[1:]]) for f in options])


def other(name: str, values: Sequence[str]) -> tuple[str, ...]:
    """An `ot` knob (plain values)."""
    return knob_json(name, "ot", values)


def annotate(name: str, per_axis: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """An `an` knob: one annotation per axis."""
    combos = itertools.product(*per_axis)
    return knob_json(name, "an", [json.dumps(list(c)) for c in combos])


def reorder(name: str, perms: Sequence[Sequence[int]]) -> tuple[str, ...]:
    """An `re` knob with candidate permutations."""
    return knob_json(name, "re", [json.dumps(list(p)) for p in perms])


def gpu_unroll(steps: Sequence[str] = UNROLL_STEPS) -> list[tuple[str, ...]]:
    """The unroll knobs every CUDA template defines."""
    return [other("auto_unroll_max_step", steps), other("unroll_explicit", ["0", "1"])]


@dataclass(frozen=True)
class Workload:
    """One (target, template, args) with its config space and best latency."""

    target: str
    task: str
    args: list[Any]
    knobs: list[tuple[str, ...]]
    flops: float

    @property
    def input_json(self) -> str:
        """The serialized `input` field."""
        return json.dumps([self.target, self.task, self.args, {}])


def out_size(size: int, kernel: int, stride: int, pad: int) -> int:
    """Output height/width of a convolution."""
    return (size + 2 * pad - kernel) // stride + 1


def conv_args(layer: tuple[int, ...], depthwise: bool = False) -> list[Any]:
    """NCHW conv2d args: data, kernel, strides, padding, dilation, dtype."""
    c, h, o, k, s, p = layer
    kernel = [c, 1, k, k] if depthwise else [o, c, k, k]
    return [tensor([1, c, h, h]), tensor(kernel), [s, s], [p, p, p, p], [1, 1], "float32"]


def conv_flops(layer: tuple[int, ...], depthwise: bool = False) -> float:
    """FLOPs of a conv layer."""
    c, h, o, k, s, p = layer
    oh = out_size(h, k, s, p)
    return 2.0 * oh * oh * k * k * (c if depthwise else o * c)


def conv_space(template: str, layer: tuple[int, ...]) -> list[tuple[str, ...]]:
    """The knobs of a conv2d template for one layer."""
    c, h, o, k, s, p = layer
    oh = out_size(h, k, s, p)
    if template == "conv2d_nchw.cuda":
        return [
            split("tile_f", o, 4),
            split("tile_y", oh, 4),
            split("tile_x", oh, 4),
            split("tile_rc", c, 2),
            split("tile_ry", k, 2),
            split("tile_rx", k, 2),
            *gpu_unroll(),
        ]
    if template == "conv2d_nchw_winograd.cuda":
        tiles = ((oh + 3) // 4) ** 2
        return [
            split("tile_b", 36, 4),
            split("tile_y", o, 4),
            split("tile_x", tiles, 4),
            split("tile_rc", c, 2),
            *gpu_unroll(["0", "128", "1500"]),
        ]
    if template == "depthwise_conv2d_nchw.cuda":
        return [
            split("tile_f", c, 4),
            split("tile_y", oh, 4),
            split("tile_x", oh, 4),
            *gpu_unroll(["0", "256", "1500"]),
        ]
    if template == "conv2d_NCHWc.x86":
        last = other("unroll_kw", BOOLS) if k > 1 else other("tile_oh", ["1", "2"])
        return [
            split("tile_ic", c, 2),
            split("tile_oc", o, 2),
            split("tile_ow", oh, 2, limit=64),
            last,
        ]
    return arm_conv_space(template, layer)


SPATIAL_ORDERS = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [0, 1, 2, 3, 4, 5, 6, 9, 7, 8],
    [0, 1, 2, 3, 4, 5, 6, 8, 7, 9],
]
ANN = ["none", "unroll"]
ANN_VEC = ["none", "unroll", "vec"]


def arm_conv_space(template: str, layer: tuple[int, ...]) -> list[tuple[str, ...]]:
    """The knobs of the ARM CPU and Mali conv2d templates."""
    c, h, o, k, s, p = layer
    oh = out_size(h, k, s, p)
    parts = 3 if template.endswith(".mali") else 2
    if template.startswith("depthwise"):
        return [
            split("tile_c", c, parts),
            split("tile_y", oh, parts),
            split("tile_x", oh, parts),
            annotate("ann_spatial", [ANN, ANN, ANN_VEC]),
        ]
    if template == "conv2d_nchw_winograd.arm_cpu":
        tiles = ((oh + 3) // 4) ** 2
        return [
            split("tile_p", tiles, 2),
            split("tile_k", o, 2),
            split("tile_c", c, 2),
            annotate("ann_reduce", [ANN]),
            annotate("ann_spatial", [ANN_VEC, ANN]),
        ]
    return [
        split("tile_co", o, parts),
        split("tile_oh", oh, parts),
        split("tile_ow", oh, parts),
        reorder("reorder_0", SPATIAL_ORDERS),
        annotate("ann_reduce", [ANN, ANN]),
        annotate("ann_spatial", [ANN, ANN, ANN_VEC]),
    ]


def dense_space(template: str, batch: int, n_in: int, n_out: int) -> list[tuple[str, ...]]:
    """The knobs of a dense template."""
    if template == "dense_small_batch.gpu":
        return [split("tile_k", n_in, 2)]
    if template == "dense_nopack.x86":
        return [split("tile_y", batch, 2), split("tile_x", n_out, 2), split("tile_k", n_in, 2)]
    if template == "dense_pack.x86":
        return [
            split("tile_y", batch, 3),
            split("tile_x", n_out, 3),
            split("tile_k", n_in, 2),
            split("tile_inner", batch, 2),
        ]
    return [split("tile_y", batch, 3), split("tile_x", n_out, 3), split("c_unroll", n_in, 2)]


def conv_workloads(target: str, templates: Sequence[str]) -> Iterator[Workload]:
    """Conv2d workloads of a target: all layers, Winograd only for 3x3 stride 1."""
    for template in templates:
        for layer in CONVS:
            if "winograd" in template and (layer[3] != 3 or layer[4] != 1):
                continue
            space = conv_space(template, layer)
            args = conv_args(layer)
            if template.endswith(".x86"):
                args = [*args[:5], "NCHW", "NCHW", "float32"]
            yield Workload(target, template, args, space, conv_flops(layer))


def depthwise_workloads(target: str, template: str) -> Iterator[Workload]:
    """Depthwise conv2d workloads of a target."""
    for c, h, s in DEPTHWISE:
        layer = (c, h, c, 3, s, 1)
        space = conv_space(template, layer)
        yield Workload(target, template, conv_args(layer, True), space, conv_flops(layer, True))


def dense_workloads(
    target: str, templates: Sequence[str], shapes: Sequence[tuple[int, int, int]]
) -> Iterator[Workload]:
    """Dense workloads of a target."""
    for template in templates:
        for batch, n_in, n_out in shapes:
            args = [tensor([batch, n_in]), tensor([n_out, n_in]), None, "float32"]
            space = dense_space(template, batch, n_in, n_out)
            yield Workload(target, template, args, space, 2.0 * batch * n_in * n_out)


def batch_matmul_workloads(target: str) -> Iterator[Workload]:
    """Batch matmul workloads (BERT attention shapes)."""
    for b, m, n, k in BATCH_MATMUL:
        args = [tensor([b, m, k]), tensor([b, n, k]), [b, m, n], "float32", False, True]
        space = [
            split("tile_y", m, 3),
            split("tile_x", n, 3),
            split("tile_k", k, 2),
            *gpu_unroll(["8", "16", "32", "64"]),
        ]
        yield Workload(target, "batch_matmul.cuda", args, space, 2.0 * b * m * n * k)


def all_workloads() -> list[Workload]:
    """Every workload of every target (about 300)."""
    cuda_convs = ["conv2d_nchw.cuda", "conv2d_nchw_winograd.cuda"]
    x86_dense = ["dense_nopack.x86", "dense_pack.x86"]
    arm_convs = ["conv2d_nchw_spatial_pack.arm_cpu", "conv2d_nchw_winograd.arm_cpu"]
    parts: list[Iterator[Workload]] = [
        conv_workloads(CUDA, cuda_convs),
        depthwise_workloads(CUDA, "depthwise_conv2d_nchw.cuda"),
        dense_workloads(CUDA, ["dense_small_batch.gpu"], DENSE),
        batch_matmul_workloads(CUDA),
        conv_workloads(MALI, ["conv2d_nchw_spatial_pack.mali"]),
        depthwise_workloads(MALI, "depthwise_conv2d_nchw.mali"),
        dense_workloads(MALI, ["dense.mali"], DENSE[:5]),
        conv_workloads(ARM, arm_convs),
        depthwise_workloads(ARM, "depthwise_conv2d_nchw.arm_cpu"),
    ]
    for target in (X86, X86_GENERIC):
        parts.append(conv_workloads(target, ["conv2d_NCHWc.x86"]))
        parts.append(dense_workloads(target, x86_dense, DENSE + DENSE_BATCHED))
    return [w for part in parts for w in part]


class Session:
    """Formats the trials of one workload: a fixed repeat count, shared latency scale."""

    def __init__(self, workload: Workload, rng: random.Random) -> None:
        self.rng = rng
        self.knobs = workload.knobs
        self.head = f'{{"input": {workload.input_json}, "config": {{"index": '
        self.best = workload.flops / (GFLOPS[workload.target] * 1e9)
        self.repeats = rng.randint(1, 3)
        self.gpu = workload.target in (CUDA, MALI)

    def line(self, timestamp: float) -> str:
        """One trial as AutoTVM's `json.dumps` writes it."""
        rng = self.rng
        index, stride, entity = 0, 1, []
        for options in self.knobs:
            choice = rng.randrange(len(options))
            index += choice * stride
            stride *= len(options)
            entity.append(options[choice])
        costs, error_no, all_cost = self.result()
        return (
            f"{self.head}{index}, "
            f'"code_hash": null, "entity": [{", ".join(entity)}]}}, '
            f'"result": [{costs}, {error_no}, {all_cost}, {timestamp!r}], '
            f'"version": 0.2, "tvm_version": "{TVM_VERSION}"}}\n'
        )

    def result(self) -> tuple[str, int, str]:
        """Costs list, error number and all_cost of one trial (10% failures)."""
        rng = self.rng
        if rng.random() < FAILURE_RATE:
            error_no = rng.choices((1, 4, 6), (3, 2, 5))[0]
            if error_no == 6:
                return FAILED_COSTS, 6, "10"
            low, high = (0.02, 0.6) if error_no == 1 else (3.0, 11.0)
            return FAILED_COSTS, error_no, repr(rng.uniform(low, high))
        mean = self.best * math.exp(abs(rng.gauss(0.0, 1.2)))
        costs = [mean * (1.0 + rng.gauss(0.0, 0.01)) for _ in range(self.repeats)]
        compile_time = rng.uniform(1.0, 6.0) if self.gpu else rng.uniform(0.1, 3.0)
        return f"[{', '.join(map(repr, costs))}]", 0, repr(compile_time)


def session_sizes(n_lines: int, count: int, rng: random.Random) -> list[int]:
    """Split `n_lines` trials over `count` workloads with uneven (tuner-like) weights."""
    weights = [rng.uniform(0.3, 1.7) for _ in range(count)]
    total = sum(weights)
    sizes = [int(n_lines * w / total) for w in weights]
    for i in range(n_lines - sum(sizes)):
        sizes[i % count] += 1
    return sizes


def generate(n_lines: int, seed: int) -> Iterator[str]:
    """The lines of a synthetic log, deterministic for (n_lines, seed)."""
    rng = random.Random(seed)
    workloads = all_workloads()
    rng.shuffle(workloads)
    timestamp = 1_650_000_000.0 + rng.uniform(0.0, 1e6)
    for workload, size in zip(workloads, session_sizes(n_lines, len(workloads), rng), strict=True):
        session = Session(workload, rng)
        for _ in range(size):
            timestamp += rng.uniform(0.05, 2.5)
            yield session.line(timestamp)


def write_log(n_lines: int, out: Path, seed: int) -> None:
    """Write the log to `out` in chunks."""
    with out.open("w", encoding="utf-8", newline="\n") as f:
        lines = generate(n_lines, seed)
        while chunk := list(itertools.islice(lines, WRITE_CHUNK)):
            f.writelines(chunk)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("n", type=int, help="number of lines")
    parser.add_argument("out", type=Path, help="output log file")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    if args.n < 0:
        parser.error("N must be >= 0")
    write_log(args.n, args.out, args.seed)


if __name__ == "__main__":
    main()
