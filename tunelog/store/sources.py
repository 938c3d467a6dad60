"""The Store's sources: listing, naming, selecting (`Store.selected`) and removing them."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Self

from tunelog.exceptions import DatabaseUnavailableError, UnknownSourceError
from tunelog.filters import Filters
from tunelog.store.connection import Connection

if TYPE_CHECKING:
    from tunelog.importreport import RejectedLine
    from tunelog.models import Source
    from tunelog.rules.sourcenames import SourceNames
    from tunelog.store.removal import RemovedSource


class Sources(Connection):
    """Which sources a database holds, which ones a user named, and the database they make."""

    def sources(self) -> list[Source]:
        """Imported files, oldest first."""
        from tunelog.models import Source, SourceImport

        with self.snapshot():
            rows = self.conn.execute(
                """SELECT id, path, label, sha256, size, lines, records, duplicates, comments,
                          blank, rejected, imported_at, merged_from, split, repaired
                   FROM sources ORDER BY id"""
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
        found = [
            Source(sid, path, label, sha256, size, lines, records, duplicates, comments, blank,
                   rejected, imported_at, merged_from, split=split, repaired=repaired)
            for (sid, path, label, sha256, size, lines, records, duplicates, comments, blank,
                 rejected, imported_at, merged_from, split, repaired) in rows
        ]  # fmt: skip
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

    def source_names(self) -> list[SourceNames]:
        """What each source can be named by (`rules.sourcenames`): its id, its label and the
        paths its file was imported from, oldest first."""
        from tunelog.rules.sourcenames import SourceNames

        imports: dict[int, list[str]] = {}
        for source_id, path in self.conn.execute(
            "SELECT source_id, path FROM source_imports ORDER BY rowid"
        ):
            imports.setdefault(int(source_id), []).append(str(path))
        return [
            SourceNames(int(i), label, (str(path), *imports.get(int(i), ())))
            for i, path, label in self.conn.execute(
                "SELECT id, path, label FROM sources ORDER BY id"
            )
        ]

    def selected_sources(self, filters: Filters) -> list[int]:
        """Ids of the sources `--source` (an id or a path, see `rules.sourcenames`) and
        `--label` select, oldest first; UnknownSourceError when none."""
        from tunelog.rules.sourcenames import named_by_label, sources_named

        known = self.source_names()
        ids = [s.id for s in known]
        if filters.source is not None:
            ids = sources_named(filters.source, known)
        if filters.label is not None:
            labelled = set(named_by_label(filters.label, known))
            ids = [i for i in ids if i in labelled]
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

    def selected_targets(self, filters: Filters) -> dict[int, str] | None:
        """{id: target string} of the targets `--target` names, by the filter's own rule
        (`Filters.matches_target`); None without it."""
        if filters.target is None:
            return None
        from tunelog.targets import parse_target

        return {
            int(i): str(target)
            for i, target in self.conn.execute("SELECT id, target FROM targets")
            if filters.matches_target(parse_target(str(target)))
        }

    @contextmanager
    def selected(
        self, filters: Filters | None, *, target_records: bool = False
    ) -> Iterator[tuple[Self, Filters]]:
        """The database the filters' `--source`/`--label` select, and the other filters.

        A source is the record lines its file held (see store.holdings), so a question about
        some sources is answered by what importing only their files gives: a temporary
        database they are merged into, in import order (slots, tallies, trial runs and line
        numbers are theirs). `target_records` (the slot winners `best` and `export` list):
        `--target` selects too, a database of only its target's records, so that its records
        compete among themselves, as TVM given only them decides (in the whole database they
        may lose a key slot to another target's); so do `--target-key` and `--model` over
        MetaSchedule records (`_answering_targets`), the other records all kept. Without those
        filters: this store and the filters unchanged. UnknownSourceError when no source
        matches.
        """
        filters = filters or Filters()
        targets = self._answering_targets(filters) if target_records else None
        # --target-key/--model: their targets' records alone answer MetaSchedule's one slot
        # per workload; AutoTVM's and auto_scheduler's slots are answered from every record
        # (as TVM loading the whole log does), the filters then choosing among the winners.
        metaschedule_only = targets is not None and filters.target is None
        if not filters.selects_sources and targets is None:
            yield self, filters.with_target_settled() if target_records else filters
            return
        import tempfile

        from tunelog.store.merging import copy_sources

        every = [int(i) for (i,) in self.conn.execute("SELECT id FROM sources")]
        ids = self.selected_sources(filters) if filters.selects_sources else every
        rest = filters.without_sources()
        if targets is not None:
            rest = replace(rest, target=None)
            (known,) = self.conn.execute("SELECT count(*) FROM targets").fetchone()
            if len(targets) == known:
                targets = None  # every target's records: no record to leave out
        if sorted(ids) == sorted(every) and targets is None:  # this database is the answer
            yield self, rest.with_target_settled() if target_records else rest
            return
        if sorted(ids) == sorted(every) and targets and self._stand_alone(targets):
            # Its records hold every slot they compete for: this database's, filtered.
            yield self, filters.without_sources().with_target_settled()
            return
        if targets is not None and not targets:  # no target matches: an empty database answers
            ids = []
        with (
            tempfile.TemporaryDirectory(prefix="tunelog-selection-") as tmp,
            type(self)(os.path.join(tmp, "selection.db")) as chosen,
        ):
            copy_sources(
                self,
                chosen,
                ids,
                None if targets is None else set(targets),
                metaschedule_only=metaschedule_only,
            )
            chosen.fill_workload_facts()
            # Of only the selected targets' records, the target filters keep every winner.
            yield chosen, rest if targets is None else rest.with_target_settled()

    def _answering_targets(self, filters: Filters) -> dict[int, str] | None:
        """The targets whose records alone answer `best` and `export` (`selected`'s
        `target_records`): `--target`'s; `--target-key`'s and `--model`'s when their records
        hold a MetaSchedule workload, whose one slot every target competes for (the whole
        database's winner there may be another target's: filtering it out would say the
        selected records decide nothing). None: the filters keep this database's winners."""
        if filters.target_settled:
            return None
        if filters.target is not None:
            return self.selected_targets(filters)
        if filters.target_key is None and filters.model is None:
            return None
        from tunelog.targets import parse_target

        matched = {
            int(i): str(target)
            for i, target in self.conn.execute("SELECT id, target FROM targets")
            if filters.matches_target(parse_target(str(target)))
        }
        return matched if matched and self._holds_metaschedule(matched) else None

    def _holds_metaschedule(self, targets: Mapping[int, str]) -> bool:
        """Whether these targets' records hold a MetaSchedule workload."""
        from tunelog.versions import METASCHEDULE_VERSION

        mine = ",".join(str(int(i)) for i in targets)
        found = self.conn.execute(
            f"""SELECT 1 FROM tallies a JOIN workloads w ON w.id = a.workload_id
                WHERE a.target_id IN ({mine}) AND w.version = ? LIMIT 1""",
            (METASCHEDULE_VERSION,),
        ).fetchone()
        return found is not None

    def _stand_alone(self, targets: Mapping[int, str]) -> bool:
        """Whether these targets' records decide here as in a database of only them: no other
        target shares a group (keys and -model: the trials counted) with one of them, or
        measured a workload of theirs under a slot they compete for, and none of their
        workloads is MetaSchedule's (every target competes for its one slot). Then `--target`
        filters this database's slot winners, without building one of its records."""
        from tunelog.rules.slots import slots_of, target_group
        from tunelog.targets import parse_target

        parsed = {int(i): parse_target(str(t)) for i, t in self.conn.execute(
            "SELECT id, target FROM targets"
        )}  # fmt: skip
        groups = {target_group(parsed[i]) for i in targets}
        pairs = {(s.kind, s.name) for i in targets for s in slots_of(parsed[i], "")}
        rivals = []
        for i, target in parsed.items():
            if i in targets:
                continue
            if target_group(target) in groups:
                return False
            if pairs & {(s.kind, s.name) for s in slots_of(target, "")}:
                rivals.append(i)
        if self._holds_metaschedule(targets):
            return False
        mine = ",".join(str(int(i)) for i in targets)
        if not rivals:
            return True
        shared = self.conn.execute(
            f"""SELECT 1 FROM tallies b JOIN tallies a
                ON a.target_id IN ({mine}) AND a.workload_id = b.workload_id
                WHERE b.target_id IN ({",".join(map(str, rivals))}) LIMIT 1"""
        ).fetchone()
        return shared is None

    def keep_label(self, source_id: int, replaced: Sequence[int]) -> None:
        """Give a source without a label the first label of the sources it replaces (a
        --repair read of bytes an earlier import rejected keeps that import's --label)."""
        ids = ",".join(str(int(i)) for i in replaced) or "NULL"
        self.conn.execute(
            f"""UPDATE sources SET label = (SELECT label FROM sources WHERE id IN ({ids})
                                            AND label IS NOT NULL ORDER BY id LIMIT 1)
                WHERE id = ? AND label IS NULL""",
            (source_id,),
        )

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

    def remove_sources(self, ref: str) -> list[RemovedSource]:
        """Remove the sources `ref` names (an id, else a label, else a path: see
        `rules.sourcenames`), in one transaction.

        The database becomes what importing only the remaining files gives (see
        `tunelog.store.removal`). UnknownSourceError when nothing matches.
        """
        from tunelog.store.removal import remove_sources

        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise DatabaseUnavailableError(f"cannot write to {self.path}: {exc}") from exc
        try:
            ids = self.sources_named(ref)
            self._workload_ids = {}  # removal deletes the workloads left without records
            removed = remove_sources(self.conn, ids)
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        return removed

    def sources_named(self, ref: str) -> list[int]:
        """The sources `ref` names, as `remove_sources` reads it: an id, else a label, else a
        path (`rules.sourcenames`). UnknownSourceError when nothing matches."""
        from tunelog.rules.sourcenames import sources_named

        ids = sources_named(ref, self.source_names(), labels=True)
        if not ids:
            raise UnknownSourceError(
                f"no imported source has id, label or path {ref!r}: see `tunelog sources`"
            )
        return ids
