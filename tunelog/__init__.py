"""tunelog: manage Apache TVM AutoTVM tuning logs without TVM.

Library first; the `tunelog` command is a thin layer over these functions.
"""

from tunelog.api import ExportReport, export, import_paths
from tunelog.exceptions import TunelogError
from tunelog.models import BestRow, FileReport, RejectedLine, Source, Stats
from tunelog.records import TuningRecord, parse_line
from tunelog.selection import HistoryBest, history_best
from tunelog.store import Filters, Store, open_store
from tunelog.targets import Target, parse_target

__version__ = "0.1.0"

__all__ = [
    "BestRow",
    "ExportReport",
    "FileReport",
    "Filters",
    "HistoryBest",
    "RejectedLine",
    "Source",
    "Stats",
    "Store",
    "Target",
    "TunelogError",
    "TuningRecord",
    "__version__",
    "export",
    "history_best",
    "import_paths",
    "open_store",
    "parse_line",
    "parse_target",
]
