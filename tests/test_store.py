"""The SQLite store: schema, accounting, idempotence, atomicity, provenance."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

import tunelog
from tests.conftest import (
    EDGE,
    SAMPLE_LOGS,
    X86,
    X86_LINES,
    assert_run_marks_kept,
    assert_tallies_match_records,
    undo_migrations,
    write_distinct_copies,
)
from tunelog import inputs
from tunelog.api.listing import each_layer
from tunelog.exceptions import (
    NewerSchemaError,
    NotATunelogDatabaseError,
)
from tunelog.filters import Filters
from tunelog.inputs import LogInput, OpenedLog
from tunelog.records import Measurement, scan_line
from tunelog.rules.bestrecord import OFFER_SLOT_SQL
from tunelog.rules.slots import Slot
from tunelog.selection import HistoryBest
from tunelog.store import APPLICATION_ID, MIGRATIONS, LineReader, Store, codec, importer
from tunelog.store.trials import each_trial_run


def test_schema_after_migrations(store: Store) -> None:
    assert store.schema_version == len(MIGRATIONS)
    assert store.schema_version == len(MIGRATIONS) >= 5
    assert set(store.db.table_names()) == {
        "record_spellings",
        "spelling_texts",
        "trial_runs",
        "source_imports",
        "counters",
        "top_config_ids",
        "sources",
        "targets",
        "workloads",
        "blocks",
        "records",
        "content_hashes",
        "slots",
        "tallies",
        "rejects",
        "resume_points",
        "holdings",
        "_sqlite_migrations",
    }
    assert [c.name for c in store.db["resume_points"].columns] == [
        "real_path",
        "source_id",
        "offset",
        "lines",
        "prefix_hash",
        "tail",
        "repair",
    ]
    assert store.db.table("resume_points").pks == ["real_path"]
    assert [c.name for c in store.db["records"].columns] == [
        "id",
        "source_id",
        "line",
        "target_id",
        "workload_id",
        "config_index",
        "error_no",
        "mean_cost",
        "all_cost",
        "timestamp",
        "hash",
    ]
    assert store.db.table("content_hashes").pks == ["workload_id", "hash"]
    assert [c.name for c in store.db["workloads"].columns] == [
        "id",
        "task_name",
        "template_key",
        "args",
        "version",
        "spelling",
        "layer_key",
        "facts",
        "family",
        "shapes",
        "flops",
    ]
    assert store.conn.execute("SELECT * FROM counters").fetchall() == [("next_record_id", 1)]
    assert [c.name for c in store.db["source_imports"].columns] == [
        "source_id",
        "path",
        "imported_at",
    ]
    sources = [c.name for c in store.db["sources"].columns]
    assert sources[12:15] == ["split", "repaired", "repair"]
    assert {"merged_from", "merged_at"} <= set(sources)  # provenance of merged sources
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA page_size").fetchone()[0] == 16384
    assert set(store.db.view_names()) == {
        "top_configs",  # the rows of top_config_ids, one a kept config (migration 13)
        "best_configs",
        "layer_summary",
        "failures",
        "sources_summary",
    }
    assert [c.name for c in store.db["layer_summary"].columns] == [
        "target",
        "task_name",
        "template_key",
        "args",
        "log_version",
        "trials",
        "valid",
        "failed",
        "best_cost",
        "best_config",
    ]


def test_reopening_does_not_migrate_again(tmp_path: Path) -> None:
    with Store(tmp_path / "a.db") as first:
        tunelog.import_paths(first, [str(X86)])
    with Store(tmp_path / "a.db") as again:
        assert again.stats().records == 200


def test_every_line_is_accounted_for(store: Store) -> None:
    (report,) = tunelog.import_paths(store, [str(EDGE)])
    assert (
        report.lines,
        report.new,
        report.duplicates,
        report.comments,
        report.blank,
        report.rejected,
    ) == (19, 8, 1, 6, 1, 3)
    assert report.accounted
    assert [(r.line, r.reason) for r in report.rejects] == [
        (15, "auto_scheduler record starting with a space: TVM's reader skips it"),
        (16, "invalid JSON at column 88"),
        (17, "tab-separated text, not a JSON record"),
    ]
    assert [(r.line, r.reason) for r in store.rejects(report.source_id or 0)] == [
        (r.line, r.reason) for r in report.rejects
    ]


def test_reimporting_a_file_adds_nothing_and_says_so(store: Store) -> None:
    (first,) = tunelog.import_paths(store, [str(X86)])
    (second,) = tunelog.import_paths(store, [str(X86)])
    assert (second.new, second.duplicates) == (0, 200)
    assert second.already_imported_as == f"#{first.source_id} {X86}"
    assert store.stats().records == 200
    assert len(store.sources()) == 1


def _log_with_every_kind_of_line(tmp_path: Path) -> Path:
    """Records, a duplicate, comments, a blank, rejects, and three records pasted on one line."""
    pasted = b" ".join(X86.read_bytes().splitlines()[:3]).replace(b'"', "\u201c".encode())
    log = tmp_path / "every_kind.log"
    log.write_bytes(EDGE.read_bytes() + pasted + b"\n")
    return log


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
@pytest.mark.parametrize("repair", [False, True], ids=["plain", "repair"])
def test_reimporting_known_bytes_reports_what_a_full_import_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repair: bool, strict: bool
) -> None:
    log = _log_with_every_kind_of_line(tmp_path)
    with Store(tmp_path / "a.db") as store:
        tunelog.import_paths(store, [str(log)], repair=repair)
        writers: list[object] = []
        real_writer = importer.ImportWriter

        def counted_writer(*args: Any, **kwargs: Any) -> object:
            writers.append(args)
            return real_writer(*args, **kwargs)

        monkeypatch.setattr(importer, "ImportWriter", counted_writer)
        (quick,) = tunelog.import_paths(store, [str(log)], repair=repair, strict=strict)
        assert writers == []  # recognised by its hash: not parsed again
        with OpenedLog(LogInput(str(log))) as opened:  # given lines: always parsed
            full = store.import_log(opened, repair=repair, strict=strict, lines=opened.lines())
        assert len(writers) == 1
    assert quick.model_dump() == full.model_dump()
    assert quick.accounted and quick.new == 0
    assert (quick.rolled_back, quick.already_imported_as is None) == (strict, strict)


def test_a_record_seen_in_another_file_is_a_duplicate(store: Store, tmp_path: Path) -> None:
    lines = X86.read_bytes().splitlines(keepends=True)
    part = tmp_path / "part.log"
    part.write_bytes(b"".join(lines[:50]) + b"# extra\n")
    tunelog.import_paths(store, [str(X86)])
    (report,) = tunelog.import_paths(store, [str(part)])
    assert (report.new, report.duplicates, report.comments) == (0, 50, 1)
    assert report.already_imported_as is None  # different bytes: a new source
    assert len(store.sources()) == 2
    assert_tallies_match_records(store.conn)
    # The new file's block held only duplicates: it is dropped.
    assert store.conn.execute("SELECT id FROM blocks").fetchall() == [(1,), (129,)]


def test_directories_import_recursively_and_gzip_is_transparent(store: Store) -> None:
    reports = tunelog.import_paths(store, [str(SAMPLE_LOGS)])
    assert [Path(r.path).name for r in reports] == [
        "edge_cases.log",
        "x86_mini_llvm.log",
        "x86_mini_short_timeouts.log.gz",
    ]
    assert reports[2].new == 125


def test_sources_record_provenance(store: Store) -> None:
    tunelog.import_paths(store, [str(X86)], label="skylake run")
    (source,) = store.sources()
    assert (source.path, source.label, source.lines, source.records) == (
        str(X86),
        "skylake run",
        200,
        200,
    )
    assert source.size == X86.stat().st_size
    assert len(source.sha256) == 64
    row = store.conn.execute("SELECT source_id, line FROM records ORDER BY id LIMIT 1").fetchone()
    assert row == (source.id, 1)


@pytest.mark.parametrize(
    ("comment_lines", "compress"),
    [
        (0, False),  # under a megabyte: hashed inline when the digest is asked for
        (30_000, False),  # 3 MB: hashed a megabyte at a time beside the reader
        (30_000, True),  # the stored (compressed) bytes, not the lines, are hashed
    ],
)
@pytest.mark.parametrize("spare_core", [True, False], ids=["hashed beside", "one cpu: inline"])
def test_a_source_sha256_is_that_of_its_stored_bytes(
    store: Store,
    tmp_path: Path,
    comment_lines: int,
    compress: bool,
    spare_core: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(inputs, "has_spare_core", lambda: spare_core)
    text = b"".join(X86_LINES) + (b"# " + b"x" * 97 + b"\n") * comment_lines
    data = gzip.compress(text, mtime=0) if compress else text
    log = tmp_path / ("big.log.gz" if compress else "big.log")
    log.write_bytes(data)
    (report,) = tunelog.import_paths(store, [str(log)])
    (source,) = store.sources()
    assert source.sha256 == report.sha256 == hashlib.sha256(data).hexdigest()
    assert (source.size, source.comments) == (len(data), comment_lines)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_imports_a_large_file_after_its_parent(tmp_path: Path) -> None:
    """The parent's hashing thread does not survive a fork: the child starts its own (it
    used to wait forever on the parent's)."""
    log = tmp_path / "big.log"
    log.write_bytes(b"".join(X86_LINES) + (b"# " + b"x" * 97 + b"\n") * 30_000)
    with Store(tmp_path / "parent.db", create=True) as parent:
        (report,) = tunelog.import_paths(parent, [str(log)])
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only with the right digest, and 2 if stuck
        signal.alarm(20)
        try:
            with Store(tmp_path / "child.db", create=True) as child:
                (again,) = tunelog.import_paths(child, [str(log)])
            os._exit(0 if again.sha256 == report.sha256 else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def stored_lines(store: Store) -> list[bytes]:
    reader = LineReader(store.conn)
    rows = store.conn.execute("SELECT id FROM records ORDER BY id").fetchall()
    return [reader.line(record_id) for (record_id,) in rows]


def test_original_line_bytes_are_kept(store: Store) -> None:
    tunelog.import_paths(store, [str(X86)])
    assert stored_lines(store) == X86.read_bytes().splitlines()


def test_lines_are_stored_in_compressed_blocks_of_consecutive_lines(
    store: Store, tmp_path: Path
) -> None:
    big = write_distinct_copies(tmp_path / "big.log", 3)
    tunelog.import_paths(store, [str(big), str(EDGE)])
    blocks = store.conn.execute(
        "SELECT source_id, count(*), sum(length(data)) FROM blocks GROUP BY source_id"
    ).fetchall()
    assert [(source, count) for source, count, _ in blocks] == [(1, 5), (2, 1)]  # 600 = 4x128+88
    assert blocks[0][2] < 0.2 * big.stat().st_size
    # A block's id is its first record's id; the duplicate in EDGE leaves its line behind.
    ids = store.conn.execute("SELECT id FROM blocks ORDER BY id").fetchall()
    assert ids == [(1,), (129,), (257,), (385,), (513,), (601,)]
    assert stored_lines(store)[:600] == big.read_bytes().splitlines()


def test_a_duplicate_inside_one_file_keeps_the_first_copy(store: Store, tmp_path: Path) -> None:
    lines = X86.read_bytes().splitlines(keepends=True)
    log = tmp_path / "twice.log"
    log.write_bytes(b"".join(lines[:10] + lines[3:5] + lines[10:12]))
    (report,) = tunelog.import_paths(store, [str(log)])
    assert (report.lines, report.new, report.duplicates) == (14, 12, 2)
    assert store.conn.execute("SELECT line FROM records ORDER BY id").fetchall() == [
        (n,) for n in [*range(1, 11), 13, 14]
    ]
    assert stored_lines(store) == [line.rstrip(b"\n") for line in lines[:12]]
    assert_tallies_match_records(store.conn)


class _CollidingHash:
    """Every line hashes to the same value: each record must be placed by probing."""

    @staticmethod
    def xxh3_64_intdigest(content: bytes) -> int:
        return (1 << 64) - 1  # the largest hash: probing wraps around to the smallest


def test_hash_collisions_are_probed_and_duplicates_still_found(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codec, "xxhash", _CollidingHash)
    lines = X86.read_bytes().splitlines(keepends=True)
    part = tmp_path / "part.log"
    part.write_bytes(b"".join(lines[40:60]) + b"".join(lines[:3]) + b"# extra\n")
    (first,) = tunelog.import_paths(store, [str(X86)])
    (second,) = tunelog.import_paths(store, [str(part)])
    assert (first.new, first.duplicates) == (200, 0)
    assert (second.new, second.duplicates, second.comments) == (0, 23, 1)
    keys = store.conn.execute("SELECT workload_id, hash FROM content_hashes").fetchall()
    assert len(keys) == len(set(keys)) == 200
    assert stored_lines(store) == X86.read_bytes().splitlines()
    assert_tallies_match_records(store.conn)


def test_a_schema_1_database_is_migrated_with_its_lines(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    lines = X86.read_bytes().splitlines()[:3]
    _write_schema_1_database(path, lines)
    with Store(path) as store:
        assert store.schema_version == len(MIGRATIONS)
        assert stored_lines(store) == lines
        assert [line.raw for line in store.winner_lines()] == [lines[1]]
        assert store.conn.execute("SELECT count(*) FROM content_hashes").fetchone() == (3,)
        assert store.conn.execute("SELECT id FROM blocks").fetchall() == [(1,), (4,)]
        assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        (report,) = tunelog.import_paths(store, [str(X86)])
        assert (report.new, report.duplicates) == (197, 3)


def _blake2b(line: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(line, digest_size=8).digest(), "big", signed=True)


def _write_schema_1_database(path: Path, lines: list[bytes]) -> None:
    """What tunelog 0.1 wrote: lines in records.raw, plain or compressed with a dictionary."""
    conn = sqlite3.connect(path, isolation_level=None)
    MIGRATIONS[0](conn)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 1")
    dictionary = zstandard.train_dictionary(
        1024, [line + b"%d" % i for i in range(20) for line in lines]
    )
    conn.execute("INSERT INTO dictionaries VALUES (1, ?)", (dictionary.as_bytes(),))
    compressor = zstandard.ZstdCompressor(dict_data=dictionary)
    conn.execute(
        "INSERT INTO sources VALUES (1, 'x86.log', NULL, 'ab', 1, 3, 3, 0, 0, 0, 0, 'then')"
    )
    # Ids 1, 2 and 4: a gap, as a rolled-back import leaves.
    for n, (record_id, line) in enumerate(zip((1, 2, 4), lines, strict=True), start=1):
        m = scan_line(line)
        assert isinstance(m, Measurement)
        conn.execute(
            "INSERT OR IGNORE INTO targets VALUES (1, ?, 'llvm', '[\"cpu\"]', 'unknown')",
            (m.target,),
        )
        workload = (m.task_name, m.template_key, m.args_json, m.log_version)
        conn.execute(
            "INSERT OR IGNORE INTO workloads (task_name, template_key, args, version) "
            "VALUES (?, ?, ?, ?)",
            workload,
        )
        (workload_id,) = conn.execute(
            "SELECT id FROM workloads WHERE task_name = ? AND template_key = ? AND args = ? "
            "AND version = ?",
            workload,
        ).fetchone()
        raw, dict_id = (compressor.compress(line), 1) if n % 2 else (line, None)
        conn.execute(
            "INSERT INTO records VALUES (?, 1, ?, 1, ?, ?, ?, ?, ?, ?, '0.2', NULL, ?, ?, ?)",
            (
                *(record_id, n, workload_id, m.config_index, m.error_no, m.mean_cost),
                *(m.all_cost, m.timestamp, _blake2b(line), raw, dict_id),
            ),
        )
        if record_id == 2:
            conn.execute(
                "INSERT INTO slots VALUES ('key', 'cpu', ?, 2, ?)", (workload_id, m.mean_cost)
            )
    conn.close()


def test_strict_rolls_back_a_file_with_rejected_lines(store: Store) -> None:
    (report,) = tunelog.import_paths(store, [str(EDGE)], strict=True)
    assert report.rolled_back
    assert store.stats().records == 0
    assert store.sources() == []


def _crashing_lines(path: Path, after: int) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            if number > after:
                raise KeyboardInterrupt
            yield line


@pytest.mark.parametrize("after", [0, 10, 150, 199])
def test_an_interrupted_import_leaves_the_database_as_before(store: Store, after: int) -> None:
    tunelog.import_paths(store, [str(EDGE)])
    before = store.stats().model_dump()
    with OpenedLog(LogInput(str(X86))) as opened, pytest.raises(KeyboardInterrupt):
        store.import_log(opened, lines=_crashing_lines(X86, after))
    assert store.stats().model_dump() == before
    assert len(store.sources()) == 1
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    (report,) = tunelog.import_paths(store, [str(X86)])
    assert report.new == 200


def test_a_missing_path_is_reported_unreadable_and_the_others_imported(store: Store) -> None:
    missing, imported = tunelog.import_paths(store, ["no/such/file.log", str(X86)])
    assert (missing.path, missing.unreadable, missing.lines) == (
        "no/such/file.log",
        "does not exist: check the path",
        0,
    )
    assert imported.new == 200


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("this is not SQLite\n" * 100)
    with pytest.raises(NotATunelogDatabaseError, match="not a tunelog database"):
        Store(path)


def test_another_applications_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE things (x)")
    conn.commit()
    conn.close()
    with pytest.raises(NotATunelogDatabaseError, match="not a tunelog one"):
        Store(path)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    with pytest.raises(NewerSchemaError, match="newer tunelog"):
        Store(path)


def test_stats_count_valid_and_failed(store: Store) -> None:
    tunelog.import_paths(store, [str(X86)])
    stats = store.stats()
    assert (stats.records, stats.valid, stats.failed) == (200, 194, 6)
    assert stats.by_error == [
        {"error_no": 0, "error_name": "NO_ERROR", "records": 194},
        {"error_no": 6, "error_name": "BUILD_TIMEOUT", "records": 6},
    ]
    assert {row["template"] for row in stats.by_template} == {
        "conv2d_NCHWc.x86",
        "dense_nopack.x86",
        "dense_pack.x86",
    }


def test_repair_recovers_pasted_records_and_accounts_for_split_lines(
    store: Store, tmp_path: Path
) -> None:
    lines = X86.read_bytes().splitlines()
    pasted = tmp_path / "forum.log"
    joined = b" ".join(lines[:3]).replace(b'"', "\u201c".encode("utf-8"))
    pasted.write_bytes(joined + b"\n" + lines[3] + b"\n")
    (plain,) = tunelog.import_paths(store, [str(pasted)])
    assert (plain.new, plain.rejected) == (1, 1)
    assert "use --repair" in plain.rejects[0].reason
    (repaired,) = tunelog.import_paths(store, [str(pasted)], repair=True)
    assert (repaired.lines, repaired.split, repaired.repaired) == (2, 2, 3)
    assert (repaired.new, repaired.duplicates, repaired.rejected) == (3, 1, 0)
    assert repaired.accounted
    rows = store.conn.execute(
        "SELECT line FROM records WHERE source_id = ? ORDER BY id", (repaired.source_id,)
    ).fetchall()
    assert rows == [(1,), (1,), (1,)]


@pytest.mark.parametrize("via", ["import", "merge"])
def test_a_repaired_read_whose_records_another_file_stored_is_a_source_of_its_own(
    tmp_path: Path, via: str
) -> None:
    """Its pasted records were rejected by the earlier, plain import, and another file stored
    them: it adds no record, and was counted one more import of the plain source, so removing
    that other file took the records it holds."""
    lines = X86.read_text().splitlines()
    curly = [line.replace('"', "\u201d") for line in lines[1:3]]
    (mix := tmp_path / "mix.log").write_text("\n".join([lines[0], *curly]) + "\n")
    (other := tmp_path / "other.log").write_text("\n".join(curly) + "\n")
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(mix)])
        tunelog.import_paths(store, [str(other)], repair=True)
        if via == "import":
            tunelog.import_paths(store, [str(mix)], repair=True)
        else:
            with Store(tmp_path / "o.db") as source:
                tunelog.import_paths(source, [str(mix)], repair=True)
            tunelog.merge(store, [str(tmp_path / "o.db")])
        tunelog.api.remove_sources(store, str(other))
        assert store.stats().records == 3  # as importing mix.log, then with --repair, gives


