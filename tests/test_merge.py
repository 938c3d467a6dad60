"""`tunelog merge` (issue 12): a merge is an import of the other databases' sources, in order.

The reference for every merge is importing the same files into one database in the documented
order (the target's files, then each merged database's files in its import order), compared on
everything a user sees: the stored lines in id order, the slot holders, the kept top configs,
the tallies, the sources and the exported bytes.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import tunelog
from tests.conftest import (
    CORPUS,
    EDGE,
    SAMPLE_LOGS,
    X86,
    assert_run_marks_kept,
    assert_tallies_match_records,
    make_db,
    require_shared,
)
from tests.conftest import run_db as run_cli
from tests.test_reliability import finish, make_log, size, start, wal_of
from tests.test_store import _write_schema_1_database
from tunelog.exceptions import (
    InputNotFoundError,
    NewerSchemaError,
    NotATunelogDatabaseError,
    NothingToExportError,
    SameDatabaseError,
)
from tunelog.selection import history_best
from tunelog.store import MIGRATIONS, LineReader, Store
from tunelog.store.schema import TOP_CONFIGS_KEPT

SHORT = SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz"
_COST = re.compile(rb'"result": \[\[([0-9.e-]+)\]')


# -- helpers ------------------------------------------------------------------------------------


def write_rescaled(path: Path, source: Path, factor: float) -> Path:
    """The log's lines with every single-cost measurement times `factor` (new lines, no ties)."""

    def scale(match: re.Match[bytes]) -> bytes:
        return b'"result": [[%r]' % (float(match[1]) * factor)

    data = source.read_bytes()
    if source.suffix == ".gz":
        data = gzip.decompress(data)
    path.write_bytes(_COST.sub(scale, data))
    return path


def write_reencoded(path: Path, source: Path) -> Path:
    """The log as another TVM writes it back: other bytes, the same measurements (ties)."""
    path.write_bytes(source.read_bytes().replace(b"0.16.dev0", b"0.17.dev0"))
    return path


def lines_by_id(store: Store) -> list[bytes]:
    reader = LineReader(store.conn)
    return [reader.line(i) for (i,) in store.conn.execute("SELECT id FROM records ORDER BY id")]


WORKLOAD = "w.task_name || '|' || w.template_key || '|' || w.args || '|' || w.version"


def held_by_line(store: Store, sql: str) -> list[tuple[Any, ...]]:
    """Rows of (key..., record_id, mean_cost) with the record id replaced by its line."""
    reader = LineReader(store.conn)
    rows = store.conn.execute(sql).fetchall()
    return sorted((*row[:-2], reader.line(row[-2]), row[-1]) for row in rows)


def state(store: Store, tmp_path: Path) -> dict[str, Any]:
    """What a user sees of a database, independent of record ids (merges may leave gaps)."""
    c = store.conn
    out = tmp_path / f"export-{time.monotonic_ns()}.log"
    try:
        tunelog.export(store, str(out))
        exported = out.read_bytes()
    except NothingToExportError as exc:  # only failed or v0.1 winners: the same refusal
        exported = f"refused: {exc}".encode()
    best = [{k: v for k, v in row.model_dump().items() if k != "record_id"} for row in store.best()]
    return {
        "lines": lines_by_id(store),
        "slots": held_by_line(
            store,
            f"""SELECT s.kind, s.name, {WORKLOAD}, s.record_id, s.mean_cost
                FROM slots s JOIN workloads w ON w.id = s.workload_id""",
        ),
        "top_configs": held_by_line(
            store,
            f"""SELECT t.target, {WORKLOAD}, c.config_index, c.record_id, c.mean_cost
                FROM top_configs c JOIN targets t ON t.id = c.target_id
                JOIN workloads w ON w.id = c.workload_id""",
        ),
        "tallies": c.execute(
            f"""SELECT t.target, {WORKLOAD}, c.error_no, c.records, c.min_all_cost, c.max_all_cost
                FROM tallies c JOIN targets t ON t.id = c.target_id
                JOIN workloads w ON w.id = c.workload_id ORDER BY 1, 2, 3, 4, 5, 6"""
        ).fetchall(),
        "sources": [
            (s.path, s.label, s.sha256, s.size, s.lines, s.records, s.duplicates, s.rejected)
            for s in store.sources()
        ],
        "rejects": c.execute("SELECT line, reason FROM rejects ORDER BY 1, 2").fetchall(),
        "best": best,
        "export": exported,
    }


def sort_best(found: dict[str, Any]) -> list[str]:
    """The `best` rows without their order (by record id) and source names."""
    return sorted(repr({**row, "source": "", "line": 0}) for row in found["best"])


