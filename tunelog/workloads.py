"""What a tuning task computes: operator family, layer identity, short text and FLOPs.

Pure: task names and argument lists in, strings and numbers out. Arguments come from JSON, so a
log may hold anything there: the readers check the type and size of every value they use and fall
back (fallback key, generic text, `None` FLOPs) on anything else. Nothing catches TypeError or
ValueError, so a bug in this module raises instead of passing for odd arguments.

Family rule (`operator_family`)
-------------------------------
1. A TOPI template name is `<stem>.<target>` in v0.2 logs (`conv2d_nchw_winograd.cuda`) and
   `topi_<namespace>_<stem>` in v0.1 logs (`topi_nn_conv2d`, `topi_x86_conv2d_NCHWc`).
2. The stem is lower-cased and split on `_`; words naming a data layout (nchw, nhwc, NCHWc, hwcn,
   ncw, nwc, ncdhw, ndhwc, HWNCnc, ...) or an implementation choice are dropped: algorithms
   (winograd, direct, spatial_pack, pack, nopack, packed, small_batch, large_batch, via_sort, ...),
   libraries (cudnn, cublas, cblas, mkl, dnnl, miopen, rocblas, nnpack), data types and
   instruction sets (int8, quantized, tensorcore, vnni, dsp, simd) and weight handling
   (without_weight_transform, without_transform).
3. The words left, joined by `_`, are the family when they name a known operator (`_OPERATORS`:
   conv1d, conv2d, conv3d, depthwise_conv2d, group_conv2d, conv2d_transpose, dense, batch_matmul,
   matmul, ...). One TVM stem does not spell its operator: `conv3x3_spNCHW`/`conv3x3_spNHWC` are
   sparse convolutions, family `sparse_conv2d`.
4. Any other name, user templates included (`matmul`, `tutorial/conv2d`, `Gemm_tv2_...`), is its
   own family: the task name itself.
5. The v0.1 template key (`direct`, `winograd`, `spatial_pack`, ...) never changes the family: like
   the words of step 2 it picks an implementation of one operator.

VTA's packed templates (`conv2d_packed.vta`, `dense_packed.vta`, ...) belong to the plain family
(`conv2d`, `dense`): "packed" is an implementation word, and v0.1 VTA logs already file the same
layers under `topi_nn_conv2d`. Their packed layouts (`NCHW1n16c`, 6-D tensors) are part of the
layer identity, so they never merge with unpacked layers.

Layer identity (`layer_key`, tvm-reference §5)
----------------------------------------------
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
list get `<task name>|args=<canonical JSON of the args>`.

FLOPs (`flops`, tvm-reference §7)
---------------------------------
What TVM's compute definitions give, read from the args: a convolution (any rank, grouped,
depthwise, winograd, VTA-packed) is `2 * N * prod(output spatial) * prod(kernel shape)`, i.e.
`2 * N * K * OH * OW * C/groups * KH * KW` for NCHW; a transposed convolution is the same with the
transposed output size `(H - 1) * stride - pad_begin - pad_end + KH + output_padding`; dense and
matmul are `2 * M * N * K` (a bias add is not counted), batch_matmul `2 * B * M * N * K`.
Anything else is `None` ("unknown"), never a guess.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from tunelog.versions import METASCHEDULE_TASK

if TYPE_CHECKING:
    from tunelog.mssummary import Summary

__all__ = [
    "call_fields",
    "flops",
    "gflops",
    "layer_facts",
    "layer_key",
    "layer_key_and_facts",
    "operator_family",
    "short_args",
]

_V01_PREFIX = "topi_"
# v0.1 task names put the TOPI namespace after `topi_`; longest first so `intel_graphics` wins.
_V01_NAMESPACES = tuple(
    sorted(
        (
            "arm_cpu",
            "bifrost",
            "cuda",
            "generic",
            "gpu",
            "hexagon",
            "hls",
            "intel_graphics",
            "mali",
            "nn",
            "opengl",
            "riscv",
            "rocm",
            "vta",
            "x86",
        ),
        key=len,
        reverse=True,
    )
)
_TOPI_NAME = re.compile(r"([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)")

# Multi-word implementation phrases, matched before single words so that `small_batch` does not
# leave a stray `batch` (which would turn `dense_small_batch` into `dense_batch`).
_DROP_PHRASES: tuple[tuple[str, ...], ...] = (
    ("without", "weight", "transform"),
    ("without", "transform"),
    ("spatial", "pack"),
    ("small", "batch"),
    ("large", "batch"),
    ("via", "sort"),
)
_DROP_WORDS = frozenset(
    {
        # algorithms and schedules
        "winograd",
        "direct",
        "pack",
        "nopack",
        "packed",
        "interleaved",
        "native",
        "hybrid",
        "default",
        "from",
        # vendor libraries
        "cudnn",
        "cublas",
        "cblas",
        "mkl",
        "dnnl",
        "miopen",
        "rocblas",
        "nnpack",
        # data types and instruction sets
        "int8",
        "quantized",
        "tensorcore",
        "vnni",
        "dsp",
        "simd",
    }
)
# Layout words: letters of N, C, H, W, D, optionally followed by packed factors (`nchw4c`).
_LAYOUT_WORD = re.compile(r"[nchwd]{3,6}(?:\d+[nchwd])*")
_OPERATORS = frozenset(
    {
        "batch_matmul",
        "bitserial_conv2d",
        "bitserial_dense",
        "conv1d",
        "conv1d_transpose",
        "conv2d",
        "conv2d_transpose",
        "conv3d",
        "conv3d_transpose",
        "correlation",
        "deformable_conv2d",
        "dense",
        "depthwise_conv2d",
        "group_conv1d",
        "group_conv2d",
        "matmul",
        "scatter",
        "sparse_conv2d",
    }
)

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
# VTA's batch-and-channel packed layout, e.g. NCHW1n16c: data [N/n, C/c, H, W, n, c].
_PACKED_LAYOUT = re.compile(r"NCHW(\d+)n(\d+)c")
_LAYOUT_STRING = re.compile(r"[A-Z]+(?:\d+[a-z])*")
_DTYPE = re.compile(r"bool|(?:u?int|float|bfloat)\d+(?:x\d+)?")

# Layout hints found in a template name.
_CHANNEL_FIRST = "channel-first"
_CHANNEL_LAST = "channel-last"
_HWCN = "HWCN"
_OTHER = "other"

_SHORT_LIMIT = 120
_FALLBACK_MARK = "|args="

# TVM sizes and attributes are IntImm, int64 at most: a wider JSON int is not one. The bound also
# keeps every number this module prints far below Python's int-to-str digit limit.
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# int() reads this many digits whatever sys.set_int_max_str_digits() says (its lowest setting).
_SAFE_DIGITS = sys.int_info.str_digits_check_threshold


# NamedTuples, not frozen dataclasses: a dataclass costs about 1 ms of start-up to create
# (its methods are compiled from source), and every listing of layers imports this module.
class _NameInfo(NamedTuple):
    """What a task name says: family and the conventions its argument list follows."""

    family: str
    topi: bool  # a TOPI template, so its args follow TOPI's argument lists
    layout_hint: str  # one of _CHANNEL_FIRST, _CHANNEL_LAST, _HWCN, _OTHER or ""
    pretransformed: bool  # the kernel argument is already transformed (winograd, interleave)
    vta: bool
    old_x86: bool  # TVM <= 0.6 x86 / intel_graphics conv2d argument list


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


# ---------------------------------------------------------------------------------------------
# Families


def _strip_name(task_name: str) -> tuple[str, bool]:
    """The stem of a TOPI template name, and whether the name is a TOPI template at all."""
    match = _TOPI_NAME.fullmatch(task_name)
    if match:
        return match.group(1), True
    if task_name.startswith(_V01_PREFIX):
        rest = task_name[len(_V01_PREFIX) :]
        for namespace in _V01_NAMESPACES:
            if rest.startswith(namespace + "_"):
                return rest[len(namespace) + 1 :], True
    return task_name, False


def _split_stem(stem: str) -> tuple[list[str], list[str]]:
    """The operator words of a stem, and its layout words."""
    words = stem.lower().split("_")
    kept: list[str] = []
    layouts: list[str] = []
    i = 0
    while i < len(words):
        phrase = next((p for p in _DROP_PHRASES if tuple(words[i : i + len(p)]) == p), None)
        if phrase is not None:
            i += len(phrase)
            continue
        word = words[i]
        if _LAYOUT_WORD.fullmatch(word):
            layouts.append(word)
        elif word not in _DROP_WORDS:
            kept.append(word)
        i += 1
    return kept, layouts


def _layout_hint(layout_words: list[str]) -> str:
    hints: set[str] = set()
    for word in layout_words:
        if word == "hwcn":
            hints.add(_HWCN)
        elif word in ("nhwc", "nwc", "ndhwc"):
            hints.add(_CHANNEL_LAST)
        elif word.startswith("nc"):
            # nchw, ncw, ncdhw, and nchwc / nchw4c whose tensors may still be plain NCHW
            hints.add(_CHANNEL_FIRST)
        else:
            hints.add(_OTHER)
    if len(hints) == 1:
        return hints.pop()
    return _OTHER if hints else ""


# Cached: a database holds a few thousand task names over tens of thousands of workloads.
@functools.lru_cache(maxsize=4096)
def _name_info(task_name: str) -> _NameInfo:
    stem, topi = _strip_name(task_name)
    if not topi:
        return _NameInfo(task_name, False, "", False, False, False)
    lowered = stem.lower()
    kept, layout_words = _split_stem(stem)
    # conv3x3_spNCHW / conv3x3_spNHWC: the one stem that does not spell its operator
    family = "sparse_conv2d" if lowered.startswith("conv3x3_sp") else "_".join(kept)
    if family not in _OPERATORS:
        return _NameInfo(task_name, False, "", False, False, False)
    return _NameInfo(
        family=family,
        topi=True,
        layout_hint=_layout_hint(layout_words),
        pretransformed="without_weight_transform" in lowered or "without_transform" in lowered,
        vta=task_name.endswith(".vta"),
        old_x86=task_name.startswith(("topi_x86_conv2d", "topi_intel_graphics_conv2d")),
    )


def operator_family(task_name: str, template_key: str = "") -> str:
    """The operator family of a template (rule in the module docstring).

    `template_key` (v0.1 `direct`, `winograd`, ...) is accepted for symmetry with the record
    fields; by rule 5 it never changes the family.
    """
    return _name_info(task_name).family


# ---------------------------------------------------------------------------------------------
# Reading arguments


def _int(value: object) -> int | None:
    """An int64 argument, else None."""
    # JSON booleans are Python ints; a boolean is never a size.
    if isinstance(value, int) and not isinstance(value, bool) and _INT64_MIN <= value <= _INT64_MAX:
        return value
    return None


def _ints(value: object) -> tuple[int, ...] | None:
    if not isinstance(value, (list, tuple)):
        return None
    out: list[int] = []
    for item in value:
        number = _int(item)
        if number is None:
            return None
        out.append(number)
    return tuple(out)


def _tensor(value: object) -> _Tensor | None:
    """A `["TENSOR", shape, dtype]` argument; any other spelling is not read."""
    if not isinstance(value, (list, tuple)) or len(value) != 3 or value[0] != "TENSOR":
        return None
    shape = _ints(value[1])
    dtype = value[2]
    if shape is None or not isinstance(dtype, str):
        return None
    return _Tensor(shape, dtype)


def _is_number_arg(value: object) -> bool:
    return _int(value) is not None or _ints(value) is not None


def _per_axis(value: object, rank: int) -> tuple[int, ...] | None:
    """Strides, dilation, output padding: an int, or one number per spatial axis."""
    number = _int(value)
    if number is not None:
        return (number,) * rank
    numbers = _ints(value)
    if numbers is not None and len(numbers) == rank:
        return numbers
    return None


def _padding(value: object, rank: int) -> tuple[int, ...] | None:
    """Padding as begins then ends, as TVM's get_pad_tuple / get_pad_tuple1d / 3d read it."""
    number = _int(value)
    if number is not None:
        return (number,) * (2 * rank)
    numbers = _ints(value)
    if numbers is None:
        return None
    if len(numbers) == rank:
        return numbers + numbers
    if len(numbers) == 2 * rank:
        return numbers
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


