"""`tunelog diff A B` (issue 12): per layer and target group, A's and B's best latency."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import tunelog
from tests.conftest import REPO, SAMPLE_LOGS, X86, invoke, make_db, run, undo_migrations
from tests.test_merge import write_rescaled
from tunelog.exceptions import UnknownSourceError

SHORT = SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz"


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the checkout, so sample paths are short; no TUNELOG_DB."""
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("TUNELOG_DB", raising=False)


X86_VS_SHORT = """\
target    operator    shapes                        A         B         B/A    change        winner
--------  ----------  ----------------------------  --------  --------  -----  ------------  ----------------------------------
cpu       conv2d      1x3x32x32 * 16x3x3x3 s1 p1    29.6 us   45.1 us   1.53x  slower +53%   conv2d_NCHWc.x86
cpu       conv2d      1x16x32x32 * 32x16x3x3 s1 p1  116.0 us  358.8 us  3.09x  slower +209%  conv2d_NCHWc.x86
cpu       conv2d      1x32x32x32 * 32x32x1x1 s2 p0  19.9 us   33.5 us   1.68x  slower +68%   conv2d_NCHWc.x86
cpu       dense       1x8192 * 10x8192              11.3 us   14.6 us   1.29x  slower +29%   dense_nopack.x86 -> dense_pack.x86
"""  # noqa: E501


def test_diff_of_two_logs_shows_per_layer_ratios(in_repo: None, tmp_path: Path) -> None:
    code, out, err = run(
        "--db",
        str(tmp_path / "unused.db"),
        "diff",
        str(X86.relative_to(REPO)),
        "sample_logs/x86_mini_short_timeouts.log.gz",
    )
    assert code == 0
    assert out == X86_VS_SHORT
    assert err == "4 layer(s): 4 slower; 1 winning template change(s) (threshold 5%)\n"
    assert not (tmp_path / "unused.db").exists()  # logs are compared in temporary databases


def test_within_the_threshold_a_layer_is_the_same(in_repo: None) -> None:
    code, out, err = run("diff", "--threshold", "30", str(X86), str(SHORT))
    assert code == 0
    assert "11.3 us   14.6 us   1.29x  same" in out
    assert err == "4 layer(s): 3 slower, 1 same; 1 winning template change(s) (threshold 30%)\n"


@pytest.mark.parametrize(
    ("pct", "code", "error"),
    [
        (
            "60",
            1,
            "Error: 2 layer(s) regressed: 2 slower in B by more than 60%: re-tune them, "
            "or raise --fail-on-regression\n",
        ),
        (
            "20",
            1,
            "Error: 4 layer(s) regressed: 4 slower in B by more than 20%: re-tune them, "
            "or raise --fail-on-regression\n",
        ),
        ("210", 0, ""),
    ],
)
def test_fail_on_regression_exits_1_beyond_the_given_percent(
    in_repo: None, pct: str, code: int, error: str
) -> None:
    got, out, err = run("diff", str(X86), str(SHORT), "--fail-on-regression", pct)
    assert got == code
    assert out == X86_VS_SHORT  # the table is printed either way
    assert err.endswith("(threshold 5%)\n" + error)


