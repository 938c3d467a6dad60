"""Results of the API calls few commands make: curves, knobs, rejects, report, diff, export of a
MetaSchedule database.

Apart from tunelog.api (which re-exports them) so that the listings of layers, which import
tunelog.api, do not create them: a dataclass costs about a millisecond of start-up to create
(its methods are compiled from source).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tunelog.convergence import Convergence
    from tunelog.diffing import LayerDiff
    from tunelog.knobs import Coverage, KnobValue
    from tunelog.layers import Layer, TemplateResult
    from tunelog.models import RejectedLine, Source

__all__ = [
    "CurveRow",
    "DiffReport",
    "MetaScheduleExport",
    "ReportSummary",
    "SourceRejects",
    "TemplateCurve",
    "TemplateKnobs",
]


@dataclass(frozen=True)
class CurveRow:
    """One trial of a template's best-so-far curve, with where it was recorded."""

    trial: int
    source: str
    line: int
    config_index: int
    cost: float | None
    error_no: int
    best: float | None
    improved: bool


@dataclass
class TemplateCurve:
    """A template's trials on a layer's target group, in trial order, and their summary."""

    layer: Layer
    template: TemplateResult
    rows: list[CurveRow]
    summary: Convergence


@dataclass
class TemplateKnobs:
    """Knob values tried by one template of a layer on its target group, and its coverage."""

    layer: Layer
    template: TemplateResult
    values: list[KnobValue]
    coverage: Coverage
    chosen_config: int | None
    unreadable: int = 0  # stored lines whose knobs could not be read (never expected)
    # Every knob of the template's trials, whatever `knob` asked for (`layout` included when
    # the template has derived layouts): what to say when the knob asked for is not one.
    knob_names: tuple[str, ...] = ()


@dataclass
class SourceRejects:
    """The rejected lines of one source, by line number."""

    source: Source
    rejects: list[RejectedLine]


@dataclass
class ReportSummary:
    """What `report` wrote."""

    path: str
    layers: int
    untuned: int
    failures: int
    bytes: int


@dataclass
class MetaScheduleExport:
    """What `export_metaschedule` wrote."""

    directory: str
    workloads: int
    warnings: list[str]
    records: int = 0


@dataclass
class DiffReport:
    """Two runs compared per layer and target group (see tunelog.diffing)."""

    a: str
    b: str
    threshold_pct: float
    layers: list[LayerDiff]
    notes: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        """Layers with this status (one of diffing.STATUSES)."""
        return sum(1 for d in self.layers if d.status == status)

    def counts(self) -> dict[str, int]:
        """Layers of each status, every one of diffing.STATUSES (0 when none), in one pass."""
        from collections import Counter

        from tunelog.diffing import STATUSES

        found = Counter(d.status for d in self.layers)
        return {status: found[status] for status in STATUSES}

    @property
    def winner_changes(self) -> list[LayerDiff]:
        """Layers whose winning template differs between the runs."""
        return [d for d in self.layers if d.winner_changed]

    def regressions(self, pct: float) -> list[LayerDiff]:
        """Layers slower in B by more than `pct` percent, or tuned in A only."""
        from tunelog.diffing import regressions
        from tunelog.optionvalues import percent

        return regressions(self.layers, percent(pct, "pct"))
