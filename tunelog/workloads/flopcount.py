"""FLOPs of a task's call (`flops`, tvm-reference §7); GFLOPS is `rules.throughput.gflops`.

What TVM's compute definitions give, read from the args: a convolution (any rank, grouped,
depthwise, winograd, VTA-packed) is `2 * N * prod(output spatial) * prod(kernel shape)`, i.e.
`2 * N * K * OH * OW * C/groups * KH * KW` for NCHW; a transposed convolution is the same with the
transposed output size `(H - 1) * stride - pad_begin - pad_end + KH + output_padding`; dense and
matmul are `2 * M * N * K` (a bias add is not counted), batch_matmul `2 * B * M * N * K`.
Anything else is `None` ("unknown"), never a guess.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from tunelog.workloads.calls import (
    _PACKED_LAYOUT,
    _Call,
    _Conv,
    _Matmul,
    _metaschedule_summary,
    _parse,
)
from tunelog.workloads.families import _HWCN, _name_info, _NameInfo

# int() reads this many digits whatever sys.set_int_max_str_digits() says (its lowest setting).
_SAFE_DIGITS = sys.int_info.str_digits_check_threshold


def _factor(digits: str) -> int | None:
    """A packing factor from a layout string (`\\d+`, any length); None past what int() reads."""
    return int(digits) if len(digits) <= _SAFE_DIGITS else None


def _conv_flops(call: _Conv) -> int | None:
    # The call's fields read once (a NamedTuple's field costs an attribute lookup each time).
    d, k, g = call.data.shape, call.kernel.shape, call.groups
    strides, padding, dilation = call.strides, call.padding, call.dilation
    rank = len(strides)
    if min(d + k + strides + dilation + (g,)) <= 0:
        return None
    if min(padding + call.output_padding, default=0) < 0:
        return None
    packed = _PACKED_LAYOUT.fullmatch(call.layout)
    depthwise = call.family == "depthwise_conv2d"
    if packed:
        # VTA: data [N/n, C/c, H, W, n, c], kernel [O/o, I/i, KH, KW, o, i]
        if depthwise or (d[4], d[5]) != (_factor(packed.group(1)), _factor(packed.group(2))):
            return None
        batch, channels, spatial, k_spatial = d[0] * d[4], d[1] * d[5], d[2:4], k[2:4]
        consistent = k[1] * k[5] * g == channels
    elif call.layout == _HWCN:
        # conv2d_hwcn: data [H, W, C, N], kernel [KH, KW, C, K]
        if depthwise or call.transposed:
            return None
        batch, channels, spatial, k_spatial = d[3], d[2], d[:2], k[:2]
        consistent = k[2] * g == channels and k[3] % g == 0
    elif call.layout.startswith("NC"):
        batch, channels, spatial, k_spatial = d[0], d[1], d[2:], k[2:]
        if depthwise or call.transposed:
            # depthwise [C, multiplier, KH, KW]; transposed [C_in, C_out, KH, KW]
            consistent = k[0] == channels
        else:
            consistent = k[1] * g == channels and k[0] % g == 0  # [K, C/groups, KH, KW]
    else:
        if call.transposed:
            return None
        batch, channels, spatial, k_spatial = d[0], d[-1], d[1:-1], k[:rank]
        if depthwise:
            consistent = k[rank] == channels  # [KH, KW, C, multiplier]
        else:
            # HWIO for most templates, HWOI for the arm_cpu DSP ones: the product is the same.
            consistent = any(
                k[i] * g == channels and k[o] % g == 0
                for i, o in ((rank, rank + 1), (rank + 1, rank))
            )
    if not consistent:
        return None
    output = 1
    for axis in range(rank):
        size, kernel, stride = spatial[axis], k_spatial[axis], strides[axis]
        begin, end = padding[axis], padding[rank + axis]
        if call.transposed:
            if call.output_padding[axis] >= stride:
                return None  # TOPI asserts output_padding < stride
            out = (size - 1) * stride - begin - end + kernel + call.output_padding[axis]
        else:
            out = (size + begin + end - dilation[axis] * (kernel - 1) - 1) // stride + 1
        if out <= 0:
            return None
        output *= out
    return 2 * batch * output * math.prod(k)


def _matmul_flops(call: _Matmul, vta: bool) -> int | None:
    a, b = call.a.shape, call.b.shape
    if min(a + b, default=0) <= 0:
        return None
    if call.family == "dense" and vta and len(a) == 4 and len(b) == 4:
        # VTA dense: data [M/m, K/k, m, k], weight [N/n, K/k, n, k]
        if a[1] != b[1] or a[3] != b[3]:
            return None
        return 2 * (a[0] * a[2]) * (b[0] * b[2]) * (a[1] * a[3])
    rank = 3 if call.family == "batch_matmul" else 2
    if len(a) != rank or len(b) != rank:
        return None
    m, k = (a[-1], a[-2]) if call.transpose_a else (a[-2], a[-1])
    n, k_b = (b[-2], b[-1]) if call.transpose_b else (b[-1], b[-2])
    if k != k_b:
        return None
    batch = 1
    if rank == 3:
        # TOPI batch_matmul broadcasts a batch of 1
        if a[0] != b[0] and 1 not in (a[0], b[0]):
            return None
        batch = max(a[0], b[0])
        if call.out_shape is not None and call.out_shape != (batch, m, n):
            return None
    return 2 * batch * m * n * k


def flops(task_name: str, template_key: str, args: list[Any]) -> int | None:
    """FLOPs of one call of the task, from its args; None when the family or args are unknown.

    Formulas in the module docstring. `template_key` is accepted for symmetry with the record
    fields; it does not change the count (winograd counts as the direct convolution).
    """
    info = _name_info(task_name)
    return flops_of_call(task_name, args, info, _parse(info, args))


def flops_of_call(
    task_name: str, args: list[Any], info: _NameInfo, call: _Call | None
) -> int | None:
    """`flops` for arguments already read (`info`, `call`: `families._name_info` of the task
    and `calls._parse` of the arguments), so that `summary.facts_of` reads them once."""
    module = _metaschedule_summary(task_name, args)
    if module is not None:  # MetaSchedule: estimated from the TIR as TVM's estimate_tir_flops
        return module.flops
    if isinstance(call, _Conv):
        return _conv_flops(call)
    if isinstance(call, _Matmul):
        return _matmul_flops(call, info.vta)
    return None
