"""When relay's op strategies offer a template: the conditions on the layer, as data.

Pure data, read by `tunelog.strategies.relay_offers` through `tunelog.conditions.holds`.
Written from TVM v0.19.0's `python/tvm/relay/op/strategy/*.py` (tag v0.19.0, commit
c4dc0c29); each entry cites the file and lines of the `if` it transcribes. Nothing is copied.

Where a v0.19 strategy adds a template only under an `if`, the condition is written here, per
strategy key, relay operator and tuning task name (the same keys, operators and names as
`strategies.STRATEGIES`). A template with no entry is offered for every layer of its operator.
Facts come from the workload's own arguments (`workloads.layer_facts`), in relay's terms;
`kind` is the target kind read from the keys; `Target(...)` is what only the compile target
knows (-libs, -mattr/-mcpu features, tensor cores), which the log does not hold.

Templates without an entry on purpose: the `*without_weight_transform*` ones (their kernel is
already transformed, tunelog reads no facts from it, and each is a layer of its own), VTA and
bitserial templates (no facts read), and operators with one template per key.
"""

from __future__ import annotations

from tunelog.conditions import Cond, Not, Target, all_of, any_of, test

_NEVER = any_of()
_G1 = test("groups", "==", 1)
_DEPTHWISE = test("depthwise", "==", True)
_GROUPED = all_of(test("groups", "!=", 1), Not(_DEPTHWISE))  # relay's group_conv2d branch
_NCHW = test("layout", "==", "NCHW")
_NHWC = test("layout", "==", "NHWC")
_KERNEL4 = test("kernel_rank", "==", 4)
_KERNEL5 = test("kernel_rank", "==", 5)
_STRIDE1 = all_of(test("stride_h", "==", 1), test("stride_w", "==", 1))
_DILATION1 = all_of(test("dilation_h", "==", 1), test("dilation_w", "==", 1))
_INT8 = ("int8", "uint8")
_FLOATS = ("float16", "float32", "float64", "bfloat16")  # `"float" in dtype`
_BOTH_INT8 = all_of(test("dtype", "in", _INT8), test("kernel_dtype", "in", _INT8))
# relay's conv2d_NCHWc / depthwise_conv2d_NCHWc / dense_pack operators exist only after
# alter_op_layout, whose workloads are packed; a plain-layout workload is the conv2d's.
_PACKED = Not(test("layout", "in", ("NCHW", "NHWC", "HWCN", "NCW", "NWC", "NCDHW", "NDHWC")))
# kernels 3x3 to 7x7, square, stride 1, dilation 1 (cuda judge_winograd, adreno image2d)
_WINOGRAD_3_TO_7 = all_of(
    test("kh", ">", 2),
    test("kh", "<", 8),
    test("kw", ">", 2),
    test("kw", "<", 8),
    test("square_kernel", "==", True),
    _STRIDE1,
    _DILATION1,
)
_WINOGRAD_3X3 = all_of(test("kh", "==", 3), test("kw", "==", 3), _STRIDE1, _DILATION1)
_CUDA_INT8_KINDS = test("kind", "in", ("cuda", "vulkan", "rocm"))
_KIND_CUDA = test("kind", "==", "cuda")
_TENSORCORE = Target("tensor cores (-arch)")


def _divisible(*pairs: tuple[str, int]) -> Cond:
    return all_of(*(test(fact, "divides", n) for fact, n in pairs))


