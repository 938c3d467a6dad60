"""Which files of a directory are tuning logs: the rule `tunelog import DIR` follows. No SQLite.

Files named on the command line are imported as given, except an SQLite database (a tunelog
database is merged, not imported: `unreadable`, with that advice). Inside a directory
(walked recursively, in sorted order) a file is skipped (and named in `skipped_files`) when:

- it lies in a dot-directory (`.git`, `.venv`, ...) or is itself a dot-file (`.best.log.tmp`);
- `--include` globs are given and none matches, or an `--exclude` glob matches (a glob is
  matched against the path relative to the directory given and against the file name);
- it is an SQLite database (its first 16 bytes are `SQLite format 3\\0`: tunelog's own file);
- its first bytes do not look like a tuning log (`sniff`);
- it is not a regular file (a FIFO, socket or device).

A dangling symlink and a directory that cannot be listed are not skipped silently: each is
listed in `Discovery.unreadable` with its reason, as a named path that does not exist. A
symlink to a directory is walked as the directory (a run directory linked into a tree of
runs), unless that directory was walked already (a link to it seen before, or a loop): it is
then counted, and said, as a directory not entered again. A directory's real subdirectories
are walked before its links, so a run a link also reaches keeps its own path.

`sniff` reads the first 64 KiB (decompressed first when the file is gzip, bzip2 or xz): after
an optional UTF-8 byte order mark, skipping blank lines and `#` comment lines, the first line
must start with `{` (every AutoTVM record is a JSON object), and hold no NUL byte, nor any line
before it.
A file that holds only blank and comment lines in that block is not a log either.

A MetaSchedule database is recognised by content, whatever its file names (JSONDatabase takes
any): a records file's first line is `[<workload index>, [...`, a workload file's is
`["<hash>", ...`. A records file is always taken (without a workload file beside it the import
says so once); a workload file is read with the records file beside it (`metaschedule_files`).
"""

from __future__ import annotations

import errno
import fnmatch
import gzip
import io
import lzma
import os
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tunelog.compressed import read_streams
from tunelog.inputs import STDIN, LogInput, detect_compression
from tunelog.msfiles import (
    METASCHEDULE_RECORDS,
    METASCHEDULE_WORKLOADS,
    metaschedule_files,
    metaschedule_kind,
)

SNIFF_BYTES = 1 << 16
SQLITE_HEADER = b"SQLite format 3\x00"
_UTF8_BOM = b"\xef\xbb\xbf"

# Reasons a file found in a directory is not imported, in the order the summary names them.
NOT_A_LOG = "not a tuning log"
SQLITE = "SQLite database"
HIDDEN = "dot-file"
FILTERED = "left out by --include/--exclude"
NOT_REGULAR = "not a regular file"
REASONS = (NOT_A_LOG, SQLITE, HIDDEN, FILTERED, NOT_REGULAR)
SQLITE_NAMED = (
    "is an SQLite database, not a log: to add a tunelog database's records, "
    "use `tunelog merge {path}`"
)


@dataclass
class Discovery:
    """The logs to import, and what the directory walk left out (reason -> files)."""

    inputs: list[LogInput] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    dot_directories: int = 0
    walked_again: int = 0  # directories reached again through a symlink (a loop too): not entered
    # (path, reason) of each entry that cannot be read: a path that does not exist, a dangling
    # symlink, an unreadable directory, a database named as a log. The rest is imported; each
    # is reported by name.
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    # (path, reason) of each file left out of a directory, in walk order (`skipped` counts them).
    skipped_files: list[tuple[str, str]] = field(default_factory=list)

    def skip(self, path: str, reason: str) -> None:
        """Leave a file of a directory out, for `reason` (one of REASONS)."""
        self.skipped[reason] += 1
        self.skipped_files.append((path, reason))

    def summary(self) -> str | None:
        """One line saying how many files were skipped and why; None when none was."""
        parts = [f"{r}: {self.skipped[r]}" for r in REASONS if self.skipped[r]]
        files = sum(self.skipped.values())
        text = f"skipped {files} file(s) in directories ({', '.join(parts)})" if parts else ""
        if self.dot_directories:
            text += "; " if text else ""
            text += f"did not enter {self.dot_directories} dot-director"
            text += "y" if self.dot_directories == 1 else "ies"
        if self.walked_again:
            text += "; " if text else ""
            text += (
                f"did not enter {self.walked_again} director"
                + ("y" if self.walked_again == 1 else "ies")
                + " reached again through a symlink"
            )
        return text or None


