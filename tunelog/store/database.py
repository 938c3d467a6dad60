"""The Store: opening and migrating a database file, importing into it, and every query."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from tunelog.exceptions import (
    DatabaseAccessError,
    DatabaseNotFoundError,
    DatabaseUnavailableError,
    DiskFullError,
    NewerSchemaError,
    NotATunelogDatabaseError,
    UnknownSourceError,
)
from tunelog.filters import Filters
from tunelog.store.schema import APPLICATION_ID, MIGRATIONS, TOP_CONFIGS_KEPT
from tunelog.targets import parse_target

if TYPE_CHECKING:
    import sqlite_utils

    from tunelog.importreport import FileReport, RejectedLine
    from tunelog.inputs import LineEnd, OpenedLog
    from tunelog.layers import SlotWinner, Tally, WorkloadInfo
    from tunelog.models import BestRow, SlotHolder, Source, SourceImport, Stats
    from tunelog.records import ScannedLine
    from tunelog.store.codec import LineReader
    from tunelog.store.importer import ImportWriter, ProgressCallback
    from tunelog.store.removal import RemovedSource
    from tunelog.store.resume import ResumePoint

# Read commands never parse a line: the importer and the record models (pydantic, msgspec)
# are imported where a method needs them, which keeps a small command's start-up short. So
# are hashlib (OpenSSL: milliseconds), json and tunelog.selection (which loads json), needed
# by a few queries only, and the codec (xxhash), needed by those that read stored lines.

BUSY_TIMEOUT_MS = 60_000
PAGE_SIZE = 16384

SlotKey = tuple[str, str, int]


class _StaleResumePoint(Exception):
    """The resume point changed between reading it and taking the write lock."""


# A NamedTuple, not a dataclass: creating one would cost every command ~0.5 ms of start-up.
class _ReadUpTo(NamedTuple):
    """Where an import of a plain file stopped: the last line end parsed (`end`; None when the
    file gets no resume point), the bytes read, and whether a partial last line was held back."""

    end: LineEnd | None
    read: int
    follow: bool

    @property
    def held_back(self) -> int:
        """Bytes of an unterminated last line left for the next import."""
        return self.read - self.end.offset if self.follow and self.end is not None else 0

    @property
    def tail(self) -> int:
        """Bytes of an unterminated last line parsed as it was (plain imports only)."""
        return self.read - self.end.offset if not self.follow and self.end is not None else 0

    @property
    def stored_size(self) -> int:
        """The bytes imported: up to the last line end, plus a tail parsed as it was."""
        return self.read if self.end is None else self.end.offset + self.tail


class _KnownFile(NamedTuple):
    source_id: int
    size: int
    copy: bool  # the same bytes at a path never imported as that source


class ExportLine(NamedTuple):
    """A record to export: ids, target string, log version and the original line bytes."""

    record_id: int
    workload_id: int
    target: str
    version: str
    raw: bytes


class Store:
    """A tunelog database file. Open with `Store(path)`; created and migrated on open.

    `create=False`: a missing file raises DatabaseNotFoundError instead (what read commands
    want: an empty new database would answer every question with "nothing").
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = str(path)
        if not create and self.path != ":memory:" and not os.path.exists(self.path):
            raise DatabaseNotFoundError(
                f"no database at {os.path.abspath(self.path)}: import logs first "
                "(`tunelog import LOGS`), or choose another with --db PATH or TUNELOG_DB"
            )
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as exc:
            raise DatabaseUnavailableError(
                f"cannot open database {self.path}: {exc}; check that its directory exists "
                "and is writable, or pass another --db"
            ) from exc
        self.conn = conn
        # Workload ids by identity, as of `data_version` (see _known_workloads).
        self._workload_ids: dict[tuple[str, str, str, str], int] = {}
        self._workload_ids_as_of: int | None = None
        try:
            self._prepare()
        except BaseException as exc:
            conn.close()  # never leave a refused database open (or its -wal/-shm files)
            if not isinstance(exc, sqlite3.DatabaseError):
                raise
            message = str(exc)
            if "not a database" in message or "malformed" in message:
                raise NotATunelogDatabaseError(
                    f"{self.path} is not a tunelog database (SQLite says: {message}); "
                    "pass another --db path"
                ) from exc
            raise DatabaseUnavailableError(
                f"cannot use database {self.path}: {message}; check that its directory exists "
                "and is writable, or pass another --db"
            ) from exc

    # -- schema -------------------------------------------------------------------------------

    def _prepare(self) -> None:
        conn = self.conn
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        with self.snapshot():  # one read transaction: another process may be migrating
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
        if app_id != APPLICATION_ID and (has_tables or version):
            raise NotATunelogDatabaseError(
                f"{self.path} is an SQLite database but not a tunelog one; pass another --db path"
            )
        if version > len(MIGRATIONS):
            raise NewerSchemaError(
                f"{self.path} was written by a newer tunelog (schema {version}, this one knows "
                f"{len(MIGRATIONS)}); upgrade tunelog"
            )
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            if not has_tables:
                # A new file: 16 KB pages (before WAL fixes the size) write a large import
                # with a quarter of the system calls of 4 KB ones (1M lines: sys 1.5 -> 0.6 s).
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < len(MIGRATIONS):
            self._migrate()

    def _migrate(self) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for number in range(version, len(MIGRATIONS)):
                MIGRATIONS[number](conn)
            if version < 12:  # migration 12's catch-up: the facts of the workloads already held
                from tunelog.store.workloadfacts import fill_workload_facts

                fill_workload_facts(conn)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: the queries inside see one state of the database."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    @property
    def db(self) -> sqlite_utils.Database:
        """The same connection as a sqlite-utils Database, for exploring the tables."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    @property
    def schema_version(self) -> int:
        """Number of migrations applied."""
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, traceback: object) -> None:
        self.close()
        if isinstance(exc, sqlite3.Error):  # the Python API gets the CLI's message, no traceback
            raise DatabaseAccessError.of(self.path, exc) from exc

    # -- import -------------------------------------------------------------------------------

    def import_log(
        self,
        opened: OpenedLog,
        *,
        label: str | None = None,
        strict: bool = False,
        repair: bool = False,
        lines: Iterable[bytes] | None = None,
        progress: ProgressCallback | None = None,
        follow: bool = False,
        scanner: Callable[[bytes], ScannedLine] | None = None,
    ) -> FileReport:
        """Import one opened log in a single transaction and report what happened.

        `lines` overrides `opened.lines()`. With `strict`, a file with any rejected line is rolled
        back (`report.rolled_back`); with `repair`, records pasted from web pages are recovered.
        A plain file imported before from the same path and grown since is read on from where
        that import stopped, if its first bytes are unchanged (see `tunelog.store.resume`).
        `follow` (a file a tuner appends to): a last line without line end is held back until
        it ends. `scanner` reads a line other than as a log line (MetaSchedule records; such
        files are always read in full).
        """
        prefix_changed = False
        if lines is None and not opened.source.is_stdin:
            from tunelog.store import resume

            for _attempt in range(3 if scanner is None else 0):
                point = resume.load(self.conn, opened.source.path)
                if point is None or point.tail or point.repair != repair:
                    break
                try:
                    resumed = self._resume(opened, point, label, strict, progress, follow)
                except _StaleResumePoint:
                    continue  # another process imported the file meanwhile: look again
                if resumed is not None:
                    return resumed
                prefix_changed = True
                break
            known = self._known_file(opened, repair=repair)
            if known is not None:
                if progress is not None:
                    progress(known.size)
                if known.copy:
                    report = self._import_copy(known, opened, label, strict)
                else:
                    report = self._known_report(known.source_id, opened.source.path, strict)
                report.prefix_changed = prefix_changed
                return report
        from tunelog.importreport import FileReport
        from tunelog.records import scan_content
        from tunelog.store.importer import ImportWriter

        report = FileReport(path=opened.source.path, prefix_changed=prefix_changed)
        with self._writing(report):
            writer = ImportWriter(
                self.conn,
                report,
                repair=repair,
                scanner=scan_content if scanner is None else scanner,
                known_workloads=self._known_workloads(),
            )
            resumable = lines is None and not opened.source.is_stdin and scanner is None
            writer.run(
                opened.lines(hold_back_unterminated=follow) if lines is None else lines,
                opened,
                progress,
            )
            # Before the SHA-256 drains the file: what was read is exactly what was parsed.
            resumable = resumable and opened.compression is None
            end = opened.line_end(writer.terminated_lines) if resumable else None
            read = opened.size
            writer.finish()
            report.sha256 = opened.sha256
            self._finish_import(writer, opened, report, label, strict, _ReadUpTo(end, read, follow))
        return report

    def _commit(self, writer: ImportWriter) -> None:
        """Commit the file's import; only then are its workload ids known (_known_workloads).

        The new workloads' facts (migration 12) are computed first, in the same transaction."""
        from tunelog.store.workloadfacts import fill_workload_facts

        fill_workload_facts(self.conn)
        self.conn.execute("COMMIT")
        self._workload_ids.update(writer.workload_ids)

    def _known_workloads(self) -> dict[tuple[str, str, str, str], int]:
        """Workload ids this connection has committed or read, for the next file's import.

        A directory of logs measures the same workloads file after file; each file looked them
        up again. Call inside a write transaction: if another connection has written since
        (`data_version` moved) the ids are forgotten; this connection only ever forgets
        workloads by removing sources, which forgets them here too.
        """
        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        if version != self._workload_ids_as_of:
            self._workload_ids = {}
            self._workload_ids_as_of = version
        return self._workload_ids

    @contextmanager
    def _writing(self, report: FileReport) -> Iterator[None]:
        """A write transaction for one file's import; any exception rolls it back."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise DatabaseUnavailableError(f"cannot write to {self.path}: {exc}") from exc
        try:
            yield
        except BaseException as exc:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc):
                raise DiskFullError(
                    f"the disk holding {self.path} is full ({exc}); nothing of "
                    f"{report.path} was kept: free some space and import it again"
                ) from exc
            raise

    def _resume(
        self,
        opened: OpenedLog,
        point: ResumePoint,
        label: str | None,
        strict: bool,
        progress: ProgressCallback | None,
        follow: bool,
    ) -> FileReport | None:
        """Import what follows the resume point; None when the file's first bytes changed."""
        from tunelog.importreport import FileReport
        from tunelog.inputs import OpenedLog
        from tunelog.store.importer import ImportWriter

        after = OpenedLog.after(opened.source, point.end)
        if after is None:
            return None
        with after:
            if after.at_end():
                # Nothing appended: report as a re-import of the same bytes, without reading.
                if progress is not None:
                    progress(after.size)
                return self._known_report(point.source_id, opened.source.path, strict)
            report = FileReport(path=opened.source.path, skipped_lines=point.end.lines)
            with self._writing(report):
                from tunelog.store import resume

                if resume.load(self.conn, opened.source.path) != point:
                    raise _StaleResumePoint  # read before the write lock: moved on since
                writer = ImportWriter(
                    self.conn,
                    report,
                    repair=point.repair,
                    source_id=point.source_id,
                    first_line=point.end.lines,
                    known_workloads=self._known_workloads(),
                )
                writer.run(after.lines(hold_back_unterminated=follow), after, progress)
                end = after.line_end(writer.terminated_lines)
                read = after.size
                writer.finish()
                self._extend_source(
                    writer, point, report, label, strict, _ReadUpTo(end, read, follow)
                )
        return report

    def _extend_source(
        self,
        writer: ImportWriter,
        point: ResumePoint,
        report: FileReport,
        label: str | None,
        strict: bool,
        read: _ReadUpTo,
    ) -> None:
        """Add the appended lines' counts to their source and move the resume point on."""
        from tunelog.store import resume

        conn = self.conn
        report.held_back_bytes = read.held_back
        if self._rolled_back_for_strict(report, strict):
            return
        if report.lines == 0:
            conn.execute("ROLLBACK")  # only the start of a line was appended: nothing to keep
            report.already_imported_as = self._source_name(point.source_id)
            return
        # The SHA-256 of the whole file would cost a read of all of it (1 s per GB): it is left
        # empty, so `sources` shows none and a copy elsewhere is matched by its lines.
        conn.execute(
            """UPDATE sources SET label = coalesce(?, label), sha256 = '', size = ?,
                   lines = lines + ?, records = records + ?, duplicates = duplicates + ?,
                   comments = comments + ?, blank = blank + ?, rejected = rejected + ?,
                   split = split + ?, repaired = repaired + ? WHERE id = ?""",
            (
                label,
                read.stored_size,
                report.lines,
                report.new,
                report.duplicates,
                report.comments,
                report.blank,
                report.rejected,
                report.split,
                report.repaired,
                point.source_id,
            ),
        )
        assert read.end is not None
        resume.save(
            conn,
            resume.ResumePoint(point.real_path, point.source_id, read.end, read.tail, point.repair),
        )
        self._record_import(point.source_id, report.path)  # the file grew: imported again
        self._commit(writer)
        report.source_id = point.source_id

    def _source_name(self, source_id: int) -> str:
        (path,) = self.conn.execute(
            "SELECT path FROM sources WHERE id = ?", (source_id,)
        ).fetchone()
        return f"#{source_id} {path}"

    def _known_file(self, opened: OpenedLog, *, repair: bool) -> _KnownFile | None:
        """The source whose bytes the file holds, imported before the same way, if any.

        Importing the same bytes again would find every record a duplicate and every other
        line as before, so the report is rebuilt from the earlier source without parsing. A
        copy at another path (no source of these bytes was imported from it) becomes a source
        of its own holding the same lines (`_import_copy`). The file is hashed only when a
        source of the same size exists.
        """
        if opened.source.is_stdin:
            return None
        try:
            size = os.path.getsize(opened.source.path)
        except OSError:
            return None
        same_size = "SELECT 1 FROM sources WHERE size = ? AND repair = ? LIMIT 1"
        if self.conn.execute(same_size, (size, int(repair))).fetchone() is None:
            return None
        import hashlib

        try:
            with open(opened.source.path, "rb") as file:
                sha256 = hashlib.file_digest(file, "sha256").hexdigest()
        except OSError:
            return None  # the import proper reports an unreadable file
        same = [
            int(i)
            for (i,) in self.conn.execute(
                "SELECT id FROM sources WHERE sha256 = ? AND size = ? AND repair = ? ORDER BY id",
                (sha256, size, int(repair)),
            )
        ]
        if not same:
            return None
        wanted = os.path.realpath(opened.source.path)
        for source_id, path in self.conn.execute(
            f"""SELECT source_id, path FROM source_imports WHERE source_id IN ({_id_list(same)})
                ORDER BY source_id"""
        ):
            if os.path.realpath(path) == wanted:
                return _KnownFile(int(source_id), size, copy=False)
        return _KnownFile(same[0], size, copy=True)

    def _imported_from(self, source_id: int, path: str) -> bool:
        """Whether the source was imported (or imported again) from the file at `path`."""
        wanted = os.path.realpath(path)
        return any(
            os.path.realpath(p) == wanted
            for (p,) in self.conn.execute(
                "SELECT path FROM source_imports WHERE source_id = ?", (source_id,)
            )
        )

    def _import_copy(
        self, known: _KnownFile, opened: OpenedLog, label: str | None, strict: bool
    ) -> FileReport:
        """The same bytes at another path: a source of its own, holding the original's lines.

        Nothing is parsed: the original's line counts, holdings and rejected lines are copied,
        and the path gets a resume point like the original's (a copy that grows is then read
        on from there)."""
        from tunelog.inputs import stored_path
        from tunelog.store import holdings, resume

        original = known.source_id
        report = self._known_report(original, opened.source.path, strict, note=False)
        if report.rolled_back:
            return report
        conn = self.conn
        with self._writing(report):
            now = datetime.now(UTC).isoformat(timespec="seconds")
            source_id = int(
                conn.execute(
                    """INSERT INTO sources (path, label, sha256, size, lines, records, duplicates,
                                            comments, blank, rejected, imported_at, split,
                                            repaired, repair)
                       SELECT ?, ?, sha256, size, lines, 0, records + duplicates, comments,
                              blank, rejected, ?, split, repaired, repair
                       FROM sources WHERE id = ? RETURNING id""",
                    (stored_path(opened.source.path), label, now, original),
                ).fetchone()[0]
            )
            holdings.copy_runs(conn, original, source_id)
            conn.execute(
                "INSERT INTO rejects SELECT ?, line, reason FROM rejects WHERE source_id = ?",
                (source_id, original),
            )
            self._record_import(source_id, opened.source.path)
            point = conn.execute(
                "SELECT real_path FROM resume_points WHERE source_id = ? LIMIT 1", (original,)
            ).fetchone()
            if point is not None and opened.compression is None:
                earlier = resume.load(conn, point[0])
                if earlier is not None:
                    key = resume.real_path(opened.source.path)
                    resume.save(
                        conn, dataclasses.replace(earlier, real_path=key, source_id=source_id)
                    )
            conn.execute("COMMIT")
        report.source_id = source_id
        return report

    def _known_report(
        self, source_id: int, path: str, strict: bool, *, note: bool = True
    ) -> FileReport:
        """What re-importing the bytes of a source reports: every record a duplicate.

        `note`: record the import as one more of that source (not for a copy)."""
        from tunelog.importreport import FileReport
        from tunelog.models import REJECTS_KEPT_IN_REPORT

        row = self.conn.execute(
            """SELECT path, lines, records, duplicates, comments, blank, rejected, split,
                      repaired, sha256
               FROM sources WHERE id = ?""",
            (source_id,),
        ).fetchone()
        (
            source_path,
            lines,
            records,
            duplicates,
            comments,
            blank,
            rejected,
            split,
            repaired,
            sha256,
        ) = row
        report = FileReport(
            path=path,
            lines=lines,
            split=split,
            duplicates=records + duplicates,
            comments=comments,
            blank=blank,
            rejected=rejected,
            repaired=repaired,
            rejects=self.rejects(source_id, limit=REJECTS_KEPT_IN_REPORT),
            sha256=sha256 or None,
        )
        if strict and rejected:
            report.rolled_back = True  # as the import proper would, before noticing the rest
        else:
            report.already_imported_as = f"#{source_id} {source_path}"
            if note:
                self._record_import(source_id, path)
        return report

    def _record_import(self, source_id: int, path: str) -> None:
        """Note a re-import of a known content (one `sources` row per content)."""
        from tunelog.inputs import stored_path

        now = datetime.now(UTC).isoformat(timespec="seconds")
        self.conn.execute(
            "INSERT INTO source_imports (source_id, path, imported_at) VALUES (?, ?, ?)",
            (source_id, stored_path(path), now),
        )

    def _rolled_back_for_strict(self, report: FileReport, strict: bool) -> bool:
        """With --strict, a file with a rejected line keeps nothing: its new records are
        counted as discarded, so the report still accounts for every line."""
        if not (strict and report.rejected):
            return False
        self.conn.execute("ROLLBACK")
        report.rolled_back = True
        report.new, report.discarded = 0, report.new
        return True

    def _finish_import(
        self,
        writer: ImportWriter,
        opened: OpenedLog,
        report: FileReport,
        label: str | None,
        strict: bool,
        read: _ReadUpTo,
    ) -> None:
        conn = self.conn
        report.held_back_bytes = read.held_back
        if read.end is not None and opened.size != read.stored_size:
            # Bytes held back, or appended while the file was hashed: the SHA-256 is not that
            # of the bytes imported. Left empty (see _extend_source).
            report.sha256 = None
        if self._rolled_back_for_strict(report, strict):
            return
        # The same bytes imported before from this path (a copy elsewhere is a source of its
        # own: it keeps what it held).
        earlier = next(
            (
                (int(i), p)
                for i, p in conn.execute(
                    "SELECT id, path FROM sources WHERE sha256 = ? AND id != ? ORDER BY id",
                    (report.sha256, writer.source_id),
                ).fetchall()
                if self._imported_from(int(i), opened.source.path)
            ),
            None,
        )
        if earlier is not None and report.new == 0:
            conn.execute("ROLLBACK")  # same bytes imported before: only note the re-import
            report.already_imported_as = f"#{earlier[0]} {earlier[1]}"
            self._record_import(earlier[0], opened.source.path)
            return
        conn.execute(
            """UPDATE sources SET label = ?, sha256 = ?, size = ?, lines = ?, records = ?,
               duplicates = ?, comments = ?, blank = ?, rejected = ?, split = ?, repaired = ?,
               repair = ? WHERE id = ?""",
            (
                label,
                report.sha256 or "",
                opened.size if read.end is None else read.stored_size,
                report.lines,
                report.new,
                report.duplicates,
                report.comments,
                report.blank,
                report.rejected,
                report.split,
                report.repaired,
                int(writer.repair),
                writer.source_id,
            ),
        )
        conn.execute(
            "INSERT INTO source_imports SELECT id, path, imported_at FROM sources WHERE id = ?",
            (writer.source_id,),
        )
        if read.end is not None:
            from tunelog.store import resume

            point = resume.ResumePoint(
                resume.real_path(opened.source.path),
                writer.source_id,
                read.end,
                read.tail,
                writer.repair,
            )
            resume.save(conn, point)
        self._commit(writer)
        report.source_id = writer.source_id

    # -- sources: selecting and removing ----------------------------------------------------

    def selected_sources(self, filters: Filters) -> list[int]:
        """Ids of the sources `--source`/`--label` select; UnknownSourceError when none."""
        rows = self.conn.execute("SELECT id, path, label FROM sources ORDER BY id").fetchall()
        ids = [int(i) for i, path, label in rows if filters.matches_source(int(i), path, label)]
        if not ids and filters.source is not None:
            # A path as typed today may differ from the path as typed on import.
            wanted = os.path.realpath(filters.source)
            ids = [
                int(i)
                for i, path, label in rows
                if os.path.realpath(path) == wanted
                and filters.matches_source(int(i), filters.source, label)
            ]
        if not ids:
            wanted_text = " and ".join(
                f"{name} {value!r}"
                for name, value in (("source", filters.source), ("label", filters.label))
                if value is not None
            )
            raise UnknownSourceError(
                f"no imported source matches {wanted_text}: see `tunelog sources` for ids, "
                "paths and labels"
            )
        return ids

    @contextmanager
    def selected(self, filters: Filters | None) -> Iterator[tuple[Store, Filters]]:
        """The database the filters' `--source`/`--label` select, and the other filters.

        A source is the record lines its file held (see store.holdings), so a question about
        some sources is answered by what importing only their files gives: a temporary
        database they are merged into, in import order (slots, tallies, trial runs and line
        numbers are theirs). Without those filters: this store and the filters unchanged.
        UnknownSourceError when no source matches.
        """
        filters = filters or Filters()
        if not filters.selects_sources:
            yield self, filters
            return
        import tempfile

        from tunelog.store.merging import copy_sources

        ids = self.selected_sources(filters)
        every = [int(i) for (i,) in self.conn.execute("SELECT id FROM sources")]
        if sorted(ids) == sorted(every):  # every file: this database is the answer
            yield self, filters.without_sources()
            return
        with (
            tempfile.TemporaryDirectory(prefix="tunelog-selection-") as tmp,
            Store(os.path.join(tmp, "selection.db")) as chosen,
        ):
            copy_sources(self, chosen, ids)
            chosen.fill_workload_facts()
            yield chosen, filters.without_sources()

    def fill_workload_facts(self) -> None:
        """Store the facts (migration 12) of workloads written without them (e.g. by a merge)."""
        from tunelog.store.workloadfacts import fill_workload_facts

        self.conn.execute("BEGIN IMMEDIATE")
        try:
            fill_workload_facts(self.conn)
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def selected_pairs(self, filters: Filters) -> set[tuple[str, int]] | None:
        """(target string, workload id) of the records `--target` selects; None without it.

        Source filters are answered by the database they select (`selected`) first."""
        if filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                return chosen.selected_pairs(rest)
        if filters.target is None:
            return None
        sql = """SELECT DISTINCT t.target, r.workload_id FROM tallies r
                 JOIN targets t ON t.id = r.target_id WHERE t.target = ?"""
        return {(str(t), int(w)) for t, w in self.conn.execute(sql, (filters.target,))}

    def remove_sources(self, ref: str) -> list[RemovedSource]:
        """Remove the sources `ref` names (an id, a label, or a path), in one transaction.

        The database becomes what importing only the remaining files gives (see
        `tunelog.store.removal`). UnknownSourceError when nothing matches.
        """
        from tunelog.store.removal import remove_sources

        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise DatabaseUnavailableError(f"cannot write to {self.path}: {exc}") from exc
        try:
            ids = self._sources_named(ref)
            self._workload_ids = {}  # removal deletes the workloads left without records
            removed = remove_sources(self.conn, ids)
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        return removed

    def _sources_named(self, ref: str) -> list[int]:
        """An id (ASCII digits), else every source with this label, else with this path."""
        from tunelog.optionvalues import source_id

        number = source_id(ref) if not ref.startswith("#") else None  # refuses `²`, `10**30`
        if number is not None:
            row = self.conn.execute("SELECT id FROM sources WHERE id = ?", (number,)).fetchone()
            if row is not None:
                return [int(row[0])]
        for column in ("label", "path"):
            ids = [
                int(i)
                for (i,) in self.conn.execute(f"SELECT id FROM sources WHERE {column} = ?", (ref,))
            ]
            if ids:
                return ids
        raise UnknownSourceError(
            f"no imported source has id, label or path {ref!r}: see `tunelog sources`"
        )

    # -- queries ------------------------------------------------------------------------------

    def sources(self) -> list[Source]:
        """Imported files, oldest first."""
        from tunelog.models import Source, SourceImport

        with self.snapshot():
            rows = self.conn.execute(
                """SELECT id, path, label, sha256, size, lines, records, duplicates, comments,
                          blank, rejected, imported_at, merged_from FROM sources ORDER BY id"""
            ).fetchall()
            imports: dict[int, list[SourceImport]] = {}
            for source_id, path, at in self.conn.execute(
                "SELECT source_id, path, imported_at FROM source_imports ORDER BY rowid"
            ):
                imports.setdefault(source_id, []).append(SourceImport(path, at))
            held = dict(
                self.conn.execute("SELECT source_id, sum(count) FROM holdings GROUP BY source_id")
            )
            from tunelog.store.holdings import shared_lines

            shared = shared_lines(self.conn)
        found = [Source(*row) for row in rows]
        for source in found:
            source.imports = imports.get(source.id, [])
            source.held = int(held.get(source.id, 0))
            source.shared = shared.get(source.id, 0)
        return found

    def rejects(self, source_id: int, limit: int | None = None) -> list[RejectedLine]:
        """Rejected lines of one source, by line number."""
        from tunelog.importreport import RejectedLine

        sql = "SELECT line, reason FROM rejects WHERE source_id = ? ORDER BY line"
        params: tuple[Any, ...] = (source_id,)
        if limit is not None:
            sql += " LIMIT ?"
            params += (limit,)
        return [RejectedLine(line=a, reason=b) for a, b in self.conn.execute(sql, params)]

    def stats(self) -> Stats:
        """Counts by target, template and error number."""
        c = self.conn

        def one(sql: str) -> int:
            return int(c.execute(sql).fetchone()[0])

        def table(sql: str, names: Sequence[str]) -> list[dict[str, object]]:
            return [dict(zip(names, row, strict=True)) for row in c.execute(sql)]

        with self.snapshot():
            return self._stats(one, table)

    def _stats(
        self,
        one: Callable[[str], int],
        table: Callable[[str, Sequence[str]], list[dict[str, object]]],
    ) -> Stats:
        from tunelog.models import Stats

        # From the tallies kept on import: a scan of records took 1.4 s at 1M records.
        return Stats(
            records=one("SELECT coalesce(sum(records), 0) FROM tallies"),
            valid=one("SELECT coalesce(sum(records), 0) FROM tallies WHERE error_no = 0"),
            failed=one("SELECT coalesce(sum(records), 0) FROM tallies WHERE error_no != 0"),
            sources=one("SELECT count(*) FROM sources"),
            targets=one("SELECT count(*) FROM targets"),
            workloads=one("SELECT count(*) FROM workloads"),
            by_target=table(
                """SELECT t.target, sum(c.records), sum((c.error_no = 0) * c.records),
                          sum((c.error_no != 0) * c.records)
                   FROM tallies c JOIN targets t ON t.id = c.target_id
                   GROUP BY t.id ORDER BY sum(c.records) DESC, t.target""",
                ("target", "records", "valid", "failed"),
            ),
            by_template=table(
                """SELECT w.task_name, w.template_key, sum(c.records),
                          sum((c.error_no = 0) * c.records), sum((c.error_no != 0) * c.records)
                   FROM tallies c JOIN workloads w ON w.id = c.workload_id
                   GROUP BY w.task_name, w.template_key
                   ORDER BY sum(c.records) DESC, w.task_name""",
                ("template", "template_key", "records", "valid", "failed"),
            ),
            by_error=table(
                """SELECT error_no, sum(records) FROM tallies
                   GROUP BY error_no ORDER BY error_no""",
                ("error_no", "records"),
            ),
        )

    def best(self, filters: Filters | None = None, *, knobs: bool = False) -> list[BestRow]:
        """Slot winners, one row per (workload, winning record), with the slots it holds."""
        return list(self.each_best(filters, knobs=knobs))

    def each_best(
        self, filters: Filters | None = None, *, knobs: bool = False
    ) -> Iterator[BestRow]:
        """`best`'s rows one at a time, in its order, read while the store is open: one
        ordered query, so no row is held after it is yielded."""
        import json

        from tunelog.models import BestRow
        from tunelog.selection import MODEL_SLOT
        from tunelog.versions import ANSOR_VERSION

        if filters is not None and filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                yield from chosen.each_best(rest, knobs=knobs)
            return
        where, params = self._slot_filter_sql(filters or Filters())
        reader: LineReader | None = None
        if knobs:
            from tunelog.store.codec import LineReader

            reader = LineReader(self.conn)
        warnings = _MachineWarnings(self.conn, filters)
        # No BEGIN: a connection stays in one read transaction while a statement is pending, so
        # the targets that measured the workloads and the knobs' lines, read while the rows'
        # query runs, are of its state; and a generator dropped after the store is closed has
        # no transaction to end.
        rows = self.conn.execute(
            # Trials per (workload, keys, model) summed once: a subquery per row scanned
            # the tallies (keyed by target first) for each of tens of thousands of slots.
            f"""WITH trial_sums AS (
                    SELECT c.workload_id, ct.keys, ct.model, sum(c.records) AS trials
                    FROM tallies c JOIN targets ct ON ct.id = c.target_id
                    GROUP BY c.workload_id, ct.keys, ct.model)
                SELECT s.kind, s.name, r.id, t.target, w.task_name, w.template_key, w.args,
                       r.config_index, r.mean_cost, src.path, r.line, w.version,
                       n.trials, r.workload_id, w.shapes
                FROM slots s
                JOIN records r ON r.id = s.record_id
                JOIN targets t ON t.id = r.target_id
                JOIN workloads w ON w.id = s.workload_id
                JOIN sources src ON src.id = r.source_id
                LEFT JOIN trial_sums n
                  ON n.workload_id = r.workload_id AND n.keys = t.keys AND n.model = t.model
                {where}
                ORDER BY r.workload_id, r.id, s.kind DESC, s.name""",
            params,
        )
        pending: BestRow | None = None  # a record's slots are consecutive rows
        workload_id = 0
        for row in rows:
            kind, name, record_id = row[0], row[1], row[2]
            label = f"model={name}" if kind == MODEL_SLOT else name
            if pending is not None and pending.record_id == record_id:
                pending.slots.append(label)
                continue
            if pending is not None:
                pending.warnings = warnings.of(pending, workload_id)
                yield pending
            pending = BestRow(
                slots=[label],
                target=row[3],
                task_name=row[4],
                template_key=row[5],
                args=json.loads(row[6]),  # not orjson: `best` loads it only for --json
                config_index=row[7],
                mean_cost=row[8],
                source=row[9],
                line=row[10],
                log_version=row[11],
                record_id=record_id,
                trials=row[12],
                knobs=_knobs(reader.line(record_id)) if reader is not None else None,
                shapes=row[14] if row[11] != ANSOR_VERSION else None,
            )
            workload_id = int(row[13])
        if pending is not None:
            pending.warnings = warnings.of(pending, workload_id)
            yield pending

    def ansor_spellings(self, task_name: str) -> list[tuple[str, str]]:
        """(arguments, key as first written) of the auto_scheduler workloads of a task name
        (its key's hash) that keep a spelling, by id."""
        from tunelog.versions import ANSOR_VERSION

        return [
            (str(args), str(spelling))
            for args, spelling in self.conn.execute(
                """SELECT args, spelling FROM workloads
                   WHERE task_name = ? AND version = ? AND spelling IS NOT NULL ORDER BY id""",
                (task_name, ANSOR_VERSION),
            )
        ]

    def winner_lines(
        self, filters: Filters | None = None, *, top_k: int = 1
    ) -> Iterator[ExportLine]:
        """Every slot winner (or the top-k configs of each slot) with its line, by record id."""
        from tunelog.store.codec import LineReader

        if filters is not None and filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                yield from chosen.winner_lines(rest, top_k=top_k)
            return
        where, params = self._slot_filter_sql(filters or Filters())
        if top_k <= 1:
            sql = f"""SELECT DISTINCT r.id, r.workload_id, t.target, w.version
                      FROM slots s
                      JOIN records r ON r.id = s.record_id
                      JOIN targets t ON t.id = r.target_id
                      JOIN workloads w ON w.id = s.workload_id
                      {where} ORDER BY r.id"""
            reader = LineReader(self.conn)
            for rid, wid, target, version in self.conn.execute(sql, params):
                yield ExportLine(rid, wid, target, version, reader.line(rid))
            return
        yield from self._top_k_lines(where, params, top_k, LineReader(self.conn))

    def slot_holders(self) -> list[SlotHolder]:
        """Every slot and the record holding it (the two ApplyHistoryBest dictionaries)."""
        from tunelog.models import SlotHolder

        rows = self.conn.execute(
            """SELECT s.kind, s.name, w.task_name, w.template_key, w.args, r.id, r.source_id,
                      r.line, r.config_index, r.mean_cost
               FROM slots s JOIN records r ON r.id = s.record_id
               JOIN workloads w ON w.id = s.workload_id ORDER BY s.kind, s.name, w.id"""
        ).fetchall()
        return [SlotHolder(*row) for row in rows]

    def layer_inputs(
        self,
    ) -> tuple[list[tuple[int, str]], list[WorkloadInfo], list[Tally], dict[SlotKey, SlotWinner]]:
        """Targets, workloads, tallies and slot winners: what `layers.build_layers` needs.

        Reads only the small tables (never scans records), so it stays fast on large databases.
        """
        with self.snapshot():
            return self._layer_inputs()

    def _layer_inputs(
        self,
    ) -> tuple[list[tuple[int, str]], list[WorkloadInfo], list[Tally], dict[SlotKey, SlotWinner]]:

        from tunelog.layers import SlotWinner, Tally, WorkloadInfo

        targets = [(int(i), str(t)) for i, t in self.conn.execute("SELECT id, target FROM targets")]
        import json  # not orjson: the layer listings load it only for --json

        from tunelog.store.workloadfacts import FACT_COLUMNS, FactsReader

        decoded = FactsReader()
        workloads = [
            WorkloadInfo(int(i), task, tkey, json.loads(args), version, spelling, decoded(facts))
            for i, task, tkey, args, version, spelling, *facts in self.conn.execute(
                "SELECT id, task_name, template_key, args, version, spelling, "
                f"{FACT_COLUMNS} FROM workloads ORDER BY id"
            )
        ]
        tallies = [Tally(*row) for row in self.conn.execute("SELECT * FROM tallies")]
        slots = {
            (kind, name, workload_id): SlotWinner(record_id, mean, index, path, line, target)
            for kind, name, workload_id, record_id, mean, index, path, line, target in (
                self.conn.execute(
                    """SELECT s.kind, s.name, s.workload_id, s.record_id, s.mean_cost,
                              r.config_index, src.path, r.line, t.target
                       FROM slots s JOIN records r ON r.id = s.record_id
                       JOIN sources src ON src.id = r.source_id
                       JOIN targets t ON t.id = r.target_id"""
                )
            )
        }
        return targets, workloads, tallies, slots

    def winner_versions(self, filters: Filters | None = None) -> set[str]:
        """The log versions (`0.1`, `0.2`, `ansor`) of the workloads whose slots match."""
        if filters is not None and filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                return chosen.winner_versions(rest)
        where, params = self._slot_filter_sql(filters or Filters())
        sql = f"""SELECT DISTINCT w.version FROM slots s JOIN records r ON r.id = s.record_id
                  JOIN workloads w ON w.id = s.workload_id {where}"""
        return {str(version) for (version,) in self.conn.execute(sql, params)}

    def metaschedule_export(
        self, filters: Filters | None = None, *, top_k: int = 1
    ) -> list[tuple[int, bytes, bytes]]:
        """(workload id, workload line, record line) to write for a pruned MetaSchedule database.

        The workloads are those whose best valid record (the target-less slot) matches the
        filters; each keeps its `top_k` best valid records of distinct traces, ranked as
        `get_top_k` does (mean run time, then import order). Rows come in import order, so
        records of equal mean keep their order.
        """
        from tunelog.selection import ANY_TARGET_SLOT
        from tunelog.store.codec import LineReader

        where, params = self._slot_filter_sql(filters or Filters())
        where = f"{where} AND s.kind = ?" if where else "WHERE s.kind = ?"
        spellings: dict[int, str] = {}
        chosen: list[tuple[int, int]] = []
        for workload_id, record_id, spelling in self.conn.execute(
            f"""SELECT s.workload_id, s.record_id, w.spelling FROM slots s
                JOIN records r ON r.id = s.record_id
                JOIN workloads w ON w.id = s.workload_id {where}""",
            (*params, ANY_TARGET_SLOT),
        ):
            spellings[int(workload_id)] = str(spelling)
            chosen.append((int(record_id), int(workload_id)))
        if top_k > 1:
            chosen = self._metaschedule_top_k(set(spellings), top_k)
        reader = LineReader(self.conn)
        return [
            (workload_id, spellings[workload_id].encode(), reader.line(record_id))
            for record_id, workload_id in sorted(chosen)
        ]

    def _metaschedule_top_k(self, workloads: set[int], top_k: int) -> list[tuple[int, int]]:
        # One pass over the valid records, best first: a workload keeps the first (best,
        # earliest) record of each trace until it has K traces.
        traces: dict[int, set[int]] = {workload_id: set() for workload_id in workloads}
        chosen: list[tuple[int, int]] = []
        for record_id, workload_id, trace in self.conn.execute(
            """SELECT id, workload_id, config_index FROM records WHERE error_no = 0
               ORDER BY mean_cost, id"""
        ):
            seen = traces.get(workload_id)
            if seen is not None and len(seen) < top_k and trace not in seen:
                seen.add(trace)
                chosen.append((int(record_id), int(workload_id)))
        return chosen

    def metaschedule_tvm_versions(self, workload_ids: Iterable[int] | None = None) -> set[str]:
        """The TVM versions that wrote the MetaSchedule workloads (all, or those given).

        The version is kept as the workload's template key ("" when the module has none).
        """
        from tunelog.selection import METASCHEDULE_VERSION

        wanted = None if workload_ids is None else set(workload_ids)
        return {
            str(version)
            for workload_id, version in self.conn.execute(
                "SELECT id, template_key FROM workloads WHERE version = ?",
                (METASCHEDULE_VERSION,),
            )
            if wanted is None or workload_id in wanted
        }

    def has_slot_winners(self, filters: Filters | None = None) -> bool:
        """True when at least one slot matches the filters."""
        if filters is not None and filters.selects_sources:
            with self.selected(filters) as (chosen, rest):
                return chosen.has_slot_winners(rest)
        where, params = self._slot_filter_sql(filters or Filters())
        sql = f"""SELECT 1 FROM slots s JOIN records r ON r.id = s.record_id
                  JOIN workloads w ON w.id = s.workload_id {where} LIMIT 1"""
        return self.conn.execute(sql, params).fetchone() is not None

    def trials_in_import_order(self) -> Iterator[tuple[str, int, int, float]]:
        """(target string, workload id, error number, mean cost) of every record, in import order.

        Record ids follow import order (file, then line), so this is one scan of `records` by
        its primary key; the report's best-so-far curves read it.
        """
        targets = dict(self.conn.execute("SELECT id, target FROM targets").fetchall())
        rows = self.conn.execute(
            "SELECT target_id, workload_id, error_no, mean_cost FROM records ORDER BY id"
        )
        for target_id, workload_id, error_no, mean_cost in rows:
            yield targets[target_id], workload_id, error_no, mean_cost

    def _top_k_lines(
        self, where: str, params: tuple[Any, ...], top_k: int, reader: LineReader
    ) -> Iterator[ExportLine]:
        # One pass over the valid records of the wanted workloads, best first: each slot keeps
        # the first (best, earliest) measurement of a config until it has K distinct configs.
        wanted: dict[int, set[tuple[str, str]]] = {}
        for kind, name, workload_id in self.conn.execute(
            f"""SELECT s.kind, s.name, s.workload_id FROM slots s
                JOIN records r ON r.id = s.record_id
                JOIN workloads w ON w.id = s.workload_id {where}""",
            params,
        ):
            wanted.setdefault(workload_id, set()).add((kind, name))
        from tunelog.selection import slots_of

        target_slots = {
            target_id: [(s.kind, s.name) for s in slots_of(parse_target(target), "")]
            for target_id, target in self.conn.execute("SELECT id, target FROM targets")
        }
        chosen: list[int] = []
        configs: dict[tuple[str, str, int], set[int]] = {}
        # With K <= TOP_CONFIGS_KEPT, each slot's K best configs are among the configs kept per
        # (target, workload) on import; beyond that, every valid record is ranked.
        ranked = (
            """SELECT record_id, target_id, workload_id, config_index FROM top_configs
               ORDER BY workload_id, mean_cost, record_id"""
            if top_k <= TOP_CONFIGS_KEPT
            else """SELECT id, target_id, workload_id, config_index FROM records
                    WHERE error_no = 0 ORDER BY workload_id, mean_cost, id"""
        )
        for record_id, target_id, workload_id, config_index in self.conn.execute(ranked):
            slots = wanted.get(workload_id)
            if slots is None:
                continue
            for kind, name in target_slots[target_id]:
                if (kind, name) not in slots:
                    continue
                seen = configs.setdefault((kind, name, workload_id), set())
                if len(seen) < top_k and config_index not in seen:
                    seen.add(config_index)
                    chosen.append(record_id)
        ordered = sorted(set(chosen))
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for rid, wid, target, version in self.conn.execute(
                f"""SELECT r.id, r.workload_id, t.target, w.version
                    FROM records r JOIN targets t ON t.id = r.target_id
                    JOIN workloads w ON w.id = r.workload_id
                    WHERE r.id IN ({marks}) ORDER BY r.id""",
                chunk,
            ):
                yield ExportLine(rid, wid, target, version, reader.line(rid))

    def _slot_filter_sql(self, filters: Filters) -> tuple[str, tuple[Any, ...]]:
        """A WHERE clause over `slots s JOIN records r` for the filters (see tunelog.filters).

        Targets and task names are matched in Python by the one definition of the filters; the
        tables they live in are small. With `for_target`, a workload keeps only the slot
        apply_history_best answers it from: the first held one in `query_order`.
        """
        clauses: list[str] = []
        params: list[Any] = []
        # Source filters are answered by the database they select (`selected`) first.
        assert not filters.selects_sources, "call through Store.selected"
        if filters.selects_targets:
            ids = [
                int(target_id)
                for target_id, target in self.conn.execute("SELECT id, target FROM targets")
                if filters.matches_target(parse_target(target))
            ]
            clauses.append(f"r.target_id IN ({_id_list(ids)})")
        if filters.selects_tasks:
            ids = [
                int(workload_id)
                for workload_id, task_name in self.conn.execute(
                    "SELECT id, task_name FROM workloads"
                )
                if filters.matches_task(task_name)
            ]
            clauses.append(f"s.workload_id IN ({_id_list(ids)})")
        target = filters.query_target
        if target is not None:
            from tunelog.selection import query_order

            order = [(slot.kind, slot.name) for slot in query_order(target, "")]
            ranks = " UNION ALL ".join(["SELECT ?, ?, ?"] * len(order))
            # The answering slot: the held slot of the lowest rank for the same workload.
            clauses.append(
                f"""(s.kind, s.name) IN (
                       WITH q(kind, name, rank) AS ({ranks})
                       SELECT q.kind, q.name FROM q
                       WHERE q.rank = (SELECT min(q2.rank) FROM q q2 JOIN slots s2
                                       ON s2.kind = q2.kind AND s2.name = q2.name
                                       WHERE s2.workload_id = s.workload_id))"""
            )
            for rank, (kind, name) in enumerate(order):
                params += [kind, name, rank]
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return where, tuple(params)


