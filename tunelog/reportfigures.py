"""The report's figures: best-so-far curves from trials, and the plotly.js figure specs.

Pure: figures are plain JSON-able dicts (plotly.js specs), so rendering never imports plotly's
Python figure classes; `tunelog.htmlreport` puts them on the page.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tunelog.layers import Layer
from tunelog.rules.bestsofar import BestSoFar

# Charts stay readable (and the file small) on large databases: the slowest layers are drawn,
# every layer is in the table.
BAR_LAYERS_SHOWN = 60
CURVE_LAYERS_SHOWN = 30


def best_so_far_curves(
    trials: Iterable[tuple[str, int, int, float]],
    layers: Sequence[Layer],
    targets_of: Sequence[frozenset[str]],
) -> list[list[tuple[int, float]]]:
    """Per layer, its best-so-far steps over `(target, workload id, error_no, mean_cost)`.

    `trials` come in import order; a trial counts for layer i when its workload is one of the
    layer's templates and its target string is in `targets_of[i]`.
    """
    owner: dict[tuple[str, int], BestSoFar] = {}
    curves = [BestSoFar() for _ in layers]
    for layer, targets, curve in zip(layers, targets_of, curves, strict=True):
        for template in layer.templates:
            for target in targets:
                owner.setdefault((target, template.workload.id), curve)
    get = owner.get
    for target, workload_id, error_no, mean_cost in trials:
        found = get((target, workload_id))
        if found is None:
            continue
        found.add(mean_cost, error_no)
    return [curve.points() for curve in curves]


def layer_label(layer: Layer) -> str:
    """How a chart names a layer: operator, shapes and target group."""
    return f"{layer.family} {layer.shapes} · {layer.group.label}"


def _slowest(layers: list[Layer], count: int) -> list[Layer]:
    return sorted(layers, key=lambda lay: -winning_cost(lay))[:count]


def winning_cost(layer: Layer) -> float:
    """The mean cost of the layer's chosen config (0 when none is chosen)."""
    if layer.winner is None or layer.winner.chosen is None:
        return 0.0
    return layer.winner.chosen.mean_cost


# Plotly draws its toolbar (the modebar) at the top right, over the plot area: a top margin
# this tall keeps it above the first bar's label and the curves.
MODEBAR_ROOM = 40


def latency_figure(tuned: list[Layer]) -> dict[str, object]:
    """The bar chart of the slowest tuned layers' winning latency (a plotly.js figure spec)."""
    shown = _slowest(tuned, BAR_LAYERS_SHOWN)[::-1]  # plotly draws the first bar at the bottom
    return {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                "x": [winning_cost(lay) * 1e6 for lay in shown],
                "y": [layer_label(lay) for lay in shown],
                "text": [lay.winner.name if lay.winner else "" for lay in shown],
                "hovertemplate": "%{y}<br>%{text}<br>%{x:.1f} µs<extra></extra>",
                "marker": {"color": "#4c78a8"},
            }
        ],
        "layout": {
            "height": max(260, 24 * len(shown) + 80),
            "margin": {"l": 360, "r": 20, "t": MODEBAR_ROOM, "b": 40},
            "xaxis": {"title": {"text": "latency of the winning config (µs)"}},
            "yaxis": {"automargin": True},
        },
    }


def curves_figure(layers: list[Layer], curves: list[list[tuple[int, float]]]) -> dict[str, object]:
    """The best-so-far curves of the slowest layers (a plotly.js figure spec)."""
    with_curve = [(lay, c) for lay, c in zip(layers, curves, strict=False) if c]
    costs = {id(lay): winning_cost(lay) for lay, _ in with_curve}
    with_curve.sort(key=lambda lc: -costs[id(lc[0])])
    traces = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "line": {"shape": "hv"},
            "name": layer_label(lay),
            "x": [trial for trial, _ in curve],
            "y": [cost * 1e6 for _, cost in curve],
            "hovertemplate": "trial %{x}: %{y:.1f} µs<extra>%{fullData.name}</extra>",
        }
        for lay, curve in with_curve[:CURVE_LAYERS_SHOWN]
    ]
    return {
        "data": traces,
        "layout": {
            "height": 460,
            "margin": {"l": 70, "r": 20, "t": MODEBAR_ROOM, "b": 40},
            "xaxis": {"title": {"text": "trial (import order)"}},
            "yaxis": {"title": {"text": "best latency so far (µs)"}, "type": "log"},
            "showlegend": len(traces) <= 12,
        },
    }
