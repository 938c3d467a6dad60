"""Following logs a tuner is appending to (`tunelog watch`): import what is new, summarise.

Each refresh imports the files whose size or modification time changed since the last one,
with `follow` (an unterminated last line waits for its end) and incrementally (only the lines
appended since are read, see `tunelog.store.resume`), then summarises every layer from the
tallies and slots kept on import. Each file is its own transaction, so stopping at any moment
(Ctrl-C) leaves the database as after the last file imported. No printing here: the CLI draws.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tunelog.discovery import discover
from tunelog.errorcodes import BUILD_TIMEOUT
from tunelog.layers import Layer
from tunelog.models import FileReport
from tunelog.store import Store

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


class Follower:
    """Imports what is new in some logs at each `refresh()`.

    Paths may be files or directories (expanded again at each refresh: a tuner may start a
    new file) and may not exist yet (they are waited for). A file is read again only when its
    size or modification time changed since the previous refresh.
    """

    def __init__(self, store: Store, paths: Sequence[str], *, repair: bool = False) -> None:
        self.store = store
        self.paths = list(paths)
        self.repair = repair
        self.refreshes = 0
        self.last_growth = time.monotonic()
        self._seen: dict[str, tuple[int, int]] = {}

    def refresh(self) -> Refresh:
        """Import what changed; summarise the layers."""
        from tunelog import api

        self.refreshes += 1
        present = [p for p in self.paths if os.path.exists(p)]
        waiting = [p for p in self.paths if p not in present]
        changed: list[str] = []
        # Directories are read by `import DIR`'s rule: a MetaSchedule work_dir's text logs
        # (logs/*.log) and other files that are not tuning logs are left alone; an entry
        # that vanished meanwhile is looked at again next time.
        for source in discover(present).inputs:
            try:
                stat = os.stat(source.path)
            except OSError:
                continue  # removed meanwhile: looked at again next time
            signature = (stat.st_size, stat.st_mtime_ns)
            if self._seen.get(source.path) != signature:
                self._seen[source.path] = signature
                changed.append(source.path)
        reports = (
            api.import_paths(self.store, changed, repair=self.repair, follow=True)
            if changed
            else []
        )
        if any(r.lines and not r.already_imported_as for r in reports):
            self.last_growth = time.monotonic()
        layers = [layer_status(layer) for layer in api.layers(self.store)]
        return Refresh(self.refreshes, reports, layers, waiting)

    def idle_for(self) -> float:
        """Seconds since a refresh last read a new line."""
        return time.monotonic() - self.last_growth


def follow(
    store: Store,
    paths: Sequence[str],
    *,
    on_refresh: Callable[[Refresh], None],
    interval: float = 2.0,
    refreshes: int | None = None,
    until_idle: float | None = None,
    repair: bool = False,
    sleep: Callable[[float], None] | None = None,
) -> Refresh:
    """Refresh every `interval` seconds until `refreshes` were done or no file grew for
    `until_idle` seconds (forever when neither is given: stop with Ctrl-C, which rolls back
    only the file being imported). `sleep` waits between refreshes (default: `pause`).
    Returns the last refresh."""
    follower = Follower(store, paths, repair=repair)
    while True:
        last = follower.refresh()
        on_refresh(last)
        if refreshes is not None and follower.refreshes >= refreshes:
            return last
        if until_idle is not None and follower.idle_for() >= until_idle:
            return last
        (sleep or pause)(interval)


def pause(seconds: float) -> None:
    """Wait between refreshes (a module function: tests replace it)."""
    time.sleep(seconds)
