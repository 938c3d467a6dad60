"""A workload's facts from its arguments: what the import stores once per workload.

Pure. One reading of the arguments gives the layer key and relay's facts (`facts`), the
operator family (`families`), the short text (`shorttext`; an auto_scheduler workload's is the
items of its key) and the FLOPs of one call (`flopcount`).
"""

from __future__ import annotations

from typing import Any

from tunelog.versions import ANSOR_VERSION
from tunelog.workloadinfo import WorkloadFacts
from tunelog.workloads.facts import layer_key_and_facts
from tunelog.workloads.families import operator_family
from tunelog.workloads.flopcount import flops
from tunelog.workloads.shorttext import short_args


def facts_of(
    task_name: str, template_key: str, args: list[Any], version: str, spelling: str | None
) -> WorkloadFacts:
    """The facts of a workload (its arguments decoded; `spelling`: its key as the log has it)."""
    key, facts = layer_key_and_facts(task_name, template_key, args)
    if version == ANSOR_VERSION and spelling is not None:
        from tunelog.ansor import ansor_shapes  # loads hashlib and orjson: Ansor's only

        shapes = ansor_shapes(spelling)
    else:
        shapes = short_args(task_name, args)
    return WorkloadFacts(
        layer_key=key,
        facts=facts,
        family=operator_family(task_name, template_key),
        shapes=shapes,
        flops=flops(task_name, template_key, args),
    )
