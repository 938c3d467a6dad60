"""Many machines and runs: merging databases, comparing two runs layer by layer."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tunelog.api.importing import import_paths, supersede_unrepaired
from tunelog.api.listing import each_layer
from tunelog.exceptions import (
    EmptyRunError,
    InputNotFoundError,
    InvalidValueError,
    UnknownSourceError,
)
from tunelog.store import Store
from tunelog.store.readonly import SIDE_SUFFIXES

if TYPE_CHECKING:
    from tunelog.importreport import FileReport
    from tunelog.layers import Layer
    from tunelog.results import (
        DiffReport,
    )
    from tunelog.store.merging import MergeReport


def merge(
    store: Store | str | os.PathLike[str],
    databases: Sequence[str | os.PathLike[str]],
    *,
    only_sources: Collection[int] | None = None,
) -> list[MergeReport]:
    """Merge other tunelog databases into `store`, all in one transaction (see store.merging).

    Merging again adds nothing. The slots afterwards are those of importing the store's files,
    then each database's files in its import order. An older database is read from a migrated
    temporary copy; a newer one is refused (NewerSchemaError). `store` may be a database path:
    it is created when missing, and removed again when the merge fails (see `merge_target`).
    """
    from tunelog import optionvalues

    others = optionvalues.path_list(databases, "databases")
    if not others:  # as `tunelog merge` with none: a usage error, not an empty database
        raise InvalidValueError("databases is empty: give the databases to merge")
    if not isinstance(store, Store):
        with merge_target(optionvalues.file_path(store, "store")) as opened:
            return merge(opened, others, only_sources=only_sources)
    from tunelog.store.merging import merge_databases

    with store.errors_said():  # also for a store not opened with `with`
        reports = merge_databases(store, others, only_sources=only_sources)
    for report in reports:
        for merged in report.sources:
            # Its records were read with --repair: the same bytes rejected without it go, as
            # `import --repair` of them replaces them.
            if merged.repair and merged.new and merged.sha256:
                merged.superseded = supersede_unrepaired(store, merged.sha256)
    return reports


@contextmanager
def merge_target(path: str) -> Iterator[Store]:
    """The database at `path` to merge into, created when missing.

    When the block fails (an error, Ctrl-C), a database created here is removed with its -wal
    and -shm files: a failed merge leaves no new, empty database behind. SQLite's errors come
    out as DatabaseAccessError (see `Store`).
    """
    created = path != ":memory:" and not os.path.exists(path)
    try:
        with Store(path, create=True) as store:
            yield store
    except BaseException:
        if created:
            for suffix in ("", *SIDE_SUFFIXES):
                Path(path + suffix).unlink(missing_ok=True)
        raise


LABEL_PREFIX = "label:"


SOURCE_PREFIX = "source:"


def diff(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    db: str | os.PathLike[str] | None = None,
    threshold_pct: float = 5.0,
) -> DiffReport:
    """Compare run A with run B, layer by layer.

    Each side is a tunelog database file, a log file or directory (imported into a temporary
    database), `label:NAME` (the sources of `db` imported with that label) or `source:ID`
    (one source of `db`, by its id in `tunelog sources`).

    Raises EmptyRunError for a side that holds no record (an empty or non-log file, an empty
    directory or label), InvalidValueError when both sides are standard input (`-`).
    """
    from tunelog.collecting import young_collected_less
    from tunelog.diffing import diff_layers, run_layers
    from tunelog.optionvalues import file_path, percent
    from tunelog.results import DiffReport
    from tunelog.rules.sourcenames import STDIN

    a = file_path(a, "a")
    b = file_path(b, "b")
    if db is not None:
        db = file_path(db, "db")
    if a == b == STDIN:
        raise InvalidValueError(
            "A and B are both standard input, which can be read only once: give a file, "
            "directory or database for one of them"
        )
    report = DiffReport(a, b, percent(threshold_pct, "threshold_pct"), [])
    with (
        _run_store(a, db, "A", report.notes) as left,
        _run_store(b, db, "B", report.notes) as right,
        # B's layers and every result are held while A's layers are built: fewer full
        # collections walking them (see tunelog.collecting).
        young_collected_less(),
    ):
        # B's layers kept only as what the diff compares, then A's read one at a time (memory).
        foreign = {"A": 0, "B": 0}  # layers answered by another machine's record, per run
        in_b = run_layers(_counting_foreign(each_layer(right, None), foreign, "B"))
        report.layers = diff_layers(
            _counting_foreign(each_layer(left, None), foreign, "A"), in_b, threshold_pct
        )
    for side, count in foreign.items():
        if count:  # its latency is another machine's: as `workloads` warns of it
            report.notes.append(
                f"{side}: {count} layer(s) answered by a record measured on another machine "
                f"than their target's (their latency is that machine's): `tunelog workloads` "
                f"on a database of {side}'s files lists them under warnings"
            )
    return report


def _counting_foreign(
    layers: Iterable[Layer], counts: dict[str, int], side: str
) -> Iterator[Layer]:
    """`layers`, counting into `counts[side]` those with a machine warning (`Layer.warnings`)."""
    for layer in layers:
        if layer.warnings:
            counts[side] += 1
        yield layer


@contextmanager
def _run_store(spec: str, db: str | None, side: str, notes: list[str]) -> Iterator[Store]:
    """The database of one side of a diff (temporary, in memory, unless a database file)."""
    if spec.startswith((LABEL_PREFIX, SOURCE_PREFIX)):
        ids = _selected_sources(spec, db)
        with Store(":memory:") as temp:
            (merged,) = merge(temp, [db or ""], only_sources=ids)
            if not merged.new:  # as diff of a file holding those lines: nothing to compare
                raise EmptyRunError(
                    f"{side} ({spec}) holds no tuning record (its files held none): nothing "
                    "to compare; see `tunelog sources`"
                )
            yield temp
        return
    if _is_sqlite_file(spec):
        from tunelog.store.otherdatabase import current_schema_path

        # The user's database, only read (never migrated, checkpointed or switched to WAL):
        # one of an older schema is compared from a migrated copy (migrating it in place
        # would lock out the tunelog that wrote it).
        with (
            current_schema_path(spec, "diff") as (path, _),
            Store(path, create=False, read_only=True) as store,
        ):
            yield store
        return
    with Store(":memory:") as temp:
        reports = import_paths(temp, [spec])
        for report in reports:
            if report.unreadable and report.path == spec:
                raise InputNotFoundError(f"{spec} {report.unreadable}")
            if report.unreadable:
                notes.append(f"{side}: {report.path} {report.unreadable}: skipped")
            if report.rejected:
                notes.append(
                    f"{side}: {report.path}: {report.rejected} line(s) rejected "
                    "(`tunelog import` it to see why)"
                )
        if not any(report.new for report in reports):
            raise EmptyRunError(_holds_no_record(spec, side, reports))
        yield temp


def _holds_no_record(spec: str, side: str, reports: Sequence[FileReport]) -> str:
    """Why a side of logs is refused: it holds no record (`reports`: its files')."""
    from tunelog.rules.sourcenames import STDIN

    refused = f"{side} ({spec}) holds no tuning record"
    hint = next((r.repair_hint for r in reports if r.repair_hint is not None), None)
    if hint is not None:  # diff reads as import does: a paste needs `import --repair` first
        return (
            f"{refused} as it is: {hint} (`tunelog --db {side}.db import --repair {spec}`, "
            f"then give {side}.db to diff)"
        )
    lines = sum(r.lines for r in reports)
    rejected = sum(r.rejected for r in reports)
    if not reports:
        what = "no tuning log"
    elif lines == 0 and spec == STDIN:
        what = "standard input is empty"
    elif lines == 0:
        what = "empty" if os.path.isfile(spec) else "only empty files"
    elif rejected == 0:
        what = "only comments and blank lines"
    elif os.path.isfile(spec):
        from tunelog.discovery import looks_like

        what = f"it looks like {looks_like(Path(spec))}; {rejected} of {lines} line(s) rejected"
    else:
        what = f"{rejected} of {lines} line(s) rejected"
    return (
        f"{refused} ({what}): nothing to compare; diff compares tunelog databases, log files "
        "or directories of logs"
    )


def _selected_sources(spec: str, db: str | None) -> list[int]:
    """The source ids of --db that `label:NAME` or `source:REF` names (an id or a path, see
    `rules.sourcenames`)."""
    if db is None or not os.path.isfile(db):
        raise InputNotFoundError(
            f"{spec}: no database{' ' + db if db else ''} to take sources from; pass --db "
            "(db=) or import first"
        )
    from tunelog.rules.sourcenames import named_by_label, sources_named

    with Store(db, create=False) as store:  # an empty --db file stays a refused one
        found = store.source_names()
    if spec.startswith(LABEL_PREFIX):
        ids = named_by_label(spec[len(LABEL_PREFIX) :], found)
    else:
        ids = sources_named(spec[len(SOURCE_PREFIX) :], found)
    if not ids:
        raise UnknownSourceError(
            f"no source of {db} matches {spec!r}: see `tunelog sources` for ids and labels"
        )
    return ids


def _is_sqlite_file(path: str) -> bool:
    """True when `path` is a file that starts like an SQLite database."""
    try:
        with open(path, "rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False
