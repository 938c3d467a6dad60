"""Operator families, layer identity, short text and FLOPs of tuning tasks (tunelog.workloads)."""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunelog import workloads
from tunelog.rules import workloadidentity
from tunelog.workloads import (
    calls,
    flopcount,
    flops,
    gflops,
    layer_key,
    layerkey,
    operator_family,
    short_args,
    shorttext,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
TEMPLATES = SHARED / "autotvm_templates.txt"
TOPHUB = SHARED / "corpus" / "tophub"
X86_MINI = SHARED / "corpus" / "generated" / "x86_mini_llvm.log"


def tensor(*shape: int, dtype: str = "float32") -> list[Any]:
    return ["TENSOR", list(shape), dtype]


def read_records(path: Path) -> list[tuple[int, str, str, list[Any]]]:
    """(line number, task name, template key, args) of every v0.2 or v0.1 record in a log."""
    if not path.is_file():
        pytest.skip(f"{path} is not beside this checkout")
    records = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        record = json.loads(line)
        if "input" in record:
            _, name, args, _ = record["input"]
            records.append((number, name, "", args))
        else:
            _, name, args, _, _, config = record["i"]
            records.append((number, name, config["t"], args))
    return records


# ---------------------------------------------------------------------------------------------
# operator_family


@pytest.mark.parametrize(
    ("task_name", "template_key", "family"),
    [
        ("conv2d_nchw.cuda", "", "conv2d"),
        ("conv2d_nchw_winograd.cuda", "", "conv2d"),
        ("conv2d_NCHWc.x86", "", "conv2d"),
        ("conv2d_nchw_spatial_pack.arm_cpu", "", "conv2d"),
        ("conv2d_nchw_winograd.arm_cpu", "", "conv2d"),
        ("conv2d_nchw_spatial_pack.mali", "", "conv2d"),
        ("conv2d_nchwc.image2d", "", "conv2d"),
        ("conv2d_nhwc_winograd_tensorcore_without_weight_transform.cuda", "", "conv2d"),
        ("conv2d_NHWC_quantized_interleaved_without_transform.arm_cpu", "", "conv2d"),
        ("depthwise_conv2d_nchw.cuda", "", "depthwise_conv2d"),
        ("depthwise_conv2d_NCHWc.x86", "", "depthwise_conv2d"),
        ("dense_nopack.x86", "", "dense"),
        ("dense_pack.x86", "", "dense"),
        ("dense_small_batch.gpu", "", "dense"),
        ("dense_large_batch.gpu", "", "dense"),
        ("dense_small_batch.cuda", "", "dense"),  # the TVM 0.7 name, in TLCBench logs
        ("batch_matmul.cuda", "", "batch_matmul"),
        ("batch_matmul_cublas.cuda", "", "batch_matmul"),
        ("conv2d_transpose_nchw.cuda", "", "conv2d_transpose"),
        ("conv1d_transpose_nchw.cuda", "", "conv1d_transpose"),
        ("group_conv2d_nchw.cuda", "", "group_conv2d"),
        ("conv3x3_spNCHW.x86", "", "sparse_conv2d"),
        ("scatter_via_sort.cuda", "", "scatter"),
        # v0.1 names: the template key picks an implementation, never the operator
        ("topi_nn_conv2d", "direct", "conv2d"),
        ("topi_nn_conv2d", "winograd", "conv2d"),
        ("topi_nn_depthwise_conv2d_nchw", "direct", "depthwise_conv2d"),
        ("topi_x86_conv2d_NCHWc", "", "conv2d"),
        ("topi_intel_graphics_conv2d_NCHWc", "", "conv2d"),
        ("topi_nn_dense", "direct", "dense"),
        ("topi_nn_conv2d_transpose_nchw", "direct", "conv2d_transpose"),
        # VTA's packed templates are in the plain family; the packed layout separates layers
        ("conv2d_packed.vta", "", "conv2d"),
        ("dense_packed.vta", "", "dense"),
        ("group_conv2d_packed.vta", "", "group_conv2d"),
    ],
)
def test_family_of_topi_templates(task_name: str, template_key: str, family: str) -> None:
    assert operator_family(task_name, template_key) == family


@pytest.mark.parametrize(
    "task_name",
    [
        "matmul",
        "tutorial/conv2d",
        "Gemm_tv2_reorder2_3_vec1_para1_config_define",
        "conv2d_no_batching",
        "tvm_conv2d_nchw_tune_op",
        "matmul_v4",
        "my_op.cuda",  # TOPI-shaped name, but no known operator
        "topi_nn_softmax",
        "",
    ],
)
def test_unknown_names_are_their_own_family(task_name: str) -> None:
    assert operator_family(task_name) == task_name
    assert operator_family(task_name, "direct") == task_name


# The families the 141 registered templates fall into; every one must land in this list.
REGISTERED_FAMILIES = {
    "batch_matmul",
    "bitserial_conv2d",
    "bitserial_dense",
    "conv1d",
    "conv1d_transpose",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "conv3d_transpose",
    "correlation",
    "deformable_conv2d",
    "dense",
    "depthwise_conv2d",
    "group_conv1d",
    "group_conv2d",
    "matmul",
    "scatter",
    "sparse_conv2d",
}


def test_every_registered_template_maps_to_an_operator_family() -> None:
    if not TEMPLATES.is_file():
        pytest.skip("../shared/autotvm_templates.txt is not beside this checkout")
    names = TEMPLATES.read_text().split()
    assert len(names) == 141
    families = {name: operator_family(name) for name in names}
    assert {n: f for n, f in families.items() if f not in REGISTERED_FAMILIES} == {}
    # The family is the operator the name starts with (sparse conv is the documented exception).
    for name, family in families.items():
        if family != "sparse_conv2d":
            assert name.lower().startswith(family), name


@pytest.mark.parametrize(
    "names",
    [
        ("conv2d_nchw.cuda", "conv2d_nchw_winograd.cuda", "conv2d_cudnn.cuda", "conv2d_nhwc.gpu"),
        (
            "conv2d_nchw_spatial_pack.arm_cpu",
            "conv2d_nchw_winograd.arm_cpu",
            "conv2d_NCHWc.x86",
            "conv2d_nchw_winograd_nnpack.arm_cpu",
        ),
        ("conv2d_nchw_spatial_pack.mali", "conv2d_nchw_winograd.mali"),
        ("conv2d_nchwc.image2d", "conv2d_nchw_winograd.image2d", "conv2d_nhwc.image2d"),
        ("depthwise_conv2d_nchw.arm_cpu", "depthwise_conv2d_NCHWc.x86"),
        ("dense_nopack.x86", "dense_pack.x86", "dense_mkl.x86", "dense_vnni.riscv"),
        ("dense_small_batch.gpu", "dense_large_batch.gpu", "dense_tensorcore.cuda", "dense.mali"),
        ("batch_matmul.cuda", "batch_matmul_tensorcore.cuda", "batch_matmul_int8.cuda"),
        ("group_conv2d_nchw.cuda", "group_conv2d_NCHWc_int8.cuda"),
        ("conv3d_ncdhw.cuda", "conv3d_ndhwc.cuda", "conv3d_ncdhw_winograd.cuda"),
    ],
)
def test_alternative_templates_share_a_family(names: tuple[str, ...]) -> None:
    assert len({operator_family(name) for name in names}) == 1


def test_families_that_differ_stay_apart() -> None:
    names = [
        "conv2d_nchw.cuda",
        "depthwise_conv2d_nchw.cuda",
        "group_conv2d_nchw.cuda",
        "conv2d_transpose_nchw.cuda",
        "conv3d_ncdhw.cuda",
        "conv1d_ncw.cuda",
        "dense_small_batch.gpu",
        "batch_matmul.cuda",
        "matmul_cublas.cuda",
        "bitserial_conv2d_nchw.x86",
        "deformable_conv2d_nchw.cuda",
    ]
    assert len({operator_family(name) for name in names}) == len(names)


# ---------------------------------------------------------------------------------------------
# layer_key

CONV_ARGS = [tensor(1, 64, 56, 56), tensor(128, 64, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1], "float32"]


@pytest.mark.parametrize(
    ("left", "right"),
    [
        pytest.param(
            ("conv2d_nchw.cuda", "", CONV_ARGS),
            ("conv2d_nchw_winograd.cuda", "", CONV_ARGS),
            id="cuda direct and winograd",
        ),
        pytest.param(
            ("conv2d_nchw_spatial_pack.arm_cpu", "", CONV_ARGS),
            ("conv2d_NCHWc.x86", "", [*CONV_ARGS[:5], "NCHW", "NCHW", "float32"]),
            id="arm_cpu spatial_pack and x86 NCHWc",
        ),
        pytest.param(
            ("conv2d_nchw.cuda", "", CONV_ARGS),
            ("conv2d_cudnn.cuda", "", [*CONV_ARGS[:5], 1, "NCHW", "float32"]),
            id="cuda direct and cudnn with groups=1",
        ),
        pytest.param(
            ("conv2d_nchw.cuda", "", CONV_ARGS),
            ("conv2d_nchw.cuda", "", [CONV_ARGS[0], CONV_ARGS[1], 2, [1, 1], 1, "float32"]),
            id="padding 2 numbers, strides and dilation as int",
        ),
        pytest.param(
            ("conv2d_nchw.cuda", "", CONV_ARGS),
            ("conv2d_nchw.cuda", "", [*CONV_ARGS[:5], None]),
            id="out_dtype None is the input dtype",
        ),
        pytest.param(
            (
                "topi_nn_conv2d",
                "direct",
                [*CONV_ARGS[:2], [2, 2], [1, 1], [1, 1], "NCHW", "float32"],
            ),
            ("topi_nn_conv2d", "winograd", [*CONV_ARGS[:2], [2, 2], [1, 1], "NCHW", "float32"]),
            id="v0.1 direct and winograd, dilation omitted",
        ),
        pytest.param(
            (
                "depthwise_conv2d_nchw.arm_cpu",
                "",
                [tensor(1, 32, 8, 8), tensor(32, 1, 3, 3), *CONV_ARGS[2:]],
            ),
            (
                "depthwise_conv2d_NCHWc.x86",
                "",
                [
                    tensor(1, 32, 8, 8),
                    tensor(32, 1, 3, 3),
                    *CONV_ARGS[2:5],
                    "NCHW",
                    "NCHW",
                    "float32",
                ],
            ),
            id="depthwise arm_cpu and x86 NCHWc",
        ),
        pytest.param(
            ("dense_pack.x86", "", [tensor(1, 8192), tensor(10, 8192), None, "float32"]),
            ("dense_nopack.x86", "", [tensor(1, 8192), tensor(10, 8192), None, "float32"]),
            id="dense pack and nopack",
        ),
        pytest.param(
            ("dense_small_batch.gpu", "", [tensor(4, 512), tensor(1000, 512)]),
            ("dense_large_batch.gpu", "", [tensor(4, 512), tensor(1000, 512), None, None]),
            id="dense defaults spelled or omitted",
        ),
        pytest.param(
            ("batch_matmul.cuda", "", [tensor(12, 128, 64), tensor(12, 128, 64)]),
            ("batch_matmul.x86", "", [tensor(12, 128, 64), tensor(12, 128, 64), [12, 128, 128]]),
            id="batch_matmul with or without out_shape",
        ),
        pytest.param(
            ("conv1d_ncw.cuda", "", [tensor(1, 16, 100), tensor(32, 16, 5), 1, 2, 1, "float32"]),
            (
                "conv1d_ncw.cuda",
                "",
                [tensor(1, 16, 100), tensor(32, 16, 5), [1], [2, 2], [1], "float32"],
            ),
            id="conv1d padding 1 or 2 numbers",
        ),
    ],
)
def test_same_layer_gets_same_key(
    left: tuple[str, str, list[Any]], right: tuple[str, str, list[Any]]
) -> None:
    assert layer_key(*left) == layer_key(*right)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        pytest.param(
            ("conv2d_nchw.cuda", "", CONV_ARGS),
            ("conv2d_nchw.cuda", "", [*CONV_ARGS[:3], [1, 1, 0, 0], *CONV_ARGS[4:]]),
            id="asymmetric padding",
        ),
        pytest.param(
            ("conv2d_nchw.cuda", "", CONV_ARGS),
            ("conv2d_nchw.cuda", "", [*CONV_ARGS[:5], "float16"]),
            id="output dtype",
        ),
        pytest.param(
            ("conv2d_nchw.cuda", "", CONV_ARGS),
            ("conv2d_nhwc.gpu", "", CONV_ARGS),
            id="layout from the name",
        ),
        pytest.param(
            ("conv2d_nchw.cuda", "", CONV_ARGS),
            ("conv2d_nchw.cuda", "", [*CONV_ARGS[:4], [2, 2], "float32"]),
            id="dilation",
        ),
        pytest.param(
            ("conv2d_nchw.cuda", "", CONV_ARGS),
            ("depthwise_conv2d_nchw.cuda", "", CONV_ARGS),
            id="family",
        ),
        pytest.param(
            ("conv2d_nchw_winograd.cuda", "", CONV_ARGS),
            ("conv2d_nchw_winograd_without_weight_transform.cuda", "", CONV_ARGS),
            id="pre-transformed kernel is not merged",
        ),
        pytest.param(
            ("conv2d_NCHWc.x86", "", [*CONV_ARGS[:5], "NCHW", "NCHW", "float32"]),
            ("conv2d_NCHWc.x86", "", [*CONV_ARGS[:5], "NCHW", "NCHW16c", "float32"]),
            id="output layout",
        ),
        pytest.param(
            ("dense.mali", "", [tensor(1, 1024), tensor(1000, 1024), tensor(1000), None]),
            ("dense.mali", "", [tensor(1, 1024), tensor(1000, 1024), None, None]),
            id="dense bias",
        ),
        pytest.param(
            ("batch_matmul.cuda", "", [tensor(4, 32, 32), tensor(4, 32, 32)]),
            ("batch_matmul.cuda", "", [tensor(4, 32, 32), tensor(4, 32, 32), None, None, 0, 0]),
            id="batch_matmul transpose_b",
        ),
        pytest.param(
            (
                "conv2d_transpose_nchw.cuda",
                "",
                [tensor(1, 8, 4, 4), tensor(8, 4, 2, 2), 2, 0, "float32"],
            ),
            (
                "conv2d_transpose_nchw.cuda",
                "",
                [tensor(1, 8, 4, 4), tensor(8, 4, 2, 2), 2, 0, "float32", [1, 1]],
            ),
            id="transposed output padding",
        ),
    ],
)
def test_different_layers_get_different_keys(
    left: tuple[str, str, list[Any]], right: tuple[str, str, list[Any]]
) -> None:
    assert layer_key(*left) != layer_key(*right)


