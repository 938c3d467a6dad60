"""Incremental import: a file grown since it was imported from the same path is read on from
where that import stopped; anything else about it (truncated, rewritten, another path,
compressed, another --repair) is read in full and deduplicated as before."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import (
    EDGE_LINES,
    SHORT_LINES,
    X86_LINES,
    assert_run_marks_kept,
    assert_tallies_match_records,
    database_contents,
    one_shot,
)
from tunelog.inputs import LogInput, OpenedLog
from tunelog.models import FileReport
from tunelog.store import Store, importer, resume


def import_one(store: Store, log: Path, **options: Any) -> FileReport:
    (report,) = tunelog.import_paths(store, [str(log)], **options)
    assert report.accounted, report
    return report


def counts(report: FileReport) -> tuple[int, ...]:
    return (
        report.skipped_lines,
        report.lines,
        report.new,
        report.duplicates,
        report.comments,
        report.blank,
        report.rejected,
    )


@pytest.fixture
def parsed_lines(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of lines each ImportWriter parsed (ImportWriter.run counted)."""
    parsed: list[int] = []
    real_run = importer.ImportWriter.run

    def counting_run(self: importer.ImportWriter, lines: Any, *args: Any) -> None:
        real_run(self, lines, *args)
        parsed.append(self.report.lines)

    monkeypatch.setattr(importer.ImportWriter, "run", counting_run)
    return parsed


def test_appended_lines_are_the_only_lines_read(
    store: Store, tmp_path: Path, parsed_lines: list[int]
) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:120]))
    first = import_one(store, log)
    with log.open("ab") as out:
        out.writelines(EDGE_LINES + X86_LINES[100:130])  # 10 lines repeat earlier ones
    grown = import_one(store, log)
    assert parsed_lines == [120, 19 + 30]
    assert counts(grown) == (120, 49, 8 + 10, 1 + 20, 6, 1, 3)
    assert grown.source_id == first.source_id
    assert [(r.line, r.reason[:12]) for r in grown.rejects] == [
        (135, "auto_schedul"),
        (136, "invalid JSON"),
        (137, "tab-separate"),
    ]
    (source,) = store.sources()
    assert (source.lines, source.records, source.duplicates) == (169, 138, 21)
    assert_tallies_match_records(store.conn)
    assert_run_marks_kept(store.conn)
    # The same database as one import of the final file: ids, line numbers, slots, tallies.
    assert database_contents(store.conn) == one_shot(tmp_path, log)


def test_a_grown_file_is_recognised_under_another_spelling_of_its_path(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("tuning.log").write_bytes(b"".join(X86_LINES[:50]))
    import_one(store, Path("tuning.log"))
    with Path("tuning.log").open("ab") as out:
        out.writelines(X86_LINES[50:60])
    Path("sub").mkdir()
    assert counts(import_one(store, Path("./sub/../tuning.log"))) == (50, 10, 10, 0, 0, 0, 0)
    Path("link.log").symlink_to(tmp_path / "tuning.log")
    with Path("tuning.log").open("ab") as out:
        out.writelines(X86_LINES[60:61])
    assert counts(import_one(store, Path("link.log"))) == (60, 1, 1, 0, 0, 0, 0)


def test_an_unchanged_file_is_already_imported_without_reading_it(
    store: Store, tmp_path: Path, parsed_lines: list[int]
) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:50]))
    import_one(store, log)
    with log.open("ab") as out:
        out.writelines(X86_LINES[50:60])
    import_one(store, log)
    again = import_one(store, log)
    assert parsed_lines == [50, 10]
    assert again.already_imported_as == f"#1 {log}"
    assert counts(again) == (0, 60, 0, 60, 0, 0, 0)


