"""Stored lines: zstd-compressed blocks of consecutive lines, decoded on read.

A block holds the lines of up to BLOCK_LINES consecutive records of one file, joined by LF (a
line never contains one); its id is the first record's id, so records need no pointer to it.
Compressing lines together finds what neighbouring lines share (target, task, knob names)
without a trained dictionary: about 55 bytes per synthetic 580-byte line, against 230-360 for
lines compressed one by one with a per-file dictionary. Blocks are small so that reading one
line (an export of the winners) decompresses little around it.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from typing import TYPE_CHECKING

import xxhash

if TYPE_CHECKING:
    import zstandard

# zstandard is imported where a block is (de)compressed: a query that reads no stored line
# (best without --knobs, stats, workloads) does not load it.

BLOCK_LINES = 128
COMPRESSION_LEVEL = 1
_CACHED_BLOCKS = 32
_SIGN = 1 << 63


def content_hash(content: bytes) -> int:
    """64-bit signed hash of a line's content: the dedup key (collisions are probed).

    XXH3: about 0.1 us for a 600-byte line, a tenth of BLAKE2b's time. It is not
    cryptographic and need not be: equal hashes are always confirmed byte for byte, so a log
    crafted to collide would import slowly, never wrongly.
    """
    return xxhash.xxh3_64_intdigest(content) - _SIGN


def improvements_text(improvements: list[tuple[int, float]]) -> str:
    """A run's improvements as stored in `trial_runs`: `json.dumps` of `[[trial, cost], ...]`.

    Written out directly, as json.dumps would (finite floats by their repr): the importer
    writes one per (target, workload) of each file, and json.dumps costs several times more.
    """
    return "[" + ", ".join(f"[{int(n)}, {float(c)!r}]" for n, c in improvements) + "]"


def next_hash(h: int) -> int:
    """Linear probing: the hash to try after a collision on `h`."""
    return h + 1 if h < _SIGN - 1 else -_SIGN


class BlockPacker:
    """Compresses blocks with one reusable compression context (cheaper than one per block)."""

    def __init__(self) -> None:
        import zstandard

        self._compressor = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL)

    def pack(self, lines: list[bytes]) -> bytes:
        """Compress consecutive lines (without line ends) into one block."""
        return self._compressor.compress(b"\n".join(lines))


class LineReader:
    """Reads stored lines by record id, keeping the last few blocks decompressed.

    A block holds the lines of consecutive record ids, and its id is the first of them, so
    the block of record r is the one with the largest id <= r. A cached block answers only for
    the ids the database would send to it: from its id up to the next block's id, so a reader
    never returns a line the database has since given to another block. Make one reader per
    query (inside one transaction or snapshot): readers ask in record order, so a small cache
    decompresses each block about once.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._decompressor: zstandard.ZstdDecompressor | None = None  # made on first read
        # First id -> (end id, lines); the block answers for first <= id < end.
        self._blocks: OrderedDict[int, tuple[int, list[bytes]]] = OrderedDict()

    def line(self, record_id: int) -> bytes:
        """The original bytes (without line end) of a stored record's line."""
        first, _, lines = self.block_of(record_id)
        return lines[record_id - first]

    def block_of(self, record_id: int) -> tuple[int, int, list[bytes]]:
        """(first id, end id, lines) of the block holding a record's line: a caller reading
        many records in order looks the next ones up in it before asking again."""
        for first, (end, lines) in reversed(self._blocks.items()):
            if first <= record_id < end:
                return first, end, lines
        row = self.conn.execute(
            "SELECT id, data FROM blocks WHERE id <= ? ORDER BY id DESC LIMIT 1", (record_id,)
        ).fetchone()
        if row is None:
            raise LookupError(f"no stored line for record {record_id}")
        first = int(row[0])
        if self._decompressor is None:
            import zstandard

            self._decompressor = zstandard.ZstdDecompressor()
        lines = self._decompressor.decompress(row[1]).split(b"\n")
        following = self.conn.execute(
            "SELECT min(id) FROM blocks WHERE id > ?", (first,)
        ).fetchone()[0]
        end = first + len(lines) if following is None else min(first + len(lines), following)
        if not record_id < end:
            raise LookupError(f"no stored line for record {record_id}")
        self._blocks[first] = (end, lines)
        if len(self._blocks) > _CACHED_BLOCKS:
            self._blocks.popitem(last=False)
        return first, end, lines
