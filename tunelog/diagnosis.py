"""Why a database does not answer a workload TVM reported untuned: one reason per workload.

Pure: the database comes in as `layers.build_layers`' inputs (targets, workloads, tallies,
slots), read once by the store. For a compile target T and a workload W (as TVM printed it):

1. `answered`: apply_history_best answers W, or another template relay offers T for the same
   layer, with T (model slot, then key slots, `layers.query`): the build read an older file.
2. `packed`: W is the NCHW[x]c / packed-weight form relay's layout rewrite derives from a layer
   (tvm-reference §10); `original` is that layer's workload, diagnosed in turn (when the layer is
   answered, so is W: relay registers the layer's config for its derived form).
3. `all_failed`: records of the same layer (`workloads.layer_key`) under a target sharing a slot
   with T, of templates relay offers T, none valid; with the error breakdown and remedy.
4. `not_offered`: valid records of the layer reachable from T, but only of templates relay's
   strategy never queries for T (`strategies.relay_offers`).
5. `other_target`: valid records of the layer only under targets sharing no key (and no model)
   with T: no query of T ever reaches them.
6. `v01_only`: only v0.1 records of the layer, which TVM >= 0.7 skips.
7. `no_record`: none of the above; `nearest` lists up to 3 tuned layers of the same operator,
   fewest differing parts first (then tuned for T first, then closest in size).

`apply_graph_best`'s warning (the graph tuner's output lacks W) is diagnosed as relay's query,
then: `not_in_graph` where the database answers W (that context never asks it), else the same
reason, the context said.
"""

from __future__ import annotations

from dataclasses import replace

from tunelog.ansordiagnosis import classify_ansor
from tunelog.diagnoses import (
    ALL_FAILED,
    ANSWERED,
    NO_RECORD,
    NOT_IN_GRAPH,
    NOT_OFFERED,
    OTHER_TARGET,
    PACKED,
    V01_ONLY,
    Diagnosis,
    diagnosis_of,
    group_of,
    seconds_text,
)
from tunelog.errorcodes import error_name, lookup_error_code
from tunelog.failurecauses import cause_of_failures, diagnose
from tunelog.layers import SlotWinner, query
from tunelog.layoutforms import packed_layout, packed_original
from tunelog.nearest import nearest_tuned
from tunelog.recordindex import RecordIndex, reaches
from tunelog.strategies import relay_offers
from tunelog.targets import Target, parse_target
from tunelog.tvmmessages import (
    Workload,
    workload_args,
    workload_key,
)
from tunelog.versions import V01, V02
from tunelog.workloadinfo import WorkloadInfo
from tunelog.workloads import layer_facts, layer_key, short_args


def relay_queries(keys: tuple[str, ...], info: WorkloadInfo) -> bool:
    """Whether relay may query this template for this layer on targets with these keys.

    The one place this module asks the strategy rule (`strategies.relay_offers`, per layer: its
    conditions on the workload's own arguments); an offer that depends on the target (-libs,
    CPU features) counts as queried.
    """
    return relay_offers(keys, info.task_name, layer_facts(info.task_name, info.args)).offered


def _offered_to(target: Target, info: WorkloadInfo) -> bool:
    """Whether relay surely offers this template for its layer to `target`: offered without a
    condition, or only on `-libs` the target has (`dense_cblas.x86` is offered `llvm
    -libs=cblas`, not `llvm`); an offer on what the target string does not say (CPU features,
    a strategy outside TVM) is not sure, so it never stands for relay's choice."""
    offer = relay_offers(target.keys, info.task_name, layer_facts(info.task_name, info.args))
    if not offer.offered or offer.certain:
        return offer.offered
    libs = set((target.option("libs") or "").split(","))
    return all(d.startswith("-libs=") and d[len("-libs=") :] in libs for d in offer.depends_on)


