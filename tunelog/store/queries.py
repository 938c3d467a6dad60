"""The Store's queries over slots and tallies: `best`, summaries and the slot filter SQL."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tunelog.filters import Filters
from tunelog.store.connection import id_list
from tunelog.store.sources import Sources
from tunelog.targets import parse_target

if TYPE_CHECKING:
    from tunelog.models import BestRow, SlotHolder, Stats
    from tunelog.store.codec import LineReader

# json and tunelog.selection (which loads json) are needed by a few queries only, and the
# codec (xxhash) by those that read stored lines: each is imported where it is used.


class Queries(Sources):
    """Slot winners (`best`), slot holders, counts, and the WHERE clause the filters make."""

    def stats(self) -> Stats:
        """Counts by target, template and error number."""
        c = self.conn

        def one(sql: str) -> int:
            return int(c.execute(sql).fetchone()[0])

        def table(sql: str, names: Sequence[str]) -> list[dict[str, object]]:
            return [dict(zip(names, row, strict=True)) for row in c.execute(sql)]

        with self.snapshot():
            return self._stats(one, table)

    def _stats(
        self,
        one: Callable[[str], int],
        table: Callable[[str, Sequence[str]], list[dict[str, object]]],
    ) -> Stats:
        from tunelog.models import Stats

        # From the tallies kept on import: a scan of records took 1.4 s at 1M records.
        return Stats(
            records=one("SELECT coalesce(sum(records), 0) FROM tallies"),
            valid=one("SELECT coalesce(sum(records), 0) FROM tallies WHERE error_no = 0"),
            failed=one("SELECT coalesce(sum(records), 0) FROM tallies WHERE error_no != 0"),
            sources=one("SELECT count(*) FROM sources"),
            targets=one("SELECT count(*) FROM targets"),
            workloads=one("SELECT count(*) FROM workloads"),
            by_target=table(
                """SELECT t.target, sum(c.records), sum((c.error_no = 0) * c.records),
                          sum((c.error_no != 0) * c.records)
                   FROM tallies c JOIN targets t ON t.id = c.target_id
                   GROUP BY t.id ORDER BY sum(c.records) DESC, t.target""",
                ("target", "records", "valid", "failed"),
            ),
            by_template=table(
                """SELECT w.task_name, w.template_key, sum(c.records),
                          sum((c.error_no = 0) * c.records), sum((c.error_no != 0) * c.records)
                   FROM tallies c JOIN workloads w ON w.id = c.workload_id
                   GROUP BY w.task_name, w.template_key
                   ORDER BY sum(c.records) DESC, w.task_name""",
                ("template", "template_key", "records", "valid", "failed"),
            ),
            by_error=table(
                """SELECT error_no, sum(records) FROM tallies
                   GROUP BY error_no ORDER BY error_no""",
                ("error_no", "records"),
            ),
        )

    def best(self, filters: Filters | None = None, *, knobs: bool = False) -> list[BestRow]:
        """Slot winners, one row per (workload, winning record), with the slots it holds."""
        return list(self.each_best(filters, knobs=knobs))

    def each_best(
        self, filters: Filters | None = None, *, knobs: bool = False
    ) -> Iterator[BestRow]:
        """`best`'s rows one at a time, in its order, read while the store is open: one
        ordered query, so no row is held after it is yielded."""
        import json

        from tunelog.models import BestRow
        from tunelog.rules.slots import slot_label
        from tunelog.versions import ANSOR_VERSION

        if filters is not None and filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                yield from chosen.each_best(rest, knobs=knobs)
            return
        where, params = self._slot_filter_sql(filters or Filters())
        reader: LineReader | None = None
        if knobs:
            from tunelog.store.codec import LineReader

            reader = LineReader(self.conn)
        warnings = _MachineWarnings(self.conn, filters)
        # No BEGIN: a connection stays in one read transaction while a statement is pending, so
        # the targets that measured the workloads and the knobs' lines, read while the rows'
        # query runs, are of its state; and a generator dropped after the store is closed has
        # no transaction to end.
        rows = self.conn.execute(
            # Trials per (workload, keys, model) summed once: a subquery per row scanned
            # the tallies (keyed by target first) for each of tens of thousands of slots.
            f"""WITH trial_sums AS (
                    SELECT c.workload_id, ct.keys, ct.model, sum(c.records) AS trials
                    FROM tallies c JOIN targets ct ON ct.id = c.target_id
                    GROUP BY c.workload_id, ct.keys, ct.model)
                SELECT s.kind, s.name, r.id, t.target, w.task_name, w.template_key, w.args,
                       r.config_index, r.mean_cost, src.path, r.line, w.version,
                       n.trials, r.workload_id, w.shapes
                FROM slots s
                JOIN records r ON r.id = s.record_id
                JOIN targets t ON t.id = r.target_id
                JOIN workloads w ON w.id = s.workload_id
                JOIN sources src ON src.id = r.source_id
                LEFT JOIN trial_sums n
                  ON n.workload_id = r.workload_id AND n.keys = t.keys AND n.model = t.model
                {where}
                ORDER BY r.workload_id, r.id, s.kind DESC, s.name""",
            params,
        )
        pending: BestRow | None = None  # a record's slots are consecutive rows
        workload_id = 0
        for row in rows:
            kind, name, record_id = row[0], row[1], row[2]
            label = slot_label(kind, name)
            if pending is not None and pending.record_id == record_id:
                pending.slots.append(label)
                continue
            if pending is not None:
                pending.warnings = warnings.of(pending, workload_id)
                yield pending
            pending = BestRow(
                slots=[label],
                target=row[3],
                task_name=row[4],
                template_key=row[5],
                args=json.loads(row[6]),  # not orjson: `best` loads it only for --json
                config_index=row[7],
                mean_cost=row[8],
                source=row[9],
                line=row[10],
                log_version=row[11],
                record_id=record_id,
                trials=row[12],
                knobs=_knobs(reader.line(record_id)) if reader is not None else None,
                shapes=row[14] if row[11] != ANSOR_VERSION else None,
            )
            workload_id = int(row[13])
        if pending is not None:
            pending.warnings = warnings.of(pending, workload_id)
            yield pending

    def ansor_spellings(self, task_name: str) -> list[tuple[str, str]]:
        """(arguments, key as first written) of the auto_scheduler workloads of a task name
        (its key's hash) that keep a spelling, by id."""
        from tunelog.versions import ANSOR_VERSION

        return [
            (str(args), str(spelling))
            for args, spelling in self.conn.execute(
                """SELECT args, spelling FROM workloads
                   WHERE task_name = ? AND version = ? AND spelling IS NOT NULL ORDER BY id""",
                (task_name, ANSOR_VERSION),
            )
        ]

    def selected_pairs(self, filters: Filters) -> set[tuple[str, int]] | None:
        """(target string, workload id) of the records `--target` selects; None without it.

        Source filters are answered by the database they select (`selected`) first."""
        if filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                return chosen.selected_pairs(rest)
        if filters.target is None:
            return None
        sql = """SELECT DISTINCT t.target, r.workload_id FROM tallies r
                 JOIN targets t ON t.id = r.target_id WHERE t.target = ?"""
        return {(str(t), int(w)) for t, w in self.conn.execute(sql, (filters.target,))}

    def slot_holders(self) -> list[SlotHolder]:
        """Every slot and the record holding it (the two ApplyHistoryBest dictionaries)."""
        from tunelog.models import SlotHolder

        rows = self.conn.execute(
            """SELECT s.kind, s.name, w.task_name, w.template_key, w.args, r.id, r.source_id,
                      r.line, r.config_index, r.mean_cost
               FROM slots s JOIN records r ON r.id = s.record_id
               JOIN workloads w ON w.id = s.workload_id ORDER BY s.kind, s.name, w.id"""
        ).fetchall()
        return [SlotHolder(*row) for row in rows]

    def winner_versions(self, filters: Filters | None = None) -> set[str]:
        """The log versions (`0.1`, `0.2`, `ansor`) of the workloads whose slots match."""
        if filters is not None and filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                return chosen.winner_versions(rest)
        where, params = self._slot_filter_sql(filters or Filters())
        sql = f"""SELECT DISTINCT w.version FROM slots s JOIN records r ON r.id = s.record_id
                  JOIN workloads w ON w.id = s.workload_id {where}"""
        return {str(version) for (version,) in self.conn.execute(sql, params)}

    def has_slot_winners(self, filters: Filters | None = None) -> bool:
        """True when at least one slot matches the filters."""
        if filters is not None and filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                return chosen.has_slot_winners(rest)
        where, params = self._slot_filter_sql(filters or Filters())
        sql = f"""SELECT 1 FROM slots s JOIN records r ON r.id = s.record_id
                  JOIN workloads w ON w.id = s.workload_id {where} LIMIT 1"""
        return self.conn.execute(sql, params).fetchone() is not None

    def trials_in_import_order(self) -> Iterator[tuple[str, int, int, float]]:
        """(target string, workload id, error number, mean cost) of every record, in import order.

        Record ids follow import order (file, then line), so this is one scan of `records` by
        its primary key; the report's best-so-far curves read it.
        """
        targets = dict(self.conn.execute("SELECT id, target FROM targets").fetchall())
        rows = self.conn.execute(
            "SELECT target_id, workload_id, error_no, mean_cost FROM records ORDER BY id"
        )
        for target_id, workload_id, error_no, mean_cost in rows:
            yield targets[target_id], workload_id, error_no, mean_cost

    def _slot_filter_sql(self, filters: Filters) -> tuple[str, tuple[Any, ...]]:
        """A WHERE clause over `slots s JOIN records r` for the filters (see tunelog.filters).

        Targets and task names are matched in Python by the one definition of the filters; the
        tables they live in are small. With `for_target`, a workload keeps only the slot
        apply_history_best answers it from: the first held one in `query_order`.
        """
        clauses: list[str] = []
        params: list[Any] = []
        # Source filters are answered by the database they select (`selected`) first.
        assert not filters.selects_sources, "call through Store.selected"
        if filters.selects_targets:
            ids = [
                int(target_id)
                for target_id, target in self.conn.execute("SELECT id, target FROM targets")
                if filters.matches_target(parse_target(target))
            ]
            clauses.append(f"r.target_id IN ({id_list(ids)})")
        if filters.selects_tasks:
            ids = [
                int(workload_id)
                for workload_id, task_name in self.conn.execute(
                    "SELECT id, task_name FROM workloads"
                )
                if filters.matches_task(task_name)
            ]
            clauses.append(f"s.workload_id IN ({id_list(ids)})")
        target = filters.query_target
        if target is not None:
            from tunelog.rules.slots import answering_slot_sql, query_slots

            clause, answering = answering_slot_sql(query_slots(target.keys, target.model))
            clauses.append(clause)
            params += answering
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return where, tuple(params)


def _knobs(raw: bytes) -> list[list[object]] | None:
    from tunelog.recordmodels import TuningRecord
    from tunelog.records import parse_line

    parsed = parse_line(raw)
    if isinstance(parsed, TuningRecord):
        return [[name, value] for name, _type, value in parsed.entity]
    return None


class _MachineWarnings:
    """The warnings of `best`'s rows, whose winner another machine measured than a target
    asked about, for rows coming in workload id order.

    Asked about: the --for-target string, or else every target that measured the same
    workload and competes for one of the row's slots (its query may get this record). The
    targets that measured each workload are read alongside, in the same order, one workload
    at a time; each (target, slots) and (asked, measured) pair is judged once.
    """

    def __init__(self, conn: sqlite3.Connection, filters: Filters | None) -> None:
        self._conn = conn
        self._asked_for = filters.for_target if filters is not None else None
        self._measured: Iterator[tuple[int, str]] | None = None  # read on the first row
        self._next: tuple[int, str] | None = None
        self._workload = -1
        self._targets: list[str] = []
        self._competes: dict[tuple[str, tuple[str, ...]], bool] = {}
        self._warning_of: dict[tuple[str, str], str | None] = {}

    def of(self, row: BestRow, workload_id: int) -> list[str]:
        """The row's warnings; `workload_id` never smaller than the previous call's."""
        from tunelog.machines import cross_machine_warning
        from tunelog.rules.slots import competes_for_labels

        if self._asked_for is not None:
            asked = [self._asked_for]
        else:
            slots = tuple(row.slots)
            asked = []
            for target in self._measured_by(workload_id):
                verdict = self._competes.get((target, slots))
                if verdict is None:
                    verdict = self._competes[(target, slots)] = competes_for_labels(
                        parse_target(target), slots
                    )
                if verdict:
                    asked.append(target)
        warnings = []
        for target in asked:
            pair = (target, row.target)
            if pair not in self._warning_of:
                self._warning_of[pair] = cross_machine_warning(*pair)
            warning = self._warning_of[pair]
            if warning is not None:
                warnings.append(warning)
        return warnings

    def _measured_by(self, workload_id: int) -> list[str]:
        """The targets with tallies of the workload, sorted."""
        if workload_id == self._workload:
            return self._targets
        if self._measured is None:
            self._measured = iter(
                self._conn.execute(
                    """SELECT DISTINCT c.workload_id, t.target FROM tallies c
                       JOIN targets t ON t.id = c.target_id ORDER BY c.workload_id"""
                )
            )
            self._next = next(self._measured, None)
        found: set[str] = set()
        while self._next is not None and self._next[0] <= workload_id:
            if self._next[0] == workload_id:
                found.add(str(self._next[1]))
            self._next = next(self._measured, None)
        self._workload, self._targets = workload_id, sorted(found)
        return self._targets