def assert_invariants(store: Store) -> None:
    """Tallies, slots, kept top configs, id counter and hashes agree with the stored records."""
    c = store.conn
    assert_tallies_match_records(c)
    assert_run_marks_kept(c)
    rows = c.execute(
        """SELECT t.target, r.workload_id, r.mean_cost, r.error_no, r.id
           FROM records r JOIN targets t ON t.id = r.target_id ORDER BY r.id"""
    ).fetchall()
    expected = history_best((t, str(w), m, e, i) for t, w, m, e, i in rows)
    assert sorted(
        (s.kind, s.name, int(s.workload), h.ref, h.mean_cost) for s, h in expected.slots.items()
    ) == sorted(c.execute("SELECT kind, name, workload_id, record_id, mean_cost FROM slots"))
    # The best record of each config, the TOP_CONFIGS_KEPT best configs per group, ranked by
    # (mean cost, record id).
    kept: dict[tuple[int, int], dict[int, tuple[int, int, int, int, float]]] = {}
    for row in c.execute(
        """SELECT target_id, workload_id, config_index, id, mean_cost FROM records
           WHERE error_no = 0 ORDER BY target_id, workload_id, mean_cost, id"""
    ):
        configs = kept.setdefault((row[0], row[1]), {})
        if row[2] not in configs and len(configs) < TOP_CONFIGS_KEPT:
            configs[row[2]] = row
    ranked = sorted(row for configs in kept.values() for row in configs.values())
    assert ranked == c.execute("SELECT * FROM top_configs ORDER BY 1, 2, 3").fetchall()
    (next_id,) = c.execute("SELECT value FROM counters").fetchone()
    assert c.execute("SELECT coalesce(max(id), 0) FROM records").fetchone()[0] < next_id
    assert (
        c.execute(
            """SELECT count(*) FROM records r JOIN content_hashes h
           ON h.workload_id = r.workload_id AND h.hash = r.hash AND h.record_id = r.id"""
        ).fetchone()
        == c.execute("SELECT count(*) FROM records").fetchone()
    )
    assert len(set(lines_by_id(store))) == c.execute("SELECT count(*) FROM records").fetchone()[0]
    assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def merged(tmp_path: Path, name: str, *databases: Path) -> Store:
    """A copy of the first database, named `name`, with the others merged into it."""
    path = tmp_path / name
    first, *rest = databases
    shutil.copyfile(first, path)
    store = Store(path)
    tunelog.merge(store, [str(db) for db in rest])
    return store


def imported(tmp_path: Path, name: str, *logs: Path) -> Store:
    return Store(make_db(tmp_path / name, *logs))


# -- what a merge equals ------------------------------------------------------------------------


def test_a_merge_equals_importing_every_source_in_order(tmp_path: Path) -> None:
    one = make_db(tmp_path / "one.db", X86, EDGE)
    two = make_db(tmp_path / "two.db", SHORT, EDGE, write_rescaled(tmp_path / "r.log", X86, 0.99))
    with (
        merged(tmp_path, "m.db", one, two) as store,
        imported(tmp_path, "i.db", X86, EDGE, SHORT, tmp_path / "r.log") as reference,
    ):
        assert_invariants(store)
        assert state(store, tmp_path) == state(reference, tmp_path)


def test_merging_a_into_b_and_b_into_a_gives_the_same_records_and_export(tmp_path: Path) -> None:
    faster = write_rescaled(tmp_path / "faster.log", X86, 0.97)
    slower = write_rescaled(tmp_path / "slower.log", SHORT, 1.05)
    a = make_db(tmp_path / "a.db", X86, EDGE, slower)
    b = make_db(tmp_path / "b.db", SHORT, EDGE, faster)
    with merged(tmp_path, "ab.db", a, b) as ab, merged(tmp_path, "ba.db", b, a) as ba:
        assert_invariants(ab)
        assert_invariants(ba)
        ab_state, ba_state = state(ab, tmp_path), state(ba, tmp_path)
        assert sorted(ab_state["lines"]) == sorted(ba_state["lines"])
        assert len(ab_state["lines"]) == 200 + 8 + 125 + 125 + 200
        # The same lines; an export writes them in record id order, which is the merge order.
        assert sorted(ab_state["export"].splitlines()) == sorted(ba_state["export"].splitlines())
        assert ab_state["best"] != [] and sort_best(ab_state) == sort_best(ba_state)
        assert ab_state["slots"] == ba_state["slots"]
        assert ab_state["top_configs"] == ba_state["top_configs"]


