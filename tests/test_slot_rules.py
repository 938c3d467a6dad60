"""Slots and query order (`tunelog.rules.slots`): every case through every implementation.

The rule "a query is answered by the first held slot in query order" runs in Python
(`HistoryBest.query`, `layers.query`, both through `first_held`) and in SQL (`--for-target`'s
WHERE clause, `answering_slot_sql`; the layer listings' `FIRST_HELD_RECORD_SQL`); a slot's label
is written in Python (`slot_label`) and SQL (`SLOT_LABEL_SQL`) and read back by
`competes_for_labels`. One table, every implementation.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from tunelog.layers import SlotWinner, group_targets, query
from tunelog.rules.slots import (
    ANY_TARGET,
    ANY_TARGET_SLOT,
    FIRST_HELD_RECORD_SQL,
    KEY_SLOT,
    MODEL_SLOT,
    SLOT_LABEL_SQL,
    Slot,
    answering_slot_sql,
    asked_rows,
    competes_for_labels,
    first_held,
    query_order,
    query_slots,
    slot_label,
    slots_of,
)
from tunelog.selection import HistoryBest, Holder
from tunelog.targets import parse_target

Held = list[tuple[str, str]]
Answer = tuple[str, str] | None

ANY = (ANY_TARGET_SLOT, ANY_TARGET)

K, M = KEY_SLOT, MODEL_SLOT

# (case, target a query asks with, the slots held for the workload, the slot that answers)
QUERY_CASES: list[tuple[str, str, Held, Answer]] = [
    ("model slot first", "cuda -model=t4", [(K, "cuda"), (M, "t4")], (M, "t4")),
    ("then the first key", "cuda -model=t4", [(K, "gpu"), (K, "cuda")], (K, "cuda")),
    ("a later key when the first is empty", "cuda -model=t4", [(K, "gpu")], (K, "gpu")),
    ("another model's slot never answers", "cuda -model=t4", [(M, "v100")], None),
    ("another model's slot, then a key", "cuda -model=t4", [(M, "v100"), (K, "gpu")], (K, "gpu")),
    ("no model: the keys answer", "cuda", [(K, "gpu"), (M, "t4")], (K, "gpu")),
    (
        "keys in the target's order",
        "llvm -keys=arm_cpu,cpu -model=rk3399",
        [(K, "cpu"), (K, "arm_cpu")],
        (K, "arm_cpu"),
    ),
    ("a key the target lacks never answers", "llvm -model=unknown", [(K, "gpu")], None),
    ("nothing held", "cuda -model=t4", [], None),
    ("MetaSchedule's slot answers any target", "llvm", [ANY], ANY),
    ("MetaSchedule's slot is asked last", "cuda -model=t4", [ANY, (K, "gpu")], (K, "gpu")),
]


def answer_by_first_held(target: str, held: Held) -> Answer:
    order = query_order(parse_target(target), "w")
    return first_held(order, {Slot(kind, name, "w"): (kind, name) for kind, name in held})


def answer_by_history_best(target: str, held: Held) -> Answer:
    best: HistoryBest[tuple[str, str]] = HistoryBest()
    best.slots = {Slot(kind, name, "w"): Holder(1.0, (kind, name)) for kind, name in held}
    holder = best.query(target, "w")
    return None if holder is None else holder.ref


def answer_by_layers(target: str, held: Held) -> Answer:
    group = group_targets([(1, target)])[1]
    winners = {
        (kind, name, 7): SlotWinner(n, 1.0, 0, kind, 0, name) for n, (kind, name) in enumerate(held)
    }
    winner = query(winners, group, 7)
    return None if winner is None else (winner.source, winner.target)


def answer_by_sql(target: str, held: Held) -> Answer:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE slots (kind TEXT, name TEXT, workload_id INTEGER)")
    conn.executemany("INSERT INTO slots VALUES (?, ?, 7)", held)
    # Another workload holding every slot must not change workload 7's answer.
    every = [(MODEL_SLOT, "t4"), (MODEL_SLOT, "rk3399"), (KEY_SLOT, "cuda"), (KEY_SLOT, "cpu"), ANY]
    conn.executemany("INSERT INTO slots VALUES (?, ?, 8)", every)
    parsed = parse_target(target)
    clause, params = answering_slot_sql(query_slots(parsed.keys, parsed.model))
    rows = conn.execute(
        f"SELECT s.kind, s.name FROM slots s WHERE s.workload_id = 7 AND {clause}", params
    ).fetchall()
    conn.close()
    assert len(rows) <= 1
    return (str(rows[0][0]), str(rows[0][1])) if rows else None


def answer_by_record_sql(target: str, held: Held) -> Answer:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE slots (kind TEXT, name TEXT, workload_id INTEGER, record_id INTEGER)"
    )
    # Each held slot of workload 7 by a record of its own (its position in `held`).
    conn.executemany(
        "INSERT INTO slots VALUES (?, ?, 7, ?)", [(k, n, i) for i, (k, n) in enumerate(held)]
    )
    every = [(MODEL_SLOT, "t4"), (MODEL_SLOT, "rk3399"), (KEY_SLOT, "cuda"), (KEY_SLOT, "cpu"), ANY]
    conn.executemany("INSERT INTO slots VALUES (?, ?, 8, 100)", every)
    conn.execute("CREATE TABLE asked (query INTEGER, rank INTEGER, kind TEXT, name TEXT)")
    parsed = parse_target(target)
    conn.executemany(
        "INSERT INTO asked VALUES (?, ?, ?, ?)",
        # Another query asking every slot must not change query 2's answer.
        asked_rows(1, every) + asked_rows(2, query_slots(parsed.keys, parsed.model)),
    )
    record = FIRST_HELD_RECORD_SQL.format(asked="asked", query="2", workload="7")
    (found,) = conn.execute(f"SELECT {record}").fetchone()
    conn.close()
    return None if found is None else (str(held[found][0]), str(held[found][1]))


QUERY_IMPLEMENTATIONS: dict[str, Callable[[str, Held], Answer]] = {
    "first_held": answer_by_first_held,
    "HistoryBest.query": answer_by_history_best,
    "layers.query": answer_by_layers,
    "answering_slot_sql": answer_by_sql,
    "FIRST_HELD_RECORD_SQL": answer_by_record_sql,
}


@pytest.mark.parametrize("implementation", list(QUERY_IMPLEMENTATIONS))
@pytest.mark.parametrize(
    ("case", "target", "held", "expected"), QUERY_CASES, ids=[c[0] for c in QUERY_CASES]
)
def test_every_implementation_answers_a_query_from_the_first_held_slot_in_query_order(
    implementation: str, case: str, target: str, held: Held, expected: Answer
) -> None:
    assert QUERY_IMPLEMENTATIONS[implementation](target, held) == expected, case


# (kind, name, the slot's label)
LABEL_CASES: list[tuple[str, str, str]] = [
    (MODEL_SLOT, "t4", "model=t4"),
    (KEY_SLOT, "cuda", "cuda"),
    (KEY_SLOT, "arm_cpu", "arm_cpu"),
    (ANY_TARGET_SLOT, ANY_TARGET, "*"),
]


def label_by_sql(kind: str, name: str) -> str:
    conn = sqlite3.connect(":memory:")
    row = conn.execute(
        f"SELECT {SLOT_LABEL_SQL} FROM (SELECT ? AS kind, ? AS name) s", (kind, name)
    )
    (label,) = row.fetchone()
    conn.close()
    return str(label)


LABEL_IMPLEMENTATIONS: dict[str, Callable[[str, str], str]] = {
    "slot_label": slot_label,
    "SLOT_LABEL_SQL": label_by_sql,
}


@pytest.mark.parametrize("implementation", list(LABEL_IMPLEMENTATIONS))
@pytest.mark.parametrize(("kind", "name", "expected"), LABEL_CASES)
def test_every_implementation_labels_a_slot_alike(
    implementation: str, kind: str, name: str, expected: str
) -> None:
    assert LABEL_IMPLEMENTATIONS[implementation](kind, name) == expected


@pytest.mark.parametrize(
    ("target", "other"),
    [
        ("cuda -model=t4", "llvm -model=rk3399"),
        ("cuda", "llvm"),
        ("llvm -keys=arm_cpu,cpu -model=rk3399", "cuda -model=t4"),
    ],
)
def test_a_record_competes_for_the_slots_its_labels_name_and_no_other_targets(
    target: str, other: str
) -> None:
    """`competes_for_labels` reads `slot_label` back: a target's own slots, and no others'."""
    labels = [slot_label(s.kind, s.name) for s in slots_of(parse_target(target), "")]
    assert competes_for_labels(parse_target(target), labels)
    for label in labels:
        assert competes_for_labels(parse_target(target), [label])
        assert not competes_for_labels(parse_target(other), [label])