def layer_answered_by(
    index: RecordIndex, target: Target, workload: Workload
) -> tuple[WorkloadInfo, SlotWinner] | None:
    """The template relay uses for the workload's layer on `target` instead of the workload's
    own, and its answer: the fastest answered one of the layer's other templates that relay
    queries under the target's keys (relay compares the tuned templates' costs; an untuned
    one, this workload's, loses to any tuned one), or None."""
    task = str(workload[0])
    group = group_of(target)
    found: tuple[WorkloadInfo, SlotWinner] | None = None
    for wid in index.by_layer.get(layer_of(workload), []):
        info = index.recorded[wid].info
        if info.version != V02 or info.task_name == task or not _offered_to(target, info):
            continue
        holder = query(index.slots, group, wid)
        if holder is not None and (found is None or holder.mean_cost < found[1].mean_cost):
            found = (info, holder)
    return found


ANSWER_PREFIX = "apply_history_best answers it"
ANSWER_REMEDY = "; a build that said otherwise read another file: "


def diagnose_workload(
    index: RecordIndex,
    target: str,
    workload: Workload,
    *,
    line: int | None = None,
    direct: bool = False,
    graph: bool = False,
    ansor: bool = False,
) -> Diagnosis:
    """The reason the database does (not) answer `workload` for `target` (module docstring).

    `direct`: TVM's "Cannot find config" warning, of a template called directly, which asked
    for its own workload only: another template of the layer answers relay's choice, not it.
    Raises TargetParseError when `target` is not a target string.
    """
    asked = parse_target(target)
    if ansor:
        found = classify_ansor(index, asked, workload)
        return replace(found, line=line)
    found = _classify(index, asked, workload, direct=direct)
    if graph:
        found = _under_graph_best(found)
    return Diagnosis(
        target, workload, found.reason, found.detail, found.original, found.nearest, line
    )


def _under_graph_best(found: Diagnosis) -> Diagnosis:
    """`found` for a workload `apply_graph_best` said it lacks: that context answers only the
    workloads of the graph tuner's output file (the layers it placed layouts for, in order) and
    falls back for any other, whatever the kernel log holds (TVM 0.16 ApplyGraphBest)."""
    context = (
        "the build ran under apply_graph_best, which answers only the layers the graph tuner "
        "placed layouts for (its output file)"
    )
    if found.reason != ANSWERED:
        return replace(found, detail=f"{found.detail}; {context}")
    if found.detail.startswith(ANSWER_PREFIX):  # its own answer, or its layer's
        answer = found.detail.partition(ANSWER_REMEDY)[0].removeprefix(ANSWER_PREFIX)
    else:  # a packed form, answered by its layer's config: said as `_packed` says it
        answer = f" ({found.detail})"
    return replace(
        found,
        reason=NOT_IN_GRAPH,
        detail=(
            f"{context}: this one is not in it, so relay used a fallback config for it; "
            f"this database answers it under apply_history_best{answer}"
        ),
    )


def _classify(
    index: RecordIndex, asked: Target, workload: Workload, *, direct: bool = False
) -> Diagnosis:
    task = str(workload[0])
    args = workload_args(workload)
    whole_layer = index.by_layer.get(layer_of(workload), [])
    same_layer = whole_layer
    if direct:  # the called template's own records: the layer's others were not asked
        same_layer = [w for w in whole_layer if index.recorded[w].info.task_name == task]
    # A direct call asks the dispatch context itself: relay's strategy (which templates it
    # offers) plays no part, so none is left out and none is "not offered".
    offered: bool | None = None if direct else True
    answered = _answered(index, asked, task, workload, offered=offered)
    if answered is not None:
        return answered
    original = packed_original(workload)
    if original is not None:
        return _packed(index, asked, workload, original)
    found = _all_failed(index, asked, workload, same_layer, offered=offered)
    if found is not None:
        return found
    for check in (() if direct else (_not_offered,)) + (_other_target, _v01_only):
        found = check(index, asked, workload, same_layer)
        if found is not None:
            return found
    others = (
        sorted({index.recorded[w].info.task_name for w in whole_layer} - {task}) if direct else []
    )
    return _no_record(index, asked, workload, task, args, whole_layer, others)


