"""The layout-rewritten forms of a layer relay queries too (tvm-reference §10), and workload text.

Pure. x86 `alter_op_layout` rewrites a conv2d to `conv2d_NCHWc` with blocked data and kernel, and
`dense_pack.x86` packs its weight; arm_cpu's packs a spatial-pack or winograd kernel; relay then
queries the derived workload as well. When the layer is untuned, TVM reports both:
`packed_original` maps the derived form back to its layer.
"""

from __future__ import annotations

import re

from tunelog.tvmmessages import Workload, workload_args
from tunelog.workloads import short_args

_BLOCKED = re.compile(r"NCHW(\d+)c")


def packed_original(workload: Workload) -> Workload | None:
    """The layer whose layout-rewritten form `workload` is, or None when it is not one.

    conv2d (x86 NCHWc): data `(N, C//c, H, W, c)`, kernel `(O//o, C//c, KH, KW, c, o)`, layouts
    `NCHW{c}c`, `NCHW{o}c` -> data `(N, C, H, W)`, kernel `(O, C, KH, KW)`, layouts `NCHW`;
    dense_pack: weight `(N//n, K, n)` -> `(N, K)`; arm_cpu spatial pack (conv2d and depthwise)
    and winograd: a 5-D kernel -> `(CO, CI, KH, KW)` (`_ARM_PACKED`).
    """
    task, args = workload[0], workload[1:]
    if not isinstance(task, str):
        return None
    if task.startswith(("conv2d_NCHWc", "depthwise_conv2d_NCHWc")) and len(args) == 8:
        data, kernel, strides, padding, dilation, layout, out_layout, out_dtype = args
        blocked_data, blocked_kernel = _tensor(data, 5), _tensor(kernel, 6)
        if (
            blocked_data is None
            or blocked_kernel is None
            or not isinstance(layout, str)
            or not isinstance(out_layout, str)
            or not _BLOCKED.fullmatch(layout)
            or not _BLOCKED.fullmatch(out_layout)
        ):
            return None
        (n, c_outer, h, w, c_inner), data_dtype = blocked_data
        (o_outer, i_outer, kh, kw, i_inner, o_inner), kernel_dtype = blocked_kernel
        new_data = ("TENSOR", (n, c_outer * c_inner, h, w), data_dtype)
        new_kernel = ("TENSOR", (o_outer * o_inner, i_outer * i_inner, kh, kw), kernel_dtype)
        return (task, new_data, new_kernel, strides, padding, dilation, "NCHW", "NCHW", out_dtype)
    if task == "dense_pack.x86" and len(args) == 4:
        packed = _tensor(args[1], 3)
        if packed is None:
            return None
        (outer, k, inner), dtype = packed
        return (task, args[0], ("TENSOR", (outer * inner, k), dtype), args[2], args[3])
    if task in _ARM_PACKED and len(args) == 6 and _tensor(args[0], 4) is not None:
        kernel = _tensor(args[1], 5)
        if kernel is None:
            return None
        original = _ARM_PACKED[task](*kernel[0])
        if original is None:
            return None
        return (task, args[0], ("TENSOR", original, kernel[1]), *args[2:])
    return None


def _spatial_pack(outer: int, ci: int, kh: int, kw: int, vc: int) -> tuple[int, ...]:
    """arm_cpu spatial pack's kernel `(CO//VC, CI, KH, KW, VC)` -> `(CO, CI, KH, KW)`."""
    return (outer * vc, ci, kh, kw)


def _winograd(eh: int, ew: int, outer: int, ci: int, vc: int) -> tuple[int, ...] | None:
    """arm_cpu winograd's transformed kernel `(KH+3, KW+3, CO//VC, CI, VC)` (tile size 4)
    -> `(CO, CI, KH, KW)`."""
    if eh <= 3 or ew <= 3:
        return None
    return (outer * vc, ci, eh - 3, ew - 3)


# arm_cpu `alter_op_layout` (tvm-reference §10): the template keeps its name, its kernel is
# queried in the packed shape (the untuned layer's fallback VC is 1: `(256,128,1,1,1)`).
_ARM_PACKED = {
    "conv2d_nchw_spatial_pack.arm_cpu": _spatial_pack,
    "depthwise_conv2d_nchw_spatial_pack.arm_cpu": _spatial_pack,
    "conv2d_nchw_winograd.arm_cpu": _winograd,
}


def packed_layout(workload: Workload) -> str:
    """What a layout-rewritten form (`packed_original`) is called: its NCHW[x]c layout, or the
    kind of packed weight."""
    task = str(workload[0])
    if task == "dense_pack.x86":
        return "packed weight"
    if task in _ARM_PACKED:
        kernel = _tensor(workload[2], 5)
        if task == "conv2d_nchw_winograd.arm_cpu":
            return "winograd-transformed kernel"
        return f"OIHW{kernel[0][4]}o kernel" if kernel is not None else "packed kernel"
    return str(workload[6])


def workload_text(workload: Workload) -> str:
    """Short text of a workload: template and call (`conv2d_NCHWc.x86 1x64x56x56 * ...`).

    A layout-rewritten form shows its blocked shapes and layout, not a call it does not parse as.
    """
    task = str(workload[0])
    if packed_original(workload) is not None:
        tensors = [t for t in (_tensor(a) for a in workload[1:3]) if t is not None]
        blocked = " * ".join("x".join(map(str, shape)) for shape, _ in tensors)
        return f"{task} {blocked} {packed_layout(workload)}"
    return f"{task} {short_args(task, workload_args(workload))}"


def _tensor(value: object, rank: int | None = None) -> tuple[tuple[int, ...], object] | None:
    """(shape, dtype) of a `("TENSOR", shape, dtype)` argument of this rank, else None."""
    if not isinstance(value, tuple) or len(value) != 3 or value[0] != "TENSOR":
        return None
    shape = value[1]
    if not isinstance(shape, tuple) or (rank is not None and len(shape) != rank):
        return None
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        return None
    return shape, value[2]