@pytest.mark.parametrize("cut", [1, 300, len(X86_LINES[60]) - 1])
def test_a_partial_last_line_is_held_back_while_following(
    store: Store, tmp_path: Path, cut: int
) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:60]) + X86_LINES[60][:cut])
    first = import_one(store, log, follow=True)
    assert (first.lines, first.new, first.rejected, first.held_back_bytes) == (60, 60, 0, cut)
    with log.open("ab") as out:
        out.write(X86_LINES[60][cut:] + X86_LINES[61])
    second = import_one(store, log, follow=True)
    assert counts(second) == (60, 2, 2, 0, 0, 0, 0)
    assert second.held_back_bytes == 0
    assert database_contents(store.conn) == one_shot(tmp_path, log)


def test_a_half_written_line_alone_adds_nothing(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:10]))
    import_one(store, log, follow=True)
    before = database_contents(store.conn)
    with log.open("ab") as out:
        out.write(X86_LINES[10][:100])
    report = import_one(store, log, follow=True)
    assert (report.lines, report.held_back_bytes, report.already_imported_as) == (
        0,
        100,
        f"#1 {log}",
    )
    assert database_contents(store.conn) == before


def test_a_partial_last_line_rejected_by_a_plain_import_is_read_again_from_its_start(
    store: Store, tmp_path: Path, parsed_lines: list[int]
) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:20]) + X86_LINES[20][:100])
    first = import_one(store, log)  # `import` takes a file as it is: the fragment is rejected
    assert (first.lines, first.new, first.rejected) == (21, 20, 1)
    again = import_one(store, log)  # not grown: the same bytes
    assert again.already_imported_as is not None and parsed_lines == [21]
    with log.open("ab") as out:
        out.write(X86_LINES[20][100:] + X86_LINES[21])
    second = import_one(store, log)
    # One source: the finished line replaces its rejection, the lines before are not read.
    assert counts(second) == (20, 2, 2, 0, 0, 0, 0) and parsed_lines == [21, 2]
    assert database_contents(store.conn) == one_shot(tmp_path, log)
    (source,) = store.sources()
    assert (source.lines, source.records, source.rejected) == (22, 22, 0)


def test_a_partial_last_line_taken_as_a_record_is_read_again_in_full(
    store: Store, tmp_path: Path
) -> None:
    # A whole record without its line end: whether it was finished is not known.
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:20]) + X86_LINES[20].rstrip(b"\n"))
    first = import_one(store, log)
    assert (first.lines, first.new, first.rejected) == (21, 21, 0)
    with log.open("ab") as out:
        out.write(b"\n" + X86_LINES[21])
    second = import_one(store, log)
    assert counts(second) == (0, 22, 1, 21, 0, 0, 0)
    assert store.stats().records == 22


def test_a_truncated_file_is_read_in_full(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:80]))
    import_one(store, log)
    log.write_bytes(b"".join(X86_LINES[:40] + SHORT_LINES[:5]))
    report = import_one(store, log)
    assert report.prefix_changed
    assert counts(report) == (0, 45, 5, 40, 0, 0, 0)
    # From now on the new content is what the path resumes from.
    with log.open("ab") as out:
        out.writelines(SHORT_LINES[5:8])
    assert counts(import_one(store, log)) == (45, 3, 3, 0, 0, 0, 0)
    assert_tallies_match_records(store.conn)
    assert_run_marks_kept(store.conn)


def test_a_rewritten_prefix_of_the_same_size_is_read_in_full(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:30]))
    import_one(store, log)
    changed = X86_LINES[0].replace(b'"llvm', b'"LLVM', 1)
    assert len(changed) == len(X86_LINES[0]) and changed != X86_LINES[0]
    log.write_bytes(b"".join([changed, *X86_LINES[1:30], *X86_LINES[30:35]]))
    report = import_one(store, log)
    assert report.prefix_changed
    assert counts(report) == (0, 35, 6, 29, 0, 0, 0)
    assert store.stats().records == 36


