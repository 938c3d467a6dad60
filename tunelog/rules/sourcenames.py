"""Which source the user meant: the one rule of every command that takes a source's name.

`sources remove REF`, the filters' `--source REF`, `rejects REF` (`api.find_sources`; one
source asked for, `api.find_source` refuses a REF naming several) and diff's `source:REF` all
read REF here, in this order, the first way that names a source answering:

1. its id: ASCII digits, optionally after `#` (`3`, `#3`, `03` are source 3). Digits of
   another script (`²`, `٣`) or past SQLite's integers are refused (InvalidValueError), never
   read as a label or a path. An id no source has names nothing, so the next ways are asked:
   a file called `3` is named by `3` when there is no source 3 (else `./3` names it);
2. its label (`import --label`), where the command takes labels (`sources remove`; a filter
   has `--label`, diff `label:NAME`): every source imported with it;
3. a path its file was imported from (the stored path or a later import's): as typed, made
   absolute, or failing those, the same file by its real path (symlinks, `..`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tunelog.optionvalues import source_id

# The path a source read from standard input is stored under (`inputs.STDIN`): no file.
STDIN = "-"


@dataclass(frozen=True)
class SourceNames:
    """What a source can be named by: its id, its label, the paths its file was imported from."""

    id: int
    label: str | None
    paths: tuple[str, ...]  # the stored path first


def sources_named(ref: str, sources: Iterable[SourceNames], *, labels: bool = False) -> list[int]:
    """The ids of the sources `ref` names (see the module's rule), oldest first; [] for none.

    `labels`: whether the command takes a label for a name. Raises InvalidValueError for
    digits that can be no id.
    """
    known = list(sources)
    number = source_id(ref)
    if number is not None:
        found = [s.id for s in known if s.id == number]
        if found:
            return found
    if labels:
        found = named_by_label(ref, known)
        if found:
            return found
    return named_by_path(ref, known)


def named_by_label(label: str, sources: Iterable[SourceNames]) -> list[int]:
    """The sources imported with this label, oldest first."""
    return [s.id for s in sources if s.label == label]


def named_by_path(path: str, sources: Sequence[SourceNames]) -> list[int]:
    """The sources imported from `path` (as typed or made absolute, else the same real file),
    oldest first."""
    spellings = {path} if path == STDIN else {path, os.path.abspath(path)}
    found = [s.id for s in sources if any(p in spellings for p in s.paths)]
    if found or path == STDIN:
        return found
    real = os.path.realpath(path)
    return [
        s.id for s in sources if any(p != STDIN and os.path.realpath(p) == real for p in s.paths)
    ]
