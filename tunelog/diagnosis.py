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
   strategy never queries for T (`strategies.may_offer`).
5. `other_target`: valid records of the layer only under targets sharing no key (and no model)
   with T: no query of T ever reaches them.
6. `v01_only`: only v0.1 records of the layer, which TVM >= 0.7 skips.
7. `no_record`: none of the above; `nearest` lists up to 3 tuned layers of the same operator,
   fewest differing parts first (then tuned for T first, then closest in size).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from tunelog.errorcodes import cause_of_failures, diagnose, error_name, lookup_error_code
from tunelog.exceptions import TargetParseError, TargetRequiredError
from tunelog.layers import SlotWinner, Tally, TargetGroup, WorkloadInfo, query
from tunelog.strategies import may_offer
from tunelog.targets import UNKNOWN_MODEL, Target, parse_target
from tunelog.tvmmessages import (
    UnreadMessage,
    Workload,
    as_json_list,
    as_tuple,
    looks_like_task_list,
    read_messages,
    read_task_list,
)
from tunelog.workloads import call_fields, layer_key, operator_family, short_args

ANSWERED = "answered"
PACKED = "packed"
ALL_FAILED = "all_failed"
NOT_OFFERED = "not_offered"
OTHER_TARGET = "other_target"
V01_ONLY = "v01_only"
NO_RECORD = "no_record"
REASONS = (NO_RECORD, OTHER_TARGET, ALL_FAILED, V01_ONLY, NOT_OFFERED, PACKED, ANSWERED)

NEAREST_SHOWN = 3
_BLOCKED = re.compile(r"NCHW(\d+)c")
_SHAPE_FIELDS = ("data", "kernel", "weight")


@dataclass(frozen=True)
class Nearest:
    """A tuned workload of the same operator, and how it differs from the one asked about."""

    workload: Workload
    differs: tuple[str, ...]
    targets: tuple[str, ...]


