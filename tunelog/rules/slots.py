"""Slots and query order: which slots a record competes for, which one answers a query.

ApplyHistoryBest keeps one slot per target key and, unless the model is "unknown", one model
slot; a query asks the model slot first, then the key slots in the target's key order, and the
first held slot answers (tvm-reference §3). MetaSchedule's database answers a workload whatever
the target (apache/tvm#15549): one target-less slot, asked last.

Also here, since they are the same rule seen from outside: the text a slot is shown as
(`model=t4`, `cuda`) and read back from, and the (keys, model) group of targets that every
query answers alike. Where SQL applies the rule, its text sits beside the Python:
`SLOT_LABEL_SQL`, `answering_slot_sql` and `FIRST_HELD_RECORD_SQL`; `tests/test_slot_rules.py`
runs every case through both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol, TypeVar

from tunelog.targets import UNKNOWN_MODEL, Target
from tunelog.versions import METASCHEDULE_VERSION, V02

K = TypeVar("K")
V = TypeVar("V")
K_contra = TypeVar("K_contra", contravariant=True)
V_co = TypeVar("V_co", covariant=True)

KEY_SLOT = "key"
MODEL_SLOT = "model"
ANY_TARGET_SLOT = "any_target"
ANY_TARGET = "*"

# The label prefix of a model slot: `best` shows `model=t4` beside the key slots `cuda`, `gpu`.
MODEL_LABEL = "model="


# A NamedTuple, not a frozen dataclass: an import builds and hashes one per slot of each
# workload it touches (a tuple hashes and compares in C).
class Slot(NamedTuple):
    """A slot: `(kind, name, workload)` with kind "key", "model" or "any_target"."""

    kind: str
    name: str
    workload: str


def slots_of(target: Target, workload: str, version: str = V02) -> list[Slot]:
    """The slots a valid record with this target and workload (and log version) competes for."""
    if version == METASCHEDULE_VERSION:
        return [Slot(ANY_TARGET_SLOT, ANY_TARGET, workload)]
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
    keys answer, as in TVM. The target-less MetaSchedule slot comes last: only MetaSchedule
    workloads hold it, and they hold no other.
    """
    return [(MODEL_SLOT, model), *((KEY_SLOT, key) for key in keys), (ANY_TARGET_SLOT, ANY_TARGET)]


class Holders(Protocol[K_contra, V_co]):
    """Slot -> holder, as `first_held` reads it: a Mapping, or slots looked up when asked."""

    def get(self, slot: K_contra, /) -> V_co | None:
        """The slot's holder, or None when it is not held."""


def first_held(order: Iterable[K], held: Holders[K, V]) -> V | None:
    """What answers a query: the holder of the first slot in query `order` that is held."""
    for slot in order:
        holder = held.get(slot)
        if holder is not None:
            return holder
    return None


def answering_slot_sql(order: Sequence[tuple[str, str]]) -> tuple[str, list[object]]:
    """`first_held` in SQL: a condition on `slots s` true for the slot that answers a query
    asking `order` for `s.workload_id`, and its parameters."""
    ranks = " UNION ALL ".join(["SELECT ?, ?, ?"] * len(order))
    # The answering slot: the held slot of the lowest rank for the same workload.
    sql = f"""(s.kind, s.name) IN (
                   WITH q(kind, name, rank) AS ({ranks})
                   SELECT q.kind, q.name FROM q
                   WHERE q.rank = (SELECT min(q2.rank) FROM q q2 JOIN slots s2
                                   ON s2.kind = q2.kind AND s2.name = q2.name
                                   WHERE s2.workload_id = s.workload_id))"""
    params: list[object] = []
    for rank, (kind, name) in enumerate(order):
        params += [kind, name, rank]
    return sql, params


# `first_held` in SQL for many queries at once: `asked_rows` fills a table `asked(query, rank,
# kind, name)` with each query's order; this expression is the record holding the slot that
# answers query `{query}` for workload `{workload}` (NULL: nothing held). The layer listings
# join it. Like `first_held`, it stops at the first held slot: the asked rows are read in rank
# order (the table's key) and LIMIT 1 ends the scan, where min() would look up every slot.
FIRST_HELD_RECORD_SQL = """(SELECT s.record_id FROM {asked} q JOIN slots s
                           ON s.kind = q.kind AND s.name = q.name AND s.workload_id = {workload}
                           WHERE q.query = {query} ORDER BY q.rank LIMIT 1)"""


def asked_rows(query: int, order: Sequence[tuple[str, str]]) -> list[tuple[int, int, str, str]]:
    """The rows of `FIRST_HELD_RECORD_SQL`'s `asked` table for one query asking `order`."""
    return [(query, rank, kind, name) for rank, (kind, name) in enumerate(order)]


def slot_label(kind: str, name: str) -> str:
    """The text a slot is shown as: `model=NAME` for a model slot, else its name."""
    return MODEL_LABEL + name if kind == MODEL_SLOT else name


# `slot_label` over `slots s`. Migration 6's `best_configs` view holds a frozen copy.
SLOT_LABEL_SQL = f"CASE s.kind WHEN '{MODEL_SLOT}' THEN '{MODEL_LABEL}' || s.name ELSE s.name END"


def competes_for_labels(target: Target, labels: Iterable[str]) -> bool:
    """Whether a record of `target` competes for one of the slots shown as `labels`
    (`slot_label` read back: `model=x` is the model slot x, any other text a key)."""
    return any(
        (label.removeprefix(MODEL_LABEL) == target.model)
        if label.startswith(MODEL_LABEL)
        else label in target.keys
        for label in labels
    )


def target_group(target: Target) -> tuple[tuple[str, ...], str]:
    """The (keys, model) group of a target: targets of one group ask the same slots in the
    same order, so every query answers them alike (the `targets` table's `keys` and `model`
    columns hold it for SQL's GROUP BY)."""
    return target.keys, target.model