def test_a_repaired_read_replacing_a_rejected_only_source_keeps_its_label(
    store: Store, tmp_path: Path
) -> None:
    # The user follows "use --repair" without repeating --label: the label was lost.
    pasted = tmp_path / "paste.log"
    pasted.write_text(X86.read_text().splitlines()[0].replace('"', "\u201d") + "\n")
    tunelog.import_paths(store, [str(pasted)], label="forum")
    (repaired,) = tunelog.import_paths(store, [str(pasted)], repair=True)
    assert repaired.superseded == [1]
    assert [(s.id, s.label) for s in store.sources()] == [(2, "forum")]
    tunelog.import_paths(store, [str(pasted)], label="other", repair=True)
    assert store.sources()[0].label == "other"  # a label given is the source's, as ever


def test_a_line_repair_cannot_recover_does_not_advise_repair(store: Store, tmp_path: Path) -> None:
    pasted = tmp_path / "cut.log"
    pasted.write_text(X86.read_text().splitlines()[0].replace('"', "\u201d")[:300] + "\n")
    (plain,) = tunelog.import_paths(store, [str(pasted)])
    (repaired,) = tunelog.import_paths(store, [str(pasted)], repair=True)
    assert plain.rejects[0].reason.endswith(": use --repair")
    assert repaired.rejects[0].reason == (
        "typographic quotes (pasted from a web page?): --repair recovered no record from it"
    )