@dataclass(frozen=True)
class Diagnosis:
    """Why one (target, workload) is or is not answered by the database."""

    target: str
    workload: Workload
    reason: str
    detail: str
    original: Workload | None = None
    nearest: tuple[Nearest, ...] = ()
    line: int | None = None

    @property
    def answered(self) -> bool:
        """The database answers it (the build that printed it read another file)."""
        return self.reason == ANSWERED

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: workloads as lists, exactly as TVM printed them."""
        return {
            "target": self.target,
            "workload": as_json_list(self.workload),
            "reason": self.reason,
            "original": as_json_list(self.original) if self.original is not None else None,
            "nearest": [
                {
                    "workload": as_json_list(n.workload),
                    "differs": list(n.differs),
                    "targets": list(n.targets),
                }
                for n in self.nearest
            ],
            "detail": self.detail,
            "line": self.line,
        }


def relay_queries(keys: tuple[str, ...], task_name: str) -> bool:
    """Whether relay may query this template for targets with these keys.

    The one place this module asks the strategy table (its signature may grow per-layer
    conditions; callers here go through this function only).
    """
    return may_offer(keys, task_name)


def packed_original(workload: Workload) -> Workload | None:
    """The layer whose layout-rewritten form `workload` is, or None when it is not one.

    conv2d (x86 NCHWc): data `(N, C//c, H, W, c)`, kernel `(O//o, C//c, KH, KW, c, o)`, layouts
    `NCHW{c}c`, `NCHW{o}c` -> data `(N, C, H, W)`, kernel `(O, C, KH, KW)`, layouts `NCHW`;
    dense_pack: weight `(N//n, K, n)` -> `(N, K)`.
    """
    task, args = workload[0], workload[1:]
    if not isinstance(task, str):
        return None
    if task.startswith(("conv2d_NCHWc", "depthwise_conv2d_NCHWc")) and len(args) == 8:
        data, kernel, strides, padding, dilation, layout, out_layout, out_dtype = args
        shapes = _tensor_shape(data), _tensor_shape(kernel)
        if (
            shapes[0] is None
            or shapes[1] is None
            or len(shapes[0]) != 5
            or len(shapes[1]) != 6
            or not isinstance(layout, str)
            or not isinstance(out_layout, str)
            or not _BLOCKED.fullmatch(layout)
            or not _BLOCKED.fullmatch(out_layout)
        ):
            return None
        n, c_outer, h, w, c_inner = shapes[0]
        o_outer, i_outer, kh, kw, i_inner, o_inner = shapes[1]
        new_data = ("TENSOR", (n, c_outer * c_inner, h, w), data[2])  # type: ignore[index]
        new_kernel = ("TENSOR", (o_outer * o_inner, i_outer * i_inner, kh, kw), kernel[2])  # type: ignore[index]
        return (task, new_data, new_kernel, strides, padding, dilation, "NCHW", "NCHW", out_dtype)
    if task == "dense_pack.x86" and len(args) == 4:
        weight = _tensor_shape(args[1])
        if weight is None or len(weight) != 3:
            return None
        outer, k, inner = weight
        new_weight = ("TENSOR", (outer * inner, k), args[1][2])  # type: ignore[index]
        return (task, args[0], new_weight, args[2], args[3])
    return None


def workload_text(workload: Workload) -> str:
    """Short text of a workload: template and call (`conv2d_NCHWc.x86 1x64x56x56 * ...`).

    A layout-rewritten form shows its blocked shapes and layout, not a call it does not parse as.
    """
    task = str(workload[0])
    if packed_original(workload) is not None:
        shapes = [s for s in (_tensor_shape(a) for a in workload[1:3]) if s is not None]
        blocked = " * ".join("x".join(map(str, shape)) for shape in shapes)
        layout = workload[6] if task != "dense_pack.x86" else "packed weight"
        return f"{task} {blocked} {layout}"
    return f"{task} {short_args(task, list(as_json_list(workload[1:])))}"  # type: ignore[call-overload]


def _tensor_shape(value: object) -> tuple[int, ...] | None:
    if (
        isinstance(value, tuple)
        and len(value) == 3
        and value[0] == "TENSOR"
        and isinstance(value[1], tuple)
        and all(isinstance(d, int) and not isinstance(d, bool) for d in value[1])
    ):
        return value[1]
    return None


@dataclass
class _Recorded:
    """What the database holds for one workload: records per target id and error number."""

    info: WorkloadInfo
    by_target: dict[int, dict[int, int]] = field(default_factory=dict)

    def valid_targets(self) -> list[int]:
        return [t for t, counts in self.by_target.items() if counts.get(0, 0) > 0]


class RecordIndex:
    """The database's workloads indexed for diagnosis: by exact workload, layer and operator."""

    def __init__(
        self,
        targets: Iterable[tuple[int, str]],
        workloads: Sequence[WorkloadInfo],
        tallies: Iterable[Tally],
        slots: Mapping[tuple[str, str, int], SlotWinner],
        *,
        show_path: Callable[[str], str] = str,
    ) -> None:
        self.show_path = show_path  # how a stored source path is written in details
        self.targets = dict(targets)
        self.slots = slots
        self.recorded = {w.id: _Recorded(w) for w in workloads}
        for tally in tallies:
            counts = self.recorded[tally.workload_id].by_target.setdefault(tally.target_id, {})
            counts[tally.error_no] = counts.get(tally.error_no, 0) + tally.records
        self.exact: dict[tuple[str, object], int] = {}
        self.by_layer: dict[str, list[int]] = {}
        self.by_family: dict[str, list[int]] = {}
        for w in workloads:
            if w.version not in ("0.1", "0.2"):
                continue  # auto_scheduler / MetaSchedule workloads answer no AutoTVM query
            if w.version == "0.2":
                self.exact.setdefault((w.task_name, as_tuple(w.args)), w.id)
            self.by_layer.setdefault(layer_key(w.task_name, w.template_key, w.args), []).append(
                w.id
            )
            family = operator_family(w.task_name, w.template_key)
            self.by_family.setdefault(family, []).append(w.id)

    def parsed(self, target_id: int) -> Target:
        """The parsed target string of a target id."""
        return parse_target(self.targets[target_id])


