"""Short human text for a task's arguments (`short_args`) and a call's parts (`call_fields`)."""

from __future__ import annotations

from typing import Any

from tunelog.rules.workloadidentity import sorted_json
from tunelog.workloads.calls import (
    _PACKED_LAYOUT,
    _Call,
    _Conv,
    _ints,
    _metaschedule_summary,
    _parse,
    _Tensor,
)
from tunelog.workloads.families import _name_info
from tunelog.workloads.layerkey import _numbers

_SHORT_LIMIT = 120


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def _same_or_list(values: tuple[int, ...], separator: str) -> str:
    if values and values.count(values[0]) == len(values):  # all the same
        return str(values[0])
    return separator.join(map(str, values))


def _dtype_text(in_dtype: str, out_dtype: str) -> str:
    if in_dtype == out_dtype:
        return "" if in_dtype == "float32" else in_dtype
    return f"{in_dtype}->{out_dtype}"


def _call_short(call: _Call) -> str:
    if isinstance(call, _Conv):
        words = [
            f"{_shape_text(call.data.shape)} * {_shape_text(call.kernel.shape)}",
            "s" + _same_or_list(call.strides, "x"),
            "p" + _same_or_list(call.padding, ","),
        ]
        if call.dilation != (1,) * len(call.dilation):  # not all 1
            words.append("d" + _same_or_list(call.dilation, "x"))
        if call.groups != 1:
            words.append(f"g{call.groups}")
        if any(call.output_padding):
            words.append("op" + _same_or_list(call.output_padding, "x"))
        if not call.layout.startswith("NC") or _PACKED_LAYOUT.fullmatch(call.layout):
            words.append(call.layout)  # shapes alone do not say NHWC / packed
        words.append(_dtype_text(call.data.dtype, call.out_dtype))
        return " ".join(filter(None, words))  # the words not empty
    words = [f"{_shape_text(call.a.shape)} * {_shape_text(call.b.shape)}"]
    if call.bias is not None:
        words.append("+ bias")
    default_b = call.family != "matmul"
    if call.transpose_a or call.transpose_b != default_b:
        # BLAS letters: N = as stored, T = transposed; shown only when not the default
        words.append(("T" if call.transpose_a else "N") + ("T" if call.transpose_b else "N"))
    words.append(_dtype_text(call.a.dtype, call.out_dtype))
    return " ".join(filter(None, words))  # the words not empty


def _generic_short(args: object) -> str:
    if not isinstance(args, (list, tuple)):
        return sorted_json(args)
    shapes: list[str] = []
    others: list[str] = []
    for arg in args:
        # Loose on purpose: this is display text, a damaged TENSOR still shows its shape.
        if isinstance(arg, (list, tuple)) and len(arg) >= 2 and arg[0] == "TENSOR":
            shape = _ints(arg[1])
            if shape is not None:
                shapes.append(_shape_text(shape))
                continue
        if arg is None:
            continue
        others.append(arg if isinstance(arg, str) else sorted_json(arg))
    return " ".join(w for w in [" * ".join(shapes), *others] if w)


def short_args(task_name: str, args: list[Any]) -> str:
    """Compact human text for a task's arguments, e.g. `1x3x608x608 * 16x3x7x7 s1 p3`.

    Tensor shapes joined by ` * `; convolutions add stride, padding (all four sides, or one
    number when equal) and dilation when not 1; a dtype shows only when it is not float32.
    Never raises.
    """
    return short_args_of_call(task_name, args, _parse(_name_info(task_name), args))


def short_args_of_call(task_name: str, args: list[Any], call: _Call | None) -> str:
    """`short_args` for arguments already read (`call`: `calls._parse` of them), so that
    `summary.facts_of` reads a workload's arguments once for all its facts."""
    module = _metaschedule_summary(task_name, args)
    if module is not None:  # MetaSchedule: the function and its tensors, from the module
        from tunelog.mssummary import summary_text

        text = summary_text(module)
    else:
        text = _call_short(call) if call is not None else _generic_short(args)
    if len(text) > _SHORT_LIMIT:
        text = text[: _SHORT_LIMIT - 3] + "..."
    return text


# ---------------------------------------------------------------------------------------------
# Named parts, for comparing two calls


def _tensor_field(tensor: _Tensor) -> str:
    text = _shape_text(tensor.shape)
    return text if tensor.dtype == "float32" else f"{text}:{tensor.dtype}"


def call_fields(task_name: str, args: list[Any]) -> dict[str, str] | None:
    """The parts of an operator call, named, as short text; None when the args are not parsed.

    Convolutions: layout, data, kernel, strides, padding, dilation, groups, out_dtype;
    dense/matmul: data, weight, bias, transposes, out_dtype. Two calls of one family differ
    exactly where these differ (what `diagnose` shows as "data 1x3x224x224 vs 1x3x56x56").
    """
    call = _parse(_name_info(task_name), args)
    if call is None:
        return None
    if isinstance(call, _Conv):
        return {
            "layout": call.layout,
            "data": _tensor_field(call.data),
            "kernel": _tensor_field(call.kernel),
            "strides": _shape_text(call.strides),
            "padding": _numbers(call.padding),
            "dilation": _shape_text(call.dilation),
            "groups": str(call.groups),
            "out_dtype": call.out_dtype,
        }
    return {
        "data": _tensor_field(call.a),
        "weight": _tensor_field(call.b),
        "bias": _tensor_field(call.bias) if call.bias else "-",
        "transposes": ("T" if call.transpose_a else "N") + ("T" if call.transpose_b else "N"),
        "out_dtype": call.out_dtype,
    }
