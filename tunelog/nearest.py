"""The tuned layers closest to an untuned one: what `diagnose` shows for `no_record`.

Pure. Candidates are layers of the same operator family with a valid v0.2 record on any target;
they are ranked by how many parts of the call differ (`workloads.call_fields`), then tuned for
the asked target first, then by how far apart their tensors are in size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from tunelog.recordindex import RecordIndex, reaches
from tunelog.targets import Target, parse_target
from tunelog.tvmmessages import Workload, as_tuple
from tunelog.versions import V02
from tunelog.workloads import call_fields, layer_key, operator_family

NEAREST_SHOWN = 3
_SHAPE_FIELDS = ("data", "kernel", "weight")


@dataclass(frozen=True)
class Nearest:
    """A tuned workload of the same operator, and how it differs from the one asked about."""

    workload: Workload
    differs: tuple[str, ...]
    targets: tuple[str, ...]


def nearest_tuned(
    index: RecordIndex,
    asked: Target,
    task: str,
    args: list[object],
    *,
    exclude: set[int],
    limit: int = NEAREST_SHOWN,
) -> list[Nearest]:
    """Up to `limit` tuned layers of the same operator closest to the asked call."""
    mine = call_fields(task, args)
    if mine is None:
        return []
    ranked: list[tuple[tuple[int, bool, float, int], Nearest]] = []
    seen_layers: set[str] = set()
    for wid in index.by_family.get(operator_family(task), []):
        recorded = index.recorded[wid]
        info = recorded.info
        valid = recorded.valid_targets()
        if wid in exclude or info.version != V02 or not valid:
            continue
        key = layer_key(info.task_name, info.template_key, info.args)
        theirs = call_fields(info.task_name, info.args)
        if theirs is None or key in seen_layers:
            continue
        seen_layers.add(key)
        differs = tuple(
            f"{name} {value} vs {theirs.get(name, '?')}"
            for name, value in mine.items()
            if theirs.get(name) != value
        )
        targets = sorted({index.targets[t] for t in valid})
        reachable = any(reaches(asked, parse_target(t)) for t in targets)
        rank = (len(differs), not reachable, _size_gap(mine, theirs), wid)
        workload = (info.task_name, *(as_tuple(a) for a in info.args))
        ranked.append((rank, Nearest(workload, differs, tuple(targets[:3]))))
    ranked.sort(key=lambda item: item[0])
    return [n for _, n in ranked[:limit]]


def _size_gap(mine: Mapping[str, str], theirs: Mapping[str, str]) -> float:
    """How far apart two calls' tensors are in size (sum of |log| of element-count ratios)."""
    gap = 0.0
    for name in _SHAPE_FIELDS:
        a, b = _elements(mine.get(name)), _elements(theirs.get(name))
        if a and b:
            gap += abs(math.log(a / b))
    return gap


def _elements(text: str | None) -> int | None:
    if not text:
        return None
    dims = text.partition(":")[0].split("x")
    if not all(d.isdigit() for d in dims):
        return None
    return math.prod(int(d) for d in dims) or None