def _conv_layouts(rank: int) -> tuple[str, ...]:
    letters = _SPATIAL_LETTERS[rank]
    plain = ("NC" + letters, "N" + letters + "C")
    return (*plain, _HWCN) if rank == 2 else plain


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
    if layout in _conv_layouts(rank) and len(data.shape) == rank + 2:
        return layout
    return None


def _parse_conv(info: _NameInfo, args: Sequence[object]) -> _Conv | None:
    transposed = info.family in _TRANSPOSED_RANK
    rank = _TRANSPOSED_RANK.get(info.family) or _CONV_RANK.get(info.family)
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
    numbers: list[object] = []
    while rest and len(numbers) < (2 if transposed else 3) and _is_number_arg(rest[0]):
        numbers.append(rest.pop(0))
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
            given_padding = _per_axis(rest[1], rank)
            if given_padding is None:
                return None
            output_padding = given_padding
    else:
        given_groups = _int(rest[0]) if rest else None
        if given_groups is not None:
            groups = given_groups
            rest.pop(0)
        elif info.family.startswith("group_"):
            return None  # grouped templates always pass groups
        if info.family == "depthwise_conv2d" and groups != 1:
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
        family=info.family,
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


# ---------------------------------------------------------------------------------------------
# Layer identity


def _printable(number: int) -> bool:
    """Whether str() prints `number`: Python refuses ints longer than its digit limit."""
    limit = sys.get_int_max_str_digits()
    # bit_length first: cheap, and it settles every int of up to ~0.9 * limit digits
    return limit == 0 or number.bit_length() <= 3 * limit or abs(number) < 10**limit


