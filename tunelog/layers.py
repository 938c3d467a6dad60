"""One layer across templates: which implementation relay picks under apply_history_best.

Pure. Relay offers several implementations (templates) of one operator; under
`apply_history_best` it queries each one's workload with the compile target and keeps the one
whose tuned config has the strictly lowest cost, skipping untuned ones (tvm-reference §5). Here:

* targets are grouped by what the query depends on, their keys and model (not the raw string);
* templates are grouped into layers by `workloads.layer_key` (same operator call);
* a template's cost in a group is what the slot table answers for that group's query (model
  slot first, then the keys in order), so a template tuned under another target that shares a
  key competes too, exactly as in TVM;
* ties between templates keep the first one in import order (the order relay's strategy lists
  implementations in is not in the log);
* only the templates relay's strategy offers this layer under the group's keys compete
  (`strategies.relay_offers`, which reads the strategy's conditions on the layer's arguments;
  unknown targets and templates keep every template); a template tuned on the group but never
  offered to it is listed, marked, and never chosen. A template offered only under a condition
  on the compile target (-libs, CPU features, tensor cores) competes, marked as conditional,
  and `may_be_chosen` never lets it push another template out;
* a winner measured on another machine than a target of the group (`machines`) is warned about.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from tunelog.filters import Filters
from tunelog.machines import cross_machine_warning
from tunelog.rules.slots import first_held, query_slots, target_group
from tunelog.strategies import Offer, relay_offers, strategy_note
from tunelog.targets import UNKNOWN_MODEL, parse_target
from tunelog.versions import ANSOR_VERSION  # not tunelog.ansor's: it loads hashlib and orjson
from tunelog.workloads import flops, gflops, layer_key_and_facts, operator_family, short_args


@dataclass(frozen=True, slots=True)
class SlotWinner:
    """The record holding a slot."""

    record_id: int
    mean_cost: float
    config_index: int
    source: str
    line: int
    target: str = ""  # the winning record's own target string


@dataclass(frozen=True, slots=True)
class WorkloadFacts:
    """What the read commands need of a workload's arguments, read once (stored at import)."""

    layer_key: str  # `workloads.layer_key`
    facts: Mapping[str, object]  # `workloads.layer_facts`: what relay's conditions test
    family: str  # `workloads.operator_family`
    shapes: str  # the arguments' short text (`workloads.short_args`, auto_scheduler's items)
    flops: int | None  # `workloads.flops` of one call


@dataclass(frozen=True, slots=True)
class WorkloadInfo:
    """A tuning task's workload: template name, v0.1 template key, arguments."""

    id: int
    task_name: str
    template_key: str
    args: list[object]
    version: str = "0.2"
    # The workload as the log spells it, when its identity normalises it (auto_scheduler).
    spelling: str | None = None
    # Its facts as the database stored them (None: computed from the arguments when needed).
    stored: WorkloadFacts | None = None


def workload_facts(workload: WorkloadInfo) -> WorkloadFacts:
    """The workload's facts, as stored or else read from its arguments."""
    if workload.stored is not None:
        return workload.stored
    key, facts = layer_key_and_facts(workload.task_name, workload.template_key, workload.args)
    return WorkloadFacts(
        layer_key=key,
        facts=facts,
        family=operator_family(workload.task_name, workload.template_key),
        shapes=_shapes(workload),
        flops=flops(workload.task_name, workload.template_key, workload.args),
    )


@dataclass(frozen=True, slots=True)
class Tally:
    """Records of one (target, workload, error number), with the range of their all_cost."""

    target_id: int
    workload_id: int
    error_no: int
    records: int
    min_all_cost: float
    max_all_cost: float


GroupKey = tuple[tuple[str, ...], str]  # (keys, model): what a query depends on


@dataclass(frozen=True, slots=True)
class TargetGroup:
    """Targets that query identically: the same keys and model."""

    keys: tuple[str, ...]
    model: str
    targets: tuple[str, ...]

    @property
    def label(self) -> str:
        """`keys (model)`, e.g. `cuda,gpu (t4)`."""
        text = ",".join(self.keys) or "(no keys)"
        return text if self.model == UNKNOWN_MODEL else f"{text} ({self.model})"


