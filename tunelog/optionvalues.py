"""What option and argument values may be: the one home of their checks.

The command line runs each check when it reads the value (a usage error, exit 2, naming what is
allowed); the Python API runs the same check and raises InvalidValueError. Numbers of seconds
and percentages must be finite (NaN compares false with everything: `--fail-on-regression nan`
would never fail); ids and widths are ASCII digits only (`int()` reads an Arabic-Indic one as
1 and refuses `²`, which `str.isdigit` accepts).
"""

from __future__ import annotations

import math
import os

from tunelog.exceptions import InvalidValueError

# Source ids are SQLite integers.
MAX_ID = (1 << 63) - 1
# The longest pause between two refreshes of `watch` (one day).
MAX_INTERVAL = 86_400.0


def percent(value: float, name: str) -> float:
    """A percentage: finite and at least 0."""
    if not (math.isfinite(value) and value >= 0):
        raise InvalidValueError(f"{name} must be a finite number of percent >= 0, not {value!r}")
    return value


def seconds(value: float, name: str, *, maximum: float = math.inf) -> float:
    """A number of seconds: finite, at least 0 and at most `maximum`."""
    if not (math.isfinite(value) and 0 <= value <= maximum):
        upper = f" and <= {maximum:g}" if math.isfinite(maximum) else ""
        raise InvalidValueError(
            f"{name} must be a finite number of seconds >= 0{upper}, not {value!r}"
        )
    return value


def interval(value: float, name: str = "interval") -> float:
    """Seconds between two refreshes of `watch`: 0 to MAX_INTERVAL."""
    return seconds(value, name, maximum=MAX_INTERVAL)


def top_k(value: int) -> int:
    """How many best distinct configs an export keeps per slot: a whole number, at least 1."""
    return at_least_one(value, "top_k")


def at_least_one(value: int, name: str) -> int:
    """A count the CLI takes with `min=1` (`--top-k`, `--refreshes`, `--need-trials`): a whole
    number, at least 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidValueError(f"{name} must be a whole number >= 1, not {value!r}")
    return value


def text(value: object, name: str) -> str:
    """A value the API takes as text: a `str` (a number or None given for it failed later
    with an AttributeError, or matched nothing)."""
    if not isinstance(value, str):
        raise InvalidValueError(f"{name} is {type(value).__name__} {value!r}: give a string")
    return value


def stored_text(value: object, name: str) -> str:
    """Text the database keeps (a --label): a `str` that says something (an empty label could
    never be chosen: `--label ''` is refused) and is UTF-8 text (a shell's bytes that are not
    came in as lone surrogates, which SQLite cannot store)."""
    not_empty(text(value, name), name)
    assert isinstance(value, str)
    if not is_utf8(value):
        from tunelog.escaping import shown

        raise InvalidValueError(f"{name} '{shown(value)}' is not UTF-8 text: give one that is")
    return value


def is_utf8(value: str) -> bool:
    """Whether `value` can be written as UTF-8 (no lone surrogate, as an undecodable byte of a
    file name or argument becomes)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def flag(value: object, name: str) -> bool:
    """A yes/no the API takes: a `bool` (the string "no" is true)."""
    if not isinstance(value, bool):
        raise InvalidValueError(f"{name} is {type(value).__name__} {value!r}: give True or False")
    return value


def file_path(value: object, name: str) -> str:
    """A file's path as text: a `str` or a path object (None or a number became a file named
    so), not empty (`open_store("")` was a throw-away database: SQLite's temporary one)."""
    if not isinstance(value, str | os.PathLike):
        raise InvalidValueError(f"{name} is {type(value).__name__} {value!r}: give a file path")
    path = os.fspath(value)
    if not isinstance(path, str):  # a bytes path object
        raise InvalidValueError(f"{name} is {type(value).__name__} {value!r}: give a file path")
    if not path:
        raise InvalidValueError(f"{name} is empty (an unset shell variable?): give a file path")
    return path


def output_path(value: str, name: str = "OUT") -> str:
    """Where an output goes: not an empty path (it named the working directory: "cannot
    write : Device or resource busy")."""
    if not value:
        raise InvalidValueError(f"{name} is empty (an unset shell variable?): give a path")
    return value


