"""Removing sources: the database becomes what importing every other file, in order, gives.

A source is the record lines its file held (`holdings`); a record is stored once, owned by the
first source that had its line. Removing sources deletes the records no remaining source holds;
tallies, top configs, slots, content hashes and trial runs are recomputed for what changed;
targets and workloads left without a record go; ids are never reused (migration 3's counter).

A record the removed file stored first but a later file also held stays, and must look as if
that later file had stored it: at its place in that file's order (ApplyHistoryBest breaks ties
by import order), owned by it, in its trial runs. So every import that came after the first one
holding such a record is replayed: holdings runs are inserted in import order (a rowid table),
and from that first run on, each import's record lines are deleted and imported again through
the importer's `ImportWriter` from their stored lines (nothing is parsed), into the same
sources (`tunelog.store.replaying`). When the removed file shared nothing it stored first,
nothing is replayed.

Runs inside the caller's write transaction.
"""

from __future__ import annotations

import bisect
import math
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tunelog.rules.ranking import RANK_ORDER_SQL
from tunelog.selection import HistoryBest
from tunelog.store.holdings import held_only_by, intervals
from tunelog.store.migrations_later import fill_run_marks, fill_top_config_ids, fill_trial_runs
from tunelog.store.replaying import capture_replay, replay

# A (target, workload)'s kept configs best first: the first is its best record (the ranking
# and the best-record rule order records alike).
_RANKED = RANK_ORDER_SQL.format(id="record_id")

Ranges = list[tuple[int, int]]  # sorted, disjoint [first, end) record id ranges


@dataclass(frozen=True)
class RemovedSource:
    """One removed source and how many records went with it (held by no remaining source)."""

    id: int
    path: str
    label: str | None
    records: int


def remove_sources(conn: sqlite3.Connection, source_ids: Sequence[int]) -> list[RemovedSource]:
    """Delete the sources and what only they held; replay later imports; recompute the rest."""
    removed_ids = sorted({int(i) for i in source_ids})
    if not removed_ids:
        return []
    ids = ",".join(str(i) for i in removed_ids)
    gone = held_only_by(conn, removed_ids)
    held = intervals(conn)
    removed = [
        RemovedSource(int(i), str(path), label, _overlap(_union(held.get(int(i), [])), gone))
        for i, path, label in conn.execute(
            f"SELECT id, path, label FROM sources WHERE id IN ({ids}) ORDER BY id"
        )
    ]
    replay_from = _first_rescuing_run(conn, removed_ids, gone)
    _store_again(conn, removed_ids, gone, replay_from)
    return removed


def store_again_from(
    conn: sqlite3.Connection, replay_from: int, rewrite: Callable[[sqlite3.Connection], None]
) -> None:
    """Store every import from the holdings run with rowid `replay_from` on again, in order,
    from the stored lines, after `rewrite` changed what they are stored under (it is given
    `temp.replay_lines`; a migration re-deriving an identity rule's answers): as `remove`
    replays the imports after a removed file, removing none."""
    _store_again(conn, [], [], replay_from, rewrite)


def recompute_slots_of_targets(conn: sqlite3.Connection, target_ids: Sequence[int]) -> None:
    """Every slot of the workloads these targets have records of, by the rule again (their
    keys or model changed: a migration re-parsing target strings)."""
    ids = ",".join(str(int(i)) for i in target_ids) or "NULL"
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS removal_groups (target_id, workload_id)")
    conn.execute("DELETE FROM removal_groups")
    conn.execute(
        f"""INSERT INTO removal_groups SELECT DISTINCT target_id, workload_id FROM tallies
            WHERE target_id IN ({ids})"""
    )
    _recompute_slots(conn)
    conn.execute("DROP TABLE removal_groups")


