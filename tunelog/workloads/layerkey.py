"""Layer identity (`layer_key`, tvm-reference §5): one operator call across templates.

Templates of one family spell one operator call differently; the key is rebuilt from what the
call means: family, data layout, input and weight shapes with their dtypes, strides, padding
(top/left/bottom/right order, TVM's `get_pad_tuple`), dilation, groups, output layout when it
differs from the input layout, transposed convolutions' output padding, dense bias, matmul
transposes, and output dtype (`None` means the input dtype, as in TOPI). Templates named
`*without_weight_transform*` / `*without_transform*` take an already transformed kernel (its shape
is not the layer's weight shape), so they keep a key of their own. The winograd templates found
in real logs (`conv2d_nchw_winograd.{cuda,arm_cpu,mali,image2d}`, v0.1 `topi_nn_conv2d` +
`winograd`) take the original kernel and do merge with the direct templates. Names that are not
TOPI templates, families without a model here, and arguments that do not fit a known argument
list get `<task name>|args=<canonical JSON of the args>` (`rules.workloadidentity.sorted_json`).
"""

from __future__ import annotations

from typing import Any

from tunelog.rules.workloadidentity import sorted_json
from tunelog.workloads.calls import _Call, _Conv, _parse, _Tensor
from tunelog.workloads.families import _name_info

_FALLBACK_MARK = "|args="


def _fallback_key(task_name: str, args: object) -> str:
    return f"{task_name}{_FALLBACK_MARK}{sorted_json(args)}"


def _tensor_text(tensor: _Tensor) -> str:
    return "x".join(map(str, tensor.shape)) + ":" + tensor.dtype


def _numbers(values: tuple[int, ...]) -> str:
    return ",".join(map(str, values))


def _call_key(call: _Call) -> str:
    if isinstance(call, _Conv):
        parts = [
            call.family,
            call.layout,
            _tensor_text(call.data),
            _tensor_text(call.kernel),
            "s" + _numbers(call.strides),
            "p" + _numbers(call.padding),
        ]
        if call.transposed:
            parts.append("op" + _numbers(call.output_padding))
        else:
            parts += ["d" + _numbers(call.dilation), f"g{call.groups}"]
        if call.out_layout:
            parts.append("out=" + call.out_layout)
        parts.append(call.out_dtype)
        return "|".join(parts)
    # out_shape is left out: it follows from the inputs, and old TVMs do not pass it.
    parts = [call.family, _tensor_text(call.a), _tensor_text(call.b)]
    if call.family != "batch_matmul":
        parts.append("bias=" + (_tensor_text(call.bias) if call.bias else "-"))
    if call.family != "dense":
        parts.append("T" if call.transpose_a else "N")
        parts[-1] += "T" if call.transpose_b else "N"
    parts.append(call.out_dtype)
    return "|".join(parts)


def layer_key(task_name: str, template_key: str, args: list[Any]) -> str:
    """A canonical string naming the layer a record tuned, shared by the templates of one family.

    Two records of one target compete for the same relay call exactly when their keys are equal
    (see the module docstring for what is normalised). Never raises.
    """
    call = _parse(_name_info(task_name), args)
    if call is not None:
        return _call_key(call)
    return _fallback_key(task_name, args)
