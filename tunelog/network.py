"""Network totals and layouts from a graph-tuner output (`tunelog network`).

Pure. TVM's graph tuner (`autotvm.graph_tuner`, DPTuner/PBQPTuner) writes one record per conv
layer of the network, in network order: a layer that occurs k times is written k times (TLCBench's
resnet_50 graph log: 53 lines, 20 distinct workloads). So it counts occurrences, which a kernel
log cannot (it holds each workload once, however often the network runs it). For each layer it
keeps the config it chose, whose x86 NCHWc layouts follow from the config (`knobs.implied_layouts`)
and whose cost is that config's single-op latency.

Without a graph-tuner output, `group_totals` sums the winners' latencies per target group with
every layer counted once, and says so: a kernel log cannot count occurrences.

The network total here is the sum of single-op latencies times occurrences: conv layers only,
and without the layout transforms between layers, which no log records. The graph tuner may pick
a config slower than the kernel log's best one when its layout saves transforms: the difference
between the two totals is what it paid for that.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tunelog.knobs import implied_layouts
from tunelog.layers import Layer, TargetGroup
from tunelog.linesplit import OverlongLine
from tunelog.recordmodels import TuningRecord
from tunelog.records import BLANK, COMMENT, Rejected, parse_line
from tunelog.rules.untuned import runs_fallback
from tunelog.workloads import layer_key


@dataclass
class GraphLayer:
    """One conv layer the graph tuner configured: its choice, and how often the network runs it."""

    target: str
    task_name: str
    args: list[object]
    args_json: str
    config_index: int
    latency: float  # the chosen config's mean cost: single-op, seconds
    layouts: dict[str, str]
    first_line: int
    occurrences: int = 1
    # From the database, when the kernel log is imported: best single-op latency of the layer,
    # and the best per data layout (x86 NCHWc templates).
    kernel_best: float | None = None
    best_per_layout: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        """Single-op latency times occurrences."""
        return self.latency * self.occurrences


@dataclass
class GraphLog:
    """The layers of a graph-tuner output in network order, and the lines that were not records."""

    layers: list[GraphLayer]
    rejected: list[tuple[int, str]]
    # Why the file may be no graph tuner's output (its choices hold one target's convolutions
    # and no failed trial): a kernel tuning log read as one counts every trial as a layer.
    doubts: list[str] = field(default_factory=list)
    # Kernel bests (from the database) measured on another machine than the graph log's
    # target: `machines.cross_machine_warning`'s text, each once.
    kernel_warnings: list[str] = field(default_factory=list)

    @property
    def occurrences(self) -> int:
        """Conv layer occurrences in the network (records in the file)."""
        return sum(layer.occurrences for layer in self.layers)

    @property
    def distinct_layers(self) -> int:
        """The layers its rows are of: one per layer key (`workloads.layer_key`), whatever
        template or config a row names (two rows of one layer are one)."""
        return len({layer_key(layer.task_name, "", layer.args) for layer in self.layers})

    @property
    def total(self) -> float:
        """The network's conv time with the graph tuner's configs (no layout transforms)."""
        return sum(layer.total for layer in self.layers)

    @property
    def kernel_total(self) -> float | None:
        """The same with each layer's fastest kernel known (None if the database knows none for
        a layer): the database's best, or the graph tuner's own record when that is faster (a
        kernel log of another run or machine), so the total never exceeds `total`."""
        if any(layer.kernel_best is None for layer in self.layers) or not self.layers:
            return None
        return sum(
            min(layer.latency, layer.kernel_best or 0.0) * layer.occurrences
            for layer in self.layers
        )

    def share(self, layer: GraphLayer) -> float:
        """The layer's part of the network total (0-1)."""
        total = self.total
        return layer.total / total if total > 0 else 0.0


# Why an auto_scheduler line is no graph-tuner choice (the graph tuner is AutoTVM's).
AUTO_SCHEDULER_LINE = "an auto_scheduler record, not AutoTVM's"


