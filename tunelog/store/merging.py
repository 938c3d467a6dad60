"""Merging other tunelog databases into this one (`tunelog merge`).

Each source of another database is imported again, from its stored lines (every record line
its file held, in file order: see store.holdings), through the importer's `ImportWriter`: every
invariant an import keeps (content-hash dedup, tallies, slots, `top_configs`, the record id
counter, compressed blocks, holdings) holds after a merge for free. The
lines are not parsed again: the other database's rows already hold what the writer needs
(target, workload, config index, error number, costs), so a merged line costs a decompression,
a hash and an insert.

Order (what "first" means for ApplyHistoryBest's ties): the target's records keep their ids;
merged records get new ids after them: the databases in the order given, each database's
sources in their import order there (source id), each source's record lines in its file's order.
So the slots after a merge are exactly those of importing the target's files, then the first
database's files, and so on; of two records with equal mean costs the target's keeps the slot,
as the log loaded first does in AutoTVM. The set of records (content hashes) does not depend on
the order. A canonical order independent of which database is the target would need the
target's records renumbered, which is a rewrite of the whole database.

The other database is only read: through a read-only connection, or, when its schema is older,
through a migrated temporary copy. Everything is written in one transaction.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tunelog.exceptions import (
    DatabaseUnavailableError,
    DiskFullError,
    InputNotFoundError,
    SameDatabaseError,
)
from tunelog.inputs import stored_path
from tunelog.models import FileReport, _Dumpable
from tunelog.rules.lineaccounting import duplicates_when_moved
from tunelog.store.connection import Connection
from tunelog.store.holdings import holds_more_lines
from tunelog.store.mergematch import grown_here, same_bytes, same_lines_here
from tunelog.store.otherdatabase import read_only_current, refuse_damaged
from tunelog.store.replaying import feed_held_records
from tunelog.store.schema import MIGRATIONS

if TYPE_CHECKING:
    from tunelog.store.importer import ImportWriter


@dataclass(slots=True)
class MergedSource(_Dumpable):
    """One source of a merged database: how many of its records were new here."""

    path: str
    label: str | None
    sha256: str
    new: int = 0
    duplicates: int = 0
    already_merged_as: str | None = None
    """`#id path` of the source here with the same bytes, when the merge added nothing."""
    label_here: str | None = None
    """That source's own label, kept where it differs from this one's `label`."""
    repair: bool = False
    """Its file was imported with --repair."""
    superseded: list[int] = field(default_factory=list)
    """Sources here of the same bytes that held only lines rejected without --repair, which
    this one, imported with it, replaces (as `import --repair` of them does)."""
    read_on_into: str | None = None
    """`#id path` of the source here that read the file before it grew, which the merge read
    on into (`store.mergereadon`)."""


@dataclass(slots=True)
class MergeReport(_Dumpable):
    """What merging one database did."""

    database: str
    schema: int
    """The merged database's schema version (older ones are read from a migrated copy)."""
    sources: list[MergedSource] = field(default_factory=list)

    @property
    def new(self) -> int:
        """Records added to the target."""
        return sum(s.new for s in self.sources)

    @property
    def duplicates(self) -> int:
        """Records the target already held."""
        return sum(s.duplicates for s in self.sources)


@dataclass(frozen=True, slots=True)
class _Other:
    """An opened database to merge: the path given, its real path, a read connection."""

    path: str
    origin: str
    conn: sqlite3.Connection
    schema: int


def merge_databases(
    store: Connection, paths: Sequence[str], *, only_sources: Collection[int] | None = None
) -> list[MergeReport]:
    """Merge the databases at `paths` into `store`, in one transaction; report each.

    Every database is opened and checked before anything is written. `only_sources`: merge
    only the sources with these ids (e.g. one label's files, for `diff`); None: all.
    """
    with ExitStack() as stack:
        others = [stack.enter_context(_open_other(path, store.path)) for path in paths]
        conn = store.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise DatabaseUnavailableError(f"cannot write to {store.path}: {exc}") from exc
        try:
            merged_at = datetime.now(UTC).isoformat(timespec="seconds")
            reports = [_Merger(conn, other, merged_at, only_sources).run() for other in others]
            # The new workloads' facts (migration 12), which the layer listings group by.
            from tunelog.store.workloadfacts import fill_workload_facts

            fill_workload_facts(conn)
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc):
                raise DiskFullError(
                    f"the disk holding {store.path} is full ({exc}); nothing was merged: "
                    "free some space and merge again"
                ) from exc
            raise
    return reports