class _MachineWarnings:
    """The warnings of `best`'s rows, whose winner another machine measured than a target
    asked about, for rows coming in workload id order.

    Asked about: the --for-target string, or else every target that measured the same
    workload and competes for one of the row's slots (its query may get this record). The
    targets that measured each workload are read alongside, in the same order, one workload
    at a time; each (target, slots) and (asked, measured) pair is judged once.
    """

    def __init__(self, conn: sqlite3.Connection, filters: Filters | None) -> None:
        self._conn = conn
        self._asked_for = filters.for_target if filters is not None else None
        self._measured: Iterator[tuple[int, str]] | None = None  # read on the first row
        self._next: tuple[int, str] | None = None
        self._workload = -1
        self._targets: list[str] = []
        self._competes: dict[tuple[str, tuple[str, ...]], bool] = {}
        self._warning_of: dict[tuple[str, str], str | None] = {}

    def of(self, row: BestRow, workload_id: int) -> list[str]:
        """The row's warnings; `workload_id` never smaller than the previous call's."""
        from tunelog.machines import cross_machine_warning

        if self._asked_for is not None:
            asked = [self._asked_for]
        else:
            slots = tuple(row.slots)
            asked = []
            for target in self._measured_by(workload_id):
                verdict = self._competes.get((target, slots))
                if verdict is None:
                    verdict = self._competes[(target, slots)] = _competes(target, slots)
                if verdict:
                    asked.append(target)
        warnings = []
        for target in asked:
            pair = (target, row.target)
            if pair not in self._warning_of:
                self._warning_of[pair] = cross_machine_warning(*pair)
            warning = self._warning_of[pair]
            if warning is not None:
                warnings.append(warning)
        return warnings

    def _measured_by(self, workload_id: int) -> list[str]:
        """The targets with tallies of the workload, sorted."""
        if workload_id == self._workload:
            return self._targets
        if self._measured is None:
            self._measured = iter(
                self._conn.execute(
                    """SELECT DISTINCT c.workload_id, t.target FROM tallies c
                       JOIN targets t ON t.id = c.target_id ORDER BY c.workload_id"""
                )
            )
            self._next = next(self._measured, None)
        found: set[str] = set()
        while self._next is not None and self._next[0] <= workload_id:
            if self._next[0] == workload_id:
                found.add(str(self._next[1]))
            self._next = next(self._measured, None)
        self._workload, self._targets = workload_id, sorted(found)
        return self._targets


def _competes(target: str, slots: Sequence[str]) -> bool:
    """Whether a record of `target` competes for one of these slots (`model=x` or a key)."""
    parsed = parse_target(target)
    return any(
        (slot.removeprefix("model=") == parsed.model)
        if slot.startswith("model=")
        else slot in parsed.keys
        for slot in slots
    )


def _id_list(ids: Sequence[int]) -> str:
    """Integer ids as SQL list text (ints only, so nothing to quote); `NULL` when empty."""
    return ",".join(str(int(i)) for i in ids) or "NULL"


def _knobs(raw: bytes) -> list[list[object]] | None:
    from tunelog.recordmodels import TuningRecord
    from tunelog.records import parse_line

    parsed = parse_line(raw)
    if isinstance(parsed, TuningRecord):
        return [[name, value] for name, _type, value in parsed.entity]
    return None


def open_store(path: str | Path, *, create: bool = True) -> Store:
    """Open (creating and migrating if needed) the database at `path`.

    `create=False`: raise DatabaseNotFoundError when there is no file at `path`.
    """
    return Store(path, create=create)