def test_merging_twice_adds_nothing(tmp_path: Path) -> None:
    a = make_db(tmp_path / "a.db", X86)
    b = make_db(tmp_path / "b.db", SHORT, EDGE, label="run2")
    b_bytes = b.read_bytes()
    with Store(a) as store:
        (first,) = tunelog.merge(store, [str(b)])
        # EDGE holds one line twice: a duplicate in b.db, and in the merge (as its row says).
        assert (first.new, first.duplicates) == (133, 1)
        before = state(store, tmp_path)
        (again,) = tunelog.merge(store, [str(b)])
        assert (again.new, again.duplicates) == (0, 134)  # every record line held is here
        assert [s.already_merged_as for s in again.sources] == [
            f"#2 {SHORT}",
            f"#3 {EDGE}",
        ]
        assert state(store, tmp_path) == before
        assert_invariants(store)
    assert b.read_bytes() == b_bytes  # the merged database is only read


def test_merging_a_database_whose_files_are_imported_here_adds_nothing(tmp_path: Path) -> None:
    a = make_db(tmp_path / "a.db", X86, SHORT)
    b = make_db(tmp_path / "b.db", SHORT, X86)
    with Store(a) as store:
        before = state(store, tmp_path)
        (report,) = tunelog.merge(store, [str(b)])
        assert report.new == 0
        assert state(store, tmp_path) == before


def test_a_label_of_a_file_imported_here_too_is_given_to_its_source(tmp_path: Path) -> None:
    # As `import --label gpu1` of the same bytes does: the source here takes the label.
    here = make_db(tmp_path / "here.db", X86)
    with Store(tmp_path / "box.db") as box:
        tunelog.import_paths(box, [str(X86)], label="gpu1")
    with Store(here) as store:
        (report,) = tunelog.merge(store, [str(tmp_path / "box.db")])
        assert (report.new, [s.label for s in store.sources()]) == (0, ["gpu1"])
        assert store.best(tunelog.Filters(label="gpu1")) == store.best()


def test_a_labelled_source_here_keeps_its_label_when_another_box_merges_its_bytes(
    tmp_path: Path,
) -> None:
    """Two boxes imported one shared file under their own labels: merging the second took its
    label from the first, unsaid, and `label:box1` then matched nothing of box1's."""
    box1 = make_db(tmp_path / "box1.db", X86, label="box1")
    box2 = make_db(tmp_path / "box2.db", X86, SHORT, label="box2")
    db = tmp_path / "all.db"
    run_cli(db, "merge", str(box1))
    code, out, err = run_cli(db, "merge", str(box2))
    assert code == 0, err
    assert ", which keeps its label box1" in out
    with Store(db) as store, Store(box1) as first:
        assert [s.label for s in store.sources()] == ["box1", "box2"]
        assert store.best(tunelog.Filters(label="box1")) == first.best()


@pytest.mark.parametrize(
    "lines",
    [
        X86.read_bytes().splitlines(keepends=True)[:2],
        [b"junk one\n", b"junk two\n"],  # no record line: compared by their lines alone, equal
    ],
    ids=["records", "rejected-only"],
)
def test_two_grown_reads_of_one_path_stay_two_sources_after_a_merge(
    tmp_path: Path, lines: list[bytes]
) -> None:
    """A file that grew keeps no SHA-256: two such sources of one path (the file rewritten in
    between) matched as 'the same bytes', and the merge folded the second into the first (its
    label and its lines gone: removing the first then removed records the second held)."""
    a, b = lines
    log = tmp_path / "k.log"
    db = tmp_path / "c.db"
    for content, label in ((a, "x"), (a + b, None), (b, "y"), (b + a, None)):
        log.write_bytes(content)
        run_cli(db, "import", str(log), *(["--label", label] if label else []))
    with Store(db) as store:
        before = [(s.label, s.lines, s.rejected) for s in store.sources()]
    assert [(label, count) for label, count, _ in before] == [("x", 2), ("y", 2)]
    merged = tmp_path / "m.db"
    for _ in range(2):  # merged again: nothing new, no source more
        assert run_cli(merged, "merge", str(db))[0] == 0
        with Store(merged) as store:
            assert [(s.label, s.lines, s.rejected) for s in store.sources()] == before


