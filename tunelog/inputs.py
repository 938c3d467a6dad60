"""Finding and opening the logs to import: files, directories, stdin, compressed streams.

No SQLite here. Compression is detected from the content (magic bytes), not the file name,
and the SHA-256 and size are those of the bytes as stored (compressed if the file is).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from tunelog.exceptions import InputNotFoundError

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
            raise InputNotFoundError(f"{path} is not a regular file or directory")
        else:
            raise InputNotFoundError(f"{path} does not exist: check the path")
    return found


class HashingReader(io.RawIOBase):
    """Passes bytes through while counting them and feeding a SHA-256."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self.sha256 = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self.sha256.update(data)
        self.size += n
        return n

    def drain(self) -> None:
        """Read what is left (so the hash covers the whole file)."""
        while self.read(1 << 20):
            pass


class OpenedLog:
    """An opened log: iterate `lines()`; `sha256`/`size` are complete once lines are read."""

    def __init__(self, source: LogInput) -> None:
        self.source = source
        try:
            raw: BinaryIO = (
                sys.stdin.buffer if source.is_stdin else open(source.path, "rb")  # noqa: SIM115
            )
        except OSError as exc:
            raise InputNotFoundError(f"cannot read {source.path}: {exc.strerror}") from exc
        self._owned = not source.is_stdin
        self._raw = raw
        self._hashing = HashingReader(raw)
        buffered = io.BufferedReader(self._hashing, buffer_size=1 << 20)
        self.compression = _detect(buffered.peek(8)[:8])
        self._stream: BinaryIO = _decompressor(self.compression, buffered)

    def lines(self) -> Iterator[bytes]:
        """The decompressed lines, each with its line end."""
        return iter(self._stream)

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


def _detect(head: bytes) -> str | None:
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def _decompressor(compression: str | None, stream: Any) -> BinaryIO:
    if compression == "gzip":
        return cast(BinaryIO, gzip.GzipFile(fileobj=stream, mode="rb"))
    if compression == "bzip2":
        return cast(BinaryIO, bz2.BZ2File(stream, mode="rb"))
    if compression == "xz":
        return cast(BinaryIO, lzma.LZMAFile(stream, mode="rb"))
    return cast(BinaryIO, stream)