def test_repair_on_the_forum_paste(store: Store) -> None:
    from tests.conftest import CORPUS, require_shared

    require_shared()
    (report,) = tunelog.import_paths(
        store, [str(CORPUS / "forum/centernet_forum_paste.log")], repair=True
    )
    assert (report.lines, report.repaired, report.rejected) == (3, 42, 0)
    assert report.new + report.duplicates == 42


def test_a_full_disk_rolls_the_file_back_and_leaves_the_database_usable(
    store: Store, tmp_path: Path
) -> None:
    from tunelog.exceptions import DiskFullError

    big = write_distinct_copies(tmp_path / "big.log", 10)  # more than two pages can hold
    tunelog.import_paths(store, [str(EDGE)])
    before = store.stats().model_dump()
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    # SQLite reports a database that cannot grow exactly as it reports a full disk.
    store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(DiskFullError, match=r"is full .* free some space and import it again"):
        tunelog.import_paths(store, [str(big)])
    assert store.stats().model_dump() == before
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store.conn.execute("PRAGMA max_page_count = 1073741823")
    (report,) = tunelog.import_paths(store, [str(big)])
    assert report.new == 2000


def test_progress_reports_bytes_read_up_to_the_file_size(store: Store) -> None:
    seen: list[tuple[str, int, int | None]] = []

    def progress(source: LogInput, done: int, *, total: int | None) -> None:
        seen.append((source.path, done, total))

    tunelog.import_paths(store, [str(X86)], progress=progress)
    size = X86.stat().st_size
    assert seen and seen[-1] == (str(X86), size, size)
    assert [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)