def read_graph_log(lines: Iterable[bytes]) -> GraphLog:
    """Layers of a graph-tuner output: one per distinct (target, workload, config), in order.

    Failed records (error_no != 0) are not choices and count as rejected, like lines that are
    not AutoTVM v0.2 records (comments and blank lines are skipped).
    """
    layers: dict[tuple[str, str, str, int], GraphLayer] = {}
    rejected: list[tuple[int, str]] = []
    failed = 0
    for number, raw in enumerate(lines, start=1):
        if type(raw) is OverlongLine:  # too long to be held: never parsed
            rejected.append((number, raw.reason))
            continue
        parsed = parse_line(raw)
        if isinstance(parsed, Rejected):
            rejected.append((number, parsed.reason))
            continue
        if parsed is BLANK or parsed is COMMENT:
            continue
        if not isinstance(parsed, TuningRecord):  # an auto_scheduler record
            rejected.append((number, AUTO_SCHEDULER_LINE))
            continue
        if parsed.error_no != 0:
            rejected.append((number, f"error_no {parsed.error_no}: not a graph-tuner choice"))
            failed += 1
            continue
        key = (parsed.target, parsed.task_name, parsed.args_json, parsed.config_index)
        known = layers.get(key)
        if known is not None:
            known.occurrences += 1
            continue
        knobs = {name: (kind, value) for name, kind, value in parsed.entity}
        layers[key] = GraphLayer(
            target=parsed.target,
            task_name=parsed.task_name,
            args=list(parsed.args),
            args_json=parsed.args_json,
            config_index=parsed.config_index,
            latency=parsed.mean_cost,
            layouts=implied_layouts(parsed.task_name, knobs),
            first_line=number,
        )
    found = list(layers.values())
    return GraphLog(found, rejected, _doubts(found, failed))


def _doubts(layers: list[GraphLayer], failed: int) -> list[str]:
    """What a graph tuner's output never holds (see GraphLog.doubts)."""
    doubts: list[str] = []
    targets = {layer.target for layer in layers}
    if len(targets) > 1:
        doubts.append(f"records of {len(targets)} target strings")
    others = sorted({layer.task_name for layer in layers if "conv2d" not in layer.task_name})
    if others:
        doubts.append(f"tasks that are no convolution ({', '.join(others[:3])})")
    if failed:
        doubts.append(f"{failed} failed trial(s)")
    return doubts


@dataclass(frozen=True)
class LayerShare:
    """A tuned layer's winning latency and its part of its target group's total."""

    layer: Layer
    latency: float
    share: float


@dataclass(frozen=True)
class GroupTotal:
    """The sum of winners' latencies of one target group, each layer counted once."""

    group: TargetGroup
    total: float
    layers: list[LayerShare]
    untuned: int  # layers that run a fallback config (rules.untuned): not in the total


def group_totals(layers: Iterable[Layer]) -> list[GroupTotal]:
    """Per target group: the total of winners' single-op latencies and each layer's share.

    A kernel log holds each workload once, so every layer counts once here: without a
    graph-tuner output (`read_graph_log`) occurrences are unknown. Slowest layers first.
    """
    by_group: dict[TargetGroup, list[Layer]] = {}
    for layer in layers:
        by_group.setdefault(layer.group, []).append(layer)
    totals: list[GroupTotal] = []
    for group, members in by_group.items():
        costs = [
            (layer, layer.winner.chosen.mean_cost)
            for layer in members
            if layer.winner is not None
            and layer.winner.chosen is not None
            and not runs_fallback(layer)  # a fallback config: no latency (rules.untuned)
        ]
        total = sum(cost for _, cost in costs)
        shares = [
            LayerShare(layer, cost, cost / total if total > 0 else 0.0)
            for layer, cost in sorted(costs, key=lambda item: -item[1])
        ]
        totals.append(GroupTotal(group, total, shares, len(members) - len(costs)))
    return totals
