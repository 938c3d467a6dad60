"""Domain exceptions. Each names the condition; its message says what to do next."""

from __future__ import annotations

from typing import Any


class TunelogError(Exception):
    """Base class: every error tunelog raises for a user's mistake or a bad environment."""


class TargetParseError(TunelogError, ValueError):
    """A target string could not be parsed."""


class InputNotFoundError(TunelogError):
    """A path given to import does not exist or cannot be read."""


class NotATunelogDatabaseError(TunelogError):
    """The database path holds a file that is not a tunelog database."""


class DatabaseNotFoundError(TunelogError):
    """A command that reads the database was pointed at a path where there is none."""


class NewerSchemaError(TunelogError):
    """The database was written by a newer tunelog than this one."""


class DatabaseUnavailableError(TunelogError):
    """The database cannot be opened or written (permissions, full disk, locked too long)."""


class DatabaseAccessError(DatabaseUnavailableError):
    """SQLite failed while a command read or wrote the database (a disk error, a damaged file)."""

    @classmethod
    def of(cls, path: str, error: Exception) -> DatabaseAccessError:
        """The error for SQLite's `error` on the database at `path`."""
        text = str(error)
        if "table is locked" in text:  # this connection's own statement still being read
            return cls(
                f"database {path}: {text}: a query of this store is still being read (an "
                "iterator such as each_best, each_layer or each_error not finished): finish "
                "or close it first"
            )
        if "closed database" in text:
            return cls(f"database {path}: the store is closed: open it again (open_store)")
        return cls(f"database {path}: {text}; check the disk and the file")


class DatabaseBusyError(DatabaseUnavailableError):
    """Another program held the database's write lock for longer than tunelog waits.

    `done`: what an import of several files had committed before (`import_paths` fills it).
    """

    done: list[Any]

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.done = []


class DatabaseReadOnlyError(DatabaseUnavailableError):
    """SQLite refused to write: the database, its -wal/-shm files or its directory is
    read-only (`store.readonly.write_refusal` says which)."""


class StreamStillOpenError(DatabaseUnavailableError):
    """A write on a store one of whose streams (an iterator of rows) is still being read."""


class DiskFullError(DatabaseUnavailableError):
    """The database could not grow: the disk (or SQLite's size limit) is full."""


class OutputExistsError(TunelogError):
    """An export target already exists and --force was not given."""


class StrictImportError(TunelogError):
    """--strict import found rejected lines; the file was rolled back."""


class UnknownErrorCodeError(TunelogError, LookupError):
    """An error code name or number that AutoTVM does not define."""


class NothingToExportError(TunelogError):
    """An export would write no record (no valid measurement matches the filters)."""


class UnknownLayerError(TunelogError, LookupError):
    """No layer matches the name given (`curve`, `knobs`)."""


class AmbiguousLayerError(TunelogError, LookupError):
    """Several layers match the name given; the message lists them, one per line (`lines`)."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class OutputIsDirectoryError(TunelogError):
    """An export was asked to write onto a directory."""


class OutputNotWritableError(TunelogError):
    """An export's output file cannot be written (permissions, missing directory, full disk)."""


class SourceNotFoundError(TunelogError):
    """A source named by id or path is not in the database."""


class AmbiguousSourceError(TunelogError, LookupError):
    """A path names several sources where one is asked for (a file imported again in full)."""


class MissingExtraError(TunelogError):
    """A command needs an optional dependency that is not installed (e.g. plotly for report)."""


class MixedFormatsError(TunelogError):
    """An export would mix AutoTVM and auto_scheduler records, which TVM loads separately."""


class UnknownSourceError(TunelogError, LookupError):
    """A --source, --label, `sources remove`, or `diff label:/source:` names no imported source."""


class SameDatabaseError(TunelogError):
    """A database was given to merge into itself."""


class NotATaskListError(TunelogError, ValueError):
    """`diagnose` input starts like JSON but is not a `[[task_name, *args], ...]` task list."""


class TargetRequiredError(TunelogError):
    """A task list names workloads without a target: --target must say which one compiles."""


class NotARecordError(TunelogError, ValueError):
    """`explain` was given text that is not an AutoTVM record line."""


class MixedTvmVersionsError(TunelogError):
    """A MetaSchedule export would mix databases of TVM releases no one TVM loads together."""


class InvalidValueError(TunelogError, ValueError):
    """An option or argument value outside what it allows (NaN, a non-ASCII digit, too large);
    the command line reports it as a usage error (exit 2)."""


class OutputIsDatabaseError(TunelogError):
    """An output path that is the open database or one of its side files (-wal, -shm)."""


class DatabaseDamagedError(TunelogError, LookupError):
    """A stored line the database's tables point at cannot be read: its block is missing or
    corrupt (the file was edited or damaged outside tunelog)."""


class NothingMatchesError(TunelogError):
    """A check (`untuned --check`) found no layer to check: its filters match nothing."""


class EmptyRunError(TunelogError):
    """A side of `diff` given as logs holds no tuning record (an empty file, comments only, or
    every line rejected): comparing with nothing is a wrong path, not a finding."""


class NotBuildOutputError(TunelogError):
    """`diagnose` was given something other than a build's output or a task list: a tuning
    log, a database (what it reads is the text relay.build printed)."""


class NotAGraphLogError(TunelogError):
    """`network` was given a file that holds no AutoTVM record (a database, a text, an empty
    file): no graph tuner's output."""