def layer_of(workload: Workload) -> str:
    """The layer key of a workload as TVM printed it (whatever template it names)."""
    return layer_key(str(workload[0]), "", workload_args(workload))


def _answered(
    index: RecordIndex,
    asked: Target,
    task: str,
    workload: Workload,
    *,
    offered: bool | None,
) -> Diagnosis | None:
    """The workload's own answer, or (`offered`: relay's choice, not a direct call's) the one
    of the template relay picks for its layer (`layer_answered_by`)."""
    exact = index.exact.get((task, workload_key(workload[1:])))
    found: tuple[WorkloadInfo, SlotWinner] | None = None
    if exact is not None and (
        offered is None or relay_queries(asked.keys, index.recorded[exact].info)
    ):
        holder = query(index.slots, group_of(asked), exact)
        found = None if holder is None else (index.recorded[exact].info, holder)
    if found is None and offered is not None:
        # Another spelling of the asked template is never queried; the layer's other
        # templates are, and relay picks the fastest tuned one (as `tasks` says it).
        found = layer_answered_by(index, asked, workload)
    if found is None:
        return None
    info, holder = found
    how = "" if info.id == exact else f" through {info.task_name} (same layer)"
    where = f"{index.show_path(holder.source)}:{holder.line}"
    held_on = parse_target(holder.target)
    problems = held_on.load_problems
    fix = " --fix-targets" if held_on.fixed_by_dropping_options else ""
    detail = (
        f"{ANSWER_PREFIX}{how}: config {holder.config_index} from "
        f"{where} ({seconds_text(holder.mean_cost)}, tuned on "
        f"{holder.target}){ANSWER_REMEDY}export this database "
        f"(tunelog export{fix} --for-target '{asked.raw}' tuned.log) and build with that"
    )
    if problems:
        detail += (
            f" ({'; '.join(problems)}: such a TVM loads nothing of a file holding the "
            "record, not only that line)"
        )
    return diagnosis_of(asked, workload, ANSWERED, detail)


def _packed(index: RecordIndex, asked: Target, workload: Workload, original: Workload) -> Diagnosis:
    layer = _classify(index, asked, original)
    layout = packed_layout(workload)
    text = short_args(str(original[0]), workload_args(original))
    if layer.answered:
        detail = (
            f"the {layout} form of layer {text}, which the database answers (relay uses the "
            f"layer's config for this form): {layer.detail}"
        )
        return diagnosis_of(asked, workload, ANSWERED, detail, original=original)
    detail = (
        f"the {layout} form of layer {text}, untuned because that layer is "
        f"({layer.reason}): tune the layer"
    )
    return diagnosis_of(asked, workload, PACKED, detail, original=original)


def _reachable_counts(
    index: RecordIndex, asked: Target, same_layer: list[int], *, offered: bool | None
) -> dict[int, int]:
    """Error number -> records of the layer's v0.2 templates on targets reaching `asked`
    (`offered`: of the templates relay queries for its keys, of the others, or None: all)."""
    counts: dict[int, int] = {}
    for wid in same_layer:
        recorded = index.recorded[wid]
        if recorded.info.version != V02:
            continue
        if offered is not None and relay_queries(asked.keys, recorded.info) != offered:
            continue
        for target_id, per_error in recorded.by_target.items():
            if reaches(asked, index.parsed(target_id)):
                for number, n in per_error.items():
                    counts[number] = counts.get(number, 0) + n
    return counts