def test_a_grown_source_labelled_here_since_is_not_merged_again(tmp_path: Path) -> None:
    """A file that grew (no SHA-256) merged from a box, then labelled here by `import
    --label`: merging the box again added a second source of it (all duplicates; removing the
    file then removed both). Found by a model-based sequence of user operations."""
    a, b = X86.read_bytes().splitlines(keepends=True)[:2]
    log = tmp_path / "s.log"
    side, main = tmp_path / "side.db", tmp_path / "main.db"
    log.write_bytes(a)
    run_cli(side, "import", str(log))
    log.write_bytes(a + b)
    run_cli(side, "import", str(log))
    assert run_cli(main, "merge", str(side))[0] == 0
    assert run_cli(main, "import", "--label", "B", str(log))[0] == 0
    code, out, _ = run_cli(main, "merge", "--json", str(side))
    assert code == 0
    (source,) = json.loads(out)[0]["sources"]
    assert (source["new"], source["already_merged_as"], source["label_here"]) == (
        0,
        f"#1 {log}",
        None,
    )
    with Store(main) as store:
        assert [(s.id, s.label, s.lines, s.records) for s in store.sources()] == [(1, "B", 2, 2)]


def test_the_same_records_in_other_bytes_are_merged_as_a_new_source(tmp_path: Path) -> None:
    """A file with other bytes whose every record is here adds a source and no record."""
    a = make_db(tmp_path / "a.db", X86)
    both = tmp_path / "both.log"
    both.write_bytes(b"# a comment\n" + X86.read_bytes())
    b = make_db(tmp_path / "b.db", both)
    with Store(a) as store, imported(tmp_path, "i.db", X86, both) as reference:
        (report,) = tunelog.merge(store, [str(b)])
        assert (report.new, report.duplicates) == (0, 200)
        assert state(store, tmp_path) == state(reference, tmp_path)


def test_ties_keep_the_target_record_as_importing_its_files_first_does(tmp_path: Path) -> None:
    """Equal mean costs: the record imported first holds the slot, here the target's."""
    again = write_reencoded(tmp_path / "again.log", X86)
    a = make_db(tmp_path / "a.db", X86)
    b = make_db(tmp_path / "b.db", again)
    with merged(tmp_path, "ab.db", a, b) as ab, merged(tmp_path, "ba.db", b, a) as ba:
        assert sorted(lines_by_id(ab)) == sorted(lines_by_id(ba))
        with imported(tmp_path, "i.db", X86, again) as reference:
            assert state(ab, tmp_path) == state(reference, tmp_path)
        with imported(tmp_path, "j.db", again, X86) as reference:
            assert state(ba, tmp_path) == state(reference, tmp_path)
        winners_ab = [line.raw for line in ab.winner_lines()]
        winners_ba = [line.raw for line in ba.winner_lines()]
        assert all(b"0.16.dev0" in raw for raw in winners_ab)
        assert all(b"0.17.dev0" in raw for raw in winners_ba)


@pytest.mark.slow
def test_merging_the_ten_tophub_cuda_databases_equals_importing_the_logs(tmp_path: Path) -> None:
    require_shared()
    logs = sorted((CORPUS / "tophub").glob("cuda_*"))
    assert len(logs) == 10
    databases = [make_db(tmp_path / f"{log.name}.db", log) for log in logs]
    with Store(tmp_path / "merged.db") as store, imported(tmp_path, "i.db", *logs) as reference:
        reports = tunelog.merge(store, [str(db) for db in databases])
        assert sum(r.new for r in reports) == reference.stats().records
        assert_invariants(store)
        assert state(store, tmp_path) == state(reference, tmp_path)


# -- provenance ---------------------------------------------------------------------------------


def test_merged_sources_keep_their_provenance_and_rejected_lines(tmp_path: Path) -> None:
    b = make_db(tmp_path / "b.db", EDGE, label="lab-t4")
    with Store(b) as other:
        (original,) = other.sources()
    with Store(tmp_path / "a.db") as store:
        tunelog.merge(store, [str(b)])
        (source,) = store.sources()
        assert source.model_dump() == {
            **original.model_dump(),
            "merged_from": os.path.realpath(b),
        }
        assert store.rejects(source.id) == [
            tunelog.RejectedLine(
                15, "auto_scheduler record starting with a space: TVM's reader skips it"
            ),
            tunelog.RejectedLine(16, "invalid JSON at column 88"),
            tunelog.RejectedLine(17, "tab-separated text, not a JSON record"),
        ]
        (merged_at,) = store.conn.execute("SELECT merged_at FROM sources").fetchone()
        assert merged_at >= original.imported_at
    code, out, _ = run_cli(tmp_path / "a.db", "sources")
    assert code == 0
    header, _, row = out.splitlines()[:3]
    assert header.split()[-4:] == ["imported", "imports", "merged", "from"]
    # imported (the file's own import), imports (once), merged from (the database)
    assert row.split()[-3:] == [original.imported_at, "1", os.path.realpath(b)]


# -- what a merge refuses, and never touches ----------------------------------------------------


