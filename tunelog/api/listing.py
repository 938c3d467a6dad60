"""Layers: one operator across templates, the one relay picks, untuned layers, a layer by name."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tunelog.exceptions import (
    AmbiguousLayerError,
    InvalidValueError,
    UnknownLayerError,
)
from tunelog.store import Filters, Store

if TYPE_CHECKING:
    from tunelog.layers import Layer


SORT_KEYS = ("latency", "gflops", "trials")


def layers(store: Store, filters: Filters | None = None, *, sort: str | None = None) -> list[Layer]:
    """Every (target group, layer) with its templates and the one relay picks.

    `sort`: "latency" (slowest winner first), "gflops" (least efficient first; unknown last) or
    "trials" (fewest first); default: first seen first.
    """
    if filters is not None and filters.selects_sources:
        # What importing only the chosen files gives (see Store.selected). The layers remember
        # the selection: their ids are that database's, which `_answering` builds again (the
        # same ids: a selection is a deterministic merge) for curves, knobs and convergence.
        with store.selected(filters) as (chosen, rest):
            found = layers(chosen, rest, sort=sort)
        for lay in found:
            lay.selection = filters.sources_only()
        return found
    from tunelog.collecting import young_collected_less

    with young_collected_less():  # the layers are held while more are made (tunelog.collecting)
        found = list(each_layer(store, filters))
    if sort == "latency":
        found.sort(key=lambda lay: -_winner_cost(lay))
    elif sort == "gflops":
        found.sort(key=lambda lay: (lay.gflops is None, lay.gflops or 0.0))
    elif sort == "trials":
        found.sort(key=lambda lay: lay.trials)
    elif sort is not None:
        raise InvalidValueError(f"unknown sort key {sort!r}: use one of {', '.join(SORT_KEYS)}")
    return found


def each_layer(
    store: Store, filters: Filters | None, *, failing_only: bool = False
) -> Iterator[Layer]:
    """`layers` unsorted, one at a time: a caller that keeps a few need not hold them all.

    `failing_only`: only the layers with a failed record on their group (a template with
    trials other than valid ones), which SQLite finds, so the others are never built.
    """
    from tunelog.layers import TargetGroup, has_failed_records, layers_of

    if filters is not None and filters.selects_sources:
        yield from (
            lay for lay in layers(store, filters) if not failing_only or has_failed_records(lay)
        )
        return
    target = filters.query_target if filters is not None else None
    for_groups = None
    if target is not None:
        for_groups = [TargetGroup(target.keys, target.model, (target.raw,))]
    pairs = store.selected_pairs(filters) if filters is not None else None
    # --target: the groups of its targets alone, whose records are the tallies shown.
    only = store.selected_targets(filters) if filters is not None else None
    by_group = filters is None or not filters.selects_tasks  # `_matches` reads the group only
    shown: dict[int, tuple[TargetGroup, bool]] = {}  # id(group) -> (group, _matches): kept alive
    candidates = store.layer_candidates(
        for_groups,
        failing_only=failing_only,
        only_targets=None if only is None else set(only.values()),
    )
    for lay in layers_of(candidates):
        if by_group:  # asked once per group (a few dozen), not per layer (80k at 80k workloads)
            known = shown.get(id(lay.group))
            if known is None:
                known = shown[id(lay.group)] = (lay.group, _matches(lay, filters))
            matches = known[1]
        else:
            matches = _matches(lay, filters)
        if matches and (pairs is None or _has_selected_records(lay, pairs)):
            yield lay


def _winner_cost(layer: Layer) -> float:
    """The winning config's mean cost; 0 for an untuned layer."""
    if layer.winner is None or layer.winner.chosen is None:
        return 0.0
    return layer.winner.chosen.mean_cost


def _matches(layer: Layer, filters: Filters | None) -> bool:
    """A layer is shown when records of its group and of one of its templates are selected."""
    if filters is None:
        return True
    if not filters.selects_tasks:  # every template is selected: only the group can fail
        return filters.matches_target_group(layer.group.keys, layer.group.model)
    task_names = (t.workload.task_name for t in layer.templates)
    return filters.matches_layer(layer.group.keys, layer.group.model, task_names)


def _has_selected_records(layer: Layer, pairs: set[tuple[str, int]] | None) -> bool:
    """With --source/--label/--target: a template of the layer has a selected record on a
    target of the layer's group, or its answering record is a selected one's (target, workload).
    """
    if pairs is None:
        return True
    for template in layer.templates:
        targets = list(layer.group.targets) if template.trials else []
        if template.chosen is not None:
            targets.append(template.chosen.target)
        if any((target, template.workload.id) in pairs for target in targets):
            return True
    return False


@dataclass(frozen=True)
class UntunedReport:
    """`untuned`'s answer with how many layers the filters matched: none untuned among none
    matched is no answer (`untuned --check` fails then)."""

    layers: list[Layer]
    matched: int


