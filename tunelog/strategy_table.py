"""Which AutoTVM templates relay's op strategies register, per strategy key and operator: the table.

Pure data, read by `tunelog.strategies` (the rules: `offered_templates`, `relay_offers`).
Written from Apache TVM v0.19.0's (the last release with AutoTVM) relay op strategy
sources, `python/tvm/relay/op/strategy/{generic,cuda,x86,arm_cpu,mali,bifrost,rocm,
intel_graphics,adreno,hls,hexagon}.py` (tag v0.19.0, commit c4dc0c29), and the
`autotvm.register_topi_compute` names in `python/tvm/topi/` they call. Nothing is copied: the
table lists, per strategy key and operator, the *tuning task names* relay would query.

How relay dispatches (generic_func): for an operator, the first key of the target (in the
target's key order) that registered a strategy for it wins; with none, the generic strategy
(which offers no AutoTVM template). So `llvm -device=arm_cpu` (keys arm_cpu, cpu) takes
conv2d from arm_cpu.py but batch_matmul from x86.py (registered as `cpu`); `opencl
-device=mali` takes conv2d and dense from mali.py and everything else from cuda.py (registered
as both `cuda` and `gpu`).

Implementation names are not always task names: the x86 `conv2d_nchw.x86` implementation (also
offered by arm_cpu) is tuned as `conv2d_NCHWc.x86`, `depthwise_conv2d_nchw.x86` as
`depthwise_conv2d_NCHWc.x86`, `conv2d_nchw_int8.{cuda,x86,arm_cpu}` as `conv2d_NCHWc_int8.*`,
cuda `conv2d_hwnc_tensorcore_direct.cuda` as `conv2d_HWNCnc_tensorcore.cuda`,
`conv1d_transpose_ncw.cuda` as `conv1d_transpose_nchw.cuda`, `correlation.cuda` as
`correlation_nchw.cuda`, arm_cpu's `conv1d_dsp.arm_cpu` as `conv1d_nwc_dsp.arm_cpu`, arm_cpu's
bitserial NCHW as `bitserial_conv2d_nchw.x86`; the table holds the task names.
"""

from __future__ import annotations

# Strategy key -> relay operator (strategy name without `_strategy`) -> tuning task names.
# An empty tuple: the key registers the operator (so later keys are not asked) but offers no
# AutoTVM template for it. Operators no key offers a template for (sort, nms, softmax...) are
# left out: whichever key they dispatch to, no template is asked.
_CUDA: dict[str, tuple[str, ...]] = {
    "conv2d": (
        "conv2d_nchw.cuda",
        "conv2d_nchw_winograd.cuda",  # only 3x3, stride 1, dilation 1 kernels
        "conv2d_NCHWc_int8.cuda",  # int8 NCHW (implementation conv2d_nchw_int8.cuda)
        "conv2d_hwcn.cuda",
        "conv2d_nhwc.gpu",
        "conv2d_nhwc_tensorcore.cuda",  # tensorcore shapes and dtypes only
        "conv2d_nhwc_winograd_tensorcore.cuda",
        "conv2d_nhwc_winograd_direct.cuda",
        "conv2d_HWNCnc_tensorcore.cuda",  # HWNC int4/int8 only
        "conv2d_cudnn.cuda",  # -libs=cudnn only
        "depthwise_conv2d_nchw.cuda",
        "group_conv2d_nchw.cuda",
        "group_conv2d_NCHWc_int8.cuda",
    ),
    "conv2d_winograd_without_weight_transform": (
        "conv2d_nchw_winograd_without_weight_transform.cuda",
        "conv2d_nhwc_winograd_tensorcore_without_weight_transform.cuda",
        "conv2d_nhwc_winograd_direct_without_weight_transform.cuda",
    ),
    "deformable_conv2d": ("deformable_conv2d_nchw.cuda",),
    "conv2d_backward_weight": (),
    "conv2d_transpose": ("conv2d_transpose_nchw.cuda",),
    "conv3d_transpose": ("conv3d_transpose_ncdhw.cuda",),
    "conv3d": (
        "conv3d_ncdhw.cuda",
        "conv3d_ndhwc.cuda",
        "conv3d_cudnn.cuda",
        "conv3d_ncdhw_winograd.cuda",
        "conv3d_ndhwc_tensorcore.cuda",
    ),
    "conv3d_winograd_without_weight_transform": (
        "conv3d_ncdhw_winograd_without_weight_transform.cuda",
    ),
    "conv1d": (
        "conv1d_ncw.cuda",
        "group_conv1d_ncw.cuda",
        "conv1d_nwc.cuda",
        "group_conv1d_nwc.cuda",
    ),
    "conv1d_transpose": ("conv1d_transpose_nchw.cuda",),
    "matmul": ("matmul_cublas.cuda", "matmul_default.gpu"),
    "dense": (
        "dense_int8.cuda",
        "dense_cublas.cuda",
        "dense_small_batch.gpu",
        "dense_large_batch.gpu",
        "dense_tensorcore.cuda",
    ),
    "batch_matmul": (
        "batch_matmul_int8.cuda",
        "batch_matmul.cuda",
        "batch_matmul_cublas.cuda",
        "batch_matmul_tensorcore.cuda",
    ),
    "scatter_elements": ("scatter_via_sort.cuda",),
    "correlation": ("correlation_nchw.cuda",),
}

