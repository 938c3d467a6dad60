"""Each rule of tunelog.rules run through every implementation of it (Python and SQL), one
table of cases each (Optuna's parametrised-storages style)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

import pytest

from tunelog.importreport import FileReport
from tunelog.rules.bestrecord import OFFER_SLOT_SQL, beats, improves
from tunelog.rules.bestsofar import BestSoFar, joined
from tunelog.rules.lineaccounting import (
    ALL_DUPLICATES_SQL,
    SOURCE_ACCOUNTED_SQL,
    duplicates_when_moved,
    is_accounted,
)
from tunelog.rules.ranking import (
    RANK_ORDER_SQL,
    TopConfigs,
    best_configs,
    better_config,
    takes_config,
)
from tunelog.rules.slots import Slot
from tunelog.selection import HistoryBest
from tunelog.store.schema import TOP_CONFIGS_KEPT, fill_top_config_ids, fill_top_configs

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


# -- best so far ----------------------------------------------------------------------------------

Trial = tuple[float, int]  # (mean cost, error number)


def _trial_by_trial(trials: Sequence[Trial]) -> list[tuple[int, float]]:
    run = BestSoFar()
    for mean, error_no in trials:
        run.add(mean, error_no)
    return run.improvements


def _split_and_joined(trials: Sequence[Trial]) -> list[tuple[int, float]]:
    """Every split into two runs, summarised apart and joined, gives one answer."""
    answers = set()
    for cut in range(len(trials) + 1):
        first = _trial_by_trial(trials[:cut])
        answers.add(tuple(joined(first, cut, _trial_by_trial(trials[cut:]))))
    (answer,) = answers
    return list(answer)


def _extended(trials: Sequence[Trial]) -> list[tuple[int, float]]:
    run = BestSoFar()
    for mean, error_no in trials:
        one = BestSoFar()
        one.add(mean, error_no)
        run.extend(one)
    return run.improvements


def _the_trials_add_says_improved(trials: Sequence[Trial]) -> list[tuple[int, float]]:
    """The importer's best record of a run: the last trial `add` says improved."""
    run = BestSoFar()
    return [(n, mean) for n, (mean, error_no) in enumerate(trials, 1) if run.add(mean, error_no)]


def _curve(trials: Sequence[Trial]) -> list[tuple[int, float]]:
    """`curve`'s points (`convergence.best_so_far`): the trials marked improved, with their
    best (which each point carries, improved or not)."""
    from tunelog.convergence import best_so_far

    points = best_so_far(trials)
    for point in points:  # every point's best is the best up to it
        assert point.best == min((c for c, e in trials[: point.trial] if e == 0), default=None), (
            point
        )
    return [(p.trial, p.best) for p in points if p.improved and p.best is not None]


BEST_SO_FAR: dict[str, Callable[[Sequence[Trial]], list[tuple[int, float]]]] = {
    "trial by trial": _trial_by_trial,
    "the curve's points": _curve,
    "the trials add says improved": _the_trials_add_says_improved,
    "split and joined": _split_and_joined,
    "extended one trial at a time": _extended,
}

BEST_SO_FAR_CASES: list[tuple[str, list[Trial], list[tuple[int, float]]]] = [
    ("no trials", [], []),
    ("failed trials never improve", [(1e9, 4), (1e9, 1)], []),
    ("the first valid trial improves", [(1e9, 4), (3.0, 0)], [(2, 3.0)]),
    ("a tie does not improve", [(3.0, 0), (3.0, 0), (2.0, 0)], [(1, 3.0), (3, 2.0)]),
    ("a worse trial does not improve", [(2.0, 0), (5.0, 0), (1.0, 0)], [(1, 2.0), (3, 1.0)]),
    ("failed trials count as trials", [(2.0, 0), (0.1, 6), (1.0, 0)], [(1, 2.0), (3, 1.0)]),
]


@pytest.mark.parametrize("implementation", list(BEST_SO_FAR))
@pytest.mark.parametrize(
    ("case", "trials", "expected"), BEST_SO_FAR_CASES, ids=[c[0] for c in BEST_SO_FAR_CASES]
)
def test_every_implementation_of_best_so_far_keeps_the_same_improvements(
    implementation: str, case: str, trials: list[Trial], expected: list[tuple[int, float]]
) -> None:
    assert BEST_SO_FAR[implementation](trials) == expected, case


# -- line accounting ------------------------------------------------------------------------------

# (lines, split, new, duplicates, comments, blank, rejected): a stored source's counts.
Counts = tuple[int, int, int, int, int, int, int]


def _report_accounted(counts: Counts) -> bool:
    lines, split, new, duplicates, comments, blank, rejected = counts
    report = FileReport(path="x.log", lines=lines, split=split, new=new, duplicates=duplicates)
    report.comments, report.blank, report.rejected = comments, blank, rejected
    return report.accounted


def _rule_accounted(counts: Counts) -> bool:
    lines, split, new, duplicates, comments, blank, rejected = counts
    return is_accounted(
        lines,
        split,
        new=new,
        duplicates=duplicates,
        discarded=0,
        comments=comments,
        blank=blank,
        rejected=rejected,
    )