def test_layer_key_spells_out_the_normalised_call() -> None:
    key = layer_key("conv2d_nchw.cuda", "", [*CONV_ARGS[:3], [1, 2], 2, "float32"])
    assert key == "conv2d|NCHW|1x64x56x56:float32|128x64x3x3:float32|s2,2|p1,2,1,2|d2,2|g1|float32"


@pytest.mark.parametrize(
    ("task_name", "args", "expected"),
    [
        ("matmul", [512, 512, 512], "matmul|args=[512,512,512]"),
        ("tutorial/conv2d", [1, 28, [1, 1]], "tutorial/conv2d|args=[1,28,[1,1]]"),
        (
            "correlation_nchw.cuda",
            [tensor(1, 2)],
            'correlation_nchw.cuda|args=[["TENSOR",[1,2],"float32"]]',
        ),
        # known family, args that do not fit its argument list: no partial reading
        (
            "conv2d_nchw.cuda",
            [tensor(1, 3, 8, 8), tensor(4, 3, 3, 3), [1, 1, 1], 0, 1, "float32"],
            None,
        ),
        ("conv2d_nchw.cuda", [tensor(1, 3, 8, 8), tensor(4, 3, 3), 1, 0, 1, "float32"], None),
        (
            "conv2d_nchw.cuda",
            [tensor(1, 3, 8, 8), tensor(4, 3, 3, 3), 1, 0, 1, "NCHW16c", "float32"],
            None,
        ),
        ("conv2d_nchw.cuda", [tensor(1, 3, 8, 8), tensor(4, 3, 3, 3), 1, 0, 1, "notadtype"], None),
        ("dense_pack.x86", [tensor(1, 8), [None], None, "float32"], None),
        ("dense_pack.x86", [tensor(1, 8), tensor(2, 8), None, "float32", "extra"], None),
        (
            "group_conv2d_nchw.cuda",
            [tensor(1, 4, 8, 8), tensor(4, 2, 3, 3), 1, 0, 1, "float32"],
            None,
        ),
    ],
)
def test_unreadable_args_fall_back_to_task_name_and_json(
    task_name: str, args: list[Any], expected: str | None
) -> None:
    key = layer_key(task_name, "", args)
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"))
    assert key == (expected or f"{task_name}|args={canonical}")


