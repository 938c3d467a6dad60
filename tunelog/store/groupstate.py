"""A file's per-(target, workload) state while it is imported, and how it is stored.

The importer (store.importer) keeps one `Group` per (target, workload) it reads, up to
GROUPS_HELD of them, and hands them to `GroupStore.store`, which merges each part with what the
database holds: counts add up in `tallies`, the best record is offered to its `slots` by the
best-record rule (rules.bestrecord, in any order of offers), configs are ranked again into
`top_config_ids` (rules.ranking) and runs are joined in `trial_runs` (rules.bestsofar). So memory
does not grow with the number of workloads, and a (target, workload) seen again later in the
file is simply stored again.
"""

from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

from tunelog.convergence import run_marks
from tunelog.rules.bestrecord import OFFER_SLOT_SQL, beats
from tunelog.rules.bestsofar import BestSoFar
from tunelog.rules.ranking import TopConfigs
from tunelog.rules.slots import slots_of
from tunelog.store.codec import improvements_text
from tunelog.store.migrations_tables import TOP_CONFIGS_KEPT
from tunelog.targets import Target

# (target, workload) groups held in memory between two stores of their state: what the
# file's per-workload state costs is bounded by this, whatever the number of workloads.
GROUPS_HELD = 4096


class Group:
    """One (target, workload) of the file: its ids, its run (rules.bestsofar: the best record
    is the trial of its last improvement), its best configs (rules.ranking), its tallies."""

    __slots__ = (
        "best_id",
        "first_id",
        "last_id",
        "run",
        "start",
        "tallies",
        "target_id",
        "top",
        "version",
        "workload_id",
    )

    def __init__(self, target_id: int, workload_id: int) -> None:
        self.target_id = target_id
        # Provisional until the batch's new workloads are looked up (store.importids).
        self.workload_id = workload_id
        self.version = ""  # the log version picks the slots (rules.slots.slots_of)
        # The file's trials of this (target, workload) in file order, for convergence and the
        # best record (the id of the trial that last improved).
        self.run = BestSoFar()
        self.best_id: int | None = None
        self.top = TopConfigs(TOP_CONFIGS_KEPT)
        # Per error number: [records, min all_cost, max all_cost].
        self.tallies: dict[int, list[float]] = {}
        self.first_id = self.last_id = -1
        self.start = math.inf


