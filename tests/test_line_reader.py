"""LineReader: a stored line by record id, whatever order the ids are asked in."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tunelog.store import LineReader, codec

# Blocks as the database may hold them: consecutive ids; a block with fewer lines than the
# gap to the next (ids 12-19 have no line: a removed file's records); a block whose last
# lines were given to the next block (schema 2: ids 23-24 are block 23's); one line; empty
# lines; the last block, which no next block bounds.
BLOCKS = {
    1: [b"a1", b"a2", b"a3"],
    4: [b"b4", b"", b"b6", b"b7", b"b8", b"b9"],
    10: [b"c10", b"c11"],
    20: [b"d20", b"d21", b"d22", b"not23", b"not24"],
    23: [b"e23", b"e24", b""],
    26: [b"f26"],
    27: [b"g27", b"g28", b"g29"],
}
STORED = {
    first + i: line
    for first, lines in BLOCKS.items()
    for i, line in enumerate(lines)
    if first + i not in range(23, 25) or first == 23
}
ASKED = range(0, 32)  # every stored id, and ids without a line around them


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE blocks (id INTEGER PRIMARY KEY, source_id INT, data BLOB)")
    packer = codec.BlockPacker()
    for first, lines in BLOCKS.items():
        connection.execute("INSERT INTO blocks VALUES (?, 1, ?)", (first, packer.pack(lines)))
    yield connection
    connection.close()


def answer(reader: LineReader, record_id: int) -> bytes | None:
    try:
        return reader.line(record_id)
    except LookupError:
        return None


def block_answer(reader: LineReader, record_id: int) -> bytes | None:
    try:
        first, end, lines = reader.block_of(record_id)
    except LookupError:
        return None
    assert first <= record_id < end <= first + len(lines)
    return lines[record_id - first]


@pytest.mark.parametrize(
    "order",
    [
        list(ASKED),
        list(reversed(ASKED)),
        [5, 9, 4, 8, 1, 29, 27, 3, 26, 23, 22, 12, 11],
        [9, 9, 5, 5, 24, 23, 20],
    ],
    ids=["forward", "backward", "jumping", "repeated"],
)
@pytest.mark.parametrize("read", [answer, block_answer], ids=["line", "block_of"])
def test_each_id_reads_its_own_line_or_none(
    conn: sqlite3.Connection, order: list[int], read: Callable[[LineReader, int], bytes | None]
) -> None:
    reader = LineReader(conn)
    assert {i: read(reader, i) for i in order} == {i: STORED.get(i) for i in order}


@given(st.lists(st.tuples(st.integers(0, 31), st.booleans()), max_size=40))
def test_mixed_reads_in_any_order_agree_with_the_stored_lines(asks: list[tuple[int, bool]]) -> None:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE blocks (id INTEGER PRIMARY KEY, source_id INT, data BLOB)")
    packer = codec.BlockPacker()
    for first, lines in BLOCKS.items():
        connection.execute("INSERT INTO blocks VALUES (?, 1, ?)", (first, packer.pack(lines)))
    reader = LineReader(connection)
    for record_id, whole_block in asks:
        read = block_answer if whole_block else answer
        assert read(reader, record_id) == STORED.get(record_id)
    connection.close()