_X86: dict[str, tuple[str, ...]] = {
    "conv2d": (
        "conv2d_NCHWc.x86",  # implementation conv2d_nchw.x86, tuned after alter_op_layout
        "conv2d_NCHWc_int8.x86",  # implementation conv2d_nchw_int8.x86
        "depthwise_conv2d_NCHWc.x86",  # implementation depthwise_conv2d_nchw.x86
        "group_conv2d_nchw.x86",
        "conv2d_nchw_dnnl.x86",  # -libs=dnnl only
        "conv2d_nhwc_dnnl.x86",
    ),
    "conv2d_NCHWc": ("conv2d_NCHWc_int8.x86", "conv2d_NCHWc.x86"),
    "depthwise_conv2d_NCHWc": ("depthwise_conv2d_NCHWc.x86",),
    "conv2d_transpose": ("conv2d_NCHWc.x86",),  # computed through x86 conv2d_nchw
    "conv3d_transpose": ("conv3d_ncdhw.x86",),  # computed through x86 conv3d_ncdhw
    "conv3d": ("conv3d_ncdhw.x86", "conv3d_ndhwc.x86"),
    "conv1d": (),
    "matmul": ("matmul_cblas.x86", "matmul_mkl.x86", "matmul_dnnl.x86"),
    "dense": (
        "dense_nopack.x86",
        "dense_pack.x86",
        "dense_cblas.x86",
        "dense_mkl.x86",
        "dense_dnnl.x86",
    ),
    "dense_pack": ("dense_int8.x86", "dense_pack.x86"),
    "batch_matmul": (
        "batch_matmul_int8.x86",
        "batch_matmul_cblas.x86",
        "batch_matmul_mkl.x86",
        "batch_matmul.x86",
    ),
    "sparse_dense": (),
    "sparse_conv2d": ("conv3x3_spNHWC.x86", "conv3x3_spNCHW.x86"),
    "bitserial_conv2d": ("bitserial_conv2d_nchw.x86", "bitserial_conv2d_nhwc.x86"),
    "bitserial_dense": ("bitserial_dense.x86",),
    "conv2d_winograd_without_weight_transform": (),  # auto_scheduler/meta_schedule only
    "concatenate": (),
}

