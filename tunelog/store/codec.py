"""Stored lines: zstd-compressed blocks of consecutive lines, decoded on read.

A block holds the lines of up to BLOCK_LINES consecutive records of one file, joined by LF (a
line never contains one); its id is the first record's id, so records need no pointer to it.
Compressing lines together finds what neighbouring lines share (target, task, knob names)
without a trained dictionary: about 55 bytes per synthetic 580-byte line, against 230-360 for
lines compressed one by one with a per-file dictionary. Blocks are small so that reading one
line (an export of the winners) decompresses little around it.
"""

from __future__ import annotations

import math
import sqlite3
from collections import OrderedDict
from typing import TYPE_CHECKING

import xxhash

from tunelog.exceptions import DatabaseDamagedError

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
    return "[" + ", ".join(f"[{int(n)}, {_json_float(c)}]" for n, c in improvements) + "]"


def _json_float(value: float) -> str:
    """A float as json.dumps writes it: its repr, but `Infinity`, `-Infinity` and `NaN` (a
    MetaSchedule mean may overflow: its repr `inf` is no JSON json.loads reads back)."""
    number = float(value)
    if number != number:
        return "NaN"
    if number in (math.inf, -math.inf):
        return "Infinity" if number > 0 else "-Infinity"
    return repr(number)


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


class _Block:
    """A decompressed block, split into its lines only for a caller that wants them all.

    A reader picking a few lines out of each block (an export of the winners keeps about one
    line in 13) finds each by walking forward from the line it found last: splitting a block
    costs several times more (each line past 512 bytes is an allocation of its own).
    """

    __slots__ = ("_index", "_lines", "_start", "data", "end")

    def __init__(self, data: bytes, end: int) -> None:
        self.data = data
        self.end = end  # the first record id this block does not answer for
        self._lines: list[bytes] | None = None
        self._index = self._start = 0  # the line found last, and its offset in data

    def line(self, index: int) -> bytes:
        """Line `index` of the block (as `lines()[index]`); LookupError past its last line."""
        if self._lines is not None:
            return self._lines[index]
        if index < self._index:  # read backwards: split once rather than walk again
            return self.lines()[index]
        data, start = self.data, self._start
        find = data.index
        try:
            for _ in range(index - self._index):
                start = find(b"\n", start) + 1
        except ValueError:
            raise LookupError(f"no line {index} in the block") from None
        self._index, self._start = index, start
        stop = data.find(b"\n", start)
        return data[start:stop] if stop >= 0 else data[start:]

    def lines(self) -> list[bytes]:
        """Every line of the block, in order."""
        if self._lines is None:
            self._lines = self.data.split(b"\n")
        return self._lines


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
        # First id -> the block, which answers for first <= id < block.end.
        self._blocks: OrderedDict[int, _Block] = OrderedDict()
        self._last: tuple[int, _Block] | None = None  # the block read last

    def line(self, record_id: int) -> bytes:
        """The original bytes (without line end) of a stored record's line."""
        first, block = self._block(record_id)
        try:
            return block.line(record_id - first)
        except LookupError:
            raise _damaged(record_id) from None

    def block_of(self, record_id: int) -> tuple[int, int, list[bytes]]:
        """(first id, end id, lines) of the block holding a record's line: a caller reading
        many records in order looks the next ones up in it before asking again."""
        first, block = self._block(record_id)
        lines = block.lines()
        end = min(block.end, first + len(lines))
        if not record_id < end:
            raise _damaged(record_id)
        return first, end, lines

    def _block(self, record_id: int) -> tuple[int, _Block]:
        """The block that answers for a record id (its line may still be missing: a block
        holds up to the next block's id, which a removed file's records may leave a gap to)."""
        last = self._last
        if last is not None and last[0] <= record_id < last[1].end:
            return last  # reads in record order: mostly the block read last
        for first, block in reversed(self._blocks.items()):
            if first <= record_id < block.end:
                return first, block
        # The block and the id of the one after it, in one query (both by the primary key).
        row = self.conn.execute(
            "SELECT b.id, b.data, (SELECT min(n.id) FROM blocks n WHERE n.id > b.id) "
            "FROM blocks b WHERE b.id <= ? ORDER BY b.id DESC LIMIT 1",
            (record_id,),
        ).fetchone()
        if row is None:
            raise _damaged(record_id)
        first, data, following = int(row[0]), row[1], row[2]
        import zstandard  # imported once per process: later imports are a dict lookup

        if self._decompressor is None:
            self._decompressor = zstandard.ZstdDecompressor()
        try:
            text = self._decompressor.decompress(data)
        except zstandard.ZstdError as exc:
            raise _damaged(record_id, f"its block does not decompress: {exc}") from None
        # Counting lines costs about what decompressing does: only the last block, which no
        # next block bounds, is counted; the others are bounded by the next block's id.
        end = following if following is not None else first + text.count(b"\n") + 1
        if not record_id < end:
            raise _damaged(record_id)
        block = self._blocks[first] = _Block(text, end)
        if len(self._blocks) > _CACHED_BLOCKS:
            self._blocks.popitem(last=False)
        self._last = (first, block)
        return first, block


def _damaged(record_id: int, why: str = "its block is missing") -> DatabaseDamagedError:
    return DatabaseDamagedError(
        f"the database is damaged: no stored line for record {record_id} ({why}); import the "
        "logs again into a new database, or restore a backup"
    )
