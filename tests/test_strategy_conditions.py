"""Each strategy condition of tunelog.strategy_conditions, with a layer on each side of it.

A row: target string, template, the workload arguments of a layer relay's v0.19 strategy offers
it for, those of a layer on the other side of the condition, and what tunelog must answer for
that one (False: never offered; None: depends on the compile target, which the log lacks).
"""

from __future__ import annotations

from typing import Any

import pytest

from tunelog.conditions import All, AnyOf, Not, Target, holds, possible_kinds
from tunelog.conditions import test as fact_test
from tunelog.strategies import NEVER_OFFERED, OFFERED, Offer, offer_facts, relay_offers
from tunelog.strategy_table import KNOWN_TEMPLATES
from tunelog.targets import parse_target
from tunelog.workloads import layer_facts


def _t(shape: list[int], dtype: str = "float32") -> list[Any]:
    return ["TENSOR", shape, dtype]


def conv(
    data: list[int],
    kernel: list[int],
    *,
    stride: int = 1,
    pad: list[int] | None = None,
    dilation: int = 1,
    dtype: str = "float32",
    kernel_dtype: str | None = None,
    out: str | None = None,
    extra: list[Any] | None = None,
) -> list[Any]:
    """[data, kernel, strides, padding, dilation, *extra, out_dtype] as TOPI templates take."""
    weights = _t(kernel, kernel_dtype or dtype)
    return [_t(data, dtype), weights, [stride, stride], pad or [0, 0, 0, 0],
            [dilation, dilation], *(extra or []), out or dtype]  # fmt: skip


def x86(data: list[int], kernel: list[int], **kw: Any) -> list[Any]:
    """conv2d_NCHWc.x86-style arguments: the layouts before out_dtype."""
    return conv(data, kernel, extra=["NCHW", "NCHW"], **kw)


def group(data: list[int], kernel: list[int], groups: int, dtype: str = "float32") -> list[Any]:
    return conv(data, kernel, dtype=dtype, extra=[groups])


def dense(
    batch: int, dtype: str = "float32", out: str | None = None, w: str | None = None
) -> list[Any]:
    return [_t([batch, 64], dtype), _t([32, 64], w or dtype), None, out or dtype]


def bmm(
    m: int, n: int, k: int, dtype: str = "float32", out: str | None = None, y: str | None = None
) -> list[Any]:
    return [_t([1, m, k], dtype), _t([1, n, k], y or dtype), None, out or dtype, False, True]


def transpose(kernel: list[int]) -> list[Any]:
    return [_t([1, 8, 8, 8]), _t(kernel), [2, 2], [0, 0, 0, 0], "float32", [0, 0]]


CUDA, VULKAN, OPENCL, ROCM = "cuda", "vulkan", "opencl", "rocm"
LLVM, ARM = "llvm", "llvm -device=arm_cpu"
MALI, BIFROST, INTEL, ADRENO = (
    "opencl -device=mali",
    "opencl -device=bifrost",
    "opencl -device=intel_graphics",
    "opencl -device=adreno",
)
NCHW_3X3 = ([1, 16, 8, 8], [16, 16, 3, 3])
UINT8: dict[str, Any] = {"dtype": "uint8", "kernel_dtype": "int8"}

