"""The command line: exact output for the main commands, exit codes, clean stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, V01_NOTE, X86, run, runner, write_distinct_copies
from tunelog.cli import app, format_seconds

IMPORT_TABLE = """\
file                                        lines    new    dup    comments    blank    rejected    note
------------------------------------------  -------  -----  -----  ----------  -------  ----------  ------
sample_logs/edge_cases.log                  19       8      1      6           1        3
sample_logs/x86_mini_llvm.log               200      200    0      0           0        0
sample_logs/x86_mini_short_timeouts.log.gz  125      125    0      0           0        0
total (3 files)                             344      333    1      6           1        3
"""

IMPORT_REJECTS = """\
sample_logs/edge_cases.log:15: auto_scheduler record starting with a space: TVM's reader skips it
sample_logs/edge_cases.log:16: invalid JSON at column 88
sample_logs/edge_cases.log:17: tab-separated text, not a JSON record
"""


def test_import_prints_a_summary_table_and_rejects_on_stderr(db: str) -> None:
    code, out, err = run("--db", db, "import", "sample_logs/")
    assert code == 0
    assert out == IMPORT_TABLE
    assert err == IMPORT_REJECTS


def test_import_json_follows_the_contract(db: str) -> None:
    code, out, err = run("--db", db, "import", "--json", "sample_logs/edge_cases.log")
    assert code == 0
    data = json.loads(out)
    (entry,) = data["files"]
    assert {
        k: entry[k] for k in ("path", "lines", "new", "duplicates", "comments", "blank", "rejected")
    } == {
        "path": "sample_logs/edge_cases.log",
        "lines": 19,
        "new": 8,
        "duplicates": 1,
        "comments": 6,
        "blank": 1,
        "rejected": 3,
    }
    assert entry["rejects"][0] == {
        "line": 15,
        "reason": "auto_scheduler record starting with a space: TVM's reader skips it",
    }
    assert err == IMPORT_REJECTS  # stdout holds only the JSON


def test_reimport_says_already_imported(db: str) -> None:
    run("--db", db, "import", "sample_logs/x86_mini_llvm.log")
    code, out, _ = run("--db", db, "import", "sample_logs/x86_mini_llvm.log")
    assert code == 0
    assert "already imported as #1\n" in out  # the path is the row's own
    code, out, _ = run("--db", db, "stats", "--json")
    assert json.loads(out)["records"] == 200


def test_strict_import_exits_1_and_keeps_nothing(db: str) -> None:
    code, out, err = run("--db", db, "import", "--strict", "sample_logs/edge_cases.log")
    assert code == 1
    assert "rolled back (--strict)" in out
    assert err.endswith(
        "Error: --strict: files with rejected lines were rolled back; fix or drop --strict\n"
    )
    assert json.loads(run("--db", db, "stats", "--json")[1])["records"] == 0


@pytest.mark.parametrize("named", ["the file", "its directory"])
def test_strict_import_of_records_and_a_bad_line_names_the_line(
    db: str, tmp_path: Path, named: str
) -> None:
    """A file --strict rolls back holds records (counted as discarded): its bad lines are
    printed and the error is --strict's, never "holds no tuning record", whether the file is
    named or found in a directory."""
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "bad.log"
    log.write_bytes(b"".join(X86.read_bytes().splitlines(keepends=True)[:50]) + b"garbage\n")
    code, out, err = run(
        "--db", db, "import", "--strict", str(log if named == "the file" else logs)
    )
    assert code == 1
    assert "rolled back (--strict): 50 new record(s) not stored" in out
    assert err == (
        f"{log}:51: not JSON (text line)\n"
        "Error: --strict: files with rejected lines were rolled back; fix or drop --strict\n"
    )


BEST_TABLE = """\
target                                                                                slots              template                   args                          config    latency    trials    source
------------------------------------------------------------------------------------  -----------------  -------------------------  ----------------------------  --------  ---------  --------  -----------------------------
cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32  model=t4,cuda,gpu  conv2d_nchw.cuda           1x64x56x56 * 64x64x3x3 s1 p1  877       102.0 us   3         sample_logs/edge_cases.log:4
cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32  model=t4,cuda,gpu  conv2d_nchw_winograd.cuda  1x64x56x56 * 64x64x3x3 s1 p1  3120      165.0 us   2         sample_logs/edge_cases.log:6
llvm -keys=cpu -link-params=0 -mcpu=skylake-avx512                                    cpu                dense_nopack.x86           1x512 * 1000x512              12        41.1 us    1         sample_logs/edge_cases.log:12
llvm -keys=cpu -link-params=0 -mcpu=skylake-avx512                                    cpu                dense_pack.x86             1x512 * 1000x512              3         45.0 us    1         sample_logs/edge_cases.log:13
cuda -model=t4                                                                        model=t4,cuda,gpu  topi_nn_dense [direct]     1x512 * 1000x512              5         30.1 us    1         sample_logs/edge_cases.log:19
"""


def test_best_prints_one_row_per_winner_with_its_slots(db: str) -> None:
    run("--db", db, "import", "sample_logs/edge_cases.log")
    code, out, err = run("--db", db, "best")
    assert (code, err) == (0, "")
    assert out == BEST_TABLE


def test_best_filters_and_knobs(db: str) -> None:
    run("--db", db, "import", "sample_logs/edge_cases.log")
    code, out, _ = run("--db", db, "best", "--template", "conv2d_nchw.cuda", "--knobs", "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert row["config_index"] == 877
    assert row["slots"] == ["model=t4", "cuda", "gpu"]
    assert row["knobs"] == [["tile_f", [-1, 2, 8, 1]], ["auto_unroll_max_step", 512]]
    code, out, _ = run("--db", db, "best", "--target-key", "cpu", "--json")
    assert [r["task_name"] for r in json.loads(out)] == ["dense_nopack.x86", "dense_pack.x86"]


def test_export_writes_file_and_warns_on_stderr(db: str, tmp_path: Path) -> None:
    run("--db", db, "import", "sample_logs/edge_cases.log")
    out_path = str(tmp_path / "best.log")
    code, out, err = run("--db", db, "export", out_path)
    assert (code, out) == (0, "")
    assert err == (
        "warning: left out 1 v0.1 record(s): TVM >= 0.7 skips v0.1 lines; re-tune them, "
        "or pass --include-v01 for an old TVM\n"
        "warning: 2 record(s) with target 'llvm -keys=cpu -link-params=0 -mcpu=skylake-avx512' "
        "cannot be loaded by TVM >= 0.10 (TVM >= 0.10 rejects the -link-params target option): "
        "pass --fix-targets to drop the option\n"
        f"wrote 4 record(s) to {out_path}\n"
    )
    assert len(Path(out_path).read_bytes().splitlines()) == 4


def test_export_to_stdout_keeps_stdout_clean(db: str) -> None:
    run("--db", db, "import", "sample_logs/x86_mini_llvm.log")
    code, out, err = run("--db", db, "export", "-")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 5 and all(line.startswith('{"input"') for line in lines)


def test_export_refuses_existing_file_with_one_error_line(db: str, tmp_path: Path) -> None:
    run("--db", db, "import", "sample_logs/x86_mini_llvm.log")
    target = tmp_path / "exists.log"
    target.write_text("keep me\n")
    code, out, err = run("--db", db, "export", str(target))
    assert (code, out) == (1, "")
    assert err == (
        f"Error: {target} already exists; tunelog never merges into an existing log: "
        "choose another path or pass --force to replace it\n"
    )


def test_missing_input_is_one_error_line(db: str) -> None:
    code, out, err = run("--db", db, "import", "no/such.log")
    assert (code, out, err) == (1, "", "Error: no/such.log does not exist: check the path\n")


def test_not_a_database_is_one_error_line(db: str, tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text("hello\n" * 1000)
    code, out, err = run("--db", str(bogus), "stats")
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: {bogus} is not a tunelog database")
    assert err.count("\n") == 1


def test_usage_error_exits_2(db: str) -> None:
    code, _, _ = run("--db", db, "export", "x.log", "--top-k", "0")
    assert code == 2


def test_db_path_from_environment(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNELOG_DB", db)
    run("import", "sample_logs/x86_mini_llvm.log")
    assert Path(db).exists()
    code, out, _ = run("sources", "--json")
    assert code == 0
    (source,) = json.loads(out)
    assert source["path"] == str(REPO / "sample_logs/x86_mini_llvm.log")  # stored absolute


def test_listing_commands_print_json_arrays(db: str) -> None:
    run("--db", db, "import", "sample_logs/")
    for command in ("sources", "best"):
        code, out, _ = run("--db", db, command, "--json")
        assert code == 0
        rows = json.loads(out)
        assert isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (1e9, "1e+09 s"),  # a valid record's (error 0) mean, as TVM compares it
        (1.7e308, "1.7e+308 s"),
        (12345.0, "1.23e+04 s"),
        (9999.0, "9999.00 s"),
        (2.5, "2.50 s"),
        (0.01240, "12.40 ms"),
        (0.0006716, "671.6 us"),
        (2.9e-5, "29.0 us"),
        (1e-7, "0.1 us"),
        (1e-9, "1.0 ns"),  # a MetaSchedule run_secs: "0.0 us" said it took no time
        (4.2e-11, "0.0 ns"),
        (0.0, "0.0 us"),
        (-1e-6, "-1.0 us"),
    ],
)
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


WORKLOADS_DENSE = """\
target         operator    shapes            templates (trials valid/failed: best)                               winner                         latency    config    margin    GFLOPS    to best    verdict
-------------  ----------  ----------------  ------------------------------------------------------------------  -----------------------------  ---------  --------  --------  --------  ---------  --------------------
cpu            dense       1x512 * 1000x512  dense_nopack.x86 (1 1/0: 41.1 us); dense_pack.x86 (1 1/0: 45.0 us)  dense_nopack.x86               41.1 us    12        +10%      24.9      1/1        too few valid trials
cuda,gpu (t4)  dense       1x512 * 1000x512  topi_nn_dense [direct] (v0.1) (1 1/0: 30.1 us)                      topi_nn_dense [direct] (v0.1)  30.1 us    5                   34.0      1/1        too few valid trials
"""


def test_workloads_shows_one_row_per_layer_with_the_winning_template(db: str) -> None:
    run("--db", db, "import", "sample_logs/edge_cases.log")
    code, out, err = run("--db", db, "workloads", "--task", "dense")
    assert (code, err) == (0, WORKLOADS_DENSE_WARNING)
    assert out == WORKLOADS_DENSE


# Both t4 targets query the same slots; the winner was measured without -arch.
WORKLOADS_DENSE_WARNING = V01_NOTE.replace("untuned`", "untuned --task 'dense'`") + (
    "warning: cuda,gpu (t4) dense 1x512 * 1000x512: answer for 'cuda -keys=cuda,gpu -arch=sm_75 "
    "-max_num_threads=1024 -model=t4 -thread_warp_size=32' was measured on 'cuda -model=t4' "
    "(-arch none vs sm_75): re-tune on this machine, or filter with --target\n"
)


def test_workloads_json_and_bad_sort(db: str) -> None:
    run("--db", db, "import", "sample_logs/x86_mini_llvm.log")
    code, out, _ = run("--db", db, "workloads", "--json", "--sort", "latency")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 4
    assert rows[0]["winner_cost"] == max(r["winner_cost"] for r in rows)
    code, _, err = run("--db", db, "workloads", "--sort", "speed")
    assert code == 2
    assert "Invalid value for --sort: use one of latency, gflops, trials" in err


def test_explain_by_number_and_name(db: str) -> None:
    code, out, _ = run("--db", db, "explain", "6")
    assert code == 0
    assert out.startswith("6 BUILD_TIMEOUT: ")
    assert "LocalBuilder(timeout=" in out
    assert run("--db", db, "explain", "build_timeout")[1] == out


def test_explain_unknown_code_is_one_error_line(db: str) -> None:
    code, out, err = run("--db", db, "explain", "nine")
    assert (code, out) == (1, "")
    assert err.startswith("Error: unknown error code 'nine': use 0-8")
    # `explain` takes fields and record lines too: the message says so (it named codes only).
    assert err.endswith(
        "; or a record field (`tunelog explain fields` lists them), or a whole record line\n"
    )
    assert err.count("\n") == 1


def _failed_trials(tmp_path: Path, task: bytes) -> Path:
    """The sample x86 log's failed trials of the templates whose name holds `task`."""
    failed = tmp_path / "failed.log"
    failed.write_bytes(
        b"\n".join(
            line
            for line in (REPO / "sample_logs/x86_mini_llvm.log").read_bytes().splitlines()
            if task in line and b"[1000000000.0]" in line
        )
    )
    return failed


