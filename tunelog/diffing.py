"""Two runs compared layer by layer (`tunelog diff`). Pure: works on `layers.Layer` lists.

A layer is matched across the runs by its target group (keys and model: what a query depends
on) and its layer key (the operator call, whatever template tuned it). Its latency in a run is
what relay would use there: the winning template's chosen config (see tunelog.layers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tunelog.layers import Layer
from tunelog.models import _Dumpable

SLOWER, FASTER, SAME = "slower", "faster", "same"
ONLY_A, ONLY_B = "only in A", "only in B"
UNTUNED_A, UNTUNED_B, UNTUNED = "untuned in A", "untuned in B", "untuned"
STATUSES = (SLOWER, FASTER, SAME, ONLY_A, ONLY_B, UNTUNED_A, UNTUNED_B, UNTUNED)

LayerId = tuple[tuple[str, ...], str, str]


@dataclass(slots=True)
class LayerDiff(_Dumpable):
    """One layer on one target group in runs A and B.

    `ratio` is B's latency over A's (above 1: B is slower); `change_pct` the same as a percent
    change ((ratio - 1) * 100). `status` is one of STATUSES: slower/faster when the change is
    beyond the threshold, same within it; a layer only one run has, or that one run has no valid
    record for, says so.
    """

    target: str
    target_keys: list[str]
    model: str
    operator: str
    shapes: str
    layer_key: str
    a_latency: float | None
    b_latency: float | None
    a_template: str | None
    b_template: str | None
    ratio: float | None
    change_pct: float | None
    status: str
    winner_changed: bool


def layer_id(layer: Layer) -> LayerId:
    """What matches a layer across runs: its group's keys and model, and its layer key."""
    return (layer.group.keys, layer.group.model, layer.key)


def diff_layers(a: Sequence[Layer], b: Sequence[Layer], threshold_pct: float) -> list[LayerDiff]:
    """Every layer of A (in A's order), then the layers only B has (in B's order)."""
    in_b = {layer_id(layer): layer for layer in b}
    in_a = {layer_id(layer) for layer in a}
    found = [_diff(layer, in_b.get(layer_id(layer)), threshold_pct) for layer in a]
    found += [_diff(None, layer, threshold_pct) for layer in b if layer_id(layer) not in in_a]
    return found


def regressions(diffs: Sequence[LayerDiff], pct: float) -> list[LayerDiff]:
    """Layers B runs slower than A by more than `pct` percent, or no longer has tuned
    (untuned in B, or tuned in A and missing from B: B's model runs it untuned)."""
    return [
        d
        for d in diffs
        if d.status == UNTUNED_B
        or (d.status == ONLY_A and d.a_latency is not None)
        or (d.change_pct is not None and d.change_pct > pct)
    ]


def _winning(layer: Layer | None) -> tuple[float | None, str | None]:
    if layer is None or layer.winner is None or layer.winner.chosen is None:
        return None, None
    return layer.winner.chosen.mean_cost, layer.winner.name


def _diff(a: Layer | None, b: Layer | None, threshold_pct: float) -> LayerDiff:
    shown = a if a is not None else b
    assert shown is not None
    a_cost, a_name = _winning(a)
    b_cost, b_name = _winning(b)
    ratio = change = None
    if a is None:
        status = ONLY_B
    elif b is None:
        status = ONLY_A
    elif a_cost is None or b_cost is None:
        status = UNTUNED if a_cost == b_cost else UNTUNED_A if a_cost is None else UNTUNED_B
    else:
        # A zero latency (a broken measurement) is a ratio of 1 to another zero, else infinite.
        ratio = b_cost / a_cost if a_cost else 1.0 if not b_cost else math.inf
        change = (ratio - 1.0) * 100.0
        status = SLOWER if change > threshold_pct else FASTER if change < -threshold_pct else SAME
    return LayerDiff(
        target=shown.group.label,
        target_keys=list(shown.group.keys),
        model=shown.group.model,
        operator=shown.family,
        shapes=shown.shapes,
        layer_key=shown.key,
        a_latency=a_cost,
        b_latency=b_cost,
        a_template=a_name,
        b_template=b_name,
        ratio=ratio,
        change_pct=change,
        status=status,
        winner_changed=a_name is not None and b_name is not None and a_name != b_name,
    )