def test_an_older_database_is_merged_from_a_migrated_copy_and_left_untouched(
    tmp_path: Path,
) -> None:
    old = tmp_path / "v1.db"
    lines = X86.read_bytes().splitlines()[:3]
    _write_schema_1_database(old, lines)
    before = old.read_bytes()
    with Store(tmp_path / "a.db") as store:
        (report,) = tunelog.merge(store, [str(old)])
        assert (report.schema, report.new) == (1, 3)
        assert lines_by_id(store) == lines
        assert_invariants(store)
        # Its sources predate `sources.repair`: found again by their bytes after the import.
        (again,) = tunelog.merge(store, [str(old)])
        assert (again.new, again.duplicates) == (0, 3)
        assert len(store.sources()) == 1
    assert old.read_bytes() == before
    version = sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0]
    assert version == 1


def newer_database(path: Path) -> Path:
    make_db(path, X86)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    return path


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (newer_database, NewerSchemaError),
        (lambda p: p.write_bytes(b"not a database at all, just some text\n" * 100), None),
        (lambda p: None, InputNotFoundError),
    ],
)
def test_refused_databases_leave_the_target_unchanged(
    tmp_path: Path, make: Any, error: type[Exception] | None
) -> None:
    other = tmp_path / "other.db"
    make(other)
    with Store(make_db(tmp_path / "a.db", SHORT)) as store:
        before = state(store, tmp_path)
        # The good database given first is not merged either: all are checked before writing.
        good = make_db(tmp_path / "good.db", X86)
        with pytest.raises(error or NotATunelogDatabaseError):
            tunelog.merge(store, [str(good), str(other)])
        assert state(store, tmp_path) == before


@pytest.mark.parametrize("spelling", ["another path", "a hard link"])
def test_a_database_is_not_merged_into_itself(tmp_path: Path, spelling: str) -> None:
    db = make_db(tmp_path / "a.db", X86)
    other = tmp_path / "." / "a.db"
    if spelling == "a hard link":
        other = tmp_path / "link.db"
        os.link(db, other)
    with Store(db) as store, pytest.raises(SameDatabaseError):
        tunelog.merge(store, [str(other)])


def test_cli_refuses_a_newer_database_with_one_error_line(tmp_path: Path) -> None:
    newer = newer_database(tmp_path / "newer.db")
    before = newer.read_bytes()
    code, out, err = run_cli(tmp_path / "a.db", "merge", str(newer))
    assert (code, out) == (1, "")
    assert err == (
        f"Error: {newer} was written by a newer tunelog (schema {len(MIGRATIONS) + 1}, this one "
        f"knows {len(MIGRATIONS)}); upgrade tunelog to merge it\n"
    )
    assert newer.read_bytes() == before


def test_cli_merge_prints_a_table_and_again_says_already_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(X86, tmp_path / "x86.log")
    shutil.copyfile(EDGE, tmp_path / "edge.log")
    make_db(tmp_path / "b.db", Path("x86.log"), Path("edge.log"), label="t4")
    code, out, err = run_cli(Path("a.db"), "merge", "b.db")
    assert code == 0
    assert out == (
        "database    source    label    new    dup    note\n"
        "----------  --------  -------  -----  -----  ------\n"
        "b.db        x86.log   t4       200    0\n"
        "b.db        edge.log  t4       8      1\n"
    )
    assert err == "merged 208 new record(s) from 1 database(s) into a.db\n"
    code, out, err = run_cli(Path("a.db"), "merge", "b.db")
    assert code == 0
    assert out == (
        "database    source    label    new    dup    note\n"
        "----------  --------  -------  -----  -----  ---------------------------\n"
        "b.db        x86.log   t4       0      200    already here as #1 x86.log\n"
        "b.db        edge.log  t4       0      9      already here as #2 edge.log\n"
    )
    assert err == "merged 0 new record(s) from 1 database(s) into a.db\n"


def test_a_merged_sources_counts_are_its_row_in_sources(tmp_path: Path) -> None:
    """merge's new and dup for a source are what its `sources` row says after the merge:
    every record line the file held, new here or already held (a copy of a file imported
    beside it is all duplicates, which its row counts)."""
    log = tmp_path / "a.log"
    log.write_bytes(b"".join(X86.read_bytes().splitlines(keepends=True)[:5]))
    copy = tmp_path / "b.log"
    copy.write_bytes(log.read_bytes() + b"# the same records\n")
    other = make_db(tmp_path / "other.db", log, copy)
    with Store(tmp_path / "t.db") as store:
        (report,) = tunelog.merge(store, [str(other)])
        rows = {s.path: (s.records, s.duplicates) for s in store.sources()}
    assert [(s.path, s.new, s.duplicates) for s in report.sources] == [
        (str(log), 5, 0),
        (str(copy), 0, 5),
    ]
    assert [rows[str(log)], rows[str(copy)]] == [(5, 0), (0, 5)]