@dataclass
class TemplateResult:
    """One template of a layer in one target group."""

    workload: WorkloadInfo
    errors: dict[int, int] = field(default_factory=dict)
    all_cost_range: dict[int, tuple[float, float]] = field(default_factory=dict)
    chosen: SlotWinner | None = None
    offered: bool = True  # False: relay's strategy never queries it for the group's targets
    # False: offered or not depending on what `offer_note` names (-libs, CPU features)
    certain: bool = True
    offer_note: str | None = None

    @property
    def trials(self) -> int:
        """Records of this template on the group's targets."""
        return sum(self.errors.values())

    @property
    def valid(self) -> int:
        """Records with error_no 0."""
        return self.errors.get(0, 0)

    @property
    def failed(self) -> int:
        """Records with a non-zero error_no."""
        return self.trials - self.valid

    @property
    def name(self) -> str:
        """Template name, with the v0.1 template key when there is one."""
        w = self.workload
        name = f"{w.task_name} [{w.template_key}]" if w.template_key else w.task_name
        if w.version == ANSOR_VERSION:
            return name + " (auto_scheduler)"
        return name + " (v0.1)" if w.version == "0.1" else name


@dataclass
class Layer:
    """One operator call on one target group, with every template that could implement it."""

    group: TargetGroup
    key: str
    family: str
    shapes: str
    templates: list[TemplateResult]
    winner: TemplateResult | None = None
    runner_up: TemplateResult | None = None
    warnings: list[str] = field(default_factory=list)
    # The --source/--label filters whose database the layer's ids belong to (None: the whole
    # database); the API answers later questions about the layer from that database again.
    selection: Filters | None = None

    @property
    def strategy_note(self) -> str | None:
        """Why every template competes here: the strategy table does not know these keys."""
        return strategy_note(self.group.keys)

    @property
    def trials(self) -> int:
        """All records of the layer's templates on this group."""
        return sum(t.trials for t in self.templates)

    @property
    def margin(self) -> float | None:
        """How much slower the runner-up is than the winner (0.25 = 25 %)."""
        if self.winner is None or self.runner_up is None:
            return None
        assert self.winner.chosen is not None and self.runner_up.chosen is not None
        winner, runner_up = self.winner.chosen.mean_cost, self.runner_up.chosen.mean_cost
        if not winner:  # a valid record may cost 0: slower than 0 is infinitely slower
            return 0.0 if not runner_up else math.inf
        return runner_up / winner - 1.0

    @property
    def flops(self) -> int | None:
        """FLOPs of one call (from the winner's arguments, else the first template's)."""
        chosen = self.winner or self.templates[0]
        return workload_facts(chosen.workload).flops

    @property
    def gflops(self) -> float | None:
        """GFLOPS of the winning config, None when FLOPs are unknown or nothing is tuned."""
        if self.winner is None or self.winner.chosen is None:
            return None
        return gflops(self.flops, self.winner.chosen.mean_cost)


def group_targets(targets: Iterable[tuple[int, str]]) -> dict[int, TargetGroup]:
    """Map each target id to its group (same keys and model)."""
    members: dict[tuple[tuple[str, ...], str], list[tuple[int, str]]] = {}
    for target_id, target in targets:
        members.setdefault(target_group(parse_target(target)), []).append((target_id, target))
    groups: dict[int, TargetGroup] = {}
    for (keys, model), items in members.items():
        group = TargetGroup(keys, model, tuple(sorted(t for _, t in items)))
        for target_id, _ in items:
            groups[target_id] = group
    return groups


def query(
    slots: Mapping[tuple[str, str, int], SlotWinner], group: TargetGroup, workload_id: int
) -> SlotWinner | None:
    """What apply_history_best returns for this group's targets and workload."""
    order = ((kind, name, workload_id) for kind, name in query_slots(group.keys, group.model))
    return first_held(order, slots)


def build_layers(
    targets: Iterable[tuple[int, str]],
    workloads: Sequence[WorkloadInfo],
    tallies: Iterable[Tally],
    slots: Mapping[tuple[str, str, int], SlotWinner],
    *,
    for_group: TargetGroup | None = None,
) -> list[Layer]:
    """Every (target group, layer) with records, its templates and relay's choice among them.

    `for_group`: only the layers of that group (e.g. one target string, whose `-model` the log
    may never have seen), each layer whose templates are measured there or answered for it.
    """
    return list(LayerIndex(targets, workloads, tallies, slots).layers(for_group))


