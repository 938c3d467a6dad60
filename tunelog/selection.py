"""What `autotvm.apply_history_best` picks: a pure emulation of ApplyHistoryBest.

Records are fed in log order (for several files: import order, then line). Each valid record
competes for one slot per target key and, unless the model is "unknown", one model slot; a record
takes a slot only with a strictly smaller mean cost, so ties keep the earlier record. A query asks
the model slot first, then the key slots in the target's key order (tvm-reference §3).

The store keeps the same slots in SQLite for large databases; this module is the reference it is
tested against, and the tool to check an exported file without TVM.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from tunelog.targets import UNKNOWN_MODEL, Target, parse_target

Ref = TypeVar("Ref")

KEY_SLOT = "key"
MODEL_SLOT = "model"


@dataclass(frozen=True, slots=True)
class Holder(Generic[Ref]):
    """The record holding a slot: its mean cost and whatever reference the caller gave."""

    mean_cost: float
    ref: Ref


@dataclass(frozen=True, slots=True)
class Slot:
    """A slot: `(kind, name, workload)` with kind "key" or "model"."""

    kind: str
    name: str
    workload: str


def slots_of(target: Target, workload: str) -> list[Slot]:
    """The slots a valid record with this target and workload competes for."""
    slots = [Slot(KEY_SLOT, key, workload) for key in target.keys]
    if target.model != UNKNOWN_MODEL:
        slots.append(Slot(MODEL_SLOT, target.model, workload))
    return slots


def query_order(target: Target, workload: str) -> list[Slot]:
    """The slots a query with `target` looks up, in order: model first, then keys."""
    return [Slot(kind, name, workload) for kind, name in query_slots(target.keys, target.model)]


def query_slots(keys: tuple[str, ...], model: str) -> list[tuple[str, str]]:
    """`(kind, name)` of the slots a query looks up, in order: this is ApplyHistoryBest's rule.

    The model slot is asked even for "unknown": no record holds it (see `slots_of`), so the
    keys answer, as in TVM.
    """
    return [(MODEL_SLOT, model), *((KEY_SLOT, key) for key in keys)]


class HistoryBest(Generic[Ref]):
    """ApplyHistoryBest's two dictionaries, filled one record at a time."""

    def __init__(self) -> None:
        self.slots: dict[Slot, Holder[Ref]] = {}

    def add(self, target: Target | str, workload: str, mean_cost: float, ref: Ref) -> None:
        """Offer a valid (error_no == 0) record; callers skip failed records."""
        if isinstance(target, str):
            target = parse_target(target)
        for slot in slots_of(target, workload):
            holder = self.slots.get(slot)
            if holder is None or holder.mean_cost > mean_cost:
                self.slots[slot] = Holder(mean_cost, ref)

    def query(self, target: Target | str, workload: str) -> Holder[Ref] | None:
        """What `apply_history_best` returns for this target and workload (None: fallback)."""
        if isinstance(target, str):
            target = parse_target(target)
        for slot in query_order(target, workload):
            holder = self.slots.get(slot)
            if holder is not None:
                return holder
        return None


def history_best(items: Iterable[tuple[str, str, float, int, Ref]]) -> HistoryBest[Ref]:
    """Build a HistoryBest from `(target, workload, mean_cost, error_no, ref)` in log order."""
    best: HistoryBest[Ref] = HistoryBest()
    for target, workload, mean_cost, error_no, ref in items:
        if error_no == 0:
            best.add(target, workload, mean_cost, ref)
    return best
