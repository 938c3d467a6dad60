"""Sources: one by id or path, their rejected lines, removing them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunelog.exceptions import (
    AmbiguousSourceError,
    SourceNotFoundError,
)
from tunelog.store import Store

if TYPE_CHECKING:
    from tunelog.models import Source
    from tunelog.results import (
        SourceRejects,
    )
    from tunelog.store.removal import RemovedSource


def find_source(store: Store, ref: str) -> Source:
    """The one source named by its id (`3`, `#3`) or a path it was imported from (see
    `rules.sourcenames`).

    Raises SourceNotFoundError saying where to look, and AmbiguousSourceError when `ref`
    names several sources (a file imported again in full from the same path): its id does.
    """
    found = find_sources(store, ref)  # checks `ref`
    if len(found) > 1:
        raise AmbiguousSourceError(
            f"{ref!r} names {len(found)} sources of {store.path} "
            f"({', '.join(f'#{s.id}' for s in found)}, imported from the same path): "
            "give one's id (`tunelog sources` lists them)"
        )
    return found[0]


def find_sources(store: Store, ref: str) -> list[Source]:
    """Every source named by its id (`3`, `#3`) or a path it was imported from, oldest first
    (see `rules.sourcenames`: as `sources remove` and `--source` read `ref`).

    Raises SourceNotFoundError saying where to look.
    """
    from tunelog import optionvalues
    from tunelog.rules.sourcenames import SourceNames, sources_named

    optionvalues.text(ref, "ref")
    known = store.sources()
    names = [SourceNames(s.id, s.label, (s.path, *(i.path for i in s.imports))) for s in known]
    ids = set(sources_named(ref, names))
    if ids:
        return [s for s in known if s.id in ids]
    raise SourceNotFoundError(
        f"no source {ref!r} in {store.path}: give an id or path that `tunelog sources` lists"
    )


def rejects(store: Store, source: str | None = None) -> list[SourceRejects]:
    """Rejected lines with their reasons: of the sources `source` names (see `find_sources`:
    a path imported again in full names each import's source) or of every source."""
    from tunelog.results import SourceRejects

    with store.snapshot():
        chosen = find_sources(store, source) if source is not None else store.sources()
        return [
            SourceRejects(s, store.rejects(s.id))
            for s in chosen
            if source is not None or s.rejected
        ]


def sources_to_remove(store: Store, ref: str) -> list[Source]:
    """The sources `remove_sources(store, ref)` would remove, removing nothing (`sources remove
    --dry-run`): a label names every source imported with it. Raises UnknownSourceError when
    nothing matches."""
    from tunelog import optionvalues

    optionvalues.text(ref, "ref")
    ids = set(store.sources_named(ref))
    return [s for s in store.sources() if s.id in ids]


def remove_sources(store: Store, ref: str) -> list[RemovedSource]:
    """Remove the sources named by id, else label, else path (see `rules.sourcenames`), as if
    they had never been imported.

    A record goes only when no remaining source held its line; one a later file also held stays,
    as if that file had stored it (see `tunelog.store.removal`). Raises UnknownSourceError when
    nothing matches.
    """
    from tunelog import optionvalues

    optionvalues.text(ref, "ref")
    with store.errors_said():  # also for a store not opened with `with`
        return store.remove_sources(ref)
