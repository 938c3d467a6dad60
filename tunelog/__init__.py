"""tunelog: manage Apache TVM AutoTVM tuning logs without TVM.

Library first; the `tunelog` command is a thin layer over these functions.
"""

from tunelog.api import (
    ErrorSummary,
    ExportReport,
    error_as_dict,
    errors,
    export,
    import_paths,
    layer_as_dict,
    layers,
    untuned,
)
from tunelog.errorcodes import ERROR_CODES, ErrorCode, diagnose, lookup_error_code
from tunelog.exceptions import TunelogError
from tunelog.layers import Layer, TemplateResult
from tunelog.models import BestRow, FileReport, RejectedLine, Source, Stats
from tunelog.records import TuningRecord, parse_line
from tunelog.selection import HistoryBest, history_best
from tunelog.store import Filters, Store, open_store
from tunelog.targets import Target, parse_target

__version__ = "0.1.0"

__all__ = [
    "ERROR_CODES",
    "BestRow",
    "ErrorCode",
    "ErrorSummary",
    "ExportReport",
    "FileReport",
    "Filters",
    "HistoryBest",
    "Layer",
    "RejectedLine",
    "Source",
    "Stats",
    "Store",
    "Target",
    "TemplateResult",
    "TunelogError",
    "TuningRecord",
    "__version__",
    "diagnose",
    "error_as_dict",
    "errors",
    "export",
    "history_best",
    "import_paths",
    "layer_as_dict",
    "layers",
    "lookup_error_code",
    "open_store",
    "parse_line",
    "parse_target",
    "untuned",
]