class GroupStore:
    """Stores groups of one source's import into the open transaction."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        source_id: int,
        targets_by_id: dict[int, Target],
        new_workloads: set[int],
        *,
        runs_snapshot: bool,
    ) -> None:
        """`targets_by_id` and `new_workloads` are the importer's, filled as it reads:
        the workloads the file added whose groups were not stored yet (none of them has
        kept configs). `runs_snapshot`: `temp.runs_before` holds the source's runs as they
        were before this file (a resumed source), for `recount_runs`."""
        self.conn = conn
        self.source_id = source_id
        self.targets_by_id = targets_by_id
        self.new_workloads = new_workloads
        self.runs_snapshot = runs_snapshot

    def store(self, groups: list[Group]) -> None:
        """Store the groups' tallies, slot offers, best configs and runs."""
        self._store_tallies(groups)
        self._store_slots(groups)
        self._store_top_configs(groups)
        self._store_trial_runs(groups)
        self.new_workloads.difference_update(g.workload_id for g in groups)

    def _store_tallies(self, groups: list[Group]) -> None:
        self.conn.executemany(
            """INSERT INTO tallies (target_id, workload_id, error_no, records, min_all_cost,
                                    max_all_cost)
               VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (target_id, workload_id, error_no) DO UPDATE
               SET records = records + excluded.records,
                   min_all_cost = min(min_all_cost, excluded.min_all_cost),
                   max_all_cost = max(max_all_cost, excluded.max_all_cost)""",
            [
                (g.target_id, g.workload_id, error_no, int(n), lo, hi)
                for g in groups
                for error_no, (n, lo, hi) in g.tallies.items()
            ],
        )

    def _store_slots(self, groups: list[Group]) -> None:
        """Offer each group's best record to its slots, by ApplyHistoryBest's own rule.

        The groups' best records are offered to each slot they compete for (rules.slots.slots_of):
        first among themselves (`rules.bestrecord.beats`: groups of several targets compete
        for one slot), then the winners through `rules.bestrecord.OFFER_SLOT_SQL`, the rule as
        an upsert, in any order of offers (of equal means the smaller id, the earlier record,
        wins), so holders need not be read first. A duplicate never holds a slot: its first
        copy has the same mean and a smaller id.
        """
        names: dict[tuple[int, str], list[tuple[str, str]]] = {}
        offers: dict[tuple[str, str, int], tuple[float, int]] = {}
        for g in groups:
            best_id = g.best_id
            if best_id is None:
                continue
            pairs = names.get((g.target_id, g.version))
            if pairs is None:
                target = self.targets_by_id[g.target_id]
                pairs = [(slot.kind, slot.name) for slot in slots_of(target, "", g.version)]
                names[(g.target_id, g.version)] = pairs
            mean = g.run.best
            for kind, name in pairs:
                slot = (kind, name, g.workload_id)
                held = offers.get(slot)
                if held is None or beats(mean, best_id, *held):
                    offers[slot] = (mean, best_id)
        self.conn.executemany(
            OFFER_SLOT_SQL,
            [(kind, name, wid, rid, mean) for (kind, name, wid), (mean, rid) in offers.items()],
        )

    def _store_trial_runs(self, groups: list[Group]) -> None:
        """One `trial_runs` row per (target, workload) of the file: its trials in file order.

        What convergence needs (convergence.Progress: trials, valid trials, each new best with
        its trial number, and their `convergence.run_marks`, which the listings read) and
        where the run starts (earliest timestamp, first and last record id), counted on the
        hot path. A run stored before (earlier in this file, or the lines
        a resumed source held) is joined with the groups' (`BestSoFar.extend`); a workload the
        file added and has not stored yet has none.
        """
        earlier = self._stored_runs([g for g in groups if g.workload_id not in self.new_workloads])
        rows = []
        for g in groups:
            run = g.run
            if run.trials == 0:
                continue
            start, first_id = g.start, g.first_id
            before = earlier.get((g.target_id, g.workload_id))
            if before is not None:
                old_trials, old_valid, old_start, old_first, old_improvements = before
                stored = [(int(n), float(c)) for n, c in json.loads(old_improvements)]
                joined = BestSoFar(int(old_trials), int(old_valid), stored)
                joined.extend(run)
                run = joined
                start, first_id = min(start, old_start), min(first_id, old_first)
            rows.append(
                (
                    self.source_id,
                    g.target_id,
                    g.workload_id,
                    run.trials,
                    run.valid,
                    start,
                    first_id,
                    g.last_id,
                    improvements_text(run.improvements),
                    *run_marks(run.improvements),
                )
            )
        self.conn.executemany(
            "INSERT OR REPLACE INTO trial_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
        )

    def _stored_runs(self, groups: list[Group]) -> dict[tuple[int, int], tuple[Any, ...]]:
        """The source's stored runs of these groups: {(target, workload): (trials, valid,
        start, first id, improvements)}, read a few hundred workloads a query."""
        if not groups:
            return {}
        wanted: dict[int, list[int]] = {}
        for g in groups:
            wanted.setdefault(g.target_id, []).append(g.workload_id)
        runs: dict[tuple[int, int], tuple[Any, ...]] = {}
        for target_id, workload_ids in wanted.items():
            for start in range(0, len(workload_ids), 500):
                marks = ",".join(str(int(i)) for i in workload_ids[start : start + 500])
                for row in self.conn.execute(
                    "SELECT workload_id, trials, valid, start, first_id, improvements "
                    f"FROM trial_runs WHERE source_id = ? AND target_id = ? "
                    f"AND workload_id IN ({marks})",
                    (self.source_id, target_id),
                ):
                    runs[(target_id, int(row[0]))] = row[1:]
        return runs

    def recount_runs(self, first_id: int) -> None:
        """The file's runs counted again from its stored records, after duplicates were
        dropped (a duplicate is no trial of this file).

        The runs stored batch by batch are replaced by the source's runs as they were before
        this file, joined with the recount; the records are read grouped by (target,
        workload), so one group is held at a time.
        """
        conn = self.conn
        conn.execute("DELETE FROM trial_runs WHERE source_id = ?", (self.source_id,))
        if self.runs_snapshot:
            conn.execute("INSERT INTO trial_runs SELECT * FROM temp.runs_before")
        groups: list[Group] = []
        g: Group | None = None
        for record_id, target_id, workload_id, error_no, mean, timestamp in conn.execute(
            """SELECT id, target_id, workload_id, error_no, mean_cost, timestamp FROM records
               WHERE id >= ? ORDER BY target_id, workload_id, id""",
            (first_id,),
        ):
            if g is None or g.target_id != target_id or g.workload_id != workload_id:
                if len(groups) >= GROUPS_HELD:
                    self._store_trial_runs(groups)
                    groups = []
                g = Group(target_id, workload_id)
                g.first_id = record_id
                groups.append(g)
            g.last_id = record_id
            g.start = min(g.start, timestamp)
            g.run.add(mean, error_no)
        self._store_trial_runs(groups)

    def _store_top_configs(self, groups: list[Group]) -> None:
        """Merge the file's best configs per (target, workload) into `top_config_ids`.

        Each (target, workload) keeps its TOP_CONFIGS_KEPT best configs, each with its best
        record, ranked by (mean cost, record id): the earliest of equal means first, as the
        slots rank. A slot's K best distinct configs (K <= TOP_CONFIGS_KEPT) are always among
        the kept configs of its targets, so `export --top-k` reads these few records instead
        of sorting every valid record. They are stored as one JSON list of record ids per
        (target, workload) (migration 13; the `top_configs` view reads them back with their
        config and mean). A duplicate (dropped later: store.deduplication) never ranks: its
        first copy has the same config and mean and a smaller id, and is ranked first (or
        already kept) in the same group.
        """
        rows: list[tuple[int, int, str]] = []
        merged: list[Group] = []
        for g in groups:
            if not g.top:
                continue
            if g.workload_id in self.new_workloads:
                # Nothing kept before: the file's configs are the ranking. A list of ints
                # prints as JSON.
                rows.append((g.target_id, g.workload_id, str(g.top.kept_record_ids())))
            else:
                merged.append(g)
        kept = self._kept_top_configs(merged)
        for g in merged:
            best = g.top.merged(kept.get((g.target_id, g.workload_id), {}))
            rows.append((g.target_id, g.workload_id, str([rid for (_, rid), _ in best])))
        self.conn.executemany("INSERT OR REPLACE INTO top_config_ids VALUES (?, ?, ?)", rows)

    def _kept_top_configs(
        self, groups: list[Group]
    ) -> dict[tuple[int, int], dict[int, tuple[float, int]]]:
        """The configs kept before for these groups: {(target, workload): {index: (mean, id)}}.

        Read per target, a few hundred workloads a query (through the primary key), instead
        of a query per group: a directory of logs adds records to thousands of workloads.
        """
        wanted: dict[int, list[int]] = {}
        for g in groups:
            if g.workload_id not in self.new_workloads:
                wanted.setdefault(g.target_id, []).append(g.workload_id)
        kept: dict[tuple[int, int], dict[int, tuple[float, int]]] = {}
        for target_id, workload_ids in wanted.items():
            for start in range(0, len(workload_ids), 500):
                marks = ",".join(str(i) for i in workload_ids[start : start + 500])
                for workload_id, index, rid, mean in self.conn.execute(
                    "SELECT workload_id, config_index, record_id, mean_cost FROM top_configs "
                    f"WHERE target_id = ? AND workload_id IN ({marks})",
                    (target_id,),
                ):
                    kept.setdefault((target_id, workload_id), {})[index] = (mean, rid)
        return kept
