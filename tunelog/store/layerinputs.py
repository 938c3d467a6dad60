"""What the layer listings read from the Store (`layers.build_layers`'s inputs)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import (
    Callable,
    Collection,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any

from tunelog.store.connection import Connection
from tunelog.store.layersql import (
    EVERY_LAYER_SQL,
    FAILING_ONLY_SQL,
    GROUP_TALLIES_SQL,
    LAYER_TABLES,
    MODEL_SLOT_LAYERS_SQL,
    PLACES_SQL,
    layer_rows_sql,
)

if TYPE_CHECKING:
    from tunelog.layers import Candidate, SlotWinner, Tally, TargetGroup
    from tunelog.workloadinfo import WorkloadInfo

SlotKey = tuple[str, str, int]


class LayerInputs(Connection):
    """Targets, workloads, tallies and slot winners, read from the small tables only."""

    def layer_inputs(
        self,
    ) -> tuple[list[tuple[int, str]], list[WorkloadInfo], list[Tally], dict[SlotKey, SlotWinner]]:
        """Targets, workloads, tallies and slot winners: what `layers.build_layers` needs.

        Reads only the small tables (never scans records), so it stays fast on large databases.
        """
        with self.snapshot():
            return self._layer_inputs()

    def _layer_inputs(
        self,
    ) -> tuple[list[tuple[int, str]], list[WorkloadInfo], list[Tally], dict[SlotKey, SlotWinner]]:

        from tunelog.layers import SlotWinner, Tally
        from tunelog.workloadinfo import WorkloadInfo

        targets = [(int(i), str(t)) for i, t in self.conn.execute("SELECT id, target FROM targets")]
        from tunelog.store.workloadfacts import FACT_COLUMNS, FactsReader

        decoded = FactsReader()
        workloads = [
            WorkloadInfo(
                int(i),
                task,
                tkey,
                args,
                version,
                spelling,
                decoded(task, tkey, args, version, spelling, facts),
            )
            for i, task, tkey, args, version, spelling, *facts in self.conn.execute(
                "SELECT id, task_name, template_key, args, version, spelling, "
                f"{FACT_COLUMNS} FROM workloads ORDER BY id"
            )
        ]
        tallies = [Tally(*row) for row in self.conn.execute("SELECT * FROM tallies")]
        slots = {
            (kind, name, workload_id): SlotWinner(record_id, mean, index, path, line, target)
            for kind, name, workload_id, record_id, mean, index, path, line, target in (
                self.conn.execute(
                    """SELECT s.kind, s.name, s.workload_id, s.record_id, s.mean_cost,
                              r.config_index, src.path, r.line, t.target
                       FROM slots s JOIN records r ON r.id = s.record_id
                       JOIN sources src ON src.id = r.source_id
                       JOIN targets t ON t.id = r.target_id"""
                )
            )
        }
        return targets, workloads, tallies, slots

    def layer_candidates(
        self,
        for_groups: Sequence[TargetGroup] | None = None,
        *,
        unseen_models: bool = False,
        failing_only: bool = False,
        only_targets: Collection[str] | None = None,
    ) -> Generator[tuple[TargetGroup, str, list[Candidate]], None, None]:
        """Each (target group, layer key) with records, and its candidate templates, in the
        order `workloads` lists layers: `layers.layers_of`'s input, read one layer at a time.

        A layer's place is its first (workload id, target id) among the group's tallies; its
        candidates are the workloads of its layer key (in id order) tuned on the group or
        answered for it by a slot the group's query asks. `for_groups`: these groups' layers
        only (targets the log may never have seen), every layer key with a candidate of each,
        group after group, each group's in the order of their first workload. `unseen_models`
        (without `for_groups`): the database's groups and, in the same pass, the same for each
        of their keys with a model the log never saw, each such layer placed just before the
        database's layers of its first workload (an order for answers that are sets: a
        workload's layers come together, so it is built once). `failing_only`: only the layers
        with a failed record on the group (`rules.failedrecords`), each whole and in its place:
        what `errors` lists, read without the layers that have none. `only_targets`: the
        groups are made of these targets alone (`--target`: their records are the tallies; an
        answer may still be another target's record, as TVM's is).
        """
        from tunelog.layers import TargetGroup, group_targets
        from tunelog.targets import UNKNOWN_MODEL

        targets = [(int(i), str(t)) for i, t in self.conn.execute("SELECT id, target FROM targets")]
        by_target = group_targets(
            [(i, t) for i, t in targets if only_targets is None or t in only_targets]
        )
        groups: list[TargetGroup] = []
        members: list[tuple[int, int]] = []
        if for_groups is None:
            numbers: dict[tuple[tuple[str, ...], str], int] = {}
            for target_id, group in by_target.items():
                number = numbers.setdefault((group.keys, group.model), len(groups))
                if number == len(groups):
                    groups.append(group)
                members.append((target_id, number))
            every_layer_of = [
                TargetGroup(keys, UNKNOWN_MODEL, ())
                for keys in dict.fromkeys(g.keys for g in groups)
                if unseen_models
            ]
        else:
            every_layer_of = list(for_groups)
        seen_groups = len(groups)  # these placed by their tallies, the rest by layer key
        for number, group in enumerate(every_layer_of, seen_groups):
            wanted = (group.keys, group.model)
            members += [(i, number) for i, g in by_target.items() if (g.keys, g.model) == wanted]
        groups += every_layer_of
        with self.snapshot():
            yield from self.streamed(
                self._read_layers(
                    groups,
                    members,
                    seen_groups,
                    targets,
                    interleaved=unseen_models,
                    failing_only=failing_only,
                )
            )

    def _read_layers(
        self,
        groups: list[TargetGroup],
        members: Sequence[tuple[int, int]],
        seen_groups: int,
        targets: Sequence[tuple[int, str]],
        *,
        interleaved: bool,
        failing_only: bool,
    ) -> Iterator[tuple[TargetGroup, str, list[Candidate]]]:
        """`LAYER_ROWS_SQL`'s layers of `groups` (the first `seen_groups` placed by their
        tallies, the others after them or, `interleaved`, among them), each candidate with its
        workload (`members`: each target id's group number); `failing_only`: the layers with a
        failed record only (`FAILING_ONLY_SQL`)."""
        (target_scale,) = self.conn.execute(
            "SELECT coalesce(max(id), 0) + 1 FROM targets"
        ).fetchone()
        (workload_scale,) = self.conn.execute(
            "SELECT coalesce(max(id), 0) + 1 FROM workloads"
        ).fetchone()
        # The places of the groups placed by layer key come after all the others.
        after_seen = workload_scale * target_scale
        # Tables of this stream's own: another stream of the same store may be read at the
        # same time.
        self._drop_leftover_tables()
        stream = next(_STREAMS)
        tables = {name: f"temp.layer_{name}_{stream}" for name in LAYER_TABLES}
        sources = {
            int(i): str(path) for i, path in self.conn.execute("SELECT id, path FROM sources")
        }
        rows = None
        try:
            self._fill_layer_tables(
                groups,
                members,
                tables,
                {
                    "target_scale": target_scale,
                    "seen_groups": seen_groups,
                    "after_seen": after_seen,
                    "workload_scale": workload_scale,
                    "interleaved": interleaved,
                    "spread": len(groups) - seen_groups + 1 if interleaved else 1,
                },
                failing_only=failing_only,
            )
            # Read in place order (SQLite sorts nothing): narrow rows (ids, numbers), each
            # workload's columns read apart, once per stretch of layers that list it
            # (`_layer_candidates`).
            rows = self.conn.execute(layer_rows_sql(tables))
            yield from _layer_candidates(rows, groups, self._workload_rows, sources, dict(targets))
        finally:
            if not self.closed:  # else the statement and the tables went with the connection
                if rows is not None:
                    rows.close()  # a stream left early: its statement ends before the drops
                self.leftover_tables += tables.values()
                self._drop_leftover_tables()

    def _drop_leftover_tables(self) -> None:
        """Drop the streams' temporary tables, unless another statement of the connection is
        being read (SQLite drops no table then): those wait for the next stream."""
        while self.leftover_tables:
            try:
                self.conn.execute(f"DROP TABLE IF EXISTS {self.leftover_tables[-1]}")
            except sqlite3.OperationalError:  # "database table is locked"
                return
            self.leftover_tables.pop()

    def _workload_rows(self, ids: Iterable[int]) -> list[tuple[Any, ...]]:
        """The columns `_layer_candidates` builds a workload from, of these workload ids."""
        from tunelog.store.workloadfacts import FACT_COLUMNS

        wanted = ",".join(str(int(i)) for i in ids)
        return self.conn.execute(
            "SELECT id, task_name, template_key, args, version, spelling, "
            f"{FACT_COLUMNS} FROM workloads WHERE id IN ({wanted})"
        ).fetchall()

    def _fill_layer_tables(
        self,
        groups: Sequence[TargetGroup],
        members: Sequence[tuple[int, int]],
        tables: Mapping[str, str],
        places: Mapping[str, object],
        *,
        failing_only: bool,
    ) -> None:
        """The temporary tables `LAYER_ROWS_SQL` reads: each target's group, each group's
        query, the groups' tallies and each layer's place (`places`: PLACES_SQL's numbers;
        `failing_only`: the places of layers with a failed record only)."""
        from tunelog.rules.slots import asked_rows, query_slots

        for name, columns in LAYER_TABLES.items():
            self.conn.execute(f"CREATE TABLE {tables[name]} {columns}")
        self.conn.executemany(f"INSERT INTO {tables['groups']} VALUES (?, ?)", members)
        for number, group in enumerate(groups):
            self.conn.executemany(
                f"INSERT INTO {tables['asks']} VALUES (?, ?, ?, ?)",
                asked_rows(number, query_slots(group.keys, group.model)),
            )
        self.conn.execute(GROUP_TALLIES_SQL.format(**tables))
        chosen = FAILING_ONLY_SQL if failing_only else EVERY_LAYER_SQL
        conditions = {name: text.format(**tables) for name, text in chosen.items()}
        self.conn.execute(PLACES_SQL.format(**conditions, **tables), places)
        if places["interleaved"] and not failing_only:  # `unseen_models`: every answer counts
            self.conn.execute(MODEL_SLOT_LAYERS_SQL.format(**tables), places)


RECENT_WORKLOADS = 1024  # at 80k workloads, as many reuses as keeping every workload
ROWS_READ = 512  # rows read at a time: their workloads not kept are read in one query
_STREAMS = itertools.count()  # names each `layer_candidates` stream's tables


def _layer_candidates(
    rows: sqlite3.Cursor,
    groups: Sequence[TargetGroup],
    workload_rows: Callable[[Iterable[int]], Iterable[Sequence[Any]]],
    sources: Mapping[int, str],
    targets: Mapping[int, str],
) -> Iterator[tuple[TargetGroup, str, list[Candidate]]]:
    """`LAYER_ROWS_SQL`'s rows (one per candidate and error number) as layers of candidates,
    each with its workload (`workload_rows`: the columns of workloads by id; `sources` and
    `targets`: each id's path and target string)."""
    from tunelog.layers import SlotWinner, TemplateResult

    workloads = _RecentWorkloads(workload_rows)
    place = None
    group = groups[0] if groups else None
    candidates: list[Candidate] = []
    workload_id = -1
    tuned: TemplateResult | None = None
    while chunk := rows.fetchmany(ROWS_READ):
        recent = workloads.of(row[2] for row in chunk)
        for (
            row_place, group_no, row_workload, error_no, records, low, high,
            record_id, mean, config_index, source_id, line, target_id,
        ) in chunk:  # fmt: skip
            if row_place != place:
                if candidates and group is not None:
                    yield group, candidates[0][0].stored.layer_key, candidates
                place, group = row_place, groups[group_no]
                candidates, workload_id = [], -1
            if row_workload != workload_id:
                workload_id = row_workload
                info = recent[workload_id]
                tuned = None if error_no is None else TemplateResult(info)
                answer = None
                if record_id is not None:
                    answer = SlotWinner(
                        record_id, mean, config_index, sources[source_id], line, targets[target_id]
                    )
                candidates.append((info, tuned, answer))
            if tuned is not None:
                tuned.errors[error_no] = records
                tuned.all_cost_range[error_no] = (low, high)
    if candidates and group is not None:
        # Every candidate of a layer has its layer key (`members` joins on it).
        yield group, candidates[0][0].stored.layer_key, candidates


class _RecentWorkloads:
    """The workloads of the rows read last, each built once while it keeps being listed.

    A workload is a candidate of its layer in each group (125k candidates of 40k workloads at
    80k), and the groups' layers of one workload come close together in layer order: the
    RECENT_WORKLOADS listed last are kept (least recently listed first), and those of a chunk
    of rows that are not are read in one query (one per workload costs as much as the rest).
    """

    def __init__(self, workload_rows: Callable[[Iterable[int]], Iterable[Sequence[Any]]]):
        from tunelog.store.workloadfacts import FactsReader

        self._read = workload_rows
        self._decoded = FactsReader()
        self._kept: dict[int, WorkloadInfo] = {}

    def of(self, ids: Iterable[int]) -> dict[int, WorkloadInfo]:
        """The kept workloads, these ids' among them (listed last)."""
        from tunelog.workloadinfo import WorkloadInfo

        kept = self._kept
        wanted = dict.fromkeys(ids)
        missing = []
        for workload_id in wanted:
            info = kept.pop(workload_id, None)
            if info is None:
                missing.append(workload_id)
            else:
                kept[workload_id] = info  # listed last
        if missing:
            decoded = self._decoded
            for workload_id, task, template_key, args, version, spelling, *facts in self._read(
                missing
            ):
                kept[workload_id] = WorkloadInfo(
                    workload_id,
                    task,
                    template_key,
                    args,
                    version,
                    spelling,
                    decoded(task, template_key, args, version, spelling, facts),
                )
        excess = len(kept) - max(RECENT_WORKLOADS, len(wanted))
        for workload_id in list(itertools.islice(kept, excess)) if excess > 0 else ():
            del kept[workload_id]  # the least recently listed
        return kept
