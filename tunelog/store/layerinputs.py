"""What the layer listings read from the Store (`layers.build_layers`'s inputs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunelog.store.connection import Connection

if TYPE_CHECKING:
    from tunelog.layers import SlotWinner, Tally, WorkloadInfo

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

        from tunelog.layers import SlotWinner, Tally, WorkloadInfo

        targets = [(int(i), str(t)) for i, t in self.conn.execute("SELECT id, target FROM targets")]
        import json  # not orjson: the layer listings load it only for --json

        from tunelog.store.workloadfacts import FACT_COLUMNS, FactsReader

        decoded = FactsReader()
        workloads = [
            WorkloadInfo(int(i), task, tkey, json.loads(args), version, spelling, decoded(facts))
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
