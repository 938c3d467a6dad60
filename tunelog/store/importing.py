"""Importing one log into the Store: a transaction per file, read on where it stopped."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

from tunelog.store.holdings import holds_more_lines
from tunelog.store.knownfiles import KnownFiles
from tunelog.store.resumetail import forget_rejected_tail, grown_past_rejected_tail, unchanged_since

if TYPE_CHECKING:
    from tunelog.importreport import FileReport
    from tunelog.inputs import LineEnd, OpenedLog
    from tunelog.records import ScannedLine
    from tunelog.store.importer import ImportWriter, ProgressCallback
    from tunelog.store.resume import ResumePoint

# The importer and the record models (pydantic, msgspec) are imported where a method needs
# them, which keeps a read command's start-up short.


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


class Importing(KnownFiles):
    """`import_log` and its steps: new files, grown files (resume) and known bytes."""

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
        options = (label, strict, repair, lines, progress, follow, scanner)
        for _attempt in range(2):
            try:
                return self._import_log(opened, *options, recheck=True)
            except _StaleResumePoint:
                continue  # another process imported the file while this one waited: again
        return self._import_log(opened, *options, recheck=False)

    def _import_log(
        self,
        opened: OpenedLog,
        label: str | None,
        strict: bool,
        repair: bool,
        lines: Iterable[bytes] | None,
        progress: ProgressCallback | None,
        follow: bool,
        scanner: Callable[[bytes], ScannedLine] | None,
        *,
        recheck: bool,
    ) -> FileReport:
        """`import_log` once; `recheck`: _StaleResumePoint when, once this process holds the
        write lock, the file's resume point is no longer the one read before (another process
        imported it meanwhile: read in full, it was a second source of the same file)."""
        prefix_changed = tail_read = False
        seen = None  # the file's resume point as read before the write lock
        if lines is None and not opened.source.is_stdin:
            from tunelog.store import resume

            for _attempt in range(3 if scanner is None else 0):
                point = seen = resume.load(self.conn, opened.source.path)
                if (
                    point is not None
                    and point.tail
                    and not grown_past_rejected_tail(self.conn, point)
                ):
                    if unchanged_since(point, opened):  # the bytes that import read
                        if progress is not None:
                            progress(point.end.offset + point.tail)
                        return self._known_report(
                            point.source_id, opened.source.path, strict, label=label
                        )
                    # Its last line was read without its line end: it may have grown since.
                    tail_read = True
                    break
                if point is None or point.repair != repair:
                    break
                try:
                    resumed = self._resume(opened, point, label, strict, progress, follow)
                except _StaleResumePoint:
                    continue  # another process imported the file meanwhile: look again
                if resumed is not None:
                    return resumed
                prefix_changed = True
                break
            # A MetaSchedule records file's lines mean what its workload file says: the same
            # bytes beside another workload file are other records (read, line by line).
            known = self._known_file(opened, repair=repair) if scanner is None else None
            if known is not None:
                if progress is not None:
                    progress(known.size)
                if known.copy:
                    report = self._import_copy(known, opened, label, strict)
                else:
                    report = self._known_report(
                        known.source_id, opened.source.path, strict, label=label
                    )
                report.prefix_changed = prefix_changed
                return report
        from tunelog.importreport import FileReport
        from tunelog.records import scan_content
        from tunelog.store.importer import ImportWriter

        # Read in full where it was imported before (not the same bytes: those are known).
        report = FileReport(path=opened.source.path, prefix_changed=prefix_changed or tail_read)
        with self._writing(report):
            resumable = lines is None and not opened.source.is_stdin and scanner is None
            if recheck and resumable:
                from tunelog.store import resume

                if resume.load(self.conn, opened.source.path) != seen:
                    raise _StaleResumePoint
            with ImportWriter(
                self.conn,
                report,
                repair=repair,
                scanner=scan_content if scanner is None else scanner,
                known_workloads=self._known_workloads(),
            ) as writer:
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
                return self._known_report(point.source_id, opened.source.path, strict, label=label)
            report = FileReport(path=opened.source.path, skipped_lines=point.end.lines)
            with self._writing(report):
                from tunelog.store import resume

                if resume.load(self.conn, opened.source.path) != point:
                    raise _StaleResumePoint  # read before the write lock: moved on since
                if point.tail:  # its last line, rejected unfinished, is read again
                    forget_rejected_tail(self.conn, point)
                with ImportWriter(
                    self.conn,
                    report,
                    repair=point.repair,
                    source_id=point.source_id,
                    first_line=point.end.lines,
                    known_workloads=self._known_workloads(),
                ) as writer:
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
        if self._rolled_back(report, strict):
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

    def _rolled_back(self, report: FileReport, strict: bool) -> bool:
        """With --strict, a file with a rejected line keeps nothing, nor does a file whose
        compressed data failed its check (`garbled`: any line read may be wrong, and would
        decide `best`): its new records are counted as discarded, so the report still
        accounts for every line."""
        if not ((strict and report.rejected) or report.garbled):
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
        if self._rolled_back(report, strict):
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
        if (
            earlier is not None
            and report.new == 0
            and not holds_more_lines(report.new, report.duplicates, conn, earlier[0])
        ):
            # The same bytes imported before (with the other --repair): only note the
            # re-import, with this --label. The counts are this read's; the records the
            # source holds say it is a log all the same (`held_before`).
            conn.execute("ROLLBACK")
            self._note_reimport(report, earlier[0], opened.source.path, label)
            (earlier_repair,) = conn.execute(
                "SELECT repair FROM sources WHERE id = ?", (earlier[0],)
            ).fetchone()
            report.other_repair = bool(earlier_repair) != writer.repair
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