def _all_failed(
    index: RecordIndex,
    asked: Target,
    workload: Workload,
    same_layer: list[int],
    *,
    offered: bool | None,
) -> Diagnosis | None:
    counts = _reachable_counts(index, asked, same_layer, offered=offered)
    if not counts or counts.get(0, 0) > 0:
        return None
    total = sum(counts.values())
    breakdown = ", ".join(
        f"{error_name(n)} x{c}" for n, c in sorted(counts.items(), key=lambda nc: (-nc[1], nc[0]))
    )
    sentences = diagnose(counts)[1:]  # the first says "no valid measurement", as we do
    cause = cause_of_failures(counts)
    remedy = ""
    if cause is not None:
        entry = lookup_error_code(cause)
        # The sentences already give the cause's advice: point to the rest, without saying
        # the first remedy a second time in other words.
        if entry.remedies:
            remedy = f" More remedies: `tunelog explain {cause}`."
    failed = "its 1 trial" if total == 1 else f"all {total} trials"
    detail = f"{failed} failed ({breakdown}). {' '.join(sentences)}{remedy}".strip()
    return diagnosis_of(asked, workload, ALL_FAILED, detail.replace("  ", " "))


def _not_offered(
    index: RecordIndex, asked: Target, workload: Workload, same_layer: list[int]
) -> Diagnosis | None:
    counts = _reachable_counts(index, asked, same_layer, offered=False)
    if counts.get(0, 0) == 0:
        return None
    names = sorted(
        {
            index.recorded[w].info.task_name
            for w in same_layer
            if index.recorded[w].info.version == V02
            and not relay_queries(asked.keys, index.recorded[w].info)
        }
    )
    detail = (
        f"tuned only as {', '.join(names)}, which relay's strategy for keys "
        f"{','.join(asked.keys)} never queries; tune {workload[0]} for this target"
    )
    return diagnosis_of(asked, workload, NOT_OFFERED, detail)


def _other_target(
    index: RecordIndex, asked: Target, workload: Workload, same_layer: list[int]
) -> Diagnosis | None:
    elsewhere: set[str] = set()
    for wid in same_layer:
        recorded = index.recorded[wid]
        if recorded.info.version != V02:
            continue
        for target_id in recorded.valid_targets():
            parsed = index.parsed(target_id)
            if not reaches(asked, parsed):
                elsewhere.add(parsed.raw)
    if not elsewhere:
        return None
    named = sorted(elsewhere)
    why = "; ".join(
        f"{t} (keys {','.join(parse_target(t).keys)}, model {parse_target(t).model})"
        for t in named[:3]
    )
    more = f" and {len(named) - 3} more" if len(named) > 3 else ""
    detail = (
        f"tuned only under {why}{more}; this target queries model {asked.model} and keys "
        f"{','.join(asked.keys)}, never theirs: tune on this device"
    )
    return diagnosis_of(asked, workload, OTHER_TARGET, detail)


def _v01_only(
    index: RecordIndex, asked: Target, workload: Workload, same_layer: list[int]
) -> Diagnosis | None:
    old = [index.recorded[w].info for w in same_layer if index.recorded[w].info.version == V01]
    if not old:
        return None
    names = sorted(
        {f"{w.task_name} [{w.template_key}]" if w.template_key else w.task_name for w in old}
    )
    detail = (
        f"only v0.1 records ({', '.join(names)}), which TVM >= 0.7 skips: re-tune with the "
        "TVM that builds the model"
    )
    return diagnosis_of(asked, workload, V01_ONLY, detail)


def _no_record(
    index: RecordIndex,
    asked: Target,
    workload: Workload,
    task: str,
    args: list[object],
    same_layer: list[int],
    others: list[str],
) -> Diagnosis:
    """`others`: the layer's other templates with records, of a direct call's workload (a
    "Cannot find config" warning: that call asked for its own template only)."""
    nearest = nearest_tuned(index, asked, task, args, exclude=set(same_layer))
    detail = "no record of this layer for any target"
    if others:
        detail = (
            f"no record of {task} for this layer: TVM called it directly, which asks for its "
            f"own workload only (the layer has records of {', '.join(others)}, which relay's "
            "choice of a template asks, not this call)"
        )
    if nearest:
        detail += "; nearest tuned: " + " | ".join(", ".join(n.differs) for n in nearest)
    return diagnosis_of(asked, workload, NO_RECORD, detail, nearest=tuple(nearest))