class LayerIndex:
    """`build_layers`' inputs read once, to build the layers of several groups from them.

    A layer's TemplateResults are shared with the layers other calls build for the same
    group: use each layer before asking for the next group's.
    """

    def __init__(
        self,
        targets: Iterable[tuple[int, str]],
        workloads: Sequence[WorkloadInfo],
        tallies: Iterable[Tally],
        slots: Mapping[tuple[str, str, int], SlotWinner],
    ) -> None:
        self._groups = group_targets(targets)
        self._by_id = {w.id: w for w in workloads}
        identities = {w.id: workload_facts(w) for w in workloads}
        self._keys = {workload_id: facts.layer_key for workload_id, facts in identities.items()}
        self._same_layer: dict[str, list[int]] = {}
        for w in workloads:
            self._same_layer.setdefault(self._keys[w.id], []).append(w.id)
        results: dict[tuple[GroupKey, int], TemplateResult] = {}
        for tally in tallies:
            group = self._groups[tally.target_id]
            result = results.setdefault(
                ((group.keys, group.model), tally.workload_id),
                TemplateResult(self._by_id[tally.workload_id]),
            )
            result.errors[tally.error_no] = result.errors.get(tally.error_no, 0) + tally.records
            low, high = result.all_cost_range.get(tally.error_no, (tally.min_all_cost,) * 2)
            result.all_cost_range[tally.error_no] = (
                min(low, tally.min_all_cost),
                max(high, tally.max_all_cost),
            )
        self._results = results
        self._slots = slots
        self._offers = _Offers({w_id: facts.facts for w_id, facts in identities.items()})

    @property
    def groups(self) -> list[TargetGroup]:
        """Every target group of the targets, each once."""
        return list({(g.keys, g.model): g for g in self._groups.values()}.values())

    def layers(self, for_group: TargetGroup | None = None) -> Iterator[Layer]:
        """The layers `build_layers` lists, one by one."""
        if for_group is not None:
            for key, ids in self._same_layer.items():
                layer = self._layer(for_group, key, ids)
                if layer is not None:
                    yield layer
            return
        by_key = {(g.keys, g.model): g for g in self._groups.values()}
        done: set[tuple[GroupKey, str]] = set()
        for group_key, workload_id in sorted(self._results, key=lambda pair: pair[1]):
            layer_id = self._keys[workload_id]
            if (group_key, layer_id) in done:
                continue
            done.add((group_key, layer_id))
            layer = self._layer(by_key[group_key], layer_id, self._same_layer[layer_id])
            if layer is not None:
                yield layer

    def _layer(self, group: TargetGroup, layer_id: str, workload_ids: list[int]) -> Layer | None:
        return _layer(
            group, layer_id, workload_ids, self._by_id, self._results, self._slots, self._offers
        )


class _Offers:
    """relay_offers per (keys, workload), from each workload's facts (read with its key)."""

    def __init__(self, facts: Mapping[int, Mapping[str, object]]) -> None:
        self._facts = facts
        # Keyed by the facts' identity: workloads whose stored facts read the same share one
        # mapping (`store.workloadfacts`), so relay's conditions are judged once for them all.
        self._offers: dict[tuple[tuple[str, ...], str, int], Offer] = {}

    def of(self, keys: tuple[str, ...], workload: WorkloadInfo) -> Offer:
        """Whether relay offers this workload's template for its layer under these keys."""
        facts = self._facts[workload.id]
        key = (keys, workload.task_name, id(facts))
        found = self._offers.get(key)
        if found is None:
            found = self._offers[key] = relay_offers(keys, workload.task_name, facts)
        return found