def test_pretransformed_winograd_keeps_its_own_key() -> None:
    args = [tensor(1, 64, 56, 56), tensor(6, 6, 64, 64), [1, 1], [1, 1, 1, 1], [1, 1], "float32"]
    name = "conv2d_nchw_winograd_without_weight_transform.cuda"
    assert layer_key(name, "", args).startswith(name + "|args=")


# ---------------------------------------------------------------------------------------------
# short_args


@pytest.mark.parametrize(
    ("task_name", "args", "text"),
    [
        (
            "conv2d_nchw.cuda",
            [tensor(1, 3, 608, 608), tensor(16, 3, 7, 7), [1, 1], [3, 3, 3, 3], [1, 1], "float32"],
            "1x3x608x608 * 16x3x7x7 s1 p3",
        ),
        (
            "conv2d_NCHWc.x86",
            [
                tensor(1, 3, 32, 32),
                tensor(16, 3, 3, 3),
                [2, 1],
                [1, 1, 0, 0],
                [1, 1],
                "NCHW",
                "NCHW",
                "float32",
            ],
            "1x3x32x32 * 16x3x3x3 s2x1 p1,1,0,0",
        ),
        (
            "conv2d_nchw.cuda",
            [tensor(1, 32, 20, 20), tensor(16, 32, 3, 3), 1, [2, 2], [2, 2], "float32"],
            "1x32x20x20 * 16x32x3x3 s1 p2 d2",
        ),
        (
            "group_conv2d_nchw.cuda",
            [tensor(1, 64, 28, 28), tensor(128, 16, 3, 3), 1, 1, 1, 4, "float32"],
            "1x64x28x28 * 128x16x3x3 s1 p1 g4",
        ),
        (
            "conv2d_nhwc.gpu",
            [
                tensor(1, 56, 56, 64, dtype="float16"),
                tensor(3, 3, 64, 128, dtype="float16"),
                2,
                1,
                1,
                "float16",
            ],
            "1x56x56x64 * 3x3x64x128 s2 p1 NHWC float16",
        ),
        (
            "conv2d_transpose_nchw.arm_cpu",
            [
                tensor(1, 128, 32, 32, dtype="int8"),
                tensor(128, 3, 4, 4, dtype="int8"),
                [2, 2],
                [1, 1, 1, 1],
                "int32",
                [0, 0],
            ],
            "1x128x32x32 * 128x3x4x4 s2 p1 int8->int32",
        ),
        (
            "dense_pack.x86",
            [tensor(1, 8192), tensor(10, 8192), None, "float32"],
            "1x8192 * 10x8192",
        ),
        (
            "dense_pack.x86",
            [tensor(1, 64, dtype="int8"), tensor(10, 64, dtype="int8"), None, "int8"],
            "1x64 * 10x64 int8",
        ),
        (
            "topi_nn_dense",
            [tensor(1, 4096), tensor(1000, 4096), tensor(1000)],
            "1x4096 * 1000x4096 + bias",
        ),
        ("batch_matmul.cuda", [tensor(12, 128, 64), tensor(12, 128, 64)], "12x128x64 * 12x128x64"),
        (
            "batch_matmul.cuda",
            [tensor(4, 20, 10), tensor(4, 20, 30), None, "float32", 1, 0],
            "4x20x10 * 4x20x30 TN",
        ),
        # unknown families and unreadable args: shapes, then the other args as written
        ("matmul", [512, 512, 512], "512 512 512"),
        ("Gemm_tv2_x", [256, 256, 128, "float32"], "256 256 128 float32"),
        (
            "conv2d_transpose_nchw.cuda",
            [
                tensor(1, 512, 1, 128),
                ["TENSOR", [512, 1, 1, 512], "float32", [0, 0]],
                [1, 128],
                [0, 256, 0, 256],
                "float32",
            ],
            "1x512x1x128 * 512x1x1x512 [1,128] [0,256,0,256] float32",
        ),
    ],
)
def test_short_args(task_name: str, args: list[Any], text: str) -> None:
    assert short_args(task_name, args) == text


