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
  a key it has no strategy for is skipped, as relay skips it, and a template only such a key
  could offer is conditional; unknown templates are offered); a template tuned on the group
  but never offered to it is listed, marked, and never chosen. A template offered only under a
  condition on the compile target (-libs, CPU features, tensor cores) competes, marked as
  conditional, and `may_be_chosen` never lets it push another template out;
* a winner measured on another machine than a target of the group (`machines`) is warned about.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from tunelog.filters import Filters
from tunelog.machines import cross_machine_warning
from tunelog.rules.failedrecords import has_failed_records as failed_records
from tunelog.rules.slots import first_held, query_slots, target_group
from tunelog.rules.throughput import gflops
from tunelog.strategies import OUTSIDE_TVM, Offer, offer_facts, relay_offers, strategy_note
from tunelog.targets import UNKNOWN_MODEL, parse_target
from tunelog.versions import ANSOR_VERSION, V01  # not tunelog.ansor's: it loads hashlib and orjson
from tunelog.workloadinfo import WorkloadInfo


# A NamedTuple, not a frozen dataclass: the layer listings build one per answered candidate
# (120k at 80k workloads), and a frozen dataclass costs several times more to build.
class SlotWinner(NamedTuple):
    """The record holding a slot."""

    record_id: int
    mean_cost: float
    config_index: int
    source: str
    line: int
    target: str = ""  # the winning record's own target string


@dataclass(frozen=True, slots=True)
class Tally:
    """Records of one (target, workload, error number), with the range of their all_cost."""

    target_id: int
    workload_id: int
    error_no: int
    records: int
    min_all_cost: float
    max_all_cost: float


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


@dataclass(slots=True)  # slots: built for each of 125k candidates at 80k workloads
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
    # Its answer, a v0.1 record, set aside: a newer record of the layer is answered, and
    # TVM >= 0.7 skips v0.1 lines (`build_layer`).
    skipped_v01: bool = False

    @property
    def trials(self) -> int:
        """Records of this template on the group's targets."""
        return sum(self.errors.values())

    @property
    def valid(self) -> int:
        """Records with error_no 0."""
        return self.errors.get(0, 0)

    def counts(self) -> tuple[int, int]:
        """`(trials, valid)` read at once, for callers that need both per template (the
        listings' rows at 80k workloads: each property reads the error counts again)."""
        errors = self.errors
        return sum(errors.values()), errors.get(0, 0)

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
        return name + " (v0.1)" if w.version == V01 else name


@dataclass(slots=True)
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

    def error_counts(self) -> dict[int, int]:
        """Records per error number, every template's added up (0: valid)."""
        counts: dict[int, int] = {}
        for template in self.templates:
            for error_no, records in template.errors.items():
                counts[error_no] = counts.get(error_no, 0) + records
        return counts

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
        return chosen.workload.stored.flops

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


# One template's inputs in a (target group, layer): its workload, its records on the group's
# targets (None: none) and the record that answers the group's query for it (None: no slot).
Candidate = tuple[WorkloadInfo, TemplateResult | None, SlotWinner | None]


def layers_of(found: Iterable[tuple[TargetGroup, str, list[Candidate]]]) -> Iterator[Layer]:
    """Relay's choice in each (target group, layer key, candidates) of `found`, in its order.

    The store reads the candidates layer by layer (`Store.layer_candidates`: every workload of
    the layer key tuned on the group or answered for it), so one layer is held at a time.
    """
    offers = _Offers()
    for group, layer_key, candidates in found:
        layer = build_layer(group, layer_key, candidates, offers)
        if layer is not None:
            yield layer


class _Offers:
    """relay_offers per (keys, template, facts), each judged once."""

    def __init__(self) -> None:
        # Keyed by the facts' identity: workloads whose stored facts read the same share one
        # mapping (`store.workloadfacts.FactsReader`), so relay's conditions are judged once
        # for them all. The mapping is kept with the offer so that its id is never reused.
        self._offers: dict[tuple[tuple[str, ...], str, int], tuple[object, Offer]] = {}
        # And by the facts relay's conditions read (`strategies.offer_facts`): 8k distinct
        # facts at 80k workloads, a few hundred distinct answers' inputs.
        self._by_read: dict[tuple[tuple[str, ...], str, tuple[object, ...]], Offer] = {}

    def of(self, keys: tuple[str, ...], workload: WorkloadInfo) -> Offer:
        """Whether relay offers this workload's template for its layer under these keys."""
        facts = workload.stored.facts
        key = (keys, workload.task_name, id(facts))
        found = self._offers.get(key)
        if found is None:
            found = self._offers[key] = (facts, self._judged(keys, workload.task_name, facts))
        return found[1]

    def _judged(self, keys: tuple[str, ...], task_name: str, facts: Mapping[str, object]) -> Offer:
        read = (keys, task_name, tuple(facts.get(n, _ABSENT) for n in offer_facts(keys, task_name)))
        try:
            offer = self._by_read.get(read)
        except TypeError:  # a fact that is no hashable value: judged on its own
            return relay_offers(keys, task_name, facts)
        if offer is None:
            offer = self._by_read[read] = relay_offers(keys, task_name, facts)
        return offer