_CUDA_CONV2D: dict[str, Cond] = {  # cuda.py:135-457 (conv2d_strategy_cuda)
    # 148-167: NCHW int8 on cuda/vulkan/rocm kinds gets the int8 template instead
    "conv2d_nchw.cuda": all_of(_G1, _NCHW, Not(all_of(_CUDA_INT8_KINDS, _BOTH_INT8))),
    # 151-161 (NCHW) and 338-348 (NCHW4c int8)
    "conv2d_NCHWc_int8.cuda": all_of(
        _G1,
        any_of(
            all_of(_NCHW, _CUDA_INT8_KINDS, _BOTH_INT8),
            all_of(test("layout", "==", "NCHW4c"), _CUDA_INT8_KINDS, test("dtype", "in", _INT8)),
        ),
    ),
    "conv2d_nchw_winograd.cuda": all_of(_G1, _NCHW, _WINOGRAD_3_TO_7),  # 194-204
    "conv2d_hwcn.cuda": all_of(_G1, test("layout", "==", "HWCN")),  # 205-211
    "conv2d_nhwc.gpu": all_of(_G1, _NHWC),  # 212-217
    # 243-261: tensor cores and the tile shape pick one of the two NHWC winograd templates
    "conv2d_nhwc_winograd_tensorcore.cuda": all_of(
        _G1, _NHWC, _WINOGRAD_3_TO_7, _KIND_CUDA, _TENSORCORE
    ),
    "conv2d_nhwc_winograd_direct.cuda": all_of(
        _G1, _NHWC, _WINOGRAD_3_TO_7, Not(all_of(_KIND_CUDA, _TENSORCORE))
    ),
    "conv2d_nhwc_tensorcore.cuda": all_of(  # 262-278
        _G1,
        _NHWC,
        _KIND_CUDA,
        _TENSORCORE,
        any_of(
            _divisible(("batch", 16), ("in_channels", 16), ("out_channels", 16)),
            _divisible(("batch", 8), ("in_channels", 16), ("out_channels", 32)),
            _divisible(("batch", 32), ("in_channels", 16), ("out_channels", 8)),
        ),
    ),
    "conv2d_HWNCnc_tensorcore.cuda": all_of(  # 297-332
        _G1, test("layout", "==", "HWNC"), _KIND_CUDA, _TENSORCORE
    ),
    "conv2d_cudnn.cuda": all_of(  # 362-378 and 400-417: not for NCHW depthwise (380-389)
        _KIND_CUDA,
        Target("-libs=cudnn"),
        test("layout", "in", ("NCHW", "NHWC")),
        test("symmetric_padding", "==", True),
        Not(test("dtype", "in", _INT8)),
        Not(test("kernel_dtype", "in", _INT8)),
        any_of(_G1, Not(_DEPTHWISE), Not(_NCHW)),
    ),
    "depthwise_conv2d_nchw.cuda": all_of(_DEPTHWISE, _NCHW),  # 380-389
    # 419-447: int8 grouped NCHW whose groups fit 4-channel chunks gets the int8 template
    "group_conv2d_nchw.cuda": all_of(
        _GROUPED,
        _NCHW,
        Not(
            all_of(
                _CUDA_INT8_KINDS,
                _BOTH_INT8,
                _divisible(("in_channels", 4), ("out_channels", 4)),
                test("in_per_group", ">=", 4),
                test("out_per_group", ">=", 4),
            )
        ),
    ),
    "group_conv2d_NCHWc_int8.cuda": all_of(
        _GROUPED,
        any_of(
            all_of(
                _NCHW,
                _CUDA_INT8_KINDS,
                _BOTH_INT8,
                _divisible(("in_channels", 4), ("out_channels", 4)),
                test("in_per_group", ">=", 4),
                test("out_per_group", ">=", 4),
            ),
            all_of(test("layout", "==", "NCHW4c"), test("dtype", "in", _INT8)),  # 448-454
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
_CUDA_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": _CUDA_CONV2D,
    "conv2d_transpose": {"conv2d_transpose_nchw.cuda": _NCHW},  # cuda.py:663-669
    "conv3d": {  # cuda.py:714-777
        "conv3d_ncdhw.cuda": test("layout", "==", "NCDHW"),
        "conv3d_ncdhw_winograd.cuda": all_of(test("layout", "==", "NCDHW"), _WINOGRAD_3_TO_7, _G1),
        "conv3d_ndhwc.cuda": test("layout", "==", "NDHWC"),
        "conv3d_ndhwc_tensorcore.cuda": all_of(
            test("layout", "==", "NDHWC"),
            _KIND_CUDA,
            _TENSORCORE,
            test("out_dtype", "==", "float16"),
            any_of(
                _divisible(("batch", 16), ("in_channels", 16), ("out_channels", 16)),
                _divisible(("batch", 8), ("in_channels", 16), ("out_channels", 32)),
                _divisible(("batch", 32), ("in_channels", 16), ("out_channels", 8)),
            ),
        ),
        "conv3d_cudnn.cuda": all_of(_KIND_CUDA, Target("-libs=cudnn")),
    },
    "conv1d": {  # cuda.py:800-838
        "conv1d_ncw.cuda": all_of(_G1, test("layout", "==", "NCW")),
        "conv1d_nwc.cuda": all_of(_G1, test("layout", "==", "NWC")),
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
                        _divisible(("in_dim", 16), ("batch", 16), ("out_dim", 16)),
                        _divisible(("in_dim", 16), ("batch", 8), ("out_dim", 32)),
                        _divisible(("in_dim", 16), ("batch", 32), ("out_dim", 8)),
                    ),
                ),
                all_of(
                    test("dtype", "in", ("int4", "uint4")),
                    _divisible(("in_dim", 32), ("batch", 8), ("out_dim", 8)),
                ),
                all_of(
                    test("dtype", "in", ("int1", "uint1")),
                    _divisible(("in_dim", 128), ("batch", 8), ("out_dim", 8)),
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
                        _divisible(("m", 8), ("k", 16), ("n", 32)),
                        _divisible(("m", 16), ("k", 16), ("n", 16)),
                        _divisible(("m", 32), ("k", 16), ("n", 8)),
                    ),
                ),
                all_of(
                    test("dtype", "in", ("int4", "uint4")),
                    _divisible(("k", 32), ("m", 8), ("n", 8)),
                ),
            ),
        ),
    },
}

