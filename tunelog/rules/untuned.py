"""What "untuned" means: a layer whose compile runs a fallback config, or no config measured
where it runs (`tunelog untuned`, `untuned --check`, the report's untuned layers).

A layer is untuned when
* no template has a valid record its group's query answers (relay finds nothing);
* its only answers are v0.1 records (`layers.build_layer` lets them win only where no newer
  record is answered): TVM >= 0.7 skips v0.1 lines, so it finds nothing either (an old TVM
  would use them: `export --include-v01`);
* its answer was measured on another machine than the one compiled for: its winner's target
  string is outside the layer's group (it answers through a shared key), or it is surely
  another machine than the target asked about (`--for-target`) or a target of the group
  (`machines.conflicting_machines`: another kind, or another -mcpu/-mtriple/-arch/-model/
  -device). An option only one string spells (`cuda -model=t4` vs `cuda -arch=sm_75
  -model=t4`) may be the same machine: the listings warn, this rule does not count it.

Pure: no SQLite, no printing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tunelog.machines import conflicting_machines
from tunelog.versions import V01

if TYPE_CHECKING:
    from tunelog.layers import Layer


def runs_fallback(layer: Layer) -> bool:
    """Whether TVM compiles the layer with a fallback config: no answer, or only v0.1 records.
    Such a layer has no latency to add up or compare (`network`, `diff`); one answered from
    another machine runs that machine's config, whose latency stands for it."""
    return layer.winner is None or answered_only_by_v01(layer)


def is_untuned(layer: Layer, asked: str | None = None) -> bool:
    """Whether the layer is untuned (module docstring); `asked`: the target string a
    `--for-target` question compiles for, else None (the group's own targets)."""
    return runs_fallback(layer) or (bool(layer.warnings) and answered_elsewhere(layer, asked))


def answered_only_by_v01(layer: Layer) -> bool:
    """The layer's winner is a v0.1 record: no newer record answers it."""
    return layer.winner is not None and layer.winner.workload.version == V01


def answered_elsewhere(layer: Layer, asked: str | None) -> bool:
    """The layer's winner was measured on another machine than the one asked about."""
    chosen = layer.winner.chosen if layer.winner is not None else None
    if chosen is None:
        return False
    if asked is None and chosen.target not in layer.group.targets:
        return True
    targets = [asked] if asked is not None else layer.group.targets
    return any(conflicting_machines(target, chosen.target) for target in targets)


def answer_text(layer: Layer) -> str:
    """The record that answers an untuned layer, as `untuned` and the report show it: "" for
    none, a v0.1 record's place, or another machine's record (its template and target)."""
    winner = layer.winner
    chosen = winner.chosen if winner is not None else None
    if winner is None or chosen is None:
        return ""
    place = f"{Path(chosen.source).name}:{chosen.line}"
    if answered_only_by_v01(layer):
        return f"v0.1 records only, which TVM >= 0.7 skips ({place})"
    return f"{winner.name} measured on {chosen.target!r} ({place})"