def test_untuned_and_errors_on_a_log_where_every_trial_failed(db: str, tmp_path: Path) -> None:
    run("--db", db, "import", str(_failed_trials(tmp_path, b"dense_pack")))
    code, out, _ = run("--db", db, "untuned", "--json")
    (layer,) = json.loads(out)
    assert (code, layer["operator"], layer["winner"], layer["answered_by"]) == (
        0,
        "dense",
        None,
        None,  # nothing answers it: a fallback config
    )
    code, out, _ = run("--db", db, "errors", "--json")
    (entry,) = json.loads(out)
    assert entry["errors"] == {"BUILD_TIMEOUT": 3}
    assert entry["diagnosis"][0] == (
        "No valid measurement: this layer will run an untuned fallback config."
    )


def test_untuned_counts_the_failures_of_every_template_of_a_layer(db: str, tmp_path: Path) -> None:
    # dense_pack.x86 and dense_nopack.x86 of one dense layer, 3 BUILD_TIMEOUTs each: the
    # errors cell adds both templates' up.
    run("--db", db, "import", str(_failed_trials(tmp_path, b"dense_")))
    code, out, _ = run("--db", db, "--wide", "untuned")
    (row,) = out.splitlines()[2:]
    assert (code, row.split()) == (
        0,
        ["cpu", "dense", "1x8192", "*", "10x8192", "dense_nopack.x86,", "dense_pack.x86", "6",
         "BUILD_TIMEOUT", "x6"],
    )  # fmt: skip


