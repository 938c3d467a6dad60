"""What `autotvm.apply_history_best` picks: a pure emulation of ApplyHistoryBest.

Records are fed in log order (for several files: import order, then line). Each valid record
competes for its slots (`rules.slots.slots_of`: one per target key and, unless the model is
"unknown", one model slot); a record takes a slot only with a strictly smaller mean cost, so ties
keep the earlier record. A query is answered by the first held slot in `rules.slots.query_order`
(tvm-reference §3).

The store keeps the same slots in SQLite for large databases; this module is the reference it is
tested against, and the tool to check an exported file without TVM.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from typing import Generic, NamedTuple, TypeVar

from tunelog.rules.bestrecord import improves
from tunelog.rules.slots import Slot, first_held, query_order, slots_of
from tunelog.targets import Target, parse_target
from tunelog.versions import METASCHEDULE_VERSION as METASCHEDULE_VERSION
from tunelog.versions import V02

Ref = TypeVar("Ref")


# A NamedTuple, not a frozen dataclass: an import builds and hashes one per slot of each
# workload it touches (a tuple hashes and compares in C).
class Holder(NamedTuple, Generic[Ref]):
    """The record holding a slot: its mean cost and whatever reference the caller gave."""

    mean_cost: float
    ref: Ref


class HistoryBest(Generic[Ref]):
    """ApplyHistoryBest's two dictionaries, filled one record at a time."""

    def __init__(self) -> None:
        self.slots: dict[Slot, Holder[Ref]] = {}

    def add(
        self, target: Target | str, workload: str, mean_cost: float, ref: Ref, version: str = V02
    ) -> None:
        """Offer a valid (error_no == 0) record; callers skip failed records."""
        if isinstance(target, str):
            target = parse_target(target)
        self.offer(slots_of(target, workload, version), mean_cost, ref)

    def offer(self, slots: Iterable[Slot], mean_cost: float, ref: Ref) -> None:
        """`add` for a record whose slots the caller has worked out (`slots_of`); records are
        offered in file order, so the best-record rule is `rules.bestrecord.improves`."""
        for slot in slots:
            holder = self.slots.get(slot)
            if holder is None or improves(mean_cost, holder.mean_cost):
                self.slots[slot] = Holder(mean_cost, ref)

    def query(self, target: Target | str, workload: str) -> Holder[Ref] | None:
        """What `apply_history_best` returns for this target and workload (None: fallback)."""
        if isinstance(target, str):
            target = parse_target(target)
        return first_held(query_order(target, workload), self.slots)


def history_best(items: Iterable[tuple[str, str, float, int, Ref]]) -> HistoryBest[Ref]:
    """Build a HistoryBest from `(target, workload, mean_cost, error_no, ref)` in log order."""
    best: HistoryBest[Ref] = HistoryBest()
    for target, workload, mean_cost, error_no, ref in items:
        if error_no == 0:
            best.add(target, workload, mean_cost, ref)
    return best


# -- auto_scheduler (Ansor): the workload a record competes for ---------------------------------

# auto_scheduler's ApplyHistoryBest uses the same slots as AutoTVM's (a slot per target key,
# a model slot unless the model is "unknown", strict `<`, first wins, numpy mean): only the
# workload differs. It is `decode_workload_key(key)`: the first item of the JSON list (the
# compute DAG's hash, or a registered function's name) and the rest flattened into one tuple,
# so `["h", [1, 2], [3]]` and `["h", 1, 2, 3]` are one workload; a key that is not a JSON list
# is a hash with no arguments (None, which is not the empty tuple of `["h"]`).
ANSOR_NO_ARGS = "null"


class AnsorKeyError(ValueError):
    """A workload key that auto_scheduler's dispatcher could not use as a dictionary key."""


# Cached: every line of a workload repeats its key, and each is looked at on import and for slots.
@functools.lru_cache(maxsize=4096)
def ansor_workload(workload_key: str) -> tuple[str, str]:
    """`(hash, identity of the arguments)` of an auto_scheduler workload key.

    The identity is the canonical JSON of the flattened argument tuple, with the values Python
    finds equal (and hashes alike) spelled alike: `true` is `1`, `2.0` is `2`. A key that is
    not a JSON list gives `ANSOR_NO_ARGS`. Raises AnsorKeyError for a key TVM could not use.
    """
    try:
        value = json.loads(workload_key)
    except (ValueError, RecursionError):
        return workload_key, ANSOR_NO_ARGS
    if not isinstance(value, list) or not value:
        return workload_key, ANSOR_NO_ARGS
    head = value[0]
    if not isinstance(head, str):
        raise AnsorKeyError(f"workload key starts with {type(head).__name__}, not a hash string")
    flat: list[object] = []
    _flatten(value[1:], flat, 0)
    return head, json.dumps(flat, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _flatten(items: list[object], out: list[object], depth: int) -> None:
    if depth > 100:
        raise AnsorKeyError("workload key nested too deep")
    for item in items:
        if isinstance(item, list):
            _flatten(item, out, depth + 1)
        elif isinstance(item, bool):
            out.append(int(item))
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise AnsorKeyError(f"non-finite number {item!r} in workload key")
            out.append(int(item) if item.is_integer() else item)
        elif item is None or isinstance(item, (int, str)):
            out.append(item)
        else:  # a JSON object: unhashable, TVM's dispatcher raises TypeError
            raise AnsorKeyError("workload key holds a JSON object (TVM cannot hash it)")


def ansor_workload_json(workload_key: str) -> str:
    """The workload an auto_scheduler record competes for, as one string (for HistoryBest)."""
    head, args = ansor_workload(workload_key)
    return json.dumps(head) + "|" + args


# -- MetaSchedule JSONDatabase (tvm-reference §9) -----------------------------------------------

# run_secs value MetaSchedule writes for a measurement it could not make.
METASCHEDULE_FAILED = 1e10


def metaschedule_valid(instructions: list[str], run_secs: list[float] | None) -> bool:
    """TuningRecord::IsValid: an instruction before the first EnterPostproc, a run_secs != 1e10.

    TVM counts the instructions from the start up to the first postproc instruction
    (GetNumValidInstructions with remove_postproc): a trace that starts with EnterPostproc is
    invalid whatever follows it.
    """
    if not metaschedule_schedules(instructions):
        return False
    return any(value != METASCHEDULE_FAILED for value in run_secs or [])


def metaschedule_schedules(instructions: list[str]) -> bool:
    """The trace half of IsValid: at least one instruction before the first EnterPostproc."""
    return bool(instructions) and instructions[0] != "EnterPostproc"


def metaschedule_mean(run_secs: list[float] | None) -> float:
    """SortTuningRecordByMeanRunSecs's mean: a plain left-to-right sum (C++), 1e10 when empty."""
    if not run_secs:
        return METASCHEDULE_FAILED
    total = 0.0
    for value in run_secs:
        total += value
    return total / len(run_secs)