def test_short_args_stays_short() -> None:
    text = short_args("matmul", list(range(1000)))
    assert len(text) <= 120
    assert text.endswith("...")


# ---------------------------------------------------------------------------------------------
# flops: every value below is worked out by hand in the comment beside it


@pytest.mark.parametrize(
    ("task_name", "template_key", "args", "expected"),
    [
        pytest.param(
            "conv2d_nchw.cuda",
            "",
            [tensor(1, 3, 224, 224), tensor(64, 3, 7, 7), [2, 2], [3, 3, 3, 3], [1, 1], "float32"],
            # OH = OW = (224 + 3 + 3 - 1*(7-1) - 1) // 2 + 1 = 112
            # 2 * N1 * K64 * 112 * 112 * C3 * 7 * 7 = 128 * 12544 * 147
            236_027_904,
            id="conv2d NCHW",
        ),
        pytest.param(
            "conv2d_nchw_winograd.cuda",
            "",
            [tensor(1, 512, 7, 7), tensor(512, 512, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], "float32"],
            # counted as the direct convolution: OH = OW = 7
            # 2 * 512 * 7 * 7 * 512 * 3 * 3 = 2 * 262144 * 441
            231_211_008,
            id="conv2d winograd counts as direct",
        ),
        pytest.param(
            "topi_nn_conv2d",
            "winograd",
            [
                tensor(1, 512, 7, 7),
                tensor(512, 512, 3, 3),
                [1, 1],
                [1, 1],
                [1, 1],
                "NCHW",
                "float32",
            ],
            # the same layer in a v0.1 record: 231,211,008
            231_211_008,
            id="conv2d v0.1",
        ),
        pytest.param(
            "conv2d_NCHWc.x86",
            "",
            [
                tensor(1, 3, 32, 32),
                tensor(16, 3, 3, 3),
                [1, 1],
                [1, 1, 1, 1],
                [1, 1],
                "NCHW",
                "NCHW",
                "float32",
            ],
            # the x86 template takes NCHW shapes plus layout strings; OH = OW = 32
            # 2 * 16 * 32 * 32 * 3 * 3 * 3 = 32 * 1024 * 27
            884_736,
            id="conv2d NCHWc x86",
        ),
        pytest.param(
            "topi_x86_conv2d_NCHWc",
            "",
            [
                tensor(1, 3, 224, 224),
                tensor(64, 3, 7, 7),
                3,
                [7, 7],
                [2, 2],
                [3, 3],
                "NCHW",
                "NCHW",
                "float32",
            ],
            # TVM <= 0.6 x86 list (in_channel, kernel_size, strides, padding): same as conv2d NCHW
            236_027_904,
            id="conv2d old x86",
        ),
        pytest.param(
            "topi_x86_conv2d",
            "direct",
            [
                tensor(1, 3, 224, 224),
                tensor(64, 3, 7, 7),
                3,
                [7, 7],
                [1, 1],
                [2, 2],
                [3, 3],
                "NCHW",
                "float32",
            ],
            # with dilation after kernel_size: same layer, 236,027,904
            236_027_904,
            id="conv2d old x86 with dilation",
        ),
        pytest.param(
            "conv2d_cudnn.cuda",
            "",
            [
                tensor(1, 3, 224, 224),
                tensor(64, 3, 7, 7),
                [2, 2],
                [3, 3, 3, 3],
                [1, 1],
                1,
                "NCHW",
                "float32",
            ],
            236_027_904,
            id="conv2d cudnn",
        ),
        pytest.param(
            "conv2d_nchw.cuda",
            "",
            [tensor(1, 32, 20, 20), tensor(16, 32, 3, 3), [1, 1], [2, 2], [2, 2], "float32"],
            # OH = (20 + 2 + 2 - 2*(3-1) - 1) // 1 + 1 = 20
            # 2 * 16 * 20 * 20 * 32 * 9 = 32 * 400 * 288
            3_686_400,
            id="conv2d dilated",
        ),
        pytest.param(
            "conv2d_nchw.cuda",
            "",
            [tensor(1, 8, 10, 10), tensor(4, 8, 3, 3), [2, 1], [1, 0, 0, 0], [1, 1], "float32"],
            # top=1 left=0 bottom=0 right=0
            # OH = (10 + 1 - 3) // 2 + 1 = 5, OW = (10 - 3) // 1 + 1 = 8
            # 2 * 4 * 5 * 8 * 8 * 3 * 3 = 8 * 40 * 72
            23_040,
            id="conv2d asymmetric padding and strides",
        ),
        pytest.param(
            "conv2d_nhwc.gpu",
            "",
            [tensor(1, 56, 56, 64), tensor(3, 3, 64, 128), [2, 2], [1, 1, 1, 1], [1, 1], "float32"],
            # HWIO kernel; OH = OW = (56 + 2 - 2 - 1) // 2 + 1 = 28
            # 2 * 28 * 28 * 3 * 3 * 64 * 128 = 2 * 784 * 73728
            115_605_504,
            id="conv2d NHWC",
        ),
        pytest.param(
            "conv2d_hwcn.cuda",
            "",
            [tensor(14, 14, 256, 8), tensor(3, 3, 256, 256), 1, 1, 1, "float32"],
            # data [H, W, C, N], kernel [KH, KW, C, K]; OH = OW = 14
            # 2 * N8 * 14 * 14 * 3 * 3 * 256 * 256 = 16 * 196 * 589824
            1_849_688_064,
            id="conv2d HWCN",
        ),
        pytest.param(
            "conv1d_ncw.cuda",
            "",
            [tensor(2, 16, 100), tensor(32, 16, 5), [2], [2], [1], "float32"],
            # OW = (100 + 2 + 2 - 4 - 1) // 2 + 1 = 50
            # 2 * N2 * K32 * 50 * C16 * 5 = 4 * 32 * 50 * 80
            512_000,
            id="conv1d NCW",
        ),
        pytest.param(
            "conv1d_nwc.cuda",
            "",
            [tensor(2, 100, 16), tensor(5, 16, 32), 2, [2, 2], 1, "float32"],
            # the same layer, NWC data and WIO kernel: 512,000
            512_000,
            id="conv1d NWC",
        ),
        pytest.param(
            "conv3d_ncdhw.cuda",
            "",
            [
                tensor(1, 4, 8, 16, 16),
                tensor(8, 4, 3, 3, 3),
                [1, 1, 1],
                [1, 1, 1],
                [1, 1, 1],
                1,
                "float32",
            ],
            # OD = 8, OH = OW = 16: 2 * K8 * (8 * 16 * 16) * C4 * 27 = 16 * 2048 * 108
            3_538_944,
            id="conv3d NCDHW",
        ),
        pytest.param(
            "group_conv2d_nchw.cuda",
            "",
            [
                tensor(1, 64, 28, 28),
                tensor(128, 16, 3, 3),
                [1, 1],
                [1, 1, 1, 1],
                [1, 1],
                4,
                "float32",
            ],
            # C/groups = 64/4 = 16 = kernel[1]; OH = OW = 28
            # 2 * K128 * 28 * 28 * 16 * 3 * 3 = 256 * 784 * 144
            28_901_376,
            id="group conv2d",
        ),
        pytest.param(
            "depthwise_conv2d_nchw.cuda",
            "",
            [tensor(1, 32, 112, 112), tensor(32, 1, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], "float32"],
            # kernel [C, multiplier, KH, KW]; OH = OW = 112
            # 2 * (C32 * 1) * 112 * 112 * 3 * 3 = 64 * 12544 * 9
            7_225_344,
            id="depthwise NCHW",
        ),
        pytest.param(
            "depthwise_conv2d_nchw.cuda",
            "",
            [tensor(1, 8, 10, 10), tensor(8, 2, 3, 3), 1, 0, 1, "float32"],
            # multiplier 2: 16 output channels, OH = OW = 8: 2 * 16 * 8 * 8 * 9 = 32 * 576
            18_432,
            id="depthwise channel multiplier",
        ),
        pytest.param(
            "depthwise_conv2d_NCHWc.x86",
            "",
            [
                tensor(1, 32, 112, 112),
                tensor(32, 1, 3, 3),
                [1, 1],
                [1, 1, 1, 1],
                [1, 1],
                "NCHW",
                "NCHW",
                "float32",
            ],
            7_225_344,
            id="depthwise x86 NCHWc",
        ),
        pytest.param(
            "depthwise_conv2d_nhwc.arm_cpu",
            "",
            [tensor(1, 112, 112, 32), tensor(3, 3, 32, 1), 1, 1, 1, "float32"],
            # kernel [KH, KW, C, multiplier]: the same layer, 7,225,344
            7_225_344,
            id="depthwise NHWC",
        ),
        pytest.param(
            "conv2d_transpose_nchw.cuda",
            "",
            [tensor(1, 128, 32, 32), tensor(128, 3, 4, 4), [2, 2], [1, 1, 1, 1], "float32", [0, 0]],
            # kernel [C_in, C_out, KH, KW]; OH = OW = (32 - 1) * 2 - 1 - 1 + 4 + 0 = 64
            # 2 * C_out3 * 64 * 64 * C_in128 * 4 * 4 = 6 * 4096 * 2048
            50_331_648,
            id="conv2d transpose",
        ),
        pytest.param(
            "conv2d_transpose_nchw.cuda",
            "",
            [tensor(1, 128, 32, 32), tensor(128, 3, 4, 4), [2, 2], [1, 1, 1, 1], "float32", [1, 1]],
            # output padding 1: OH = OW = 65: 6 * 4225 * 2048
            51_916_800,
            id="conv2d transpose output padding",
        ),
        pytest.param(
            "topi_nn_conv2d_transpose_nchw",
            "direct",
            [
                tensor(1, 128, 32, 32, dtype="int8"),
                tensor(128, 3, 4, 4, dtype="int8"),
                [2, 2],
                [1, 1],
                "int32",
            ],
            # v0.1, no output padding argument: 50,331,648
            50_331_648,
            id="conv2d transpose v0.1",
        ),
        pytest.param(
            "conv1d_transpose_nchw.cuda",
            "",
            [tensor(1, 257, 128), tensor(257, 1, 512), [128], [256], "float32", [0]],
            # from tophub cuda_v0.10: OW = (128 - 1) * 128 - 256 - 256 + 512 + 0 = 16256
            # 2 * C_out1 * 16256 * C_in257 * 512 = 32512 * 257 * 512
            4_278_059_008,
            id="conv1d transpose",
        ),
        pytest.param(
            "conv3d_transpose_ncdhw.cuda",
            "",
            [tensor(1, 8, 4, 4, 4), tensor(8, 4, 2, 2, 2), 2, 0, "float32", [0, 0, 0]],
            # OD = OH = OW = 3 * 2 + 2 = 8: 2 * C_out4 * 512 * C_in8 * 8 = 2 * 512 * 256
            262_144,
            id="conv3d transpose",
        ),
        pytest.param(
            "dense_pack.x86",
            "",
            [tensor(1, 8192), tensor(10, 8192), None, "float32"],
            # 2 * M1 * N10 * K8192
            163_840,
            id="dense",
        ),
        pytest.param(
            "dense_large_batch.cuda",
            "",
            [tensor(128, 768), tensor(2304, 768), None, "float32"],
            # 2 * 128 * 2304 * 768 = 2 * 294912 * 768
            452_984_832,
            id="dense large batch",
        ),
        pytest.param(
            "topi_nn_dense",
            "direct",
            [tensor(1, 4096), tensor(1000, 4096), tensor(1000)],
            # 2 * 1 * 1000 * 4096; the bias add is not counted
            8_192_000,
            id="dense v0.1 with bias",
        ),
        pytest.param(
            "batch_matmul.cuda",
            "",
            [tensor(1, 128, 20), tensor(1, 128, 20)],
            # x [B, M, K], y [B, N, K]: 2 * 1 * 128 * 128 * 20
            655_360,
            id="batch_matmul two tensors",
        ),
        pytest.param(
            "batch_matmul.cuda",
            "",
            [tensor(2048, 512, 64), tensor(2048, 512, 64), [2048, 512, 512], "float32", 0, 1],
            # nnfusion's spelling: 2 * 2048 * 512 * 512 * 64 = 2 * 2048 * 16777216
            68_719_476_736,
            id="batch_matmul with out_shape and flags",
        ),
        pytest.param(
            "batch_matmul.x86",
            "",
            [tensor(4, 20, 10), tensor(4, 20, 30), None, "float32", True, False],
            # x [B, K, M], y [B, K, N]: M10 N30 K20: 2 * 4 * 10 * 30 * 20
            48_000,
            id="batch_matmul transposes",
        ),
        pytest.param(
            "batch_matmul.cuda",
            "",
            [tensor(1, 16, 8), tensor(3, 4, 8)],
            # batch 1 broadcasts to 3: 2 * 3 * 16 * 4 * 8
            3_072,
            id="batch_matmul broadcast batch",
        ),
        pytest.param(
            "matmul_cublas.cuda",
            "",
            [tensor(16, 32), tensor(32, 8), None, "float32", False, False],
            # a [M, K], b [K, N]: 2 * 16 * 8 * 32
            8_192,
            id="matmul",
        ),
        pytest.param(
            "conv2d_packed.vta",
            "",
            [
                tensor(1, 1, 208, 208, 1, 16, dtype="int8"),
                tensor(2, 1, 3, 3, 16, 16, dtype="int8"),
                [1, 1],
                [1, 1, 1, 1],
                [1, 1],
                "NCHW1n16c",
                "int32",
            ],
            # N = 1*1, C = 1*16, K = 2*16 = 32, OH = OW = 208
            # 2 * 32 * 208 * 208 * 16 * 3 * 3 = 64 * 43264 * 144
            398_721_024,
            id="VTA conv2d packed",
        ),
        pytest.param(
            "group_conv2d_packed.vta",
            "",
            [
                tensor(1, 2, 112, 112, 1, 16, dtype="int8"),
                tensor(2, 1, 3, 3, 16, 16, dtype="int8"),
                [1, 1],
                [1, 1, 1, 1],
                [1, 1],
                2,
                "int32",
            ],
            # C = 32, groups 2, C/groups = 16, K = 32, OH = OW = 112
            # 2 * 32 * 112 * 112 * 16 * 9 = 2 * 12544 * 4608
            115_605_504,
            id="VTA group conv2d packed",
        ),
        pytest.param(
            "conv2d_transpose_packed.vta",
            "",
            [
                tensor(1, 64, 4, 4, 1, 16, dtype="int8"),
                tensor(32, 64, 4, 4, 16, 16, dtype="int8"),
                [2, 2],
                [1, 1, 1, 1],
                "int32",
                [0, 0],
            ],
            # C_in = 64*16 = 1024, C_out = 32*16 = 512, OH = OW = 3 * 2 - 2 + 4 = 8
            # 2 * 512 * 8 * 8 * 1024 * 4 * 4 = 2 * 64 * 8388608
            1_073_741_824,
            id="VTA conv2d transpose packed",
        ),
        pytest.param(
            "dense_packed.vta",
            "",
            [
                tensor(4, 16, 1, 16, dtype="int8"),
                tensor(8, 16, 16, 16, dtype="int8"),
                None,
                "int32",
            ],
            # data [M/1, K/16, 1, 16]: M 4, K 256; weight [N/16, K/16, 16, 16]: N 128
            # 2 * 4 * 128 * 256
            262_144,
            id="VTA dense packed",
        ),
    ],
)
def test_flops_by_family(task_name: str, template_key: str, args: list[Any], expected: int) -> None:
    assert flops(task_name, template_key, args) == expected


