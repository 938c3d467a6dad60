"""Each rule of tunelog.rules run through every implementation of it (Python and SQL), one
table of cases each (Optuna's parametrised-storages style)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

import pytest

from tunelog.rules.bestrecord import OFFER_SLOT_SQL, beats, improves
from tunelog.selection import HistoryBest, Slot

# One offer: (slot name, mean cost, record id). Record ids are file order.
Offer = tuple[str, float, int]
Holders = dict[str, tuple[float, int]]


def _python(offers: Sequence[Offer]) -> Holders:
    holders: Holders = {}
    for name, mean, rid in offers:
        held = holders.get(name)
        if held is None or beats(mean, rid, *held):
            holders[name] = (mean, rid)
    return holders


def _sql(offers: Sequence[Offer]) -> Holders:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        """CREATE TABLE slots (kind TEXT, name TEXT, workload_id INTEGER, record_id INTEGER,
           mean_cost REAL, PRIMARY KEY (kind, name, workload_id)) WITHOUT ROWID"""
    )
    conn.executemany(OFFER_SLOT_SQL, [("key", name, 1, rid, mean) for name, mean, rid in offers])
    return {
        name: (mean, rid)
        for name, mean, rid in conn.execute("SELECT name, mean_cost, record_id FROM slots")
    }


def _history_best_in_file_order(offers: Sequence[Offer]) -> Holders:
    """ApplyHistoryBest as TVM runs it: offers in file (id) order, `improves` only."""
    best: HistoryBest[int] = HistoryBest()
    for name, mean, rid in sorted(offers, key=lambda offer: offer[2]):
        best.offer([Slot("key", name, "w")], mean, rid)
    return {slot.name: (h.mean_cost, h.ref) for slot, h in best.slots.items()}


IMPLEMENTATIONS: dict[str, Callable[[Sequence[Offer]], Holders]] = {
    "python": _python,
    "sql": _sql,
    "history_best_in_file_order": _history_best_in_file_order,
}

# (case, offers in the order they are made, the holders expected)
CASES: list[tuple[str, list[Offer], Holders]] = [
    ("one offer holds", [("cuda", 2.0, 1)], {"cuda": (2.0, 1)}),
    ("smaller mean wins", [("cuda", 2.0, 1), ("cuda", 1.0, 2)], {"cuda": (1.0, 2)}),
    ("larger mean loses", [("cuda", 1.0, 1), ("cuda", 2.0, 2)], {"cuda": (1.0, 1)}),
    ("a tie keeps the earlier", [("cuda", 1.0, 1), ("cuda", 1.0, 2)], {"cuda": (1.0, 1)}),
    (
        "a tie offered late still goes to the earlier",
        [("cuda", 1.0, 5), ("cuda", 1.0, 3)],
        {"cuda": (1.0, 3)},
    ),
    (
        "a smaller mean offered before the larger wins",
        [("cuda", 1.0, 9), ("cuda", 2.0, 1)],
        {"cuda": (1.0, 9)},
    ),
    (
        "slots are independent",
        [("cuda", 3.0, 1), ("gpu", 2.0, 2), ("cuda", 1.0, 3)],
        {"cuda": (1.0, 3), "gpu": (2.0, 2)},
    ),
    (
        "batches in any order: the smallest (mean, id) wins",
        [("cuda", 2.0, 4), ("cuda", 1.5, 7), ("cuda", 1.5, 6), ("cuda", 3.0, 1)],
        {"cuda": (1.5, 6)},
    ),
    ("a zero mean wins", [("cuda", 1e-9, 1), ("cuda", 0.0, 2)], {"cuda": (0.0, 2)}),
]


@pytest.mark.parametrize("implementation", list(IMPLEMENTATIONS))
@pytest.mark.parametrize(("case", "offers", "expected"), CASES, ids=[c[0] for c in CASES])
def test_every_implementation_of_the_best_record_rule_picks_the_same_holder(
    implementation: str, case: str, offers: list[Offer], expected: Holders
) -> None:
    assert IMPLEMENTATIONS[implementation](offers) == expected, case


@pytest.mark.parametrize(
    ("mean", "best", "expected"),
    [(1.0, 2.0, True), (2.0, 1.0, False), (1.0, 1.0, False), (float("nan"), 1.0, False)],
)
def test_a_record_in_file_order_improves_only_on_a_strictly_smaller_mean(
    mean: float, best: float, expected: bool
) -> None:
    assert improves(mean, best) is expected
