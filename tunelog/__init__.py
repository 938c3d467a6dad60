"""tunelog: manage Apache TVM AutoTVM tuning logs without TVM.

Library first; the `tunelog` command is a thin layer over these functions. Names are loaded
on first use (PEP 562), so `import tunelog` and the command's start-up stay cheap.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from tunelog.lazyexports import exported, listed

__version__ = "0.2.0"

# Public name -> the module that defines it.
_EXPORTS = {
    "ErrorSummary": "tunelog.api.diagnosing",
    "ExportReport": "tunelog.api.exporting",
    "error_as_dict": "tunelog.api.shaping",
    "errors": "tunelog.api.diagnosing",
    "export": "tunelog.api.exporting",
    "import_paths": "tunelog.api.importing",
    "layer_as_dict": "tunelog.api.shaping",
    "layers": "tunelog.api.listing",
    "untuned": "tunelog.api.listing",
    "write_report": "tunelog.api.reporting",
    "remove_sources": "tunelog.api.sources",
    "merge": "tunelog.api.comparing",
    "diff": "tunelog.api.comparing",
    "diff_as_dict": "tunelog.api.shaping",
    "DiffReport": "tunelog.results",
    "watch": "tunelog.api.watching",
    "ERROR_CODES": "tunelog.errorcodes",
    "ErrorCode": "tunelog.errorcodes",
    "diagnose": "tunelog.failurecauses",
    "lookup_error_code": "tunelog.errorcodes",
    "TunelogError": "tunelog.exceptions",
    "Filters": "tunelog.filters",
    "Layer": "tunelog.layers",
    "LayerStatus": "tunelog.live",
    "Refresh": "tunelog.live",
    "TemplateResult": "tunelog.layers",
    "BestRow": "tunelog.models",
    "FileReport": "tunelog.models",
    "RejectedLine": "tunelog.models",
    "Source": "tunelog.models",
    "Stats": "tunelog.models",
    "TuningRecord": "tunelog.recordmodels",
    "parse_line": "tunelog.records",
    "HistoryBest": "tunelog.selection",
    "history_best": "tunelog.selection",
    "Store": "tunelog.store",
    "MergeReport": "tunelog.store.merging",
    "LayerDiff": "tunelog.diffing",
    "open_store": "tunelog.store",
    "Target": "tunelog.targets",
    "parse_target": "tunelog.targets",
}

__all__ = [
    "ERROR_CODES",
    "BestRow",
    "DiffReport",
    "ErrorCode",
    "ErrorSummary",
    "ExportReport",
    "FileReport",
    "Filters",
    "HistoryBest",
    "Layer",
    "LayerDiff",
    "LayerStatus",
    "MergeReport",
    "Refresh",
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
    "diff",
    "diff_as_dict",
    "error_as_dict",
    "errors",
    "export",
    "history_best",
    "import_paths",
    "layer_as_dict",
    "layers",
    "lookup_error_code",
    "merge",
    "open_store",
    "parse_line",
    "parse_target",
    "remove_sources",
    "untuned",
    "watch",
    "write_report",
]

if TYPE_CHECKING:
    from tunelog.api import (
        DiffReport,
        ErrorSummary,
        ExportReport,
        error_as_dict,
        errors,
        export,
        import_paths,
        layer_as_dict,
        layers,
        merge,
        remove_sources,
        untuned,
        watch,
        write_report,
    )
    from tunelog.api import diff as diff
    from tunelog.api import diff_as_dict as diff_as_dict
    from tunelog.diffing import LayerDiff
    from tunelog.errorcodes import ERROR_CODES, ErrorCode, lookup_error_code
    from tunelog.exceptions import TunelogError
    from tunelog.failurecauses import diagnose
    from tunelog.filters import Filters
    from tunelog.layers import Layer, TemplateResult
    from tunelog.live import LayerStatus, Refresh
    from tunelog.models import BestRow, FileReport, RejectedLine, Source, Stats
    from tunelog.recordmodels import TuningRecord
    from tunelog.records import parse_line
    from tunelog.selection import HistoryBest, history_best
    from tunelog.store import Store, open_store
    from tunelog.store.merging import MergeReport
    from tunelog.targets import Target, parse_target


class _Package(types.ModuleType):
    """The package's module type: `tunelog.layers` stays the public function.

    `layers` names both the function (`tunelog.layers(store)`) and the submodule that defines
    layers; importing the submodule would bind it over the function, so that binding is
    skipped (`from tunelog.layers import Layer` still works: it reads sys.modules).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "layers" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


# Subpackages reachable as attributes without their own import (`tunelog.api.each_best`, as
# the README writes it): loaded on first use, as the names above.
_SUBPACKAGES = ("api",)


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    return exported(__name__, globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted({*listed(globals(), _EXPORTS), *_SUBPACKAGES})
