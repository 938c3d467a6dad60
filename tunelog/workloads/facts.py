"""Facts relay's strategies test (tunelog.conditions), read from a workload's arguments."""

from __future__ import annotations

from typing import Any

from tunelog.workloads.calls import (
    _PACKED_LAYOUT,
    PLAIN_CONV_LAYOUTS,
    _Call,
    _Conv,
    _Matmul,
    _parse,
)
from tunelog.workloads.families import _HWCN, _name_info
from tunelog.workloads.layerkey import _call_key, _fallback_key


def _channels(call: _Conv) -> tuple[int, int] | None:
    """(in, out) channels of a convolution in relay's terms, None for packed layouts."""
    data, kernel = call.data.shape, call.kernel.shape
    if len(kernel) != len(data):
        return None
    if call.layout == _HWCN:
        return data[2], kernel[3]
    if call.layout.startswith("NC") and not _PACKED_LAYOUT.fullmatch(call.layout):
        if call.transposed:
            return data[1], kernel[1] * call.groups  # IOHW, O per group
        if call.family == "depthwise_conv2d":
            return data[1], kernel[0] * kernel[1]  # [C, multiplier, KH, KW]
        return data[1], kernel[0]
    if call.layout.startswith("N") and call.layout.endswith("C") and not call.transposed:
        if call.family == "depthwise_conv2d":
            return data[-1], kernel[-2] * kernel[-1]  # [KH, KW, C, multiplier]
        return data[-1], kernel[-1]  # HWIO
    return None


def _conv_facts(call: _Conv) -> dict[str, object]:
    # The call's fields read once (a NamedTuple's field costs an attribute lookup each time).
    family, layout, groups = call.family, call.layout, call.groups
    data, kernel = call.data, call.kernel
    facts: dict[str, object] = {
        "family": family,
        "layout": layout,
        "dtype": data.dtype,
        "kernel_dtype": kernel.dtype,
        "same_kernel_dtype": data.dtype == kernel.dtype,
        "out_dtype": call.out_dtype,
        "kernel_rank": len(kernel.shape),
        "batch": data.shape[3] if layout == _HWCN else data.shape[0],
    }
    strides = call.strides
    rank = len(strides)
    spatial = kernel.shape[2:] if layout.startswith("NC") else kernel.shape[:rank]
    if layout in PLAIN_CONV_LAYOUTS:
        facts["kw"], facts["stride_w"] = spatial[-1], strides[-1]
        if not call.transposed:
            facts["dilation_w"] = call.dilation[-1]
        if rank >= 2:
            facts["kh"], facts["stride_h"] = spatial[-2], strides[-2]
            if not call.transposed:
                facts["dilation_h"] = call.dilation[-2]
        if rank >= 2:
            facts["square_kernel"] = spatial[-1] == spatial[-2]
    padding = call.padding
    facts["padding"] = padding
    facts["symmetric_padding"] = padding[:rank] == padding[rank:]  # begins == ends
    channels = _channels(call)
    if channels is not None and groups > 0:
        facts["in_channels"], facts["out_channels"] = channels
        if family == "depthwise_conv2d":
            groups = channels[0]
        facts["depthwise"] = groups > 1 and channels[0] == channels[1] == groups
        if groups > 0 and channels[0] % groups == 0 and channels[1] % groups == 0:
            facts["in_per_group"] = channels[0] // groups
            facts["out_per_group"] = channels[1] // groups
    if family != "depthwise_conv2d" or channels is not None:
        facts["groups"] = groups
    if family in ("conv2d", "group_conv2d") and layout == "NCHW":
        # False for a winograd kernel already transformed ([alpha, alpha, O, I] and the like)
        facts["kernel_fits_data"] = kernel.shape[1] * call.groups == data.shape[1]
    if family == "depthwise_conv2d" and layout.startswith("NC"):
        facts["multiplier"] = kernel.shape[1]
    return facts


def _matmul_facts(call: _Matmul) -> dict[str, object]:
    facts: dict[str, object] = {
        "family": call.family,
        "dtype": call.a.dtype,
        "kernel_dtype": call.b.dtype,
        "out_dtype": call.out_dtype,
        "transpose_a": call.transpose_a,
        "transpose_b": call.transpose_b,
    }
    facts["same_dtype"] = call.a.dtype == call.b.dtype == call.out_dtype
    a, b = call.a.shape, call.b.shape
    if call.family == "dense" and len(a) == 2 and len(b) == 2:
        facts["batch"], facts["in_dim"], facts["out_dim"] = a[0], a[1], b[0]
    if call.family == "batch_matmul" and len(a) == 3 and len(b) == 3:
        m, k = (a[2], a[1]) if call.transpose_a else (a[1], a[2])
        n = b[1] if call.transpose_b else b[2]
        facts["m"], facts["n"], facts["k"] = m, n, k
    return facts


def layer_facts(task_name: str, args: list[Any]) -> dict[str, object]:
    """What relay's strategy conditions test about the layer a workload tuned.

    In relay's terms (layout, groups, in/out channels, kernel size kh/kw, stride_h/w,
    dilation_h/w, dtype, kernel_dtype, out_dtype, batch, depthwise...); a fact the arguments do
    not give is left out (and a condition on it stays undecided). Never raises.
    """
    return _facts(_parse(_name_info(task_name), args))


def _facts(call: _Call | None) -> dict[str, object]:
    if isinstance(call, _Conv):
        return _conv_facts(call)
    if isinstance(call, _Matmul):
        return _matmul_facts(call)
    return {}


def layer_key_and_facts(
    task_name: str, template_key: str, args: list[Any]
) -> tuple[str, dict[str, object]]:
    """`layer_key` and `layer_facts` from one reading of the arguments."""
    return layer_key_and_facts_of_call(task_name, args, _parse(_name_info(task_name), args))


def layer_key_and_facts_of_call(
    task_name: str, args: list[Any], call: _Call | None
) -> tuple[str, dict[str, object]]:
    """`layer_key_and_facts` for arguments already read (`call`: `calls._parse` of them)."""
    key = _call_key(call) if call is not None else _fallback_key(task_name, args)
    return key, _facts(call)
