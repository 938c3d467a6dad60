"""Operator families: what a task name says (family, layout hint, argument conventions).

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
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

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

# Layout hints found in a template name.
_CHANNEL_FIRST = "channel-first"
_CHANNEL_LAST = "channel-last"
_HWCN = "HWCN"
_OTHER = "other"


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