def test_a_copy_at_another_path_gets_its_own_resume_point(
    store: Store, tmp_path: Path, parsed_lines: list[int]
) -> None:
    """A copy is recognised by its bytes (nothing parsed) and becomes a source of its own, with
    the original's resume point: when it grows, only what follows is read, into the copy."""
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:30]))
    import_one(store, log)
    copy = tmp_path / "copy.log"
    shutil.copyfile(log, copy)
    assert import_one(store, copy).already_imported_as == f"#1 {log}"
    with copy.open("ab") as out:
        out.writelines(X86_LINES[30:35])
    report = import_one(store, copy)
    assert counts(report) == (30, 5, 5, 0, 0, 0, 0)
    assert parsed_lines == [30, 5]
    original, grown = store.sources()
    assert (original.path, grown.path) == (str(log), str(copy))
    assert (original.held, grown.held, grown.records, grown.duplicates) == (30, 35, 5, 30)


def test_compressed_files_are_read_in_full(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tuning.log.gz"
    log.write_bytes(gzip.compress(b"".join(X86_LINES[:30])))
    import_one(store, log)
    log.write_bytes(gzip.compress(b"".join(X86_LINES[:35])))
    assert counts(import_one(store, log)) == (0, 35, 5, 30, 0, 0, 0)
    assert store.conn.execute("SELECT count(*) FROM resume_points").fetchone() == (0,)


def test_another_repair_setting_reads_in_full(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:30]))
    import_one(store, log)
    with log.open("ab") as out:
        out.writelines(X86_LINES[30:35])
    assert counts(import_one(store, log, repair=True)) == (0, 35, 5, 30, 0, 0, 0)
    with log.open("ab") as out:
        out.writelines(X86_LINES[35:36])
    assert counts(import_one(store, log, repair=True)) == (35, 1, 1, 0, 0, 0, 0)


def test_strict_rolls_back_only_the_appended_part(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:30]))
    import_one(store, log, strict=True)
    before = database_contents(store.conn)
    points = store.conn.execute("SELECT * FROM resume_points").fetchall()
    with log.open("ab") as out:
        out.writelines([*X86_LINES[30:33], b'{"input": [\n'])
    report = import_one(store, log, strict=True)
    assert report.rolled_back and (report.new, report.discarded) == (0, 3)
    assert database_contents(store.conn) == before
    assert store.conn.execute("SELECT * FROM resume_points").fetchall() == points
    lenient = import_one(store, log)
    assert counts(lenient) == (30, 4, 3, 0, 0, 0, 1)


def test_an_interrupted_resumed_import_leaves_the_database_as_before(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:30]))
    import_one(store, log)
    before = database_contents(store.conn)
    points = store.conn.execute("SELECT * FROM resume_points").fetchall()
    with log.open("ab") as out:
        out.writelines(X86_LINES[30:60])
    real_add = importer.ImportWriter.add

    def interrupted_add(self: importer.ImportWriter, line_no: int, *args: Any) -> None:
        if line_no == 45:
            raise KeyboardInterrupt
        real_add(self, line_no, *args)

    with monkeypatch.context() as patch:
        patch.setattr(importer.ImportWriter, "add", interrupted_add)
        with pytest.raises(KeyboardInterrupt):
            tunelog.import_paths(store, [str(log)])
    assert not store.conn.in_transaction
    assert database_contents(store.conn) == before
    assert store.conn.execute("SELECT * FROM resume_points").fetchall() == points
    assert counts(import_one(store, log)) == (30, 30, 30, 0, 0, 0, 0)
    assert database_contents(store.conn) == one_shot(tmp_path, log)


def test_record_ids_are_never_reused_when_appended_lines_are_duplicates(
    store: Store, tmp_path: Path
) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:30]))
    import_one(store, log)
    with log.open("ab") as out:
        out.writelines(X86_LINES[:5])  # five duplicates take ids 31-35, then are dropped
    assert counts(import_one(store, log)) == (30, 5, 0, 5, 0, 0, 0)
    with log.open("ab") as out:
        out.writelines(X86_LINES[30:31])
    import_one(store, log)
    assert store.conn.execute("SELECT max(id) FROM records").fetchone() == (36,)
    assert database_contents(store.conn) == one_shot(tmp_path, log)


