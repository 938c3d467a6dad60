"""Writing cleaned logs: atomic file output and target rewriting. No SQLite here."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import BinaryIO

from tunelog.exceptions import (
    OutputExistsError,
    OutputIsDatabaseError,
    OutputIsDirectoryError,
    OutputNotWritableError,
)
from tunelog.interrupts import interrupts_deferred
from tunelog.optionvalues import output_path
from tunelog.targets import parse_target

STDOUT = "-"


def write_lines_atomically(
    out: str,
    lines: Iterable[bytes],
    *,
    force: bool = False,
    protected: Collection[str] = (),
    kind: str = "log",
) -> int:
    """Write `lines` (each without its line end) to `out`, or stdout for `-`; return the count.

    `kind`: what `out` is ("log", "report", "MetaSchedule database file"), for the error
    refusing an existing file.

    A file is written to a temporary file in the same directory and renamed over `out`, so a
    crash never leaves a half-written log. An existing `out` is refused unless `force`. A
    symlink is followed: its target is replaced (atomically), the link stays. A character
    device or FIFO (`/dev/null`, `/dev/stdout`, a named pipe) is written through, never
    replaced; any other special file is refused. `protected` (the open database and its
    `-wal`, `-shm` and `-journal` files) is refused even with `force`, by real path or inode.
    """
    if out == STDOUT:
        return _write_to(sys.stdout.buffer, lines)
    (count,) = write_files_atomically([(out, lines)], force=force, protected=protected, kind=kind)
    return count


def write_files_atomically(
    files: Sequence[tuple[str, Iterable[bytes]]],
    *,
    force: bool = False,
    protected: Collection[str] = (),
    kind: str = "log",
) -> list[int]:
    """Write several files as one output (a MetaSchedule database's two files), each as
    `write_lines_atomically` writes one; return each file's count of lines.

    Every destination is checked before a byte is written (two that are one file are
    refused), and the files are renamed into place only once all of them are written: an output
    refused, or failing while it is written, leaves none of them changed (nor a new file beside
    an old one it does not belong with). Only a rename failing after another succeeded (the
    disk failing between two renames in one directory) leaves the first one replaced.
    """
    places = [
        _checked_destination(out, force=force, protected=protected, kind=kind) for out, _ in files
    ]
    real = [os.path.realpath(place) for place in places if place is not None]
    if len(set(real)) < len(real):
        raise OutputNotWritableError(
            f"cannot write {', '.join(out for out, _ in files)}: two of them are one file "
            "(a symlink?); remove the link or choose another path"
        )
    counts: list[int] = []
    written: list[tuple[str, str, Path]] = []  # (out, temporary file, path to replace)
    try:
        for (out, lines), path in zip(files, places, strict=True):
            if path is None:
                counts.append(_write_through(out, lines))
            else:
                tmp_name, count = _write_temporary(out, path, lines)
                written.append((out, tmp_name, path))
                counts.append(count)
        # All renamed or none: an interrupt waits for the last (see tunelog.interrupts).
        with interrupts_deferred():
            _put_in_place(written, force=force, kind=kind)
    finally:
        for _, tmp_name, _ in written:  # not renamed: a failure, or an interrupt
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
    return counts


def _put_in_place(written: list[tuple[str, str, Path]], *, force: bool, kind: str) -> None:
    """Rename each (out, temporary file, path to replace) into place, taking it off `written`.

    Without `force` a file is linked in, never renamed over: a file that appeared at `out`
    since it was checked (the user's, written meanwhile) was replaced silently. Then the
    files linked in before are removed again: none of the output was placed.
    """
    linked: list[Path] = []
    try:
        while written:
            out, tmp_name, path = written[0]
            if force or not _linked(tmp_name, path, out, kind):
                try:
                    os.replace(tmp_name, path)
                except OSError as exc:
                    raise _not_writable(out, exc) from None
            else:
                linked.append(path)
                os.unlink(tmp_name)
            written.pop(0)
    except BaseException:
        for path in linked:
            with contextlib.suppress(OSError):
                path.unlink()
        raise


# A file system that has no hard links says one of these: the check made before writing stands.
_NO_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK}


def _linked(tmp_name: str, path: Path, out: str, kind: str) -> bool:
    """Link the temporary file in at `path`, which must not exist: True when done, False on a
    file system without hard links (the caller renames, as before); OutputExistsError when a
    file appeared there."""
    try:
        os.link(tmp_name, path)
    except FileExistsError:
        raise _exists(out, kind) from None
    except OSError as exc:
        if exc.errno in _NO_LINKS:
            if os.path.lexists(path):
                raise _exists(out, kind) from None
            return False
        raise _not_writable(out, exc) from None
    return True


def _exists(out: str, kind: str) -> OutputExistsError:
    """The refusal of an output that exists, without --force."""
    return OutputExistsError(
        f"{out} already exists; tunelog never merges into an existing {kind}: "
        "choose another path or pass --force to replace it"
        if kind == "log"
        else f"{out} already exists (an earlier {kind}?): choose another path or pass "
        "--force to replace it"
    )


def _checked_destination(
    out: str, *, force: bool, protected: Collection[str], kind: str
) -> Path | None:
    """Where `out` is written: the path a temporary file replaces, or None for a character
    device or pipe (written through); raises when `out` may not be written."""
    output_path(out, f"the {kind}'s path")
    _refuse_protected(out, protected)
    try:
        info = os.stat(out)  # through symlinks: what a write would reach
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise _not_writable(out, exc) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputIsDirectoryError(
            f"{out} is a directory: give the path of the log file to write, "
            f"e.g. {Path(out) / 'best.log'}"
            if kind == "log"
            else f"{out} is a directory, where the {kind} goes: move it away, or choose "
            "another path"
        )
    if info is not None and (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
        return None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise OutputNotWritableError(
            f"cannot write {out}: it is a special file (not a regular file, character device "
            "or pipe); choose another path"
        )
    if info is not None and not force:
        raise _exists(out, kind)
    # A symlink's target is what gets replaced, so the link keeps pointing at the new file.
    return Path(os.path.realpath(out)) if os.path.islink(out) else Path(out)


def _write_to(stream: BinaryIO, lines: Iterable[bytes]) -> int:
    count = 0
    for line in lines:
        stream.write(line + b"\n")
        count += 1
    stream.flush()
    return count


def _write_through(out: str, lines: Iterable[bytes]) -> int:
    """Write into a character device or pipe as it is (a rename would replace the node)."""
    try:
        with open(out, "wb") as stream:
            return _write_to(stream, lines)
    except OSError as exc:
        raise _not_writable(out, exc) from None


def _refuse_protected(out: str, protected: Collection[str]) -> None:
    """Raise OutputIsDatabaseError when `out` is one of the `protected` files: the same real
    path (symlinks resolved) or the same inode (a hard link)."""
    if not protected:
        return
    real = os.path.realpath(out)
    try:
        info = os.stat(out)
        inode: tuple[int, int] | None = (info.st_dev, info.st_ino)
    except OSError:
        inode = None
    for path in protected:
        same = os.path.realpath(path) == real
        if not same and inode is not None:
            with contextlib.suppress(OSError):
                other = os.stat(path)
                same = (other.st_dev, other.st_ino) == inode
        if same:
            raise OutputIsDatabaseError(
                f"{out} is the database being read ({path}) or one of its files: writing it "
                "would destroy the database; choose another path"
            )


def _write_temporary(out: str, path: Path, lines: Iterable[bytes]) -> tuple[str, int]:
    """Write `lines` to a new temporary file beside `path`, with the mode `path` will have:
    (its name, the count of lines). It is removed if the writing fails."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp_name = _new_private_file(directory, f".{path.name}.", ".tmp")
    except OSError as exc:
        raise _not_writable(out, exc) from None
    count = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for line in lines:
                handle.write(line + b"\n")
                count += 1
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private (0600); give it the mode a plain open() would, or
        # the mode of the file it replaces.
        os.chmod(tmp_name, _mode_for(path))
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            # The temporary file is ours, not the user's: the message names `out` only.
            raise _not_writable(out, exc) from None
        raise
    return tmp_name, count


# The flags tempfile.mkstemp opens with; the module itself (and the `random` it imports) costs
# an export a few milliseconds of start-up.
_CREATE_FLAGS = (
    os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


def _new_private_file(directory: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """Create a new file readable only by its owner under a name nobody else holds, as
    tempfile.mkstemp does: (its descriptor, its path)."""
    for _ in range(100):
        name = os.path.join(directory, prefix + os.urandom(6).hex() + suffix)
        try:
            return os.open(name, _CREATE_FLAGS, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")


def _not_writable(out: str, exc: OSError) -> OutputNotWritableError:
    reason = exc.strerror or str(exc)
    return OutputNotWritableError(
        f"cannot write {out}: {reason}; check that its directory exists, is writable and has "
        "free space, or choose another path"
    )


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def rewrite_target(raw: bytes, target: str, *, last: bool = False) -> bytes:
    """The line with its target string replaced by the form modern AutoTVM accepts.

    Only the JSON string of the target changes (its first occurrence, or with `last` its last:
    an auto_scheduler line's target host follows its target, and may be the same string);
    every other byte is kept.
    """
    fixed = parse_target(target).sanitized()
    if fixed == target:
        return raw
    import orjson  # only here: an export without rewritten targets never needs it

    old = orjson.dumps(target)
    new = orjson.dumps(fixed)
    if not last:
        return raw.replace(old, new, 1)
    at = raw.rfind(old)
    return raw if at < 0 else raw[:at] + new + raw[at + len(old) :]


def ansor_target_host(raw: bytes) -> str:
    """An auto_scheduler line's target host (`i[0][3]`; "" when it has none)."""
    import orjson

    try:
        task = orjson.loads(raw)["i"][0]
    except (orjson.JSONDecodeError, LookupError, TypeError):
        return ""
    host = task[3] if isinstance(task, list) and len(task) > 3 else ""
    return host if isinstance(host, str) else ""
