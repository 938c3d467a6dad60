"""What the store derived from rules that have changed since, derived again (migration 18).

A target's keys and model are stored as its string parsed when first imported
(`targets.parse_target`): since, the `c` kind takes TVM's CPU parser (`c -mcpu=cortex-m7` has the
`arm_cpu` key) and an option written without a value reads as "1" (`cuda -model`), as TVM parses
them. The slots of the workloads those targets have records of are offered again by the rule.
Migration 19 files MetaSchedule workloads again by their identity as it is now
(`store.msidentities`).
"""

from __future__ import annotations

import sqlite3


def _migration_18(conn: sqlite3.Connection) -> None:
    """Targets parsed again (MetaSchedule workloads are filed again by migration 19)."""
    reparse_targets(conn)


def _migration_19(conn: sqlite3.Connection) -> None:
    """MetaSchedule workloads filed again by the identity as it is now (`store.msidentities`):
    a module hashed as the tree TVM compares (shared objects, a map's order), a graph whose
    8-byte header starts with `{`, infinite and NaN constants, a module's functions in any
    order, relax dataflow variables' names and op attributes' plain ints as TVM reads them."""
    from tunelog.store.msidentities import refile_metaschedule_workloads

    if refile_metaschedule_workloads(conn):
        from tunelog.store.workloadfacts import fill_workload_facts

        fill_workload_facts(conn)


def reparse_targets(conn: sqlite3.Connection) -> list[int]:
    """Each stored target's kind, keys and model as `parse_target` reads its string now; the
    ids of those that changed (their workloads' slots offered again)."""
    import json  # here: the schema's modules load with every command, this runs once

    from tunelog.exceptions import TargetParseError
    from tunelog.targets import parse_target

    changed: list[tuple[str, str, str, int]] = []
    for target_id, target, kind, keys, model in conn.execute(
        "SELECT id, target, kind, keys, model FROM targets"
    ).fetchall():
        try:
            parsed = parse_target(target)
        except TargetParseError:
            continue  # stored as it was read (a MetaSchedule target's text, say)
        now = (parsed.kind, json.dumps(list(parsed.keys)), parsed.model)
        if now != (kind, keys, model):
            changed.append((*now, int(target_id)))
    if changed:
        from tunelog.store.removal import recompute_slots_of_targets

        conn.executemany("UPDATE targets SET kind = ?, keys = ?, model = ? WHERE id = ?", changed)
        recompute_slots_of_targets(conn, [target_id for *_, target_id in changed])
    return [target_id for *_, target_id in changed]