def test_a_line_end_inside_a_read_chunk_is_the_resume_point(tmp_path: Path) -> None:
    """The resume point is the end of the last complete line, whatever the read sizes."""
    log = tmp_path / "big.log"
    data = b"".join(X86_LINES) * 40 + b"partial"
    log.write_bytes(data)
    with OpenedLog(LogInput(str(log))) as opened:
        lines = list(opened.lines())
        end = opened.line_end(len(lines) - 1)
    assert (end.offset, end.lines) == (len(data) - len(b"partial"), len(lines) - 1)
    with OpenedLog.after(LogInput(str(log)), end) as resumed:  # type: ignore[union-attr]
        assert list(resumed.lines()) == [b"partial"]
    log.write_bytes(b"x" + data[1:])
    assert OpenedLog.after(LogInput(str(log)), end) is None


def test_a_resume_point_moved_on_by_another_import_is_read_again(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two importers of one growing file: the one that waited for the write lock must not
    read again the lines the other just imported (they would count twice in the source)."""
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:30]))
    import_one(store, log)
    stale = resume.load(store.conn, str(log))
    with log.open("ab") as out:
        out.writelines(X86_LINES[30:40])
    import_one(store, log)  # the other importer
    with log.open("ab") as out:
        out.writelines(X86_LINES[40:45])
    real_load = resume.load
    calls: list[int] = []

    def first_stale(conn: Any, path: str) -> resume.ResumePoint | None:
        calls.append(1)
        return stale if len(calls) == 1 else real_load(conn, path)

    monkeypatch.setattr(resume, "load", first_stale)
    assert counts(import_one(store, log)) == (40, 5, 5, 0, 0, 0, 0)
    assert len(calls) == 4  # stale, seen stale under the lock; then current, checked again
    (source,) = store.sources()
    assert (source.lines, source.records, source.duplicates) == (45, 45, 0)


def test_a_file_another_importer_read_while_this_one_waited_is_resumed_not_read_twice(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two importers of a new, growing file: the one that found no resume point and waited
    for the write lock read the whole file again, a second source of the same path whose
    lines counted twice (found with `watch` and `import` of a tuner's log at once)."""
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:30]))
    real_load = resume.load
    calls: list[int] = []

    def other_importer_meanwhile(conn: Any, path: str) -> resume.ResumePoint | None:
        point = real_load(conn, path)
        calls.append(1)
        if len(calls) == 1:  # after this importer looked: the other imports, the file grows
            with Store(store.path) as other:
                import_one(other, log)
            with log.open("ab") as out:
                out.writelines(X86_LINES[30:40])
        return point

    monkeypatch.setattr(resume, "load", other_importer_meanwhile)
    assert counts(import_one(store, log)) == (30, 10, 10, 0, 0, 0, 0)
    (source,) = store.sources()
    assert (source.lines, source.records, source.duplicates) == (40, 40, 0)


# -- resume points through a merge ----------------------------------------------------------


def _imported_at(db: Path, when: str) -> None:
    """Date every import of the database's sources `when` (ISO, as the store writes it)."""
    with Store(db) as store:
        store.conn.execute("UPDATE source_imports SET imported_at = ?", (when,))
        store.conn.execute("UPDATE sources SET imported_at = ?", (when,))
        store.conn.commit()


def test_a_merged_source_is_read_on_from_where_its_database_stopped(
    tmp_path: Path, parsed_lines: list[int]
) -> None:
    """A log imported on one box and merged into a team database grows there: only the
    appended lines are read, into the merged source (it became a second source of the file,
    its first lines counted again as duplicates)."""
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:20]))
    box = tmp_path / "box.db"
    with Store(box) as store:
        import_one(store, log)
    with Store(tmp_path / "team.db") as team:
        tunelog.merge(team, [str(box)])
        with log.open("ab") as out:
            out.writelines(X86_LINES[20:40])
        report = import_one(team, log)
        assert counts(report) == (20, 20, 20, 0, 0, 0, 0)
        assert parsed_lines == [20, 20]
        assert [(s.id, s.lines, s.records) for s in team.sources()] == [(1, 40, 40)]
        assert database_contents(team.conn) == one_shot(tmp_path, log)


