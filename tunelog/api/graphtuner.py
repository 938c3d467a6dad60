"""A graph tuner's output beside the kernel log (`tunelog network`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tunelog.api.listing import layers
from tunelog.api.runs import knobs
from tunelog.exceptions import InputNotFoundError, NotAGraphLogError
from tunelog.store import Filters, Store

if TYPE_CHECKING:
    from tunelog.layers import Layer
    from tunelog.network import GraphLog, GroupTotal


def network(path: str, store: Store | None = None) -> GraphLog:
    """A graph-tuner output's layers with occurrences, latencies and layouts (`tunelog network`).

    With `store` (holding the kernel log of the same layers): each layer's best single-op
    latency there, and the best per data layout, beside the graph tuner's choice.
    """
    from tunelog.inputs import STREAM_ERRORS, LogInput, OpenedLog
    from tunelog.network import read_graph_log

    # Read as an import reads a log: compressed files, stdin (`-`), CR line ends, the line cap.
    with OpenedLog(LogInput(path)) as opened:
        try:
            graph = read_graph_log(opened.lines())
        except STREAM_ERRORS as exc:  # a graph log is read whole: a damaged one is refused
            raise InputNotFoundError(
                f"cannot read {path}: it is damaged ({exc or type(exc).__name__}); give a "
                "complete graph tuner log"
            ) from None
    if not graph.layers:  # a wrong file, not a network without layers: say what it is
        raise NotAGraphLogError(_no_record(path, [reason for _, reason in graph.rejected]))
    if store is not None:
        with store.errors_said():  # as `with store:` would (the caller may not use it)
            _add_kernel_bests(store, graph)
    return graph


def _no_record(path: str, reasons: list[str]) -> str:
    """Why a graph log holding no AutoTVM record is refused (`reasons`: its rejected lines'),
    and what `network` reads."""
    from tunelog.network import AUTO_SCHEDULER_LINE
    from tunelog.rules.sourcenames import STDIN

    what = "standard input" if path == STDIN else path
    if AUTO_SCHEDULER_LINE in reasons:  # what import reads, but no graph tuner writes
        what += " (it holds auto_scheduler records, which no graph tuner writes)"
    elif os.path.isfile(path):
        from tunelog.discovery import looks_like

        what += f" (it looks like {looks_like(Path(path))})"
    counted = f"; {len(reasons)} line(s) rejected" if reasons else ""
    return (
        f"{what} holds no AutoTVM record{counted}: network reads a graph tuner's output log "
        "(the database, with the kernel log, is --db; without a file, network totals it)"
    )


def network_totals(store: Store, filters: Filters | None = None) -> list[GroupTotal]:
    """Per target group, the total of winners' latencies and each layer's share (each layer
    counted once: a kernel log cannot count occurrences; `network(path)` reads a graph log)."""
    from tunelog.network import group_totals

    return group_totals(layers(store, filters))


def _add_kernel_bests(store: Store, graph: GraphLog) -> None:
    from tunelog.machines import cross_machine_warning
    from tunelog.workloads import layer_key

    by_target: dict[str, dict[str, Layer]] = {}
    measured_on = _LayersOfTargets(store)
    for entry in graph.layers:
        if entry.target not in by_target:
            found = layers(store, Filters(for_target=entry.target))
            by_target[entry.target] = {lay.key: lay for lay in found}
        layer = by_target[entry.target].get(layer_key(entry.task_name, "", entry.args))
        if layer is None or layer.winner is None or layer.winner.chosen is None:
            continue
        entry.kernel_best = layer.winner.chosen.mean_cost
        crossed = cross_machine_warning(entry.target, layer.winner.chosen.target)
        if crossed is not None and crossed not in graph.kernel_warnings:
            graph.kernel_warnings.append(crossed)
        # The layouts tried on the machine whose record answers: the asked target's own group
        # has no trials when another -model or target string measured it (`kernel best` is
        # then that record's, and the column was empty).
        answering = layer.winner.chosen.target
        if answering not in layer.group.targets:
            layer = measured_on.layer(answering, layer.key) or layer
        for template in knobs(store, layer, "layout:data"):
            for value in template.values:
                if value.best is not None:
                    known = entry.best_per_layout.get(value.value)
                    entry.best_per_layout[value.value] = min(known or value.best, value.best)


class _LayersOfTargets:
    """The database's own layers by (target string, layer key), read once when first asked."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._by: dict[tuple[str, str], Layer] | None = None

    def layer(self, target: str, key: str) -> Layer | None:
        """The layer `key` of the group `target` belongs to, if the database has it."""
        if self._by is None:
            self._by = {
                (member, lay.key): lay
                for lay in layers(self._store)
                for member in lay.group.targets
            }
        return self._by.get((target, key))