_ARM_CPU: dict[str, tuple[str, ...]] = {
    "conv2d": (
        "conv2d_NCHWc_int8.arm_cpu",  # implementation conv2d_nchw_int8.arm_cpu
        "conv2d_nchw_spatial_pack.arm_cpu",
        "conv2d_NCHWc.x86",  # the x86 implementation conv2d_nchw.x86, offered on arm_cpu too
        "conv2d_nchw_winograd.arm_cpu",
        "conv2d_nchw_winograd_nnpack.arm_cpu",  # -libs=nnpack only
        "conv2d_nhwc_dsp.arm_cpu",
        "conv2d_NHWC_hybrid.arm_cpu",
        "conv2d_nhwc_spatial_pack.arm_cpu",
        "conv2d_NHWC_quantized_interleaved.arm_cpu",
        "conv2d_NHWC_quantized_native.arm_cpu",
        "depthwise_conv2d_nchw.arm_cpu",
        "depthwise_conv2d_NCHWc.x86",  # implementation depthwise_conv2d_nchw.x86
        "depthwise_conv2d_nhwc.arm_cpu",
        "depthwise_conv2d_nhwc_dsp.arm_cpu",
        "group_conv2d_nchw.arm_cpu",
    ),
    "conv2d_NCHWc": ("conv2d_NCHWc_int8.arm_cpu", "conv2d_NCHWc.x86"),
    "depthwise_conv2d_NCHWc": ("depthwise_conv2d_NCHWc.x86",),
    "conv2d_winograd_without_weight_transform": (
        "conv2d_nchw_winograd.arm_cpu",
        "conv2d_nchw_winograd_nnpack_without_weight_transform.arm_cpu",
    ),
    "conv2d_gemm_without_weight_transform": (
        "conv2d_NHWC_quantized_interleaved_without_transform.arm_cpu",
        "conv2d_NHWC_quantized_native_without_transform.arm_cpu",
        "conv2d_NHWC_hybrid_without_transform.arm_cpu",
    ),
    "conv2d_transpose": ("conv2d_transpose_nchw.arm_cpu",),
    "bitserial_conv2d": ("bitserial_conv2d_nchw.x86", "bitserial_conv2d_nhwc.arm_cpu"),
    "bitserial_dense": ("bitserial_dense.arm_cpu",),
    "dense": ("dense_dsp.arm_cpu", "dense_nopack.x86", "dense_pack.x86"),
    "matmul": (),
    "conv1d": ("conv1d_nwc_dsp.arm_cpu",),
    "concatenate": (),
}

_MALI: dict[str, tuple[str, ...]] = {
    "conv2d": (
        "conv2d_nchw_spatial_pack.mali",
        "conv2d_nchw_winograd.mali",
        "depthwise_conv2d_nchw.mali",
        "conv2d_nhwc_spatial_pack.mali",
        "depthwise_conv2d_nhwc.mali",
    ),
    "conv2d_winograd_without_weight_transform": ("conv2d_nchw_winograd.mali",),
    "dense": ("dense.mali",),
}

_BIFROST: dict[str, tuple[str, ...]] = {
    "conv2d": (
        "conv2d_nchw_spatial_pack.bifrost",
        "conv2d_nchw_winograd.bifrost",
        "conv2d_nhwc_spatial_pack.mali",  # bifrost.py:68-75 computes NHWC with topi.mali
        "depthwise_conv2d_nhwc.mali",  # bifrost.py:86-92 likewise
    ),
    "conv2d_winograd_without_weight_transform": ("conv2d_nchw_winograd.bifrost",),
    "dense": ("dense.bifrost",),
}

_ROCM: dict[str, tuple[str, ...]] = {
    # rocm.py builds on cuda.py's strategies and adds MIOpen / rocBLAS (with -libs).
    "conv2d": (*_CUDA["conv2d"], "conv2d_nchw_miopen.rocm"),
    "dense": (*_CUDA["dense"], "dense_rocblas.rocm"),
    "batch_matmul": (*_CUDA["batch_matmul"], "batch_matmul_rocblas.rocm"),
    "scatter_elements": ("scatter_via_sort.cuda",),
    "argsort": (),
    "sort": (),
    "topk": (),
    "softmax": (),
    "log_softmax": (),
    "sparse_dense_padded": (),
}

_INTEL_GRAPHICS: dict[str, tuple[str, ...]] = {
    "conv2d": ("conv2d_NCHWc.intel_graphics", "depthwise_conv2d_nchw.intel_graphics"),
    "conv2d_NCHWc": ("conv2d_NCHWc.intel_graphics",),
}