def _store_again(
    conn: sqlite3.Connection,
    removed_ids: Sequence[int],
    gone: Ranges,
    replay_from: int | None,
    rewrite: Callable[[sqlite3.Connection], None] | None = None,
) -> None:
    """Delete the removed sources (none: `store_again_from`) and the records in `gone`;
    replay every import from run `replay_from` on (None: none); recompute the rest."""
    ids = ",".join(str(i) for i in removed_ids) or "NULL"
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS removal_groups (target_id, workload_id)")
    conn.execute("DELETE FROM removal_groups")
    replayed: list[int] = []
    if replay_from is not None:
        replayed = capture_replay(conn, removed_ids, replay_from)
        # Every record of the replayed imports goes, to be stored again in their order.
        doomed = _union(gone, _ranges_of_runs(conn, f"rowid >= {replay_from:d}"))
        kept = _ranges_of_runs(conn, f"rowid < {replay_from:d} AND source_id NOT IN ({ids})")
        gone = _subtract(doomed, kept)
        conn.execute(f"DELETE FROM holdings WHERE rowid >= {replay_from:d}")
    affected = sorted({*removed_ids, *replayed})
    _delete_records(conn, gone)
    for table in ("holdings", "rejects", "resume_points", "source_imports"):
        conn.execute(f"DELETE FROM {table} WHERE source_id IN ({ids})")
    conn.execute(f"DELETE FROM sources WHERE id IN ({ids})")
    _recompute_tallies(conn)
    _recompute_top_configs(conn)
    _recompute_slots(conn)
    _recount_trial_runs(conn, affected)
    if replayed:
        if rewrite is not None:
            rewrite(conn)
        replay(conn)
    _drop_empty_blocks(conn, affected)  # after the replay: it reads the lines from them
    _recount_sources(conn, replayed)
    conn.execute("DELETE FROM workloads WHERE id NOT IN (SELECT workload_id FROM tallies)")
    conn.execute("DELETE FROM targets WHERE id NOT IN (SELECT target_id FROM tallies)")
    conn.execute(
        "DELETE FROM spelling_texts WHERE id NOT IN (SELECT spelling_id FROM record_spellings)"
    )
    _renumber_in_first_seen_order(conn)
    conn.execute("DROP TABLE removal_groups")
    conn.execute("DROP TABLE IF EXISTS temp.replay_lines")
    conn.execute("DROP TABLE IF EXISTS temp.replay_steps")


# -- record id ranges -----------------------------------------------------------------------------


def _overlap(ranges: Sequence[tuple[int, int]], gone: Ranges) -> int:
    """How many ids of `ranges` (each counted once per time held) fall in `gone`."""
    total = 0
    for first, end in ranges:
        at = bisect.bisect_right(gone, (first, math.inf)) - 1
        for lo, hi in gone[max(at, 0) :]:
            if lo >= end:
                break
            total += max(0, min(end, hi) - max(first, lo))
    return total


def _union(*parts: Sequence[tuple[int, int]]) -> Ranges:
    merged: Ranges = []
    for first, end in sorted(r for part in parts for r in part):
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((first, end))
    return merged


def _subtract(ranges: Ranges, minus: Ranges) -> Ranges:
    """`ranges` without the ids of `minus` (both sorted and disjoint)."""
    found: Ranges = []
    for first, end in ranges:
        at = first
        for lo, hi in minus[max(bisect.bisect_right(minus, (first, math.inf)) - 1, 0) :]:
            if lo >= end:
                break
            if hi <= at:
                continue
            if lo > at:
                found.append((at, lo))
            at = max(at, hi)
        if at < end:
            found.append((at, end))
    return found


def _ranges_of_runs(conn: sqlite3.Connection, where: str) -> Ranges:
    return _union(
        [
            (int(first), int(first) + int(count))
            for first, count in conn.execute(f"SELECT record_id, count FROM holdings WHERE {where}")
        ]
    )


