"""Stored lines: zstd compression with per-file dictionaries, decoded on read."""

from __future__ import annotations

import sqlite3

import zstandard

# Lines are stored zstd-compressed with a dictionary trained on the file's first batch
# (a few µs per line, about 5x smaller); smaller files reuse the newest dictionary.
DICTIONARY_BYTES = 16 * 1024
MIN_TRAINING_LINES = 500
COMPRESSION_LEVEL = 1


class LineCodec:
    """Decompresses stored lines; dictionaries are loaded once per connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._decompressors: dict[int, zstandard.ZstdDecompressor] = {}

    def decode(self, raw: bytes, dict_id: int | None) -> bytes:
        """The original line bytes of a stored record."""
        if dict_id is None:
            return raw
        decompressor = self._decompressors.get(dict_id)
        if decompressor is None:
            (data,) = self.conn.execute(
                "SELECT data FROM dictionaries WHERE id = ?", (dict_id,)
            ).fetchone()
            decompressor = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(data))
            self._decompressors[dict_id] = decompressor
        return decompressor.decompress(raw)
