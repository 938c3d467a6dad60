"""Two runs compared layer by layer (`tunelog diff`). Pure: works on `layers.Layer` lists.

A layer is matched across the runs by its target group (keys and model: what a query depends
on) and its layer key (the operator call, whatever template tuned it). Its latency in a run is
what relay would use there: the winning template's chosen config (see tunelog.layers).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from tunelog.layers import Layer
from tunelog.models import _Dumpable
from tunelog.rules.untuned import runs_fallback

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


class RunLayer(NamedTuple):
    """What a diff needs of one layer of one run (a run's Layers need not be held)."""

    label: str
    keys: tuple[str, ...]
    model: str
    family: str
    shapes: str
    key: str
    cost: float | None  # the winner's chosen config's mean cost; None: untuned
    winner: str | None  # the winning template's name


def layer_id(layer: Layer | RunLayer) -> LayerId:
    """What matches a layer across runs: its group's keys and model, and its layer key."""
    if isinstance(layer, RunLayer):
        return (layer.keys, layer.model, layer.key)
    return (layer.group.keys, layer.group.model, layer.key)


def run_layer(layer: Layer) -> RunLayer:
    """The layer as a diff compares it."""
    group, winner = layer.group, layer.winner
    chosen = winner.chosen if winner is not None else None
    if winner is None or chosen is None or runs_fallback(layer):  # no latency: a fallback
        return RunLayer(
            group.label, group.keys, group.model, layer.family, layer.shapes, layer.key, None, None
        )
    return RunLayer(
        group.label,
        group.keys,
        group.model,
        layer.family,
        layer.shapes,
        layer.key,
        chosen.mean_cost,
        winner.name,
    )


def run_layers(layers: Iterable[Layer]) -> dict[LayerId, RunLayer]:
    """A run's layers by their identity, in the run's order (the first of each identity)."""
    found: dict[LayerId, RunLayer] = {}
    for layer in layers:
        group = layer.group
        key = (group.keys, group.model, layer.key)  # layer_id's, without its type test
        if key not in found:  # a later layer of the same identity is not compared
            found[key] = run_layer(layer)
    return found


def diff_layers(
    a: Iterable[Layer | RunLayer],
    b: Iterable[Layer | RunLayer] | Mapping[LayerId, RunLayer],
    threshold_pct: float,
) -> list[LayerDiff]:
    """Every layer of A (in A's order), then the layers only B has (in B's order).

    `b` may be `run_layers`' answer: B's layers need not be held while A's are built."""
    if isinstance(b, Mapping):
        in_b = dict(b)
    else:
        in_b = {}
        for layer in b:
            in_b.setdefault(layer_id(layer), _compact(layer))
    found: list[LayerDiff] = []
    seen: set[LayerId] = set()
    for layer in a:
        run = _compact(layer)
        key = (run.keys, run.model, run.key)
        seen.add(key)
        found.append(_diff(run, in_b.get(key), threshold_pct))
    found += [_diff(None, other, threshold_pct) for key, other in in_b.items() if key not in seen]
    return found


def _compact(layer: Layer | RunLayer) -> RunLayer:
    return layer if isinstance(layer, RunLayer) else run_layer(layer)


def regressions(diffs: Sequence[LayerDiff], pct: float) -> list[LayerDiff]:
    """Layers B runs slower than A by more than `pct` percent, or no longer has tuned
    (untuned in B, or tuned in A and missing from B: B's model runs it untuned)."""
    return [
        d
        for d in diffs
        if d.status == UNTUNED_B
        or (d.status == ONLY_A and d.a_latency is not None)
        or (d.change_pct is not None and beyond(d.change_pct, pct))
    ]


def beyond(change_pct: float, pct: float) -> bool:
    """Whether a change is more than `pct` percent: compared at 9 decimals, so that a
    latency 5 % above another (1.05e-4 against 1e-4: 5.000000000000004 % in floats) is not
    "beyond 5 %"."""
    return round(change_pct, 9) > pct


def _diff(a: RunLayer | None, b: RunLayer | None, threshold_pct: float) -> LayerDiff:
    shown = a if a is not None else b
    assert shown is not None
    a_cost, a_name = (a.cost, a.winner) if a is not None else (None, None)
    b_cost, b_name = (b.cost, b.winner) if b is not None else (None, None)
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
        status = (
            SLOWER
            if beyond(change, threshold_pct)
            else FASTER
            if beyond(-change, threshold_pct)
            else SAME
        )
    return LayerDiff(
        target=shown.label,
        target_keys=list(shown.keys),
        model=shown.model,
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