def _first_rescuing_run(
    conn: sqlite3.Connection, removed_ids: Sequence[int], gone: Ranges
) -> int | None:
    """The rowid of the first run of a remaining source that holds a record a removed source
    stored first (None: there is none, nothing needs replaying)."""
    ids = ",".join(str(i) for i in removed_ids)
    # Records the removed sources stored first (the ranges they hold, narrowed to their own).
    theirs = _ranges_of_runs(conn, f"source_id IN ({ids})")
    owned: Ranges = []
    for first, end in _subtract(theirs, gone):
        rows = conn.execute(
            f"SELECT id FROM records WHERE id >= ? AND id < ? AND source_id IN ({ids})",
            (first, end),
        )
        owned = _union(owned, [(int(i), int(i) + 1) for (i,) in rows])
    if not owned:
        return None
    for rowid, first, count in conn.execute(
        f"""SELECT rowid, record_id, count FROM holdings WHERE source_id NOT IN ({ids})
            ORDER BY rowid"""
    ):
        if _overlap([(int(first), int(first) + int(count))], owned):
            return int(rowid)
    return None


# -- deleting -------------------------------------------------------------------------------------


def _delete_records(conn: sqlite3.Connection, gone: Ranges) -> None:
    """Delete the records in `gone` with their content hashes (their lines stay in their
    blocks until `_drop_empty_blocks`)."""
    for first, end in gone:
        conn.execute(
            """INSERT INTO removal_groups SELECT DISTINCT target_id, workload_id FROM records
               WHERE id >= ? AND id < ?""",
            (first, end),
        )
        conn.execute(
            """DELETE FROM content_hashes WHERE (workload_id, hash) IN (
                   SELECT workload_id, hash FROM records WHERE id >= ? AND id < ?)""",
            (first, end),
        )
        conn.execute("DELETE FROM records WHERE id >= ? AND id < ?", (first, end))
        conn.execute(
            "DELETE FROM record_spellings WHERE record_id >= ? AND record_id < ?", (first, end)
        )


def _drop_empty_blocks(conn: sqlite3.Connection, affected: Sequence[int]) -> None:
    """Delete the blocks of these sources none of whose records is left."""
    ids = ",".join(str(i) for i in affected) or "NULL"
    starts = [int(i) for (i,) in conn.execute("SELECT id FROM blocks ORDER BY id")]
    ends = dict(zip(starts, [*starts[1:], 1 << 62], strict=False))  # none: no block
    empty = [
        (block_id,)
        for (block_id,) in conn.execute(f"SELECT id FROM blocks WHERE source_id IN ({ids})")
        if conn.execute(
            "SELECT 1 FROM records WHERE id >= ? AND id < ? LIMIT 1", (block_id, ends[block_id])
        ).fetchone()
        is None
    ]
    conn.executemany("DELETE FROM blocks WHERE id = ?", empty)


def _recount_sources(conn: sqlite3.Connection, source_ids: Sequence[int]) -> None:
    """A replayed source's records (stored first by it) and duplicates (the rest it held)."""
    for source_id in source_ids:
        (held,) = conn.execute(
            "SELECT coalesce(sum(count), 0) FROM holdings WHERE source_id = ?", (source_id,)
        ).fetchone()
        (owned,) = conn.execute(
            "SELECT count(*) FROM records WHERE source_id = ?", (source_id,)
        ).fetchone()
        conn.execute(
            "UPDATE sources SET records = ?, duplicates = ? WHERE id = ?",
            (owned, held - owned, source_id),
        )


# Every column holding a workload or target id (the tables' own ids included).
_ID_COLUMNS = {
    "workloads": [
        ("workloads", "id"),
        ("records", "workload_id"),
        ("tallies", "workload_id"),
        ("slots", "workload_id"),
        ("top_config_ids", "workload_id"),
        ("content_hashes", "workload_id"),
        ("trial_runs", "workload_id"),
    ],
    "targets": [
        ("targets", "id"),
        ("records", "target_id"),
        ("tallies", "target_id"),
        ("top_config_ids", "target_id"),
        ("trial_runs", "target_id"),
    ],
}


