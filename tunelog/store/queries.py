"""The Store's queries over slots and tallies: `best`, summaries and the slot filter SQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from tunelog.errorcodes import error_name
from tunelog.filters import Filters
from tunelog.store.sources import Sources

if TYPE_CHECKING:
    from tunelog.models import BestRow, SlotHolder, Stats

# json and tunelog.selection (which loads json) are needed by a few queries only, and `best`'s
# streaming (store.bestrows) by `best`: each is imported where it is used.


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
            by_error=[
                # with its name, as `stats --json` gives it (`errorcodes.error_name`)
                {
                    "error_no": row["error_no"],
                    "error_name": error_name(int(str(row["error_no"]))),
                    "records": row["records"],
                }
                for row in table(
                    """SELECT error_no, sum(records) FROM tallies
                       GROUP BY error_no ORDER BY error_no""",
                    ("error_no", "records"),
                )
            ],
        )

    def best(self, filters: Filters | None = None, *, knobs: bool = False) -> list[BestRow]:
        """Slot winners, one row per (workload, winning record), with the slots it holds."""
        return list(self.each_best(filters, knobs=knobs))

    def each_best(
        self,
        filters: Filters | None = None,
        *,
        knobs: bool = False,
        as_written: bool = False,
        args_only_without_shapes: bool = False,
    ) -> Iterator[BestRow]:
        """`best`'s rows one at a time, in its order, read while the store is open: one
        ordered query, so no row is held after it is yielded (see store.bestrows).

        `as_written`: an auto_scheduler row's `args` with the structure its key is written
        with (`tunelog.api.best` and the CLI show them so), instead of the flattened tuple
        that is its identity. `args_only_without_shapes`: rows that have `shapes` come without
        `args` (for a table, which shows `shapes`).
        """
        from tunelog.store.bestrows import each_best_row

        if filters is not None and filters.selects_database:
            with self.selected(filters, target_records=True) as (chosen, rest):
                yield from chosen.each_best(
                    rest,
                    knobs=knobs,
                    as_written=as_written,
                    args_only_without_shapes=args_only_without_shapes,
                )
            return
        filters = filters or Filters()
        where, params = self._slot_filter_sql(filters)
        yield from self.streamed(
            each_best_row(
                self.conn,
                where,
                params,
                for_target=filters.for_target,
                knobs=knobs,
                as_written=as_written,
                args_only_without_shapes=args_only_without_shapes,
            )
        )

    def args_as_written(
        self, task_name: str, args: list[object], record_id: int | None = None
    ) -> list[object]:
        """An auto_scheduler workload's flattened `args` as record `record_id`'s own key writes
        them (`store.bestrows.own_args`), else as its key was first written
        (`store.bestrows.args_as_written`)."""
        from tunelog.store.bestrows import args_as_written, own_args

        own = None if record_id is None else own_args(self.conn, record_id, task_name, args)
        return own or args_as_written(self.conn, task_name, args)

    def selected_pairs(self, filters: Filters) -> set[tuple[str, int]] | None:
        """(target string, workload id) of the records `--target` selects; None without it.

        Source filters are answered by the database they select (`selected`) first."""
        if filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                return chosen.selected_pairs(rest)
        names = self.selected_targets(filters)
        if names is None:
            return None
        sql = f"""SELECT DISTINCT target_id, workload_id FROM tallies
                  WHERE target_id IN ({",".join(map(str, names)) or "NULL"})"""
        return {(names[t], int(w)) for t, w in self.conn.execute(sql)}

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
        if filters is not None and filters.selects_database:
            with self.selected(filters, target_records=True) as (chosen, rest):
                return chosen.winner_versions(rest)
        where, params = self._slot_filter_sql(filters or Filters())
        # The filters' conditions read the slot's record; without any, the join only finds the
        # record every slot holds (half of the query's time at 170k slots).
        records = "JOIN records r ON r.id = s.record_id" if where else ""
        sql = f"""SELECT DISTINCT w.version FROM slots s {records}
                  JOIN workloads w ON w.id = s.workload_id {where}"""
        return {str(version) for (version,) in self.conn.execute(sql, params)}

    def has_slot_winners(self, filters: Filters | None = None) -> bool:
        """True when at least one slot matches the filters."""
        if filters is not None and filters.selects_database:
            with self.selected(filters, target_records=True) as (chosen, rest):
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
        for target_id, workload_id, error_no, mean_cost in self.streamed(rows):
            yield targets[target_id], workload_id, error_no, mean_cost

    def _slot_filter_sql(self, filters: Filters) -> tuple[str, tuple[object, ...]]:
        """The WHERE clause over `slots s JOIN records r` the filters make on this database
        (`filters.slot_filter_sql`, beside the Python rule it applies)."""
        from tunelog.filters import slot_filter_sql

        return slot_filter_sql(
            filters,
            targets=lambda: self.conn.execute("SELECT id, target FROM targets"),
            tasks=lambda: self.conn.execute("SELECT id, task_name FROM workloads"),
        )