# (target, template, args offered, args on the other side, answer there)
CASES: list[tuple[str, str, list[Any], list[Any], bool | None]] = [
    # cuda.py:148-167 conv2d NCHW: int8 on cuda/vulkan/rocm kinds gets the int8 template
    (VULKAN, "conv2d_nchw.cuda", conv(*NCHW_3X3), conv(*NCHW_3X3, dtype="int8"), False),
    (OPENCL, "conv2d_nchw.cuda", conv(*NCHW_3X3, dtype="int8"), [], True),
    # keys cuda, gpu are kind cuda or nvptx: int8 then depends on the kind
    (CUDA, "conv2d_nchw.cuda", conv(*NCHW_3X3), conv(*NCHW_3X3, dtype="int8"), None),
    (VULKAN, "conv2d_NCHWc_int8.cuda", conv(*NCHW_3X3, dtype="int8", extra=["NCHW"], out="int32"),
     conv(*NCHW_3X3, extra=["NCHW"]), False),
    (OPENCL, "conv2d_NCHWc_int8.cuda", [], conv(*NCHW_3X3, dtype="int8", extra=["NCHW"]), False),
    # cuda.py:194-204 winograd: 3x3..7x7 square kernels, stride 1, dilation 1
    (CUDA, "conv2d_nchw_winograd.cuda", conv(*NCHW_3X3), conv(*NCHW_3X3, stride=2), False),
    (CUDA, "conv2d_nchw_winograd.cuda", conv([1, 16, 8, 8], [16, 16, 7, 7]),
     conv([1, 16, 8, 8], [16, 16, 1, 1]), False),
    (CUDA, "conv2d_nchw_winograd.cuda", conv(*NCHW_3X3), conv(*NCHW_3X3, dilation=2), False),
    (CUDA, "conv2d_nchw_winograd.cuda", conv(*NCHW_3X3), conv([1, 16, 8, 8], [16, 16, 3, 5]),
     False),
    # cuda.py:243-261 NHWC winograd: tensor cores pick between direct and tensorcore
    (OPENCL, "conv2d_nhwc_winograd_direct.cuda", conv([1, 8, 8, 16], [3, 3, 16, 16]),
     conv([1, 8, 8, 16], [1, 1, 16, 16]), False),
    (CUDA, "conv2d_nhwc_winograd_direct.cuda", [], conv([1, 8, 8, 16], [3, 3, 16, 16]), None),
    (CUDA, "conv2d_nhwc_winograd_tensorcore.cuda", [], conv([1, 8, 8, 16], [3, 3, 16, 16]),
     None),
    (OPENCL, "conv2d_nhwc_winograd_tensorcore.cuda", [], conv([1, 8, 8, 16], [3, 3, 16, 16]),
     False),
    # cuda.py:262-278 NHWC tensorcore: batch and channels divisible
    (CUDA, "conv2d_nhwc_tensorcore.cuda", [], conv([16, 8, 8, 16], [3, 3, 16, 16]), None),
    (CUDA, "conv2d_nhwc_tensorcore.cuda", [], conv([1, 8, 8, 3], [3, 3, 3, 16]), False),
    # cuda.py:362-378 cuDNN: -libs=cudnn and symmetric padding
    (CUDA, "conv2d_cudnn.cuda", [], conv(*NCHW_3X3, pad=[1, 1, 1, 1], extra=[1, "NCHW"]), None),
    (CUDA, "conv2d_cudnn.cuda", [], conv(*NCHW_3X3, pad=[0, 0, 1, 1], extra=[1, "NCHW"]), False),
    # cuda.py:380-389 depthwise NCHW: is_depthwise_conv2d (a multiplier of 2 is grouped)
    (CUDA, "depthwise_conv2d_nchw.cuda", conv([1, 16, 8, 8], [16, 1, 3, 3]),
     conv([1, 16, 8, 8], [16, 2, 3, 3]), False),
    # cuda.py:419-447 grouped NCHW: int8 fitting 4-channel chunks gets the int8 template
    (VULKAN, "group_conv2d_nchw.cuda", group([1, 32, 8, 8], [32, 8, 3, 3], 4),
     group([1, 32, 8, 8], [32, 8, 3, 3], 4, "int8"), False),
    (VULKAN, "group_conv2d_NCHWc_int8.cuda", group([1, 32, 8, 8], [32, 8, 3, 3], 4, "int8"),
     group([1, 8, 8, 8], [8, 2, 3, 3], 4, "int8"), False),
    (CUDA, "group_conv2d_nchw.cuda", group([1, 32, 8, 8], [32, 8, 3, 3], 4),
     group([1, 32, 8, 8], [32, 1, 3, 3], 32), False),  # depthwise-shaped
    # cuda.py:730-746 conv3d winograd
    (CUDA, "conv3d_ncdhw_winograd.cuda",
     [_t([1, 8, 8, 8, 8]), _t([8, 8, 3, 3, 3]), [1, 1, 1], [1, 1, 1], [1, 1, 1], 1, "float32"],
     [_t([1, 8, 8, 8, 8]), _t([8, 8, 3, 3, 3]), [2, 2, 2], [1, 1, 1], [1, 1, 1], 1, "float32"],
     False),
    # cuda.py:754-768 conv3d NDHWC tensorcore: float16 output
    (CUDA, "conv3d_ndhwc_tensorcore.cuda", [],
     [_t([16, 8, 8, 8, 16], "float16"), _t([3, 3, 3, 16, 16], "float16"), [1, 1, 1], [1, 1, 1],
      [1, 1, 1], 1, "float16"], None),
    (CUDA, "conv3d_ndhwc_tensorcore.cuda", [],
     [_t([16, 8, 8, 8, 16]), _t([3, 3, 3, 16, 16]), [1, 1, 1], [1, 1, 1], [1, 1, 1], 1,
      "float32"], False),
    # cuda.py:900-927 dense: int8 template, small batch (not rocm), large batch (>= 32 or rocm)
    (VULKAN, "dense_int8.cuda", dense(8, "int8", "int32"), dense(8), False),
    (VULKAN, "dense_small_batch.gpu", dense(1), dense(1, "int8", "int32"), False),
    (ROCM, "dense_small_batch.gpu", [], dense(1), False),
    (CUDA, "dense_large_batch.gpu", dense(32), dense(31), False),
    (ROCM, "dense_large_batch.gpu", dense(1), dense(1, "int8", "int32"), False),
    # cuda.py:929-948 dense tensorcore
    (CUDA, "dense_tensorcore.cuda", [], dense(16, "float16"), None),
    (CUDA, "dense_tensorcore.cuda", [], dense(16), False),
    (CUDA, "dense_cublas.cuda", [], dense(16), None),
    (OPENCL, "dense_cublas.cuda", [], dense(16), False),
    # cuda.py:965-1014 batch_matmul: int8, plain, tensorcore
    (CUDA, "batch_matmul_int8.cuda", bmm(8, 8, 8, "int8", "int32"), bmm(8, 8, 8), False),
    (CUDA, "batch_matmul.cuda", bmm(8, 8, 8), bmm(8, 8, 8, "int8", "int32"), False),
    (CUDA, "batch_matmul_tensorcore.cuda", [], bmm(16, 16, 16, "float16"), None),
    (CUDA, "batch_matmul_tensorcore.cuda", [], bmm(16, 16, 16), False),
    # rocm.py:39-51 MIOpen: symmetric padding
    (ROCM, "conv2d_nchw_miopen.rocm", [], conv(*NCHW_3X3, pad=[1, 1, 1, 1]), None),
    (ROCM, "conv2d_nchw_miopen.rocm", [], conv(*NCHW_3X3, pad=[0, 0, 1, 1]), False),
    # x86.py:117-137 conv2d NCHW: uint8 x int8 with sse4.2 -> int8; -libs=dnnl -> dnnl
    (LLVM, "conv2d_NCHWc.x86", x86(*NCHW_3X3, pad=[0, 0, 0, 0]), x86(*NCHW_3X3, stride=2), None),
    (LLVM, "conv2d_NCHWc_int8.x86", [], x86(*NCHW_3X3, **UINT8), None),
    (LLVM, "conv2d_NCHWc_int8.x86", [], x86(*NCHW_3X3), False),
    (LLVM, "conv2d_nchw_dnnl.x86", [], conv(*NCHW_3X3), None),
    # x86.py:205-214 depthwise: multiplier 1 and dilation 1
    (LLVM, "depthwise_conv2d_NCHWc.x86", x86([1, 16, 8, 8], [16, 1, 3, 3]),
     x86([1, 16, 8, 8], [16, 1, 3, 3], dilation=2), False),
    (LLVM, "group_conv2d_nchw.x86", group([1, 32, 8, 8], [32, 8, 3, 3], 4),
     group([1, 32, 8, 8], [32, 1, 3, 3], 32), False),
    # x86.py:560-582 dense with -libs: dtype conditions
    (LLVM, "dense_cblas.x86", [], dense(4), None),
    (LLVM, "dense_cblas.x86", [], dense(4, "int8"), False),
    (LLVM, "dense_mkl.x86", [], dense(4, "uint8", "int32", "int8"), None),
    (LLVM, "dense_mkl.x86", [], dense(4, "float16"), False),
    (LLVM, "dense_dnnl.x86", [], dense(4, "float64"), False),
    (LLVM, "dense_int8.x86", [], dense(4), False),
    # x86.py:622-653 batch_matmul: uint8 x int8 with N % 16 and K % 4 gets the int8 template
    (LLVM, "batch_matmul_int8.x86", bmm(8, 16, 4, "uint8", "int32", "int8"),
     bmm(8, 15, 4, "uint8", "int32", "int8"), False),
    (LLVM, "batch_matmul.x86", bmm(8, 15, 4, "uint8", "int32", "int8"),
     bmm(8, 16, 4, "uint8", "int32", "int8"), False),
    # arm_cpu.py:127-150 conv2d NCHW: int8 with asimd/dotprod and >= 64 input channels
    (ARM, "conv2d_NCHWc_int8.arm_cpu", [], conv([1, 64, 8, 8], [64, 64, 3, 3], dtype="int8"),
     None),
    (ARM, "conv2d_NCHWc_int8.arm_cpu", [], conv([1, 32, 8, 8], [64, 32, 3, 3], dtype="int8"),
     False),
    (ARM, "conv2d_nchw_spatial_pack.arm_cpu", conv([1, 32, 8, 8], [64, 32, 3, 3], dtype="int8"),
     conv([1, 64, 8, 8], [64, 64, 3, 3], dtype="int8"), None),
    (ARM, "conv2d_NCHWc.x86", x86(*NCHW_3X3),
     x86([1, 64, 8, 8], [64, 64, 3, 3], dtype="int8"), None),
    # arm_cpu.py:152-180 winograd: float 3x3 stride 1; NNPACK with padding 1
    (ARM, "conv2d_nchw_winograd.arm_cpu", conv(*NCHW_3X3), conv([1, 16, 8, 8], [16, 16, 5, 5]),
     False),
    (ARM, "conv2d_nchw_winograd.arm_cpu", conv(*NCHW_3X3), conv(*NCHW_3X3, dtype="int8"), False),
    (ARM, "conv2d_nchw_winograd_nnpack.arm_cpu", [], conv(*NCHW_3X3, pad=[1, 1, 1, 1]), None),
    (ARM, "conv2d_nchw_winograd_nnpack.arm_cpu", [], conv(*NCHW_3X3), False),
    # arm_cpu.py:197-300 NHWC: quantized for int8, hybrid for float, all on target features
    (ARM, "conv2d_NHWC_quantized_interleaved.arm_cpu", [],
     conv([1, 8, 8, 16], [3, 3, 16, 16], dtype="int8"), None),
    (ARM, "conv2d_NHWC_quantized_interleaved.arm_cpu", [], conv([1, 8, 8, 16], [3, 3, 16, 16]),
     False),
    (ARM, "conv2d_NHWC_hybrid.arm_cpu", [], conv([1, 8, 8, 16], [3, 3, 16, 16], dtype="int8"),
     False),
    # arm_cpu.py:310-350 depthwise NCHW: DSP for int data; x86's for multiplier 1
    (ARM, "depthwise_conv2d_nchw.arm_cpu", conv([1, 16, 8, 8], [16, 1, 3, 3]),
     conv([1, 16, 8, 8], [16, 1, 3, 3], dtype="int8"), None),
    (ARM, "depthwise_conv2d_NCHWc.x86", x86([1, 16, 8, 8], [16, 1, 3, 3]),
     x86([1, 16, 8, 8], [16, 1, 3, 3], dilation=2), False),
    (ARM, "depthwise_conv2d_nhwc_dsp.arm_cpu", [],
     conv([1, 8, 8, 16], [3, 3, 16, 1], dtype="int8", out="int32"), None),
    (ARM, "depthwise_conv2d_nhwc_dsp.arm_cpu", [], conv([1, 8, 8, 16], [3, 3, 16, 1]), False),
    (ARM, "group_conv2d_nchw.arm_cpu", group([1, 32, 8, 8], [32, 8, 3, 3], 4),
     group([1, 32, 8, 8], [32, 1, 3, 3], 32), False),
    # arm_cpu.py:683-761 dense: DSP with int8/int16 data returns dense_dsp alone
    (ARM, "dense_nopack.x86", dense(4), dense(4, "int8"), None),
    (ARM, "dense_dsp.arm_cpu", [], dense(4, "int16"), None),
    (ARM, "dense_dsp.arm_cpu", [], dense(4), False),
    # mali.py:51-65, bifrost.py:47-61 winograd: 3x3 stride 1
    (MALI, "conv2d_nchw_winograd.mali", conv(*NCHW_3X3), conv(*NCHW_3X3, stride=2), False),
    (BIFROST, "conv2d_nchw_winograd.bifrost", conv(*NCHW_3X3),
     conv([1, 16, 8, 8], [16, 16, 5, 5]), False),
    (MALI, "depthwise_conv2d_nchw.mali", conv([1, 16, 8, 8], [16, 1, 3, 3]),
     conv([1, 16, 8, 8], [16, 2, 3, 3]), False),
    (INTEL, "depthwise_conv2d_nchw.intel_graphics", conv([1, 16, 8, 8], [16, 1, 3, 3]),
     conv([1, 16, 8, 8], [16, 2, 3, 3]), False),
    # adreno.py:38-74 conv2d NCHW: fewer than 4 output channels -> cuda, else textures
    (ADRENO, "conv2d_nchw.cuda", conv([1, 16, 8, 8], [3, 16, 1, 1]),
     conv([1, 16, 8, 8], [4, 16, 1, 1]), False),
    (ADRENO, "conv2d_nchwc.image2d", conv([1, 16, 8, 8], [4, 16, 1, 1]),
     conv([1, 16, 8, 8], [3, 16, 1, 1]), False),
    (ADRENO, "conv2d_nchw_winograd.image2d", conv([1, 16, 8, 8], [8, 16, 5, 5]),
     conv([1, 16, 8, 8], [2, 16, 5, 5]), False),
    (ADRENO, "conv2d_nchw_winograd.image2d", conv([1, 16, 8, 8], [8, 16, 3, 3]),
     conv([1, 16, 8, 8], [8, 16, 3, 3], stride=2), False),
    # adreno.py:75-110 conv2d NHWC likewise
    (ADRENO, "conv2d_nhwc.gpu", conv([1, 8, 8, 16], [1, 1, 16, 2]),
     conv([1, 8, 8, 16], [1, 1, 16, 8]), False),
    (ADRENO, "conv2d_nhwc.image2d", conv([1, 8, 8, 16], [1, 1, 16, 8]),
     conv([1, 8, 8, 16], [1, 1, 16, 2]), False),
    (ADRENO, "conv2d_nhwc_winograd.image2d", conv([1, 8, 8, 16], [3, 3, 16, 8]),
     conv([1, 8, 8, 16], [1, 1, 16, 8]), False),
    # adreno.py:142-170 depthwise: fewer than 4 channels -> cuda (NCHW); NHWC needs 4
    (ADRENO, "depthwise_conv2d_nchw.cuda", conv([1, 2, 8, 8], [2, 1, 3, 3]),
     conv([1, 8, 8, 8], [8, 1, 3, 3]), False),
    (ADRENO, "depthwise_conv2d_nchwc.image2d", conv([1, 8, 8, 8], [8, 1, 3, 3]),
     conv([1, 2, 8, 8], [2, 1, 3, 3]), False),
    (ADRENO, "depthwise_conv2d_nhwc.image2d", conv([1, 8, 8, 8], [3, 3, 8, 1]),
     conv([1, 8, 8, 2], [3, 3, 2, 1]), False),
    # adreno.py:185-207 grouped NCHW: channels per group multiples of 4 -> textures
    (ADRENO, "group_conv2d_nchwc.image2d", group([1, 16, 8, 8], [16, 8, 3, 3], 2),
     group([1, 12, 8, 8], [12, 6, 3, 3], 2), False),
    (ADRENO, "group_conv2d_nchw.cuda", group([1, 12, 8, 8], [12, 6, 3, 3], 2),
     group([1, 16, 8, 8], [16, 8, 3, 3], 2), False),
    # adreno.py:258-287 conv2d_transpose: IOHW kernel, fewer than 4 output channels -> cuda
    (ADRENO, "conv2d_transpose_nchw.cuda", transpose([8, 2, 3, 3]), transpose([8, 8, 3, 3]),
     False),
    (ADRENO, "conv2d_transpose_nchwc.image2d", transpose([8, 8, 3, 3]), transpose([8, 2, 3, 3]),
     False),
]  # fmt: skip