def diagnose_workload(
    index: RecordIndex, target: str, workload: Workload, *, line: int | None = None
) -> Diagnosis:
    """The reason the database does (not) answer `workload` for `target` (module docstring).

    Raises TargetParseError when `target` is not a target string.
    """
    asked = parse_target(target)
    found = _classify(index, asked, workload)
    return Diagnosis(
        target, workload, found.reason, found.detail, found.original, found.nearest, line
    )


def _classify(index: RecordIndex, asked: Target, workload: Workload) -> Diagnosis:
    task = str(workload[0])
    args = list(as_json_list(workload[1:]))  # type: ignore[call-overload]
    same_layer = _same_layer(index, task, args)
    answered = _answered(index, asked, task, workload, same_layer)
    if answered is not None:
        return answered
    original = packed_original(workload)
    if original is not None:
        return _packed(index, asked, workload, original)
    for check in (_all_failed, _not_offered, _other_target, _v01_only):
        found = check(index, asked, workload, same_layer)
        if found is not None:
            return found
    return _no_record(index, asked, workload, task, args, same_layer)


def _same_layer(index: RecordIndex, task: str, args: list[object]) -> list[int]:
    return index.by_layer.get(layer_key(task, "", args), [])


def _group(asked: Target) -> TargetGroup:
    return TargetGroup(asked.keys, asked.model, (asked.raw,))


def _reaches(asked: Target, recorded: Target) -> bool:
    """A record of `recorded` holds a slot some query of `asked` looks up."""
    if set(asked.keys) & set(recorded.keys):
        return True
    return recorded.model != UNKNOWN_MODEL and recorded.model == asked.model


def _result(
    asked: Target, workload: Workload, reason: str, detail: str, **extra: object
) -> Diagnosis:
    return Diagnosis(asked.raw, workload, reason, detail, **extra)  # type: ignore[arg-type]


def _answered(
    index: RecordIndex, asked: Target, task: str, workload: Workload, same_layer: list[int]
) -> Diagnosis | None:
    exact = index.exact.get((task, workload[1:]))
    candidates = ([exact] if exact is not None else []) + [
        wid
        for wid in same_layer
        if wid != exact
        and index.recorded[wid].info.version == "0.2"
        and index.recorded[wid].info.task_name
        != task  # another spelling of one template: not asked
    ]
    group = _group(asked)
    for wid in candidates:
        info = index.recorded[wid].info
        if not relay_queries(asked.keys, info.task_name):
            continue
        holder = query(index.slots, group, wid)
        if holder is None:
            continue
        how = "" if wid == exact else f" through {info.task_name} (same layer)"
        where = f"{index.show_path(holder.source)}:{holder.line}"
        detail = (
            f"apply_history_best answers it{how}: config {holder.config_index} from "
            f"{where} ({_seconds(holder.mean_cost)}, tuned on "
            f"{holder.target}); a build that printed it read another file: export this database "
            f"(tunelog export --for-target '{asked.raw}' tuned.log) and build with that"
        )
        return _result(asked, workload, ANSWERED, detail)
    return None


def _packed(index: RecordIndex, asked: Target, workload: Workload, original: Workload) -> Diagnosis:
    layer = _classify(index, asked, original)
    layout = next((a for a in workload[6:8] if isinstance(a, str)), "packed-weight")
    text = short_args(str(original[0]), list(as_json_list(original[1:])))  # type: ignore[call-overload]
    if layer.answered:
        detail = (
            f"the {layout} form of layer {text}, which the database answers (relay uses the "
            f"layer's config for this form): {layer.detail}"
        )
        return _result(asked, workload, ANSWERED, detail, original=original)
    detail = (
        f"the {layout} form of layer {text}, untuned because that layer is "
        f"({layer.reason}): tune the layer"
    )
    return _result(asked, workload, PACKED, detail, original=original)


