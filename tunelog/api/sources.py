"""Sources: one by id or path, their rejected lines, removing them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunelog.exceptions import (
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
    """The source named by its id (`3`, `#3`) or a path it was imported from (see
    `rules.sourcenames`).

    Raises SourceNotFoundError saying where to look.
    """
    from tunelog.rules.sourcenames import SourceNames, sources_named

    known = store.sources()
    names = [SourceNames(s.id, s.label, (s.path, *(i.path for i in s.imports))) for s in known]
    ids = sources_named(ref, names)
    if ids:
        return next(s for s in known if s.id == ids[0])
    raise SourceNotFoundError(
        f"no source {ref!r} in {store.path}: give an id or path that `tunelog sources` lists"
    )


def rejects(store: Store, source: str | None = None) -> list[SourceRejects]:
    """Rejected lines with their reasons: of one source (see `find_source`) or of every source."""
    from tunelog.results import SourceRejects

    with store.snapshot():
        chosen = [find_source(store, source)] if source is not None else store.sources()
        return [
            SourceRejects(s, store.rejects(s.id))
            for s in chosen
            if source is not None or s.rejected
        ]


def remove_sources(store: Store, ref: str) -> list[RemovedSource]:
    """Remove the sources named by id, else label, else path (see `rules.sourcenames`), as if
    they had never been imported.

    A record goes only when no remaining source held its line; one a later file also held stays,
    as if that file had stored it (see `tunelog.store.removal`). Raises UnknownSourceError when
    nothing matches.
    """
    return store.remove_sources(ref)