def test_diff_json(in_repo: None) -> None:
    code, out, _ = run("diff", str(X86), str(SHORT), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["counts"]["slower"] == 4
    assert data["winner_changes"] == 1
    dense = data["layers"][3]
    assert {k: dense[k] for k in ("target", "operator", "status", "a_template", "b_template")} == {
        "target": "cpu",
        "operator": "dense",
        "status": "slower",
        "a_template": "dense_nopack.x86",
        "b_template": "dense_pack.x86",
    }
    assert dense["ratio"] == pytest.approx(dense["b_latency"] / dense["a_latency"])
    assert dense["change_pct"] == pytest.approx(29.05, abs=0.01)
    assert dense["winner_changed"] is True


@pytest.mark.parametrize(
    ("factor", "status"),
    [
        (1.06, "slower"),
        (1.04, "same"),
        (0.96, "same"),
        (0.94, "faster"),
        (1.0, "same"),
        # exactly 5 %: not beyond it (floats made it 5.000000000000004 %, "slower")
        (1.05, "same"),
        (0.95, "same"),
    ],
)
def test_a_change_counts_beyond_the_threshold_only(
    tmp_path: Path, factor: float, status: str
) -> None:
    b = write_rescaled(tmp_path / "b.log", X86, factor)
    report = tunelog.diff(str(X86), str(b), threshold_pct=5.0)
    assert [d.status for d in report.layers] == [status] * 4
    assert [d.ratio for d in report.layers] == pytest.approx([factor] * 4)


def test_layers_only_in_one_run_and_untuned_layers(tmp_path: Path) -> None:
    lines = X86.read_bytes().splitlines(keepends=True)
    dense = [line for line in lines if b"dense" in line]
    # Every dense trial fails (error 4, a runtime error).
    failed = [re.sub(rb'("result": \[\[[^\]]*\]), 0,', rb"\1, 4,", line) for line in dense]
    assert failed != dense
    arm = [
        line.replace(b"llvm -keys=cpu", b"llvm -keys=arm_cpu,cpu -device=arm_cpu")
        for line in lines[:5]
    ]
    b = tmp_path / "b.log"
    b.write_bytes(b"".join(failed + arm))
    report = tunelog.diff(str(X86), str(b))
    assert [(d.target, d.operator, d.status) for d in report.layers] == [
        ("cpu", "conv2d", "only in A"),
        ("cpu", "conv2d", "only in A"),
        ("cpu", "conv2d", "only in A"),
        ("cpu", "dense", "untuned in B"),
        ("arm_cpu,cpu", "conv2d", "only in B"),
    ]
    assert [d.model_dump()["b_latency"] for d in report.layers[3:4]] == [None]
    # a layer left untuned or missing in B is always one (3 only in A, 1 untuned in B)
    assert len(report.regressions(1000.0)) == 4


def test_a_layer_another_machine_answers_is_warned_of(tmp_path: Path) -> None:
    """B's dense trials all failed on its machine and one record of another -model answers
    the layer: `diff` showed it faster, unsaid, where `workloads` warns."""
    lines = X86.read_bytes().splitlines(keepends=True)
    dense = [line for line in lines if b"dense" in line]
    failed = [re.sub(rb'("result": \[\[[^\]]*\]), 0,', rb"\1, 4,", line) for line in dense]
    elsewhere = re.sub(rb'"llvm -keys=cpu[^"]*"', b'"llvm -keys=cpu -model=foo"', dense[0])
    b = tmp_path / "b.log"
    b.write_bytes(b"".join(failed) + elsewhere)
    report = tunelog.diff(str(X86), str(b))
    assert report.notes == [
        "B: 1 layer(s) answered by a record measured on another machine than their target's "
        "(their latency is that machine's): `tunelog workloads` on a database of B's files lists "
        "them under warnings"
    ]


def test_labels_sources_and_databases_name_the_same_runs(in_repo: None, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with tunelog.open_store(db) as store:
        tunelog.import_paths(store, [str(X86)], label="before")
        tunelog.import_paths(store, [str(SHORT)], label="after")
    a_db, b_db = make_db(tmp_path / "a.db", X86), make_db(tmp_path / "b.db", SHORT)
    for a, b in [("label:before", "label:after"), ("source:1", "source:2"), (a_db, b_db)]:
        code, out, err = run("--db", str(db), "diff", str(a), str(b))
        assert (code, out) == (0, X86_VS_SHORT), err


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "label:nope",
            "no source of {db} matches 'label:nope': see `tunelog sources` for ids and labels",
        ),
        (
            "source:9",
            "no source of {db} matches 'source:9': see `tunelog sources` for ids and labels",
        ),
    ],
)
def test_an_unknown_label_or_source_is_one_error_line(
    tmp_path: Path, spec: str, message: str
) -> None:
    db = make_db(tmp_path / "runs.db", X86, label="before")
    code, out, err = run("--db", str(db), "diff", "label:before", spec)
    assert (code, out) == (1, "")
    assert err == f"Error: {message.format(db=db)}\n"
    with pytest.raises(UnknownSourceError):
        tunelog.diff("label:before", spec, db=str(db))