def test_importing_the_directory_that_holds_the_database_skips_the_database(
    tmp_path: Path,
) -> None:
    (tmp_path / "run.log").write_bytes(X86.read_bytes())
    with Store(tmp_path / "tunelog.db") as store:
        reports = tunelog.import_paths(store, [str(tmp_path)])
    assert [Path(r.path).name for r in reports] == ["run.log"]


@pytest.mark.parametrize("compress", ["gzip", "bz2", "lzma"])
def test_compressed_logs_are_read_transparently_whatever_their_name(
    store: Store, tmp_path: Path, compress: str
) -> None:
    import importlib

    module = importlib.import_module(compress)
    packed = tmp_path / "log.data"  # the name says nothing: the content does
    packed.write_bytes(module.compress(X86.read_bytes()))
    (report,) = tunelog.import_paths(store, [str(packed)])
    assert (report.lines, report.new, report.rejected) == (200, 200, 0)
    (source,) = store.sources()
    assert source.size == packed.stat().st_size


def test_export_of_grown_and_merged_logs_writes_each_winner_own_bytes(
    store: Store, tmp_path: Path
) -> None:
    # The recipe of issue 10: a file whose last lines are duplicates, then a file of new lines.
    short = tmp_path / "short.log"
    with gzip.open(SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz") as packed:
        short.write_bytes(packed.read())
    merged = tmp_path / "merged.log"
    merged.write_bytes(short.read_bytes() + X86.read_bytes())
    tunelog.import_paths(store, [str(X86), str(merged), str(EDGE)])
    written = {line.record_id: line.raw for line in store.winner_lines()}
    by_id = {r.record_id: r for r in store.best()}
    for record_id, raw in written.items():
        parsed = scan_line(raw)
        assert isinstance(parsed, Measurement)
        row = by_id[record_id]
        assert (parsed.task_name, parsed.config_index, parsed.mean_cost) == (
            row.task_name,
            row.config_index,
            row.mean_cost,
        )
    cuda = [raw for raw in written.values() if b'"conv2d_nchw.cuda"' in raw]
    assert len(cuda) == 1


def test_record_ids_are_never_reused_after_trailing_duplicates(
    store: Store, tmp_path: Path
) -> None:
    lines = X86.read_bytes().splitlines(keepends=True)
    grown = tmp_path / "grown.log"
    grown.write_bytes(b"".join(lines[:10]) + b"".join(lines[:5]))  # ends in 5 duplicates
    tunelog.import_paths(store, [str(grown)])
    (next_id,) = store.conn.execute("SELECT value FROM counters").fetchone()
    assert next_id == 16  # ids 11..15 held the duplicates' lines in the block: never given again
    rest = tmp_path / "rest.log"
    rest.write_bytes(b"".join(lines[10:20]))
    tunelog.import_paths(store, [str(rest)])
    assert store.conn.execute("SELECT min(id) FROM records WHERE source_id = 2").fetchone() == (16,)
    assert stored_lines(store) == [line.rstrip(b"\n") for line in lines[:20]]


def test_a_schema_2_database_with_reused_ids_migrates_and_reads_right(tmp_path: Path) -> None:
    # What schema 2 could leave: a block whose last ids (dropped duplicates) were reused by
    # the next file's block. The database's answer (the block with the largest id <= r) was
    # right; a cached block must not answer past the next block.
    path = tmp_path / "v2.db"
    lines = X86.read_bytes().splitlines()
    with Store(path) as store:
        undo_migrations(store.conn, 2)
        packer = codec.BlockPacker()
        store.conn.execute(
            "INSERT INTO sources (id, path, sha256, size, lines, records, duplicates, comments,"
            " blank, rejected, imported_at) VALUES (1, 'a', 'x', 1, 4, 2, 2, 0, 0, 0, 'then')"
        )
        store.conn.execute("INSERT INTO blocks VALUES (1, 1, ?)", (packer.pack(lines[:4]),))
        store.conn.execute("INSERT INTO blocks VALUES (3, 1, ?)", (packer.pack(lines[10:12]),))
    with Store(path) as store:
        assert store.conn.execute("SELECT value FROM counters").fetchone() == (5,)
        reader = LineReader(store.conn)
        assert [reader.line(i) for i in (1, 2, 3, 4)] == [lines[0], lines[1], lines[10], lines[11]]


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("index", 10**40, f"config index {10**40} does not fit in 64 bits"),
        ("index", -(2**63) - 1, f"config index {-(2**63) - 1} does not fit in 64 bits"),
        ("error_no", 2**63, f"error number {2**63} does not fit in 64 bits"),
    ],
)
def test_integers_past_64_bits_are_rejected_with_a_reason(
    store: Store, tmp_path: Path, field: str, value: int, reason: str
) -> None:
    record = json.loads(X86.read_bytes().splitlines()[0])
    if field == "index":
        record["config"]["index"] = value
    else:
        record["result"][1] = value
    log = tmp_path / "big.log"
    log.write_text(json.dumps(record) + "\n" + X86.read_text().splitlines()[1] + "\n")
    (report,) = tunelog.import_paths(store, [str(log)])
    assert (report.new, report.rejected) == (1, 1)
    assert [(r.line, r.reason) for r in report.rejects] == [(1, reason)]


