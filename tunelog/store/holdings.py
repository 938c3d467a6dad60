"""What each source held: every record its file contained, with its line (table `holdings`).

A record is stored once, owned by the first source that had its line (`records.source_id`,
`records.line`); a source is the set of lines its file held, whoever stored them first. The
table keeps, per source, its record lines in file order as runs: a run is `count` consecutive
positions among the file's records (`seq` ...), at consecutive line numbers (`line` ...),
holding consecutive record ids (`record_id` ...). A file imported fresh is one run per stretch
of records between other lines; its duplicates of an earlier file are runs of that file's ids.
So the table stays a fraction of `records` in size and costs the import almost nothing.

Everything that asks "what did this file hold" (filters by source or label, `diff label:`,
`merge`, `sources remove`) reads it through `held_records`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence

from tunelog.versions import METASCHEDULE_VERSION

# A run: (seq, line, record_id, count).
Run = tuple[int, int, int, int]

INSERT_RUN = "INSERT INTO holdings (source_id, seq, line, record_id, count) VALUES (?, ?, ?, ?, ?)"


class RunBuilder:
    """Joins (seq, line, record id) positions, given in seq order, into runs."""

    __slots__ = ("_count", "_line", "_rid", "_seq", "runs")

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self._seq = self._line = self._rid = self._count = 0

    def add(self, seq: int, line: int, record_id: int, length: int = 1) -> None:
        """Append `length` positions from these: they extend the open run when all three
        follow on."""
        count = self._count
        if (
            count
            and seq == self._seq + count
            and line == self._line + count
            and record_id == self._rid + count
        ):
            self._count = count + length
            return
        if count:
            self.runs.append((self._seq, self._line, self._rid, count))
        self._seq, self._line, self._rid, self._count = seq, line, record_id, length

    def take_closed(self) -> list[Run]:
        """The runs closed so far (the open one stays open)."""
        runs, self.runs = self.runs, []
        return runs

    def close(self) -> list[Run]:
        """Every run, the open one included; the builder is empty afterwards."""
        if self._count:
            self.runs.append((self._seq, self._line, self._rid, self._count))
            self._count = 0
        runs, self.runs = self.runs, []
        return runs


def next_seq(conn: sqlite3.Connection, source_id: int) -> int:
    """How many record lines the source holds so far (the seq of its next one)."""
    row = conn.execute(
        "SELECT seq + count FROM holdings WHERE source_id = ? ORDER BY seq DESC LIMIT 1",
        (source_id,),
    ).fetchone()
    return 0 if row is None else int(row[0])


def store_runs(conn: sqlite3.Connection, source_id: int, runs: Iterable[Run]) -> None:
    """Insert runs of one source."""
    conn.executemany(INSERT_RUN, [(source_id, *run) for run in runs])


# Each record line of one source in file order: its line number and the record's columns.
_HELD = """SELECT h.seq + (r.id - h.record_id), h.line + (r.id - h.record_id), r.id, r.target_id,
                  r.workload_id, r.config_index, r.error_no, r.mean_cost, r.all_cost, r.timestamp,
                  rs.spelling_id
           FROM holdings h JOIN records r ON r.id >= h.record_id AND r.id < h.record_id + h.count
           LEFT JOIN record_spellings rs ON rs.record_id = r.id
           WHERE h.source_id = ? {targets} ORDER BY h.seq, r.id"""


def held_records(
    conn: sqlite3.Connection,
    source_id: int,
    target_ids: Collection[int] | None = None,
    *,
    metaschedule_only: bool = False,
) -> Iterator[tuple[int, ...]]:
    """(seq, line, record id, target id, workload id, config index, error number, mean cost,
    all cost, timestamp, own spelling id or None (`record_spellings`)) of every record line
    the source held, in its file's order (`target_ids`: only the records of these targets;
    `metaschedule_only`: of MetaSchedule workloads only, the others' records all kept)."""
    targets = ""
    if target_ids is not None:  # ints only: nothing to quote
        targets = f"r.target_id IN ({','.join(str(int(i)) for i in target_ids) or 'NULL'})"
        if metaschedule_only:
            targets = (
                f"({targets} OR r.workload_id NOT IN "
                f"(SELECT id FROM workloads WHERE version = '{METASCHEDULE_VERSION}'))"
            )
        targets = "AND " + targets
    return conn.execute(_HELD.format(targets=targets), (source_id,))