def test_a_label_whose_files_held_no_record_is_refused_as_such_a_file_is(tmp_path: Path) -> None:
    """`label:NAME` compares what its files held, as diff of those files would: files that
    held no record (here a comments-only log) are refused, not an empty run."""
    notes = tmp_path / "notes.log"
    notes.write_text("# nothing tuned yet\n")
    db = make_db(tmp_path / "runs.db", X86, label="before")
    with tunelog.open_store(db) as store:
        tunelog.import_paths(store, [str(notes)], label="empty")
    assert run("--db", str(db), "diff", "label:before", "label:empty") == (
        1,
        "",
        "Error: B (label:empty) holds no tuning record (its files held none): nothing to "
        "compare; see `tunelog sources`\n",
    )


def test_a_label_side_never_makes_an_empty_db_file_a_database(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    db.write_bytes(b"")
    code, out, err = run("--db", str(db), "diff", "label:x", str(X86))
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: {db} is empty, no tunelog database yet")
    assert db.read_bytes() == b""


def test_rejected_lines_of_a_compared_log_are_a_warning(in_repo: None) -> None:
    code, out, err = run("diff", "sample_logs/edge_cases.log", str(X86))
    assert code == 0
    assert out.splitlines()[2].startswith("cuda,gpu (t4)  conv2d      1x64x56x56 * 64x64x3x3")
    assert err == (
        "warning: A: sample_logs/edge_cases.log: 3 line(s) rejected (`tunelog import` it to see "
        "why)\n"
        "warning: A: 2 layer(s) answered by a record measured on another machine than their "
        "target's (their latency is that machine's): `tunelog workloads` on a database of A's "
        "files lists them under warnings\n"
        "7 layer(s): 3 only in A, 4 only in B; 0 winning template change(s) (threshold 5%)\n"
    )


def test_a_layer_missing_from_b_fails_the_regression_check(tmp_path: Path) -> None:
    """B's model runs a layer B never tuned with a fallback config: a regression for CI."""
    part = tmp_path / "part.log"
    part.write_bytes(b"".join(X86.read_bytes().splitlines(keepends=True)[:3]))
    result = invoke(
        ["--db", str(tmp_path / "x.db"), "diff", str(X86), str(part), "--fail-on-regression", "5"],
    )
    assert result.exit_code == 1
    # The layers B lacks are said as such (it said "slower ... or untuned or missing" of all).
    assert "missing in B" in result.stderr and "slower" not in result.stderr.splitlines()[-1]


@pytest.mark.parametrize(
    ("name", "content", "what"),
    [
        ("empty.log", b"", "empty"),
        ("notes.log", b"# tuned on Friday\n\n", "only comments and blank lines"),
        (
            "notes.md",
            b"# Results\n\nall good\n",
            "it looks like Markdown text; 1 of 3 line(s) rejected",
        ),
        (  # prose with typographic quotes: no paste for --repair to mend
            "quoted.md",
            "# Results\n\nIt \u201cworks\u201d\n".encode(),
            "it looks like Markdown text; 1 of 3 line(s) rejected",
        ),
        ("logs", None, "no tuning log"),
    ],
)
@pytest.mark.parametrize("side", ["A", "B"])
def test_a_side_of_logs_without_a_record_is_refused(
    tmp_path: Path, name: str, content: bytes | None, what: str, side: str
) -> None:
    """Comparing with nothing is a wrong path, not a finding: a side of logs that holds no
    record is refused (exit 1), not listed as every layer "only in" the other."""
    empty = tmp_path / name
    if content is None:
        empty.mkdir()
    else:
        empty.write_bytes(content)
    sides = [str(empty), str(X86)] if side == "A" else [str(X86), str(empty)]
    assert run("--db", str(tmp_path / "x.db"), "diff", *sides) == (
        1,
        "",
        f"Error: {side} ({empty}) holds no tuning record ({what}): nothing to compare; diff "
        "compares tunelog databases, log files or directories of logs\n",
    )


def test_a_side_that_needs_repair_says_how_to_import_it(tmp_path: Path) -> None:
    """A log pasted from a web page (typographic quotes) holds records once repaired: diff,
    which has no --repair, says how to make a database of it to compare."""
    pasted = tmp_path / "paste.log"
    line = X86.read_text().splitlines()[0]
    head, *quoted = line.split('"')
    pasted.write_text(
        head
        + "".join(("\u201c" if i % 2 == 0 else "\u201d") + q for i, q in enumerate(quoted))
        + "\n",
        encoding="utf-8",
    )
    assert run("--db", str(tmp_path / "x.db"), "diff", str(X86), str(pasted)) == (
        1,
        "",
        f"Error: B ({pasted}) holds no tuning record as it is: typographic quotes (pasted from "
        f"a web page?): use --repair (`tunelog --db B.db import --repair {pasted}`, then give "
        "B.db to diff)\n",
    )


def test_standard_input_is_one_side_at_most() -> None:
    """`-` reads standard input, once: as one side it compares; empty, it is refused; as
    both sides it is a usage error."""
    log = X86.read_text()
    assert invoke(["diff", str(X86), "-", "--json"], input=log).exit_code == 0
    result = invoke(["diff", str(X86), "-"], input="")
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: B (-) holds no tuning record (standard input is empty): nothing to compare; "
        "diff compares tunelog databases, log files or directories of logs\n",
    )
    result = invoke(["diff", "-", "-"], input=log)
    assert result.exit_code == 2
    assert "A and B are both standard input, which can be read only once" in result.stderr