@pytest.mark.parametrize(
    ("here_at", "merged_at", "resumed_source", "skipped"),
    [
        ("2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00", 2, 20),  # the merged: newer
        ("2026-02-01T00:00:00+00:00", "2026-01-01T00:00:00+00:00", 1, 10),  # this one's: newer
        ("2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00+00:00", 1, 10),  # a tie: this one's
    ],
)
def test_of_two_resume_points_of_one_file_the_newer_import_stays(
    tmp_path: Path, here_at: str, merged_at: str, resumed_source: int, skipped: int
) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:10]))
    team, box = tmp_path / "team.db", tmp_path / "box.db"
    with Store(team) as store:
        import_one(store, log)
    log.write_bytes(b"".join(X86_LINES[:20]))
    with Store(box) as store:
        import_one(store, log)
    _imported_at(team, here_at)
    _imported_at(box, merged_at)
    with Store(team) as store:
        tunelog.merge(store, [str(box)])
        with log.open("ab") as out:
            out.writelines(X86_LINES[20:25])
        report = import_one(store, log)
        assert report.source_id == resumed_source
        assert report.skipped_lines == skipped
        assert store.stats().records == 25


def test_a_merged_resume_point_of_a_file_rewritten_since_reads_it_in_full(
    tmp_path: Path,
) -> None:
    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:20]))
    box = tmp_path / "box.db"
    with Store(box) as store:
        import_one(store, log)
    log.write_bytes(b"".join(X86_LINES[40:45] + X86_LINES[:20]))
    with Store(tmp_path / "team.db") as team:
        tunelog.merge(team, [str(box)])
        report = import_one(team, log)
        assert report.prefix_changed
        assert counts(report) == (0, 25, 5, 20, 0, 0, 0)


def test_a_copy_of_some_targets_lines_carries_no_resume_point(tmp_path: Path) -> None:
    """A database of one target's lines (`best --target`'s) holds part of the file: reading
    on from its end would leave the other targets' earlier lines out of the source."""
    from tunelog.store.merging import copy_sources

    log = tmp_path / "tuning.log"
    log.write_bytes(b"".join(X86_LINES[:20]))
    with Store(tmp_path / "a.db") as store, Store(tmp_path / "b.db") as into:
        import_one(store, log)
        (target_id,) = store.conn.execute("SELECT min(id) FROM targets").fetchone()
        copy_sources(store, into, [1], [target_id])
        assert into.conn.execute("SELECT count(*) FROM resume_points").fetchone() == (0,)
        copy_sources(store, into := Store(tmp_path / "c.db"), [1])
        assert into.conn.execute("SELECT count(*) FROM resume_points").fetchone() == (1,)
        into.close()


def test_a_file_read_with_its_half_written_line_is_known_while_unchanged(tmp_path: Path) -> None:
    """A watch (which holds a half-written last line back), an import (which reads and
    rejects it), then a watch of the unchanged file: it was read in full again, a second
    source of the file (found by a new user). Once the line is whole, it is read on into the
    one source and its rejection goes."""
    log = tmp_path / "tuning.log"
    half = X86_LINES[10][:25]
    log.write_bytes(b"".join(X86_LINES[:10]) + half)
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(log)], follow=True)
        assert counts(import_one(store, log)) == (10, 1, 0, 0, 0, 0, 1)
        again = import_one(store, log, follow=True)
        assert again.already_imported_as == f"#1 {log}" and not again.prefix_changed
        log.write_bytes(b"".join(X86_LINES[:12]))
        assert counts(import_one(store, log)) == (10, 2, 2, 0, 0, 0, 0)
        assert [(s.id, s.lines, s.records, s.rejected) for s in store.sources()] == [(1, 12, 12, 0)]
