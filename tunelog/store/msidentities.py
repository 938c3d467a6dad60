"""MetaSchedule workloads filed again under the identity rule as it is now (migration 17).

A MetaSchedule workload is stored under its module's structural identity
(`tunelog.msmodule.structural_identity`, in `workloads.args`), recomputed here from each
workload's stored line (`workloads.spelling`) and each record's own line (`record_spellings`).
A workload whose identity only changed is renamed in place. Workloads that are now one (two
modules that are one to TVM, split before: their buffers repeated names differently), or a
record whose own line now names another workload, are stored again: every import from the
first that holds one of their records is replayed from its stored lines under the new
identities (`store.removal.store_again_from`), so slots, tallies, duplicates and accounting are
those of importing the files again; but for the records of a workload line TVM cannot read,
which an import now rejects and this keeps (filed under the line's text, as before).
Migration 19 runs it (17 did, by the rule of its day); it changes only what differs.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from tunelog.versions import METASCHEDULE_VERSION


class _Identities:
    """Each stored line's identity as the rule files it now (each line read once)."""

    def __init__(self) -> None:
        self._args: dict[str, str | None] = {}

    def filed(self, spelling: str | None, before: str) -> str:
        """The arguments the line is filed under now (`before` if it cannot be read)."""
        from tunelog.metaschedule import workload_args

        if spelling is None:
            return before
        if spelling not in self._args:
            self._args[spelling] = workload_args(spelling)
        return self._args[spelling] or before


def _migration_17(conn: sqlite3.Connection) -> None:
    """Nothing, since migration 19 files MetaSchedule workloads again by the rule as it is now
    (a database at 17 or 18 is filed again there; filing at 17 too would hash every workload
    twice). It first filed them by the rule of its day: tvm-ffi's value nodes read in."""


def refile_metaschedule_workloads(conn: sqlite3.Connection) -> bool:
    """Bring every stored MetaSchedule workload to the current identity rule; whether one
    was filed otherwise (its facts are then to be computed: `fill_workload_facts`)."""
    stored = conn.execute(
        "SELECT id, args, spelling, template_key FROM workloads WHERE version = ?",
        (METASCHEDULE_VERSION,),
    ).fetchall()
    if not stored:
        return False
    identities = _Identities()
    filed = {int(i): identities.filed(spelling, args) for i, args, spelling, _ in stored}
    # One workload is one identity measured by one TVM version (the template key: databases of
    # two versions never mix), as the table's UNIQUE has it.
    by_identity: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, _, _, release in stored:
        by_identity[(filed[int(i)], release)].append(int(i))
    joined = {i for ids in by_identity.values() if len(ids) > 1 for i in ids}
    for workload_id, spelling in conn.execute(
        """SELECT DISTINCT r.workload_id, t.spelling FROM record_spellings rs
           JOIN records r ON r.id = rs.record_id
           JOIN spelling_texts t ON t.id = rs.spelling_id
           JOIN workloads w ON w.id = r.workload_id WHERE w.version = ?""",
        (METASCHEDULE_VERSION,),
    ).fetchall():
        if identities.filed(spelling, filed[workload_id]) != filed[workload_id]:
            joined.add(int(workload_id))  # a record of it is now another workload's
    renamed = [int(i) for i, args, *_ in stored if filed[int(i)] != args and int(i) not in joined]
    # Through names no workload has: one renamed may take the identity another one had.
    conn.executemany(
        "UPDATE workloads SET args = 'renaming ' || id WHERE id = ?", [(i,) for i in renamed]
    )
    # Their facts (the layer key holds the identity) are computed again, as an import does.
    conn.executemany(
        """UPDATE workloads SET args = ?, layer_key = NULL, facts = NULL, family = NULL,
                                shapes = NULL, flops = NULL WHERE id = ?""",
        [(filed[i], i) for i in renamed],
    )
    if joined:
        _store_again(conn, sorted(joined), identities)
    return bool(renamed or joined)


def _store_again(conn: sqlite3.Connection, joined: list[int], identities: _Identities) -> None:
    """Replay every import from the first that holds a record of these workloads, each
    replayed line filed under its identity now."""
    from tunelog.store.removal import store_again_from

    ids = ",".join(str(i) for i in joined)
    (replay_from,) = conn.execute(
        f"""SELECT min(h.rowid) FROM holdings h WHERE EXISTS (
                SELECT 1 FROM records r WHERE r.id >= h.record_id
                AND r.id < h.record_id + h.count AND r.workload_id IN ({ids}))"""
    ).fetchone()
    if replay_from is None:  # no file holds a record of them: nothing to file
        return

    def refile(conn: sqlite3.Connection) -> None:
        conn.execute(
            """CREATE TEMP TABLE refiled (spelling TEXT, args TEXT, now TEXT,
                                          PRIMARY KEY (spelling, args))"""
        )
        conn.executemany(
            "INSERT INTO temp.refiled VALUES (?, ?, ?)",
            [
                (spelling, args, now)
                for spelling, args in conn.execute(
                    "SELECT DISTINCT spelling, args FROM temp.replay_lines WHERE version = ?",
                    (METASCHEDULE_VERSION,),
                ).fetchall()
                if (now := identities.filed(spelling, args)) != args
            ],
        )
        conn.execute(
            """UPDATE temp.replay_lines SET args = (
                   SELECT f.now FROM temp.refiled f
                   WHERE f.spelling = replay_lines.spelling AND f.args = replay_lines.args)
               WHERE version = ? AND EXISTS (
                   SELECT 1 FROM temp.refiled f
                   WHERE f.spelling = replay_lines.spelling AND f.args = replay_lines.args)""",
            (METASCHEDULE_VERSION,),
        )
        conn.execute("DROP TABLE temp.refiled")

    store_again_from(conn, int(replay_from), refile)