def _renumber_in_first_seen_order(conn: sqlite3.Connection) -> None:
    """Workload and target ids in the order their first records were stored, as an import
    gives them (listings show workloads in id order): a workload may have come first only in the
    removed file, or a replay stored its first record later. The ids are permuted, not reused.
    """
    for table, column in (("workloads", "workload_id"), ("targets", "target_id")):
        order = [
            int(i)
            for (i,) in conn.execute(
                f"SELECT {column} FROM records GROUP BY {column} ORDER BY min(id)"
            )
        ]
        moved = [(old, new) for old, new in zip(order, sorted(order), strict=True) if old != new]
        if not moved:
            continue
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS id_map (old INTEGER PRIMARY KEY, new)")
        conn.execute("DELETE FROM temp.id_map")
        conn.executemany("INSERT INTO temp.id_map VALUES (?, ?)", moved)
        # Through negative ids: no row takes an id another row still has (keys stay unique).
        for name, col in _ID_COLUMNS[table]:
            conn.execute(
                f"""UPDATE {name} SET {col} = -(SELECT new FROM temp.id_map WHERE old = {col})
                    WHERE {col} IN (SELECT old FROM temp.id_map)"""
            )
            conn.execute(f"UPDATE {name} SET {col} = -{col} WHERE {col} < 0")
        conn.execute("DROP TABLE temp.id_map")


# -- derived tables -------------------------------------------------------------------------------

_IN_GROUPS = "(target_id, workload_id) IN (SELECT target_id, workload_id FROM removal_groups)"


def _recompute_tallies(conn: sqlite3.Connection) -> None:
    conn.execute(f"DELETE FROM tallies WHERE {_IN_GROUPS}")
    conn.execute(
        f"""INSERT INTO tallies
            SELECT target_id, workload_id, error_no, count(*), min(all_cost), max(all_cost)
            FROM records WHERE {_IN_GROUPS} GROUP BY target_id, workload_id, error_no"""
    )


def _recompute_top_configs(conn: sqlite3.Connection) -> None:
    """Each group's best distinct configs, ranked by (mean cost, record id) as on import."""
    conn.execute(f"DELETE FROM top_config_ids WHERE {_IN_GROUPS}")
    fill_top_config_ids(conn, _IN_GROUPS)


def _recompute_slots(conn: sqlite3.Connection) -> None:
    """Every slot of an affected workload, by ApplyHistoryBest's rule over the kept records.

    A slot `(key, workload)` collects records of every target with that key, not only the
    affected groups' targets, so the whole workload is replayed: its best record per target
    (from `top_configs`, ranked like the slots) offered in record order.
    """
    workloads = "SELECT DISTINCT workload_id FROM removal_groups"
    conn.execute(f"DELETE FROM slots WHERE workload_id IN ({workloads})")
    best: HistoryBest[int] = HistoryBest()
    rows = conn.execute(
        f"""SELECT c.record_id, t.target, c.workload_id, c.mean_cost, w.version FROM (
                SELECT target_id, workload_id, record_id, mean_cost, row_number() OVER (
                    PARTITION BY target_id, workload_id ORDER BY {_RANKED}) AS rank
                FROM top_configs WHERE workload_id IN ({workloads})) c
            JOIN targets t ON t.id = c.target_id
            JOIN workloads w ON w.id = c.workload_id
            WHERE c.rank = 1 ORDER BY c.record_id"""
    )
    for record_id, target, workload_id, mean_cost, version in rows:
        if mean_cost is None or not mean_cost < math.inf:
            continue  # as on import: a mean that is not finite never holds a slot
        # The log version picks the slots (MetaSchedule's one slot ignores the target).
        best.add(target, str(workload_id), float(mean_cost), int(record_id), version)
    conn.executemany(
        "INSERT INTO slots (kind, name, workload_id, record_id, mean_cost) VALUES (?, ?, ?, ?, ?)",
        [
            (slot.kind, slot.name, int(slot.workload), holder.ref, holder.mean_cost)
            for slot, holder in best.slots.items()
        ],
    )


def _recount_trial_runs(conn: sqlite3.Connection, source_ids: Sequence[int]) -> None:
    """The trial runs of these sources from the records they still own, in id order; a
    replay then extends them as a resumed import does."""
    ids = ",".join(str(i) for i in source_ids) or "NULL"
    conn.execute(f"DELETE FROM trial_runs WHERE source_id IN ({ids})")
    fill_trial_runs(conn, f"source_id IN ({ids})")
    fill_run_marks(conn, f"source_id IN ({ids})")