class Segments:
    """An import's dropped records, given in ascending id order with the record holding each
    one's line, as segments in `temp.dropped_segments`: consecutive ids whose holders are
    consecutive too (a file repeating an earlier one is a few rows, not a row per line)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS dropped_segments "
            "(first INTEGER PRIMARY KEY, holder INTEGER NOT NULL, count INTEGER NOT NULL)"
        )
        self.closed: list[tuple[int, int, int]] = []
        self._first = self._holder = self._count = 0

    def add(self, record_id: int, holder: int) -> None:
        """One more dropped record (ids ascending) and its holder."""
        count = self._count
        if count and record_id == self._first + count and holder == self._holder + count:
            self._count = count + 1
            return
        if count:
            self.closed.append((self._first, self._holder, count))
        self._first, self._holder, self._count = record_id, holder, 1

    def flush(self, *, final: bool = False) -> None:
        """Store the closed segments (all of them when `final`)."""
        if final and self._count:
            self.closed.append((self._first, self._holder, self._count))
            self._count = 0
        self.conn.executemany("INSERT INTO temp.dropped_segments VALUES (?, ?, ?)", self.closed)
        self.closed = []


def remap(conn: sqlite3.Connection, source_id: int, from_seq: int) -> None:
    """Point the source's positions from `from_seq` at the records holding their lines, after
    an import dropped some as duplicates (`temp.dropped_segments`, see Segments). The import's
    runs hold ascending ids, so one pass over both re-joins the runs; both are read from
    tables, so memory stays flat whatever the file."""
    conn.execute("DROP TABLE IF EXISTS temp.remapped_runs")
    conn.execute(
        """CREATE TEMP TABLE remapped_runs AS SELECT seq, line, record_id, count FROM holdings
           WHERE source_id = ? AND seq >= ?""",
        (source_id, from_seq),
    )
    conn.execute("DELETE FROM holdings WHERE source_id = ? AND seq >= ?", (source_id, from_seq))
    segments = conn.execute("SELECT first, holder, count FROM temp.dropped_segments ORDER BY first")
    segment = segments.fetchone()
    builder = RunBuilder()
    for seq, line, first, count in conn.execute(
        "SELECT seq, line, record_id, count FROM temp.remapped_runs ORDER BY seq"
    ):
        pos, end = first, first + count
        while pos < end:
            while segment is not None and segment[0] + segment[2] <= pos:
                segment = segments.fetchone()
            start, holder, length = segment if segment is not None else (end, 0, 0)
            if start <= pos:  # a dropped stretch: its holders
                take = min(start + length, end) - pos
                builder.add(seq + pos - first, line + pos - first, holder + pos - start, take)
            else:  # kept records up to the next dropped one
                take = min(start, end) - pos
                builder.add(seq + pos - first, line + pos - first, pos, take)
            pos += take
        if len(builder.runs) >= 2048:
            store_runs(conn, source_id, builder.take_closed())
    store_runs(conn, source_id, builder.close())
    conn.execute("DROP TABLE temp.remapped_runs")


def fill_from_records(conn: sqlite3.Connection) -> None:
    """What a database without holdings knows: each source held the records it stored."""
    builder = RunBuilder()
    current: int | None = None
    seq = 0
    for record_id, source_id, line in conn.execute(
        "SELECT id, source_id, line FROM records ORDER BY source_id, id"
    ):
        if source_id != current:
            if current is not None:
                store_runs(conn, current, builder.close())
            current, seq = source_id, 0
        builder.add(seq, line, record_id)
        seq += 1
    if current is not None:
        store_runs(conn, current, builder.close())


def copy_runs(conn: sqlite3.Connection, from_source: int, to_source: int) -> None:
    """Give a new source (a copy of a file at another path) the holdings of the original."""
    conn.execute(
        """INSERT INTO holdings (source_id, seq, line, record_id, count)
           SELECT ?, seq, line, record_id, count FROM holdings WHERE source_id = ?""",
        (to_source, from_source),
    )


def intervals(conn: sqlite3.Connection) -> dict[int, list[tuple[int, int]]]:
    """Per source, the record id ranges [first, end) it holds (a range once per time held)."""
    found: dict[int, list[tuple[int, int]]] = {}
    for source_id, first, count in conn.execute("SELECT source_id, record_id, count FROM holdings"):
        found.setdefault(int(source_id), []).append((int(first), int(first) + int(count)))
    return found


def shared_lines(conn: sqlite3.Connection) -> dict[int, int]:
    """Per source, how many of its record lines hold a record another source holds too."""
    events: list[tuple[int, int, int]] = []  # (record id, +1/-1, source)
    for source_id, ranges in intervals(conn).items():
        for first, end in ranges:
            events += [(first, 1, source_id), (end, -1, source_id)]
    events.sort()
    covering: dict[int, int] = {}  # source -> how many of its ranges cover the point
    shared: dict[int, int] = {}
    last = 0
    for point, change, source_id in events:
        if point > last and len(covering) > 1:
            for holder, times in covering.items():
                shared[holder] = shared.get(holder, 0) + (point - last) * times
        last = point
        times = covering.get(source_id, 0) + change
        if times:
            covering[source_id] = times
        else:
            del covering[source_id]
    return shared


def held_only_by(conn: sqlite3.Connection, source_ids: Sequence[int]) -> list[tuple[int, int]]:
    """Record id ranges [first, end) the sources hold and no other source holds."""
    removed = set(source_ids)
    events: list[tuple[int, int, bool]] = []  # (record id, +1/-1, one of the sources)
    for source_id, ranges in intervals(conn).items():
        mine = source_id in removed
        for first, end in ranges:
            events += [(first, 1, mine), (end, -1, mine)]
    events.sort()
    found: list[tuple[int, int]] = []
    mine_count = other_count = 0
    last = 0
    for point, change, mine in events:
        if point > last and mine_count and not other_count:
            if found and found[-1][1] == last:
                found[-1] = (found[-1][0], point)
            else:
                found.append((last, point))
        last = point
        if mine:
            mine_count += change
        else:
            other_count += change
    return found


def same_lines(
    conn: sqlite3.Connection, source_id: int, other: int, *, prefix: bool = False
) -> bool:
    """Whether two sources hold the same record lines: the same records at the same line
    numbers, in the same order (read side by side, never held whole); `prefix`: whether
    `other`'s are the first of `source_id`'s (a read of the file before it grew)."""
    from itertools import zip_longest

    mine, theirs = held_records(conn, source_id), held_records(conn, other)
    done = object()
    for a, b in zip_longest(mine, theirs, fillvalue=done):
        if b is done and prefix:
            return True
        if a is done or b is done or a[1:3] != b[1:3]:  # type: ignore[index]
            return False
    return True


def holds_more_lines(new: int, duplicates: int, conn: sqlite3.Connection, source_id: int) -> bool:
    """Whether a read of a file's bytes held more record lines (`new` + `duplicates`) than
    the source already holding those bytes: a --repair read of a file whose pasted records the
    earlier, plain import rejected holds them, even when another file stored them first (it
    adds no record then), so it is a source of its own, not one more import of the earlier."""
    (records, dups) = conn.execute(
        "SELECT records, duplicates FROM sources WHERE id = ?", (source_id,)
    ).fetchone()
    return new + duplicates > int(records) + int(dups)
