"""Relay's strategy conditions for the CPU keys: cpu (x86.py) and arm_cpu (arm_cpu.py), TVM
v0.19 `python/tvm/relay/op/strategy/`, lines cited."""

from __future__ import annotations

from tunelog.conditions import Cond, Not, Target, all_of, any_of, test
from tunelog.strategy_conditions.terms import (
    DEPTHWISE,
    DILATION1,
    FLOATS,
    G1,
    GROUPED,
    INT8,
    KERNEL4,
    KERNEL5,
    NCHW,
    NHWC,
    PACKED,
    STRIDE1,
    WINOGRAD_3X3,
    divisible,
)

# x86.py: is_int8_hw_support (topi/x86/conv2d_int8.py:72-89) is uint8 data, int8 kernel, and
# an sse4.2 target.
_X86_INT8 = all_of(
    test("dtype", "==", "uint8"), test("kernel_dtype", "==", "int8"), Target("-mcpu with sse4.2")
)
_DNNL = Target("-libs=dnnl")
_X86_DEPTHWISE = all_of(DEPTHWISE, NCHW, test("multiplier", "==", 1), DILATION1)
_X86_SAME_FLOAT = all_of(
    test("same_dtype", "==", True), test("dtype", "in", ("float32", "float64"))
)
X86_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": {  # x86.py:101-262 (conv2d_strategy_cpu)
        "conv2d_NCHWc_int8.x86": all_of(G1, NCHW, _X86_INT8),  # 120-125
        "conv2d_nchw_dnnl.x86": all_of(G1, NCHW, Not(_X86_INT8), _DNNL),  # 126-131
        "conv2d_NCHWc.x86": all_of(G1, NCHW, Not(_X86_INT8), Not(_DNNL)),  # 132-137
        "conv2d_nhwc_dnnl.x86": all_of(G1, NHWC, _DNNL),  # 141-150
        "depthwise_conv2d_NCHWc.x86": _X86_DEPTHWISE,  # 205-214
        "group_conv2d_nchw.x86": all_of(GROUPED, NCHW),  # 240-247
    },
    "conv2d_NCHWc": {  # x86.py:265-284
        "conv2d_NCHWc_int8.x86": all_of(PACKED, _X86_INT8),
        "conv2d_NCHWc.x86": all_of(PACKED, Not(_X86_INT8)),
    },
    "depthwise_conv2d_NCHWc": {"depthwise_conv2d_NCHWc.x86": PACKED},  # x86.py:287-298
    # x86.py:301-322: topi.x86.conv2d_transpose_nchw (topi/x86/conv2d_transpose.py:25-36)
    # reuses conv2d_nchw on the dilated input: a stride-1, unpadded NCHW conv2d_NCHWc task
    "conv2d_transpose": {
        "conv2d_NCHWc.x86": all_of(
            G1, NCHW, STRIDE1, DILATION1, test("padding", "==", (0, 0, 0, 0))
        )
    },
    "conv3d": {  # x86.py:343-385
        "conv3d_ncdhw.x86": test("layout", "==", "NCDHW"),
        "conv3d_ndhwc.x86": test("layout", "==", "NDHWC"),
    },
    "dense": {  # x86.py:506-584: nopack and pack always (static shapes)
        "dense_cblas.x86": all_of(Target("-libs=cblas"), _X86_SAME_FLOAT),
        "dense_mkl.x86": all_of(
            Target("-libs=mkl"),
            any_of(
                _X86_SAME_FLOAT,
                all_of(
                    test("dtype", "==", "uint8"),
                    test("kernel_dtype", "==", "int8"),
                    test("out_dtype", "==", "int32"),
                ),
            ),
        ),
        "dense_dnnl.x86": all_of(
            _DNNL, test("same_dtype", "==", True), test("dtype", "==", "float32")
        ),
    },
    "dense_pack": {  # x86.py:587-611 (after alter_op_layout; weight layout NC16n4c)
        "dense_int8.x86": all_of(
            test("dtype", "==", "uint8"),
            test("kernel_dtype", "==", "int8"),
            test("out_dtype", "==", "int32"),
            Target("the NC16n4c weight layout"),
        ),
    },
    "batch_matmul": {  # x86.py:614-669
        "batch_matmul_int8.x86": all_of(
            test("transpose_a", "==", False),
            test("transpose_b", "==", True),
            test("dtype", "==", "uint8"),
            test("kernel_dtype", "==", "int8"),
            divisible(("n", 16), ("k", 4)),
        ),
        "batch_matmul.x86": Not(
            all_of(
                test("transpose_a", "==", False),
                test("transpose_b", "==", True),
                test("dtype", "==", "uint8"),
                test("kernel_dtype", "==", "int8"),
                divisible(("n", 16), ("k", 4)),
            )
        ),
        "batch_matmul_cblas.x86": Target("-libs=cblas"),
        "batch_matmul_mkl.x86": Target("-libs=mkl"),
    },
}