@pytest.mark.parametrize(("target", "template", "offered", "other", "answer"), CASES)
def test_a_strategy_condition_offers_the_template_on_one_side_only(
    target: str, template: str, offered: list[Any], other: list[Any], answer: bool | None
) -> None:
    keys = parse_target(target).keys
    if offered:
        assert relay_offers(keys, template, layer_facts(template, offered)) == OFFERED
    if answer is True:
        return
    if other:
        found = relay_offers(keys, template, layer_facts(template, other))
        if answer is None:
            assert found.offered and not found.certain and found.depends_on, found
        else:
            assert found == NEVER_OFFERED


@pytest.mark.parametrize(("target", "template", "offered", "other", "answer"), CASES)
def test_an_offer_depends_on_the_facts_its_conditions_read_only(
    target: str, template: str, offered: list[Any], other: list[Any], answer: bool | None
) -> None:
    # `layers` judges relay's offer once per distinct value of `offer_facts`: every other
    # fact dropped, each case's offer (on both sides, for every template) stays the same.
    keys = parse_target(target).keys
    for args in (offered, other):
        if not args:
            continue
        facts = layer_facts(template, args)
        for task_name in (template, *sorted(KNOWN_TEMPLATES)[::7]):
            read = {n: facts[n] for n in offer_facts(keys, task_name) if n in facts}
            assert relay_offers(keys, task_name, read) == relay_offers(keys, task_name, facts)


