"""The slot winners (`tunelog best`), auto_scheduler arguments as written."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from tunelog.store import Filters, Store

if TYPE_CHECKING:
    from tunelog.models import BestRow


def best(store: Store, filters: Filters | None = None, *, knobs: bool = False) -> list[BestRow]:
    """The slot winners (`Store.best`), an auto_scheduler row's `args` with the structure its
    workload key is written with (`[[1, 64, 56, 56], [128, 64, 3, 3], ...]`): its identity is
    the flattened tuple, which says nothing of which number belongs to which tensor."""
    return list(each_best(store, filters, knobs=knobs))


def each_best(
    store: Store, filters: Filters | None = None, *, knobs: bool = False
) -> Iterator[BestRow]:
    """`best`'s rows one at a time (`Store.each_best`), read while the store is open."""
    for row in store.each_best(filters, knobs=knobs):
        ansor_args_as_written(store, (row,))
        yield row


def ansor_args_as_written(store: Store, rows: Iterable[BestRow]) -> None:
    """Give each auto_scheduler row of `store.best()` its key's items as written (in place).

    Each row's task name (its key's hash) is looked up alone, so rows may come one at a time.
    """
    from tunelog.versions import ANSOR_VERSION

    for row in rows:
        if row.log_version == ANSOR_VERSION:
            row.args = _as_written(store, row.task_name, row.args)


def _args_key(args: Sequence[object]) -> str:
    """Arguments as a comparable text: the derived-text writer of workload identity."""
    from tunelog.rules.workloadidentity import sorted_json

    return sorted_json(args)


def _as_written(store: Store, task_name: str, args: list[object]) -> list[object]:
    """The items after the hash of the key as first written of the workload (task name,
    flattened args), or `args` when no spelling of it reads as a list. Several workloads
    with equal arguments: the last one's, by id."""
    import json

    wanted = _args_key(args)
    found = args
    for stored_args, spelling in store.ansor_spellings(task_name):
        if _args_key(json.loads(stored_args)) != wanted:
            continue
        try:
            items = json.loads(spelling)
        except ValueError:
            continue
        if isinstance(items, list) and items:
            found = items[1:]
    return found