def _sql_accounted(counts: Counts) -> bool:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE sources (lines, split, records, duplicates, comments, blank, rejected)"
    )
    conn.execute("INSERT INTO sources VALUES (?, ?, ?, ?, ?, ?, ?)", counts)
    (accounted,) = conn.execute(f"SELECT {SOURCE_ACCOUNTED_SQL} FROM sources").fetchone()
    return bool(accounted)


ACCOUNTING: dict[str, Callable[[Counts], bool]] = {
    "FileReport.accounted": _report_accounted,
    "is_accounted": _rule_accounted,
    "sql": _sql_accounted,
}

ACCOUNTING_CASES: list[tuple[str, Counts, bool]] = [
    ("nothing read", (0, 0, 0, 0, 0, 0, 0), True),
    ("every kind of line once", (5, 0, 1, 1, 1, 1, 1), True),
    ("a line split in three by --repair", (1, 2, 3, 0, 0, 0, 0), True),
    ("a line counted twice", (2, 0, 2, 1, 0, 0, 0), False),
    ("a line not counted", (3, 0, 1, 0, 1, 0, 0), False),
    ("split without the records it made", (1, 1, 1, 0, 0, 0, 0), False),
]


@pytest.mark.parametrize("implementation", list(ACCOUNTING))
@pytest.mark.parametrize(
    ("case", "counts", "expected"), ACCOUNTING_CASES, ids=[c[0] for c in ACCOUNTING_CASES]
)
def test_every_implementation_of_line_accounting_agrees(
    implementation: str, case: str, counts: Counts, expected: bool
) -> None:
    assert ACCOUNTING[implementation](counts) is expected, case


@pytest.mark.parametrize(
    ("records", "duplicates", "new", "expected"), [(5, 2, 5, 2), (5, 2, 0, 7), (5, 0, 3, 2)]
)
def test_a_moved_source_counts_the_entries_not_new_as_duplicates(
    records: int, duplicates: int, new: int, expected: int
) -> None:
    assert duplicates_when_moved(records, duplicates, new) == expected


# -- top-k ranking --------------------------------------------------------------------------------

# One valid record: (config index, mean cost, record id). Expected: (config index, record id).
Ranked = list[tuple[int, int]]


def _ranking_rule(records: Sequence[tuple[int, float, int]], k: int) -> Ranked:
    candidates: dict[int, tuple[float, int]] = {}
    for index, mean, rid in records:
        better_config(candidates, index, (mean, rid))
    return [(index, rid) for (_, rid), index in best_configs(candidates, k)]


def _top_configs(records: Sequence[tuple[int, float, int]], k: int) -> Ranked:
    """As the importer ranks a file's configs: offered in id order, k kept, then ranked."""
    top = TopConfigs(k)
    for index, mean, rid in sorted(records, key=lambda record: record[2]):
        top.offer(index, mean, rid)
    return [(index, rid) for (_, rid), index in top.ranked()]


def _top_configs_merged(records: Sequence[tuple[int, float, int]], k: int) -> Ranked:
    """Every split into configs stored before and a file's configs merged gives one answer."""
    answers = set()
    ordered = sorted(records, key=lambda record: record[2])
    for cut in range(len(ordered) + 1):
        stored: dict[int, tuple[float, int]] = {}
        for index, mean, rid in ordered[:cut]:
            better_config(stored, index, (mean, rid))
        stored = {index: rank for rank, index in best_configs(stored, k)}
        top = TopConfigs(k)
        for index, mean, rid in ordered[cut:]:
            top.offer(index, mean, rid)
        answers.add(tuple((index, rid) for (_, rid), index in top.merged(stored)))
    (answer,) = answers
    return list(answer)


def _top_config_ids(records: Sequence[tuple[int, float, int]], k: int) -> Ranked:
    """As the importer stores a new workload's configs: their best records, in no order."""
    top = TopConfigs(k)
    for index, mean, rid in sorted(records, key=lambda record: record[2]):
        top.offer(index, mean, rid)
    by_id = {rid: (index, mean) for index, mean, rid in records}
    kept = sorted(top.kept_record_ids(), key=lambda rid: (by_id[rid][1], rid))
    return [(by_id[rid][0], rid) for rid in kept]


def _ranking_sql(records: Sequence[tuple[int, float, int]], k: int) -> Ranked:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        """CREATE TABLE records (id INTEGER PRIMARY KEY, target_id, workload_id, config_index,
           error_no, mean_cost)"""
    )
    conn.execute(
        """CREATE TABLE top_configs (target_id, workload_id, config_index, record_id,
           mean_cost)"""
    )
    conn.executemany(
        "INSERT INTO records VALUES (?, 1, 1, ?, 0, ?)",
        [(rid, index, mean) for index, mean, rid in records],
    )
    fill_top_configs(conn, "1")
    rows = conn.execute("SELECT config_index, record_id, mean_cost FROM top_configs").fetchall()
    # The table keeps TOP_CONFIGS_KEPT (>= every k here): its best k, best first.
    assert all(k <= TOP_CONFIGS_KEPT for _, _, k, _ in RANKING_CASES)
    return [(index, rid) for index, rid, _ in sorted(rows, key=lambda r: (r[2], r[1]))][:k]