# x86.py: is_int8_hw_support (topi/x86/conv2d_int8.py:72-89) is uint8 data, int8 kernel, and
# an sse4.2 target.
_X86_INT8 = all_of(
    test("dtype", "==", "uint8"), test("kernel_dtype", "==", "int8"), Target("-mcpu with sse4.2")
)
_DNNL = Target("-libs=dnnl")
_X86_DEPTHWISE = all_of(_DEPTHWISE, _NCHW, test("multiplier", "==", 1), _DILATION1)
_X86_SAME_FLOAT = all_of(
    test("same_dtype", "==", True), test("dtype", "in", ("float32", "float64"))
)
_X86_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": {  # x86.py:101-262 (conv2d_strategy_cpu)
        "conv2d_NCHWc_int8.x86": all_of(_G1, _NCHW, _X86_INT8),  # 120-125
        "conv2d_nchw_dnnl.x86": all_of(_G1, _NCHW, Not(_X86_INT8), _DNNL),  # 126-131
        "conv2d_NCHWc.x86": all_of(_G1, _NCHW, Not(_X86_INT8), Not(_DNNL)),  # 132-137
        "conv2d_nhwc_dnnl.x86": all_of(_G1, _NHWC, _DNNL),  # 141-150
        "depthwise_conv2d_NCHWc.x86": _X86_DEPTHWISE,  # 205-214
        "group_conv2d_nchw.x86": all_of(_GROUPED, _NCHW),  # 240-247
    },
    "conv2d_NCHWc": {  # x86.py:265-284
        "conv2d_NCHWc_int8.x86": all_of(_PACKED, _X86_INT8),
        "conv2d_NCHWc.x86": all_of(_PACKED, Not(_X86_INT8)),
    },
    "depthwise_conv2d_NCHWc": {"depthwise_conv2d_NCHWc.x86": _PACKED},  # x86.py:287-298
    # x86.py:301-322: topi.x86.conv2d_transpose_nchw (topi/x86/conv2d_transpose.py:25-36)
    # reuses conv2d_nchw on the dilated input: a stride-1, unpadded NCHW conv2d_NCHWc task
    "conv2d_transpose": {
        "conv2d_NCHWc.x86": all_of(
            _G1, _NCHW, _STRIDE1, _DILATION1, test("padding", "==", (0, 0, 0, 0))
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
            _divisible(("n", 16), ("k", 4)),
        ),
        "batch_matmul.x86": Not(
            all_of(
                test("transpose_a", "==", False),
                test("transpose_b", "==", True),
                test("dtype", "==", "uint8"),
                test("kernel_dtype", "==", "int8"),
                _divisible(("n", 16), ("k", 4)),
            )
        ),
        "batch_matmul_cblas.x86": Target("-libs=cblas"),
        "batch_matmul_mkl.x86": Target("-libs=mkl"),
    },
}