def test_a_conditional_offer_says_what_it_depends_on() -> None:
    facts = layer_facts("conv2d_cudnn.cuda", conv(*NCHW_3X3, pad=[1, 1, 1, 1], extra=[1, "NCHW"]))
    offer = relay_offers(("cuda", "gpu"), "conv2d_cudnn.cuda", facts)
    assert offer == Offer(True, False, ("the target kind", "-libs=cudnn"))
    assert offer.note == "offered depending on the target kind, -libs=cudnn"
    assert OFFERED.note is None


def test_unreadable_arguments_leave_a_condition_open_and_unknown_templates_offered() -> None:
    assert relay_offers(("adreno", "opencl", "gpu"), "conv2d_nchw.cuda", {}).certain is False
    assert relay_offers(("cuda", "gpu"), "my_template", {}) == OFFERED
    assert relay_offers(("cuda", "gpu"), "conv2d_nchwc.image2d", {}) == NEVER_OFFERED
    # a key with no strategy in TVM: offered only on that condition (a strategy outside TVM)
    assert relay_offers(("foo",), "conv2d_nchw.cuda", {}).certain is False


@pytest.mark.parametrize(
    ("cond", "answer"),
    [
        (All((fact_test("a", "==", 1), fact_test("b", "==", 2))), True),
        (All((fact_test("a", "==", 1), Target("x"))), None),
        (All((fact_test("a", "==", 2), Target("x"))), False),
        (AnyOf((fact_test("a", "==", 2), Target("x"))), None),
        (AnyOf((fact_test("a", "==", 1), Target("x"))), True),
        (AnyOf(()), False),
        (Not(Target("x")), None),
        (Not(fact_test("a", "<", 1)), True),
        (fact_test("missing", "==", 1), None),
        (fact_test("b", "divides", 2), True),
        (fact_test("b", "divides", 3), False),
        (fact_test("a", "in", (1, 3)), True),
        (fact_test("a", "not in", (1, 3)), False),
        (fact_test("kind", "==", "cuda"), None),  # cuda or nvptx
        (fact_test("kind", "in", ("cuda", "nvptx")), True),
        (fact_test("kind", "!=", "rocm"), True),
    ],
)
def test_conditions_read_three_valued(cond: Any, answer: bool | None) -> None:
    assert holds(cond, {"a": 1, "b": 2}, ("cuda", "gpu")) is answer


def test_the_target_kind_is_read_from_the_keys() -> None:
    assert possible_kinds(("adreno", "opencl", "gpu")) == frozenset({"opencl"})
    assert possible_kinds(("cuda", "gpu")) == frozenset({"cuda", "nvptx"})
    assert possible_kinds(("foo",)) is None
    with pytest.raises(ValueError, match="unknown operator"):
        fact_test("a", "~", 1)
