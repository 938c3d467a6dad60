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

# The file's records whose own spelling is not their workload's (dropped duplicates are gone
# from `records`), with that spelling's text `t.spelling`.
_DIFFERING = """temp.own_spellings o JOIN temp.own_spelling_texts t ON t.no = o.no
                JOIN records r ON r.id = o.record_id JOIN workloads w ON w.id = r.workload_id"""
_NOT_THE_WORKLOADS = "t.spelling IS NOT w.spelling"


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
        conn.execute(
            f"""INSERT OR IGNORE INTO spelling_texts (spelling)
                SELECT t.spelling FROM {_DIFFERING} WHERE {_NOT_THE_WORKLOADS}"""
        )
        conn.execute(
            f"""INSERT OR REPLACE INTO record_spellings (record_id, spelling_id)
                SELECT o.record_id, s.id FROM {_DIFFERING}
                JOIN spelling_texts s ON s.spelling = t.spelling WHERE {_NOT_THE_WORKLOADS}"""
        )
        conn.execute("DROP TABLE temp.own_spelling_texts")
        conn.execute("DROP TABLE temp.own_spellings")
        self.started = False
