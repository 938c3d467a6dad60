"""The ids of an imported file's targets and workloads: looked up once, new ones added.

A target is looked up (or added) the first time the file names it. A workload not known
without a query gets a provisional id at once (`workload`): the next free id, the one it keeps
if it is new. Workloads are resolved a batch at a time (`resolve`): the batch's provisional
workloads are looked up in one query through a temporary table joined on the workloads'
identity index, and the new ones inserted at once with their facts (store.workloadfacts;
computed here or by the worker process of store.factsbeside and written in later), so a
file of 80k workloads asks no query per workload, and its records rows are written with their
workload ids (only a batch that met workloads the database held has rows to renumber).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from tunelog.store.factsbeside import FactsBeside, WorkloadRow
from tunelog.store.groupstate import Group
from tunelog.targets import Target, parse_target

WorkloadKey = tuple[str, str, str, str]


class ImportIds:
    """Target and workload ids for one file's import, in the open transaction."""

    def __init__(
        self, conn: sqlite3.Connection, known_workloads: Mapping[WorkloadKey, int] | None
    ) -> None:
        """`known_workloads`: ids of workloads known to be in the database (see
        Store._known_workloads)."""
        self.conn = conn
        self.facts = FactsBeside(conn)
        self.target_ids: dict[str, int] = {}
        self.targets_by_id: dict[int, Target] = {}
        # Workload ids by identity, as looked up in this file since the groups were last
        # stored (a workload measured for several targets is looked up once); `forget` empties
        # it so that memory does not grow with the number of workloads.
        self.workload_ids: dict[WorkloadKey, int] = {}
        self.known_workloads = known_workloads if known_workloads is not None else {}
        # Ids given to the workloads this file adds, in order: [first_new, next_new) once the
        # first is given.
        self.first_new = self.next_new = 0
        # Workloads given a provisional id since the last `resolve`, in the order given (their
        # ids are consecutive): {key: (provisional id, spelling, groups)}.
        self.pending: dict[WorkloadKey, tuple[int, str | None, list[Group]]] = {}
        # Workloads this file added whose groups were not stored yet: no kept config or run of
        # theirs can exist, so the once-per-group lookups skip them (logs of best configs have
        # ~2 lines per workload). Emptied by store.groupstate.GroupStore as it stores them.
        self.new_workloads: set[int] = set()

    def target(self, target: str) -> int:
        """The id of a target string, added if new."""
        found = self.target_ids.get(target)
        if found is not None:
            return found
        parsed = parse_target(target)
        row = self.conn.execute("SELECT id FROM targets WHERE target = ?", (target,)).fetchone()
        if row is None:
            row = self.conn.execute(
                "INSERT INTO targets (target, kind, keys, model) VALUES (?, ?, ?, ?) RETURNING id",
                (target, parsed.kind, json.dumps(list(parsed.keys)), parsed.model),
            ).fetchone()
        target_id = int(row[0])
        self.target_ids[target] = target_id
        self.targets_by_id[target_id] = parsed
        return target_id

    def workload(self, key: WorkloadKey, spelling: str | None, group: Group) -> int:
        """The workload's id for a new group of it: known, or else provisional (the next free
        id) until `resolve` confirms or replaces it. `spelling`: the record's, kept if the
        workload is new (the first spelling seen, see schema migration 7)."""
        known = self.workload_ids.get(key) or self.known_workloads.get(key)
        if known:
            return known
        pending = self.pending.get(key)
        if pending is not None:
            pending[2].append(group)
            return pending[0]
        workload_id = self._next_id()
        self.pending[key] = (workload_id, spelling, [group])
        return workload_id

    def forget(self) -> None:
        """Forget the ids looked up so far (the groups that needed them are stored)."""
        self.workload_ids = {}

    def added(self) -> range:
        """The ids of the workloads this file added."""
        return range(self.first_new, self.next_new)

    def resolve(self) -> dict[int, int]:
        """Look the provisional workloads up, add the new ones; {provisional id: id} of those
        whose id changed (their groups have it; rows written with the provisional id must be
        given it).

        New workloads take the provisional ids from the first one on, in the order given, so
        ids are exactly as without provisional ones: a workload the database holds keeps its
        id, and the new ones after it move down."""
        if not self.pending:
            return {}
        pending = self.pending
        self.pending = {}
        keys = list(pending)
        found = self._look_up(keys)
        changed: dict[int, int] = {}
        added: list[WorkloadRow] = []
        next_new = pending[keys[0]][0]
        for n, key in enumerate(keys):
            provisional, spelling, groups = pending[key]
            workload_id = found.get(n)
            if workload_id is None:
                workload_id = next_new
                next_new += 1
                self.new_workloads.add(workload_id)
                added.append((workload_id, *key, spelling))
            if workload_id != provisional:
                changed[provisional] = workload_id
                for group in groups:
                    group.workload_id = workload_id
            self.workload_ids[key] = workload_id
        self.next_new = next_new
        self.conn.executemany(
            """INSERT INTO workloads (id, task_name, template_key, args, version, spelling,
                                      layer_key, facts, family, shapes, flops)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            # The facts (migration 12's columns) with them, or written in as the worker
            # process returns them.
            self.facts.inserted_rows(added),
        )
        return changed

    def _look_up(self, keys: list[WorkloadKey]) -> dict[int, int]:
        """{position in `keys`: workload id} of the keys the database holds."""
        conn = self.conn
        conn.execute(
            """CREATE TEMP TABLE IF NOT EXISTS wanted_workloads (
                   n INTEGER PRIMARY KEY, task_name TEXT, template_key TEXT, args TEXT,
                   version TEXT)"""
        )
        conn.executemany(
            "INSERT INTO temp.wanted_workloads VALUES (?, ?, ?, ?, ?)",
            [(n, *key) for n, key in enumerate(keys)],
        )
        found = dict(
            conn.execute(
                """SELECT t.n, w.id FROM temp.wanted_workloads t JOIN workloads w
                   ON w.task_name = t.task_name AND w.template_key = t.template_key
                      AND w.args = t.args AND w.version = t.version"""
            ).fetchall()
        )
        conn.execute("DELETE FROM temp.wanted_workloads")
        return found

    def _next_id(self) -> int:
        """The next free workload id (as SQLite would give it)."""
        if not self.next_new:
            top = self.conn.execute("SELECT max(id) FROM workloads").fetchone()[0]
            self.first_new = self.next_new = int(top or 0) + 1
        workload_id = self.next_new
        self.next_new += 1
        return workload_id