def discover(
    paths: Sequence[str],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Discovery:
    """Files as given, directories expanded recursively by the module's rule.

    A path that cannot be read (missing, a dangling symlink, neither file nor directory) and
    an unreadable directory met in the walk go to `unreadable` with the reason; never raises.
    """
    found = Discovery()
    for path in paths:
        if path == STDIN:
            found.inputs.append(LogInput(STDIN))
            continue
        p = Path(path)
        if p.is_dir():
            _walk(p, include, exclude, found)
        elif p.is_file():
            if sniff(p) == SQLITE:  # never a log: its hundreds of NUL-byte "lines" say nothing
                found.unreadable.append((path, SQLITE_NAMED.format(path=path)))
            else:
                found.inputs.append(LogInput(path))
        else:
            found.unreadable.append((path, not_readable_reason(p)))
    return found


def not_readable_reason(path: Path) -> str:
    """Why a path that is neither a file nor a directory cannot be imported (read after the
    path: `x.log does not exist: check the path`)."""
    if path.is_symlink() and not path.exists():
        try:
            os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "is a symlink loop (its links lead back to themselves): fix or remove it"
        return "is a dangling symlink (its target does not exist)"
    if path.exists():
        # A pipe or device (a FIFO a tuner writes, /dev/stdin): read it as standard input.
        return f"is not a regular file or directory: to read it, `tunelog import - < {path}`"
    return "does not exist: check the path"


def unreadable_reason(exc: BaseException) -> str:
    """Why an entry could not be read, from the error opening or reading it (read after the
    path, as `not_readable_reason`)."""
    cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
    if isinstance(cause, FileNotFoundError):
        return "vanished before it could be read"
    if isinstance(cause, PermissionError):
        return f"cannot be read ({cause.strerror or cause}; check its permissions)"
    if isinstance(cause, OSError):
        return f"cannot be read ({cause.strerror or cause})"
    return f"cannot be read ({exc})"


def _walk(top: Path, include: Sequence[str], exclude: Sequence[str], found: Discovery) -> None:
    def unreadable_directory(exc: OSError) -> None:
        found.unreadable.append(
            (str(exc.filename or top), f"is a directory that cannot be read ({exc.strerror})")
        )

    walked: set[tuple[int, int]] = set()  # (device, inode) of each directory walked
    for root, dirs, files in os.walk(top, onerror=unreadable_directory, followlinks=True):
        try:
            info = os.stat(root)
        except OSError:  # gone since it was listed: os.walk reads nothing of it either
            continue
        if (info.st_dev, info.st_ino) in walked:  # a second link to it, or a loop
            found.walked_again += 1
            dirs[:] = []
            continue
        walked.add((info.st_dev, info.st_ino))
        hidden = [d for d in dirs if d.startswith(".")]
        found.dot_directories += len(hidden)
        shown = sorted(d for d in dirs if not d.startswith("."))
        # Real directories first: one a link also reaches keeps its own path (`latest ->
        # run-7` sorts before it), and the link is the one not entered again.
        linked = [d for d in shown if os.path.islink(os.path.join(root, d))]
        dirs[:] = [d for d in shown if d not in linked] + linked
        for name in sorted(files):
            child = Path(root) / name
            if not child.is_file():
                if name.startswith("."):
                    found.skip(str(child), HIDDEN)
                elif child.is_symlink() and not child.exists():
                    found.unreadable.append((str(child), not_readable_reason(child)))
                else:
                    found.skip(str(child), NOT_REGULAR)  # a FIFO, socket or device
                continue
            reason = _skip_reason(child, child.relative_to(top).as_posix(), include, exclude)
            if reason is None:
                found.inputs.append(LogInput(str(child)))
            else:
                found.skip(str(child), reason)


def _skip_reason(
    path: Path, relative: str, include: Sequence[str], exclude: Sequence[str]
) -> str | None:
    if path.name.startswith("."):
        return HIDDEN
    if include and not any(_glob_matches(relative, g) for g in include):
        return FILTERED
    if any(_glob_matches(relative, g) for g in exclude):
        return FILTERED
    return sniff(path)


def _glob_matches(relative: str, glob: str) -> bool:
    return fnmatch.fnmatchcase(relative, glob) or fnmatch.fnmatchcase(
        relative.rsplit("/", 1)[-1], glob
    )


def sniff(path: Path) -> str | None:
    """None when the file's first bytes look like a tuning log, else the reason it is not."""
    kind = metaschedule_kind(path)
    if kind == METASCHEDULE_RECORDS:
        return None  # without a workload file beside it, the import says so
    if kind == METASCHEDULE_WORKLOADS:
        return None if metaschedule_files(path) is not None else NOT_A_LOG
    try:
        with open(path, "rb") as file:
            head = file.read(SNIFF_BYTES)
    except OSError:
        return None  # the import proper reports an unreadable file, with its path
    if head.startswith(SQLITE_HEADER):
        return SQLITE
    return None if looks_like_log(_decompressed_head(head)) else NOT_A_LOG


def _decompressed_head(head: bytes) -> bytes:
    """The first decompressed bytes of a compressed block (what it holds, as far as it goes):
    of every stream it holds, as the import reads them (a first stream of comments alone, a
    header, was all a single decompressor saw)."""
    kind = detect_compression(head)
    if kind is None:
        return head
    stream: io.BufferedIOBase = (
        gzip.GzipFile(fileobj=io.BytesIO(head), mode="rb")
        if kind == "gzip"
        else read_streams(kind, io.BytesIO(head))
    )
    out = bytearray()
    try:
        while len(out) < SNIFF_BYTES and (chunk := stream.read1(SNIFF_BYTES - len(out))):
            out += chunk
    except (OSError, EOFError, lzma.LZMAError, zlib.error):
        pass  # the block ends inside a stream, or is no stream: what came before it
    return bytes(out)


def looks_like_log(head: bytes) -> bool:
    """True when the first non-blank, non-comment line starts with `{`, and no NUL byte comes
    before its end (a binary file). NUL bytes after it are the import's to reject line by line:
    a tuner that crashed may leave a block of them in a log of good records."""
    if head.startswith(_UTF8_BOM):
        head = head[len(_UTF8_BOM) :]
    for line in head.splitlines():
        if b"\x00" in line:
            return False
        text = line.strip()
        if not text or text.startswith(b"#"):
            continue
        return text.startswith(b"{")
    return False


def looks_like(path: Path) -> str:
    """What a file that holds no tuning record looks like, for the error naming it."""
    try:
        with open(path, "rb") as file:
            raw = file.read(SNIFF_BYTES)
    except OSError:
        return "a file that cannot be read"
    if raw.startswith(SQLITE_HEADER):
        return "an SQLite database"
    head = _decompressed_head(raw)
    if b"\x00" in head:
        return "binary data"
    text = head.removeprefix(_UTF8_BOM).lstrip()
    if path.suffix.lower() in (".md", ".markdown") or re.match(rb"#{1,6} \S", text):
        return "Markdown text"
    if text[:1] == b"<":
        return "HTML or XML"
    if text[:1] in (b"{", b"["):
        return "JSON, but not AutoTVM, auto_scheduler or MetaSchedule records"
    if not text:
        return "an empty file"
    return "text, not tuning records"