# -- a merge killed half-way --------------------------------------------------------------------

MERGED_LINES = 40_000


@pytest.fixture(scope="module")
def big_other(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database of MERGED_LINES distinct records: a merge of it takes a second or two."""
    root = tmp_path_factory.mktemp("big")
    return make_db(root / "other.db", make_log(root / "big.log", MERGED_LINES, seed=3))


def merge_and_signal(target: Path, other: Path, sig: int, wal_bytes: int) -> tuple[int, str]:
    """Run `tunelog merge OTHER` on TARGET, send `sig` once its WAL holds `wal_bytes`."""
    proc = start(target, "merge", str(other), stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if size(wal_of(target)) >= wal_bytes:
            proc.send_signal(sig)
            break
        time.sleep(0.002)
    code, _, err = finish(proc)
    return code, err


def sound_record_count(db: Path) -> int:
    """The database passes `PRAGMA integrity_check`; its number of records."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.slow
def test_a_sigkilled_merge_leaves_the_target_as_it_was(big_other: Path, tmp_path: Path) -> None:
    target = make_db(tmp_path / "target.db", X86)
    landed = 0
    for wal_bytes in (1 << 16, 1 << 20, 4 << 20):
        code, err = merge_and_signal(target, big_other, signal.SIGKILL, wal_bytes)
        records = sound_record_count(target)
        assert code in (0, -signal.SIGKILL), err
        # All or nothing: a kill after COMMIT (while the WAL is checkpointed) keeps it all.
        assert records in (200, 200 + MERGED_LINES)
        if records == 200 + MERGED_LINES:
            break
        landed += 1
    assert landed >= 1, "no kill landed during the merge"
    code, _, err = finish(start(target, "merge", str(big_other), stdout=subprocess.DEVNULL))
    assert code == 0, err
    with Store(target) as store:
        assert store.stats().records == 200 + MERGED_LINES
        assert_invariants(store)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sent", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_an_interrupted_merge_keeps_nothing_and_exits_130_or_143_for_sigterm(
    big_other: Path, tmp_path: Path, sent: signal.Signals, status: int
) -> None:
    import shutil

    target = make_db(tmp_path / "target.db", X86)
    (tmp_path / "box").mkdir()
    other = Path(shutil.copy(big_other, tmp_path / "box" / "other.db"))
    code, err = merge_and_signal(target, other, sent, 1 << 20)
    records = sound_record_count(target)
    # The other database's directory as it was: its -wal/-shm stayed (a cursor of the read
    # lived on in the interrupt's traceback; see store.readonly).
    assert sorted(p.name for p in other.parent.iterdir()) == ["other.db"]
    if records == 200 + MERGED_LINES:  # committed before the signal: nothing was interrupted
        return
    assert (code, err) == (status, f"Interrupted: nothing was merged, {target} is as it was\n")
    assert records == 200


@pytest.mark.parametrize(
    ("given", "error"),
    [
        (
            str(X86),
            f"Error: {X86} is not a tunelog database (SQLite says: file is not a database); "
            "merge takes databases, `tunelog import` takes log files\n",
        ),
        ("missing.db", "Error: missing.db: no such database file; give a tunelog database path\n"),
        ("a.db", "Error: a.db is the database being merged into; give another one\n"),
    ],
)
def test_cli_says_in_one_line_what_it_cannot_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, error: str
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(Path("a.db"), "merge", given)
    assert (code, out, err) == (1, "", error)


def test_a_database_without_records_merges_its_sources(tmp_path: Path) -> None:
    """Files whose every line was rejected (another tool's format) still come with their lines."""
    rejected = tmp_path / "other-format.log"
    rejected.write_bytes(b"# MetaSchedule database\n" + EDGE.read_bytes().splitlines()[15] + b"\n")
    other = make_db(tmp_path / "other.db", rejected)
    with (
        Store(make_db(tmp_path / "a.db", X86)) as store,
        imported(tmp_path, "i.db", X86, rejected) as reference,
    ):
        (report,) = tunelog.merge(store, [str(other)])
        assert (report.new, report.duplicates) == (0, 0)
        assert state(store, tmp_path) == state(reference, tmp_path)
        assert store.sources()[-1].rejected == 1


# -- any split of the same lines into databases -------------------------------------------------

