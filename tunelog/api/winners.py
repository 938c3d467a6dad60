"""The slot winners (`tunelog best`), auto_scheduler arguments as written."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
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
    """`best`'s rows one at a time, auto_scheduler arguments as written (`Store.each_best`
    with `as_written`), read while the store is open."""
    return store.each_best(filters, knobs=knobs, as_written=True)


def ansor_args_as_written(store: Store, rows: Iterable[BestRow]) -> None:
    """Give each auto_scheduler row of `store.best()` its key's items as written (in place).

    Each row's task name (its key's hash) is looked up alone, so rows may come one at a time.
    """
    from tunelog.versions import ANSOR_VERSION

    for row in rows:
        if row.log_version == ANSOR_VERSION:
            row.args = store.args_as_written(row.task_name, row.args, row.record_id)
