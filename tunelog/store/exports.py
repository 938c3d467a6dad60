"""The lines an export writes: slot winners or top-k configs, AutoTVM and MetaSchedule."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from tunelog.filters import Filters
from tunelog.rules.ranking import RANK_ORDER_SQL, takes_config
from tunelog.store.queries import Queries
from tunelog.store.schema import TOP_CONFIGS_KEPT
from tunelog.targets import parse_target

if TYPE_CHECKING:
    from tunelog.store.codec import LineReader


class ExportLine(NamedTuple):
    """A record to export: ids, target string, log version and the original line bytes."""

    record_id: int
    workload_id: int
    target: str
    version: str
    raw: bytes


class Exports(Queries):
    """The record lines (and MetaSchedule workload lines) that an export writes."""

    def winner_lines(
        self, filters: Filters | None = None, *, top_k: int = 1
    ) -> Iterator[ExportLine]:
        """Every slot winner (or the top-k configs of each slot) with its line, by record id."""
        from tunelog.store.codec import LineReader

        if filters is not None and filters.selects_database:
            with self.selected(filters, target_records=True) as (chosen, rest):
                yield from chosen.winner_lines(rest, top_k=top_k)
            return
        filters = filters or Filters()
        where, params = self._slot_filter_sql(filters)
        if top_k <= 1:
            sql = f"""SELECT DISTINCT r.id, r.workload_id, t.target, w.version
                      FROM slots s
                      JOIN records r ON r.id = s.record_id
                      JOIN targets t ON t.id = r.target_id
                      JOIN workloads w ON w.id = s.workload_id
                      {where} ORDER BY r.id"""
            yield from _with_lines(self.conn.execute(sql, params), LineReader(self.conn))
            return
        yield from self._top_k_lines(filters, where, params, top_k, LineReader(self.conn))

    def _top_k_lines(
        self,
        filters: Filters,
        where: str,
        params: tuple[Any, ...],
        top_k: int,
        reader: LineReader,
    ) -> Iterator[ExportLine]:
        # One pass over the valid records of the wanted workloads, best first: each slot keeps
        # the first (best, earliest) measurement of a config until it has K distinct configs.
        # Only the records the filters select rank (a filter selects records: --model's
        # runners-up are that model's); a wanted workload's task is a selected one.
        wanted: dict[int, set[tuple[str, str]]] = {}
        for kind, name, workload_id in self.conn.execute(
            f"""SELECT s.kind, s.name, s.workload_id FROM slots s
                JOIN records r ON r.id = s.record_id
                JOIN workloads w ON w.id = s.workload_id {where}""",
            params,
        ):
            wanted.setdefault(workload_id, set()).add((kind, name))
        from tunelog.rules.slots import slots_of

        target_slots = {
            target_id: [(s.kind, s.name) for s in slots_of(parsed, "")]
            if filters.matches_target(parsed)
            else []
            for target_id, target in self.conn.execute("SELECT id, target FROM targets")
            for parsed in (parse_target(target),)
        }
        chosen: list[int] = []
        configs: dict[tuple[str, str, int], set[int]] = {}
        # With K <= TOP_CONFIGS_KEPT, each slot's K best configs are among the configs kept per
        # (target, workload) on import; beyond that, every valid record is ranked.
        ranked = (
            f"""SELECT record_id, target_id, workload_id, config_index FROM top_configs
                ORDER BY workload_id, {RANK_ORDER_SQL.format(id="record_id")}"""
            if top_k <= TOP_CONFIGS_KEPT
            else f"""SELECT id, target_id, workload_id, config_index FROM records
                     WHERE error_no = 0 ORDER BY workload_id, {RANK_ORDER_SQL.format(id="id")}"""
        )
        for record_id, target_id, workload_id, config_index in self.conn.execute(ranked):
            slots = wanted.get(workload_id)
            if slots is None:
                continue
            for kind, name in target_slots[target_id]:
                if (kind, name) not in slots:
                    continue
                seen = configs.setdefault((kind, name, workload_id), set())
                if takes_config(seen, config_index, top_k):
                    chosen.append(record_id)
        ordered = sorted(set(chosen))
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            marks = ",".join("?" * len(chunk))
            yield from _with_lines(
                self.conn.execute(
                    f"""SELECT r.id, r.workload_id, t.target, w.version
                        FROM records r JOIN targets t ON t.id = r.target_id
                        JOIN workloads w ON w.id = r.workload_id
                        WHERE r.id IN ({marks}) ORDER BY r.id""",
                    chunk,
                ),
                reader,
            )

    def metaschedule_export(
        self, filters: Filters | None = None, *, top_k: int = 1
    ) -> list[tuple[int, bytes, bytes]]:
        """(workload id, workload line, record line) to write for a pruned MetaSchedule database.

        The workloads are those whose best valid record (the target-less slot) matches the
        filters; each keeps its `top_k` best valid records of distinct traces, ranked as
        `get_top_k` does (mean run time, then import order). Rows come in import order, so
        records of equal mean keep their order. A record's workload line is its own (migration
        16): its trace replays against the names that line gives the module's blocks.
        """
        from tunelog.rules.slots import ANY_TARGET_SLOT
        from tunelog.store.codec import LineReader

        where, params = self._slot_filter_sql(filters or Filters())
        where = f"{where} AND s.kind = ?" if where else "WHERE s.kind = ?"
        spellings: dict[int, str] = {}
        chosen: list[tuple[int, int]] = []
        for workload_id, record_id, spelling in self.conn.execute(
            f"""SELECT s.workload_id, s.record_id, w.spelling FROM slots s
                JOIN records r ON r.id = s.record_id
                JOIN workloads w ON w.id = s.workload_id {where}""",
            (*params, ANY_TARGET_SLOT),
        ):
            spellings[int(workload_id)] = str(spelling)
            chosen.append((int(record_id), int(workload_id)))
        if top_k > 1:
            chosen = self._metaschedule_top_k(set(spellings), top_k)
        reader = LineReader(self.conn)
        own = self._own_spellings([record_id for record_id, _ in chosen])
        return [
            (
                workload_id,
                own.get(record_id, spellings[workload_id]).encode(),
                reader.line(record_id),
            )
            for record_id, workload_id in sorted(chosen)
        ]

    def _own_spellings(self, record_ids: list[int]) -> dict[int, str]:
        """The own spellings of these records, where not their workload's (`record_spellings`)."""
        found: dict[int, str] = {}
        for start in range(0, len(record_ids), 500):
            wanted = ",".join(str(int(i)) for i in record_ids[start : start + 500])
            found.update(
                self.conn.execute(
                    f"""SELECT rs.record_id, t.spelling FROM record_spellings rs
                        JOIN spelling_texts t ON t.id = rs.spelling_id
                        WHERE rs.record_id IN ({wanted})"""
                )
            )
        return found

    def _metaschedule_top_k(self, workloads: set[int], top_k: int) -> list[tuple[int, int]]:
        # One pass over the valid records, best first: a workload keeps the first (best,
        # earliest) record of each trace until it has K traces.
        traces: dict[int, set[int]] = {workload_id: set() for workload_id in workloads}
        chosen: list[tuple[int, int]] = []
        for record_id, workload_id, trace in self.conn.execute(
            f"""SELECT id, workload_id, config_index FROM records WHERE error_no = 0
                ORDER BY {RANK_ORDER_SQL.format(id="id")}"""
        ):
            seen = traces.get(workload_id)
            if seen is not None and takes_config(seen, trace, top_k):
                chosen.append((int(record_id), int(workload_id)))
        return chosen

    def metaschedule_tvm_versions(self, workload_ids: Iterable[int] | None = None) -> set[str]:
        """The TVM versions that wrote the MetaSchedule workloads (all, or those given).

        The version is kept as the workload's template key ("" when the module has none).
        """
        from tunelog.selection import METASCHEDULE_VERSION

        wanted = None if workload_ids is None else set(workload_ids)
        return {
            str(version)
            for workload_id, version in self.conn.execute(
                "SELECT id, template_key FROM workloads WHERE version = ?",
                (METASCHEDULE_VERSION,),
            )
            if wanted is None or workload_id in wanted
        }


def _with_lines(
    rows: Iterable[tuple[int, int, str, str]], reader: LineReader
) -> Iterator[ExportLine]:
    """Each (record id, workload id, target, version) row, in record id order, with its line
    (the reader's blocks answer consecutive ids: each is decompressed once)."""
    for rid, wid, target, version in rows:
        yield ExportLine(rid, wid, target, version, reader.line(rid))