def _reachable_counts(
    index: RecordIndex, asked: Target, same_layer: list[int], *, offered: bool
) -> dict[int, int]:
    """Error number -> records of the layer's v0.2 templates on targets reaching `asked`."""
    counts: dict[int, int] = {}
    for wid in same_layer:
        recorded = index.recorded[wid]
        if recorded.info.version != "0.2":
            continue
        if relay_queries(asked.keys, recorded.info.task_name) != offered:
            continue
        for target_id, per_error in recorded.by_target.items():
            if _reaches(asked, index.parsed(target_id)):
                for number, n in per_error.items():
                    counts[number] = counts.get(number, 0) + n
    return counts


def _all_failed(
    index: RecordIndex, asked: Target, workload: Workload, same_layer: list[int]
) -> Diagnosis | None:
    counts = _reachable_counts(index, asked, same_layer, offered=True)
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
        if entry.remedies:
            remedy = f" Remedy (tunelog explain {cause}): {entry.remedies[0]}."
    detail = f"all {total} trials failed ({breakdown}). {' '.join(sentences)}{remedy}".strip()
    return _result(asked, workload, ALL_FAILED, detail.replace("  ", " "))


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
            if index.recorded[w].info.version == "0.2"
            and not relay_queries(asked.keys, index.recorded[w].info.task_name)
        }
    )
    detail = (
        f"tuned only as {', '.join(names)}, which relay's strategy for keys "
        f"{','.join(asked.keys)} never queries; tune {workload[0]} for this target"
    )
    return _result(asked, workload, NOT_OFFERED, detail)


def _other_target(
    index: RecordIndex, asked: Target, workload: Workload, same_layer: list[int]
) -> Diagnosis | None:
    elsewhere: set[str] = set()
    for wid in same_layer:
        recorded = index.recorded[wid]
        if recorded.info.version != "0.2":
            continue
        for target_id in recorded.valid_targets():
            parsed = index.parsed(target_id)
            if not _reaches(asked, parsed):
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
    return _result(asked, workload, OTHER_TARGET, detail)


def _v01_only(
    index: RecordIndex, asked: Target, workload: Workload, same_layer: list[int]
) -> Diagnosis | None:
    old = [index.recorded[w].info for w in same_layer if index.recorded[w].info.version == "0.1"]
    if not old:
        return None
    names = sorted(
        {f"{w.task_name} [{w.template_key}]" if w.template_key else w.task_name for w in old}
    )
    detail = (
        f"only v0.1 records ({', '.join(names)}), which TVM >= 0.7 skips: re-tune with the "
        "TVM that builds the model"
    )
    return _result(asked, workload, V01_ONLY, detail)


def _no_record(
    index: RecordIndex,
    asked: Target,
    workload: Workload,
    task: str,
    args: list[object],
    same_layer: list[int],
) -> Diagnosis:
    nearest = nearest_tuned(index, asked, task, args, exclude=set(same_layer))
    detail = "no record of this layer for any target"
    if nearest:
        detail += "; nearest tuned: " + " | ".join(", ".join(n.differs) for n in nearest)
    return _result(asked, workload, NO_RECORD, detail, nearest=tuple(nearest))


def nearest_tuned(
    index: RecordIndex,
    asked: Target,
    task: str,
    args: list[object],
    *,
    exclude: set[int],
    limit: int = NEAREST_SHOWN,
) -> list[Nearest]:
    """Up to `limit` tuned layers of the same operator closest to the asked call."""
    mine = call_fields(task, args)
    if mine is None:
        return []
    ranked: list[tuple[tuple[int, bool, float, int], Nearest]] = []
    seen_layers: set[str] = set()
    for wid in index.by_family.get(operator_family(task), []):
        recorded = index.recorded[wid]
        info = recorded.info
        valid = recorded.valid_targets()
        if wid in exclude or info.version != "0.2" or not valid:
            continue
        key = layer_key(info.task_name, info.template_key, info.args)
        theirs = call_fields(info.task_name, info.args)
        if theirs is None or key in seen_layers:
            continue
        seen_layers.add(key)
        differs = tuple(
            f"{name} {value} vs {theirs.get(name, '?')}"
            for name, value in mine.items()
            if theirs.get(name) != value
        )
        targets = sorted({index.targets[t] for t in valid})
        reachable = any(_reaches(asked, parse_target(t)) for t in targets)
        rank = (len(differs), not reachable, _size_gap(mine, theirs), wid)
        workload = (info.task_name, *(as_tuple(a) for a in info.args))
        ranked.append((rank, Nearest(workload, differs, tuple(targets[:3]))))
    ranked.sort(key=lambda item: item[0])
    return [n for _, n in ranked[:limit]]


