"""Files imported before: the same bytes again, or a copy of them at another path."""

from __future__ import annotations

import dataclasses
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from tunelog.rules.lineaccounting import ALL_DUPLICATES_SQL, duplicates_when_moved
from tunelog.store.connection import id_list
from tunelog.store.sources import Sources

if TYPE_CHECKING:
    from tunelog.importreport import FileReport
    from tunelog.inputs import OpenedLog


class _KnownFile(NamedTuple):
    source_id: int
    size: int
    copy: bool  # the same bytes at a path never imported as that source


class KnownFiles(Sources):
    """Reports for files whose bytes were imported before, without parsing them again."""

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
            f"""SELECT source_id, path FROM source_imports WHERE source_id IN ({id_list(same)})
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
            from tunelog.store.sourceids import next_source_id

            source_id = next_source_id(conn)
            conn.execute(
                f"""INSERT INTO sources (id, path, label, sha256, size, lines, records,
                                        duplicates, comments, blank, rejected, imported_at,
                                        split, repaired, repair)
                   SELECT ?, ?, ?, sha256, size, lines, 0, {ALL_DUPLICATES_SQL}, comments,
                          blank, rejected, ?, split, repaired, repair
                   FROM sources WHERE id = ?""",
                (source_id, stored_path(opened.source.path), label, now, original),
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
        self,
        source_id: int,
        path: str,
        strict: bool,
        *,
        note: bool = True,
        label: str | None = None,
    ) -> FileReport:
        """What re-importing the bytes of a source reports: every record a duplicate.

        `note`: record the import as one more of that source (not for a copy), and `label`
        as its label, as a grown file's import does (the later import's label)."""
        from tunelog.importreport import DAMAGED_REJECT, FileReport, damaged_text
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
            duplicates=duplicates_when_moved(records, duplicates, 0),  # every line seen
            comments=comments,
            blank=blank,
            rejected=rejected,
            repaired=repaired,
            rejects=self.rejects(source_id, limit=REJECTS_KEPT_IN_REPORT),
            sha256=sha256 or None,
        )
        # A damaged file is damaged again: its reading stopped where the stored reject says.
        (damaged,) = self.conn.execute(
            "SELECT max(reason) FROM rejects WHERE source_id = ? AND reason LIKE ?",
            (source_id, DAMAGED_REJECT + " %"),
        ).fetchone()
        report.damaged = damaged_text(damaged) if damaged else None
        if strict and rejected:
            report.rolled_back = True  # as the import proper would, before noticing the rest
        elif note:
            self._note_reimport(report, source_id, path, label)
        else:
            report.already_imported_as = f"#{source_id} {source_path}"
            report.held_before = records
        return report

    def _note_reimport(
        self, report: FileReport, source_id: int, path: str, label: str | None
    ) -> None:
        """Note an import of bytes a source holds as one more import of it, with this
        `label`; the report names the source and the records it holds (`held_before`)."""
        (source_path, records) = self.conn.execute(
            "SELECT path, records FROM sources WHERE id = ?", (source_id,)
        ).fetchone()
        report.already_imported_as = f"#{source_id} {source_path}"
        report.held_before = int(records)
        # A write as an import's: another program holding the lock is said as for one
        # (DatabaseBusyError), not as SQLite's "database is locked".
        with self._writing(report):
            self._record_import(source_id, path)
            if label is not None:
                report.relabelled = self._relabelled(source_id, label)
            self.conn.execute("COMMIT")

    def _relabelled(self, source_id: int, label: str) -> bool:
        """Give the source this label; whether it had another (or none)."""
        return (
            self.conn.execute(
                "UPDATE sources SET label = ? WHERE id = ? AND label IS NOT ?",
                (label, source_id, label),
            ).rowcount
            > 0
        )

    def _record_import(self, source_id: int, path: str) -> None:
        """Note a re-import of a known content (one `sources` row per content)."""
        from tunelog.inputs import stored_path

        now = datetime.now(UTC).isoformat(timespec="seconds")
        self.conn.execute(
            "INSERT INTO source_imports (source_id, path, imported_at) VALUES (?, ?, ?)",
            (source_id, stored_path(path), now),
        )