_POOL = (
    X86.read_bytes().splitlines()
    + gzip.decompress(SHORT.read_bytes()).splitlines()
    + EDGE.read_bytes().splitlines()
)
_FILE = st.tuples(
    st.integers(0, len(_POOL) - 1), st.integers(1, 60), st.booleans()
)  # a window of the pool: start, length, re-encoded (the same measurements in other bytes)


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_FILE, min_size=1, max_size=3), min_size=2, max_size=3))
@example([[(338, 1, False)], [(338, 6, False)]])  # winners only v0.1 or failed: export refuses
# a copy of a file with rejected lines holds no record of its own: no source it replaces
@example([[(0, 1, False)], [(326, 14, False), (326, 14, False)]])
def test_any_databases_merge_as_their_files_import_in_order(
    databases: list[list[tuple[int, int, bool]]],
) -> None:
    with tempfile.TemporaryDirectory(prefix="tunelog-merge-") as tmp:
        root = Path(tmp)
        paths: list[list[Path]] = []
        for d, files in enumerate(databases):
            paths.append([])
            for f, (start, count, reencoded) in enumerate(files):
                lines = _POOL[start : start + count]
                if reencoded:
                    lines = [line.replace(b"0.16.dev0", b"0.17.dev0") for line in lines]
                path = root / f"d{d}f{f}.log"
                path.write_bytes(b"".join(line + b"\n" for line in lines))
                paths[d].append(path)
        made = [make_db(root / f"d{d}.db", *logs) for d, logs in enumerate(paths)]
        with (
            merged(root, "forward.db", *made) as forward,
            merged(root, "backward.db", *reversed(made)) as backward,
            imported(root, "reference.db", *(log for logs in paths for log in logs)) as reference,
        ):
            assert_invariants(forward)
            assert state(forward, root) == state(reference, root)
            assert sorted(lines_by_id(backward)) == sorted(lines_by_id(forward))
            assert_invariants(backward)


def test_a_failed_merge_into_a_new_database_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "new.db"
    code, _, err = run_cli(target, "merge", str(tmp_path / "missing.db"))
    assert code == 1 and err.startswith("Error: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_merge_carries_what_each_file_held(tmp_path: Path) -> None:
    """A file that held lines another stored first keeps holding them after a merge: its label
    answers as the file alone, and removing the other keeps them."""
    lines = X86.read_bytes().splitlines(keepends=True)
    first, grown = tmp_path / "first.log", tmp_path / "grown.log"
    first.write_bytes(b"".join(lines[:50]))
    grown.write_bytes(b"".join(lines[:80]))
    with Store(tmp_path / "run.db") as run:
        tunelog.import_paths(run, [str(first)], label="first")
        tunelog.import_paths(run, [str(grown)], label="grown")
    with Store(tmp_path / "alone.db") as alone:
        tunelog.import_paths(alone, [str(grown)])
        expected = sorted(line.raw for line in alone.winner_lines())
    with Store(tmp_path / "all.db") as merged:
        tunelog.merge(merged, [str(tmp_path / "run.db")])
        held = [(s.label, s.records, s.held, s.shared) for s in merged.sources()]
        assert held == [("first", 50, 50, 50), ("grown", 30, 80, 50)]
        chosen = tunelog.Filters(label="grown")
        assert sorted(line.raw for line in merged.winner_lines(chosen)) == expected
        tunelog.remove_sources(merged, "first")
        assert sorted(line.raw for line in merged.winner_lines()) == expected


def _box_merged_into_team(tmp_path: Path) -> tuple[Path, list[bytes], Path, Path]:
    """(log, its X86 lines, box, team): the log's first 10 lines imported into the box, the
    box merged into the team database."""
    log = tmp_path / "L.log"
    lines = X86.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:10]))
    box, team = tmp_path / "A.db", tmp_path / "T.db"
    run_cli(box, "import", str(log))
    assert run_cli(team, "merge", str(box))[0] == 0
    return log, lines, box, team


def test_a_source_read_on_here_since_a_merge_is_not_merged_again(tmp_path: Path) -> None:
    """The merge carried the file's resume point; the file grew and was read on here into
    that source (its SHA-256 gone with it): merging the box again added a second source of
    its first lines, all duplicates (found by a review)."""
    log, lines, box, team = _box_merged_into_team(tmp_path)
    log.write_bytes(b"".join(lines[:15]))
    run_cli(team, "import", str(log))
    code, out, _ = run_cli(team, "merge", "--json", str(box))
    assert code == 0
    (source,) = json.loads(out)[0]["sources"]
    assert (source["new"], source["already_merged_as"]) == (0, f"#1 {log}")
    with Store(team) as store:
        assert [(s.id, s.lines, s.records) for s in store.sources()] == [(1, 15, 15)]