@pytest.mark.parametrize(
    ("task_name", "args"),
    [
        pytest.param("matmul", [512, 512, 512], id="user template"),
        pytest.param("conv2d", [1, 28, 28, 128, 256, 3, 3, [1, 1], [1, 1]], id="int args"),
        pytest.param(
            "correlation_nchw.cuda", [tensor(1, 2, 3, 4), tensor(1, 2, 3, 4)], id="no model"
        ),
        pytest.param(
            "conv2d_nchw_winograd_without_weight_transform.cuda",
            [tensor(1, 64, 56, 56), tensor(6, 6, 64, 64), 1, 1, 1, "float32"],
            id="pre-transformed kernel",
        ),
        pytest.param(
            "conv2d_nchw.cuda",
            [tensor(1, 3, 32, 32), tensor(16, 4, 3, 3), 1, 1, 1, "float32"],
            id="channels disagree",
        ),
        pytest.param(
            "depthwise_conv2d_nchw.cuda",
            [tensor(1, 8, 10, 10), tensor(16, 1, 3, 3), 1, 0, 1, "float32"],
            id="depthwise kernel is not [C, multiplier, KH, KW]",
        ),
        pytest.param(
            "conv2d_transpose_nchw.cuda",
            [tensor(1, 128, 32, 32), tensor(3, 128, 4, 4), 2, 1, "float32", [0, 0]],
            id="transposed kernel is not [C_in, C_out, KH, KW]",
        ),
        pytest.param(
            "conv2d_nchw.cuda",
            [tensor(1, 3, 2, 2), tensor(16, 3, 7, 7), 1, 0, 1, "float32"],
            id="no output pixels",
        ),
        pytest.param(
            "conv2d_nchw.cuda",
            [tensor(1, 3, 8, 8), tensor(16, 3, 3, 3), 0, 0, 1, "float32"],
            id="zero stride",
        ),
        pytest.param(
            "conv2d_nchw.cuda",
            [tensor(1, 3, 8, 8), tensor(16, 3, 3, 3), 1, -1, 1, "float32"],
            id="negative padding",
        ),
        pytest.param(
            "conv2d_transpose_nchw.cuda",
            [tensor(1, 8, 4, 4), tensor(8, 4, 2, 2), 2, 0, "float32", [2, 2]],
            id="output padding not below stride",
        ),
        pytest.param(
            "conv2d_transpose_nchw.cuda",
            [
                tensor(1, 512, 1, 128),
                ["TENSOR", [512, 1, 1, 512], "float32", [0, 0]],
                [1, 128],
                [0, 256, 0, 256],
                "float32",
            ],
            id="damaged tensor from tophub cuda_v0.10",
        ),
        pytest.param(
            "dense_pack.x86", [tensor(1, 100), tensor(10, 99), None, "float32"], id="K disagrees"
        ),
        pytest.param(
            "batch_matmul.x86",
            [tensor(12, 128, 64), tensor(12, 128, 64), [12, 128, 64]],
            id="out_shape disagrees",
        ),
        pytest.param(
            "batch_matmul.cuda", [tensor(2, 4, 8), tensor(3, 4, 8)], id="batches disagree"
        ),
        pytest.param(
            "dense_pack.x86",
            [tensor(1, 16, 1, 16), tensor(8, 16, 16, 16), None, "float32"],
            id="4-d dense outside VTA",
        ),
    ],
)
def test_flops_unknown_is_none(task_name: str, args: list[Any]) -> None:
    assert flops(task_name, "", args) is None


