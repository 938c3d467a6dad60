"""Relay's strategy conditions for the GPU keys: cuda (and gpu), mali, bifrost, rocm,
intel_graphics, adreno (TVM v0.19 `python/tvm/relay/op/strategy/<key>.py`, lines cited)."""

from __future__ import annotations

from tunelog.conditions import Cond, Not, Target, all_of, any_of, test
from tunelog.strategy_conditions.terms import (
    BOTH_INT8,
    DEPTHWISE,
    G1,
    GROUPED,
    INT8,
    KERNEL4,
    KERNEL5,
    NCHW,
    NEVER,
    NHWC,
    PACKED,
    WINOGRAD_3_TO_7,
    WINOGRAD_3X3,
    divisible,
)

_CUDA_INT8_KINDS = test("kind", "in", ("cuda", "vulkan", "rocm"))
_KIND_CUDA = test("kind", "==", "cuda")
_TENSORCORE = Target("tensor cores (-arch)")

_CUDA_CONV2D: dict[str, Cond] = {  # cuda.py:135-457 (conv2d_strategy_cuda)
    # 148-167: NCHW int8 on cuda/vulkan/rocm kinds gets the int8 template instead
    "conv2d_nchw.cuda": all_of(G1, NCHW, Not(all_of(_CUDA_INT8_KINDS, BOTH_INT8))),
    # 151-161 (NCHW) and 338-348 (NCHW4c int8)
    "conv2d_NCHWc_int8.cuda": all_of(
        G1,
        any_of(
            all_of(NCHW, _CUDA_INT8_KINDS, BOTH_INT8),
            all_of(test("layout", "==", "NCHW4c"), _CUDA_INT8_KINDS, test("dtype", "in", INT8)),
        ),
    ),
    "conv2d_nchw_winograd.cuda": all_of(G1, NCHW, WINOGRAD_3_TO_7),  # 194-204
    "conv2d_hwcn.cuda": all_of(G1, test("layout", "==", "HWCN")),  # 205-211
    "conv2d_nhwc.gpu": all_of(G1, NHWC),  # 212-217
    # 243-261: tensor cores and the tile shape pick one of the two NHWC winograd templates
    "conv2d_nhwc_winograd_tensorcore.cuda": all_of(
        G1, NHWC, WINOGRAD_3_TO_7, _KIND_CUDA, _TENSORCORE
    ),
    "conv2d_nhwc_winograd_direct.cuda": all_of(
        G1, NHWC, WINOGRAD_3_TO_7, Not(all_of(_KIND_CUDA, _TENSORCORE))
    ),
    "conv2d_nhwc_tensorcore.cuda": all_of(  # 262-278
        G1,
        NHWC,
        _KIND_CUDA,
        _TENSORCORE,
        any_of(
            divisible(("batch", 16), ("in_channels", 16), ("out_channels", 16)),
            divisible(("batch", 8), ("in_channels", 16), ("out_channels", 32)),
            divisible(("batch", 32), ("in_channels", 16), ("out_channels", 8)),
        ),
    ),
    "conv2d_HWNCnc_tensorcore.cuda": all_of(  # 297-332
        G1, test("layout", "==", "HWNC"), _KIND_CUDA, _TENSORCORE
    ),
    "conv2d_cudnn.cuda": all_of(  # 362-378 and 400-417: not for NCHW depthwise (380-389)
        _KIND_CUDA,
        Target("-libs=cudnn"),
        test("layout", "in", ("NCHW", "NHWC")),
        test("symmetric_padding", "==", True),
        Not(test("dtype", "in", INT8)),
        Not(test("kernel_dtype", "in", INT8)),
        any_of(G1, Not(DEPTHWISE), Not(NCHW)),
    ),
    "depthwise_conv2d_nchw.cuda": all_of(DEPTHWISE, NCHW),  # 380-389
    # 419-447: int8 grouped NCHW whose groups fit 4-channel chunks gets the int8 template
    "group_conv2d_nchw.cuda": all_of(
        GROUPED,
        NCHW,
        Not(
            all_of(
                _CUDA_INT8_KINDS,
                BOTH_INT8,
                divisible(("in_channels", 4), ("out_channels", 4)),
                test("in_per_group", ">=", 4),
                test("out_per_group", ">=", 4),
            )
        ),
    ),
    "group_conv2d_NCHWc_int8.cuda": all_of(
        GROUPED,
        any_of(
            all_of(
                NCHW,
                _CUDA_INT8_KINDS,
                BOTH_INT8,
                divisible(("in_channels", 4), ("out_channels", 4)),
                test("in_per_group", ">=", 4),
                test("out_per_group", ">=", 4),
            ),
            all_of(test("layout", "==", "NCHW4c"), test("dtype", "in", INT8)),  # 448-454
        ),
    ),
}

