"""Source ids are never reused, as record ids are not (migration 3's `counters`).

SQLite gives a new row the id after the largest one left, so removing the newest source gave
its id to the next file imported: a `--source 3` or `sources remove 3` saved in a script then
named another file. The next id is kept in `counters` as `next_source_id`, written by the
first import that needs it (a database that removed sources before starts past its largest).
"""

from __future__ import annotations

import sqlite3


def next_source_id(conn: sqlite3.Connection) -> int:
    """The id of a source about to be inserted, in the open transaction; the counter moves past
    it (and rolls back with the transaction)."""
    row = conn.execute("SELECT value FROM counters WHERE name = 'next_source_id'").fetchone()
    (largest,) = conn.execute("SELECT coalesce(max(id), 0) FROM sources").fetchone()
    source_id = max(int(row[0]) if row else 1, int(largest) + 1)
    conn.execute(
        "INSERT INTO counters (name, value) VALUES ('next_source_id', ?) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (source_id + 1,),
    )
    return source_id