@pytest.mark.parametrize("journal", ["wal", "delete"])
@pytest.mark.parametrize("older", [False, True])
@pytest.mark.parametrize("command", ["diff", "merge"])
def test_a_database_read_as_input_leaves_its_file_and_directory_as_they_were(
    tmp_path: Path, command: str, older: bool, journal: str
) -> None:
    """A database `diff` compares or `merge` reads is the user's: its bytes, its journal mode
    and its directory (no `-wal`/`-shm` left beside it) are as before, whatever its schema."""
    side = tmp_path / "side"
    side.mkdir()
    db = make_db(side / "run.db", X86)
    with sqlite3.connect(db, isolation_level=None) as conn:
        if older:
            undo_migrations(conn, 12)
        conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.close()
    before, listed = db.read_bytes(), sorted(side.iterdir())
    other = str(tmp_path / "other.db")
    if command == "diff":
        code, out, err = run("--db", other, "diff", str(db), str(X86), "--json")
        assert (code, err) == (0, "")
        assert {row["status"] for row in json.loads(out)["layers"]} == {"same"}
    else:
        code, _, err = run("--db", other, "merge", str(db))
        assert code == 0, err
    assert (db.read_bytes(), sorted(side.iterdir())) == (before, listed)


def _crash_while_writing(db: Path) -> None:
    """Leave what a writer that stopped mid-way leaves: a hot journal beside a rollback-mode
    database, or committed frames in the `-wal` of a WAL database never checkpointed."""
    script = (
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "wal = c.execute('PRAGMA journal_mode').fetchone()[0] == 'wal'\n"
        "c.execute('PRAGMA cache_size = 10')\n"  # spill pages: the journal is written
        "c.execute('BEGIN')\n"
        "c.execute('CREATE TABLE scratch (x)')\n"
        "c.executemany('INSERT INTO scratch VALUES (?)', [(os.urandom(500),)] * 2000)\n"
        "if wal: c.execute('COMMIT')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=True)


@pytest.mark.parametrize("command", ["diff", "merge"])
def test_a_database_left_with_a_hot_journal_is_refused_and_left_as_it_is(
    tmp_path: Path, command: str
) -> None:
    """A rollback-mode database a writer left mid-write must be rolled back before anyone
    reads it: diff and merge say so and how, and leave the file and its journal alone (the
    roll-back is the user's choice, by opening it with tunelog)."""
    db = make_db(tmp_path / "run.db", X86)
    with sqlite3.connect(db, isolation_level=None) as conn:
        conn.execute("PRAGMA journal_mode = delete")
    conn.close()
    _crash_while_writing(db)
    journal = tmp_path / "run.db-journal"
    before = (db.read_bytes(), journal.read_bytes())
    args = [str(db), str(X86), "--json"] if command == "diff" else [str(db)]
    code, out, err = run("--db", str(tmp_path / "x.db"), command, *args)
    assert (code, out) == (1, "")
    assert err == (
        f"Error: {db} holds an unfinished write (run.db-journal, left by a program that "
        "stopped while writing), which must be rolled back before it is read: open it once "
        f"with `sqlite3 {db} 'PRAGMA quick_check'` (or any command of the tunelog that wrote "
        f"it), then {command} again\n"
    )
    assert (db.read_bytes(), journal.read_bytes()) == before
    with sqlite3.connect(db) as conn:  # what the advice runs: any read rolls it back
        assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)
    conn.close()
    assert not journal.exists()
    assert run("--db", str(tmp_path / "x.db"), command, *args)[0] == 0


