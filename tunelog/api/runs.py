"""A layer's tuning runs: convergence, best-so-far curves, knob tables."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from tunelog.exceptions import InvalidValueError
from tunelog.store import Filters, Store
from tunelog.targets import parse_target

if TYPE_CHECKING:
    from tunelog.convergence import Convergence
    from tunelog.layers import Layer, TemplateResult
    from tunelog.results import (
        TemplateCurve,
        TemplateKnobs,
    )
    from tunelog.store.trials import TrialRow


# ((target keys, model), workload id): as `store.trials.convergence_by_group` keys them.
ConvergenceKey = tuple[tuple[tuple[str, ...], str], int]


@dataclass
class LayerConvergence:
    """Convergence of every template of some layers on their target groups (see convergence)."""

    by_key: dict[ConvergenceKey, Convergence]

    def of(self, layer: Layer, template: TemplateResult) -> Convergence:
        """The template's convergence on the layer's group (no trials: not tuned)."""
        found = self.by_key.get(((layer.group.keys, layer.group.model), template.workload.id))
        return found if found is not None else _not_tuned()

    def of_templates(self, layer: Layer) -> list[Convergence]:
        """`of` each of the layer's templates, in order (the group's key built once)."""
        group, by_key = (layer.group.keys, layer.group.model), self.by_key
        found = [by_key.get((group, t.workload.id)) for t in layer.templates]
        return [summary if summary is not None else _not_tuned() for summary in found]

    def of_layer(self, layer: Layer) -> Convergence:
        """The convergence of the template relay picks (else of the first template)."""
        return self.of(layer, layer.winner or layer.templates[0])


@lru_cache(maxsize=1)
def _not_tuned() -> Convergence:
    """The summary of a sequence without trials (frozen: one serves every template)."""
    from tunelog.convergence import Progress

    return Progress().summary()


@contextmanager
def _answering(store: Store, found: Sequence[Layer]) -> Iterator[Store]:
    """The database the layers' ids belong to: `store`, or the selection they were found in."""
    selections = {lay.selection for lay in found}
    if len(selections) > 1:
        raise InvalidValueError("layers found under different --source/--label filters: ask apart")
    selection = next(iter(selections), None)
    if selection is None:
        yield store
        return
    with store.selected(selection) as (chosen, _):
        yield chosen


def layer_convergence(
    store: Store, found: Sequence[Layer] | None = None, *, filters: Filters | None = None
) -> LayerConvergence:
    """Convergence per (target group, template) for these layers (None: every layer's, for
    layers read one at a time afterwards, e.g. by `each_layer`). `filters`: the layers'
    (their --target makes each group of its targets alone, as the layers were made).

    Reads the trial runs kept on import (`store.trials.trial_runs`), never stored lines.
    """
    if found is not None and any(lay.selection is not None for lay in found):
        with _answering(store, found) as chosen:
            return layer_convergence(
                chosen,
                [replace(lay, selection=None) for lay in found],
                filters=None if filters is None else filters.without_sources(),
            )
    if filters is not None and filters.selects_sources:
        # --source/--label: those files' own runs, as `each_layer` reads their layers.
        with store.selected(filters) as (chosen, rest):
            return layer_convergence(chosen, found, filters=rest)
    from tunelog.store.trials import convergence_by_group, targets

    only = store.selected_targets(filters) if filters is not None else None
    group_of = {
        target_id: (parsed.keys, parsed.model)
        for target_id, target in targets(store)
        if only is None or target_id in only
        for parsed in (parse_target(target),)
    }
    by_key = convergence_by_group(store, group_of)
    if found is not None:
        wanted = {(lay.group.keys, lay.group.model) for lay in found}
        by_key = {key: summary for key, summary in by_key.items() if key[0] in wanted}
    return LayerConvergence(by_key)


def _named(store: Store, layer: Layer | str) -> Layer:
    """The layer itself, or the one its name names (`find_layer`: UnknownLayerError or
    AmbiguousLayerError when it names none or several)."""
    if isinstance(layer, str):
        from tunelog.api.listing import find_layer

        return find_layer(store, layer)
    return layer


def _group_target_ids(store: Store, layer: Layer) -> list[int]:
    from tunelog.store.trials import targets

    wanted = (layer.group.keys, layer.group.model)
    return [
        target_id
        for target_id, target in targets(store)
        for parsed in (parse_target(target),)
        if (parsed.keys, parsed.model) == wanted
    ]


def _ordered(rows: Sequence[TrialRow]) -> list[TrialRow]:
    """Rows of one sequence in trial order (tunelog.convergence: source runs, then lines)."""
    from tunelog.convergence import source_starts, trial_order

    starts = source_starts((r.source_id, r.timestamp) for r in rows)
    return sorted(rows, key=lambda r: trial_order(starts[r.source_id], r.source_id, r.record_id))


