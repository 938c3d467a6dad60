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
from typing import TYPE_CHECKING

from tunelog.api.importing import import_paths
from tunelog.api.listing import layers
from tunelog.exceptions import DatabaseBusyError, DatabaseNotFoundError
from tunelog.store import Store

# Only `tunelog watch` follows logs: what it alone needs loads when it runs (issue 17).
if TYPE_CHECKING:
    from tunelog.live import Refresh


def watch(
    store: Store,
    paths: Sequence[str | os.PathLike[str]],
    *,
    on_refresh: Callable[[Refresh], None],
    interval: float = 2.0,
    refreshes: int | None = None,
    until_idle: float | None = None,
    repair: bool = False,
) -> Refresh:
    """Import what is new in `paths` every `interval` seconds (incrementally; an unterminated
    last line waits for its end) and call `on_refresh` with the layers after each refresh.

    Stops after `refreshes` refreshes, or when no file grew for `until_idle` seconds, or on
    KeyboardInterrupt (which rolls back only the file being imported). Returns the last refresh.
    """
    from tunelog import optionvalues

    followed = optionvalues.path_list(paths, "paths")
    optionvalues.watched_paths(followed)
    optionvalues.interval(interval)
    if refreshes is not None:
        optionvalues.at_least_one(refreshes, "refreshes")
    if until_idle is not None:
        optionvalues.seconds(until_idle, "until_idle")
    return follow(
        store,
        followed,
        on_refresh=on_refresh,
        interval=interval,
        refreshes=refreshes,
        until_idle=until_idle,
        repair=repair,
    )


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
        from tunelog.discovery import discover
        from tunelog.importreport import FileReport
        from tunelog.live import Refresh, layer_status

        self.refreshes += 1
        if self.store.path != ":memory:" and not os.path.exists(self.store.path):
            # Writes would go on into the removed file, lost when watch stops.
            raise DatabaseNotFoundError(
                f"the database {self.store.path} was removed while watching: what was imported "
                "went with it; start watch again to import the logs anew"
            )
        present = [p for p in self.paths if os.path.exists(p)]
        waiting = [p for p in self.paths if p not in present]
        changed: list[str] = []
        signatures: dict[str, tuple[int, int]] = {}
        # Directories are read by `import DIR`'s rule: a MetaSchedule work_dir's text logs
        # (logs/*.log) and other files that are not tuning logs are left alone; an entry
        # that vanished meanwhile is looked at again next time.
        found = discover(present)
        for source in found.inputs:
            try:
                stat = os.stat(source.path)
            except OSError:
                continue  # removed meanwhile: looked at again next time
            signature = (stat.st_size, stat.st_mtime_ns)
            if self._seen.get(source.path) != signature:
                changed.append(source.path)
                signatures[source.path] = signature
        busy = None
        try:
            reports = (
                import_paths(self.store, changed, repair=self.repair, follow=True)
                if changed
                else []
            )
        except DatabaseBusyError as exc:  # another program writing: the rest next time
            reports = exc.done  # the files imported before it: seen, and counted
            done = {r.path for r in reports}
            signatures = {p: sig for p, sig in signatures.items() if p in done}
            busy = "another program held the database's write lock"
        # What is never a log (an SQLite database named to watch) is skipped with its reason,
        # as `import` skips it, not watched as an empty one.
        reports += [FileReport(path=path, unreadable=why) for path, why in found.unreadable]
        # A file is seen once imported: one that could not be read (its permissions, a
        # moment's lock) is tried again next time, not only once it changes.
        unreadable = {r.path for r in reports if r.unreadable}
        for path, signature in signatures.items():
            if path not in unreadable:
                self._seen[path] = signature
        # While none of the paths named is there, it is waited for: a tuner may take a while
        # to write its first line, and a watch started with it must not stop idle before (it
        # stopped with nothing read). One path there is enough: a path that never comes (a
        # typo beside the log) does not keep the watch from ending.
        if not present or any(r.lines and not r.already_imported_as for r in reports):
            self.last_growth = time.monotonic()
        statuses = [layer_status(layer) for layer in layers(self.store)]
        return Refresh(self.refreshes, reports, statuses, waiting, busy)

    def idle_for(self) -> float:
        """Seconds since a refresh last read a new line, or last found none of the paths."""
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
