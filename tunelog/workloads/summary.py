"""A workload's facts from its arguments: what the import stores once per workload.

Pure. One reading of the arguments gives the layer key and relay's facts (`facts`), the
operator family (`families`), the short text (`shorttext`; an auto_scheduler workload's is the
items of its key) and the FLOPs of one call (`flopcount`).
"""

from __future__ import annotations

from typing import Any

from tunelog.versions import ANSOR_VERSION
from tunelog.workloadinfo import WorkloadFacts
from tunelog.workloads.calls import _parse
from tunelog.workloads.facts import layer_key_and_facts_of_call
from tunelog.workloads.families import _name_info, operator_family
from tunelog.workloads.flopcount import flops_of_call
from tunelog.workloads.shorttext import short_args_of_call


def facts_of(
    task_name: str, template_key: str, args: list[Any], version: str, spelling: str | None
) -> WorkloadFacts:
    """The facts of a workload (its arguments decoded; `spelling`: its key as the log has it).

    The arguments are read once (`calls._parse`) for the layer key, facts, short text and
    FLOPs: the import computes this for every workload it adds (80k workloads: 1.7 s when
    each of the three read them again)."""
    info = _name_info(task_name)
    call = _parse(info, args)
    key, facts = layer_key_and_facts_of_call(task_name, args, call)
    if version == ANSOR_VERSION and spelling is not None:
        from tunelog.ansor import ansor_shapes  # loads hashlib and orjson: Ansor's only

        shapes = ansor_shapes(spelling)
    else:
        shapes = short_args_of_call(task_name, args, call)
    return WorkloadFacts(
        layer_key=key,
        facts=facts,
        family=operator_family(task_name, template_key),
        shapes=shapes,
        flops=flops_of_call(task_name, args, info, call),
    )