@pytest.mark.parametrize(
    ("flop", "cost", "expected"),
    [
        (236_027_904, 1e-3, 236.027904),
        (2_000_000_000, 0.5, 4.0),
        (None, 1e-3, None),
        (1000, 0.0, None),
        (1000, -1.0, None),
        (1000, float("nan"), None),
        (1000, float("inf"), None),
    ],
)
def test_gflops(flop: int | None, cost: float, expected: float | None) -> None:
    result = gflops(flop, cost)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------
# Real logs


@pytest.mark.parametrize(
    ("log", "direct", "winograd"),
    [
        ("cuda_v0.10.log", "conv2d_nchw.cuda", "conv2d_nchw_winograd.cuda"),
        ("arm_cpu_v0.08.log", "conv2d_nchw_spatial_pack.arm_cpu", "conv2d_nchw_winograd.arm_cpu"),
    ],
)
def test_tophub_direct_and_winograd_records_share_layer_keys(
    log: str, direct: str, winograd: str
) -> None:
    templates_by_key: dict[str, set[str]] = {}
    for _, name, key, args in read_records(TOPHUB / log):
        templates_by_key.setdefault(layer_key(name, key, args), set()).add(name)
    shared = [key for key, names in templates_by_key.items() if {direct, winograd} <= names]
    assert shared
    # and the winograd args really are the untransformed [K, C, 3, 3] kernel
    for key in shared:
        assert re.search(r"\|\d+x\d+x3x3:float32\|", key), key


