"""A stored workload as the read commands see it: its identity, arguments and facts.

Data only (no rule, no import beyond the standard library), so that the listings, which read
the facts the import stored, never load the argument readers of `tunelog.workloads`, which
compute them (`workloads.summary.facts_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, NamedTuple


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
        return decoded_json(self.args_json)


@cache
def _scanner() -> Callable[[str, int], tuple[Any, int]]:
    import json  # not orjson: the listings need it only for --json

    # What json.loads' decoder parses with (an attribute typeshed does not declare).
    scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
    return scan


def decoded_json(text: str) -> list[object]:
    """`json.loads(text)` of a stored (canonical) JSON value.

    Its parser called directly (`workloads --json` decodes a workload's arguments per template
    it lists, 86k at 80k workloads: json.loads' Python layers cost as much as the parsing);
    text it would not take whole (leading or trailing space, a fault) goes to json.loads.
    """
    try:
        value, end = _scanner()(text, 0)
    except StopIteration:
        end = -1
    if end != len(text):
        import json

        value = json.loads(text)
    args: list[object] = value
    return args