def copy_sources(
    store: Connection,
    into: Connection,
    source_ids: Collection[int],
    target_ids: Collection[int] | None = None,
    *,
    metaschedule_only: bool = False,
) -> None:
    """Import the sources of `store` with these ids into the empty store `into`, as `merge`
    does: `into` then holds what importing only those files gives (see Store.selected); with
    `target_ids`, only their lines of records of these targets (`metaschedule_only`: of
    MetaSchedule workloads only, every other record kept)."""
    origin = store.path if store.path == ":memory:" else os.path.realpath(store.path)
    with store.snapshot():
        other = _Other(store.path, origin, store.conn, len(MIGRATIONS))
        into.conn.execute("BEGIN IMMEDIATE")
        try:
            merged_at = datetime.now(UTC).isoformat(timespec="seconds")
            _Merger(into.conn, other, merged_at, source_ids, target_ids, metaschedule_only).run()
            into.conn.execute("COMMIT")
        except BaseException:
            if into.conn.in_transaction:
                into.conn.execute("ROLLBACK")
            raise


# -- opening the other database -----------------------------------------------------------------


@contextmanager
def _open_other(path: str, target_path: str) -> Iterator[_Other]:
    """The database at `path`, read-only, at the current schema (a migrated copy if older)."""
    if not os.path.isfile(path):
        raise InputNotFoundError(f"{path}: no such database file; give a tunelog database path")
    origin = os.path.realpath(path)
    if origin == os.path.realpath(target_path) or _same_file(path, target_path):
        raise SameDatabaseError(f"{path} is the database being merged into; give another one")
    with read_only_current(path, "merge") as (conn, version):
        conn.execute("BEGIN")  # one snapshot of it for the whole merge
        refuse_damaged(conn, path)
        yield _Other(path, origin, conn, version)


def _same_file(path: str, other: str) -> bool:
    """Whether two paths are one file (a hard link to it, as export checks its output)."""
    try:
        return os.path.samefile(path, other)
    except OSError:
        return False


# -- merging ------------------------------------------------------------------------------------

_SOURCES = """SELECT id, path, label, sha256, size, lines, records, duplicates, comments, blank,
                     rejected, split, repaired, repair, imported_at
              FROM sources ORDER BY id"""


