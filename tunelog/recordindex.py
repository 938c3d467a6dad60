"""The database's AutoTVM workloads, indexed for `diagnose`: by exact workload, layer, operator.

Pure: built from what `Store.layer_inputs` reads (the inputs of `layers.build_layers`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from tunelog.layers import SlotWinner, Tally
from tunelog.rules.slots import query_order, slots_of
from tunelog.targets import Target, parse_target
from tunelog.tvmmessages import workload_key
from tunelog.versions import ANSOR_VERSION, V01, V02
from tunelog.workloadinfo import WorkloadInfo
from tunelog.workloads import layer_key, operator_family


@dataclass
class _Recorded:
    """What the database holds for one workload: records per target id and error number."""

    info: WorkloadInfo
    by_target: dict[int, dict[int, int]] = field(default_factory=dict)

    def valid_targets(self) -> list[int]:
        return [t for t, counts in self.by_target.items() if counts.get(0, 0) > 0]


class RecordIndex:
    """The database's workloads indexed for diagnosis: by exact workload, layer and operator."""

    def __init__(
        self,
        targets: Iterable[tuple[int, str]],
        workloads: Sequence[WorkloadInfo],
        tallies: Iterable[Tally],
        slots: Mapping[tuple[str, str, int], SlotWinner],
        *,
        show_path: Callable[[str], str] = str,
    ) -> None:
        self.show_path = show_path  # how a stored source path is written in details
        self.targets = dict(targets)
        self.slots = slots
        self.recorded = {w.id: _Recorded(w) for w in workloads}
        for tally in tallies:
            counts = self.recorded[tally.workload_id].by_target.setdefault(tally.target_id, {})
            counts[tally.error_no] = counts.get(tally.error_no, 0) + tally.records
        self.exact: dict[tuple[str, Hashable], int] = {}
        self.by_layer: dict[str, list[int]] = {}
        self.by_family: dict[str, list[int]] = {}
        # auto_scheduler workloads by (hash, identity of the arguments): `selection.ansor_workload`
        self.ansor: dict[tuple[str, str], int] = {}
        for w in workloads:
            if w.version == ANSOR_VERSION:
                self.ansor.setdefault((w.task_name, w.args_json), w.id)
            if w.version not in (V01, V02):
                continue  # auto_scheduler / MetaSchedule workloads answer no AutoTVM query
            if w.version == V02:
                self.exact.setdefault((w.task_name, workload_key(w.args)), w.id)
            self.by_layer.setdefault(layer_key(w.task_name, w.template_key, w.args), []).append(
                w.id
            )
            family = operator_family(w.task_name, w.template_key)
            self.by_family.setdefault(family, []).append(w.id)

    def parsed(self, target_id: int) -> Target:
        """The parsed target string of a target id."""
        return parse_target(self.targets[target_id])


def reaches(asked: Target, recorded: Target) -> bool:
    """A record of `recorded` holds a slot some query of `asked` looks up (the slot rule of
    `rules.slots.slots_of` and `query_order`, asked for one AutoTVM workload)."""
    held = set(slots_of(recorded, ""))
    return any(slot in held for slot in query_order(asked, ""))
