"""Result dataclasses that dump themselves as plain data, as pydantic models do.

Below `tunelog.models` and `tunelog.importreport`, which both build their results on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any


class Dumpable:
    """`model_dump()`: the fields as plain data (nested results become dicts)."""

    def model_dump(self, *, include: Collection[str] | None = None) -> dict[str, Any]:
        """The fields as a dict of plain values; `include` keeps only those names.

        Nested results (and lists of them) become dicts; other values are shared, not copied
        (dataclasses.asdict deep-copies every argument list: seconds on 10k rows).
        """
        names = _DUMPED.get(type(self)) or _dumped_names(type(self))
        return {
            name: plain(getattr(self, name)) for name in names if include is None or name in include
        }


# The names each class dumps, found once per class: `best --json` dumps 80,000 rows, and
# asking `dataclasses.fields` again for each took most of its time.
_DUMPED: dict[type, tuple[str, ...]] = {}


def _dumped_names(cls: type) -> tuple[str, ...]:
    names = _DUMPED[cls] = tuple(
        f.name
        for f in dataclasses.fields(cls)
        # A field marked internal (metadata={"internal": True}) helps a table, not the data.
        if not f.metadata.get("internal")
    )
    return names


def plain(value: Any) -> Any:
    """A field's value with nested results turned into dicts."""
    if isinstance(value, Dumpable):
        return value.model_dump()
    if isinstance(value, list) and value and isinstance(value[0], Dumpable):
        return [plain(item) for item in value]
    return value