def _ranking_sql_ids(records: Sequence[tuple[int, float, int]], k: int) -> Ranked:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        """CREATE TABLE records (id INTEGER PRIMARY KEY, target_id, workload_id, config_index,
           error_no, mean_cost)"""
    )
    conn.execute("CREATE TABLE top_config_ids (target_id, workload_id, record_ids)")
    conn.executemany(
        "INSERT INTO records VALUES (?, 1, 1, ?, 0, ?)",
        [(rid, index, mean) for index, mean, rid in records],
    )
    fill_top_config_ids(conn, "1")
    rows = conn.execute(
        """SELECT r.config_index, r.id, r.mean_cost FROM top_config_ids p,
           json_each(p.record_ids) j JOIN records r ON r.id = j.value"""
    ).fetchall()
    return [(index, rid) for index, rid, _ in sorted(rows, key=lambda r: (r[2], r[1]))][:k]


def _export_top_k(records: Sequence[tuple[int, float, int]], k: int) -> Ranked:
    """As `export --top-k` reads a slot's records: in RANK_ORDER_SQL's order, each config's
    first record taken (`takes_config`) until k configs."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE records (id INTEGER PRIMARY KEY, config_index, mean_cost)")
    conn.executemany(
        "INSERT INTO records VALUES (?, ?, ?)", [(rid, index, mean) for index, mean, rid in records]
    )
    seen: set[int] = set()
    return [
        (index, rid)
        for rid, index in conn.execute(
            f"SELECT id, config_index FROM records ORDER BY {RANK_ORDER_SQL.format(id='id')}"
        )
        if takes_config(seen, index, k)
    ]


RANKINGS: dict[str, Callable[[Sequence[tuple[int, float, int]], int], Ranked]] = {
    "export --top-k (RANK_ORDER_SQL, takes_config)": _export_top_k,
    "python": _ranking_rule,
    "importer (TopConfigs)": _top_configs,
    "importer merged with stored (TopConfigs.merged)": _top_configs_merged,
    "importer's stored ids (TopConfigs.kept_record_ids)": _top_config_ids,
    "sql (fill_top_configs, migration 4)": _ranking_sql,
    "sql (fill_top_config_ids, removal)": _ranking_sql_ids,
}

RANKING_CASES: list[tuple[str, list[tuple[int, float, int]], int, Ranked]] = [
    ("no records", [], 3, []),
    ("configs by their best record", [(7, 2.0, 1), (8, 1.0, 2), (7, 0.5, 3)], 3, [(7, 3), (8, 2)]),
    ("a tie ranks the earlier first", [(7, 1.0, 2), (8, 1.0, 1)], 3, [(8, 1), (7, 2)]),
    ("a config's tie keeps its earlier record", [(7, 1.0, 1), (7, 1.0, 2)], 3, [(7, 1)]),
    ("only k configs", [(1, 3.0, 1), (2, 2.0, 2), (3, 1.0, 3)], 2, [(3, 3), (2, 2)]),
    (
        "configs beyond 4k forgotten, the best kept",
        [(i, float(10 - i), i) for i in range(1, 10)] + [(2, 0.5, 10), (1, 9.0, 11)],
        2,
        [(2, 10), (9, 9)],
    ),
    (
        "after forgetting, a tie with the last kept ranks after it",
        [(i, float(i), i) for i in range(1, 10)] + [(10, 2.0, 10), (11, 1.5, 11)],
        2,
        [(1, 1), (11, 11)],
    ),
]


@pytest.mark.parametrize("implementation", list(RANKINGS))
@pytest.mark.parametrize(
    ("case", "records", "k", "expected"), RANKING_CASES, ids=[c[0] for c in RANKING_CASES]
)
def test_every_implementation_of_top_k_ranking_keeps_the_same_configs(
    implementation: str, case: str, records: list[tuple[int, float, int]], k: int, expected: Ranked
) -> None:
    assert RANKINGS[implementation](records, k) == expected, case


@pytest.mark.parametrize(
    ("case", "counts", "accounted"), ACCOUNTING_CASES, ids=[c[0] for c in ACCOUNTING_CASES]
)
def test_a_copy_of_a_source_holds_its_lines_as_duplicates_in_python_and_sql(
    case: str, counts: Counts, accounted: bool
) -> None:
    """`store.knownfiles` copies a source in SQL (ALL_DUPLICATES_SQL) and reports it in Python
    (`duplicates_when_moved` with nothing new): one number."""
    _, _, records, duplicates, *_ = counts
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE sources (records, duplicates)")
    conn.execute("INSERT INTO sources VALUES (?, ?)", (records, duplicates))
    (in_sql,) = conn.execute(f"SELECT {ALL_DUPLICATES_SQL} FROM sources").fetchone()
    assert in_sql == duplicates_when_moved(records, duplicates, 0) == records + duplicates, case
