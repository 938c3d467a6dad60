"""Knob statistics and coverage of one template's trials, and the layouts x86 templates imply.

Pure: (knobs, error number, cost) per trial in, per-knob-value tables out.

Per knob and value: trials that used it, valid/failed, best and median mean cost of the valid
ones, and whether the chosen config (what apply_history_best uses for the template) has it.

Coverage: distinct configs tried (config indexes) and, per `sp` (split) knob, distinct
factorisations seen. The full config space size is NOT in the log (AutoTVM computes it from the
template at tuning time), so coverage is "how much was tried", never "what share of the space".

Layouts (tvm/python/tvm/topi/x86/conv2d_alter_op.py, `_alter_conv2d_layout`): for the x86 NCHWc
templates relay rewrites the layer to blocked layouts taken from the config: with
`ic_bn = tile_ic[-1]` and `oc_bn = tile_oc[-1]` (the last factor of each split), data
`NCHW{ic_bn}c`, kernel `OIHW{ic_bn}i{oc_bn}o` and output `NCHW{oc_bn}c`; `conv2d_NCHWc_int8.x86`
packs the kernel as `OIHW{ic_bn/4}i{oc_bn}o4i`, `depthwise_conv2d_NCHWc.x86` as
`OIHW1i{oc_bn}o`. The v0.1 names of these templates (`topi_x86_conv2d_NCHWc`, ...) use the same
knobs. These derived values are shown as extra knobs `layout:data`, `layout:kernel` and
`layout:out`, so "was NCHW16c tried, and how fast was it?" is one row.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Template -> kernel layout pattern; {ic}, {oc}, {ic4} = ic_bn // 4.
_NCHWC_TEMPLATES = {
    "conv2d_NCHWc.x86": "OIHW{ic}i{oc}o",
    "topi_x86_conv2d_NCHWc": "OIHW{ic}i{oc}o",
    "conv2d_NCHWc_int8.x86": "OIHW{ic4}i{oc}o4i",
    "topi_x86_conv2d_NCHWc_int8": "OIHW{ic4}i{oc}o4i",
    "depthwise_conv2d_NCHWc.x86": "OIHW1i{oc}o",
    "topi_x86_depthwise_conv2d_NCHWc_from_nchw": "OIHW1i{oc}o",
}
LAYOUT_KNOBS = ("layout:data", "layout:kernel", "layout:out")


@dataclass(frozen=True, slots=True)
class KnobTrial:
    """One trial's knobs (name -> (type, value)), error number and mean cost."""

    knobs: dict[str, tuple[str, object]]
    error_no: int
    mean_cost: float
    config_index: int


def value_text(value: object) -> str:
    """A knob value as compact JSON text: `[-1,16]`, `false`, `"unroll"`."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def implied_layouts(task_name: str, knobs: dict[str, tuple[str, object]]) -> dict[str, str]:
    """The blocked layouts an x86 NCHWc config implies (empty for other templates)."""
    pattern = _NCHWC_TEMPLATES.get(task_name)
    if pattern is None:
        return {}
    ic, oc = _last_factor(knobs.get("tile_ic")), _last_factor(knobs.get("tile_oc"))
    if ic is None or oc is None:
        return {}
    return {
        "layout:data": f"NCHW{ic}c",
        "layout:kernel": pattern.format(ic=ic, oc=oc, ic4=ic // 4),
        "layout:out": f"NCHW{oc}c",
    }


def _last_factor(knob: tuple[str, object] | None) -> int | None:
    if knob is None or knob[0] != "sp" or not isinstance(knob[1], list) or not knob[1]:
        return None
    last = knob[1][-1]
    return last if isinstance(last, int) and not isinstance(last, bool) and last > 0 else None


@dataclass(frozen=True, slots=True)
class KnobValue:
    """Trials of one template that used one value of one knob."""

    knob: str
    kind: str  # the knob type (sp, ot, re, an) or "layout" for a derived layout
    value: str
    trials: int
    valid: int
    best: float | None
    median: float | None
    chosen: bool  # the chosen config uses this value


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of a template's space was tried (the full space size is not in the log)."""

    trials: int
    configs: int  # distinct config indexes
    sp_factorisations: dict[str, int]  # per split knob: distinct factorisations seen


def _values(task_name: str, trial: KnobTrial) -> list[tuple[str, str, str]]:
    found = [(name, kind, value_text(value)) for name, (kind, value) in trial.knobs.items()]
    found += [
        (name, "layout", text) for name, text in implied_layouts(task_name, trial.knobs).items()
    ]
    return found


def knob_values(
    task_name: str, trials: Iterable[KnobTrial], chosen: KnobTrial | None
) -> list[KnobValue]:
    """Per knob (in first-seen order) and value (best first): counts, best and median cost."""
    costs: dict[tuple[str, str, str], list[float]] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for trial in trials:
        for key in _values(task_name, trial):
            counts[key] = counts.get(key, 0) + 1
            valid = costs.setdefault(key, [])
            if trial.error_no == 0:
                valid.append(trial.mean_cost)
    chosen_values = set(_values(task_name, chosen)) if chosen is not None else set()
    order = {name: i for i, (name, _, _) in reversed(list(enumerate(counts)))}
    rows = [
        KnobValue(
            knob=name,
            kind=kind,
            value=value,
            trials=counts[(name, kind, value)],
            valid=len(costs[(name, kind, value)]),
            best=min(costs[(name, kind, value)], default=None),
            median=statistics.median(costs[(name, kind, value)])
            if costs[(name, kind, value)]
            else None,
            chosen=(name, kind, value) in chosen_values,
        )
        for name, kind, value in counts
    ]
    rows.sort(key=lambda r: (order[r.knob], r.best is None, r.best or 0.0, _natural(r.value)))
    return rows


_NUMBERS = re.compile(r"(-?\d+)")


def _natural(text: str) -> list[tuple[int, int, str]]:
    """`text` as it sorts for a reader: its numbers by value (`[-1,1,1,1]` before
    `[-1,1,1,16]`, which text order puts after)."""
    return [
        (0, int(part), "") if i % 2 else (1, 0, part) for i, part in enumerate(_NUMBERS.split(text))
    ]


def coverage(trials: Sequence[KnobTrial]) -> Coverage:
    """Distinct configs and per split knob distinct factorisations among these trials."""
    splits: dict[str, set[str]] = {}
    for trial in trials:
        for name, (kind, value) in trial.knobs.items():
            if kind == "sp":
                splits.setdefault(name, set()).add(value_text(value))
    return Coverage(
        trials=len(trials),
        configs=len({t.config_index for t in trials}),
        sp_factorisations={name: len(values) for name, values in splits.items()},
    )