def test_a_full_disk_is_one_error_line(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tunelog.store import Store

    log = write_distinct_copies(tmp_path / "big.log", 10)  # more than two pages can hold

    prepare = Store._prepare

    def tiny_disk(self: Store) -> None:
        prepare(self)
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count = {pages + 2}")

    monkeypatch.setattr(Store, "_prepare", tiny_disk)
    code, out, err = run("--db", db, "import", str(log))
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: the disk holding {db} is full")
    assert err.count("\n") == 1


def test_import_reads_stdin_for_dash(db: str) -> None:
    data = (REPO / "sample_logs/x86_mini_llvm.log").read_bytes()
    result = runner.invoke(app, ["--db", db, "import", "--json", "-"], input=data)
    assert result.exit_code == 0
    (entry,) = json.loads(result.stdout)["files"]
    assert (entry["path"], entry["lines"], entry["new"]) == ("-", 200, 200)


FOR_TITANX_WINOGRAD = """\
target                                                                                slots    template                   args                          config    latency    trials    source
------------------------------------------------------------------------------------  -------  -------------------------  ----------------------------  --------  ---------  --------  ----------------------------
cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32  cuda     conv2d_nchw_winograd.cuda  1x64x56x56 * 64x64x3x3 s1 p1  3120      165.0 us   2         sample_logs/edge_cases.log:6
"""


def test_best_for_a_target_with_an_unseen_model_and_a_task_filter(db: str) -> None:
    run("--db", db, "import", "sample_logs/edge_cases.log")
    code, out, err = run(
        "--db", db, "best", "--for-target", "cuda -model=titanx", "--task", "winograd"
    )
    assert (code, err) == (0, FOR_TITANX_WARNING)
    assert out == FOR_TITANX_WINOGRAD


# The titanx query is answered through the `cuda` key by a record tuned on a T4.
FOR_TITANX_WARNING = (
    "warning: cuda conv2d_nchw_winograd.cuda: answer for 'cuda -model=titanx' was measured on "
    "'cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32' "
    "(-arch sm_75 vs none; -model t4 vs titanx): re-tune on this machine, or filter with "
    "--target\n"
)


def test_target_key_and_model_filters_combine_as_and(db: str) -> None:
    run("--db", db, "import", "sample_logs/edge_cases.log")
    code, out, _ = run("--db", db, "best", "--target-key", "cuda", "--model", "t4", "--json")
    assert code == 0
    assert [r["task_name"] for r in json.loads(out)] == [
        "conv2d_nchw.cuda",
        "conv2d_nchw_winograd.cuda",
        "topi_nn_dense",
    ]
    code, out, err = run("--db", db, "export", "--target-key", "cuda", "--model", "titanx", "-")
    assert (code, out) == (1, "")
    assert err.startswith("Error: no valid measurement matches")


def test_a_bad_for_target_is_a_usage_error(db: str) -> None:
    run("--db", db, "import", "sample_logs/edge_cases.log")
    code, out, err = run("--db", db, "best", "--for-target", "")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "Error: Invalid value for '--for-target': '': empty target string; give a TVM target "
        'string, e.g. "cuda -model=titanx"'
    )