def _json_float(value: float) -> str:
    """A float as json.dumps writes it (allow_nan: lenient readers hand over NaN and Infinity)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _json_scalar(value: object) -> str:
    """A value that is not a list, tuple or dict, as `json.dumps(..., default=repr)` writes it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        # Past the digit limit json.dumps raises; hex has no limit and reads as no decimal int.
        return int.__repr__(value) if _printable(value) else hex(value)
    if isinstance(value, float):
        return _json_float(value)
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(repr(value))  # not JSON (default=repr)


def _json_key(key: object) -> str:
    """A dict key as text: json.dumps turns int, float, bool and None keys into their JSON."""
    if isinstance(key, str):
        return key
    if isinstance(key, (int, float)) or key is None:
        return _json_scalar(key)
    return repr(key)  # json.dumps refuses other keys; no JSON reader makes them


_Container = list[object] | tuple[object, ...] | dict[object, object]


def _json_part(value: object) -> object:
    """A container's item as `_canonical_json` stacks it: a nested container, or its text."""
    return value if isinstance(value, (list, tuple, dict)) else _json_scalar(value)


def _json_parts(container: _Container) -> list[object]:
    """What follows a container's opening bracket, in order: texts (str) and nested containers,
    then the closing bracket and the container's id (int), which ends its cycle watch."""
    parts: list[object] = []
    if isinstance(container, dict):
        # Sorted on the key text, not on (key, value) pairs: equal texts must not compare values.
        pairs = sorted(((_json_key(k), v) for k, v in container.items()), key=lambda kv: kv[0])
        for index, (key, value) in enumerate(pairs):
            parts += [("," if index else "") + json.dumps(key) + ":", _json_part(value)]
        close = "}"
    else:
        for index, value in enumerate(container):
            parts += [",", _json_part(value)] if index else [_json_part(value)]
        close = "]"
    return [*parts, close, id(container)]


