"""Each record's own spelling of its workload, where it is not its workload's (migration 16).

A workload keeps the first spelling seen (`workloads.spelling`). A MetaSchedule record was
measured against its own workload line, which may name the blocks of a structurally equal
module otherwise (its trace replays against it by name); an auto_scheduler record's key may be
written otherwise (`[1.0, 28]` for `[1, 28]`). The importer hands every record's spelling here;
at the end of the file those that differ from their workload's are stored, each text once.
"""

from __future__ import annotations

import sqlite3

KEPT = 4096  # spellings numbered from memory; past this, a text met again gets a new number

_TABLES = (
    "CREATE TEMP TABLE IF NOT EXISTS own_spelling_texts "
    "(no INTEGER PRIMARY KEY, spelling TEXT NOT NULL)",
    "CREATE TEMP TABLE IF NOT EXISTS own_spellings "
    "(record_id INTEGER PRIMARY KEY, no INTEGER NOT NULL)",
)

# Each (spelling number, workload) the file's kept records have (dropped duplicates are gone
# from `records`), its text compared with the workload's once, not once per record (a
# MetaSchedule workload line may be 75 kB): those that differ, with their `spelling_texts` id.
_DIFFERING = (
    """CREATE TEMP TABLE own_spelling_differing (no INTEGER, workload_id INTEGER,
           spelling TEXT, spelling_id INTEGER, PRIMARY KEY (no, workload_id))""",
    """INSERT INTO temp.own_spelling_differing (no, workload_id, spelling)
       SELECT p.no, p.workload_id, t.spelling FROM (
           SELECT DISTINCT o.no, r.workload_id FROM temp.own_spellings o
           JOIN records r ON r.id = o.record_id) p
       JOIN temp.own_spelling_texts t ON t.no = p.no
       JOIN workloads w ON w.id = p.workload_id
       WHERE t.spelling IS NOT w.spelling""",
    """INSERT OR IGNORE INTO spelling_texts (spelling)
       SELECT spelling FROM temp.own_spelling_differing""",
    """UPDATE temp.own_spelling_differing SET spelling_id = (
           SELECT s.id FROM spelling_texts s WHERE s.spelling = own_spelling_differing.spelling)""",
)
# Then the records of those (number, workload)s, by numbers alone.
_STORED = """INSERT OR REPLACE INTO record_spellings (record_id, spelling_id)
    SELECT o.record_id, d.spelling_id FROM temp.own_spellings o
    JOIN records r ON r.id = o.record_id
    JOIN temp.own_spelling_differing d ON d.no = o.no AND d.workload_id = r.workload_id"""


class OwnSpellings:
    """The spellings of one file's records, kept in temporary tables until `finish`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.numbers: dict[str, int] = {}
        self.next_no = 0
        self.texts: list[tuple[int, str]] = []
        self.records: list[tuple[int, int]] = []
        self.started = False

    def add(self, record_id: int, spelling: str) -> None:
        """The record's spelling (its workload's, or its own)."""
        number = self.numbers.get(spelling)
        if number is None:
            if len(self.numbers) >= KEPT:  # memory stays bounded: a number more, not a text
                self.numbers.clear()
            number = self.numbers[spelling] = self.next_no
            self.next_no += 1
            self.texts.append((number, spelling))
        self.records.append((record_id, number))

    def flush(self) -> None:
        """Write the spellings added since the last flush into the temporary tables."""
        if not self.records:
            return
        if not self.started:
            for statement in _TABLES:
                self.conn.execute(statement)
            self.conn.execute("DELETE FROM temp.own_spelling_texts")
            self.conn.execute("DELETE FROM temp.own_spellings")
            self.started = True
        self.conn.executemany("INSERT INTO temp.own_spelling_texts VALUES (?, ?)", self.texts)
        self.conn.executemany("INSERT INTO temp.own_spellings VALUES (?, ?)", self.records)
        self.texts, self.records = [], []

    def finish(self) -> None:
        """Store the file's records whose spelling is not their workload's (its workloads
        resolved, its duplicates dropped)."""
        self.flush()
        if not self.started:
            return
        conn = self.conn
        for statement in _DIFFERING:
            conn.execute(statement)
        if conn.execute("SELECT 1 FROM temp.own_spelling_differing LIMIT 1").fetchone():
            conn.execute(_STORED)
        conn.execute("DROP TABLE temp.own_spelling_differing")
        conn.execute("DROP TABLE temp.own_spelling_texts")
        conn.execute("DROP TABLE temp.own_spellings")
        self.started = False
