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
        return {
            f.name: plain(getattr(self, f.name))
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
            # A field marked internal (metadata={"internal": True}) helps a table, not the data.
            if (include is None or f.name in include) and not f.metadata.get("internal")
        }


def plain(value: Any) -> Any:
    """A field's value with nested results turned into dicts."""
    if isinstance(value, Dumpable):
        return value.model_dump()
    if isinstance(value, list) and value and isinstance(value[0], Dumpable):
        return [plain(item) for item in value]
    return value