def _canonical_json(args: object) -> str:
    """What `json.dumps(args, sort_keys=True, separators=(",", ":"), default=repr)` writes.

    Written with a stack instead of recursion and without json.dumps' failures: nesting of any
    depth is written in full (so distinct args keep distinct keys), ints past Python's digit
    limit in hex, and a container met again inside itself (no JSON reader makes one) as
    "<cycle>".
    """
    out: list[str] = []
    open_ids: set[int] = set()  # containers being written
    todo: list[object] = [_json_part(args)]  # texts, containers to open, ids of containers closed
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, int):
            open_ids.discard(item)
        elif not isinstance(item, (list, tuple, dict)):
            raise AssertionError(f"_json_part stacked a {type(item).__name__}")
        elif id(item) in open_ids:
            out.append('"<cycle>"')
        else:
            open_ids.add(id(item))
            out.append("{" if isinstance(item, dict) else "[")
            todo += reversed(_json_parts(item))
    return "".join(out)


def _fallback_key(task_name: str, args: object) -> str:
    return f"{task_name}{_FALLBACK_MARK}{_canonical_json(args)}"


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


# ---------------------------------------------------------------------------------------------
# Facts relay's strategies test (tunelog.conditions)


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
    facts: dict[str, object] = {
        "family": call.family,
        "layout": call.layout,
        "dtype": call.data.dtype,
        "kernel_dtype": call.kernel.dtype,
        "same_kernel_dtype": call.data.dtype == call.kernel.dtype,
        "out_dtype": call.out_dtype,
        "kernel_rank": len(call.kernel.shape),
        "batch": call.data.shape[3] if call.layout == _HWCN else call.data.shape[0],
    }
    rank = len(call.strides)
    spatial = call.kernel.shape[2:] if call.layout.startswith("NC") else call.kernel.shape[:rank]
    if call.layout in ("NCHW", "NHWC", _HWCN, "NCDHW", "NDHWC", "NCW", "NWC"):
        facts["kw"], facts["stride_w"] = spatial[-1], call.strides[-1]
        if not call.transposed:
            facts["dilation_w"] = call.dilation[-1]
        if rank >= 2:
            facts["kh"], facts["stride_h"] = spatial[-2], call.strides[-2]
            if not call.transposed:
                facts["dilation_h"] = call.dilation[-2]
        if rank >= 2:
            facts["square_kernel"] = spatial[-1] == spatial[-2]
    begins, ends = call.padding[:rank], call.padding[rank:]
    facts["padding"] = call.padding
    facts["symmetric_padding"] = begins == ends
    channels = _channels(call)
    groups = call.groups
    if channels is not None and groups > 0:
        facts["in_channels"], facts["out_channels"] = channels
        if call.family == "depthwise_conv2d":
            groups = channels[0]
        facts["depthwise"] = groups > 1 and channels[0] == channels[1] == groups
        if groups > 0 and channels[0] % groups == 0 and channels[1] % groups == 0:
            facts["in_per_group"] = channels[0] // groups
            facts["out_per_group"] = channels[1] // groups
    if call.family != "depthwise_conv2d" or channels is not None:
        facts["groups"] = groups
    if call.family in ("conv2d", "group_conv2d") and call.layout == "NCHW":
        # False for a winograd kernel already transformed ([alpha, alpha, O, I] and the like)
        facts["kernel_fits_data"] = call.kernel.shape[1] * call.groups == call.data.shape[1]
    if call.family == "depthwise_conv2d" and call.layout.startswith("NC"):
        facts["multiplier"] = call.kernel.shape[1]
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
    call = _parse(_name_info(task_name), args)
    key = _call_key(call) if call is not None else _fallback_key(task_name, args)
    return key, _facts(call)


