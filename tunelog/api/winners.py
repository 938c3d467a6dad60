"""The slot winners (`tunelog best`), auto_scheduler arguments as written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tunelog.store import Filters, Store

if TYPE_CHECKING:
    from tunelog.models import BestRow


def best(store: Store, filters: Filters | None = None, *, knobs: bool = False) -> list[BestRow]:
    """The slot winners (`Store.best`), an auto_scheduler row's `args` with the structure its
    workload key is written with (`[[1, 64, 56, 56], [128, 64, 3, 3], ...]`): its identity is
    the flattened tuple, which says nothing of which number belongs to which tensor."""
    from tunelog.versions import ANSOR_VERSION

    rows = store.best(filters, knobs=knobs)
    if any(row.log_version == ANSOR_VERSION for row in rows):
        ansor_args_as_written(store, rows)
    return rows


def ansor_args_as_written(store: Store, rows: Sequence[BestRow]) -> None:
    """Give each auto_scheduler row of `store.best()` its key's items as written (in place)."""
    from tunelog.versions import ANSOR_VERSION

    spelled = _ansor_spellings(store)
    for row in rows:
        if row.log_version == ANSOR_VERSION:
            row.args = spelled.get((row.task_name, _args_key(row.args)), row.args)


def _args_key(args: Sequence[object]) -> str:
    import json

    return json.dumps(args, sort_keys=True)


def _ansor_spellings(store: Store) -> dict[tuple[str, str], list[object]]:
    """(hash, flattened args) -> the items after the hash of the key as first written."""
    import json

    from tunelog.versions import ANSOR_VERSION

    found: dict[tuple[str, str], list[object]] = {}
    for workload in store.layer_inputs()[1]:
        if workload.version != ANSOR_VERSION or workload.spelling is None:
            continue
        try:
            items = json.loads(workload.spelling)
        except ValueError:
            continue
        if isinstance(items, list) and items:
            found[(workload.task_name, _args_key(workload.args))] = items[1:]
    return found
