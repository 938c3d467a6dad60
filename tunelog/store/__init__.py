"""The SQLite store: the only package that talks to the database.

Layout (see MIGRATIONS): `sources` (one row per imported file), `targets` and `workloads`
(deduplicated strings), `records` (one row per distinct line), `blocks` (the original lines,
zstd-compressed 128 consecutive records at a time), `content_hashes` (the dedup key of each
stored line), `holdings` (every record line each source's file held, as runs: see
store.holdings), `slots` (the ApplyHistoryBest slot holders) and `tallies` (records per target,
workload and error number), both maintained on import so that `best`, `export` and the
summaries never scan records, and `rejects` (why each refused line was refused).

Writes happen in one transaction per file (BEGIN IMMEDIATE), so an interrupted import leaves the
database as it was before that file, and concurrent importers queue on SQLite's write lock.
"""

import importlib
from typing import TYPE_CHECKING, Any

from tunelog.filters import Filters
from tunelog.store.database import ExportLine, Store, open_store
from tunelog.store.schema import APPLICATION_ID, MIGRATIONS

if TYPE_CHECKING:
    from tunelog.models import SlotHolder
    from tunelog.store.codec import LineReader, content_hash
    from tunelog.store.importer import BATCH_SIZE, ProgressCallback


# Names loaded on first use, each from its module: the importer loads the record parsers,
# the codec xxhash, tunelog.models the result dataclasses; a command that needs none of them
# (a read command, mostly) does not pay their start-up.
_LOADED_ON_USE = {
    "BATCH_SIZE": "tunelog.store.importer",
    "ProgressCallback": "tunelog.store.importer",
    "LineReader": "tunelog.store.codec",
    "content_hash": "tunelog.store.codec",
    "SlotHolder": "tunelog.models",
}


def __getattr__(name: str) -> Any:
    module = _LOADED_ON_USE.get(name)
    if module is None:
        raise AttributeError(f"module 'tunelog.store' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "APPLICATION_ID",
    "BATCH_SIZE",
    "MIGRATIONS",
    "ExportLine",
    "Filters",
    "LineReader",
    "ProgressCallback",
    "SlotHolder",
    "Store",
    "content_hash",
    "open_store",
]