def untuned_report(store: Store, filters: Filters | None = None) -> UntunedReport:
    """The untuned layers (see `untuned`) and how many layers the filters matched."""
    from tunelog.collecting import young_collected_less
    from tunelog.rules.untuned import is_untuned

    asked = filters.for_target if filters is not None else None
    untuned: list[Layer] = []
    matched = 0
    with young_collected_less():  # each layer's objects die young (see tunelog.collecting)
        for lay in each_layer(store, filters):
            matched += 1
            if is_untuned(lay, asked):
                untuned.append(lay)
    return UntunedReport(untuned, matched)


def untuned(store: Store, filters: Filters | None = None) -> list[Layer]:
    """The untuned layers (`rules.untuned`): no valid record their targets can use, only v0.1
    records (which TVM >= 0.7 skips), or only one measured on another machine."""
    return untuned_report(store, filters).layers


def find_layer(store: Store, name: str, filters: Filters | None = None) -> Layer:
    """The one layer (row of `tunelog workloads`) that `name` names, among the filtered ones.

    `name` is a layer's `layer_key` (`workloads --json`) or its shapes text (the `shapes`
    column), matched exactly first, then as a substring of either. Several target groups with
    the same layer are ambiguous: narrow them with the target filters. A name the filters
    leave out is said to be so (with the targets its layers are on, when the filters choose
    targets), not to name no layer.
    """
    hits = layers_named(layers(store, filters), name)
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise AmbiguousLayerError(*_ambiguous(name, hits))
    why = left_out(store, name, filters)
    if why is not None:  # the filters left it out: say so, not that it does not exist
        raise UnknownLayerError(why)
    raise UnknownLayerError(
        f"no layer matches {name!r}; `tunelog workloads` lists them (the shapes column, or "
        "layer_key in --json)"
    )


def layers_named(found: Sequence[Layer], name: str) -> list[Layer]:
    """The layers `name` names: those whose layer_key or shapes text it is exactly, else
    those whose layer_key or shapes text contains it, else those whose shapes text contains
    it with the spaces of both left out, and the commas between lists (`128x768*2304x768`
    for `128x768 * 2304x768`; `best`'s `[1,7,7,512] [3,3,512,512]` for an auto_scheduler
    layer's `[1, 7, 7, 512], [3, 3, 512, 512]`) (`find_layer`, `workloads LAYER`)."""
    exact = [lay for lay in found if name in (lay.key, lay.shapes)]
    if exact:
        return exact
    within = [lay for lay in found if name in lay.key or name in lay.shapes]
    squeezed = _squeezed(name)
    if within or not squeezed:
        return within
    return [lay for lay in found if squeezed in _squeezed(lay.shapes)]


def _squeezed(text: str) -> str:
    """`text` without spaces, and without the commas between two lists."""
    return "".join(text.split()).replace("],[", "][")


def left_out(store: Store, name: str, filters: Filters | None) -> str | None:
    """Why `name` names no layer under `filters` when it names layers without them (`find_layer`
    and `workloads LAYER` say it), else None."""
    if filters is None or not filters.describe():
        return None
    elsewhere = layers_named(layers(store), name)
    return _left_out(name, elsewhere, filters) if elsewhere else None


def _left_out(name: str, elsewhere: Sequence[Layer], filters: Filters) -> str:
    """What is said of a name the filters leave out: where its layers are, when the filters
    choose targets; else that they leave them out."""
    what = "the layer it names" if len(elsewhere) == 1 else f"the {len(elsewhere)} layers it names"
    if filters.selects_targets or filters.for_target is not None:
        labels = sorted({f"'{lay.group.label}'" for lay in elsewhere})
        shown = ", ".join(labels[:5]) + (f" and {len(labels) - 5} more" if len(labels) > 5 else "")
        where = f"{what} {'is' if len(elsewhere) == 1 else 'are'} on {shown} only"
    else:
        where = f"they leave out {what}"
    return (
        f"no layer matches {name!r} with {filters.describe()}: {where}; change or drop the filters"
    )


LAYERS_LISTED = 10  # candidates an ambiguous layer name lists


def _ambiguous(name: str, hits: Sequence[Layer]) -> list[str]:
    """The error's lines for a layer name several layers match: the candidates one per line."""
    lines = [
        f"{len(hits)} layers match {name!r}: give more of the shapes, the full layer key "
        "(`tunelog workloads --json`), or narrow with --target-key/--model/--template "
        "(--model unknown: the group without one):"
    ]
    lines += [f"  {h.group.label}: {h.shapes}  ({h.key})" for h in hits[:LAYERS_LISTED]]
    if len(hits) > LAYERS_LISTED:
        lines.append(f"  ... and {len(hits) - LAYERS_LISTED} more (`tunelog workloads`)")
    return lines