# arm_cpu.py: is_int8_hw_support (topi/arm_cpu/conv2d_int8.py:108-127) is equal int8 dtypes and
# a target with asimd or dotprod.
_ARM_INT8 = all_of(
    test("dtype", "in", _INT8),
    test("same_kernel_dtype", "==", True),
    Target("-mattr with neon or dotprod"),
)
_ARM_INT8_NCHW = all_of(_ARM_INT8, test("in_channels", ">=", 64))  # arm_cpu.py:127-130
# _is_simd_aligned (arm_cpu.py:91-105) holds only for int8/int16/int32 data
_ARM_DSP_DEPTHWISE = all_of(
    Target("-mattr with dsp"), _DILATION1, test("dtype", "in", ("int8", "int16", "int32"))
)
_ARM_NHWC = Target("has_dsp and the kernel layout (OHWI, HWOI or HWIO)")
_ARM_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": {  # arm_cpu.py:108-424 (conv2d_strategy_arm_cpu)
        "conv2d_NCHWc_int8.arm_cpu": all_of(_G1, _NCHW, _KERNEL4, _ARM_INT8_NCHW),  # 127-136
        "conv2d_nchw_spatial_pack.arm_cpu": all_of(  # 137-145, and 181-186 (OIHW4o kernels)
            _G1, _NCHW, any_of(Not(_KERNEL4), Not(_ARM_INT8_NCHW))
        ),
        "conv2d_NCHWc.x86": all_of(_G1, _NCHW, _KERNEL4, Not(_ARM_INT8_NCHW)),  # 146-150
        "conv2d_nchw_winograd.arm_cpu": all_of(  # 152-173
            _G1,
            _NCHW,
            _KERNEL4,
            test("dtype", "in", _FLOATS),
            test("kernel_dtype", "in", _FLOATS),
            _WINOGRAD_3X3,
        ),
        "conv2d_nchw_winograd_nnpack.arm_cpu": all_of(  # 174-180
            _G1,
            _NCHW,
            _KERNEL4,
            test("dtype", "in", _FLOATS),
            test("kernel_dtype", "in", _FLOATS),
            _WINOGRAD_3X3,
            Target("-libs=nnpack"),
            test("padding", "==", (1, 1, 1, 1)),
        ),
        "conv2d_nhwc_dsp.arm_cpu": all_of(_G1, _NHWC, _ARM_NHWC),  # 212-217
        "conv2d_NHWC_quantized_interleaved.arm_cpu": all_of(  # 218-256
            _G1, _NHWC, test("dtype", "in", _INT8), _ARM_NHWC
        ),
        "conv2d_NHWC_quantized_native.arm_cpu": all_of(
            _G1, _NHWC, test("dtype", "in", _INT8), _ARM_NHWC
        ),
        "conv2d_NHWC_hybrid.arm_cpu": all_of(  # 258-291
            _G1, _NHWC, test("dtype", "in", ("float32", "float16")), _ARM_NHWC
        ),
        "conv2d_nhwc_spatial_pack.arm_cpu": all_of(_G1, _NHWC, _ARM_NHWC),  # 292-300
        "depthwise_conv2d_nchw.arm_cpu": all_of(  # 310-331
            _DEPTHWISE, _NCHW, Not(_ARM_DSP_DEPTHWISE)
        ),
        "depthwise_conv2d_NCHWc.x86": _X86_DEPTHWISE,  # 343-350
        "depthwise_conv2d_nhwc.arm_cpu": all_of(_DEPTHWISE, _NHWC, _ARM_NHWC),  # 351-371
        "depthwise_conv2d_nhwc_dsp.arm_cpu": all_of(  # 378-396
            _DEPTHWISE,
            _NHWC,
            test("out_dtype", "==", "int32"),
            test("dtype", "in", ("int8", "int16")),
            _ARM_NHWC,
        ),
        "group_conv2d_nchw.arm_cpu": all_of(_GROUPED, _NCHW),  # 406-413
    },
    "conv2d_NCHWc": {  # arm_cpu.py:427-446
        "conv2d_NCHWc_int8.arm_cpu": all_of(_PACKED, _ARM_INT8),
        "conv2d_NCHWc.x86": all_of(_PACKED, Not(_ARM_INT8)),
    },
    "depthwise_conv2d_NCHWc": {"depthwise_conv2d_NCHWc.x86": _PACKED},  # arm_cpu.py:449-460
    # arm_cpu.py:477-500: after alter_op_layout, a kernel already transformed to 5-D
    "conv2d_winograd_without_weight_transform": {"conv2d_nchw_winograd.arm_cpu": _KERNEL5},
    "conv2d_transpose": {"conv2d_transpose_nchw.arm_cpu": _NCHW},  # arm_cpu.py:625-640
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

