"""Results as plain JSON-ready data: what the `--json` options print."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunelog.api.diagnosing import ErrorSummary
from tunelog.api.runs import LayerConvergence
from tunelog.rules.untuned import answered_only_by_v01

if TYPE_CHECKING:
    from tunelog.layers import Layer, TemplateResult
    from tunelog.results import (
        DiffReport,
        TemplateCurve,
        TemplateKnobs,
    )


def untuned_as_dict(layer: Layer) -> dict[str, object]:
    """An untuned layer as `tunelog untuned --json` prints it: `layer_as_dict`, and the answer
    it is untuned with, if any (`answered_by`: another machine's record, or v0.1 only)."""
    from tunelog.rules.untuned import answer_text

    return {**layer_as_dict(layer), "answered_by": answer_text(layer) or None}


def layer_as_dict(layer: Layer, convergence: LayerConvergence | None = None) -> dict[str, object]:
    """A layer as plain JSON-ready data (what `tunelog workloads --json` prints).

    With `convergence`: each template's convergence, and the layer's verdict and trials to best
    (those of the template relay picks).
    """
    data = _layer_dict(layer)
    if convergence is not None:
        templates: list[dict[str, object]] = data["templates"]  # type: ignore[assignment]
        for entry, summary in zip(templates, convergence.of_templates(layer), strict=True):
            entry["convergence"] = summary.as_dict()
        chosen = convergence.of_layer(layer)
        data["verdict"] = chosen.verdict
        data["trials_to_best"] = chosen.trials_to_best
    return data


def _layer_dict(layer: Layer) -> dict[str, object]:
    winner = layer.winner
    winning = winner.chosen if winner is not None else None
    group = layer.group
    templates: list[dict[str, object]] = []
    layer_trials = 0  # `Layer.trials`, summed here from each template's count already taken
    for t in layer.templates:
        trials, valid = t.counts()
        layer_trials += trials
        workload, chosen = t.workload, t.chosen
        templates.append(
            {
                "template": workload.task_name,
                "template_key": workload.template_key,
                "args": workload.args,
                "trials": trials,
                "valid": valid,
                "failed": trials - valid,
                "best_cost": chosen.mean_cost if chosen else None,
                "best_config": chosen.config_index if chosen else None,
                "source": f"{chosen.source}:{chosen.line}" if chosen else None,
                "measured_on": chosen.target if chosen else None,
                "offered": t.offered,
                "offer_condition": t.offer_note,
            }
        )
    return {
        "target_keys": list(group.keys),
        "model": group.model,
        "targets": list(group.targets),
        "operator": layer.family,
        "shapes": layer.shapes,
        "layer_key": layer.key,
        "templates": templates,
        "winner": winner.workload.task_name if winner else None,
        "winner_config": winning.config_index if winning else None,
        "winner_cost": winning.mean_cost if winning else None,
        # Its winner is a v0.1 record, which TVM >= 0.7 skips (`rules.untuned`).
        "v01_only": answered_only_by_v01(layer),
        "margin": layer.margin,
        "flops": layer.flops,
        "gflops": layer.gflops,
        "trials": layer_trials,
        "warnings": list(layer.warnings),
        "strategy_note": layer.strategy_note,
    }


def error_as_dict(summary: ErrorSummary) -> dict[str, object]:
    """An error summary as plain JSON-ready data (what `tunelog errors --json` prints)."""
    layer, template = summary.layer, summary.template
    return {
        "target_keys": list(layer.group.keys),
        "model": layer.group.model,
        "operator": layer.family,
        "shapes": layer.shapes,
        "template": template.workload.task_name,
        "trials": template.trials,
        "failed": template.failed,
        "errors": summary.error_counts,
        "diagnosis": summary.diagnosis,
    }


def _layer_template_fields(layer: Layer, template: TemplateResult) -> dict[str, object]:
    """Which layer and template a `curve --json` or `knobs --json` entry is about."""
    return {
        "target_keys": list(layer.group.keys),
        "model": layer.group.model,
        "shapes": layer.shapes,
        "layer_key": layer.key,
        "template": template.workload.task_name,
        "winner": layer.winner is template,
    }


def curve_as_dict(curve: TemplateCurve) -> dict[str, object]:
    """A template's curve as plain JSON-ready data (what `tunelog curve --json` prints)."""
    return {
        **_layer_template_fields(curve.layer, curve.template),
        "template_key": curve.template.workload.template_key,
        **curve.summary.as_dict(),
        "series": [
            {
                "trial": r.trial,
                "source": f"{r.source}:{r.line}",
                "config": r.config_index,
                "cost": r.cost,
                "error_no": r.error_no,
                "best": r.best,
                "improved": r.improved,
            }
            for r in curve.rows
        ],
    }


def knobs_as_dict(entry: TemplateKnobs) -> dict[str, object]:
    """A template's knob table as plain JSON-ready data (what `tunelog knobs --json` prints)."""
    return {
        **_layer_template_fields(entry.layer, entry.template),
        "chosen_config": entry.chosen_config,
        "coverage": {
            "trials": entry.coverage.trials,
            "distinct_configs": entry.coverage.configs,
            "sp_factorisations": entry.coverage.sp_factorisations,
            "space_size": None,  # not in the log: AutoTVM computes it from the template
        },
        "knobs": [
            {
                "knob": v.knob,
                "type": v.kind,
                "value": v.value,
                "trials": v.trials,
                "valid": v.valid,
                "failed": v.trials - v.valid,
                "best_cost": v.best,
                "median_cost": v.median,
                "chosen": v.chosen,
            }
            for v in entry.values
        ],
    }


def diff_as_dict(report: DiffReport) -> dict[str, object]:
    """A diff as plain JSON-ready data (what `tunelog diff --json` prints)."""
    from tunelog.diffing import STATUSES

    return {
        "a": report.a,
        "b": report.b,
        "threshold_pct": report.threshold_pct,
        "counts": {status: report.count(status) for status in STATUSES},
        "winner_changes": len(report.winner_changes),
        "layers": [d.model_dump() for d in report.layers],
        "notes": report.notes,
    }
