"""Reading a TOPI call's arguments: convolution and matmul argument lists, normalised.

Arguments come from JSON, so a log may hold anything there: the readers check the type and size
of every value they use and return None on anything else. Nothing catches TypeError or
ValueError, so a bug here raises instead of passing for odd arguments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from tunelog.versions import METASCHEDULE_TASK
from tunelog.workloads.families import _CHANNEL_FIRST, _CHANNEL_LAST, _HWCN, _NameInfo

if TYPE_CHECKING:
    from tunelog.mssummary import Summary

# Spatial rank of the convolution families this module reads.
_CONV_RANK = {
    "conv1d": 1,
    "group_conv1d": 1,
    "conv2d": 2,
    "group_conv2d": 2,
    "depthwise_conv2d": 2,
    "conv3d": 3,
}
_TRANSPOSED_RANK = {"conv1d_transpose": 1, "conv2d_transpose": 2, "conv3d_transpose": 3}
_SPATIAL_LETTERS = {1: "W", 2: "HW", 3: "DHW"}
# The plain data layouts of a convolution of each rank (HWCN: conv2d_hwcn only).
_CONV_LAYOUTS = {
    rank: ("NC" + letters, "N" + letters + "C", *((_HWCN,) if rank == 2 else ()))
    for rank, letters in _SPATIAL_LETTERS.items()
}
# Those of every rank: the layouts whose kernel sizes, strides and dilation relay's
# conditions read (`facts`).
PLAIN_CONV_LAYOUTS = frozenset(layout for plain in _CONV_LAYOUTS.values() for layout in plain)
# VTA's batch-and-channel packed layout, e.g. NCHW1n16c: data [N/n, C/c, H, W, n, c].
_PACKED_LAYOUT = re.compile(r"NCHW(\d+)n(\d+)c")
_LAYOUT_STRING = re.compile(r"[A-Z]+(?:\d+[a-z])*")
_DTYPE = re.compile(r"bool|(?:u?int|float|bfloat)\d+(?:x\d+)?")

# TVM sizes and attributes are IntImm, int64 at most: a wider JSON int is not one. The bound also
# keeps every number this module prints far below Python's int-to-str digit limit.
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


class _Tensor(NamedTuple):
    shape: tuple[int, ...]
    dtype: str


class _Conv(NamedTuple):
    """One convolution call, normalised: padding is begins then ends (top, left, bottom, right)."""

    family: str
    transposed: bool
    layout: str
    data: _Tensor
    kernel: _Tensor
    strides: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    groups: int
    out_layout: str  # "" when the output layout is the input layout
    output_padding: tuple[int, ...]  # transposed convolutions only
    out_dtype: str


class _Matmul(NamedTuple):
    """dense (`x @ w.T`), matmul or batch_matmul, with TOPI's transpose flags made explicit."""

    family: str
    a: _Tensor
    b: _Tensor
    bias: _Tensor | None
    transpose_a: bool
    transpose_b: bool
    out_shape: tuple[int, ...] | None
    out_dtype: str


_Call = _Conv | _Matmul


def _int(value: object) -> int | None:
    """An int64 argument, else None."""
    # JSON booleans are Python ints, and a boolean is never a size; decoded JSON holds no other
    # subclass of int, so `type` says both at once.
    if type(value) is int and _INT64_MIN <= value <= _INT64_MAX:
        return value
    return None


def _ints(value: object) -> tuple[int, ...] | None:
    """A list of int64 arguments (`_int` of each, inline: every shape is read this way)."""
    if not isinstance(value, (list, tuple)):
        return None
    for item in value:
        if type(item) is not int or not _INT64_MIN <= item <= _INT64_MAX:
            return None
    return tuple(value)


def _tensor(value: object) -> _Tensor | None:
    """A `["TENSOR", shape, dtype]` argument; any other spelling is not read."""
    if not isinstance(value, (list, tuple)) or len(value) != 3 or value[0] != "TENSOR":
        return None
    shape = _ints(value[1])
    dtype = value[2]
    if shape is None or not isinstance(dtype, str):
        return None
    return _Tensor(shape, dtype)