_INT8_DENSE = all_of(  # cuda.py:900-910
    _CUDA_INT8_KINDS,
    test("dtype", "==", "int8"),
    test("kernel_dtype", "==", "int8"),
    test("out_dtype", "==", "int32"),
)
_INT8_BATCH_MATMUL = all_of(  # cuda.py:965-976
    test("dtype", "==", "int8"),
    test("kernel_dtype", "==", "int8"),
    test("out_dtype", "==", "int32"),
    test("transpose_a", "==", False),
    test("transpose_b", "==", True),
)
CUDA_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": _CUDA_CONV2D,
    "conv2d_transpose": {"conv2d_transpose_nchw.cuda": NCHW},  # cuda.py:663-669
    "conv3d": {  # cuda.py:714-777
        "conv3d_ncdhw.cuda": test("layout", "==", "NCDHW"),
        "conv3d_ncdhw_winograd.cuda": all_of(test("layout", "==", "NCDHW"), WINOGRAD_3_TO_7, G1),
        "conv3d_ndhwc.cuda": test("layout", "==", "NDHWC"),
        "conv3d_ndhwc_tensorcore.cuda": all_of(
            test("layout", "==", "NDHWC"),
            _KIND_CUDA,
            _TENSORCORE,
            test("out_dtype", "==", "float16"),
            any_of(
                divisible(("batch", 16), ("in_channels", 16), ("out_channels", 16)),
                divisible(("batch", 8), ("in_channels", 16), ("out_channels", 32)),
                divisible(("batch", 32), ("in_channels", 16), ("out_channels", 8)),
            ),
        ),
        "conv3d_cudnn.cuda": all_of(_KIND_CUDA, Target("-libs=cudnn")),
    },
    "conv1d": {  # cuda.py:800-838
        "conv1d_ncw.cuda": all_of(G1, test("layout", "==", "NCW")),
        "conv1d_nwc.cuda": all_of(G1, test("layout", "==", "NWC")),
    },
    "matmul": {"matmul_cublas.cuda": all_of(_KIND_CUDA, Target("-libs=cublas"))},  # cuda.py:883-889
    "dense": {  # cuda.py:893-957
        "dense_int8.cuda": _INT8_DENSE,
        "dense_small_batch.gpu": all_of(Not(_INT8_DENSE), test("kind", "!=", "rocm")),
        # 921: SpecializedCondition(rocm or b >= 32); static shapes decide it
        "dense_large_batch.gpu": all_of(
            Not(_INT8_DENSE), any_of(test("kind", "==", "rocm"), test("batch", ">=", 32))
        ),
        "dense_tensorcore.cuda": all_of(
            _KIND_CUDA,
            _TENSORCORE,
            any_of(
                all_of(
                    test("dtype", "in", ("float16", "int8", "uint8")),
                    any_of(
                        divisible(("in_dim", 16), ("batch", 16), ("out_dim", 16)),
                        divisible(("in_dim", 16), ("batch", 8), ("out_dim", 32)),
                        divisible(("in_dim", 16), ("batch", 32), ("out_dim", 8)),
                    ),
                ),
                all_of(
                    test("dtype", "in", ("int4", "uint4")),
                    divisible(("in_dim", 32), ("batch", 8), ("out_dim", 8)),
                ),
                all_of(
                    test("dtype", "in", ("int1", "uint1")),
                    divisible(("in_dim", 128), ("batch", 8), ("out_dim", 8)),
                ),
            ),
        ),
        "dense_cublas.cuda": all_of(_KIND_CUDA, Target("-libs=cublas")),
    },
    "batch_matmul": {  # cuda.py:960-1018
        "batch_matmul_int8.cuda": _INT8_BATCH_MATMUL,
        "batch_matmul.cuda": Not(_INT8_BATCH_MATMUL),
        "batch_matmul_cublas.cuda": all_of(_KIND_CUDA, Target("-libs=cublas")),
        "batch_matmul_tensorcore.cuda": all_of(
            _KIND_CUDA,
            _TENSORCORE,
            test("transpose_a", "==", False),
            test("transpose_b", "==", True),
            any_of(
                all_of(
                    test("dtype", "in", ("float16", "int8", "uint8")),
                    any_of(
                        divisible(("m", 8), ("k", 16), ("n", 32)),
                        divisible(("m", 16), ("k", 16), ("n", 16)),
                        divisible(("m", 32), ("k", 16), ("n", 8)),
                    ),
                ),
                all_of(
                    test("dtype", "in", ("int4", "uint4")),
                    divisible(("k", 32), ("m", 8), ("n", 8)),
                ),
            ),
        ),
    },
}


MALI_CONDITIONS: dict[str, dict[str, Cond]] = {
    # mali.py:170-188: after alter_op_layout, a kernel already transformed to 5-D
    "conv2d_winograd_without_weight_transform": {"conv2d_nchw_winograd.mali": KERNEL5},
    "conv2d": {  # mali.py:29-167
        "conv2d_nchw_spatial_pack.mali": all_of(G1, NCHW),  # 43-71
        "conv2d_nchw_winograd.mali": all_of(G1, NCHW, KERNEL4, WINOGRAD_3X3),  # 51-65
        "conv2d_nhwc_spatial_pack.mali": all_of(G1, NHWC),  # 74-131
        "depthwise_conv2d_nchw.mali": all_of(DEPTHWISE, NCHW),  # 135-142
        "depthwise_conv2d_nhwc.mali": all_of(DEPTHWISE, NHWC),  # 143-162
    },
}