def test_import_of_a_grown_file_says_what_was_skipped(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (REPO / "sample_logs" / "x86_mini_llvm.log").read_bytes().splitlines(keepends=True)
    monkeypatch.chdir(tmp_path)
    log = Path("tuning.log")
    log.write_bytes(b"".join(lines[:150]))
    run("--db", db, "import", str(log))
    with log.open("ab") as appended:
        appended.writelines(lines[150:])
    code, out, err = run("--db", db, "import", str(log))
    assert (code, err) == (0, "")
    assert out == (
        "file        lines    new    dup    comments    blank    rejected"
        "    note\n"
        "----------  -------  -----  -----  ----------  -------  ----------"
        "  ------------------------------------------------------\n"
        "tuning.log  50       50     0      0           0        0"
        "           grown: 150 earlier line(s) skipped as already imported\n"
    )
    code, out, _ = run("--db", db, "import", "--json", str(log))
    (entry,) = json.loads(out)["files"]
    assert (entry["lines"], entry["skipped_lines"], entry["already_imported_as"]) == (
        200,
        0,
        f"#1 {tmp_path / 'tuning.log'}",  # --json: the path as stored (absolute)
    )


def test_importing_again_with_another_label_relabels_the_source(db: str) -> None:
    """The same bytes from the same path are one source: a later --label is its label, as
    when the file grew (it used to be dropped silently, so `--label second` found nothing)."""
    log = "sample_logs/x86_mini_llvm.log"
    assert run("--db", db, "import", "--label", "first", log)[0] == 0
    code, out, _ = run("--db", db, "import", "--label", "second", log)
    assert code == 0 and out.splitlines()[2].endswith(
        "already imported as #1; label set by this --label"
    )
    assert run("--db", db, "best", "--label", "second")[0] == 0
    assert run("--db", db, "best", "--label", "first")[0] == 1
    code, out, _ = run("--db", db, "import", log)  # no --label: the label stays
    assert out.splitlines()[2].endswith("already imported as #1")
    assert json.loads(run("--db", db, "sources", "--json")[1])[0]["label"] == "second"