# arm_cpu.py: is_int8_hw_support (topi/arm_cpu/conv2d_int8.py:108-127) is equal int8 dtypes and
# a target with asimd or dotprod.
_ARM_INT8 = all_of(
    test("dtype", "in", INT8),
    test("same_kernel_dtype", "==", True),
    Target("-mattr with neon or dotprod"),
)
_ARM_INT8_NCHW = all_of(_ARM_INT8, test("in_channels", ">=", 64))  # arm_cpu.py:127-130
# _is_simd_aligned (arm_cpu.py:91-105) holds only for int8/int16/int32 data
_ARM_DSP_DEPTHWISE = all_of(
    Target("-mattr with dsp"), DILATION1, test("dtype", "in", ("int8", "int16", "int32"))
)
_ARM_NHWC = Target("has_dsp and the kernel layout (OHWI, HWOI or HWIO)")
ARM_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": {  # arm_cpu.py:108-424 (conv2d_strategy_arm_cpu)
        "conv2d_NCHWc_int8.arm_cpu": all_of(G1, NCHW, KERNEL4, _ARM_INT8_NCHW),  # 127-136
        "conv2d_nchw_spatial_pack.arm_cpu": all_of(  # 137-145, and 181-186 (OIHW4o kernels)
            G1, NCHW, any_of(Not(KERNEL4), Not(_ARM_INT8_NCHW))
        ),
        "conv2d_NCHWc.x86": all_of(G1, NCHW, KERNEL4, Not(_ARM_INT8_NCHW)),  # 146-150
        "conv2d_nchw_winograd.arm_cpu": all_of(  # 152-173
            G1,
            NCHW,
            KERNEL4,
            test("dtype", "in", FLOATS),
            test("kernel_dtype", "in", FLOATS),
            WINOGRAD_3X3,
        ),
        "conv2d_nchw_winograd_nnpack.arm_cpu": all_of(  # 174-180
            G1,
            NCHW,
            KERNEL4,
            test("dtype", "in", FLOATS),
            test("kernel_dtype", "in", FLOATS),
            WINOGRAD_3X3,
            Target("-libs=nnpack"),
            test("padding", "==", (1, 1, 1, 1)),
        ),
        "conv2d_nhwc_dsp.arm_cpu": all_of(G1, NHWC, _ARM_NHWC),  # 212-217
        "conv2d_NHWC_quantized_interleaved.arm_cpu": all_of(  # 218-256
            G1, NHWC, test("dtype", "in", INT8), _ARM_NHWC
        ),
        "conv2d_NHWC_quantized_native.arm_cpu": all_of(
            G1, NHWC, test("dtype", "in", INT8), _ARM_NHWC
        ),
        "conv2d_NHWC_hybrid.arm_cpu": all_of(  # 258-291
            G1, NHWC, test("dtype", "in", ("float32", "float16")), _ARM_NHWC
        ),
        "conv2d_nhwc_spatial_pack.arm_cpu": all_of(G1, NHWC, _ARM_NHWC),  # 292-300
        "depthwise_conv2d_nchw.arm_cpu": all_of(  # 310-331
            DEPTHWISE, NCHW, Not(_ARM_DSP_DEPTHWISE)
        ),
        "depthwise_conv2d_NCHWc.x86": _X86_DEPTHWISE,  # 343-350
        "depthwise_conv2d_nhwc.arm_cpu": all_of(DEPTHWISE, NHWC, _ARM_NHWC),  # 351-371
        "depthwise_conv2d_nhwc_dsp.arm_cpu": all_of(  # 378-396
            DEPTHWISE,
            NHWC,
            test("out_dtype", "==", "int32"),
            test("dtype", "in", ("int8", "int16")),
            _ARM_NHWC,
        ),
        "group_conv2d_nchw.arm_cpu": all_of(GROUPED, NCHW),  # 406-413
    },
    "conv2d_NCHWc": {  # arm_cpu.py:427-446
        "conv2d_NCHWc_int8.arm_cpu": all_of(PACKED, _ARM_INT8),
        "conv2d_NCHWc.x86": all_of(PACKED, Not(_ARM_INT8)),
    },
    "depthwise_conv2d_NCHWc": {"depthwise_conv2d_NCHWc.x86": PACKED},  # arm_cpu.py:449-460
    # arm_cpu.py:477-500: after alter_op_layout, a kernel already transformed to 5-D
    "conv2d_winograd_without_weight_transform": {"conv2d_nchw_winograd.arm_cpu": KERNEL5},
    "conv2d_transpose": {"conv2d_transpose_nchw.arm_cpu": NCHW},  # arm_cpu.py:625-640
    "dense": {  # arm_cpu.py:677-765: has_dsp with int8/int16 data returns dense_dsp alone
        "dense_dsp.arm_cpu": all_of(
            Target("-mattr with dsp"), test("dtype", "in", ("int8", "int16"))
        ),
        "dense_nopack.x86": Not(
            all_of(Target("-mattr with dsp"), test("dtype", "in", ("int8", "int16")))
        ),
        "dense_pack.x86": Not(
            all_of(Target("-mattr with dsp"), test("dtype", "in", ("int8", "int16")))
        ),
    },
    # arm_cpu.py:817-838: NWC with has_dsp and a WOI kernel
    "conv1d": {"conv1d_nwc_dsp.arm_cpu": all_of(test("layout", "==", "NWC"), Target("has_dsp"))},
}
