"""The report: one self-contained HTML page describing the database."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tunelog.api.diagnosing import errors
from tunelog.api.importing import _database_files
from tunelog.api.listing import layers
from tunelog.api.runs import layer_convergence
from tunelog.exceptions import (
    MissingExtraError,
)
from tunelog.store import Filters, Store
from tunelog.targets import parse_target

if TYPE_CHECKING:
    from tunelog import htmlreport
    from tunelog.results import (
        ReportSummary,
    )


def write_report(
    store: Store,
    out: str | os.PathLike[str],
    filters: Filters | None = None,
    *,
    force: bool = False,
) -> ReportSummary:
    """Write one HTML page (scripts and styles inline, no network) describing the database.

    Summary, winners' totals per target group, per-layer table, latency and best-so-far charts,
    failures with their diagnosis, untuned layers; the same filters as `layers`. Needs plotly
    (`pip install 'tunelog[report]'`).
    """
    from tunelog import htmlreport as page
    from tunelog import optionvalues
    from tunelog.exporting import write_lines_atomically
    from tunelog.results import ReportSummary

    out = os.fspath(out)  # a Path too (the summary names it as text)
    optionvalues.output_path(out, "out")  # before the work: an empty path names no file
    plotly_js = _plotly_js()
    with store.snapshot():  # every part of the page from one state of the database
        data = _report_data(store, filters or Filters())
    text = page.render(data, plotly_js).encode()
    write_lines_atomically(
        out, [text], force=force, protected=_database_files(store), kind="report"
    )
    from tunelog.rules.untuned import is_untuned

    untuned_count = sum(1 for lay in data.layers if is_untuned(lay))
    return ReportSummary(out, len(data.layers), untuned_count, len(data.failures), len(text) + 1)


def _plotly_js() -> str:
    """plotly.js from the plotly package: the report inlines it, so opening it needs no network.

    Read as a file: importing plotly's Python API would cost time and is not needed.
    """
    from importlib import resources

    try:
        return resources.files("plotly").joinpath("package_data/plotly.min.js").read_text("utf-8")
    except (ImportError, OSError):
        raise MissingExtraError(
            "tunelog report draws its charts with plotly.js from the plotly package, which is "
            "not installed: pip install 'tunelog[report]' (in a checkout: "
            "pip install -e '.[report]')"
        ) from None


def _report_data(store: Store, filters: Filters) -> htmlreport.ReportData:
    import datetime

    from tunelog import htmlreport as page
    from tunelog.reportfigures import best_so_far_curves
    from tunelog.rules.slots import target_group

    found = layers(store, filters)
    stats = store.stats()
    failures = [
        page.FailureRow(
            target=e.layer.group.label,
            operator=e.layer.family,
            shapes=e.layer.shapes,
            template=e.template.name,
            failed=e.template.failed,
            trials=e.template.trials,
            errors=e.error_counts,
            diagnosis=e.diagnosis,
        )
        for e in errors(store, filters)
    ]
    all_targets = [str(row["target"]) for row in stats.by_target]
    query = filters.query_target
    if query is None:
        targets_of = [frozenset(lay.group.targets) for lay in found]
    else:
        # --for-target: the trials its layers count, those of the database's targets in its
        # group (same keys and -model): another model's trials (which may answer through a
        # key slot) are no history of the target asked about.
        asked = target_group(query)
        members = frozenset(t for t in all_targets if target_group(parse_target(t)) == asked)
        targets_of = [members for _ in found]
    curves = best_so_far_curves(store.trials_in_import_order(), found, targets_of)
    return page.ReportData(
        database=store.path,
        generated=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        filters=filters.describe(),
        sources=stats.sources,
        targets=stats.targets,
        records=stats.records,
        valid=stats.valid,
        failed=stats.failed,
        layers=found,
        failures=failures,
        curves=curves,
        verdicts=[
            (convergence.of_layer(lay).verdict if lay.templates else None)
            for convergence in (layer_convergence(store, found, filters=filters),)
            for lay in found
        ],
    )
