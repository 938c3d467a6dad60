"""Dropping the records of an imported file whose lines were stored before (exactly).

Content hashes are indexed per workload at the end of the file (`deduplicate`); a record whose
hash is taken is compared byte for byte with the holder and either dropped as a duplicate
(counted out of its tally, its line pointing at the holder in the file's holdings) or re-hashed
by linear probing (a collision).
"""

from __future__ import annotations

import sqlite3

from tunelog.store import holdings
from tunelog.store.codec import LineReader, next_hash


def deduplicate(
    conn: sqlite3.Connection, source_id: int, first_id: int, end_id: int, first_seq: int
) -> int:
    """Index the content hashes of the file's records [first_id, end_id); remove those seen
    before. Returns how many.

    The hashes go into the index sorted, in one statement: a pass over the B-tree instead
    of a random insert per line (which dominated large imports). In the usual case every
    hash is new and that is all; otherwise the records whose hash is taken are compared
    byte for byte with the holder, and either dropped (a duplicate) or re-hashed by linear
    probing (a 64-bit collision). `first_seq`: the file's first holdings entry.
    """
    added = end_id - first_id
    if added == 0:
        return 0
    indexed = conn.execute(
        """INSERT OR IGNORE INTO content_hashes (workload_id, hash, record_id)
           SELECT workload_id, hash, id FROM records WHERE id >= ?
           ORDER BY workload_id, hash, id""",
        (first_id,),
    ).rowcount
    if indexed == added:
        return 0
    duplicates = Deduplicator(conn, first_id, end_id).run()
    if duplicates:
        # The file still held those lines: its runs point at the records holding them.
        holdings.remap(conn, source_id, first_seq)
    conn.execute("DROP TABLE IF EXISTS temp.dropped_segments")
    return duplicates


class Deduplicator:
    """The slow path of `deduplicate`: records of this file whose content hash is taken."""

    PAGE = 2000

    def __init__(
        self,
        conn: sqlite3.Connection,
        first_id: int,
        end_id: int,
    ) -> None:
        self.conn = conn
        self.first_id = first_id
        self.end_id = end_id
        self.reader = LineReader(conn)

    def run(self) -> int:
        """Drop duplicates, re-hash collisions, drop blocks left empty; count the duplicates.

        The dropped records go into `temp.dropped_segments` with the records holding their
        lines (see holdings.Segments), for the file's holdings."""
        segments = holdings.Segments(self.conn)
        duplicates = 0
        after = self.first_id - 1
        while True:
            # Paged by id so that memory stays flat when a large file is all duplicates.
            page = self.conn.execute(
                """SELECT r.id, r.hash, r.target_id, r.workload_id, r.error_no, h.record_id
                   FROM records r
                   JOIN content_hashes h ON h.workload_id = r.workload_id AND h.hash = r.hash
                   WHERE r.id > ? AND h.record_id != r.id ORDER BY r.id LIMIT ?""",
                (after, self.PAGE),
            ).fetchall()
            if not page:
                break
            dropped: list[tuple[int]] = []
            # Dropped records per tally (the tallies were stored with them counted).
            uncounted: dict[tuple[int, int, int], int] = {}
            for record_id, h, target_id, workload_id, error_no, holder in page:
                content = self.reader.line(record_id)
                if self.reader.line(holder) != content:
                    holder = self._holder_of(record_id, workload_id, next_hash(h), content)
                if holder is not None:
                    dropped.append((record_id,))
                    segments.add(record_id, holder)
                    tally = (target_id, workload_id, error_no)
                    uncounted[tally] = uncounted.get(tally, 0) + 1
            self.conn.executemany("DELETE FROM records WHERE id = ?", dropped)
            self._uncount(uncounted)
            segments.flush()
            duplicates += len(dropped)
            after = page[-1][0]
        segments.flush(final=True)
        if duplicates:
            self._drop_empty_blocks()
        return duplicates

    def _uncount(self, uncounted: dict[tuple[int, int, int], int]) -> None:
        """Take dropped duplicates out of the tallies (min and max stay: a duplicate's cost
        is its first copy's, counted in the same tally or an earlier file's)."""
        keys = list(uncounted)
        self.conn.executemany(
            """UPDATE tallies SET records = records - ?
               WHERE target_id = ? AND workload_id = ? AND error_no = ?""",
            [(uncounted[key], *key) for key in keys],
        )
        self.conn.executemany(
            """DELETE FROM tallies
               WHERE target_id = ? AND workload_id = ? AND error_no = ? AND records = 0""",
            keys,
        )

    def _holder_of(self, record_id: int, workload_id: int, h: int, content: bytes) -> int | None:
        """After a collision: probe from `h` for this content, returning the record holding
        it; if absent, take a free hash (None)."""
        while True:
            row = self.conn.execute(
                "SELECT record_id FROM content_hashes WHERE workload_id = ? AND hash = ?",
                (workload_id, h),
            ).fetchone()
            if row is None:
                self.conn.execute(
                    "INSERT INTO content_hashes (workload_id, hash, record_id) VALUES (?, ?, ?)",
                    (workload_id, h, record_id),
                )
                self.conn.execute("UPDATE records SET hash = ? WHERE id = ?", (h, record_id))
                return None
            if self.reader.line(row[0]) == content:
                return int(row[0])
            h = next_hash(h)

    def _drop_empty_blocks(self) -> None:
        """Delete this file's blocks none of whose records is left (all were duplicates)."""
        starts = [
            block_id
            for (block_id,) in self.conn.execute(
                "SELECT id FROM blocks WHERE id >= ? ORDER BY id", (self.first_id,)
            )
        ]
        empty = [
            (start,)
            for start, end in zip(starts, [*starts[1:], self.end_id], strict=True)
            if self.conn.execute(
                "SELECT 1 FROM records WHERE id >= ? AND id < ? LIMIT 1", (start, end)
            ).fetchone()
            is None
        ]
        self.conn.executemany("DELETE FROM blocks WHERE id = ?", empty)