def test_a_database_read_through_a_link_leaves_another_writers_log_alone(tmp_path: Path) -> None:
    """Through a symbolic link, the side files SQLite uses are beside the file linked to: the
    `-wal` a stopped writer left there (committed, not yet written into the file) is not this
    read's to checkpoint."""
    (tmp_path / "real").mkdir()
    (tmp_path / "links").mkdir()
    db = make_db(tmp_path / "real" / "run.db", X86)
    _crash_while_writing(db)
    wal = tmp_path / "real" / "run.db-wal"
    before = (db.read_bytes(), wal.read_bytes())
    link = tmp_path / "links" / "run.db"
    link.symlink_to(db)
    code, _, err = run("--db", str(tmp_path / "x.db"), "diff", str(link), str(X86), "--json")
    assert (code, err) == (0, "")
    assert (db.read_bytes(), wal.read_bytes()) == before
    assert sorted(p.name for p in (tmp_path / "links").iterdir()) == ["run.db"]


def test_a_database_read_while_another_connection_holds_it_keeps_its_side_files(
    tmp_path: Path,
) -> None:
    """The `-wal`/`-shm` files of a database another process has open are that process's:
    `diff` leaves them (and the other connection's view) alone."""
    db = make_db(tmp_path / "run.db", X86)
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("SELECT count(*) FROM records").fetchone()
        listed = sorted(tmp_path.iterdir())
        assert {p.name for p in listed} >= {"run.db-wal", "run.db-shm"}
        code, _, err = run("--db", str(tmp_path / "x.db"), "diff", str(db), str(X86), "--json")
        assert (code, err) == (0, "")
        assert [p for p in sorted(tmp_path.iterdir()) if p.name.startswith("run.db")] == listed
        assert holder.execute("SELECT count(*) FROM records").fetchone() == (200,)
    finally:
        holder.close()


@pytest.mark.parametrize("version", [3, 12])
def test_an_older_database_is_compared_from_a_migrated_copy_and_left_untouched(
    tmp_path: Path, version: int
) -> None:
    """A side of `diff` is the user's file, only read: a database of an older schema is
    compared as it is after migration, and its bytes and schema stay as they were (migrating
    it would lock out the tunelog that wrote it)."""
    old = make_db(tmp_path / "old.db", X86)
    with sqlite3.connect(old, isolation_level=None) as conn:
        undo_migrations(conn, version)
    conn.close()
    before = old.read_bytes()
    new = make_db(tmp_path / "new.db", X86)
    code, out, err = run("--db", str(new), "diff", str(old), str(new), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["layers"] and {row["status"] for row in report["layers"]} == {"same"}
    assert old.read_bytes() == before
    with sqlite3.connect(old) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == version
    conn.close()


def test_a_layer_answered_only_by_v01_records_is_untuned_in_diff_and_network(
    tmp_path: Path,
) -> None:
    """One rule (rules.untuned): `untuned` lists it, so diff calls it untuned in B and the
    network totals leave its latency out (review: both still counted it tuned)."""
    from tests.conftest import EDGE_LINES

    v01 = tmp_path / "v01.log"
    v01.write_bytes(EDGE_LINES[18])  # a v0.1 topi_nn_dense record of cuda -model=t4
    code, out, err = run("diff", str(v01), str(v01), "--json")
    assert code == 0, err
    (layer,) = json.loads(out)["layers"]
    assert layer["status"] == "untuned"
    db = str(tmp_path / "n.db")
    assert run("--db", db, "import", str(v01))[0] == 0
    (group,) = json.loads(run("--db", db, "network", "--json")[1])
    assert (group["untuned"], group["total"]) == (1, 0.0)
