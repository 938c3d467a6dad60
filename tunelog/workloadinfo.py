"""A stored workload as the read commands see it: its identity, arguments and facts.

Data only (no rule, no import beyond the standard library), so that the listings, which read
the facts the import stored, never load the argument readers of `tunelog.workloads`, which
compute them (`workloads.summary.facts_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple


# NamedTuples, not frozen dataclasses: a listing builds one of each per workload (80k at 80k
# workloads), and each frozen slotted dataclass costs a command 0.6 ms of start-up to create.
class WorkloadFacts(NamedTuple):
    """What the read commands need of a workload's arguments, read once (stored at import)."""

    layer_key: str  # `workloads.layer_key`
    facts: Mapping[str, object]  # `workloads.layer_facts`: what relay's conditions test
    family: str  # `workloads.operator_family`
    shapes: str  # the arguments' short text (`workloads.short_args`, auto_scheduler's items)
    flops: int | None  # `workloads.flops` of one call


class WorkloadInfo(NamedTuple):
    """A tuning task's workload: template name, v0.1 template key, arguments, facts."""

    id: int
    task_name: str
    template_key: str
    # The arguments as stored (canonical JSON): most listings never need them decoded.
    args_json: str
    version: str
    # The workload as the log spells it, when its identity normalises it (auto_scheduler).
    spelling: str | None
    # Its facts as the database stored them (`store.workloadfacts`: every stored workload
    # has them once its file's import, or the migration that added them, has committed).
    stored: WorkloadFacts

    @property
    def args(self) -> list[object]:
        """The arguments, decoded (a new list each time)."""
        import json  # not orjson: the listings need it only for --json

        args: list[object] = json.loads(self.args_json)
        return args