_ABSENT = object()  # a fact the workload's facts do not hold


def build_layer(
    group: TargetGroup, layer_id: str, candidates: Iterable[Candidate], offers: _Offers
) -> Layer | None:
    """The layer's templates and relay's choice among them (None: no template competes).

    `candidates` in import order (workload id): a template is listed when tuned on the group,
    or when offered to it and answered by a slot its query asks.
    """
    templates: list[TemplateResult] = []
    outside_tvm: set[int] = set()  # ids of templates only a strategy outside TVM could offer
    newer_answers = False  # a template of a log version after v0.1 is answered
    keys, offer_of = group.keys, offers.of
    for workload, tuned_here, answer in candidates:
        offer = offer_of(keys, workload)
        offered = offer.offered
        chosen = answer if offered else None
        if tuned_here is not None:
            template = tuned_here
        elif chosen is not None:
            template = TemplateResult(workload)
        else:
            continue  # never tuned for this group, and no shared key slot answers for it
        template.chosen = chosen
        template.offered = offered
        template.certain = offer.certain
        template.offer_note = offer.note
        if offer.depends_on and offer.depends_on[0].startswith(OUTSIDE_TVM):
            outside_tvm.add(id(template))
        templates.append(template)
        if chosen is not None and workload.version != V01:
            newer_answers = True
    if not templates:
        return None
    if newer_answers:
        # TVM >= 0.7 skips v0.1 lines: with a newer record in the layer, v0.1 ones cannot win.
        for t in templates:
            if t.workload.version == V01:
                t.skipped_v01 = t.chosen is not None
                t.chosen = None
    ranked = [t for t in templates if t.chosen is not None]
    # Stable: equal costs keep import order, as relay's strict `>` keeps the first.
    ranked.sort(key=_chosen_cost)
    if outside_tvm:  # relay in tree never offers them: any template it does offer wins first
        ranked.sort(key=lambda t: id(t) in outside_tvm)
    untuned = [t for t in templates if t.chosen is None]
    first = templates[0].workload.stored
    winner = ranked[0] if ranked else None
    runner_up = ranked[1] if len(ranked) > 1 else None
    if outside_tvm and winner is not None:
        # Of the winner's kind: a faster template relay in tree never offers is no margin of
        # the one it picks.
        kind = id(winner) in outside_tvm
        runner_up = next((t for t in ranked[1:] if (id(t) in outside_tvm) == kind), None)
    return Layer(
        group=group,
        key=layer_id,
        family=first.family,
        shapes=first.shapes,
        templates=ranked + untuned,
        winner=winner,
        runner_up=runner_up,
        warnings=_machine_warnings(group, winner),
    )


def has_failed_records(layer: Layer) -> bool:
    """Whether a template of the layer has a failed record on its group (`errors` lists it):
    `rules.failedrecords`, whose SQL the store's `failing_only` stream applies."""
    return any(failed_records(template.errors) for template in layer.templates)


def _chosen_cost(template: TemplateResult) -> float:
    return template.chosen.mean_cost if template.chosen is not None else 0.0


def _machine_warnings(group: TargetGroup, winner: TemplateResult | None) -> list[str]:
    """One warning per target of the group that the winner was not measured on (machine-wise)."""
    if winner is None or winner.chosen is None or not winner.chosen.target:
        return []
    return list(_cross_machine_warnings(group.targets, winner.chosen.target))


@lru_cache(maxsize=4096)  # a pure function of a few strings, asked once per layer
def _cross_machine_warnings(targets: tuple[str, ...], measured: str) -> tuple[str, ...]:
    found = (cross_machine_warning(asked, measured) for asked in targets)
    return tuple(warning for warning in found if warning is not None)


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
    if len(layer.templates) == 1:  # most layers: nothing to lose to
        only = layer.templates[0]
        return [only] if only.chosen is not None else []
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
