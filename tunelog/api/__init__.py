"""The Python API: everything the CLI does, as functions over a `Store`.

import tunelog
with tunelog.open_store("tunelog.db") as store:
    reports = tunelog.import_paths(store, ["logs/"])
    rows = store.best()
    tunelog.export(store, "best.log")

One module per job (`importing`, `exporting`, `listing`, `runs`, `diagnosing`, `sources`,
`comparing`, `graphtuner`, `reporting`, `watching`, `winners`, `shaping`); this package exports
their names and loads a module when one of its names is first used (as `tunelog` does), so a
command pays only for the modules it calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tunelog.lazyexports import exported, listed

# Public name -> the module that defines it.
_EXPORTS = {
    "LABEL_PREFIX": "tunelog.api.comparing",
    "SOURCE_PREFIX": "tunelog.api.comparing",
    "diff": "tunelog.api.comparing",
    "merge": "tunelog.api.comparing",
    "merge_target": "tunelog.api.comparing",
    "ErrorSummary": "tunelog.api.diagnosing",
    "diagnose_untuned": "tunelog.api.diagnosing",
    "errors": "tunelog.api.diagnosing",
    "tuning_progress": "tunelog.api.diagnosing",
    "explain_error": "tunelog.api.explaining",
    "explain_fields": "tunelog.api.explaining",
    "explain_record": "tunelog.api.explaining",
    "ExportReport": "tunelog.api.exporting",
    "LOG_FORMATS": "tunelog.api.exporting",
    "METASCHEDULE_TARGET_WARNING": "tunelog.api.msexporting",
    "export": "tunelog.api.exporting",
    "export_metaschedule": "tunelog.api.msexporting",
    "metaschedule_version_warning": "tunelog.api.msexporting",
    "network": "tunelog.api.graphtuner",
    "network_totals": "tunelog.api.graphtuner",
    "ImportProgress": "tunelog.api.importing",
    "find_logs": "tunelog.api.importing",
    "import_paths": "tunelog.api.importing",
    "LAYERS_LISTED": "tunelog.api.listing",
    "SORT_KEYS": "tunelog.api.listing",
    "UntunedReport": "tunelog.api.listing",
    "find_layer": "tunelog.api.listing",
    "layers": "tunelog.api.listing",
    "layers_named": "tunelog.api.listing",
    "untuned": "tunelog.api.listing",
    "untuned_report": "tunelog.api.listing",
    "write_report": "tunelog.api.reporting",
    "ConvergenceKey": "tunelog.api.runs",
    "LayerConvergence": "tunelog.api.runs",
    "curves": "tunelog.api.runs",
    "knobs": "tunelog.api.runs",
    "layer_convergence": "tunelog.api.runs",
    "curve_as_dict": "tunelog.api.shaping",
    "diff_as_dict": "tunelog.api.shaping",
    "error_as_dict": "tunelog.api.shaping",
    "knobs_as_dict": "tunelog.api.shaping",
    "layer_as_dict": "tunelog.api.shaping",
    "untuned_as_dict": "tunelog.api.shaping",
    "find_source": "tunelog.api.sources",
    "find_sources": "tunelog.api.sources",
    "rejects": "tunelog.api.sources",
    "remove_sources": "tunelog.api.sources",
    "sources_to_remove": "tunelog.api.sources",
    "watch": "tunelog.api.watching",
    "ansor_args_as_written": "tunelog.api.winners",
    "best": "tunelog.api.winners",
    "each_best": "tunelog.api.winners",
    "CurveRow": "tunelog.results",
    "DiffReport": "tunelog.results",
    "MetaScheduleExport": "tunelog.results",
    "ReportSummary": "tunelog.results",
    "SourceRejects": "tunelog.results",
    "TemplateCurve": "tunelog.results",
    "TemplateKnobs": "tunelog.results",
    "Filters": "tunelog.store",
    "Store": "tunelog.store",
}

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
    "find_sources",
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
    "sources_to_remove",
    "tuning_progress",
    "untuned",
    "untuned_report",
    "watch",
    "write_report",
]

if TYPE_CHECKING:
    from tunelog.api.comparing import LABEL_PREFIX as LABEL_PREFIX
    from tunelog.api.comparing import SOURCE_PREFIX as SOURCE_PREFIX
    from tunelog.api.comparing import diff as diff
    from tunelog.api.comparing import merge as merge
    from tunelog.api.comparing import merge_target as merge_target
    from tunelog.api.diagnosing import ErrorSummary as ErrorSummary
    from tunelog.api.diagnosing import diagnose_untuned as diagnose_untuned
    from tunelog.api.diagnosing import errors as errors
    from tunelog.api.diagnosing import tuning_progress as tuning_progress
    from tunelog.api.exporting import LOG_FORMATS as LOG_FORMATS
    from tunelog.api.exporting import ExportReport as ExportReport
    from tunelog.api.exporting import export as export
    from tunelog.api.graphtuner import network as network
    from tunelog.api.graphtuner import network_totals as network_totals
    from tunelog.api.importing import ImportProgress as ImportProgress
    from tunelog.api.importing import find_logs as find_logs
    from tunelog.api.importing import import_paths as import_paths
    from tunelog.api.listing import LAYERS_LISTED as LAYERS_LISTED
    from tunelog.api.listing import SORT_KEYS as SORT_KEYS
    from tunelog.api.listing import UntunedReport as UntunedReport
    from tunelog.api.listing import find_layer as find_layer
    from tunelog.api.listing import layers as layers
    from tunelog.api.listing import layers_named as layers_named
    from tunelog.api.listing import untuned as untuned
    from tunelog.api.listing import untuned_report as untuned_report
    from tunelog.api.msexporting import METASCHEDULE_TARGET_WARNING as METASCHEDULE_TARGET_WARNING
    from tunelog.api.msexporting import export_metaschedule as export_metaschedule
    from tunelog.api.msexporting import metaschedule_version_warning as metaschedule_version_warning
    from tunelog.api.reporting import write_report as write_report
    from tunelog.api.runs import ConvergenceKey as ConvergenceKey
    from tunelog.api.runs import LayerConvergence as LayerConvergence
    from tunelog.api.runs import curves as curves
    from tunelog.api.runs import knobs as knobs
    from tunelog.api.runs import layer_convergence as layer_convergence
    from tunelog.api.shaping import curve_as_dict as curve_as_dict
    from tunelog.api.shaping import diff_as_dict as diff_as_dict
    from tunelog.api.shaping import error_as_dict as error_as_dict
    from tunelog.api.shaping import knobs_as_dict as knobs_as_dict
    from tunelog.api.shaping import layer_as_dict as layer_as_dict
    from tunelog.api.sources import find_source as find_source
    from tunelog.api.sources import find_sources as find_sources
    from tunelog.api.sources import rejects as rejects
    from tunelog.api.sources import remove_sources as remove_sources
    from tunelog.api.sources import sources_to_remove as sources_to_remove
    from tunelog.api.watching import watch as watch
    from tunelog.api.winners import ansor_args_as_written as ansor_args_as_written
    from tunelog.api.winners import best as best
    from tunelog.api.winners import each_best as each_best
    from tunelog.results import CurveRow as CurveRow
    from tunelog.results import DiffReport as DiffReport
    from tunelog.results import MetaScheduleExport as MetaScheduleExport
    from tunelog.results import ReportSummary as ReportSummary
    from tunelog.results import SourceRejects as SourceRejects
    from tunelog.results import TemplateCurve as TemplateCurve
    from tunelog.results import TemplateKnobs as TemplateKnobs
    from tunelog.store import Filters as Filters
    from tunelog.store import Store as Store


def __getattr__(name: str) -> Any:
    return exported(__name__, globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return listed(globals(), _EXPORTS)