_MALI_CONDITIONS: dict[str, dict[str, Cond]] = {
    # mali.py:170-188: after alter_op_layout, a kernel already transformed to 5-D
    "conv2d_winograd_without_weight_transform": {"conv2d_nchw_winograd.mali": _KERNEL5},
    "conv2d": {  # mali.py:29-167
        "conv2d_nchw_spatial_pack.mali": all_of(_G1, _NCHW),  # 43-71
        "conv2d_nchw_winograd.mali": all_of(_G1, _NCHW, _KERNEL4, _WINOGRAD_3X3),  # 51-65
        "conv2d_nhwc_spatial_pack.mali": all_of(_G1, _NHWC),  # 74-131
        "depthwise_conv2d_nchw.mali": all_of(_DEPTHWISE, _NCHW),  # 135-142
        "depthwise_conv2d_nhwc.mali": all_of(_DEPTHWISE, _NHWC),  # 143-162
    },
}

_BIFROST_CONDITIONS: dict[str, dict[str, Cond]] = {
    # bifrost.py:101-120: after alter_op_layout, a kernel already transformed (4-D, but its
    # second axis is not the input channels)
    "conv2d_winograd_without_weight_transform": {
        "conv2d_nchw_winograd.bifrost": test("kernel_fits_data", "==", False)
    },
    "conv2d": {  # bifrost.py:25-98
        "conv2d_nchw_spatial_pack.bifrost": all_of(_G1, _NCHW),  # 39-67
        "conv2d_nchw_winograd.bifrost": all_of(_G1, _NCHW, _KERNEL4, _WINOGRAD_3X3),  # 47-61
        "conv2d_nhwc_spatial_pack.mali": all_of(_G1, _NHWC),  # 68-75
        "depthwise_conv2d_nhwc.mali": all_of(_DEPTHWISE, _NHWC),  # 86-92
    },
}

_ROCM_CONDITIONS: dict[str, dict[str, Cond]] = {
    # rocm.py:29-53, 57-70, 73-86 call cuda.py's strategies, then add the -libs templates
    "conv2d": {
        **_CUDA_CONV2D,
        "conv2d_nchw_miopen.rocm": all_of(
            Target("-libs=miopen"), _G1, _NCHW, test("symmetric_padding", "==", True)
        ),
    },
    "dense": {
        **_CUDA_CONDITIONS["dense"],
        "dense_rocblas.rocm": all_of(test("kind", "==", "rocm"), Target("-libs=rocblas")),
    },
    "batch_matmul": {
        **_CUDA_CONDITIONS["batch_matmul"],
        "batch_matmul_rocblas.rocm": all_of(test("kind", "==", "rocm"), Target("-libs=rocblas")),
    },
}