# A number argument as read: an int64, or a list of them (`_number_arg`).
_Number = int | tuple[int, ...]


def _number_arg(value: object) -> _Number | None:
    """An int64 argument, or a list of them as a tuple, else None.

    Read once per argument: `_per_axis` and `_padding` take what this returned (checking each
    item again cost a twentieth of a workload's facts).
    """
    number = _int(value)
    return number if number is not None else _ints(value)


def _per_axis(number: _Number | None, rank: int) -> tuple[int, ...] | None:
    """Strides, dilation, output padding: an int, or one number per spatial axis."""
    if number is None:
        return None
    if isinstance(number, int):
        return (number,) * rank
    return number if len(number) == rank else None


def _padding(number: _Number, rank: int) -> tuple[int, ...] | None:
    """Padding as begins then ends, as TVM's get_pad_tuple / get_pad_tuple1d / 3d read it."""
    if isinstance(number, int):
        return (number,) * (2 * rank)
    if len(number) == rank:
        return number + number
    if len(number) == 2 * rank:
        return number
    return None


def _out_dtype(value: object, default: str) -> str | None:
    if value is None:
        return default  # TOPI: out_dtype=None means the input's dtype
    if isinstance(value, str) and _DTYPE.fullmatch(value):
        return value
    return None


def _flag(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if _int(value) in (0, 1):
        return bool(value)
    return None


def _resolve_layout(info: _NameInfo, given: str, data: _Tensor, rank: int) -> str | None:
    """The data layout: the layout argument if any, else what the name says."""
    if given:
        layout = given
    elif info.layout_hint == _CHANNEL_FIRST:
        layout = "NC" + _SPATIAL_LETTERS[rank]
    elif info.layout_hint == _CHANNEL_LAST:
        layout = "N" + _SPATIAL_LETTERS[rank] + "C"
    elif info.layout_hint == _HWCN:
        layout = _HWCN
    elif info.vta and rank == 2 and len(data.shape) == 6:
        # VTA templates without a layout argument take NCHW{n}n{c}c tensors.
        layout = f"NCHW{data.shape[4]}n{data.shape[5]}c"
    else:
        return None
    if rank == 2 and _PACKED_LAYOUT.fullmatch(layout):
        return layout if len(data.shape) == 6 else None
    if layout in _CONV_LAYOUTS[rank] and len(data.shape) == rank + 2:
        return layout
    return None


def _parse_conv(info: _NameInfo, args: Sequence[object]) -> _Conv | None:
    family = info.family
    transposed = family in _TRANSPOSED_RANK
    rank = _TRANSPOSED_RANK.get(family) or _CONV_RANK.get(family)
    if rank is None or len(args) < 4 or info.pretransformed:
        return None
    data, kernel = _tensor(args[0]), _tensor(args[1])
    if data is None or kernel is None or len(kernel.shape) != len(data.shape):
        return None
    rest = list(args[2:])
    old_x86 = (
        info.old_x86
        and len(data.shape) == 4
        and len(rest) >= 2
        and _int(rest[0]) == data.shape[1]
        and _ints(rest[1]) == kernel.shape[2:]
    )
    if old_x86:
        # TVM <= 0.6 x86: (in_channel, kernel_size, [dilation,] strides, padding, layouts, dtype),
        # checked against the record's own workload field in tophub llvm_v0.01..v0.03.
        rest = rest[2:]
    numbers: list[_Number] = []
    while rest and len(numbers) < (2 if transposed else 3):
        number = _number_arg(rest[0])
        if number is None:
            break
        numbers.append(number)
        rest.pop(0)
    if old_x86 and len(numbers) == 3:
        numbers = [numbers[1], numbers[2], numbers[0]]
    if len(numbers) < 2:
        return None
    strides = _per_axis(numbers[0], rank)
    padding = _padding(numbers[1], rank)
    dilation = _per_axis(numbers[2], rank) if len(numbers) == 3 else (1,) * rank
    if strides is None or padding is None or dilation is None:
        return None

    groups = 1
    layouts: list[str] = []
    output_padding: tuple[int, ...] = ()
    if transposed:
        if not rest or len(rest) > 2:
            return None
        out_dtype = _out_dtype(rest[0], data.dtype)
        output_padding = (0,) * rank
        if len(rest) == 2:
            given_padding = _per_axis(_number_arg(rest[1]), rank)
            if given_padding is None:
                return None
            output_padding = given_padding
    else:
        given_groups = _int(rest[0]) if rest else None
        if given_groups is not None:
            groups = given_groups
            rest.pop(0)
        elif family.startswith("group_"):
            return None  # grouped templates always pass groups
        if family == "depthwise_conv2d" and groups != 1:
            return None
        if not 1 <= len(rest) <= 3:
            return None
        for item in rest[:-1]:
            if not isinstance(item, str) or not _LAYOUT_STRING.fullmatch(item):
                return None
            layouts.append(item)
        out_dtype = _out_dtype(rest[-1], data.dtype)
    if out_dtype is None:
        return None
    layout = _resolve_layout(info, layouts[0] if layouts else "", data, rank)
    if layout is None:
        return None
    out_layout = layouts[1] if len(layouts) == 2 and layouts[1] != layout else ""
    return _Conv(
        family=family,
        transposed=transposed,
        layout=layout,
        data=data,
        kernel=kernel,
        strides=strides,
        padding=padding,
        dilation=dilation,
        groups=groups,
        out_layout=out_layout,
        output_padding=output_padding,
        out_dtype=out_dtype,
    )


def _parse_matmul(info: _NameInfo, args: Sequence[object]) -> _Matmul | None:
    """dense (data, weight, bias, out_dtype); matmul (a, b, bias, out_dtype, trans_a, trans_b);
    batch_matmul (x, y, out_shape, out_dtype, trans_a, trans_b). Trailing arguments optional."""
    if len(args) < 2:
        return None
    a, b = _tensor(args[0]), _tensor(args[1])
    if a is None or b is None:
        return None
    rest = list(args[2:])
    bias: _Tensor | None = None
    out_shape: tuple[int, ...] | None = None
    if info.family == "batch_matmul":
        max_args, transpose_b = 4, True  # TOPI batch_matmul defaults to y given as [B, N, K]
        if rest and rest[0] is not None:
            out_shape = _ints(rest[0])
            if out_shape is None:
                return None
    else:
        max_args, transpose_b = (2 if info.family == "dense" else 4), info.family == "dense"
        if rest and rest[0] is not None:
            bias = _tensor(rest[0])
            if bias is None:
                return None
    if len(rest) > max_args:
        return None
    out_dtype = _out_dtype(rest[1] if len(rest) > 1 else None, a.dtype)
    flags = [_flag(item) for item in rest[2:]]
    if out_dtype is None or None in flags:
        return None
    transpose_a = bool(flags[0]) if flags else False
    if len(flags) == 2:
        transpose_b = bool(flags[1])
    return _Matmul(info.family, a, b, bias, transpose_a, transpose_b, out_shape, out_dtype)


def _parse(info: _NameInfo, args: object) -> _Call | None:
    if not info.topi or not isinstance(args, (list, tuple)):
        return None
    if info.family in _CONV_RANK or info.family in _TRANSPOSED_RANK:
        return _parse_conv(info, args)
    if info.family in ("dense", "matmul", "batch_matmul"):
        return _parse_matmul(info, args)
    return None


def _metaschedule_summary(task_name: str, args: list[Any]) -> Summary | None:
    """What a MetaSchedule workload's module computes (None for other tasks).

    tunelog.msmodule is loaded only for MetaSchedule workloads: it brings hashlib and orjson.
    """
    if task_name != METASCHEDULE_TASK:
        return None
    from tunelog.mssummary import summary_of_task

    return summary_of_task(task_name, args)
