"""Finding and opening the logs to import: files, directories, stdin, compressed streams.

No SQLite here. Compression is detected from the content (magic bytes), not the file name,
and the SHA-256 and size are those of the bytes as stored (compressed if the file is).
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import stat
import sys
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import xxhash

from tunelog.compressed import GarbledStreamError, GzipMembers, read_streams
from tunelog.exceptions import InputNotFoundError
from tunelog.linesplit import reader_keeping_data, split_lines

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

STDIN = "-"

_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
)


@dataclass(frozen=True)
class LogInput:
    """One log to import: `path` as the user should see it (`-` for stdin)."""

    path: str

    @property
    def is_stdin(self) -> bool:
        """True for standard input."""
        return self.path == STDIN


def stored_path(path: str) -> str:
    """The path a source is stored under: absolute, so it names the file from any directory."""
    return path if path == STDIN else os.path.abspath(path)


def expand_inputs(paths: Sequence[str]) -> list[LogInput]:
    """Files as given, directories expanded recursively (sorted, regular files only).

    Raises InputNotFoundError naming the first path that does not exist.
    """
    found: list[LogInput] = []
    for path in paths:
        if path == STDIN:
            found.append(LogInput(STDIN))
            continue
        p = Path(path)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    child = Path(root) / name
                    if child.is_file():
                        found.append(LogInput(str(child)))
        elif p.is_file():
            found.append(LogInput(path))
        elif p.exists():
            raise InputNotFoundError(
                f"{path} is not a regular file or directory: to read it, "
                f"`tunelog import - < {path}`"
            )
        else:
            raise InputNotFoundError(f"{path} does not exist: check the path")
    return found


@dataclass(frozen=True)
class LineEnd:
    """Where the last complete line of the bytes read ends: `offset` bytes, `lines` lines, and
    the XXH3-128 (hex) of those bytes. An import resumes there when the file has grown."""

    offset: int
    lines: int
    prefix_hash: str


# What a truncated or corrupt compressed stream raises while it is read.
STREAM_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


def garbled(exc: BaseException) -> bool:
    """Whether a stream error (`STREAM_ERRORS`) means lines already read may be wrong: a
    compressed stream's check failed, or its data turned out invalid, after it gave bytes
    (`compressed.GarbledStreamError`, which the .gz, .xz and .bz2 readers raise then). A file
    cut short (EOFError) or junk after complete streams leaves them as written."""
    return isinstance(exc, GarbledStreamError)


_CHUNK = 1 << 20
# Bytes handed to the hashing thread at a time (see `Sha256Beside`): each hand-over costs a
# switch of the GIL, so the reader's 64 KB reads are gathered first.
_HASHED_BESIDE_BYTES = 1 << 20
_hash_worker: ThreadPoolExecutor | None = None


def _forget_worker() -> None:
    """In a forked child: the parent's executor came along but not its thread (its `submit`
    would wait forever on it), so the child starts one of its own when it needs one."""
    global _hash_worker
    _hash_worker = None


if hasattr(os, "register_at_fork"):  # not on Windows, which never forks
    os.register_at_fork(after_in_child=_forget_worker)


def _worker() -> ThreadPoolExecutor:
    global _hash_worker
    if _hash_worker is None:
        # Imported here: 11 ms that only a file of more than a megabyte pays.
        from concurrent.futures import ThreadPoolExecutor

        _hash_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tunelog-sha256")
    return _hash_worker


@cache
def has_spare_core() -> bool:
    """Whether this process may run on more than one CPU: with one, a hashing thread would only
    take turns with the reader."""
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # no sched_getaffinity (macOS, Windows): count the machine's
        return (os.cpu_count() or 1) > 1


class Sha256Beside:
    """A SHA-256 of the bytes fed in order, computed on a worker thread beside the reader.

    hashlib releases the GIL while it hashes a long enough buffer, so the file's hash (379 MB/s
    on a CPU without SHA extensions: 1.6 s of a 617 MB log) runs on another core while the
    main thread parses the lines. Bytes are handed over a megabyte at a time, and at most one
    megabyte is in flight: memory stays bounded and the bytes are hashed in order. A file
    smaller than that is hashed inline, when its digest is asked for, as is every file where
    the process has one CPU.
    """

    def __init__(self) -> None:
        self._sha256 = hashlib.sha256()
        self._beside = has_spare_core()
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._pending: Future[None] | None = None

    def update(self, data: bytes) -> None:
        """Hash `data` after the bytes fed before (it is kept, not copied: pass bytes)."""
        if not self._beside:
            self._sha256.update(data)
            return
        self._held.append(data)
        self._held_bytes += len(data)
        if self._held_bytes >= _HASHED_BESIDE_BYTES:
            joined = b"".join(self._held)
            self._held = []
            self._held_bytes = 0
            self._wait()
            self._pending = _worker().submit(self._sha256.update, joined)

    def hexdigest(self) -> str:
        """The hex digest of every byte fed so far."""
        self._wait()
        for data in self._held:
            self._sha256.update(data)
        self._held = []
        self._held_bytes = 0
        return self._sha256.hexdigest()

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()


class HashingReader(io.RawIOBase):
    """Passes bytes through while counting them and feeding a SHA-256.

    It also keeps the end of the last complete line read (`line_end`): an XXH3-128 of all
    bytes (8 GB/s, a fortieth of SHA-256's time) copied at each chunk's last line end, so a
    file's resume point costs no per-line work (its line number comes from the reader of the
    lines). A reader of a resumed file starts at `start`
    with the hash state of the bytes before it.
    """

    def __init__(
        self,
        raw: BinaryIO,
        start: LineEnd | None = None,
        hasher: Any | None = None,
        *,
        limit: int | None = None,
    ) -> None:
        self._raw = raw
        self._limit = limit
        self.sha256 = Sha256Beside()
        self.size = start.offset if start else 0
        self._running = hasher if hasher is not None else xxhash.xxh3_128()
        self._at_line_end: tuple[int, Any] = (self.size, self._running.copy())

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        wanted = len(buffer)
        if self._limit is not None:
            wanted = min(wanted, self._limit - self.size)
            if wanted <= 0:
                return 0
        data = self._raw.read(wanted)
        n = len(data)
        buffer[:n] = data
        self.sha256.update(data)
        # A line ends at LF, CRLF or a CR alone (see tunelog.linesplit). A CR ending the bytes
        # read counts as a line end too: a resumed read skips a LF that completes it.
        last = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if last >= 0:
            # Each byte hashed once: up to the line end, a copy of the state there, the rest.
            view = memoryview(data)
            self._running.update(view[: last + 1])
            self._at_line_end = (self.size + last + 1, self._running.copy())
            self._running.update(view[last + 1 :])
        else:
            self._running.update(data)
        self.size += n
        return n

    def line_end(self, lines: int) -> LineEnd:
        """The end of the last complete line read so far, which is line number `lines`."""
        offset, hasher = self._at_line_end
        return LineEnd(offset, lines, hasher.hexdigest())

    def drain(self) -> None:
        """Read what is left (so the hash covers the whole file)."""
        while self.read(1 << 20):
            pass


class OpenedLog:
    """An opened log: iterate `lines()`; `sha256`/`size` are complete once lines are read."""

    def __init__(
        self, source: LogInput, *, _resumed: tuple[BinaryIO, LineEnd, Any, bool] | None = None
    ) -> None:
        self.source = source
        # A resumed log (see `after`) reads on from a line end: plain text, its own hashes.
        self.resumed_at = _resumed[1] if _resumed else None
        # The bytes before a resumed read end with a CR: a LF first completes that CRLF.
        self._after_cr = _resumed is not None and _resumed[3]
        if _resumed is not None:
            raw = _resumed[0]
        else:
            try:
                raw = (
                    sys.stdin.buffer if source.is_stdin else open(source.path, "rb")  # noqa: SIM115
                )
            except OSError as exc:
                raise InputNotFoundError(f"cannot read {source.path}: {exc.strerror}") from exc
        self._owned = not source.is_stdin
        self._raw = raw
        try:
            self._hashing = HashingReader(
                raw,
                *((_resumed[1], _resumed[2]) if _resumed else (None, None)),
                limit=_regular_file_size(raw),
            )
            buffered = io.BufferedReader(self._hashing, buffer_size=_CHUNK)
            self.compression = None if _resumed else detect_compression(buffered.peek(8)[:8])
            self._stream = _decompressor(self.compression, buffered)
        except BaseException:
            if self._owned:  # nobody else will: the caller never got this object
                raw.close()
            raise

    @classmethod
    def after(cls, source: LogInput, start: LineEnd) -> OpenedLog | None:
        """The file read on from `start`, if its first `start.offset` bytes are the same
        (their XXH3-128 is `start.prefix_hash`); None when it was rewritten or truncated."""
        try:
            raw = open(source.path, "rb")  # noqa: SIM115 (closed below or by the OpenedLog)
        except OSError as exc:
            raise InputNotFoundError(f"cannot read {source.path}: {exc.strerror}") from exc
        hasher = xxhash.xxh3_128()
        buffer = bytearray(_CHUNK)
        view = memoryview(buffer)
        remaining = start.offset
        last_byte = 0
        try:
            while remaining:
                n = raw.readinto(view[: min(_CHUNK, remaining)])
                if not n:
                    break
                hasher.update(view[:n])
                remaining -= n
                last_byte = view[n - 1]
        except OSError:
            raw.close()
            raise
        if remaining or hasher.hexdigest() != start.prefix_hash:
            raw.close()
            return None
        return cls(source, _resumed=(raw, start, hasher, last_byte == ord("\r")))

    def line_end(self, lines: int) -> LineEnd:
        """The end of the last complete line read so far (of the stored bytes, so meaningful
        for plain text only), given its line number: the lines read that end with a line end
        (counted by the reader of `lines()`, so that no pass over the bytes counts them)."""
        return self._hashing.line_end(lines)

    def at_end(self) -> bool:
        """True when nothing follows the bytes read so far (the file has not grown)."""
        return os.fstat(self._raw.fileno()).st_size <= self._hashing.size

    def lines(self, *, hold_back_unterminated: bool = False) -> Iterator[bytes]:
        """The decompressed lines, each with its line end (LF, CRLF or CR, as TVM reads them);
        a line longer than `linesplit.MAX_LINE_BYTES` comes as an `OverlongLine`.

        `hold_back_unterminated`: leave out a last line without line end (a tuner mid-write);
        `line_end()` then still points before it, so the next import reads it once complete.
        """
        return split_lines(
            reader_keeping_data(self._stream.read1),
            hold_back_unterminated=hold_back_unterminated,
            skip_leading_lf=self._after_cr,
        )

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of the stored bytes (drains the input if not yet fully read)."""
        self._hashing.drain()
        return self._hashing.sha256.hexdigest()

    @property
    def size(self) -> int:
        """Bytes read from the stored file so far."""
        return self._hashing.size

    def close(self) -> None:
        """Close the file (never stdin)."""
        if self._owned:
            self._raw.close()

    def __enter__(self) -> OpenedLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _regular_file_size(raw: BinaryIO) -> int | None:
    """A regular file's size now: the bytes an import reads. A tuner appending meanwhile must
    not make a line read half before the end and half after it (two broken lines). None (read
    to the end): not a regular file, or one whose size says 0 (an empty file reads nothing
    either way; /proc's and /sys's files say 0 whatever they hold)."""
    try:
        info = os.fstat(raw.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return None  # not a file descriptor (tests pass streams)
    return info.st_size if stat.S_ISREG(info.st_mode) and info.st_size else None


def detect_compression(head: bytes) -> str | None:
    """A file's compression by its first bytes (its content, whatever its name): "gzip",
    "bzip2", "xz", or None for plain text."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def _decompressor(compression: str | None, stream: io.BufferedIOBase) -> io.BufferedIOBase:
    """The decompressed stream (each has `read1`, which the line splitter reads with)."""
    if compression == "gzip":
        return GzipMembers(fileobj=stream, mode="rb")
    if compression in ("bzip2", "xz"):  # every stream, strictly (see tunelog.compressed)
        return read_streams(compression, cast(BinaryIO, stream))
    return stream