def test_a_reimport_adds_an_import_a_copy_a_source(tmp_path: Path) -> None:
    """The same path again is one more import of its source; the same bytes at another path
    are a source of their own, holding the same lines (nothing parsed, nothing stored)."""
    copy = tmp_path / "copy.log"
    copy.write_bytes(X86.read_bytes())
    with Store(tmp_path / "r.db") as store:
        tunelog.import_paths(store, [str(X86)])
        tunelog.import_paths(store, [str(X86)])
        (report,) = tunelog.import_paths(store, [str(copy)])
        first, second = store.sources()
        records = store.stats().records
    assert first.path == str(X86)  # absolute, as stored
    assert [i.path for i in first.imports] == [str(X86), str(X86)]
    assert (report.source_id, report.new, report.already_imported_as) == (2, 0, f"#1 {X86}")
    assert [i.path for i in second.imports] == [str(copy)]
    assert (second.records, second.duplicates, second.held, second.shared) == (0, 200, 200, 200)
    assert (first.records, first.held, first.shared, records) == (200, 200, 200, 200)


def test_migration_5_records_each_earlier_source_once(tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    with Store(path) as store:
        tunelog.import_paths(store, [str(X86)])
        undo_migrations(store.conn, 4)
    with Store(path) as store:
        (source,) = store.sources()
        assert [(i.path, i.imported_at) for i in source.imports] == [
            (source.path, source.imported_at)
        ]


def test_migration_8_fills_the_trial_runs_the_importer_would_keep(tmp_path: Path) -> None:
    path = tmp_path / "v7.db"
    short = tmp_path / "short.log"
    short.write_bytes(
        gzip.decompress((SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz").read_bytes())
    )
    with Store(path) as store:
        tunelog.import_paths(store, [str(X86), str(EDGE), str(short), str(X86)])
        kept = store.conn.execute("SELECT * FROM trial_runs ORDER BY 1, 2, 3").fetchall()
        undo_migrations(store.conn, 7)
    with Store(path) as store:
        assert store.conn.execute("SELECT * FROM trial_runs ORDER BY 1, 2, 3").fetchall() == kept
    assert len(kept) > 10


def test_migration_15_marks_every_stored_run_as_the_importer_does(tmp_path: Path) -> None:
    path = tmp_path / "v14.db"
    short = tmp_path / "short.log"
    short.write_bytes(
        gzip.decompress((SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz").read_bytes())
    )
    failed = tmp_path / "failed.log"  # a run with no valid trial: no marks
    failed.write_text(_v02_line("dense.x86", 3, 1.0).replace("0, 1.0, 16", "4, 1.0, 16") + "\n")
    with Store(path) as store:
        tunelog.import_paths(store, [str(X86), str(EDGE), str(short), str(failed)])
        kept = store.conn.execute("SELECT * FROM trial_runs ORDER BY 1, 2, 3").fetchall()
        undo_migrations(store.conn, 14)
        assert len(store.conn.execute("SELECT * FROM trial_runs").fetchone()) == 9
    with Store(path) as store:
        assert store.conn.execute("SELECT * FROM trial_runs ORDER BY 1, 2, 3").fetchall() == kept
        assert_run_marks_kept(store.conn)
    marked = [row for row in kept if row[-3] is not None]
    assert len(kept) > 10 and 0 < len(marked) < len(kept)  # runs with and without valid trials


@pytest.mark.parametrize("share", [0, 10**9], ids=["their-runs-only", "every-run"])
def test_workloads_of_several_runs_are_joined_whichever_way_they_are_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: int
) -> None:
    """A layer tuned in two files (a run resumed in another) and one tuned once: summaries
    equal the joined runs', read again by their workloads or with every run."""
    from tunelog.convergence import join_runs
    from tunelog.store import trials

    lines = X86.read_bytes().splitlines(keepends=True)
    (tmp_path / "first.log").write_bytes(b"".join(lines[: len(lines) // 2]))
    (tmp_path / "resumed.log").write_bytes(b"".join(lines[len(lines) // 2 :]))
    monkeypatch.setattr(trials, "JOINED_SHARE", share)
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(tmp_path / "first.log"), str(tmp_path / "resumed.log")])
        tunelog.import_paths(store, [str(EDGE)])
        group_of = {target_id: 0 for (target_id,) in store.conn.execute("SELECT id FROM targets")}
        expected = {
            key: join_runs(runs) for key, runs in trials.scan_trial_runs(store, group_of).items()
        }
        several = [
            key for key, runs in trials.scan_trial_runs(store, group_of).items() if len(runs) > 1
        ]
        assert several and len(several) < len(expected)
        assert trials.convergence_by_group(store, group_of) == expected


def _v02_line(task: str, shape: int, cost: float) -> str:
    return json.dumps(
        {
            "input": ["llvm", task, [["TENSOR", [1, shape], "float32"]], {}],
            "config": {"index": 1, "code_hash": None, "entity": []},
            "result": [[cost], 0, 1.0, 1600000000.0],
            "version": 0.2,
            "tvm_version": "0.8.0",
        }
    )


def _workload_of_each_record(store: Store) -> set[tuple[str, str]]:
    """(task name, args) of every record, through its workload id."""
    rows = store.conn.execute(
        "SELECT w.task_name, w.args FROM records r JOIN workloads w ON w.id = r.workload_id"
    )
    return {(str(task), str(args)) for task, args in rows}


def test_workload_ids_known_from_earlier_files_never_go_stale(tmp_path: Path) -> None:
    """Ids of workloads seen in earlier files are reused only while no one removed them."""
    logs = {}
    for name, task in (("a", "dense.x86"), ("b", "conv.x86"), ("c", "dense.x86")):
        logs[name] = tmp_path / f"{name}.log"
        logs[name].write_text(_v02_line(task, 3, 1.0 + len(logs)) + "\n")
    db = tmp_path / "t.db"
    with Store(db) as first, Store(db) as second:
        tunelog.import_paths(first, [str(logs["a"])])  # dense.x86 takes workload id 1
        second.remove_sources("1")  # ... which another connection then removes
        tunelog.import_paths(second, [str(logs["b"])])  # conv.x86 takes id 1 again
        tunelog.import_paths(first, [str(logs["c"])])  # dense.x86 again: a new workload
        assert _workload_of_each_record(first) == {
            ("conv.x86", '[["TENSOR",[1,3],"float32"]]'),
            ("dense.x86", '[["TENSOR",[1,3],"float32"]]'),
        }
        # The same through one connection: its own removal forgets the ids too.
        first.remove_sources(str(logs["c"]))
        tunelog.import_paths(first, [str(logs["c"])])
        assert len(_workload_of_each_record(first)) == 2


def test_a_rolled_back_file_leaves_no_workload_id_behind(tmp_path: Path) -> None:
    bad = tmp_path / "bad.log"
    bad.write_text(_v02_line("dense.x86", 5, 1.0) + "\nnot a record\n")
    good = tmp_path / "good.log"
    good.write_text(_v02_line("dense.x86", 5, 2.0) + "\n")
    with Store(tmp_path / "t.db") as store:
        (report,) = tunelog.import_paths(store, [str(bad)], strict=True)
        assert report.rolled_back
        tunelog.import_paths(store, [str(good)])
        assert _workload_of_each_record(store) == {("dense.x86", '[["TENSOR",[1,5],"float32"]]')}


@given(
    st.lists(
        st.tuples(st.sampled_from(["cuda", "gpu"]), st.integers(1, 3), st.sampled_from([1.0, 2.0])),
        max_size=24,
    )
)
def test_the_slot_upsert_keeps_the_holders_history_best_keeps(
    offers: list[tuple[str, int, float]],
) -> None:
    """The importer's upsert is ApplyHistoryBest's rule: strictly faster only, ties to the first."""
    conn = sqlite3.connect(":memory:")
    conn.execute(
        """CREATE TABLE slots (kind TEXT, name TEXT, workload_id INTEGER, record_id INTEGER,
           mean_cost REAL, PRIMARY KEY (kind, name, workload_id)) WITHOUT ROWID"""
    )
    best: HistoryBest[int] = HistoryBest()
    for record_id, (name, workload, mean) in enumerate(offers):
        best.offer([Slot("key", name, str(workload))], mean, record_id)
        conn.execute(OFFER_SLOT_SQL, ("key", name, workload, record_id, mean))
    stored = {
        Slot(kind, name, str(workload)): (mean, record_id)
        for kind, name, workload, record_id, mean in conn.execute("SELECT * FROM slots")
    }
    assert stored == {slot: (h.mean_cost, h.ref) for slot, h in best.slots.items()}


def test_a_read_error_leaves_the_resume_line_at_the_last_line_end(store: Store) -> None:
    """The pseudo-line reporting the error has no line end: the resume point's line number
    counts only the lines that ended."""
    good = X86.read_bytes().splitlines(keepends=True)[:2]

    def lines() -> Iterator[bytes]:
        yield from good
        raise OSError(5, "Input/output error")

    report = tunelog.FileReport(path="broken.log")
    store.conn.execute("BEGIN")
    writer = importer.ImportWriter(store.conn, report, repair=False)
    writer.run(lines(), cast(OpenedLog, None), None)
    store.conn.execute("ROLLBACK")
    assert (report.lines, report.rejected, writer.terminated_lines) == (3, 1, 2)


def test_migration_11_gives_each_source_the_records_it_stored(tmp_path: Path) -> None:
    """An older database knows only the records each file stored first: those become its
    holdings (a later file's duplicates of them are not known)."""
    first, grown = tmp_path / "first.log", tmp_path / "grown.log"
    lines = X86.read_bytes().splitlines(keepends=True)
    first.write_bytes(b"".join(lines[:50]))
    grown.write_bytes(b"".join(lines[:80]))
    path = tmp_path / "v10.db"
    with Store(path) as store:
        tunelog.import_paths(store, [str(first), str(grown)])
        undo_migrations(store.conn, 10)
    with Store(path) as store:
        assert store.schema_version == len(MIGRATIONS)
        held = [(s.records, s.duplicates, s.held, s.shared) for s in store.sources()]
        assert held == [(50, 0, 50, 0), (30, 50, 30, 0)]
        reader = LineReader(store.conn)
        from tunelog.store.holdings import held_records

        assert [reader.line(row[2]) + b"\n" for row in held_records(store.conn, 2)] == lines[50:80]


@pytest.mark.parametrize("knobs", [False, True])
def test_best_rows_left_unread_when_the_store_closes_end_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, knobs: bool
) -> None:
    # `tunelog best | head`: the rows' generator is dropped after the store has closed.
    raised: list[object] = []
    monkeypatch.setattr("sys.unraisablehook", raised.append)
    with Store(tmp_path / "b.db") as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)])
        rows = store.each_best(knobs=knobs)
        first = next(rows)
        assert [first, *rows][:1] == store.best(knobs=knobs)[:1]
        rows = store.each_best(knobs=knobs)
        next(rows)
    del rows
    assert raised == []


_STREAMS: dict[str, Any] = {
    "layer_candidates": lambda store: store.layer_candidates(),
    "layer_candidates unseen models": lambda store: store.layer_candidates(unseen_models=True),
    "each_trial_run": lambda store: each_trial_run(store, {i: i for i in range(1, 100)}),
    "each_layer": lambda store: each_layer(store, Filters()),
}


@pytest.mark.filterwarnings("error")  # an exception ignored while a generator ends, too
@pytest.mark.parametrize("stream", list(_STREAMS))
def test_a_stream_left_unfinished_ends_quietly_after_its_store_is_closed(
    tmp_path: Path, stream: str
) -> None:
    """`tunelog workloads | head`: the listing's generator is dropped after the store closed
    (an exception's frames hold it); ending it must not touch the closed connection."""
    store = Store(tmp_path / "t.db")
    tunelog.import_paths(store, [str(X86), str(EDGE)])
    rows = _STREAMS[stream](store)
    next(rows)
    store.close()
    rows.close()
