"""Exports of MetaSchedule records: a pruned database TVM's JSONDatabase loads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tunelog.api.importing import _database_files
from tunelog.exceptions import (
    InvalidValueError,
    MixedTvmVersionsError,
    NothingToExportError,
)
from tunelog.store import Filters, Store

if TYPE_CHECKING:
    from tunelog.results import MetaScheduleExport


METASCHEDULE_TARGET_WARNING = (
    "MetaSchedule ignores the target when it queries a database (apache/tvm#15549): "
    "each workload's best record is used for every target"
)


def metaschedule_version_warning(store: Store) -> str | None:
    """A warning when the MetaSchedule databases imported come from TVM releases that no one
    TVM loads together (`export_metaschedule` refuses to mix them); None otherwise."""
    from tunelog.metaschedule import mixed_releases

    mixed = mixed_releases(store.metaschedule_tvm_versions())
    if not mixed:
        return None
    return (
        f"the MetaSchedule databases come from TVM {', '.join(mixed)}, which no one TVM loads "
        "together: `export --metaschedule` writes one release at a time (--source or --label)"
    )


def export_metaschedule(
    store: Store,
    directory: str | os.PathLike[str],
    *,
    force: bool = False,
    filters: Filters | None = None,
    top_k: int = 1,
) -> MetaScheduleExport:
    """Write a pruned MetaSchedule database: the `top_k` best valid records of each workload.

    The workloads are those whose best record matches `filters` (as for `export`); each keeps
    its `top_k` best valid records of distinct traces. The two files hold the original lines
    (each record's workload index rewritten to its workload's new line), in import order.
    Existing files are refused unless `force`; so is a mix of TVM releases, which no TVM loads
    (MixedTvmVersionsError, naming the versions).
    """
    from tunelog import optionvalues
    from tunelog.exporting import STDOUT, write_files_atomically
    from tunelog.metaschedule import RECORD_FILE, WORKLOAD_FILE, mixed_releases, pruned_database
    from tunelog.results import MetaScheduleExport

    optionvalues.top_k(top_k)
    optionvalues.flag(force, "force")
    directory = os.fspath(directory)  # a Path too (the result names it as text)
    optionvalues.output_path(directory, "the MetaSchedule database's directory")
    if directory == STDOUT:
        raise InvalidValueError(
            "a MetaSchedule database is two files: give a directory to write them in, not - "
            "(stdout)"
        )
    own = _database_files(store)
    with store.selected(filters, target_records=True) as (chosen, rest), chosen.snapshot():
        rows = chosen.metaschedule_export(rest, top_k=top_k)
        versions = chosen.metaschedule_tvm_versions({row[0] for row in rows})
    if not rows:
        raise NothingToExportError(
            "no valid MetaSchedule record matches: nothing to export "
            "(import a database directory first, or loosen the filters)"
        )
    mixed = mixed_releases(versions)
    if mixed:
        raise MixedTvmVersionsError(
            f"the workloads come from TVM {', '.join(mixed)}, whose databases no one TVM loads "
            "together: export one version at a time (--source or --label)"
        )
    workload_lines, record_lines = pruned_database(rows)
    _make_directory(directory)
    # Both files checked before either is written, and renamed into place together: a refused
    # records file never leaves a new workloads file beside an old one.
    write_files_atomically(
        [
            (str(Path(directory) / WORKLOAD_FILE), workload_lines),
            (str(Path(directory) / RECORD_FILE), record_lines),
        ],
        force=force,
        protected=own,
        kind="MetaSchedule database file",
    )
    # Workloads, not lines: a workload's records measured against lines that name things
    # otherwise keep their own lines (`pruned_database`).
    workloads = len({workload_id for workload_id, _, _ in rows})
    return MetaScheduleExport(
        directory, workloads, [METASCHEDULE_TARGET_WARNING], len(record_lines)
    )


def _make_directory(directory: str) -> None:
    """Create the export's directory (and its parents) unless it exists."""
    from tunelog.exceptions import OutputNotWritableError

    if os.path.exists(directory) and not os.path.isdir(directory):
        raise OutputNotWritableError(
            f"{directory} is a file: a MetaSchedule database is a directory of two files; "
            "give a directory's path"
        )
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise OutputNotWritableError(
            f"cannot create {directory}: {exc.strerror or exc}; check that its parent is "
            "writable, or choose another path"
        ) from None