class _Merger:
    """Writes one other database's sources into the open transaction, in source order."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        other: _Other,
        merged_at: str,
        only: Collection[int] | None,
        targets: Collection[int] | None = None,
        metaschedule_only: bool = False,
    ) -> None:
        self.conn = conn
        self.other = other
        self.merged_at = merged_at
        self.only = only
        self.only_targets = targets  # None: the records of every target
        self.metaschedule_only = metaschedule_only  # `targets` choose MetaSchedule's only

    def run(self) -> MergeReport:
        """Merge every (selected) source; sources the target holds the same bytes of are skipped."""
        other = self.other.conn
        self.targets: dict[int, str] = dict(other.execute("SELECT id, target FROM targets"))
        self.workloads: dict[int, tuple[str, str, str, str]] = {
            int(row[0]): (row[1], row[2], row[3], row[4])
            for row in other.execute(
                "SELECT id, version, task_name, template_key, args FROM workloads"
            )
        }
        # How each workload was first spelled (auto_scheduler keys; None for AutoTVM).
        self.spellings: dict[int, str | None] = dict(
            other.execute("SELECT id, spelling FROM workloads").fetchall()
        )
        report = MergeReport(self.other.path, self.other.schema)
        for src in other.execute(_SOURCES).fetchall():
            if self.only is None or src[0] in self.only:
                report.sources.append(self._merge_source(src))
        return report

    def _merge_source(self, src: tuple[Any, ...]) -> MergedSource:
        """Import one source's records through an ImportWriter, with its counts and rejects."""
        (source_id, path, label, sha256, size, lines, records, duplicates) = src[:8]
        (comments, blank, rejected, split, repaired, repair, imported_at) = src[8:]
        result = MergedSource(path, label, sha256, repair=bool(repair))
        here = stored_path(path)  # as the writer stores it; a copy elsewhere is its own source
        if repair is not None and sha256:  # ('': bytes unknown, a file that grew)
            # The same bytes imported the same way: every record is here already.
            same = same_bytes(
                self.conn, sha256, "AND size = ? AND repair = ? AND path = ?", (size, repair, here)
            )
            if same is not None:
                result.duplicates = duplicates_when_moved(records, duplicates, 0)
                result.already_merged_as = self._already_here(same, result)
                return result
        conn = self.conn
        if self.only_targets is None:
            from tunelog.store.mergereadon import earlier_read_here

            earlier = earlier_read_here(conn, self.other.conn, src, here)
            if earlier is not None:
                return self._read_on(src, result, *earlier)
        conn.execute("SAVEPOINT merge_source")
        from tunelog.store.importer import ImportWriter

        report = FileReport(path=path)
        with ImportWriter(conn, report, repair=bool(repair)) as writer:
            self._feed(writer, source_id)
            writer.finish()
        same = (
            same_bytes(conn, sha256, "AND id != ? AND path = ?", (writer.source_id, here))
            if sha256
            else same_lines_here(
                conn, writer.source_id, here, (lines, comments, blank, rejected, imported_at), label
            )
        )
        if same is None and report.new + report.duplicates:  # its lines say which file it is
            same = grown_here(conn, writer.source_id, here, imported_at)
        if (
            report.new == 0
            and same is not None
            and not holds_more_lines(report.new, report.duplicates, conn, same[0])
        ):
            # As an import of bytes seen before that adds nothing: keep no trace of it.
            conn.execute("ROLLBACK TO merge_source")
            conn.execute("RELEASE merge_source")
            result.duplicates = duplicates_when_moved(records, duplicates, 0)
            result.already_merged_as = self._already_here(same, result)
            return result
        conn.execute(
            """UPDATE sources SET label = ?, sha256 = ?, size = ?, lines = ?, records = ?,
               duplicates = ?, comments = ?, blank = ?, rejected = ?, split = ?, repaired = ?,
               repair = ?, imported_at = ?, merged_from = ?, merged_at = ? WHERE id = ?""",
            (
                *(label, sha256, size, lines, report.new),
                duplicates_when_moved(records, duplicates, report.new),
                *(comments, blank, rejected, split, repaired, repair, imported_at),
                *(self.other.origin, self.merged_at, writer.source_id),
            ),
        )
        conn.executemany(
            "INSERT INTO source_imports (source_id, path, imported_at) VALUES (?, ?, ?)",
            [
                (writer.source_id, at_path, at)
                for at_path, at in self.other.conn.execute(
                    "SELECT path, imported_at FROM source_imports WHERE source_id = ? "
                    "ORDER BY rowid",
                    (source_id,),
                )
            ],
        )
        conn.executemany(
            f"INSERT INTO rejects (source_id, line, reason) VALUES ({writer.source_id:d}, ?, ?)",
            self.other.conn.execute(
                "SELECT line, reason FROM rejects WHERE source_id = ? ORDER BY line", (source_id,)
            ),
        )
        if self.only_targets is None:  # a copy of only some targets' lines never grows on
            from tunelog.store import resume

            resume.carry(conn, self.other.conn, source_id, writer.source_id)
        conn.execute("RELEASE merge_source")
        result.new = report.new
        result.duplicates = duplicates_when_moved(records, duplicates, report.new)
        return result

    def _already_here(self, same: tuple[int, str], result: MergedSource) -> str:
        """`#id path` of the source here that holds the merged one's bytes. It takes the
        merged one's label when it has none; its own label stays (`label_here`): two
        machines that both imported a shared file (TopHub, a baseline) keep `label:box1`
        answering for the first (the second's label replaced it, unsaid)."""
        (here,) = self.conn.execute("SELECT label FROM sources WHERE id = ?", (same[0],)).fetchone()
        if here is None and result.label is not None:
            self.conn.execute("UPDATE sources SET label = ? WHERE id = ?", (result.label, same[0]))
        elif here is not None and result.label is not None and here != result.label:
            result.label_here = str(here)
        return f"#{same[0]} {same[1]}"

    def _feed(self, writer: ImportWriter, source_id: int, after_line: int = 0) -> None:
        """Hand the source's record lines to the writer in its file's order, as they were
        (`after_line`: those after it only)."""
        feed_held_records(
            writer,
            self.other.conn,
            source_id,
            self.targets,
            self.workloads,
            self.spellings,
            self.only_targets,
            metaschedule_only=self.metaschedule_only,
            after_line=after_line,
        )

    def _read_on(
        self, src: tuple[Any, ...], result: MergedSource, here_id: int, here_lines: int
    ) -> MergedSource:
        """Read the merged source's lines after `here_lines` on into source `here_id`, which
        read its file before it grew (`store.mergereadon`)."""
        from tunelog.store.mergereadon import read_on

        result.new = read_on(self.conn, self.other.conn, src, here_id, here_lines, self._feed)
        result.duplicates = int(src[6]) + int(src[7]) - result.new
        result.read_on_into = f"#{here_id} {stored_path(src[1])}"
        (here,) = self.conn.execute("SELECT label FROM sources WHERE id = ?", (here_id,)).fetchone()
        if here is not None and result.label is not None and here != result.label:
            result.label_here = str(here)  # one label per source: the one here stays
        return result