def _size_gap(mine: Mapping[str, str], theirs: Mapping[str, str]) -> float:
    """How far apart two calls' tensors are in size (sum of |log| of element-count ratios)."""
    gap = 0.0
    for name in _SHAPE_FIELDS:
        a, b = _elements(mine.get(name)), _elements(theirs.get(name))
        if a and b:
            gap += abs(math.log(a / b))
    return gap


def _elements(text: str | None) -> int | None:
    if not text:
        return None
    dims = text.partition(":")[0].split("x")
    if not all(d.isdigit() for d in dims):
        return None
    return math.prod(int(d) for d in dims) or None


def _seconds(cost: float) -> str:
    if cost >= 1e-3:
        return f"{cost * 1e3:.2f} ms"
    return f"{cost * 1e6:.1f} us"


def verdict(diagnoses: Sequence[Diagnosis]) -> str:
    """One line: how many workloads are unanswered, by reason, and what to do first."""
    if not diagnoses:
        return "no untuned workload named: nothing to diagnose"
    unanswered = [d for d in diagnoses if not d.answered]
    if not unanswered:
        return (
            f"the database answers all {len(diagnoses)} workloads: the build read another file "
            "(export this database and build with it)"
        )
    counts: dict[str, int] = {}
    for d in unanswered:
        counts[d.reason] = counts.get(d.reason, 0) + 1
    parts = ", ".join(f"{reason} {counts[reason]}" for reason in REASONS if reason in counts)
    layers = len(unanswered) - counts.get(PACKED, 0)
    return (
        f"{len(unanswered)} of {len(diagnoses)} workloads unanswered ({parts}); "
        f"{layers} layer(s) to tune"
    )


@dataclass(frozen=True)
class DiagnoseReport:
    """Every workload named, diagnosed; the messages that could not be read; repeats skipped."""

    diagnoses: list[Diagnosis]
    unread: list[UnreadMessage]
    repeats: int = 0

    @property
    def unanswered(self) -> list[Diagnosis]:
        """The diagnoses the database does not answer."""
        return [d for d in self.diagnoses if not d.answered]


def diagnose_text(index: RecordIndex, text: str, *, target: str | None = None) -> DiagnoseReport:
    """Diagnose TVM's console output, or a task list (JSON) compiled for `target`.

    Raises TargetRequiredError for a task list without a target, NotATaskListError for JSON
    that is not a task list, TargetParseError for a bad `target`.
    """
    if looks_like_task_list(text):
        workloads = read_task_list(text)
        if target is None:
            raise TargetRequiredError(
                "a task list does not say which target it compiles for: pass --target "
                "(e.g. --target 'llvm -mcpu=core-avx2')"
            )
        parse_target(target)
        unique = list(dict.fromkeys(workloads))
        return DiagnoseReport(
            [diagnose_workload(index, target, w) for w in unique], [], len(workloads) - len(unique)
        )
    read = read_messages(text.splitlines())
    diagnoses: list[Diagnosis] = []
    unread = list(read.unread)
    for message in read.messages:
        try:
            diagnoses.append(
                diagnose_workload(index, message.target, message.workload, line=message.line)
            )
        except TargetParseError as exc:
            unread.append(UnreadMessage(message.line, f"bad target: {exc}"))
    unread.sort()
    return DiagnoseReport(diagnoses, unread, read.repeats)
