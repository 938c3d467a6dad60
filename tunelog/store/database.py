"""The Store: one class over a tunelog database file, assembled from one module per job.

`connection` (open, migrate, close, transactions), `sources` (listing, naming, `selected`,
removing), `knownfiles` and `importing` (`import_log`), `queries` (`best`, counts, the slot
filter SQL), `layerinputs` (what the layer listings read) and `exports` (the lines exports
write).
"""

from __future__ import annotations

from pathlib import Path

from tunelog.store.connection import BUSY_TIMEOUT_MS, PAGE_SIZE
from tunelog.store.exports import ExportLine, Exports
from tunelog.store.importing import Importing
from tunelog.store.layerinputs import LayerInputs, SlotKey

__all__ = ["BUSY_TIMEOUT_MS", "PAGE_SIZE", "ExportLine", "SlotKey", "Store", "open_store"]


class Store(Importing, Exports, LayerInputs):
    """A tunelog database file. Open with `Store(path)`; created and migrated on open.

    `create=False`: a missing file raises DatabaseNotFoundError instead (what read commands
    want: an empty new database would answer every question with "nothing").
    """


def open_store(path: str | Path, *, create: bool = True) -> Store:
    """Open (creating and migrating if needed) the database at `path`.

    `create=False`: raise DatabaseNotFoundError when there is no file at `path`.
    """
    return Store(path, create=create)