def curves(store: Store, layer: Layer | str) -> list[TemplateCurve]:
    """The best-so-far curve of every template of a layer on its target group (`layer`: one
    of `layers`, or its name as `tunelog curve` takes it: `api.find_layer`)."""
    layer = _named(store, layer)
    if layer.selection is not None:
        with _answering(store, [layer]) as answering:
            return curves(answering, replace(layer, selection=None))
    from tunelog.convergence import Trial, best_so_far, summarize
    from tunelog.results import CurveRow, TemplateCurve
    from tunelog.store.trials import best_only_sources, layer_trials

    rows = layer_trials(
        store, [t.workload.id for t in layer.templates], _group_target_ids(store, layer)
    )
    picks = best_only_sources(store)  # files of picks: their layers have no trial history
    found: list[TemplateCurve] = []
    for template in layer.templates:
        ordered = _ordered([r for r in rows if r.workload_id == template.workload.id])
        points = best_so_far((r.mean_cost, r.error_no) for r in ordered)
        found.append(
            TemplateCurve(
                layer,
                template,
                [
                    CurveRow(
                        p.trial,
                        r.source,
                        r.line,
                        r.config_index,
                        p.cost,
                        p.error_no,
                        p.best,
                        p.improved,
                    )
                    for p, r in zip(points, ordered, strict=True)
                ],
                summarize(
                    (
                        Trial((float(i), 0, 0), r.mean_cost, r.error_no)
                        for i, r in enumerate(ordered)
                    ),
                    best_only=bool(ordered) and all(r.source_id in picks for r in ordered),
                ),
            )
        )
    return found


def knobs(store: Store, layer: Layer | str, knob: str | None = None) -> list[TemplateKnobs]:
    """Per template of the layer: per knob and value, trials, valid/failed, best and median cost.

    Reads the stored lines of the layer's records only (their blocks, no others). `layer`: one
    of `layers`, or its name (as for `curves`). `knob`: only that knob's rows (`layout`
    selects the derived layouts of x86 NCHWc templates).
    """
    if knob is not None:  # as `--knob ''` is refused: a knob named nothing has no rows
        from tunelog import optionvalues

        optionvalues.not_empty(knob, "knob")
    layer = _named(store, layer)
    if layer.selection is not None:
        with _answering(store, [layer]) as answering:
            return knobs(answering, replace(layer, selection=None), knob)
    from tunelog.knobs import KnobTrial, coverage, knob_values
    from tunelog.metaschedule import trace_knobs
    from tunelog.recordmodels import TuningRecord
    from tunelog.records import parse_line
    from tunelog.results import TemplateKnobs
    from tunelog.store.trials import layer_trials
    from tunelog.versions import ANSOR_VERSION
    from tunelog.versions import METASCHEDULE_TASK as MS_TASK

    chosen_ids = [t.chosen.record_id for t in layer.templates if t.chosen is not None]
    rows = layer_trials(
        store,
        [t.workload.id for t in layer.templates],
        _group_target_ids(store, layer),
        with_lines=True,
        extra_ids=chosen_ids,
    )
    metaschedule = {t.workload.id for t in layer.templates if t.workload.task_name == MS_TASK}
    # auto_scheduler records: steps, no knobs; their trials still count (`coverage`).
    ansor = {t.workload.id for t in layer.templates if t.workload.version == ANSOR_VERSION}
    parsed: dict[int, KnobTrial | None] = {}
    for row in rows:
        assert row.raw is not None
        knob_values_of: dict[str, tuple[str, object]] | None = None
        if row.workload_id in metaschedule:  # the trace's sampling decisions
            knob_values_of = trace_knobs(row.raw)
        elif row.workload_id in ansor:
            knob_values_of = {}
        elif isinstance(record := parse_line(row.raw), TuningRecord):
            knob_values_of = {name: (kind, value) for name, kind, value in record.entity}
        parsed[row.record_id] = (
            None
            if knob_values_of is None
            else KnobTrial(knob_values_of, row.error_no, row.mean_cost, row.config_index)
        )
    target_ids = set(_group_target_ids(store, layer))
    found: list[TemplateKnobs] = []
    for template in layer.templates:
        mine = [
            r for r in rows if r.workload_id == template.workload.id and r.target_id in target_ids
        ]
        trials = [t for r in mine if (t := parsed[r.record_id]) is not None]
        chosen = parsed.get(template.chosen.record_id) if template.chosen else None
        values = knob_values(template.workload.task_name, trials, chosen)
        names = dict.fromkeys("layout" if v.kind == "layout" else v.knob for v in values)
        if knob is not None:
            values = [
                v for v in values if v.knob == knob or (knob == "layout" and v.kind == "layout")
            ]
        found.append(
            TemplateKnobs(
                layer,
                template,
                values,
                coverage(trials),
                template.chosen.config_index if template.chosen else None,
                unreadable=len(mine) - len(trials),
                knob_names=tuple(names),
            )
        )
    return found