@pytest.mark.parametrize(
    "log", ["cuda_v0.10.log", "arm_cpu_v0.08.log", "llvm_v0.01.log", "vta_v0.10.log"]
)
def test_tophub_records_are_all_read(log: str) -> None:
    """Every TOPI record gets a structured key and a FLOP count, except damaged TENSOR args."""
    unread = []
    for number, name, key, args in read_records(TOPHUB / log):
        if "|args=" in layer_key(name, key, args) or flops(name, key, args) is None:
            unread.append(number)
    # cuda_v0.10 line 688 wrote output_padding inside the kernel's TENSOR entry
    assert unread == ([688] if log == "cuda_v0.10.log" else [])


def test_x86_mini_dense_pack_and_nopack_are_one_layer() -> None:
    records = read_records(X86_MINI)
    keys_by_name: dict[str, set[str]] = {}
    for _, name, key, args in records:
        keys_by_name.setdefault(name, set()).add(layer_key(name, key, args))
    assert keys_by_name["dense_pack.x86"] == keys_by_name["dense_nopack.x86"]
    (dense_key,) = keys_by_name["dense_pack.x86"]
    assert dense_key == "dense|1x8192:float32|10x8192:float32|bias=-|float32"
    assert dense_key not in keys_by_name["conv2d_NCHWc.x86"]
    dense_args = next(args for _, name, _, args in records if name == "dense_nopack.x86")
    assert flops("dense_nopack.x86", "", dense_args) == 2 * 1 * 10 * 8192


# ---------------------------------------------------------------------------------------------
# Properties

TASK_NAMES = [
    "conv2d_nchw.cuda",
    "conv2d_NCHWc.x86",
    "conv2d_nhwc.gpu",
    "conv2d_hwcn.cuda",
    "conv2d_packed.vta",
    "group_conv2d_nchw.cuda",
    "depthwise_conv2d_nhwc.arm_cpu",
    "conv2d_transpose_nchw.cuda",
    "conv1d_transpose_nchw.cuda",
    "conv3d_ncdhw.cuda",
    "dense_pack.x86",
    "dense_packed.vta",
    "batch_matmul.cuda",
    "matmul_cublas.cuda",
    "topi_nn_conv2d",
    "topi_x86_conv2d_NCHWc",
    "matmul",
    "correlation_nchw.cuda",
]

json_scalars = st.none() | st.booleans() | st.integers(-3, 300) | st.floats() | st.text(max_size=8)
small_ints = st.integers(-2, 64)
tensors = st.builds(
    lambda shape, dtype: ["TENSOR", shape, dtype],
    st.lists(small_ints, max_size=7),
    st.sampled_from(["float32", "int8", "int32", "float16", "nonsense"]),
)
json_values = st.recursive(
    json_scalars | tensors,
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=30,
)
# lists that look like real argument lists: tensors, number lists, layouts and dtypes
arg_items = (
    tensors
    | small_ints
    | st.lists(small_ints, max_size=6)
    | st.sampled_from(["NCHW", "NHWC", "NCHW1n16c", "float32", "int32", None, True])
    | json_values
)


@given(st.sampled_from(TASK_NAMES) | st.text(max_size=12), st.lists(arg_items, max_size=9))
def test_never_raises_on_arbitrary_args(task_name: str, args: list[Any]) -> None:
    key = layer_key(task_name, "", args)
    text = short_args(task_name, args)
    count = flops(task_name, "", args)
    assert isinstance(key, str) and key
    assert isinstance(text, str) and len(text) <= 120
    assert count is None or (isinstance(count, int) and count >= 0)


@given(st.sampled_from(TASK_NAMES), json_values)
def test_never_raises_on_args_that_are_not_lists(task_name: str, args: Any) -> None:
    assert isinstance(layer_key(task_name, "", args), str)
    assert isinstance(short_args(task_name, args), str)
    flops(task_name, "", args)


@given(
    st.integers(1, 4),
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(1, 3),
    st.integers(1, 3),
)
def test_padding_and_stride_spellings_are_one_key(
    stride: int, pad_h: int, pad_w: int, dilation: int, kernel: int
) -> None:
    data, weight = tensor(1, 8, 32, 32), tensor(16, 8, kernel, kernel)
    short = [data, weight, stride, [pad_h, pad_w], dilation, "float32"]
    long = [
        data,
        weight,
        [stride, stride],
        [pad_h, pad_w, pad_h, pad_w],
        [dilation, dilation],
        "float32",
    ]
    assert layer_key("conv2d_nchw.cuda", "", short) == layer_key(
        "conv2d_NCHWc.x86", "", [*long[:5], "NCHW", "NCHW", "float32"]
    )
    assert flops("conv2d_nchw.cuda", "", short) == flops("conv2d_nchw.cuda", "", long)


def test_never_raises_on_nesting_deeper_than_the_recursion_limit() -> None:
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    assert layer_key("conv2d_nchw.cuda", "", [deep]).startswith("conv2d_nchw.cuda|args=")
    assert short_args("conv2d_nchw.cuda", [deep])
    assert flops("conv2d_nchw.cuda", "", [deep]) is None


# ---------------------------------------------------------------------------------------------
# Odd arguments never raise, bugs do

SAMPLE_LOGS = Path(__file__).resolve().parents[1] / "sample_logs"
# Every registered template when ../shared is beside the checkout, else the sample above.
TEMPLATE_NAMES = sorted(
    set(TASK_NAMES) | set(TEMPLATES.read_text().split() if TEMPLATES.is_file() else ())
)
# What JSON readers hand over: huge ints (json.loads and msgspec keep them), NaN and Infinity
# (lenient readers), and any nesting.
any_ints = (
    st.integers()
    | st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1])
    # Past Python's int-to-str digit limit; made by map() because Hypothesis reprs strategies.
    | st.sampled_from([1, -1]).map(lambda sign: sign * 10**5000)
)
any_json: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | any_ints | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=20,
)


@functools.cache
def real_records() -> list[tuple[str, list[Any]]]:
    """(task name, args) of the distinct conv2d and dense records of the sample logs."""
    found: dict[str, tuple[str, list[Any]]] = {}
    for log in ("x86_mini_llvm.log", "edge_cases.log"):
        for line in (SAMPLE_LOGS / log).read_text().splitlines():
            # edge_cases.log also holds lines that are not records: only v0.2 records are taken
            if not line.startswith('{"input": ['):
                continue
            with contextlib.suppress(json.JSONDecodeError):
                _, name, args, _ = json.loads(line)["input"]
                if name.startswith(("conv2d", "dense")):
                    found.setdefault(json.dumps([name, args]), (name, args))
    return list(found.values())