BIFROST_CONDITIONS: dict[str, dict[str, Cond]] = {
    # bifrost.py:101-120: after alter_op_layout, a kernel already transformed (4-D, but its
    # second axis is not the input channels)
    "conv2d_winograd_without_weight_transform": {
        "conv2d_nchw_winograd.bifrost": test("kernel_fits_data", "==", False)
    },
    "conv2d": {  # bifrost.py:25-98
        "conv2d_nchw_spatial_pack.bifrost": all_of(G1, NCHW),  # 39-67
        "conv2d_nchw_winograd.bifrost": all_of(G1, NCHW, KERNEL4, WINOGRAD_3X3),  # 47-61
        "conv2d_nhwc_spatial_pack.mali": all_of(G1, NHWC),  # 68-75
        "depthwise_conv2d_nhwc.mali": all_of(DEPTHWISE, NHWC),  # 86-92
    },
}

ROCM_CONDITIONS: dict[str, dict[str, Cond]] = {
    # rocm.py:29-53, 57-70, 73-86 call cuda.py's strategies, then add the -libs templates
    "conv2d": {
        **_CUDA_CONV2D,
        "conv2d_nchw_miopen.rocm": all_of(
            Target("-libs=miopen"), G1, NCHW, test("symmetric_padding", "==", True)
        ),
    },
    "dense": {
        **CUDA_CONDITIONS["dense"],
        "dense_rocblas.rocm": all_of(test("kind", "==", "rocm"), Target("-libs=rocblas")),
    },
    "batch_matmul": {
        **CUDA_CONDITIONS["batch_matmul"],
        "batch_matmul_rocblas.rocm": all_of(test("kind", "==", "rocm"), Target("-libs=rocblas")),
    },
}

INTEL_GRAPHICS_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": {  # intel_graphics.py:24-68
        "conv2d_NCHWc.intel_graphics": all_of(G1, NCHW),  # 36-53
        "depthwise_conv2d_nchw.intel_graphics": all_of(DEPTHWISE, NCHW),  # 56-63
    },
    "conv2d_NCHWc": {"conv2d_NCHWc.intel_graphics": PACKED},  # intel_graphics.py:71-82
}

# adreno.py:24-216: textures need 4 output channels; fewer get cuda's templates instead
_FEW_CHANNELS = all_of(KERNEL4, test("out_channels", "<", 4))
_ADRENO_CONV2D_WHEN: dict[str, Cond] = {
    "conv2d_nchw.cuda": all_of(G1, NCHW, _FEW_CHANNELS),  # 38-56
    "conv2d_nchw_winograd.image2d": all_of(  # 57-68 (not for an OIHW4o kernel on NCHW data)
        G1, NCHW, KERNEL4, Not(_FEW_CHANNELS), WINOGRAD_3_TO_7
    ),
    "conv2d_nchwc.image2d": all_of(G1, NCHW, Not(_FEW_CHANNELS)),  # 69-74
    "conv2d_nhwc.gpu": all_of(G1, NHWC, _FEW_CHANNELS),  # 75-92
    "conv2d_nhwc_winograd.image2d": all_of(  # 93-104
        G1, NHWC, KERNEL4, Not(_FEW_CHANNELS), WINOGRAD_3_TO_7
    ),
    "conv2d_nhwc.image2d": all_of(G1, NHWC, Not(_FEW_CHANNELS)),  # 105-110
    "depthwise_conv2d_nchw.cuda": all_of(DEPTHWISE, NCHW, _FEW_CHANNELS),  # 142-153
    "depthwise_conv2d_nchwc.image2d": all_of(DEPTHWISE, NCHW, Not(_FEW_CHANNELS)),  # 154-160
    "depthwise_conv2d_nhwc.image2d": all_of(  # 161-170
        DEPTHWISE, NHWC, test("in_channels", ">=", 4)
    ),
    # 185-207: grouped NCHW whose channels per group are multiples of 4 gets the texture one
    "group_conv2d_nchwc.image2d": all_of(
        GROUPED, NCHW, divisible(("in_per_group", 4), ("out_per_group", 4))
    ),
    "group_conv2d_nchw.cuda": all_of(
        GROUPED,
        NCHW,
        KERNEL4,
        Not(divisible(("in_per_group", 4), ("out_per_group", 4))),
    ),
}
ADRENO_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": _ADRENO_CONV2D_WHEN,
    # the same function serves conv2d_NCHWc, whose layouts are packed (NCHW4c, 5-D kernels):
    # only the texture templates; plain-layout workloads are conv2d's
    "conv2d_NCHWc": {
        name: PACKED if name.endswith(".image2d") else NEVER for name in _ADRENO_CONV2D_WHEN
    },
    "conv2d_transpose": {  # adreno.py:247-296
        "conv2d_transpose_nchw.cuda": all_of(NCHW, any_of(test("groups", "!=", 1), _FEW_CHANNELS)),
        "conv2d_transpose_nchwc.image2d": all_of(G1, NCHW, Not(_FEW_CHANNELS)),
    },
}