# ---------------------------------------------------------------------------------------------
# Short text


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def _same_or_list(values: tuple[int, ...], separator: str) -> str:
    if values and all(v == values[0] for v in values):
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
        if any(d != 1 for d in call.dilation):
            words.append("d" + _same_or_list(call.dilation, "x"))
        if call.groups != 1:
            words.append(f"g{call.groups}")
        if any(call.output_padding):
            words.append("op" + _same_or_list(call.output_padding, "x"))
        if not call.layout.startswith("NC") or _PACKED_LAYOUT.fullmatch(call.layout):
            words.append(call.layout)  # shapes alone do not say NHWC / packed
        words.append(_dtype_text(call.data.dtype, call.out_dtype))
        return " ".join(w for w in words if w)
    words = [f"{_shape_text(call.a.shape)} * {_shape_text(call.b.shape)}"]
    if call.bias is not None:
        words.append("+ bias")
    default_b = call.family != "matmul"
    if call.transpose_a or call.transpose_b != default_b:
        # BLAS letters: N = as stored, T = transposed; shown only when not the default
        words.append(("T" if call.transpose_a else "N") + ("T" if call.transpose_b else "N"))
    words.append(_dtype_text(call.a.dtype, call.out_dtype))
    return " ".join(w for w in words if w)