def _layer(
    group: TargetGroup,
    layer_id: str,
    workload_ids: list[int],
    by_id: Mapping[int, WorkloadInfo],
    results: Mapping[tuple[GroupKey, int], TemplateResult],
    slots: Mapping[tuple[str, str, int], SlotWinner],
    offers: _Offers,
) -> Layer | None:
    templates: list[TemplateResult] = []
    for workload_id in workload_ids:
        offer = offers.of(group.keys, by_id[workload_id])
        offered = offer.offered
        chosen = query(slots, group, workload_id) if offered else None
        tuned_here = results.get(((group.keys, group.model), workload_id))
        if tuned_here is None and chosen is None:
            continue  # never tuned for this group, and no shared key slot answers for it
        template = tuned_here or TemplateResult(by_id[workload_id])
        template.chosen = chosen
        template.offered = offered
        template.certain = offer.certain
        template.offer_note = offer.note
        templates.append(template)
    if not templates:
        return None
    if any(t.workload.version != "0.1" and t.chosen is not None for t in templates):
        # TVM >= 0.7 skips v0.1 lines: with a newer record in the layer, v0.1 ones cannot win.
        for t in templates:
            if t.workload.version == "0.1":
                t.chosen = None
    ranked = sorted(
        (t for t in templates if t.chosen is not None),
        key=lambda t: t.chosen.mean_cost if t.chosen is not None else 0.0,
    )  # stable: equal costs keep import order, as relay's strict `>` keeps the first
    untuned = [t for t in templates if t.chosen is None]
    first = workload_facts(templates[0].workload)
    winner = ranked[0] if ranked else None
    return Layer(
        group=group,
        key=layer_id,
        family=first.family,
        shapes=first.shapes,
        templates=ranked + untuned,
        winner=winner,
        runner_up=ranked[1] if len(ranked) > 1 else None,
        warnings=_machine_warnings(group, winner),
    )


def _shapes(workload: WorkloadInfo) -> str:
    """Short text of a workload's arguments; an auto_scheduler key's items after its hash."""
    if workload.version == ANSOR_VERSION and workload.spelling is not None:
        from tunelog.ansor import ansor_shapes

        return ansor_shapes(workload.spelling)
    return short_args(workload.task_name, workload.args)


def _machine_warnings(group: TargetGroup, winner: TemplateResult | None) -> list[str]:
    """One warning per target of the group that the winner was not measured on (machine-wise)."""
    if winner is None or winner.chosen is None or not winner.chosen.target:
        return []
    measured = winner.chosen.target
    found = (cross_machine_warning(asked, measured) for asked in group.targets)
    return [warning for warning in found if warning is not None]


def template_identity(workload: WorkloadInfo) -> tuple[str, str, str]:
    """What makes two workloads the same template: task name, v0.1 template key, log version.

    One template can be logged with two spellings of its arguments (tophub's vta logs hold
    `conv2d_packed.vta` with and without the output layout); relay queries one spelling per
    template, so spellings of one template never compete with each other.
    """
    return (workload.task_name, workload.template_key, workload.version)


def may_be_chosen(layer: Layer) -> list[TemplateResult]:
    """The tuned templates relay could pick for this layer, whichever spellings it queries.

    Relay compares one spelling per template. A tuned spelling w can lose for sure only to
    another template, surely offered, all of whose spellings here are tuned and strictly faster
    than w (equal costs keep relay's implementation order, which the log does not hold; a
    template offered only with some -libs or CPU feature is not asked without them); otherwise
    some choice of spellings and targets lets w win. Keeping every such spelling is what keeps
    relay's choice.
    """
    spellings: dict[tuple[str, str, str], list[TemplateResult]] = {}
    for template in layer.templates:
        spellings.setdefault(template_identity(template.workload), []).append(template)
    # The slowest spelling of each template, or None when one of them is untuned or when the
    # template is offered only under a target condition the log does not hold (without it,
    # relay does not ask the template, and the slower ones must still answer).
    slowest: dict[tuple[str, str, str], float | None] = {
        identity: None
        if any(t.chosen is None or not t.certain for t in group)
        else max(t.chosen.mean_cost for t in group if t.chosen is not None)
        for identity, group in spellings.items()
    }
    chosen: list[TemplateResult] = []
    for template in layer.templates:
        if template.chosen is None:
            continue
        cost = template.chosen.mean_cost
        own = template_identity(template.workload)
        if not any(
            other_cost is not None and other_cost < cost
            for identity, other_cost in slowest.items()
            if identity != own
        ):
            chosen.append(template)
    return chosen
