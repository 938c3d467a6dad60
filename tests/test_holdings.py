"""Holdings runs (tunelog.store.holdings): joining positions, and re-pointing dropped records."""

from __future__ import annotations

import itertools

import pytest

from tunelog.store import Store, holdings


def _positions(runs: list[holdings.Run]) -> list[tuple[int, int, int]]:
    return [(seq + k, line + k, rid + k) for seq, line, rid, count in runs for k in range(count)]


@pytest.mark.parametrize(
    "positions",
    [
        [],
        [(0, 1, 10)],
        [(0, 1, 10), (1, 2, 11), (2, 3, 12)],  # one run
        [(0, 1, 10), (1, 3, 11), (2, 4, 12)],  # a comment line between: two runs
        [(0, 5, 10), (1, 5, 11)],  # two records pasted on one line (--repair)
        [(0, 1, 10), (1, 2, 4), (2, 3, 5), (3, 4, 10)],  # duplicates of earlier records
    ],
)
def test_runs_hold_exactly_the_positions_added(positions: list[tuple[int, int, int]]) -> None:
    builder = holdings.RunBuilder()
    for seq, line, rid in positions:
        builder.add(seq, line, rid)
    runs = builder.close()
    assert _positions(runs) == positions
    assert all(
        not (a[0] + a[3] == b[0] and a[1] + a[3] == b[1] and a[2] + a[3] == b[2])
        for a, b in itertools.pairwise(runs)
    ), "two runs that follow on should be one"


@pytest.mark.parametrize(
    ("dropped", "segments"),
    [
        ({}, []),
        ({11: 3, 12: 4, 13: 5}, [(11, 3, 3)]),
        ({10: 5, 11: 9, 12: 7}, [(10, 5, 1), (11, 9, 1), (12, 7, 1)]),  # one island, offsets vary
        ({10: 5, 11: 6, 13: 8, 14: 9}, [(10, 5, 2), (13, 8, 2)]),  # two islands, same offset
        ({10: 2, 11: 3, 12: 2, 13: 3}, [(10, 2, 2), (12, 2, 2)]),  # a file repeating itself
    ],
)
def test_dropped_records_become_segments_and_holdings_point_at_holders(
    dropped: dict[int, int], segments: list[tuple[int, int, int]]
) -> None:
    conn = Store(":memory:").conn
    found = holdings.Segments(conn)
    for record_id, holder in dropped.items():
        found.add(record_id, holder)
    found.flush(final=True)
    stored = conn.execute("SELECT * FROM temp.dropped_segments ORDER BY first").fetchall()
    assert stored == segments
    # A file of six records, ids 9..14, on lines 1-3 and 5-7 (a comment on line 4).
    runs = [(0, 1, 9, 3), (3, 5, 12, 3)]
    holdings.store_runs(conn, 1, runs)
    holdings.remap(conn, 1, 0)
    remapped = conn.execute("SELECT seq, line, record_id, count FROM holdings ORDER BY seq")
    expected = [(seq, line, dropped.get(rid, rid)) for seq, line, rid in _positions(runs)]
    assert _positions(remapped.fetchall()) == expected