def _generic_short(args: object) -> str:
    if not isinstance(args, (list, tuple)):
        return _canonical_json(args)
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
        others.append(arg if isinstance(arg, str) else _canonical_json(arg))
    return " ".join(w for w in [" * ".join(shapes), *others] if w)


def _metaschedule_summary(task_name: str, args: list[Any]) -> Summary | None:
    """What a MetaSchedule workload's module computes (None for other tasks).

    tunelog.msmodule is loaded only for MetaSchedule workloads: it brings hashlib and orjson.
    """
    if task_name != METASCHEDULE_TASK:
        return None
    from tunelog.mssummary import summary_of_task

    return summary_of_task(task_name, args)


def short_args(task_name: str, args: list[Any]) -> str:
    """Compact human text for a task's arguments, e.g. `1x3x608x608 * 16x3x7x7 s1 p3`.

    Tensor shapes joined by ` * `; convolutions add stride, padding (all four sides, or one
    number when equal) and dilation when not 1; a dtype shows only when it is not float32.
    Never raises.
    """
    module = _metaschedule_summary(task_name, args)
    if module is not None:  # MetaSchedule: the function and its tensors, from the module
        from tunelog.mssummary import summary_text

        text = summary_text(module)
    else:
        call = _parse(_name_info(task_name), args)
        text = _call_short(call) if call is not None else _generic_short(args)
    if len(text) > _SHORT_LIMIT:
        text = text[: _SHORT_LIMIT - 3] + "..."
    return text


# ---------------------------------------------------------------------------------------------
# FLOPs


def _factor(digits: str) -> int | None:
    """A packing factor from a layout string (`\\d+`, any length); None past what int() reads."""
    return int(digits) if len(digits) <= _SAFE_DIGITS else None


def _conv_flops(call: _Conv) -> int | None:
    rank = len(call.strides)
    d, k, g = call.data.shape, call.kernel.shape, call.groups
    if min(d + k + call.strides + call.dilation + (g,)) <= 0:
        return None
    if min(call.padding + call.output_padding, default=0) < 0:
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
        size, kernel, stride = spatial[axis], k_spatial[axis], call.strides[axis]
        begin, end = call.padding[axis], call.padding[rank + axis]
        if call.transposed:
            if call.output_padding[axis] >= stride:
                return None  # TOPI asserts output_padding < stride
            out = (size - 1) * stride - begin - end + kernel + call.output_padding[axis]
        else:
            out = (size + begin + end - call.dilation[axis] * (kernel - 1) - 1) // stride + 1
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
    module = _metaschedule_summary(task_name, args)
    if module is not None:  # MetaSchedule: estimated from the TIR as TVM's estimate_tir_flops
        return module.flops
    info = _name_info(task_name)
    call = _parse(info, args)
    if isinstance(call, _Conv):
        return _conv_flops(call)
    if isinstance(call, _Matmul):
        return _matmul_flops(call, info.vta)
    return None


def gflops(flop: int | None, mean_cost_seconds: float) -> float | None:
    """GFLOPS as AutoTVM prints it: flop / mean cost / 1e9; None when either is unusable."""
    if flop is None:
        return None
    try:
        # Kept on purpose, and precise: float() of an int past ~1.8e308 raises OverflowError and
        # nothing else; a pre-check would have to redo float()'s rounding at that boundary.
        count, cost = float(flop), float(mean_cost_seconds)
    except OverflowError:
        return None
    if not math.isfinite(cost) or cost <= 0:
        return None
    return count / cost / 1e9


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
