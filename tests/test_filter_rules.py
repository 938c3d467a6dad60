"""Filter meaning: every case through the Python rule (`Filters.shows_slot`) and its SQL form
(`filters.slot_filter_sql`, the WHERE clause the store's slot queries run), on one small
in-memory database: both must keep the same slot winners."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from tunelog.filters import Filters, slot_filter_sql
from tunelog.rules.slots import slots_of
from tunelog.targets import parse_target

TARGETS = {
    1: "cuda -model=t4",
    2: "cuda -model=titanx",
    3: "cuda",
    4: "llvm -mcpu=skylake-avx512",
    5: "llvm -keys=arm_cpu,cpu -device=arm_cpu -model=rk3399",
    6: "opencl -keys=mali,opencl,gpu -device=mali -model=rk3399",
}
TASKS = {
    1: "conv2d_nchw.cuda",
    2: "dense_nopack.x86",
    3: "dense_pack.x86",
    4: "conv2d_nchw_winograd.cuda",
    5: "conv2d_nchw_spatial_pack.mali",
}
# (record id, target id, workload id), in import order: a slot goes to the first record that
# competes for it (which record wins does not matter here, only which slots are shown).
RECORDS = [
    (1, 1, 1),
    (2, 2, 1),
    (3, 3, 1),
    (4, 4, 2),
    (5, 5, 2),
    (6, 4, 3),
    (7, 2, 4),
    (8, 3, 4),
    (9, 6, 5),
    (10, 5, 5),
]
Slot = tuple[str, str, int]  # (kind, name, workload id)


def _slot_rows() -> Iterator[tuple[str, str, int, int]]:
    held: set[Slot] = set()
    for record_id, target_id, workload_id in RECORDS:
        for slot in slots_of(parse_target(TARGETS[target_id]), str(workload_id)):
            key = (slot.kind, slot.name, workload_id)
            if key not in held:
                held.add(key)
                yield slot.kind, slot.name, workload_id, record_id


@pytest.fixture(scope="module")
def conn() -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(":memory:")
    db.executescript(
        """CREATE TABLE targets (id INTEGER PRIMARY KEY, target TEXT);
           CREATE TABLE workloads (id INTEGER PRIMARY KEY, task_name TEXT);
           CREATE TABLE records (id INTEGER PRIMARY KEY, target_id INTEGER, workload_id INTEGER);
           CREATE TABLE slots (kind TEXT, name TEXT, workload_id INTEGER, record_id INTEGER,
                               PRIMARY KEY (kind, name, workload_id));"""
    )
    db.executemany("INSERT INTO targets VALUES (?, ?)", TARGETS.items())
    db.executemany("INSERT INTO workloads VALUES (?, ?)", TASKS.items())
    db.executemany("INSERT INTO records VALUES (?, ?, ?)", RECORDS)
    db.executemany("INSERT INTO slots VALUES (?, ?, ?, ?)", _slot_rows())
    yield db
    db.close()


def shown_by_python(filters: Filters) -> set[Slot]:
    rows = list(_slot_rows())
    record_target = {record_id: target_id for record_id, target_id, _ in RECORDS}
    shown = set()
    for kind, name, workload_id, record_id in rows:
        held = [(k, n) for k, n, w, _ in rows if w == workload_id]
        target = parse_target(TARGETS[record_target[record_id]])
        if filters.shows_slot(target, TASKS[workload_id], (kind, name), held):
            shown.add((kind, name, workload_id))
    return shown


def shown_by_sql(conn: sqlite3.Connection, filters: Filters) -> set[Slot]:
    where, params = slot_filter_sql(
        filters,
        targets=lambda: conn.execute("SELECT id, target FROM targets"),
        tasks=lambda: conn.execute("SELECT id, task_name FROM workloads"),
    )
    sql = f"""SELECT s.kind, s.name, s.workload_id
              FROM slots s JOIN records r ON r.id = s.record_id {where}"""
    return {(str(k), str(n), int(w)) for k, n, w in conn.execute(sql, params)}


CASES = [
    Filters(),
    Filters(target_key="cuda"),
    Filters(target_key="gpu"),  # cuda's and mali's
    Filters(target_key="cpu"),
    Filters(target_key="arm_cpu"),
    Filters(target_key="vulkan"),
    Filters(model="t4"),
    Filters(model="rk3399"),  # two target kinds with one model
    Filters(model="unknown"),
    Filters(target_key="cpu", model="rk3399"),
    Filters(template="conv2d_nchw.cuda"),
    Filters(template="conv2d_nchw"),  # exact: no such task
    Filters(task="conv2d"),
    Filters(task="CONV2D"),  # case-sensitive
    Filters(task="_pack"),
    Filters(template="dense_pack.x86", task="pack"),
    Filters(target="cuda -model=t4"),
    Filters(target="cuda  -model=t4"),  # byte for byte: two spaces differ
    Filters(target=" cuda -model=t4 "),  # but spaces around it are invisible: the same
    Filters(target="cuda", target_key="cuda"),
    Filters(for_target="cuda -model=t4"),
    Filters(for_target="cuda -model=v100"),  # no model slot held: the keys answer
    Filters(for_target="cuda"),
    Filters(for_target="llvm -keys=arm_cpu,cpu -device=arm_cpu -model=rk3399"),
    Filters(for_target="llvm"),
    Filters(for_target="cuda -model=titanx", model="t4"),  # answered by another model
    Filters(for_target="cuda -model=titanx", task="winograd"),
    Filters(for_target="opencl -keys=mali,opencl,gpu -model=rk3399", target_key="gpu"),
]


@pytest.mark.parametrize("filters", CASES, ids=lambda f: f.describe() or "none")
def test_the_sql_form_of_the_filters_shows_what_the_python_rule_shows(
    conn: sqlite3.Connection, filters: Filters
) -> None:
    assert shown_by_sql(conn, filters) == shown_by_python(filters)


def test_the_cases_tell_the_filters_apart() -> None:
    verdicts = {frozenset(shown_by_python(f)) for f in CASES}
    assert len(verdicts) >= 15  # a predicate that kept all or nothing would not pass above
    assert frozenset() in verdicts


def test_spaces_around_a_target_string_are_no_difference() -> None:
    """A log's "llvm -keys=cpu " is named by --target "llvm -keys=cpu" (a table shows no
    trailing space, and TVM reads both as one target)."""
    assert (
        shown_by_python(Filters(target=" cuda -model=t4 "))
        == shown_by_python(Filters(target="cuda -model=t4"))
        != set()
    )
    assert Filters(target="llvm -keys=cpu").matches_target(parse_target("llvm -keys=cpu "))
    assert not Filters(target="llvm -keys=cpu").matches_target(parse_target("llvm  -keys=cpu"))
