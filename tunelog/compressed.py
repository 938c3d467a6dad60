""".xz and .bz2 files read stream after stream, strictly.

Python's LZMAFile and BZ2File read concatenated streams, but stop without a word at the first
bytes after a stream that do not start another one: a log whose second half follows junk, or
follows the stream padding the .xz format allows (NUL bytes, four at a time, which `xz -d`
reads past), lost that half with no rejected line and no damage note. Here what follows a
stream is another stream, padding (.xz), or the end of the file; anything else raises the
format's own error (`inputs.STREAM_ERRORS`), which the import reports as damage after the last
line read, as it does for a .gz file.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from typing import BinaryIO

_CHUNK = 1 << 16  # compressed bytes read at a time
# Python's own words for a file cut inside a stream (gzip's too): one message for all three.
_CUT_SHORT = "Compressed file ended before the end-of-stream marker was reached"


class GarbledStreamError(OSError):
    """A stream found corrupt (its check failed, its data invalid) after it gave decompressed
    bytes: those bytes may be wrong (`inputs.garbled`)."""


class GzipMembers(gzip.GzipFile):
    """A .gz file, read member after member as Python's GzipFile reads it, its errors told
    apart as `_Streams` tells them: one raised inside a member that gave bytes (a failed CRC
    or length, invalid deflate data) is GarbledStreamError; one before the member gave any
    (junk after complete members, even junk that starts with gzip's magic) stays gzip's own
    (the lines of the members before are sound)."""

    def read1(self, size: int = -1) -> bytes:
        try:
            return super().read1(size)
        except (OSError, zlib.error) as exc:  # BadGzipFile is an OSError; EOFError: cut short
            if _member_gave_bytes(self):
                raise GarbledStreamError(str(exc)) from exc
            raise


def _member_gave_bytes(file: gzip.GzipFile) -> bool:
    """Whether the member being read gave bytes. Python's reader counts them (its private
    `_stream_size`, reset as each member starts); where it does not, a failure is taken to
    come after bytes (a file rolled back, not a garbled line kept)."""
    reader = getattr(getattr(file, "_buffer", None), "raw", None)
    given = getattr(reader, "_stream_size", None)
    return not isinstance(given, int) or given > 0


class _Streams(io.RawIOBase):
    """The decompressed bytes of every stream of `raw`, one after another (module docstring)."""

    def __init__(self, raw: BinaryIO, xz: bool) -> None:
        self._raw = raw
        self._xz = xz
        self._decompressor = self._new()
        self._input = b""  # compressed bytes read and not yet given to the decompressor
        self._ended = False
        self._gave = False  # the current stream gave decompressed bytes

    def _new(self) -> lzma.LZMADecompressor | bz2.BZ2Decompressor:
        return lzma.LZMADecompressor() if self._xz else bz2.BZ2Decompressor()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = len(buffer)
        if not size:  # decompress(data, 0) returns nothing and asks for no input: no progress
            return 0
        while not self._ended:
            if self._decompressor.eof and not self._next_stream():
                break
            if self._decompressor.needs_input and not self._input:
                self._input = self._raw.read(_CHUNK)
                if not self._input:
                    raise EOFError(_CUT_SHORT)
            data, self._input = self._input, b""
            try:
                out = self._decompressor.decompress(data, size)
            except (OSError, lzma.LZMAError) as exc:
                if self._gave:
                    raise GarbledStreamError(str(exc)) from exc
                raise  # nothing of this stream given: junk after a stream, or no stream
            if out:
                self._gave = True
                buffer[: len(out)] = out
                return len(out)
        self._ended = True
        return 0

    def _next_stream(self) -> bool:
        """Start the next stream after the one that ended; False at the end of the file."""
        rest = self._decompressor.unused_data + self._input
        padding = 0
        while True:
            stripped = rest.lstrip(b"\0") if self._xz else rest
            padding += len(rest) - len(stripped)
            if stripped:
                break
            rest = self._raw.read(_CHUNK)
            if not rest:
                if padding % 4:
                    raise lzma.LZMAError(f"{padding} NUL bytes after a stream: not xz padding")
                return False
        if padding % 4:
            raise lzma.LZMAError(f"{padding} NUL bytes after a stream: not xz padding")
        self._decompressor = self._new()
        self._input = stripped
        self._gave = False
        return True


def read_streams(compression: str, stream: BinaryIO) -> io.BufferedReader:
    """The decompressed text of an .xz (`compression` "xz") or .bz2 ("bzip2") file; reading on
    past a stream's end into bytes that start no stream raises lzma.LZMAError or OSError."""
    return io.BufferedReader(_Streams(stream, compression == "xz"), buffer_size=_CHUNK)
