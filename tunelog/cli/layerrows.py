"""`workloads`' table: its columns and its rows, each cell text already."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunelog.cli.cells import format_seconds
from tunelog.cli.notes import _no_answer
from tunelog.tables import Column
from tunelog.versions import ANSOR_VERSION

if TYPE_CHECKING:
    from tunelog.convergence import Convergence
    from tunelog.layers import Layer, TargetGroup, TemplateResult

_LAYER_HEADERS = (
    Column("target"),
    Column("operator"),
    Column("shapes"),
    Column("templates (trials valid/failed: best)", rank=3),
    Column("winner"),
    # The winner's, also in the templates cell, which goes first when the table is too wide;
    # a key column when the table is sorted by it (`columns_sorted_by`).
    Column("latency", rank=1),
    Column("config", rank=2),
    Column("margin", rank=2),
    Column("GFLOPS", rank=1),
)
_LAYER_COLUMNS = (*_LAYER_HEADERS, Column("to best", rank=2), Column("verdict", rank=1))
# The column a `--sort` key orders by: never dropped to fit (a table sorted by a column it
# does not show says nothing).
_SORT_COLUMNS = {"latency": "latency", "gflops": "GFLOPS"}


def columns_sorted_by(sort: str | None) -> tuple[Column, ...]:
    """`_LAYER_COLUMNS`, the one `sort` orders by made a key column."""
    name = _SORT_COLUMNS.get(sort or "")
    return tuple(Column(c.name) if c.name == name else c for c in _LAYER_COLUMNS)


NAMES_KEPT = 4096  # template names kept: a workload is listed again soon, in another group


class LayerRows:
    """`workloads`' table rows, each cell text already (`emit_table` converts none): 80k rows
    at 80k workloads. A template's name is made once per workload while it is recent (the
    layers of one key come one group after another), a group's label once."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}  # workload id -> `TemplateResult.name`
        self._labels: dict[int, tuple[TargetGroup, str]] = {}  # id(group) -> (it, label)

    def _name(self, template: TemplateResult) -> str:
        name = self._names.get(template.workload.id)
        if name is None:
            if len(self._names) >= NAMES_KEPT:
                self._names.clear()
            name = self._names[template.workload.id] = template.name
        return name

    def row(self, layer: Layer, summary: Convergence) -> list[str]:
        """The layer's cells, then its convergence's (`summary`)."""
        group = layer.group
        label = self._labels.get(id(group))
        if label is None:  # the group is kept with its label: its id stays its own
            label = self._labels[id(group)] = (group, group.label)
        winner = layer.winner
        chosen = winner.chosen if winner is not None else None
        margin = layer.margin
        gflops = layer.gflops
        to_best = summary.trials_to_best
        tried = [_tried_text(t, self._name(t)) for t in layer.templates]
        return [
            label[1],
            layer.family,
            layer.shapes,
            "; ".join([f"{name} ({counts}: {best})" for name, counts, best in tried]),
            _winner_text(layer, self._name(winner) if winner is not None else ""),
            # The winner is the first template (`layers.build_layer` ranks them): its best.
            tried[0][2] if chosen is not None else "",
            str(chosen.config_index) if chosen is not None else "",
            f"+{margin * 100:.0f}%" if margin is not None else "",
            f"{gflops:.1f}" if gflops is not None else "unknown" if winner else "",
            # `to best`: the trial that reached the best / trials; the verdict.
            f"{to_best}/{summary.trials}" if to_best else "",
            summary.verdict,
        ]


def _tried_text(template: TemplateResult, name: str) -> tuple[str, str, str]:
    """A template in the `templates` cell (`name`: its name): its name, its trials and
    valid/failed, and its best or why none."""
    trials, valid = template.counts()
    chosen = template.chosen
    best = format_seconds(chosen.mean_cost) if chosen is not None else _no_answer(template)
    return name, f"{trials} {valid}/{trials - valid}", best  # failed: the rest


def _winner_text(layer: Layer, name: str) -> str:
    """The winning template (`name`: its name) as `workloads` shows it: an auto_scheduler task
    is named by its hash, already the operator column's, so only what follows it
    (`(auto_scheduler)`)."""
    winner = layer.winner
    if winner is None:
        return "(untuned)"
    if winner.workload.version != ANSOR_VERSION:  # a user template's `matmul (v0.1)` stays whole
        return name
    return name.removeprefix(layer.family + " ")
