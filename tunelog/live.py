"""What `tunelog watch` shows after each refresh: one row per layer and what the refresh read.

Pure: the refreshes themselves (importing what is new in the logs) are `tunelog.api.watching`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tunelog.errorcodes import BUILD_TIMEOUT
from tunelog.layers import Layer
from tunelog.models import FileReport

MOSTLY = 0.5  # "mostly BUILD_TIMEOUT": more than half of the layer's trials


@dataclass
class LayerStatus:
    """One layer while tuning: trials so far, valid/failed, the best config's latency."""

    target: str
    operator: str
    shapes: str
    trials: int
    valid: int
    failed: int
    best_cost: float | None
    gflops: float | None
    warning: str | None
    # -- verdict: the convergence verdict of the layer ("converged", "still improving", ...)
    # goes here when tunelog computes one (issue 11, convergence); None means "not computed".
    verdict: str | None = None


def layer_warning(layer: Layer) -> str | None:
    """`only failures` (no valid config yet) or `mostly BUILD_TIMEOUT`; None when neither."""
    trials = layer.trials
    if trials == 0:
        return None
    if all(t.valid == 0 for t in layer.templates):
        return "only failures"
    timeouts = sum(t.errors.get(BUILD_TIMEOUT, 0) for t in layer.templates)
    if timeouts > MOSTLY * trials:
        return "mostly BUILD_TIMEOUT"
    return None


def layer_status(layer: Layer) -> LayerStatus:
    """A layer's row in the live table (the winner's latency: what relay would run)."""
    winner = layer.winner
    return LayerStatus(
        target=layer.group.label,
        operator=layer.family,
        shapes=layer.shapes,
        trials=layer.trials,
        valid=sum(t.valid for t in layer.templates),
        failed=sum(t.failed for t in layer.templates),
        best_cost=winner.chosen.mean_cost if winner and winner.chosen else None,
        gflops=layer.gflops,
        warning=layer_warning(layer),
    )


@dataclass
class Refresh:
    """What one refresh did: the files imported (those that changed) and the layers after."""

    number: int
    reports: list[FileReport]
    layers: list[LayerStatus]
    waiting_for: list[str] = field(default_factory=list)
    # Why the changed files were not all imported (another program held the database's
    # write lock): they are read at the next refresh.
    busy: str | None = None

    @property
    def new(self) -> int:
        """Records added by this refresh."""
        return sum(r.new for r in self.reports)

    @property
    def lines(self) -> int:
        """Lines read by this refresh (complete lines only)."""
        return sum(r.lines for r in self.reports if not r.already_imported_as)

    @property
    def held_back_bytes(self) -> int:
        """Bytes of unterminated last lines left for the next refresh."""
        return sum(r.held_back_bytes for r in self.reports)