def assert_documented_types(task_name: str, args: Any) -> None:
    key = layer_key(task_name, "", args)
    text = short_args(task_name, args)
    count = flops(task_name, "", args)
    assert isinstance(key, str) and key
    assert isinstance(text, str) and len(text) <= 120
    assert count is None or (type(count) is int and count > 0)


@settings(max_examples=250)
@given(st.sampled_from(TEMPLATE_NAMES), any_json | st.lists(any_json, max_size=9))
def test_templates_never_raise_on_json_args(task_name: str, args: Any) -> None:
    assert_documented_types(task_name, args)


# Argument values no TOPI template takes (deep nesting has a test of its own above).
ODD_VALUES: list[Any] = [
    *(None, True, False, -1, 0, 2**63, -(2**63) - 1, 10**5000, "", "NCHW", "float32", "x"),
    *(float("nan"), float("inf"), -0.0, 1.0, [], {}, {"a": [1]}, [1, True], [-1, 2**63]),
    *(["TENSOR"], ["TENSOR", [1, True], "float32"], ["TENSOR", [1, 2], 7], tensor(0, 8)),
]


def test_every_template_never_raises_on_odd_args() -> None:
    """Each kind of template name (all of ../shared's list when present), each argument list
    with one argument replaced by an odd value, and each odd value as the whole args."""
    # The parsers see a task name only as what _name_info reads from it: one name of each kind.
    names = {workloads._name_info(name): name for name in TEMPLATE_NAMES}
    dense = [tensor(1, 8), tensor(4, 8), None, "float32"]
    arg_lists = [
        [*base[:i], value, *base[i + 1 :]]
        for base in (SMALL_CONV, dense)
        for i in range(len(base))
        for value in ODD_VALUES
    ]
    for task_name in names.values():
        for args in [*ODD_VALUES, *arg_lists]:
            assert_documented_types(task_name, args)


@st.composite
def replaced_somewhere(draw: st.DrawFn, value: Any) -> Any:
    """`value` with one element, at any depth (or value itself), replaced by any JSON value."""
    if isinstance(value, list) and value and draw(st.booleans()):
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], draw(replaced_somewhere(value[index])), *value[index + 1 :]]
    return draw(any_json)


@settings(max_examples=300)
@given(data=st.data())
def test_mutated_real_args_never_raise(data: st.DataObject) -> None:
    name, args = data.draw(st.sampled_from(real_records()))
    task_name = data.draw(st.just(name) | st.sampled_from(TEMPLATE_NAMES))
    assert_documented_types(task_name, data.draw(replaced_somewhere(args)))


def test_real_records_are_read() -> None:
    """The records the mutation test starts from are ones the parsers read in full."""
    records = real_records()
    assert len(records) >= 8
    for name, args in records:
        assert "|args=" not in layer_key(name, "", args)
        assert flops(name, "", args)


@given(any_json)
def test_fallback_key_is_the_canonical_json_of_the_args(args: Any) -> None:
    if any(isinstance(n, int) and abs(n) >= 10**4300 for n in leaves(args)):
        return  # json.dumps cannot print these; the key writes them in hex
    expected = json.dumps(args, sort_keys=True, separators=(",", ":"))
    assert layer_key("my_template", "", args) == "my_template|args=" + expected


def leaves(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in leaves(item)]
    return [value]


def test_ints_too_long_to_print_keep_distinct_keys() -> None:
    keys = {
        layer_key("conv2d_nchw.cuda", "", [tensor(1, 3, 8, 8), n]) for n in (10**5000, 10**5001)
    }
    assert len(keys) == 2
    assert all(key.startswith("conv2d_nchw.cuda|args=") for key in keys)


def test_sizes_past_int64_are_not_read() -> None:
    args = [tensor(2**63, 8), tensor(4, 8), None, "float32"]
    assert layer_key("dense_pack.x86", "", args).startswith("dense_pack.x86|args=")
    assert flops("dense_pack.x86", "", args) is None
    args[0] = tensor(2**63 - 1, 8)
    assert flops("dense_pack.x86", "", args) == 2 * (2**63 - 1) * 4 * 8


def test_a_cycle_ends_the_fallback_key() -> None:
    args: list[Any] = [1]
    args.append(args)
    assert layer_key("my_template", "", args) == 'my_template|args=[1,"<cycle>"]'
    assert short_args("my_template", args) == '1 [1,"<cycle>"]'


def test_packing_factor_too_long_for_int() -> None:
    data, kernel = tensor(1, 1, 8, 8, 1, 16), tensor(1, 1, 3, 3, 16, 16)
    layout = "NCHW" + "0" * 5000 + "1n16c"  # int() refuses it: past Python's digit limit
    args = [data, kernel, 1, 1, 1, layout, "int32"]
    assert layer_key("conv2d_packed.vta", "", args).startswith("conv2d|NCHW")
    assert flops("conv2d_packed.vta", "", args) is None


@pytest.mark.parametrize(
    ("flop", "cost"), [(10**400, 1.0), (2**1024, 1e-3), (10, 10**400), (10, float("inf"))]
)
def test_gflops_of_numbers_past_float_is_none(flop: int, cost: float) -> None:
    assert gflops(flop, cost) is None


SMALL_CONV: list[Any] = [tensor(1, 3, 8, 8), tensor(4, 3, 3, 3), 1, 1, 1, "float32"]


def _bug(*args: object) -> NoReturn:
    raise TypeError("a bug in tunelog")


@pytest.mark.parametrize(
    ("module", "helper", "call"),
    [
        (flopcount, "_conv_flops", lambda: flops("conv2d_nchw.cuda", "", SMALL_CONV)),
        (
            flopcount,
            "_matmul_flops",
            lambda: flops("dense_pack.x86", "", [tensor(1, 8), tensor(4, 8)]),
        ),
        (layerkey, "_call_key", lambda: layer_key("conv2d_nchw.cuda", "", SMALL_CONV)),
        (shorttext, "_call_short", lambda: short_args("conv2d_nchw.cuda", SMALL_CONV)),
        (calls, "_tensor", lambda: flops("conv2d_nchw.cuda", "", SMALL_CONV)),
        (calls, "_tensor", lambda: layer_key("conv2d_nchw.cuda", "", SMALL_CONV)),
        (calls, "_tensor", lambda: short_args("conv2d_nchw.cuda", SMALL_CONV)),
        (workloadidentity, "_json_scalar", lambda: layer_key("my_template", "", [1])),
    ],
)
def test_a_bug_is_not_taken_for_odd_args(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, helper: str, call: Callable[[], object]
) -> None:
    monkeypatch.setattr(module, helper, _bug)
    with pytest.raises(TypeError, match="a bug in tunelog"):
        call()