def test_a_file_the_box_read_on_since_the_last_merge_is_read_on_here(tmp_path: Path) -> None:
    """A box reads on its tuner's grown log; the team database merging the box again added
    the whole grown read as a second source of the file (its first lines all duplicates),
    merge after merge (found by a review). It reads on into the source here, as an import of
    the grown file would."""
    from tests.conftest import database_contents, one_shot

    log, lines, box, team = _box_merged_into_team(tmp_path)
    log.write_bytes(b"".join(lines[:15]))
    run_cli(box, "import", str(log))
    with Store(team) as store:
        (merged,) = tunelog.merge(store, [str(box)])
    (source,) = merged.sources
    assert (source.new, source.duplicates, source.read_on_into) == (5, 10, f"#1 {log}")
    assert "already here as #1" in run_cli(team, "merge", str(box))[1]
    with Store(team) as store:
        assert [(s.id, s.lines, s.records, s.duplicates) for s in store.sources()] == [
            (1, 15, 15, 0)
        ]
        (report,) = tunelog.import_paths(store, [str(log)])
        assert report.already_imported_as == f"#1 {log}"  # the box's resume point came along
        assert database_contents(store.conn) == one_shot(tmp_path, log)


def test_a_half_written_line_rejected_here_is_read_again_from_the_box_s_whole_read(
    tmp_path: Path,
) -> None:
    """The source here rejected its last line half-written (read while a tuner wrote it); the
    box read it whole: the merge reads on from before that line (as an import of the grown
    file does), not into a second source that keeps the rejection for good."""
    log, lines, box, team = _box_merged_into_team(tmp_path)
    log.write_bytes(b"".join(lines[:10]) + lines[10][:30])
    run_cli(team, "import", str(log))  # reads on: line 11 rejected, still being written
    log.write_bytes(b"".join(lines[:15]))
    run_cli(box, "import", str(log))
    code, out, _ = run_cli(team, "merge", str(box))
    assert code == 0 and "read on into #1" in out
    with Store(team) as store:
        assert [(s.id, s.lines, s.records, s.rejected) for s in store.sources()] == [(1, 15, 15, 0)]
        assert store.conn.execute("SELECT count(*) FROM rejects").fetchone() == (0,)


def test_a_source_read_on_by_a_merge_keeps_no_point_before_its_lines(tmp_path: Path) -> None:
    """The box kept no resume point of its source (another file's import at the path, then
    removed): the point here stayed at the first merge's line 10, and the grown file was read
    again from there, lines 11-15 held twice (found by a review)."""
    log, lines, box, team = _box_merged_into_team(tmp_path)
    log.write_bytes(b"".join(lines[:15]))
    run_cli(box, "import", str(log))
    with Store(box) as store:
        store.conn.execute("DELETE FROM resume_points")
        store.conn.commit()
    assert "read on into #1" in run_cli(team, "merge", str(box))[1]
    log.write_bytes(b"".join(lines[:20]))
    run_cli(team, "import", str(log))
    with Store(team) as store:
        # Read in full again (no point to read on from): a second source, no line held twice.
        assert [(s.lines, s.records, s.duplicates) for s in store.sources()] == [
            (15, 15, 0),
            (20, 5, 15),
        ]


def test_another_box_s_read_of_a_file_at_the_same_path_is_not_read_on(tmp_path: Path) -> None:
    """Two boxes import their own `tune.log` at one path in the same second, B's longer: B's
    fresh read was read on into A's source, its label lost (found by a review)."""
    lines = X86.read_bytes().splitlines(keepends=True)
    log = tmp_path / "tune.log"
    first, second, team = tmp_path / "A.db", tmp_path / "B.db", tmp_path / "T.db"
    log.write_bytes(b"".join(lines[:10]))
    run_cli(first, "import", "--label", "boxA", str(log))
    log.write_bytes(b"".join(lines[:20]))
    run_cli(second, "import", "--label", "boxB", str(log))
    for db in (first, second):
        with Store(db) as store:
            store.conn.execute("UPDATE sources SET imported_at = '2026-01-01T00:00:00+00:00'")
            store.conn.execute(
                "UPDATE source_imports SET imported_at = '2026-01-01T00:00:00+00:00'"
            )
            store.conn.commit()
    run_cli(team, "merge", str(first), str(second))
    with Store(team) as store:
        assert [(s.label, s.lines) for s in store.sources()] == [("boxA", 10), ("boxB", 20)]


def test_the_merge_table_says_a_source_was_read_on(tmp_path: Path) -> None:
    log, lines, box, team = _box_merged_into_team(tmp_path)
    log.write_bytes(b"".join(lines[:12]))
    run_cli(box, "import", str(log))
    code, out, _ = run_cli(team, "merge", str(box))
    assert code == 0 and f"read on into #1 {log} (the file grew)" in out
