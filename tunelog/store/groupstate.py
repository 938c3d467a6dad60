"""A file's per-(target, workload) state while it is imported, and how it is stored.

The importer (store.importer) keeps one `Group` per (target, workload) it reads, up to
GROUPS_HELD of them, and hands them to `GroupStore.store`, which merges each part with what the
database holds: counts add up in `tallies`, the best record is offered to its `slots` by the
best-record rule (rules.bestrecord, in any order of offers), configs are ranked again into
`top_configs` (rules.ranking) and runs are joined in `trial_runs` (rules.bestsofar). So memory
does not grow with the number of workloads, and a (target, workload) seen again later in the
file is simply stored again.
"""

from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

from tunelog.rules.bestrecord import OFFER_SLOT_SQL
from tunelog.rules.bestsofar import joined
from tunelog.rules.ranking import best_configs, better_config
from tunelog.rules.slots import slots_of
from tunelog.store.codec import improvements_text
from tunelog.store.schema import TOP_CONFIGS_KEPT
from tunelog.targets import Target

# (target, workload) groups held in memory between two stores of their state: what the
# file's per-workload state costs is bounded by this, whatever the number of workloads.
GROUPS_HELD = 4096


class Group:
    """One (target, workload) of the file: its ids, best valid record, tallies by error."""

    __slots__ = (
        "best_id",
        "best_mean",
        "config_ids",
        "config_means",
        "first_id",
        "improvements",
        "key",
        "last_id",
        "spelling",
        "start",
        "tallies",
        "target_id",
        "top_bound",
        "trials",
        "version",
        "workload_id",
    )

    def __init__(self, target_id: int, workload_id: int) -> None:
        self.target_id = target_id
        # 0 until looked up (importer.ImportWriter._resolve_workloads), from `key` and `spelling`.
        self.workload_id = workload_id
        self.key: tuple[str, str, str, str] | None = None
        self.spelling: str | None = None
        self.version = ""  # the log version picks the slots (rules.slots.slots_of)
        self.best_mean = math.inf
        self.best_id: int | None = None
        # Per config index, its best valid record in this file (two dicts of scalars rather
        # than one of tuples: nothing for the garbage collector to traverse).
        self.config_means: dict[int, float] = {}
        self.config_ids: dict[int, int] = {}
        self.top_bound = math.inf
        # Per error number: [records, min all_cost, max all_cost].
        self.tallies: dict[int, list[float]] = {}
        # The file's run of this (target, workload), for convergence (see _store_trial_runs).
        self.trials = 0
        self.first_id = self.last_id = -1
        self.start = math.inf
        self.improvements: list[tuple[int, float]] = []

    def keep_top_configs(self) -> None:
        """Forget all but the TOP_CONFIGS_KEPT best configs (by mean, then record id).

        A config forgotten here was beaten by that many others, which only get better, so it
        cannot be among the group's best at the end of the file; nor can a record that does not
        beat the last config kept (`top_bound`).
        """
        if len(self.config_means) <= TOP_CONFIGS_KEPT:
            return
        kept = self.ranked_configs()[:TOP_CONFIGS_KEPT]
        self.config_means = {index: mean for mean, _, index in kept}
        self.config_ids = {index: record_id for _, record_id, index in kept}
        self.top_bound = kept[-1][0]

    def ranked_configs(self) -> list[tuple[float, int, int]]:
        """`(mean, record id, config index)` of the configs known, best first (the ranking of
        rules.ranking.best_configs, flattened: this runs once per group)."""
        # The two dicts hold the same keys in the same order (set and deleted together).
        means, ids = self.config_means, self.config_ids
        return sorted(zip(means.values(), ids.values(), means, strict=True))


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

        The groups' best records are offered to each slot they compete for (rules.slots.slots_of)
        through `rules.bestrecord.OFFER_SLOT_SQL`: the best-record rule as an upsert, in any
        order of offers (of equal means the smaller id, the earlier record, wins), so holders
        need not be read first. A duplicate never holds a slot: its first copy has the same
        mean and a smaller id.
        """
        names: dict[tuple[int, str], list[tuple[str, str]]] = {}
        rows: list[tuple[str, str, int, int, float]] = []
        offered = sorted(
            ((g.best_id, g) for g in groups if g.best_id is not None), key=lambda item: item[0]
        )
        for best_id, g in offered:
            pairs = names.get((g.target_id, g.version))
            if pairs is None:
                target = self.targets_by_id[g.target_id]
                pairs = [(slot.kind, slot.name) for slot in slots_of(target, "", g.version)]
                names[(g.target_id, g.version)] = pairs
            rows += [(kind, name, g.workload_id, best_id, g.best_mean) for kind, name in pairs]
        self.conn.executemany(OFFER_SLOT_SQL, rows)

    def _store_trial_runs(self, groups: list[Group]) -> None:
        """One `trial_runs` row per (target, workload) of the file: its trials in file order.

        What convergence needs (convergence.Progress: trials, valid trials, each new best with
        its trial number) and where the run starts (earliest timestamp, first and last record
        id), counted on the hot path. A run stored before (earlier in this file, or the lines
        a resumed source held) is joined with the groups' (as convergence.Progress.extend).
        """
        earlier = self._stored_runs(groups)
        rows = []
        for g in groups:
            trials = g.trials
            if trials == 0:
                continue
            valid = int(g.tallies[0][0]) if 0 in g.tallies else 0
            start, first_id, improvements = g.start, g.first_id, g.improvements
            before = earlier.get((g.target_id, g.workload_id))
            if before is not None:
                old_trials, old_valid, old_start, old_first, old_improvements = before
                stored = [(int(n), float(c)) for n, c in json.loads(old_improvements)]
                improvements = joined(stored, old_trials, g.improvements)
                trials, valid = trials + old_trials, valid + old_valid
                start, first_id = min(start, old_start), min(first_id, old_first)
            rows.append(
                (
                    self.source_id,
                    g.target_id,
                    g.workload_id,
                    trials,
                    valid,
                    start,
                    first_id,
                    g.last_id,
                    improvements_text(improvements),
                )
            )
        self.conn.executemany(
            "INSERT OR REPLACE INTO trial_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
        )

    def _stored_runs(self, groups: list[Group]) -> dict[tuple[int, int], tuple[Any, ...]]:
        """The source's stored runs of these groups: {(target, workload): (trials, valid,
        start, first id, improvements)}, read a few hundred workloads a query."""
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
            g.trials += 1
            g.start = min(g.start, timestamp)
            if error_no == 0:
                g.tallies[0] = [g.tallies[0][0] + 1, 0.0, 0.0] if 0 in g.tallies else [1, 0.0, 0.0]
                if mean < g.best_mean:
                    g.best_mean = mean
                    g.improvements.append((g.trials, mean))
        self._store_trial_runs(groups)

    def _store_top_configs(self, groups: list[Group]) -> None:
        """Merge the file's best configs per (target, workload) into `top_configs`.

        Each (target, workload) keeps its TOP_CONFIGS_KEPT best configs, each with its best
        record, ranked by (mean cost, record id): the earliest of equal means first, as the
        slots rank. A slot's K best distinct configs (K <= TOP_CONFIGS_KEPT) are always among
        the kept configs of its targets, so `export --top-k` reads this small table instead of
        sorting every valid record. A duplicate (dropped later, see `_deduplicate`) never ranks:
        its first copy has the same config and mean and a smaller id, and is ranked first (or
        already kept) in the same group.
        """
        rows: list[tuple[int, int, int, int, float]] = []
        merged: list[Group] = []
        for g in groups:
            if not g.config_ids:
                continue
            g.keep_top_configs()
            if g.workload_id in self.new_workloads:
                # Nothing kept before, nothing dropped: the file's configs are the ranking.
                ids = (g.target_id, g.workload_id)
                rows += [(*ids, index, rid, mean) for mean, rid, index in g.ranked_configs()]
            else:
                merged.append(g)
        kept = self._kept_top_configs(merged)
        for g in merged:
            ids = (g.target_id, g.workload_id)
            candidates = kept.get(ids, {})
            for index, rid in g.config_ids.items():
                better_config(candidates, index, (g.config_means[index], rid))
            best = best_configs(candidates, TOP_CONFIGS_KEPT)
            rows += [(*ids, index, rid, mean) for (mean, rid), index in best]
        self.conn.executemany(
            "DELETE FROM top_configs WHERE target_id = ? AND workload_id = ?", list(kept)
        )
        self.conn.executemany("INSERT INTO top_configs VALUES (?, ?, ?, ?, ?)", rows)

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