_INTEL_GRAPHICS_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": {  # intel_graphics.py:24-68
        "conv2d_NCHWc.intel_graphics": all_of(_G1, _NCHW),  # 36-53
        "depthwise_conv2d_nchw.intel_graphics": all_of(_DEPTHWISE, _NCHW),  # 56-63
    },
    "conv2d_NCHWc": {"conv2d_NCHWc.intel_graphics": _PACKED},  # intel_graphics.py:71-82
}

# adreno.py:24-216: textures need 4 output channels; fewer get cuda's templates instead
_FEW_CHANNELS = all_of(_KERNEL4, test("out_channels", "<", 4))
_ADRENO_CONV2D_WHEN: dict[str, Cond] = {
    "conv2d_nchw.cuda": all_of(_G1, _NCHW, _FEW_CHANNELS),  # 38-56
    "conv2d_nchw_winograd.image2d": all_of(  # 57-68 (not for an OIHW4o kernel on NCHW data)
        _G1, _NCHW, _KERNEL4, Not(_FEW_CHANNELS), _WINOGRAD_3_TO_7
    ),
    "conv2d_nchwc.image2d": all_of(_G1, _NCHW, Not(_FEW_CHANNELS)),  # 69-74
    "conv2d_nhwc.gpu": all_of(_G1, _NHWC, _FEW_CHANNELS),  # 75-92
    "conv2d_nhwc_winograd.image2d": all_of(  # 93-104
        _G1, _NHWC, _KERNEL4, Not(_FEW_CHANNELS), _WINOGRAD_3_TO_7
    ),
    "conv2d_nhwc.image2d": all_of(_G1, _NHWC, Not(_FEW_CHANNELS)),  # 105-110
    "depthwise_conv2d_nchw.cuda": all_of(_DEPTHWISE, _NCHW, _FEW_CHANNELS),  # 142-153
    "depthwise_conv2d_nchwc.image2d": all_of(_DEPTHWISE, _NCHW, Not(_FEW_CHANNELS)),  # 154-160
    "depthwise_conv2d_nhwc.image2d": all_of(  # 161-170
        _DEPTHWISE, _NHWC, test("in_channels", ">=", 4)
    ),
    # 185-207: grouped NCHW whose channels per group are multiples of 4 gets the texture one
    "group_conv2d_nchwc.image2d": all_of(
        _GROUPED, _NCHW, _divisible(("in_per_group", 4), ("out_per_group", 4))
    ),
    "group_conv2d_nchw.cuda": all_of(
        _GROUPED,
        _NCHW,
        _KERNEL4,
        Not(_divisible(("in_per_group", 4), ("out_per_group", 4))),
    ),
}
_ADRENO_CONDITIONS: dict[str, dict[str, Cond]] = {
    "conv2d": _ADRENO_CONV2D_WHEN,
    # the same function serves conv2d_NCHWc, whose layouts are packed (NCHW4c, 5-D kernels):
    # only the texture templates; plain-layout workloads are conv2d's
    "conv2d_NCHWc": {
        name: _PACKED if name.endswith(".image2d") else _NEVER for name in _ADRENO_CONV2D_WHEN
    },
    "conv2d_transpose": {  # adreno.py:247-296
        "conv2d_transpose_nchw.cuda": all_of(_NCHW, any_of(test("groups", "!=", 1), _FEW_CHANNELS)),
        "conv2d_transpose_nchwc.image2d": all_of(_G1, _NCHW, Not(_FEW_CHANNELS)),
    },
}

CONDITIONS: dict[str, dict[str, dict[str, Cond]]] = {
    "cuda": _CUDA_CONDITIONS,
    "gpu": _CUDA_CONDITIONS,
    "cpu": _X86_CONDITIONS,
    "arm_cpu": _ARM_CONDITIONS,
    "mali": _MALI_CONDITIONS,
    "bifrost": _BIFROST_CONDITIONS,
    "rocm": _ROCM_CONDITIONS,
    "intel_graphics": _INTEL_GRAPHICS_CONDITIONS,
    "adreno": _ADRENO_CONDITIONS,
    # hls.py and hexagon.py offer no AutoTVM template: nothing to choose between
}
