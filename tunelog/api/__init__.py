"""The Python API: everything the CLI does, as functions over a `Store`.

import tunelog
with tunelog.open_store("tunelog.db") as store:
    reports = tunelog.import_paths(store, ["logs/"])
    rows = store.best()
    tunelog.export(store, "best.log")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunelog.api.comparing import (
    LABEL_PREFIX,
    SOURCE_PREFIX,
    diff,
    merge,
    merge_target,
)
from tunelog.api.diagnosing import (
    ErrorSummary,
    diagnose_untuned,
    errors,
    tuning_progress,
)
from tunelog.api.exporting import (
    LOG_FORMATS,
    METASCHEDULE_TARGET_WARNING,
    ExportReport,
    export,
    export_metaschedule,
    metaschedule_version_warning,
)
from tunelog.api.graphtuner import network, network_totals
from tunelog.api.importing import (
    ImportProgress,
    find_logs,
    import_paths,
)
from tunelog.api.listing import (
    LAYERS_LISTED,
    SORT_KEYS,
    UntunedReport,
    find_layer,
    layers,
    layers_named,
    untuned,
    untuned_report,
)
from tunelog.api.reporting import write_report
from tunelog.api.runs import (
    ConvergenceKey,
    LayerConvergence,
    curves,
    knobs,
    layer_convergence,
)
from tunelog.api.shaping import (
    curve_as_dict,
    diff_as_dict,
    error_as_dict,
    knobs_as_dict,
    layer_as_dict,
)
from tunelog.api.sources import (
    find_source,
    rejects,
    remove_sources,
)
from tunelog.api.watching import watch
from tunelog.api.winners import ansor_args_as_written, best, each_best
from tunelog.store import Filters, Store

__all__ = [
    "LABEL_PREFIX",
    "LAYERS_LISTED",
    "LOG_FORMATS",
    "METASCHEDULE_TARGET_WARNING",
    "SORT_KEYS",
    "SOURCE_PREFIX",
    "ConvergenceKey",
    "CurveRow",
    "DiffReport",
    "ErrorSummary",
    "ExportReport",
    "Filters",
    "ImportProgress",
    "LayerConvergence",
    "MetaScheduleExport",
    "ReportSummary",
    "SourceRejects",
    "Store",
    "TemplateCurve",
    "TemplateKnobs",
    "UntunedReport",
    "ansor_args_as_written",
    "best",
    "curve_as_dict",
    "curves",
    "diagnose_untuned",
    "diff",
    "diff_as_dict",
    "each_best",
    "error_as_dict",
    "errors",
    "export",
    "export_metaschedule",
    "find_layer",
    "find_logs",
    "find_source",
    "import_paths",
    "knobs",
    "knobs_as_dict",
    "layer_as_dict",
    "layer_convergence",
    "layers",
    "layers_named",
    "merge",
    "merge_target",
    "metaschedule_version_warning",
    "network",
    "network_totals",
    "rejects",
    "remove_sources",
    "tuning_progress",
    "untuned",
    "untuned_report",
    "watch",
    "write_report",
]

# Results of the calls few commands make: tunelog.results defines them (its __all__), this
# package exports them (the imports below for type checkers, __getattr__ at run time).
if TYPE_CHECKING:
    from tunelog.results import CurveRow as CurveRow
    from tunelog.results import DiffReport as DiffReport
    from tunelog.results import MetaScheduleExport as MetaScheduleExport
    from tunelog.results import ReportSummary as ReportSummary
    from tunelog.results import SourceRejects as SourceRejects
    from tunelog.results import TemplateCurve as TemplateCurve
    from tunelog.results import TemplateKnobs as TemplateKnobs


def __getattr__(name: str) -> object:
    if not name.startswith("__"):  # not a probe for module dunders: no need to load results
        from tunelog import results

        if name in results.__all__:
            return getattr(results, name)
    raise AttributeError(f"module 'tunelog.api' has no attribute {name!r}")
