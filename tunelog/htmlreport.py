"""The HTML report: one self-contained page (every script and style inline, no network).

Pure: it turns layers, failures and counts the API gathered into HTML text; plotly.js comes in
as a string (the API reads it from the plotly package); the charts are the plotly.js figure
specs of `tunelog.reportfigures`, written into the page as plain JSON.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import orjson

from tunelog.errorcodes import ERROR_CODES, METASCHEDULE_ERRORS, error_name
from tunelog.escaping import shown
from tunelog.layers import Layer
from tunelog.reportfigures import (
    BAR_LAYERS_SHOWN,
    CURVE_LAYERS_SHOWN,
    curves_figure,
    latency_figure,
)
from tunelog.rules.untuned import answer_text, is_untuned


@dataclass
class FailureRow:
    """Failures of one template on one layer, with the diagnosis (see `api.errors`)."""

    target: str
    operator: str
    shapes: str
    template: str
    failed: int
    trials: int
    errors: dict[str, int]
    diagnosis: list[str]


@dataclass
class ReportData:
    """Everything a report shows; `curves[i]` are the best-so-far steps of `layers[i]` and
    `verdicts[i]` its convergence verdict (tunelog.convergence), when known."""

    database: str
    generated: str
    filters: str
    sources: int
    targets: int
    records: int
    valid: int
    failed: int
    layers: list[Layer]
    failures: list[FailureRow]
    curves: list[list[tuple[int, float]]] = field(default_factory=list)
    verdicts: list[str | None] = field(default_factory=list)


# -- rendering ----------------------------------------------------------------------------------


def render(data: ReportData, plotly_js: str) -> str:
    """The report page as HTML text."""
    untuned = [lay for lay in data.layers if is_untuned(lay)]
    tuned = [lay for lay in data.layers if lay.winner is not None and not is_untuned(lay)]
    curves = sum(1 for curve in data.curves if curve)
    # A chart of nothing is left out: its note says why (an empty plot drew bare axes).
    figures = {
        **({"latency-chart": latency_figure(tuned)} if tuned else {}),
        **({"curves-chart": curves_figure(data.layers, data.curves)} if curves else {}),
    }
    body = "\n".join(
        [
            "<h1>tunelog report</h1>",
            f"<p class=meta>{_e(data.database)} · generated {_e(data.generated)}"
            + (f" · {_e(data.filters)}" if data.filters else "")
            + "</p>",
            _summary(data, tuned, untuned),
            "<h2>Where the time goes: latency per layer</h2>",
            _chart_note(len(tuned), BAR_LAYERS_SHOWN, "slowest"),
            '<div id="latency-chart" class=chart></div>' if tuned else "",
            "<h2>Totals per target group</h2>",
            _totals_table(data.layers),
            "<h2>Layers</h2>",
            "<p class=note>Click a column header to sort.</p>",
            _layers_table(data.layers, data.verdicts),
            "<h2>Best so far per layer</h2>",
            _chart_note(curves, CURVE_LAYERS_SHOWN, "slowest", what="layers with a valid trial"),
            '<div id="curves-chart" class=chart></div>' if curves else "",
            "<h2>Failures</h2>",
            _failures(data.failures),
            "<h2>Untuned layers</h2>",
            _untuned_table(untuned),
        ]
    )
    return _PAGE.format(
        style=_STYLE,
        body=body,
        plotly=plotly_js,
        figures=_script_json(figures),
        sort_js=_SORT_JS,
    )


def _summary(data: ReportData, tuned: list[Layer], untuned: list[Layer]) -> str:
    shown_trials = sum(lay.trials for lay in data.layers)
    shown_valid = sum(t.valid for lay in data.layers for t in lay.templates)
    cards = [
        ("sources", data.sources),
        ("targets", data.targets),
        ("records", data.records),
        ("valid", data.valid),
        ("failed", data.failed),
        ("layers", len(data.layers)),
        ("tuned", len(data.layers) - len(untuned)),
        ("untuned", len(untuned)),
    ]
    html_cards = "".join(
        f"<div class=card><div class=n>{value:,}</div><div class=l>{name}</div></div>"
        for name, value in cards
    )
    note = (
        f"<p class=note>Layers shown hold {shown_trials:,} trials "
        f"({shown_valid:,} valid, {shown_trials - shown_valid:,} failed); the first five counts "
        "are the whole database's.</p>"
    )
    return f"<div class=cards>{html_cards}</div>{note}"


def _chart_note(count: int, shown: int, which: str, *, what: str = "tuned layers") -> str:
    """What a chart leaves out: everything (`count` is 0), or all but the first `shown`."""
    if count == 0:
        return f"<p class=note>No {what.replace('layers', 'layer')}.</p>"
    if count <= shown:
        return ""
    return f"<p class=note>The {shown} {which} of {count} {what}; all are in the table.</p>"


def _layers_table(layers: list[Layer], verdicts: list[str | None]) -> str:
    verdicts = verdicts or [None] * len(layers)
    has_verdict = any(v is not None for v in verdicts)
    headers = ["target", "operator", "shapes", "winner", "config", "latency", "GFLOPS"]
    headers += ["margin", "trials", "templates"]
    if has_verdict:
        headers.append("verdict")
    rows = []
    for layer, verdict in zip(layers, verdicts, strict=True):
        winner = layer.winner
        chosen = winner.chosen if winner else None
        margin, gflops = layer.margin, layer.gflops
        cells = [
            _td(layer.group.label),
            _td(layer.family),
            _td(layer.shapes),
            _td(winner.name if winner else "(untuned)"),
            _td(chosen.config_index if chosen else "", chosen.config_index if chosen else None),
            _td(_latency(chosen.mean_cost) if chosen else "", chosen.mean_cost if chosen else None),
            _td(f"{gflops:.1f}" if gflops is not None else "", gflops),
            _td(f"+{margin * 100:.0f}%" if margin is not None else "", margin),
            _td(f"{layer.trials:,}", layer.trials),
            _td(len(layer.templates), len(layer.templates)),
        ]
        if has_verdict:
            cells.append(_td("" if verdict is None else verdict))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return _table("layers", headers, rows)


def _failures(failures: list[FailureRow]) -> str:
    if not failures:
        return "<p class=note>No failed trials.</p>"
    totals: dict[str, int] = {}
    for row in failures:
        for name, count in row.errors.items():
            totals[name] = totals.get(name, 0) + count
    meanings = {error_name(n): code.meaning for n, code in ERROR_CODES.items()}
    meanings.update(METASCHEDULE_ERRORS.values())
    by_error = [
        f"<tr>{_td(name)}{_td(f'{count:,}', count)}{_td(meanings.get(name, ''))}</tr>"
        for name, count in sorted(totals.items(), key=lambda nc: (-nc[1], nc[0]))
    ]
    per_template = [
        "<tr>"
        + _td(row.target)
        + _td(row.operator)
        + _td(row.shapes)
        + _td(row.template)
        + _td(f"{row.failed:,}/{row.trials:,}", row.failed)
        + _td(", ".join(f"{name} x{count}" for name, count in row.errors.items()))
        + _td(" ".join(row.diagnosis))
        + "</tr>"
        for row in failures
    ]
    return (
        _table("errors", ["error", "trials", "meaning"], by_error)
        + "<h3>By template, with the diagnosis</h3>"
        + _table(
            "failures",
            ["target", "operator", "shapes", "template", "failed", "errors", "diagnosis"],
            per_template,
        )
    )


def _totals_table(layers: list[Layer]) -> str:
    """Winners' latency summed per target group, with the slowest layer's share."""
    from tunelog.network import group_totals

    totals = group_totals(layers)
    if not totals:
        return "<p class=note>No layer.</p>"
    rows = []
    for total in totals:
        slowest = total.layers[0] if total.layers else None
        rows.append(
            "<tr>"
            + _td(total.group.label)
            # No layer summed (every one untuned): no total, not a network of 0.0 us.
            + (_td(_latency(total.total), total.total) if total.layers else _td("-", -1))
            + _td(str(len(total.layers)), len(total.layers))
            + _td(str(total.untuned), total.untuned)
            + _td(
                f"{slowest.layer.shapes} ({100 * slowest.share:.1f} %)" if slowest else "",
                slowest.share if slowest else 0,
            )
            + "</tr>"
        )
    note = (
        "<p class=note>Each layer counted once: a kernel log cannot count how often the network "
        "runs a layer (a graph-tuner output can: <code>tunelog network GRAPH_LOG</code>). "
        "A layer with a fallback config is not in the total; one answered only by another "
        "machine's record (an untuned layer above) is, with that record's latency: TVM runs its "
        "config.</p>"
    )
    headers = ["target", "total", "layers summed", "fallback configs", "slowest layer (share)"]
    return note + _table("totals", headers, rows)


def _untuned_table(untuned: list[Layer]) -> str:
    if not untuned:
        return "<p class=note>Every layer has at least one valid measurement.</p>"
    rows = [
        "<tr>"
        + _td(lay.group.label)
        + _td(lay.family)
        + _td(lay.shapes)
        + _td(", ".join(t.name for t in lay.templates))
        + _td(f"{lay.trials:,}", lay.trials)
        + _td(answer_text(lay))
        + "</tr>"
        for lay in untuned
    ]
    return (
        "<p class=note>No valid measurement the compile can use: these run a fallback config, "
        "or one measured on another machine (answered by).</p>"
        + _table(
            "untuned", ["target", "operator", "shapes", "templates", "trials", "answered by"], rows
        )
    )


def _table(name: str, headers: list[str], rows: list[str]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    return (
        f'<table id="{name}-table" class=sortable><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _td(text: object, sort_value: float | int | None = None) -> str:
    """A cell; `sort_value` (a number) is what the column sorts by instead of the text."""
    if sort_value is None or (isinstance(sort_value, float) and not math.isfinite(sort_value)):
        return f"<td>{_e(text)}</td>"
    return f'<td data-v="{sort_value!r}">{_e(text)}</td>'


def _e(value: object) -> str:
    # Control characters escaped as the terminal shows them (`escaping.shown`), then HTML's.
    return html.escape(shown(str(value)), quote=True)


def _latency(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def _script_json(value: object) -> str:
    """JSON safe inside a <script> element: no `</` can close it early."""
    text = orjson.dumps(value).decode()
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222}
h1{margin:0 0 4px}h2{margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta,.note{color:#666}.cards{display:flex;flex-wrap:wrap;gap:12px;margin-top:16px}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 16px;min-width:90px}
.card .n{font-size:22px;font-weight:600}.card .l{color:#666}
table{border-collapse:collapse;margin-top:8px}th,td{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f4f4f4;cursor:pointer;user-select:none}
th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
td[data-v]{text-align:right;font-variant-numeric:tabular-nums}.chart{max-width:1200px}
"""

# Sort a table by the clicked column: by data-v when the cells have one, else by text.
_SORT_JS = """
document.querySelectorAll("table.sortable th").forEach(function (th, _) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], col = th.cellIndex;
    var desc = th.classList.contains("asc");
    table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(desc ? "desc" : "asc");
    var key = function (row) {
      var cell = row.cells[col];
      if (!cell) return "";
      var v = cell.getAttribute("data-v");
      return v === null ? cell.textContent : parseFloat(v);
    };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b), c;
      if (typeof x === "number" && typeof y === "number") c = x - y;
      else if (typeof x === "number") c = -1;
      else if (typeof y === "number") c = 1;
      else c = String(x).localeCompare(String(y));
      return desc ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tunelog report</title>
<style>{style}</style>
<script>{plotly}</script>
</head><body>
{body}
<script>
var figures = {figures};
Object.keys(figures).forEach(function (id) {{
  var fig = figures[id];
  if (fig.data.length) Plotly.newPlot(id, fig.data, fig.layout,
    {{displaylogo: false, responsive: true}});
}});
{sort_js}
</script>
</body></html>
"""
