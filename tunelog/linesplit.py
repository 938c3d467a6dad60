"""Splitting a byte stream into lines as TVM reads a log, never holding more than a cap of one.

AutoTVM opens a log in text mode (`for row in open(path)`): Python's universal newlines end a
line at LF, CRLF or a CR alone (old Mac files), so tunelog does the same, line numbers included,
and yields each line with its original end (export writes the bytes as they were). A line longer
than MAX_LINE_BYTES is never held whole: its bytes are counted and dropped as they are read, and
an `OverlongLine` stands in for it, so memory stays bounded whatever the input.

No SQLite and no printing here.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from itertools import chain

# The longest line read (its line end included). Real records are far shorter: AutoTVM and
# auto_scheduler lines are a few kB, the longest MetaSchedule workload line in the corpus
# (a whole TIR module, base64) is 75 kB; 16 MiB leaves 200 times that for bigger models, and
# a line at the cap costs an import about 100 MB (the line, its copy and its parse).
MAX_LINE_BYTES = 16 << 20
# Bytes asked of the stream at a time: a chunk below malloc's mmap threshold (128 KiB) reuses
# heap memory; 1 MiB chunks, each a fresh mapping, cost a million-line import 0.3 s of faults.
CHUNK_BYTES = 1 << 16

_LF, _CR = 10, 13


class OverlongLine(bytes):
    """Stands in for a line longer than the cap: its bytes are only its line end (if any);
    `length` is the line's length in bytes, its end included."""

    length: int

    def __new__(cls, end: bytes, length: int) -> OverlongLine:
        """A stand-in for a line of `length` bytes ending with `end` (b"" at end of input)."""
        line = super().__new__(cls, end)
        line.length = length
        return line

    @property
    def reason(self) -> str:
        """Why the line is rejected, for `file:line: reason`."""
        return f"line of {self.length:,} bytes is longer than the limit of {limit_text()}; not read"


def limit_text() -> str:
    """The line length limit as people read it: `16 MiB`, `64 KiB` or a number of bytes."""
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if MAX_LINE_BYTES % (1 << shift) == 0:
            return f"{MAX_LINE_BYTES >> shift} {unit}"
    return f"{MAX_LINE_BYTES:,} bytes"


def reader_keeping_data(read1: Callable[[int], bytes]) -> Callable[[int], bytes]:
    """A `read(n)` made of `read1` calls that returns the bytes read before an error (a
    truncated or corrupt compressed stream) and raises that error on the next call, so the
    complete lines before the damage are still read."""
    failed: list[Exception] = []

    def read(size: int) -> bytes:
        if failed:
            raise failed.pop()
        parts: list[bytes] = []
        wanted = size
        while wanted > 0:
            try:
                data = read1(wanted)
            except Exception as exc:
                if not parts:
                    raise
                failed.append(exc)
                break
            if not data:
                break
            parts.append(data)
            wanted -= len(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    return read


def line_end(line: bytes) -> bytes:
    """The line's end: b"\\r\\n", b"\\n", b"\\r" or b"" (the last line may have none)."""
    if line.endswith(b"\n"):
        return b"\r\n" if line.endswith(b"\r\n") else b"\n"
    return b"\r" if line.endswith(b"\r") else b""


def is_terminated(line: bytes) -> bool:
    """True when the line ends with a line end (LF, CRLF or CR)."""
    return line.endswith((b"\n", b"\r"))


def split_lines(
    read: Callable[[int], bytes],
    *,
    hold_back_unterminated: bool = False,
    skip_leading_lf: bool = False,
    cap: int | None = None,
    chunk: int = CHUNK_BYTES,
) -> Iterator[bytes]:
    """The lines of the bytes `read(chunk)` returns until it returns b"", each with its end.

    A line longer than `cap` bytes (default MAX_LINE_BYTES) comes as an `OverlongLine`.
    `hold_back_unterminated`: leave out a last line without line end (a tuner mid-write).
    `skip_leading_lf`: the bytes before the stream ended with a CR (a resumed file), so a
    first LF completes that CRLF.
    """
    # The lines come a chunk's list at a time, flattened in C: a generator resumed per line
    # cost the import a Python frame a line; this resumes it once a chunk (~100 lines).
    return chain.from_iterable(
        _line_lists(read, hold_back_unterminated, skip_leading_lf, cap, chunk)
    )


def _line_lists(
    read: Callable[[int], bytes],
    hold_back_unterminated: bool,
    skip_leading_lf: bool,
    cap: int | None,
    chunk: int,
) -> Iterator[list[bytes]]:
    """`split_lines`' lines, as the lists of lines each chunk read completes."""
    cap = MAX_LINE_BYTES if cap is None else cap
    chunk = min(chunk, cap)  # a line inside one chunk then fits the cap
    head = bytearray()  # the start of a line whose end is not read yet (empty when over cap)
    dropped = 0  # bytes of that line not kept, because it is longer than the cap
    pending_cr = skip_leading_lf  # what was read ends with a CR: a line end, or half a CRLF
    while data := read(chunk):
        if pending_cr:
            pending_cr = False
            if data[0] == _LF:
                data = data[1:]
                if head or dropped:
                    head.append(_LF)
            if head or dropped:
                yield [_whole(head, dropped, b"", cap)]
                head, dropped = bytearray(), 0
            if not data:
                continue
        pieces = _pieces(data)
        # Each piece but the last ends with a line end; the last ends with LF, or is the start
        # of a line read on in the next chunk (a CR there may yet be followed by a LF).
        tail = b"" if pieces[-1][-1] == _LF else pieces.pop()
        if pieces:
            if head or dropped:
                pieces[0] = _whole(head, dropped, pieces[0], cap)
                head, dropped = bytearray(), 0
            yield pieces
        if tail:
            pending_cr = tail[-1] == _CR
            if dropped or len(head) + len(tail) > cap:
                dropped += len(head) + len(tail)
                head = bytearray(b"\r" if pending_cr else b"")
                dropped -= len(head)
            else:
                head += tail
    if head or dropped:
        last = _whole(head, dropped, b"", cap)
        if not (hold_back_unterminated and not is_terminated(last)):
            yield [last]


def _pieces(data: bytes) -> list[bytes]:
    """The chunk cut after each line end (its last piece may have none).

    Where no CR ends a line (no CR, or each one is part of a CRLF), the cuts are after each
    LF: BytesIO finds those with memchr, seven times faster than `splitlines`, which looks at
    every byte (0.3 s per million lines of import otherwise).
    """
    if b"\r" not in data or (data[-1] != _CR and data.count(b"\r") == data.count(b"\r\n")):
        return io.BytesIO(data).readlines()
    return data.splitlines(keepends=True)


def _whole(head: bytearray, dropped: int, rest: bytes, cap: int) -> bytes:
    """The line made of `head` (after `dropped` bytes not kept) and `rest`."""
    length = dropped + len(head) + len(rest)
    if dropped or length > cap:
        return OverlongLine(line_end(bytes(head[-2:]) + rest[-2:]), length)
    head += rest
    return bytes(head)
