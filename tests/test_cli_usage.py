"""The CLI as people use it: directories, a forgotten --db, terminals, pipes, help, rejects."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import shutil
import sqlite3
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from tabulate import tabulate

from tests.conftest import (
    EDGE,
    EDGE_LINES,
    REPO,
    V01_NOTE,
    X86,
    run,
    runner,
    write_mixed_version_log,
)
from tunelog.cli import app, app_for, hoist_global_options
from tunelog.discovery import looks_like_log
from tunelog.tables import Column, fit_table, simple_table

# -- directory import -------------------------------------------------------------------------


def a_checkout(root: Path) -> Path:
    """What `tunelog import .` meets: logs among docs, dot-directories, a database, a JSON."""
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "hidden.log").write_bytes(EDGE.read_bytes())
    (root / "runs").mkdir()
    shutil.copy(X86, root / "runs" / "x86.log")
    (root / "runs" / "edge.log.gz").write_bytes(gzip.compress(EDGE.read_bytes()))
    (root / "runs" / "notes.tar.gz").write_bytes(gzip.compress(b"notes.txt\0\0\0"))
    (root / "README.md").write_text("# my runs\n")
    (root / "config.json").write_text('{"trials": 1000}\n')
    sqlite3.connect(root / "old.db").execute("CREATE TABLE t (x)").connection.commit()
    return root


IMPORTED_DIRECTORY = """\
file                lines    new    dup    comments    blank    rejected    note
------------------  -------  -----  -----  ----------  -------  ----------  ------
d/runs/edge.log.gz  19       8      1      6           1        3
d/runs/x86.log      200      200    0      0           0        0
total (2 files)     219      208    1      6           1        3
"""


def test_directory_import_reads_only_logs_and_says_what_it_skipped(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a_checkout(tmp_path / "d")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("--db", db, "import", "d", "--exclude", "*.json")
    assert (code, out) == (0, IMPORTED_DIRECTORY)
    assert err.splitlines()[:5] == [
        "skipped d/README.md: not a tuning log",
        "skipped d/config.json: left out by --include/--exclude",
        "skipped d/old.db: SQLite database",
        "skipped d/runs/notes.tar.gz: not a tuning log",
        "skipped 4 file(s) in directories (not a tuning log: 2, SQLite database: 1, "
        "left out by --include/--exclude: 1); did not enter 1 dot-directory "
        "(see `tunelog import --help`)",
    ]
    skipped = json.loads(run("--db", db, "import", "d", "--exclude", "*.json", "--json")[1])
    assert skipped["skipped"][0] == {"path": "d/README.md", "reason": "not a tuning log"}


def test_a_symlinked_run_directory_is_walked_and_a_loop_said(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # os.walk follows no directory link: a linked run was left out without a word.
    (tmp_path / "elsewhere").mkdir()
    shutil.copy(X86, tmp_path / "elsewhere" / "x86.log")
    (tmp_path / "d").mkdir()
    shutil.copy(EDGE, tmp_path / "d" / "edge.log")
    (tmp_path / "d" / "run1").symlink_to("../elsewhere")
    (tmp_path / "d" / "run2").symlink_to("../elsewhere")  # the same run, linked twice
    (tmp_path / "d" / "self").symlink_to(".")  # a loop
    (tmp_path / "d" / "run-7").mkdir()  # a real run a link sorting before it reaches
    shutil.copy(EDGE, tmp_path / "d" / "run-7" / "e7.log")
    (tmp_path / "d" / "latest").symlink_to("run-7")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("--db", db, "import", "d")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[2:5]] == [
        "d/edge.log",
        "d/run-7/e7.log",  # its own path, not d/latest/e7.log
        "d/run1/x86.log",
    ]
    assert (
        "did not enter 3 directories reached again through a symlink "
        "(see `tunelog import --help`)" in err.splitlines()
    )


@pytest.mark.parametrize(
    "pack", [gzip.compress, bz2.compress, lzma.compress], ids=["gz", "bz2", "xz"]
)
def test_a_compressed_log_whose_first_stream_holds_only_comments_is_a_log(
    db: str, tmp_path: Path, pack: Callable[[bytes], bytes]
) -> None:
    # The sniff read the first stream alone: "not a tuning log", which an import of the file
    # by name read in full.
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "run.log.z").write_bytes(pack(b"# header\n") + pack(X86.read_bytes()))
    code, out, _ = run("--db", db, "import", str(tmp_path / "d"), "--json")
    assert code == 0 and [f["new"] for f in json.loads(out)["files"]] == [200]


def test_include_reads_only_matching_files(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a_checkout(tmp_path / "d")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("--db", db, "import", "--include", "runs/*.log", "d")
    assert code == 0
    assert out.splitlines()[2:] == ["d/runs/x86.log  200      200    0      0           0        0"]


@pytest.mark.parametrize(
    ("head", "is_log"),
    [
        (b'{"input": ["llvm"', True),
        (b'\xef\xbb\xbf# comment\n\n  {"i": []}\n', True),
        (b"# only comments\n\n", False),
        (b"", False),
        (b"# tunelog\nImport logs\n", False),
        (b'{"a": 1}\x00\x00', False),
        (b'# a\x00b\n{"a": 1}\n', False),
        # NUL bytes after a first record (a crashed tuner's block): the import rejects them
        (b'{"input": ["llvm"]}\n\x00\x00\x00\n{"input": ["llvm"]}\n', True),
        (b"[1, 2]\n", False),
    ],
)
def test_the_sniff_rule(head: bytes, is_log: bool) -> None:
    assert looks_like_log(head) is is_log


def test_a_directory_log_with_nul_bytes_after_its_first_record_is_imported(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (REPO / "sample_logs/x86_mini_llvm.log").read_bytes().splitlines(keepends=True)
    (tmp_path / "d").mkdir()
    (tmp_path / "d/crashed.log").write_bytes(
        b"".join([*lines[:3], b"\x00" * 8 + b"\n", *lines[3:]])
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run("--db", db, "import", "d")
    assert code == 0
    assert out.splitlines()[2] == "d/crashed.log  201      200    0      0           0        1"
    assert "d/crashed.log:4: NUL byte in line (binary data?)" in err


# -- the database: where it is looked for ---------------------------------------------------------


@pytest.mark.parametrize("command", ["sources", "stats", "best", "workloads", "untuned", "errors"])
def test_read_commands_on_a_missing_database_say_where_they_looked(db: str, command: str) -> None:
    code, out, err = run("--db", db, command)
    assert (code, out) == (1, "")
    assert err == (
        f"Error: no database at {db}: import logs first (`tunelog import LOGS`), or choose "
        "another with --db PATH or TUNELOG_DB\n"
    )
    assert not Path(db).exists()


@pytest.mark.parametrize("command", ["sources", "stats", "best", "workloads", "untuned", "errors"])
def test_read_commands_leave_an_empty_database_file_empty(db: str, command: str) -> None:
    """Only a command that adds data makes an empty file (`touch`) a database, as with a
    missing one; a read command says so and leaves it as it was."""
    Path(db).touch()
    code, out, err = run("--db", db, command)
    assert (code, out) == (1, "")
    assert err == (
        f"Error: {db} is empty, no tunelog database yet: import logs into it first "
        f"(`tunelog --db {db} import LOGS`), or choose another --db\n"
    )
    assert Path(db).read_bytes() == b""
    assert sorted(p.name for p in Path(db).parent.iterdir()) == [Path(db).name]
    assert run("--db", db, "import", str(X86))[0] == 0
    assert run("--db", db, command)[0] == 0


def test_db_is_accepted_after_the_command(db: str) -> None:
    run("import", str(X86), "--db", db)
    code, out, _ = run("stats", f"--db={db}", "--json")
    assert code == 0 and '"records": 200' in out


@pytest.mark.parametrize(
    ("args", "hoisted"),
    [
        (["best", "--db", "x.db"], ["--db", "x.db", "best"]),
        (["--wide", "best", "--db=x.db", "-h"], ["--wide", "--db=x.db", "best", "-h"]),
        (["export", "--", "--db"], ["export", "--", "--db"]),
        (["--db", "a.db", "stats", "--wide"], ["--db", "a.db", "--wide", "stats"]),
    ],
)
def test_global_options_move_in_front_of_the_command(args: list[str], hoisted: list[str]) -> None:
    assert hoist_global_options(args) == hoisted


# -- empty results and exit codes ---------------------------------------------------------------


UNTUNED_CHECK = """\
target    operator    shapes            templates       trials    errors            answered by
--------  ----------  ----------------  --------------  --------  ----------------  -------------
cpu       dense       1x8192 * 10x8192  dense_pack.x86  3         BUILD_TIMEOUT x3
"""


def test_untuned_check_exits_1_when_a_layer_is_untuned(db: str, tmp_path: Path) -> None:
    failed = tmp_path / "failed.log"
    failed.write_bytes(
        b"\n".join(
            line
            for line in X86.read_bytes().splitlines()
            if b"dense_pack" in line and b"[1000000000.0]" in line
        )
    )
    run("--db", db, "import", str(failed))
    code, out, err = run("--db", db, "untuned", "--check")
    assert (code, out, err) == (
        1,
        UNTUNED_CHECK,
        "1 layer(s) untuned: 1 will run an untuned fallback config (--check)\n",
    )
    run("--db", db, "import", str(X86))
    assert run("--db", db, "untuned", "--check") == (
        0,
        "",
        "every layer has at least one valid measurement\n",
    )


def test_untuned_lists_a_layer_answered_only_by_v01_records(db: str, tmp_path: Path) -> None:
    """TVM >= 0.7 skips v0.1 lines: a layer whose only answers are v0.1 records runs a fallback
    config, so `untuned --check` fails on it, naming the record (as `diagnose` says v01_only)."""
    v01 = tmp_path / "v01.log"
    v01.write_bytes(EDGE_LINES[18])  # a v0.1 topi_nn_dense record of cuda -model=t4
    run("--db", db, "import", str(v01))
    code, out, err = run("--db", db, "untuned", "--check", "--json")
    assert (code, err) == (1, "")
    (layer,) = json.loads(out)
    assert (layer["winner"], layer["target_keys"]) == ("topi_nn_dense", ["cuda", "gpu"])
    assert layer["answered_by"] == "v0.1 records only, which TVM >= 0.7 skips (v01.log:1)"
    code, out, err = run("--db", db, "untuned")
    assert code == 0
    assert out.splitlines()[2].endswith("v0.1 records only, which TVM >= 0.7 skips (v01.log:1)")


def test_workloads_says_how_many_layers_only_v01_records_answer(db: str, tmp_path: Path) -> None:
    """`workloads` shows a v0.1 winner's latency (an old TVM would use it), and says on stderr
    that TVM >= 0.7 compiles those layers with a fallback config; `--json` marks each layer."""
    v01 = tmp_path / "v01.log"
    v01.write_bytes(EDGE_LINES[18])  # a v0.1 topi_nn_dense record of cuda -model=t4
    run("--db", db, "import", str(X86), str(v01))
    code, out, err = run("--db", db, "workloads")
    assert code == 0
    assert err == V01_NOTE
    assert "topi_nn_dense [direct] (v0.1)" in out
    # Filtered, the note counts the layers shown and names `untuned` with the same filter.
    assert run("--db", db, "workloads", "--model", "t4")[2] == V01_NOTE.replace(
        "`tunelog untuned`", "`tunelog untuned --model 't4'`"
    )
    assert run("--db", db, "workloads", "--target-key", "cpu")[2] == ""
    # curve and knobs head the template as what an old TVM picks, not relay's pick.
    for command in ("curve", "knobs"):
        out = run("--db", db, command, "1x512 * 1000x512", "--target-key", "cuda")[1]
        assert out.splitlines()[0] == (
            "cuda,gpu (t4)  1x512 * 1000x512  topi_nn_dense [direct] (v0.1)  (only an old TVM "
            "picks it: TVM >= 0.7 skips v0.1 records)"
        )
    code, out, err = run("--db", db, "workloads", "--json")
    assert (code, err) == (0, "")
    layers = json.loads(out)
    flagged = {(lay["winner"], tuple(lay["target_keys"])) for lay in layers if lay["v01_only"]}
    assert flagged == {("topi_nn_dense", ("cuda", "gpu"))}


def test_the_v01_note_names_untuned_with_the_users_label(db: str, tmp_path: Path) -> None:
    """Under --label, the layer is v0.1-only in the files chosen (the v0.2 record is another
    label's): the note's `untuned` command keeps the --label, and lists the layer."""
    v01, v02 = write_mixed_version_log(tmp_path).read_text().splitlines()
    (tmp_path / "old.log").write_text(v01 + "\n")
    (tmp_path / "new.log").write_text(v02 + "\n")
    run("--db", db, "import", "--label", "old", str(tmp_path / "old.log"))
    run("--db", db, "import", "--label", "new", str(tmp_path / "new.log"))
    err = run("--db", db, "workloads", "--label", "old")[2]
    assert err == V01_NOTE.replace("`tunelog untuned`", "`tunelog untuned --label 'old'`")
    out = run("--db", db, "untuned", "--label", "old")[1]
    assert "v0.1 records only, which TVM >= 0.7 skips (old.log:1)" in out
    assert run("--db", db, "workloads")[2] == ""  # all files: the v0.2 record answers


def test_a_user_templates_v01_winner_is_named_whole(db: str, tmp_path: Path) -> None:
    # Its family is its task name: the winner column used to show only "(v0.1)".
    log = write_mixed_version_log(tmp_path)
    log.write_text(log.read_text().splitlines()[0] + "\n")  # the v0.1 record alone
    run("--db", db, "import", str(log))
    out = run("--db", db, "workloads")[1]
    assert "1.00 ms)           matmul (v0.1)  1.00 ms" in out


def test_workloads_notes_no_v01_record_that_a_newer_one_outranks(db: str, tmp_path: Path) -> None:
    """A faster v0.1 record beside a v0.2 one of the layer: the v0.2 record wins (TVM >= 0.7
    skips the other), so the layer is tuned and nothing is noted."""
    run("--db", db, "import", str(write_mixed_version_log(tmp_path)))
    code, out, err = run("--db", db, "workloads")
    assert (code, err) == (0, "")
    assert "2.00 ms" in out
    # The v0.1 template was tuned: TVM >= 0.7 skips its record, which the cell says.
    assert "matmul (v0.1) (1 1/0: skipped by TVM >= 0.7)" in out
    code, out, err = run("--db", db, "workloads", "--json")
    assert [lay["v01_only"] for lay in json.loads(out)] == [False]


def test_an_empty_listing_exits_0_with_a_note(db: str) -> None:
    run("--db", db, "import", str(X86))
    assert run("--db", db, "workloads", "--task", "winograd") == (
        0,
        "",
        "no layer matches --task 'winograd'; see `tunelog workloads` and `tunelog stats` for "
        "what there is\n",
    )


def test_export_of_a_v01_only_log_exits_1_and_writes_nothing(db: str, tmp_path: Path) -> None:
    log = write_mixed_version_log(tmp_path)
    log.write_bytes(log.read_bytes().splitlines(keepends=True)[0])  # the v0.1 record only
    run("--db", db, "import", str(log))
    out_path = tmp_path / "best.log"
    code, out, err = run("--db", db, "export", str(out_path))
    assert (code, out) == (1, "")
    assert err == (
        "Error: every matching winner is a v0.1 record (1), which TVM >= 0.7 skips: nothing to "
        "export; pass --include-v01 for an old TVM, or re-tune\n"
    )
    assert not out_path.exists()


# -- one definition of trials ------------------------------------------------------------------


def test_best_and_workloads_count_the_same_trials(db: str, tmp_path: Path) -> None:
    import json

    # The same template measured under two spellings of one target group (cpu).
    other = tmp_path / "other_mcpu.log"
    other.write_bytes(X86.read_bytes().replace(b"skylake-avx512", b"cascadelake"))
    run("--db", db, "import", str(X86), str(other))
    best = json.loads(run("--db", db, "best", "--template", "dense_pack.x86", "--json")[1])
    layers = json.loads(run("--db", db, "workloads", "--template", "dense_pack.x86", "--json")[1])
    (template,) = [t for t in layers[0]["templates"] if t["template"] == "dense_pack.x86"]
    assert {row["trials"] for row in best} == {template["trials"]} == {80}


# -- terminals and pipes ------------------------------------------------------------------------


BEST_80_COLUMNS = """\
slots              template                args              config    latency
-----------------  ----------------------  ----------------  --------  ---------
cpu                dense_nopack.x86        1x512 * 1000x512  12        41.1 us
cpu                dense_pack.x86          1x512 * 1000x512  3         45.0 us
model=t4,cuda,gpu  topi_nn_dense [direct]  1x512 * 1000x512  5         30.1 us
"""


def test_tables_fit_an_80_column_terminal(db: str) -> None:
    run("--db", db, "import", str(EDGE))
    code, out, _ = run("--db", db, "best", "--task", "dense", columns=80)
    assert (code, out) == (0, BEST_80_COLUMNS)
    assert max(len(line) for line in out.splitlines()) <= 80


def test_wide_shows_every_character(db: str) -> None:
    run("--db", db, "import", str(EDGE))
    wide = run("--db", db, "best", "--wide", columns=80)[1]
    assert wide == run("--db", db, "best")[1]  # a pipe is never cut either
    assert "cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4" in wide


# Cells as tables hold them (paths, targets, numbers, cut cells) and what tabulate treats
# specially (spaces around, line breaks, tabs, escape codes, wide characters, numbers).
_CELL = st.text(alphabet=st.sampled_from("ab -_.:,/[]()=+1e9x…\n\t\x1b漢é "), max_size=12)


@given(
    st.integers(min_value=1, max_value=5).flatmap(
        lambda n: st.tuples(
            st.lists(_CELL, min_size=n, max_size=n),
            st.lists(st.lists(_CELL, min_size=n, max_size=n), max_size=6),
        )
    )
)
@example((["a"], [["\n"]]))  # tabulate gives a row of blank lines no line at all
@example((["a"], [["b"], [" \n "]]))
def test_simple_table_is_tabulate_or_declines(table: tuple[list[str], list[list[str]]]) -> None:
    headers, rows = table
    text = simple_table(rows, headers)
    if text is not None:
        assert text == tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
    elif rows:
        plain = set(map(chr, range(0x20, 0x7F))) | {"…"}
        assert not all(set(c) <= plain for c in [*headers, *(c for r in rows for c in r)])


@pytest.mark.parametrize(
    ("row", "wrapped"),
    [
        (
            ["alpha beta gamma delta epsilon", "12", "one two three four five"],
            ["alpha beta gamma\ndelta epsilon", "12", "one two three\nfour five"],
        ),
        # A word is broken only when longer than two thirds of the width.
        (["a" * 50, "12", "b"], ["a" * 27 + "\n" + "a" * 23, "12", "b"]),
    ],
)
def test_fit_table_wraps_the_widest_columns_at_spaces_and_cuts_nothing(
    row: list[str], wrapped: list[str]
) -> None:
    fitted = fit_table([row], ["text", "n", "more"], 40)
    assert fitted.rows == [wrapped]
    assert (fitted.headers, fitted.dropped) == (["text", "n", "more"], [])


def test_fit_table_drops_the_highest_rank_first_then_wraps() -> None:
    rows = [
        ["key " * 8, "x" * 20, "y" * 20, "/u/a/b/run1.log:3"],
        ["k", "x", "y", "/u/c/b/run1.log:9"],
    ]
    columns = [Column("key"), Column("mid", rank=1), Column("low", rank=2), Column("p", path=True)]
    fitted = fit_table(rows, columns, 70)
    assert fitted.dropped == ["low"]
    assert fitted.rows == [
        ["key key key key key key key\nkey", "xxxxxxxxxxxxxxxxxxxx", "…/a/b/run1.log:3"],
        ["k", "x", "…/c/b/run1.log:9"],
    ]


@pytest.mark.slow
@pytest.mark.parametrize("command", [["stats"], ["export", "-"], ["best"], ["rejects"]])
def test_a_closed_pipe_ends_quietly_with_exit_0(tmp_path: Path, command: list[str]) -> None:
    db = str(tmp_path / "pipe.db")
    tunelog = [sys.executable, "-m", "tunelog", "--db", db]
    subprocess.run([*tunelog, "import", str(EDGE)], check=True, capture_output=True)
    # The reader is gone before tunelog writes a byte: every write meets a closed pipe.
    proc = subprocess.Popen(
        [*tunelog, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert (proc.wait(), err) == (0, b"")


# -- help ---------------------------------------------------------------------------------------


def all_commands() -> list[str]:
    from typer.main import get_command

    group = get_command(app)
    return sorted(group.commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", all_commands())
def test_every_command_has_plain_help_with_an_example(command: str) -> None:
    code, out, _ = run(command, "-h")
    assert code == 0
    assert "Example:\n    tunelog " in out
    assert "<" not in out.split("Options:")[1].split("Example:")[0]  # no <str>, <int range>
    assert "{" not in out.splitlines()[0]  # usage line: PATH..., not {paths}...
    assert "--no-" not in out


def test_import_help_usage_line(db: str) -> None:
    out = run("import", "--help")[1]
    assert out.splitlines()[0] == "Usage: tunelog import [OPTIONS] PATH..."
    assert "  --include GLOB" in out


# `tunelog` (cli.run) builds only the command it runs: same output and exit code as the whole
# app. The second item: whether that run gets a reduced app (False: the whole app).
SAME_AS_THE_WHOLE_APP = [
    (["--db", "{db}", "stats"], True),
    (["stats", "--db", "{db}", "--json"], True),
    (["--db={db}", "--wide", "best", "--knobs"], True),
    (["--db", "{db}", "best", "--no-such-option"], True),
    (["--db", "{db}", "workloads", "--sort", "nonsense"], True),
    (["--db", "{db}", "sources"], True),
    (["--db", "{db}", "sources", "remove", "-h"], True),
    (["--db", "{db}", "export", "-"], True),
    (["--db", "{db}", "export"], True),
    (["--db", "{db}", "untuned", "-h"], True),
    (["--db", "{db}", "export-metaschedule", "-h"], True),
    (["--db", "{db}", "explain", "6"], True),
    (["--wide=1", "best"], True),
    (["--db", "{db}", "-h", "best"], False),
    (["--db", "{db}", "bst"], False),
    (["--db", "{db}"], False),
    (["--db"], False),
    (["--version", "best"], False),
    ([], False),
]


@pytest.mark.parametrize(("args", "reduced"), SAME_AS_THE_WHOLE_APP, ids=str)
def test_a_run_builds_only_its_command_and_answers_the_same(
    db: str, args: list[str], reduced: bool
) -> None:
    run("--db", db, "import", str(X86))
    argv = [arg.replace("{db}", db) for arg in args]
    one = app_for(argv)
    built = one.registered_commands + one.registered_groups
    if reduced:
        assert len(built) == 1
    else:  # the listing: the whole app
        assert one is app
    whole = runner.invoke(app, argv)
    alone = runner.invoke(one, argv)
    assert (alone.exit_code, alone.stdout, alone.stderr) == (
        whole.exit_code,
        whole.stdout,
        whole.stderr,
    )


@pytest.mark.parametrize(
    "args",
    [["best"], ["best", "--json"], ["best", "-h"], ["explain", "6"], ["sources", "--json"]],
    ids=str,
)
def test_a_command_named_where_no_run_expects_one_still_runs(
    db: str,
    args: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tunelog.cli import run as console_script

    def console(*argv: str) -> tuple[int | str | None, str, str]:
        monkeypatch.setattr(sys, "argv", ["tunelog", *argv])
        with pytest.raises(SystemExit) as exited:
            console_script()
        return (exited.value.code, *capsys.readouterr())

    # Usage lines name the program from `__main__` (here pytest's) or else from argv[0].
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    run("--db", db, "import", str(X86))
    named = console("--db", db, *args)  # app_for builds this command alone
    assert named[0] == 0
    assert console("--db", db, "--", *args) == named


def test_version() -> None:
    from tunelog import __version__

    assert run("--version") == (0, f"tunelog {__version__}\n", "")


# -- export errors ------------------------------------------------------------------------------


def test_exporting_onto_a_directory_says_so(db: str, tmp_path: Path) -> None:
    run("--db", db, "import", str(X86))
    code, out, err = run("--db", db, "export", str(tmp_path))
    assert (code, out) == (1, "")
    assert err == (
        f"Error: {tmp_path} is a directory: give the path of the log file to write, "
        f"e.g. {tmp_path / 'best.log'}\n"
    )


def test_an_unwritable_export_names_the_output_not_a_temp_file(db: str, tmp_path: Path) -> None:
    run("--db", db, "import", str(X86))
    out_path = tmp_path / "no" / "such" / "best.log"
    code, out, err = run("--db", db, "export", str(out_path))
    assert (code, out) == (1, "")
    assert err == (
        f"Error: cannot write {out_path}: No such file or directory; check that its directory "
        "exists, is writable and has free space, or choose another path\n"
    )


# -- sources and rejects ------------------------------------------------------------------------


REJECTS = """\
sample_logs/edge_cases.log:15: auto_scheduler record starting with a space: TVM's reader skips it
sample_logs/edge_cases.log:16: invalid JSON at column 88
sample_logs/edge_cases.log:17: tab-separated text, not a JSON record
"""


def test_rejects_lists_stored_rejected_lines(db: str) -> None:
    run("--db", db, "import", str(X86), "sample_logs/edge_cases.log")
    assert run("--db", db, "rejects") == (0, REJECTS, "")
    assert run("--db", db, "rejects", "2") == (0, REJECTS, "")
    assert run("--db", db, "rejects", "sample_logs/edge_cases.log") == (0, REJECTS, "")
    assert run("--db", db, "rejects", "1") == (0, "", "no rejected lines\n")
    code, out, err = run("--db", db, "rejects", "nope.log")
    assert (code, out) == (1, "")
    assert err == (
        f"Error: no source 'nope.log' in {db}: give an id or path that `tunelog sources` lists\n"
    )


def test_sources_keep_one_row_per_file_with_its_imports(db: str, tmp_path: Path) -> None:
    import json

    copy = tmp_path / "copy.log"
    shutil.copy(EDGE, copy)
    run("--db", db, "import", "sample_logs/edge_cases.log")
    run("--db", db, "import", "sample_logs/edge_cases.log")
    run("--db", db, "import", str(copy))
    source, copied = json.loads(run("--db", db, "sources", "--json")[1])
    assert source["path"] == str(EDGE)
    assert [i["path"] for i in source["imports"]] == [str(EDGE), str(EDGE)]
    # The copy holds the same lines: every one shared, none stored again.
    assert [i["path"] for i in copied["imports"]] == [str(copy)]
    # edge_cases.log holds one record twice: 9 record lines, 8 records.
    assert (copied["records"], copied["held"], copied["shared"]) == (0, 9, 9)
    assert (source["records"], source["held"], source["shared"]) == (8, 9, 9)
    _, out, _ = run("--db", db, "sources", "--wide")
    assert out.splitlines()[2].startswith("1     sample_logs/edge_cases.log")
    assert out.splitlines()[2].split("  ")[-1].startswith("2, last ")


@pytest.mark.parametrize(
    ("paths", "limit", "shown"),
    [
        (["/a/t4/bert.log:3", "/a/cpu/bert.log"], None, ["…/t4/bert.log:3", "…/cpu/bert.log"]),
        (["/a/b/x.log", "/c/b/x.log"], None, ["/a/b/x.log", "/c/b/x.log"]),  # no shorter tail
        (["/home/u/run.log", "rel/run.log"], None, ["…/u/run.log", "rel/run.log"]),
        # The tail with its directory is too long: the file name alone, when unique.
        (["/a/" + "d" * 30 + "/run.log"], 20, ["…/run.log"]),
        (["/a/" + "d" * 30 + "/run.log"], 60, ["…/" + "d" * 30 + "/run.log"]),
    ],
)
def test_paths_show_their_shortest_unique_tail(
    paths: list[str], limit: int | None, shown: list[str]
) -> None:
    from tunelog.tables import short_paths

    assert short_paths(paths, limit) == shown


@pytest.mark.parametrize("command", ["best", "workloads", "export"])
def test_target_names_a_log_target_with_a_trailing_space(
    db: str, tmp_path: Path, command: str
) -> None:
    """A real log (guoriyue's resnet50 records) writes "llvm -keys=cpu ": --target without the
    space, as every table shows it, names it in each command (it used to match nothing)."""
    log = tmp_path / "spaced.log"
    target = "llvm -keys=cpu -mcpu=skylake-avx512 -mtriple=x86_64-pc-linux-gnu"
    log.write_bytes(X86.read_bytes().replace(target.encode(), target.encode() + b" "))
    assert run("--db", db, "import", str(log))[0] == 0
    args = [
        command,
        "--target",
        target,
        *([str(tmp_path / "out.log")] if command == "export" else []),
    ]
    code, out, err = run("--db", db, *args)
    assert code == 0, err
    assert command == "export" or len(out.splitlines()) > 2


@pytest.mark.parametrize(
    "command",
    [
        ["best", "--task", "winograd"],
        ["workloads", "--task", "winograd"],
        ["untuned"],
        ["untuned", "--task", "winograd"],
        ["errors", "--task", "winograd"],
        ["rejects"],
    ],
    ids=lambda command: "-".join(command),
)
def test_an_empty_json_listing_says_on_stderr_what_its_table_says(
    db: str, command: list[str]
) -> None:
    # README: exit 0 also when a listing is empty, a note on stderr saying what was empty.
    run("--db", db, "import", str(X86))
    table = run("--db", db, *command)
    as_json = run("--db", db, *command, "--json")
    assert table[:2] == (0, "") and table[2].startswith(("no ", "every "))
    assert as_json == (0, "[]\n", table[2])


def test_standard_input_named_twice_is_a_usage_error_before_the_database_is_made(
    tmp_path: Path,
) -> None:
    # The second - read nothing: an empty source.
    db = tmp_path / "t.db"
    code, _, err = run("--db", str(db), "import", "-", "-", stdin=X86.read_text())
    assert code == 2 and "- (standard input) is given twice: it can be read once" in err
    assert not db.exists()


@pytest.mark.parametrize("special", ["/dev/null", "fifo"])
def test_a_database_path_that_is_no_regular_file_says_so(tmp_path: Path, special: str) -> None:
    # SQLite said "disk I/O error; check that its directory exists" (or waited on the FIFO).
    if special == "fifo":
        special = str(tmp_path / "fifo")
        os.mkfifo(special)
    for command in (["stats"], ["import", str(X86)]):
        assert run("--db", special, *command) == (
            1,
            "",
            f"Error: {special} is not a regular file (a device, pipe or socket): give the "
            "database file's path with --db\n",
        )


def test_untuned_check_says_which_layers_run_another_machine_s_config(db: str) -> None:
    """Layers answered by a record measured on another machine were said to run "an untuned
    fallback config" (found by a new user: they run that machine's tuned config)."""
    from tests.conftest import DATA

    run("--db", db, "import", str(DATA / "metaschedule_real" / "two_targets"))
    code, _, err = run("--db", db, "untuned", "--check")
    assert code == 1
    assert err.splitlines()[-1] == (
        "2 layer(s) untuned: 2 a config measured on another machine (--check)"
    )
