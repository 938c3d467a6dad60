"""Removing sources: their records go, and every derived table is recomputed without them.

Records are stored once, owned by the first source that had the line; a later source that
held the same line counted it as a duplicate and stored nothing. Removing a source therefore
removes every record it owns, including lines a later source also contained (they were stored
only once). The database is then what importing the remaining *stored* records, in import
order, gives: tallies, top configs, slots and content hashes are recomputed for the
(target, workload) groups the removed records belonged to, targets and workloads left without
a record are dropped, and ids are never reused (migration 3's counter).

A later source that had duplicates may have shared lines with the removed one: importing
that file again reads it again (instead of answering from its stored report), so the lines it
shared are stored again, under a new source.

Runs inside the caller's write transaction.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from tunelog.selection import HistoryBest
from tunelog.store.schema import fill_top_configs


@dataclass(frozen=True)
class RemovedSource:
    """One removed source and how many records it owned."""

    id: int
    path: str
    label: str | None
    records: int


def remove_sources(conn: sqlite3.Connection, source_ids: Sequence[int]) -> list[RemovedSource]:
    """Delete the sources, their records, lines and rejects; recompute what they decided."""
    ids = ",".join(str(int(i)) for i in source_ids)
    if not ids:
        return []
    removed = [
        RemovedSource(int(i), str(path), label, int(count))
        for i, path, label, count in conn.execute(
            f"""SELECT s.id, s.path, s.label,
                       (SELECT count(*) FROM records r WHERE r.source_id = s.id)
                FROM sources s WHERE s.id IN ({ids}) ORDER BY s.id"""
        )
    ]
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS removal_groups (target_id, workload_id)")
    conn.execute("DELETE FROM removal_groups")
    conn.execute(
        f"""INSERT INTO removal_groups
            SELECT DISTINCT target_id, workload_id FROM records WHERE source_id IN ({ids})"""
    )
    conn.execute(
        f"""DELETE FROM content_hashes WHERE record_id IN
            (SELECT id FROM records WHERE source_id IN ({ids}))"""
    )
    conn.execute(f"DELETE FROM records WHERE source_id IN ({ids})")
    conn.execute(f"DELETE FROM blocks WHERE source_id IN ({ids})")
    conn.execute(f"DELETE FROM rejects WHERE source_id IN ({ids})")
    conn.execute(f"DELETE FROM trial_runs WHERE source_id IN ({ids})")
    conn.execute(f"DELETE FROM resume_points WHERE source_id IN ({ids})")
    conn.execute(f"DELETE FROM source_imports WHERE source_id IN ({ids})")
    # A later source with duplicates may have shared lines with a removed one: its re-import
    # must be read again, not answered from its stored report (Store._known_file matches
    # `repair`; NULL never matches). Its hash still tells "already imported" when nothing is new.
    conn.execute(
        f"""UPDATE sources SET repair = NULL WHERE id > ? AND duplicates > 0
            AND id NOT IN ({ids})""",
        (min(source_ids),),
    )
    # ... and not resumed after its last line either (resume points, tunelog.store.resume).
    conn.execute(
        f"""DELETE FROM resume_points WHERE source_id IN (
                SELECT id FROM sources WHERE id > ? AND duplicates > 0 AND id NOT IN ({ids}))""",
        (min(source_ids),),
    )
    conn.execute(f"DELETE FROM sources WHERE id IN ({ids})")
    _recompute_tallies(conn)
    _recompute_top_configs(conn)
    _recompute_slots(conn)
    conn.execute("DELETE FROM workloads WHERE id NOT IN (SELECT workload_id FROM tallies)")
    conn.execute("DELETE FROM targets WHERE id NOT IN (SELECT target_id FROM tallies)")
    conn.execute("DROP TABLE removal_groups")
    return removed


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
    conn.execute(f"DELETE FROM top_configs WHERE {_IN_GROUPS}")
    fill_top_configs(conn, _IN_GROUPS)


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
                    PARTITION BY target_id, workload_id ORDER BY mean_cost, record_id) AS rank
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