_ADRENO_CONV2D = (
    "conv2d_nchwc.image2d",
    "conv2d_nchw.cuda",
    "conv2d_nchw_winograd.image2d",
    "conv2d_nhwc.image2d",
    "conv2d_nhwc.gpu",
    "conv2d_nhwc_winograd.image2d",
    "depthwise_conv2d_nchw.cuda",
    "depthwise_conv2d_nchwc.image2d",
    "depthwise_conv2d_nhwc.image2d",
    "group_conv2d_nchw.cuda",
    "group_conv2d_nchwc.image2d",
)
_ADRENO: dict[str, tuple[str, ...]] = {
    "conv2d": _ADRENO_CONV2D,
    "conv2d_NCHWc": _ADRENO_CONV2D,
    "conv2d_winograd_without_weight_transform": (
        "conv2d_nchw_winograd_without_weight_transform.image2d",
        "conv2d_nhwc_winograd_without_weight_transform.image2d",
    ),
    "conv2d_transpose": ("conv2d_transpose_nchwc.image2d", "conv2d_transpose_nchw.cuda"),
    "concatenate": (),
}

# hls.py and hexagon.py register operators without any AutoTVM template.
_HLS: dict[str, tuple[str, ...]] = dict.fromkeys(
    (
        "conv2d",
        "conv2d_NCHWc",
        "conv2d_transpose",
        "dense",
        "bitserial_conv2d",
        "softmax",
        "log_softmax",
    ),
    (),
)
_HEXAGON: dict[str, tuple[str, ...]] = dict.fromkeys(
    (
        "batch_matmul",
        "concatenate",
        "conv2d",
        "conv2d_transpose",
        "dense",
        "softmax",
        "conv2d_NCHWc",
        "dense_pack",
        "fast_softmax",
    ),
    (),
)

STRATEGIES: dict[str, dict[str, tuple[str, ...]]] = {
    "cuda": _CUDA,
    # cuda.py registers its strategies for both keys, except conv2d_backward_weight (cuda only).
    "gpu": {op: names for op, names in _CUDA.items() if op != "conv2d_backward_weight"},
    "cpu": _X86,
    "arm_cpu": _ARM_CPU,
    "mali": _MALI,
    "bifrost": _BIFROST,
    "rocm": _ROCM,
    "intel_graphics": _INTEL_GRAPHICS,
    "adreno": _ADRENO,
    "hls": _HLS,
    "hexagon": _HEXAGON,
}

# Templates a TVM 0.16-era build registers that no v0.19 relay strategy offers, and why.
NOT_OFFERED: dict[str, str] = {
    **dict.fromkeys(
        (
            "batch_matmul.riscv",
            "batch_matmul_cblas.riscv",
            "batch_matmul_mkl.riscv",
            "batch_matmul_vnni.riscv",
            "bitserial_conv2d_nchw.riscv",
            "bitserial_conv2d_nhwc.riscv",
            "bitserial_dense.riscv",
            "conv2d_NCHWc.riscv",
            "conv2d_NCHWc_int8.riscv",
            "conv2d_nhwc_pack_int8.riscv",
            "conv3d_ncdhw.riscv",
            "conv3d_ndhwc.riscv",
            "conv3x3_spNCHW.riscv",
            "conv3x3_spNHWC.riscv",
            "dense_cblas.riscv",
            "dense_dnnl.riscv",
            "dense_mkl.riscv",
            "dense_nopack.riscv",
            "dense_pack.riscv",
            "dense_vnni.riscv",
            "depthwise_conv2d_NCHWc.riscv",
            "group_conv2d_nchw.riscv",
            "matmul_cblas.riscv",
            "matmul_dnnl.riscv",
            "matmul_mkl.riscv",
        ),
        "registered by a riscv fork's topi; TVM v0.19 has no riscv relay strategy",
    ),
    "conv2d_nhwc_pack_int8.x86": "registered in topi.x86 but offered by no v0.19 x86 strategy",
    "depthwise_conv2d_nchw_spatial_pack.arm_cpu": (
        "commented out in v0.19's arm_cpu conv2d strategy"
    ),
}

# Keys a target may carry that attach no strategy of their own; relay goes on to the next key.
PASSIVE_KEYS = frozenset({"opencl", "vulkan", "metal", "webgpu", "aocl", "sdaccel"})

KNOWN_TEMPLATES: frozenset[str] = frozenset(
    {name for table in STRATEGIES.values() for names in table.values() for name in names}
    | set(NOT_OFFERED)
)