def path_list(value: object, name: str) -> list[str]:
    """Paths as text, from a list of `str` or path objects (a `Path` among them failed
    half-way through an import); one `str` is refused (a sequence of one-letter paths)."""
    paths(value, name)
    if not isinstance(value, list | tuple):
        raise InvalidValueError(f"{name} is {type(value).__name__} {value!r}: give a list of paths")
    out: list[str] = []
    for item in value:
        path = os.fspath(item) if isinstance(item, os.PathLike) else item
        if not isinstance(path, str):
            raise InvalidValueError(
                f"{name} holds {type(item).__name__} {item!r}: give paths (str or Path)"
            )
        out.append(path)
    return out


def patterns(value: object, name: str) -> list[str]:
    """Globs (`include`, `exclude`): a list of `str`; one `str` is refused, as it read as one
    pattern per character (`exclude="t4_*.log"` left out every file)."""
    if isinstance(value, str | bytes):
        raise InvalidValueError(f"{name} is a list of globs: give [{value!r}], not {value!r}")
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InvalidValueError(f"{name} is {value!r}: give a list of glob strings")
    return list(value)


def not_empty(value: str, name: str) -> str:
    """A filter's text: something to match (spaces alone match no target, key or template)."""
    if not text(value, name).strip():
        raise InvalidValueError(f"{name} is empty: give a value, or leave the option out")
    return value


def paths(value: object, name: str) -> None:
    """A list of paths, not one path: a `str` is a sequence of one-letter paths."""
    if isinstance(value, str | bytes):
        raise InvalidValueError(f"{name} is a list of paths: give [{value!r}], not {value!r}")


def log_paths(paths: list[str]) -> None:
    """The logs an import reads: no empty path (an unset shell variable, `import "$LOG"`,
    named the working directory, whose every log was imported) and standard input (`-`) at
    most once (a second `-` would read nothing: an empty source)."""
    if "" in paths:
        raise InvalidValueError(
            "an empty path names no file (an unset shell variable?): give a log or a "
            "directory (. for this one)"
        )
    if paths.count("-") > 1:
        raise InvalidValueError("- (standard input) is given twice: it can be read once")


def watched_paths(paths: list[str]) -> None:
    """What `watch` follows: files and directories, not standard input (which it cannot read
    again at the next refresh)."""
    log_paths(paths)
    if "-" in paths:
        raise InvalidValueError("watch follows files; import stdin with `tunelog import -`")


def is_ascii_number(text: str) -> bool:
    """True for a non-empty run of ASCII digits."""
    return text.isascii() and text.isdigit()


def source_ref(ref: str, name: str = "--source") -> int | None:
    """`source_id`, of a reference that says something (`--source ''` names no file)."""
    if not name.startswith("-") and not text(ref, name).strip():  # an argument, not an option
        raise InvalidValueError(
            f"{name} is empty: give a source's id, label or path (`tunelog sources` lists them)"
        )
    return source_id(not_empty(ref, name))


def source_id(ref: str) -> int | None:
    """The source id `ref` names (`3` or `#3`), or None when it names none (a label or path).

    Raises InvalidValueError for digits that can be no id: other than ASCII (`²`, Arabic-Indic)
    or past SQLite's integers.
    """
    number = ref.removeprefix("#")
    if not number.isdigit():  # any Unicode digits: those are refused below, not taken as paths
        return None
    # The length first: int() of thousands of digits is refused (and slow) in itself.
    if not number.isascii() or len(number) > len(str(MAX_ID)) or int(number) > MAX_ID:
        raise InvalidValueError(
            f"a source id is ASCII digits from 0 to {MAX_ID}, not {ref!r}: "
            "see `tunelog sources` for the ids"
        )
    return int(number)


def columns(text: str) -> int | None:
    """The table width `$COLUMNS` asks for: None when unset, empty or 0 (no width given)."""
    if not text:
        return None
    if not is_ascii_number(text):
        raise InvalidValueError(
            f"COLUMNS must be a whole number of columns in ASCII digits, or unset; not {text!r}"
        )
    return int(text) or None


def target_string(value: str) -> str:
    """A target string to answer for: a kind TVM knows, every option with a value."""
    from tunelog.targets import query_target_problem

    problem = query_target_problem(value)
    if problem is not None:
        raise InvalidValueError(
            f'{value!r}: {problem}; give a TVM target string, e.g. "cuda -model=titanx"'
        )
    return value
