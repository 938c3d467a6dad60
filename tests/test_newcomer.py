# ruff: noqa: E501  (expected tables at 120 columns are wider than the code)
"""The CLI as a newcomer meets it (issue 32): tables readable at 80 and 120 columns, answers
that say when nothing matches, one meaning of `-model=unknown`, files that are not logs."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CORPUS, REPO, SAMPLE_LOGS, V01_NOTE, require_shared
from tests.conftest import run_db as run

TLCBENCH = CORPUS / "tlc-pack__TLCBench" / "saved_logs" / "2020_01_11" / "autotvm"
CORPUS_LOGS = [
    TLCBENCH / "t4" / "bert-B1-float32.kernel.log",
    TLCBENCH / "platinum-8124m" / "bert-B1-float32.kernel.log",
]


@pytest.fixture
def sample_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The bundled samples imported; the working directory is the checkout."""
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("TUNELOG_DB", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    db = str(tmp_path / "samples.db")
    assert run(db, "import", str(SAMPLE_LOGS))[0] == 0
    return db


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Two real TLCBench BERT kernel logs (T4 and a Xeon), imported from outside the cwd."""
    require_shared()
    db = str(tmp_path_factory.mktemp("corpus") / "corpus.db")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("COLUMNS", raising=False)
        assert run(db, "import", *map(str, CORPUS_LOGS))[0] == 0
    yield db


# -- 1. tables readable at 80 columns ---------------------------------------------------------

CORPUS_TABLES = {
    (80, "workloads --task dense"): """\
target                operator    shapes               winner
--------------------  ----------  -------------------  ----------------------
cuda,gpu (t4)         dense       1x768 * 768x768      dense_small_batch.cuda
cuda,gpu (t4)         dense       128x768 * 2304x768   dense_large_batch.cuda
cuda,gpu (t4)         dense       128x768 * 768x768    dense_small_batch.cuda
cuda,gpu (t4)         dense       128x768 * 3072x768   dense_large_batch.cuda
cuda,gpu (t4)         dense       128x3072 * 768x3072  dense_large_batch.cuda
cpu (platinum-8124m)  dense       1x768 * 768x768      dense_nopack.x86
cpu (platinum-8124m)  dense       128x768 * 2304x768   dense_pack.x86
cpu (platinum-8124m)  dense       128x768 * 768x768    dense_pack.x86
cpu (platinum-8124m)  dense       128x768 * 3072x768   dense_pack.x86
cpu (platinum-8124m)  dense       128x3072 * 768x3072  dense_pack.x86
""",
    (120, "workloads --task dense"): """\
target                operator    shapes               winner                  latency    GFLOPS    verdict
--------------------  ----------  -------------------  ----------------------  ---------  --------  --------------------
cuda,gpu (t4)         dense       1x768 * 768x768      dense_small_batch.cuda  4.0 us     291.6     too few valid trials
cuda,gpu (t4)         dense       128x768 * 2304x768   dense_large_batch.cuda  2.37 ms    191.2     converged
cuda,gpu (t4)         dense       128x768 * 768x768    dense_small_batch.cuda  302.4 us   499.3     too few valid trials
cuda,gpu (t4)         dense       128x768 * 3072x768   dense_large_batch.cuda  3.09 ms    195.5     converged
cuda,gpu (t4)         dense       128x3072 * 768x3072  dense_large_batch.cuda  1.20 ms    504.9     converged
cpu (platinum-8124m)  dense       1x768 * 768x768      dense_nopack.x86        6.1 us     193.2     converged
cpu (platinum-8124m)  dense       128x768 * 2304x768   dense_pack.x86          300.0 us   1510.2    converged
cpu (platinum-8124m)  dense       128x768 * 768x768    dense_pack.x86          112.9 us   1337.0    converged
cpu (platinum-8124m)  dense       128x768 * 3072x768   dense_pack.x86          438.9 us   1376.2    converged
cpu (platinum-8124m)  dense       128x3072 * 768x3072  dense_pack.x86          506.9 us   1191.5    converged
""",
    (80, "sources"): """\
id    path                                         records    rejected
----  -------------------------------------------  ---------  ----------
1     …/t4/bert-B1-float32.kernel.log              5118       0
2     …/platinum-8124m/bert-B1-float32.kernel.log  6800       0
""",
    (120, "sources"): """\
id    path                                         label    lines    records    dup    rejected    merged from
----  -------------------------------------------  -------  -------  ---------  -----  ----------  -------------
1     …/t4/bert-B1-float32.kernel.log                       5118     5118       0      0
2     …/platinum-8124m/bert-B1-float32.kernel.log           6800     6800       0      0
""",
    (80, "errors --task batch_matmul"): """\
shapes                  template           failed    diagnosis
----------------------  -----------------  --------  -----------
12x128x128 * 12x64x128  batch_matmul.cuda  2/608
""",
    (120, "errors --task batch_matmul"): """\
target         shapes                  template           failed    errors                  diagnosis
-------------  ----------------------  -----------------  --------  ----------------------  -----------
cuda,gpu (t4)  12x128x128 * 12x64x128  batch_matmul.cuda  2/608     INSTANTIATION_ERROR x2
""",
}


@pytest.mark.parametrize(("columns", "command"), list(CORPUS_TABLES))
def test_corpus_tables_keep_key_columns_whole_at_80_and_120_columns(
    corpus_db: str, columns: int, command: str
) -> None:
    code, out, _ = run(corpus_db, *command.split(), columns=columns)
    assert (code, out) == (0, CORPUS_TABLES[columns, command])
    assert max(map(len, out.splitlines())) <= columns


def test_dropped_columns_are_named_once_on_stderr(corpus_db: str) -> None:
    _, _, err = run(corpus_db, "sources", columns=80)
    assert err == (
        "note: 80 columns: not shown label, lines, dup, comments, blank, sha256, imported, "
        "imports, merged from (--wide or --json shows every column)\n"
    )


@pytest.mark.parametrize("command", ["sources", "workloads", "best", "errors"])
def test_wide_and_pipes_keep_every_column_and_the_full_path(corpus_db: str, command: str) -> None:
    wide = run(corpus_db, "--wide", command, columns=80)
    piped = run(corpus_db, command)
    assert wide[:2] == piped[:2]
    assert "note:" not in wide[2]
    if command in ("sources", "best"):
        assert str(CORPUS_LOGS[1]) in wide[1]


SAMPLE_BEST_80 = """\
template                   args                          config    latency
-------------------------  ----------------------------  --------  ---------
conv2d_nchw.cuda           1x64x56x56 * 64x64x3x3 s1 p1  877       102.0 us
conv2d_nchw_winograd.cuda  1x64x56x56 * 64x64x3x3 s1 p1  3120      165.0 us
dense_nopack.x86           1x512 * 1000x512              12        41.1 us
dense_pack.x86             1x512 * 1000x512              3         45.0 us
topi_nn_dense [direct]     1x512 * 1000x512              5         30.1 us
conv2d_NCHWc.x86           1x3x32x32 * 16x3x3x3 s1 p1    47        29.6 us
conv2d_NCHWc.x86           1x16x32x32 * 32x16x3x3 s1 p1  267       116.0 us
conv2d_NCHWc.x86           1x32x32x32 * 32x32x1x1 s2 p0  320       19.9 us
dense_nopack.x86           1x8192 * 10x8192              19        11.3 us
dense_pack.x86             1x8192 * 10x8192              62        14.6 us
"""

SAMPLE_IMPORT_80 = """\
file                                        new    rejected    note
------------------------------------------  -----  ----------  ----------------
sample_logs/edge_cases.log                  0      3           already imported
                                                               as #1

sample_logs/x86_mini_llvm.log               0      0           already imported
                                                               as #2

sample_logs/x86_mini_short_timeouts.log.gz  0      0           already imported
                                                               as #3

total (3 files)                             0      3
"""


@pytest.mark.parametrize(
    ("command", "expected"),
    [("best", SAMPLE_BEST_80), (f"import {SAMPLE_LOGS.name}", SAMPLE_IMPORT_80)],
)
def test_sample_tables_wrap_at_spaces_and_show_paths_relative(
    sample_db: str, command: str, expected: str
) -> None:
    code, out, _ = run(sample_db, *command.split(), columns=80)
    assert (code, out) == (0, expected)


# -- 2. no vacuous answers ----------------------------------------------------------------------

SEE = "see `tunelog workloads` and `tunelog stats` for what there is"
SKYLAKE = "llvm -mcpu=skylake-avx512"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            ["untuned", "--for-target", SKYLAKE, "--check"],
            (1, "", f"Error: no layer matches --for-target '{SKYLAKE}': nothing to check; {SEE}\n"),
        ),
        (
            ["untuned", "--for-target", SKYLAKE],
            (0, "", f"no layer matches --for-target '{SKYLAKE}'; {SEE}\n"),
        ),
        (
            ["untuned", "--for-target", SKYLAKE, "--json"],
            (0, "[]\n", f"no layer matches --for-target '{SKYLAKE}'; {SEE}\n"),
        ),
        (
            ["workloads", "--for-target", SKYLAKE],
            (0, "", f"no layer matches --for-target '{SKYLAKE}'; {SEE}\n"),
        ),
        (
            ["errors", "--target-key", "cpu"],
            (0, "", f"no layer matches --target-key 'cpu'; {SEE}\n"),
        ),
        (["errors", "--target-key", "cuda", "--task", "dense"], (0, "", "no failed trials\n")),
        (
            ["best", "--model", "titanx"],
            (0, "", f"no valid measurement matches --model 'titanx'; {SEE}\n"),
        ),
    ],
)
def test_nothing_matching_is_said_and_fails_a_check(
    tmp_path: Path, command: list[str], expected: tuple[int, str, str]
) -> None:
    """A CUDA-only database asked about a CPU: "every layer is tuned" would be vacuous."""
    db = str(tmp_path / "cuda.db")
    cuda_only = tmp_path / "cuda_only.log"
    cuda_only.write_bytes(
        b"".join(
            line
            for line in (SAMPLE_LOGS / "edge_cases.log").read_bytes().splitlines(keepends=True)
            if b'"cuda' in line
        )
    )
    assert run(db, "import", str(cuda_only))[0] == 0
    assert run(db, *command) == expected


# -- 3. -model=unknown is no model ------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [["untuned", "--check"], ["best"], ["workloads"], ["errors"], ["network"]]
)
def test_model_unknown_answers_as_no_model_in_every_command(
    tmp_path: Path, command: list[str]
) -> None:
    db = str(tmp_path / "nomodel.db")
    log = tmp_path / "nomodel.log"
    log.write_bytes((SAMPLE_LOGS / "edge_cases.log").read_bytes().replace(b" -model=t4", b""))
    assert run(db, "import", str(log))[0] == 0
    plain = run(db, *command, "--for-target", "cuda -arch=sm_75")
    unknown = run(db, *command, "--for-target", "cuda -arch=sm_75 -model=unknown")
    spelled = tuple(
        text.replace("cuda -arch=sm_75 -model=unknown", "cuda -arch=sm_75")
        if isinstance(text, str)
        else text
        for text in unknown
    )
    assert spelled == plain
    assert "-model unknown" not in unknown[2]


@pytest.mark.parametrize(
    ("asked", "measured", "differences"),
    [
        ("cuda -model=unknown", "cuda", []),
        ("cuda", "cuda -model=unknown", []),
        ("cuda -model=unknown", "cuda -model=t4", ["-model t4 vs none"]),
        ("cuda -model=t4", "cuda -model=unknown", ["-model none vs t4"]),
    ],
)
def test_machine_differences_read_model_unknown_as_none(
    asked: str, measured: str, differences: list[str]
) -> None:
    from tunelog.machines import conflicting_machines, machine_differences
    from tunelog.targets import parse_target

    assert machine_differences(parse_target(asked), parse_target(measured)) == differences
    assert not conflicting_machines(asked, measured)


# -- 4. files that are not logs ---------------------------------------------------------------


def test_importing_a_tunelog_database_says_use_merge(sample_db: str, tmp_path: Path) -> None:
    db = str(tmp_path / "other.db")
    assert run(db, "import", sample_db) == (
        1,
        "",
        f"Error: {sample_db} is an SQLite database, not a log: to add a tunelog database's "
        f"records, use `tunelog merge {sample_db}`\n",
    )
    assert run(db, "sources")[1] == ""  # nothing was imported


@pytest.mark.parametrize(
    ("name", "text", "looks"),
    [
        ("NOTES.md", "# Runs\n\nSome *notes*.\n", "Markdown text"),
        ("page.html", "<!DOCTYPE html>\n<p>x</p>\n", "HTML or XML"),
        ("notes.txt", "batch 1 took 3 hours\n", "text, not tuning records"),
        ("cfg.log", '{"trials": 1000}\n', "JSON, but not AutoTVM, auto_scheduler or "),
    ],
)
def test_a_named_file_with_no_record_is_an_error_saying_what_it_looks_like(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, looks: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    (tmp_path / name).write_text(text)
    code, out, err = run("t.db", "import", name, str(SAMPLE_LOGS / "x86_mini_llvm.log"))
    assert code == 1
    assert out.splitlines()[-1].startswith("total (2 files)")  # the log is imported
    (line,) = err.splitlines()
    assert line.startswith(f"Error: {name} holds no tuning record: it looks like {looks}")
    assert line.endswith("name log files, or a directory to import the logs in it")
    # Imported again, it is the same error (it used to exit 0: "already imported").
    code, out, again = run("t.db", "import", name)
    assert (code, again) == (1, err)
    assert "already imported as #1" in out


def test_standard_input_with_no_record_says_what_its_first_line_was(tmp_path: Path) -> None:
    """Standard input is read once: its first rejected line says what it was (it used to be
    called 'a file that cannot be read')."""
    assert run(str(tmp_path / "t.db"), "import", "-", stdin="hello\n") == (
        1,
        "file    lines    new    dup    comments    blank    rejected    note\n"
        "------  -------  -----  -----  ----------  -------  ----------  ------\n"
        "-       1        0      0      0           0        1\n",
        "Error: standard input holds no tuning record (line 1: not JSON (text line); 1 line(s) "
        "rejected: `tunelog rejects -`); pipe a tuning log into `tunelog import -`\n",
    )


def test_a_corpus_markdown_file_is_no_log(tmp_path: Path) -> None:
    require_shared()
    manifest = CORPUS / "MANIFEST.md"
    code, _, err = run(str(tmp_path / "t.db"), "import", str(manifest))
    assert (code, err) == (
        1,
        f"Error: {manifest} holds no tuning record: it looks like Markdown text (142 line(s) "
        f"rejected: `tunelog rejects {manifest}`); name log files, or a directory to import "
        "the logs in it\n",
    )


def test_a_page_paste_with_no_record_says_use_repair(tmp_path: Path) -> None:
    require_shared()
    paste = CORPUS / "forum" / "centernet_forum_paste.log"
    db = str(tmp_path / "t.db")
    assert run(db, "import", str(paste))[::2] == (
        1,
        f"Error: {paste} holds no tuning record as it is: typographic quotes (pasted from a web "
        "page?): use --repair\n",
    )
    assert run(db, "import", "--repair", str(paste))[0] == 0


def test_a_directory_import_names_each_skipped_file(tmp_path: Path) -> None:
    require_shared()
    db = str(tmp_path / "t.db")
    forum = CORPUS / "forum"
    code, _, err = run(db, "import", str(forum))
    assert code == 0
    assert err.splitlines()[:2] == [
        f"skipped {forum / 'README.md'}: not a tuning log",
        "skipped 1 file(s) in directories (not a tuning log: 1) (see `tunelog import --help`)",
    ]
    code, out, _ = run(db, "import", str(forum), "--json")
    assert json.loads(out)["skipped"] == [
        {"path": str(forum / "README.md"), "reason": "not a tuning log"}
    ]


# -- 5. repeated warnings grouped ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "best",
            "warning: 5 answers were measured on another machine than the target asked about "
            "(-mcpu skylake-avx512 vs none x4, -mcpu none vs skylake-avx512 x1): re-tune on "
            "this machine, or filter with --target; `tunelog best --json` lists each under "
            "`warnings`\n",
        ),
        (
            "workloads",
            "warning: 12 answers were measured on another machine than the target asked about "
            "(-mtriple x86_64-pc-linux-gnu vs none x4, -mcpu skylake-avx512 vs none x4, -arch "
            "sm_75 vs none x1, and 3 other differences): re-tune on this machine, or filter "
            "with --target; `tunelog workloads --json` lists each under `warnings`\n",
        ),
    ],
)
def test_answers_from_another_machine_are_one_line_with_a_count(
    sample_db: str, command: str, expected: str
) -> None:
    code, _, err = run(sample_db, command)
    # `workloads` first notes the sample's layer that only a v0.1 record answers.
    noted = V01_NOTE if command == "workloads" else ""
    assert (code, err) == (0, noted + expected)
    listed = json.loads(run(sample_db, command, "--json")[1])
    assert sum(len(row["warnings"]) for row in listed) == int(expected.split()[1])


# -- 6. stats: template keys and error names --------------------------------------------------


def test_stats_shows_v01_template_keys_and_error_names(sample_db: str, tmp_path: Path) -> None:
    code, out, _ = run(sample_db, "stats", columns=80)
    assert code == 0
    assert out.split("\nby template:\n")[1] == (
        """\
template                   records    valid    failed
-------------------------  ---------  -------  --------
conv2d_NCHWc.x86           195        195      0
dense_nopack.x86           66         54       12
dense_pack.x86             66         55       11
conv2d_nchw.cuda           3          2        1
conv2d_nchw_winograd.cuda  2          1        1
topi_nn_dense [direct]     1          1        0

by error:
error_no    error_name           records
----------  -------------------  ---------
0           NO_ERROR             308
1           INSTANTIATION_ERROR  1
6           BUILD_TIMEOUT        24
"""
    )
    stats = json.loads(run(sample_db, "stats", "--json")[1])
    assert stats["by_error"][2] == {"error_no": 6, "records": 24, "error_name": "BUILD_TIMEOUT"}


def test_stats_tells_v01_templates_of_one_task_apart(tmp_path: Path) -> None:
    require_shared()
    db = str(tmp_path / "tophub.db")
    assert run(db, "import", str(CORPUS / "tophub" / "cuda_v0.07.log"))[0] == 0
    out = run(db, "stats", columns=80)[1]
    assert out.split("\nby template:\n")[1].split("\n\n")[0] == (
        """\
template                                records    valid    failed
--------------------------------------  ---------  -------  --------
topi_nn_conv2d [direct]                 530        530      0
topi_nn_depthwise_conv2d_nchw [direct]  97         97       0
topi_nn_conv2d [winograd]               60         60       0
topi_nn_conv2d_transpose_nchw [direct]  1          1        0"""
    )


# -- 7. unknown knobs, loose target strings ---------------------------------------------------


@pytest.mark.parametrize(
    ("args", "note"),
    [
        (
            ["1x512", "--target-key", "cuda", "--knob", "layout"],
            "note: topi_nn_dense [direct] (v0.1) has no knob 'layout'; its knobs: tile_k\n",
        ),
        (
            ["1x512", "--target-key", "cpu", "--template", "dense_pack.x86", "--knob", "tile_zz"],
            "note: dense_pack.x86 has no knob 'tile_zz'; its knobs: tile_y, tile_x, tile_k\n",
        ),
    ],
)
def test_an_unknown_knob_gets_a_note_listing_the_knobs(
    sample_db: str, args: list[str], note: str
) -> None:
    code, _, err = run(sample_db, "knobs", *args)
    assert (code, err) == (0, note)


@pytest.mark.parametrize(
    ("target", "problem"),
    [
        (
            "nonsense_kind",
            "unknown target kind 'nonsense_kind' (TVM knows aocl, aocl_sw_emu, c, cuda, ext_dev, "
            "hexagon, hybrid, llvm, metal, nvptx, opencl, rocm, sdaccel, stackvm, vulkan, webgpu)",
        ),
        ("cuda -model", "option -model has no value: write -model=VALUE"),
        ("cuda -model=", "option -model= has an empty value"),
        ("-mcpu=x llvm", "target string starts with an option: '-mcpu=x llvm'"),
    ],
)
@pytest.mark.parametrize(
    "command", [["best"], ["untuned", "--check"], ["workloads"], ["tasks", "-"], ["diagnose"]]
)
def test_a_loose_target_string_is_a_usage_error_naming_the_problem(
    sample_db: str, command: list[str], target: str, problem: str
) -> None:
    option = "--target" if command[0] in ("tasks", "diagnose") else "--for-target"
    code, out, err = run(sample_db, *command, option, target)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1].endswith(
        f'{target!r}: {problem}; give a TVM target string, e.g. "cuda -model=titanx"'
    )


@pytest.mark.parametrize("target", ["llvm -system-lib", "cuda -model=unknown", "llvm -target=x"])
def test_flags_and_legacy_options_are_good_target_strings(sample_db: str, target: str) -> None:
    assert run(sample_db, "best", "--for-target", target)[0] == 0


def test_the_api_refuses_the_same_target_strings() -> None:
    import tunelog
    from tunelog.exceptions import TargetParseError

    with pytest.raises(TargetParseError, match="option -model has no value"):
        tunelog.Filters(for_target="cuda -model")


# -- 8. curve --improvements --------------------------------------------------------------------

CURVE_TITLE = """\
cpu (platinum-8124m)  1x768 * 768x768  dense_nopack.x86  (relay picks it)
324 trials, 285 valid; best 6.1 us at trial 184, 140 trials since; converged
"""
IMPROVEMENTS = {
    80: """\
trial    config    new best    change
-------  --------  ----------  -----------
1        129       34.3 us     first valid
2        115       14.5 us     -57.8%
3        46        14.3 us     -0.9%
7        259       14.3 us     -0.2%
10       118       10.0 us     -29.9%
26       199       9.2 us      -8.3%
31       163       7.3 us      -20.6%
41       126       6.7 us      -7.9%
184      180       6.1 us      -9.3%
""",
    120: """\
trial    source                                           config    new best    change
-------  -----------------------------------------------  --------  ----------  -----------
1        …/platinum-8124m/bert-B1-float32.kernel.log:1    129       34.3 us     first valid
2        …/platinum-8124m/bert-B1-float32.kernel.log:2    115       14.5 us     -57.8%
3        …/platinum-8124m/bert-B1-float32.kernel.log:3    46        14.3 us     -0.9%
7        …/platinum-8124m/bert-B1-float32.kernel.log:7    259       14.3 us     -0.2%
10       …/platinum-8124m/bert-B1-float32.kernel.log:10   118       10.0 us     -29.9%
26       …/platinum-8124m/bert-B1-float32.kernel.log:26   199       9.2 us      -8.3%
31       …/platinum-8124m/bert-B1-float32.kernel.log:31   163       7.3 us      -20.6%
41       …/platinum-8124m/bert-B1-float32.kernel.log:41   126       6.7 us      -7.9%
184      …/platinum-8124m/bert-B1-float32.kernel.log:184  180       6.1 us      -9.3%
""",
}
DENSE_NOPACK = ["1x768", "--target-key", "cpu", "--template", "dense_nopack.x86"]


@pytest.mark.parametrize("columns", [80, 120])
def test_curve_improvements_lists_only_new_bests_with_their_gain(
    corpus_db: str, columns: int
) -> None:
    code, out, _ = run(corpus_db, "curve", *DENSE_NOPACK, "--improvements", columns=columns)
    assert (code, out) == (0, CURVE_TITLE + IMPROVEMENTS[columns])


def test_curve_json_keeps_every_trial_with_improvements(corpus_db: str) -> None:
    full = run(corpus_db, "curve", *DENSE_NOPACK, "--json")
    assert run(corpus_db, "curve", *DENSE_NOPACK, "--json", "--improvements") == full
    (series,) = json.loads(full[1])
    assert len(series["series"]) == series["trials"] == 324


def test_curve_improvements_on_the_samples(sample_db: str) -> None:
    code, out, _ = run(sample_db, "curve", "1x16x32x32", "--improvements", columns=80)
    assert (code, out.splitlines()[2:]) == (
        0,
        [
            "trial    source                            config    new best    change",
            "-------  --------------------------------  --------  ----------  -----------",
            "1        sample_logs/x86_mini_llvm.log:41  349       118.0 us    first valid",
            "35       sample_logs/x86_mini_llvm.log:75  267       116.0 us    -1.7%",
        ],
    )


# -- 10. the smaller items ----------------------------------------------------------------------


@pytest.mark.parametrize(("stops_itself", "hint"), [(True, False), (False, True)])
def test_watch_asks_for_ctrl_c_only_when_it_does_not_stop_itself(
    stops_itself: bool, hint: bool
) -> None:
    from types import SimpleNamespace

    from rich.console import Console

    from tunelog.cli.watching import _watch_table

    refresh = SimpleNamespace(number=1, new=0, lines=0, layers=[], held_back_bytes=0)
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(_watch_table(refresh, stops_itself))
    assert ("Ctrl-C to stop" in console.export_text()) is hint


def test_an_ambiguous_layer_lists_the_candidates_one_per_line(sample_db: str) -> None:
    code, _, err = run(sample_db, "curve", "1x5")
    assert (code, err) == (
        1,
        "Error: 2 layers match '1x5': give more of the shapes, the full layer key (`tunelog "
        "workloads --json`), or narrow with --target-key/--model/--template (--model unknown: "
        "the group without one):\n"
        "  cpu: 1x512 * 1000x512  (dense|1x512:float32|1000x512:float32|bias=-|float32)\n"
        "  cuda,gpu (t4): 1x512 * 1000x512  (dense|1x512:float32|1000x512:float32|bias=-|float32)\n",
    )


def test_an_ambiguous_layer_lists_at_most_ten(corpus_db: str) -> None:
    err = run(corpus_db, "knobs", "x")[2]
    lines = err.splitlines()
    assert lines[0].startswith("Error: 14 layers match 'x': ")
    assert len(lines) == 12
    assert lines[-1] == "  ... and 4 more (`tunelog workloads`)"


def test_workloads_takes_a_layer_like_curve_and_knobs(sample_db: str) -> None:
    code, out, _ = run(sample_db, "workloads", "1x512", "--json")
    assert code == 0
    assert [(row["target_keys"], row["shapes"]) for row in json.loads(out)] == [
        (["cpu"], "1x512 * 1000x512"),
        (["cuda", "gpu"], "1x512 * 1000x512"),
    ]
    assert run(sample_db, "workloads", "9x9") == (
        0,
        "",
        "no layer matches '9x9'; see `tunelog workloads` and `tunelog stats` for what there is\n",
    )
    # A layer the filters leave out is said to be elsewhere, as `curve` says it.
    assert run(sample_db, "workloads", "1x512", "--model", "a100") == (
        0,
        "",
        "no layer matches '1x512' with --model 'a100': the 2 layers it names are on 'cpu', "
        "'cuda,gpu (t4)' only; change or drop the filters\n",
    )


def test_report_over_an_existing_file_says_report_not_log(sample_db: str, tmp_path: Path) -> None:
    pytest.importorskip("plotly")
    out = tmp_path / "r.html"
    out.write_text("earlier")
    assert run(sample_db, "report", str(out)) == (
        1,
        "",
        f"Error: {out} already exists (an earlier report?): choose another path or pass "
        "--force to replace it\n",
    )


@pytest.mark.parametrize(
    ("options", "layers"),
    [
        # The t4 layer's only record is v0.1, which TVM >= 0.7 skips: untuned (rules.untuned).
        (["--target", "cuda -model=t4"], "1 layer(s), 1 untuned, 0 template(s)"),
        (["--source", "2"], "4 layer(s), 0 untuned, 2 template(s)"),
        (["--label", "t4", "--template", "topi_nn_dense"], "1 layer(s), 1 untuned, 0 template(s)"),
    ],
)
def test_report_takes_the_source_label_and_target_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[str], layers: str
) -> None:
    pytest.importorskip("plotly")
    monkeypatch.chdir(REPO)
    db = str(tmp_path / "r.db")
    assert run(db, "import", "--label", "t4", str(SAMPLE_LOGS / "edge_cases.log"))[0] == 0
    assert run(db, "import", str(SAMPLE_LOGS / "x86_mini_llvm.log"))[0] == 0
    code, _, err = run(db, "report", str(tmp_path / "r.html"), *options)
    assert code == 0
    assert err.endswith(f"): {layers} with failures\n")


def test_report_charts_leave_room_above_for_plotly_toolbar() -> None:
    from tunelog.reportfigures import MODEBAR_ROOM, curves_figure, latency_figure

    assert MODEBAR_ROOM >= 40  # the modebar is about 30 px tall with its padding
    for figure in (latency_figure([]), curves_figure([], [])):
        layout = figure["layout"]
        assert isinstance(layout, dict)
        assert layout["margin"]["t"] == MODEBAR_ROOM


def test_ansor_best_json_keeps_the_workload_keys_structure(tmp_path: Path) -> None:
    from tests.test_ansor import ansor_line

    log = tmp_path / "ansor.json"
    log.write_text(ansor_line('["h1", [1, 64, 56, 56], [128, 64, 3, 3], [1, 128, 28, 28]]') + "\n")
    db = str(tmp_path / "a.db")
    assert run(db, "import", str(log))[0] == 0
    (row,) = json.loads(run(db, "best", "--json")[1])
    assert row["args"] == [[1, 64, 56, 56], [128, 64, 3, 3], [1, 128, 28, 28]]
    import tunelog

    with tunelog.open_store(db) as store:
        (api_row,) = tunelog.api.best(store)
        (flat,) = store.best()  # the identity: the flattened tuple
    assert api_row.args == row["args"]
    assert flat.args == [1, 64, 56, 56, 128, 64, 3, 3, 1, 128, 28, 28]


# -- 9. stale state: a --repair import supersedes the rejects of the same bytes -----------------


def _pasted(lines: list[str]) -> str:
    """Records as a web page shows them: every straight quote made typographic."""
    pasted = []
    for line in lines:
        head, *quoted = line.split('"')
        pasted.append(
            head + "".join(("“" if i % 2 == 0 else "”") + p for i, p in enumerate(quoted))
        )
    return "\n".join(pasted) + "\n"


def _paste_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`paste.log` in the working directory `tmp_path`: 3 records as a web page shows them."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[:3]
    Path("paste.log").write_text(_pasted(lines), encoding="utf-8")


def test_a_repair_import_replaces_the_rejects_of_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _paste_here(tmp_path, monkeypatch)
    assert run("p.db", "import", "paste.log")[0] == 1  # no record as it is: use --repair
    code, out, _ = run("p.db", "import", "--repair", "paste.log")
    assert (code, out.splitlines()[2]) == (
        0,
        "paste.log  3        3      0      0           0        0           repaired 3 record(s); "
        "replaces #1 (the same bytes, rejected without --repair)",
    )
    assert run("p.db", "rejects") == (0, "", "no rejected lines\n")
    sources = json.loads(run("p.db", "sources", "--json")[1])
    assert [(s["id"], s["records"], s["rejected"]) for s in sources] == [(2, 3, 0)]
    assert json.loads(run("p.db", "stats", "--json")[1])["sources"] == 1
    again = json.loads(run("p.db", "import", "--repair", "paste.log", "--json")[1])
    assert again["files"][0]["superseded"] == []  # nothing stale left


def test_a_plain_import_after_a_repair_import_says_its_rejects_are_held_as_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read again without --repair, the paste rejects each line ("use --repair"), which the
    source read with --repair holds as records: the import said "rejected 3" and listed them,
    while `sources` and `rejects` had none."""
    _paste_here(tmp_path, monkeypatch)
    assert run("p.db", "import", "--repair", "paste.log")[0] == 0
    code, out, err = run("p.db", "import", "paste.log")
    assert (code, err) == (0, "")
    assert out.splitlines()[2].endswith(
        "already imported as #1, which holds 3 record(s) of these bytes read with the other "
        "--repair setting"
    )
    assert run("p.db", "rejects") == (0, "", "no rejected lines\n")


def test_a_plain_import_after_a_repair_import_still_says_the_lines_both_reject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _paste_here(tmp_path, monkeypatch)
    with Path("paste.log").open("a", encoding="utf-8") as file:
        file.write("not a record at all\n")
    run("p.db", "import", "--repair", "paste.log")
    code, _, err = run("p.db", "import", "paste.log")
    assert (code, err) == (0, "paste.log:4: not JSON (text line)\n")


def test_a_merged_repair_import_replaces_the_rejects_of_the_same_bytes_as_importing_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _paste_here(tmp_path, monkeypatch)
    run("p.db", "import", "paste.log")  # rejected: use --repair
    run("r.db", "import", "--repair", "paste.log")
    code, out, _ = run("p.db", "merge", "r.db")
    assert code == 0
    assert out.splitlines()[2].endswith("replaces #1 (the same bytes, rejected without --repair)")
    assert run("p.db", "rejects") == (0, "", "no rejected lines\n")
    sources = json.loads(run("p.db", "sources", "--json")[1])
    assert [(s["id"], s["records"], s["rejected"]) for s in sources] == [(2, 3, 0)]


def test_a_repaired_file_with_records_run_together_adds_up_in_import_and_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two records on one line, split by --repair: 3 lines hold 4 records. The import and
    `sources` tables say by how many the records exceed the lines, and `sources --json` gives
    `split` and `repaired`, so the line accounting adds up (lines + split = records + ...)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[:4]
    Path("glued.log").write_text(lines[0] + lines[1] + "\n" + "\n".join(lines[2:]) + "\n")
    code, out, _ = run("g.db", "import", "--repair", "glued.log")
    assert (code, out.splitlines()[2]) == (
        0,
        "glued.log  3        4      0      0           0        0           repaired 2 record(s) "
        "(+1: several on one line)",
    )
    code, out, _ = run("g.db", "sources")
    assert code == 0
    assert out.splitlines()[2].endswith("repaired 2 record(s) (+1: several on one line)")
    (source,) = json.loads(run("g.db", "sources", "--json")[1])
    counts = ("lines", "split", "records", "duplicates", "comments", "blank", "rejected")
    assert [source[name] for name in (*counts, "repaired")] == [3, 1, 4, 0, 0, 0, 0, 2]


def test_a_source_owning_records_is_not_superseded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[:3]
    Path("half.log").write_text(lines[0] + "\n" + _pasted(lines[1:]), encoding="utf-8")
    assert run("h.db", "import", "half.log")[0] == 0
    report = json.loads(run("h.db", "import", "--repair", "half.log", "--json")[1])
    assert report["files"][0]["superseded"] == []
    assert [s["records"] for s in json.loads(run("h.db", "sources", "--json")[1])] == [1, 2]


def test_the_forum_paste_imported_twice_is_one_source(tmp_path: Path) -> None:
    require_shared()
    paste = str(CORPUS / "forum" / "centernet_forum_paste.log")
    db = str(tmp_path / "f.db")
    run(db, "import", paste)
    assert run(db, "import", "--repair", paste)[0] == 0
    assert run(db, "rejects")[2] == "no rejected lines\n"
    assert len(json.loads(run(db, "sources", "--json")[1])) == 1


def test_an_auto_scheduler_winner_is_not_its_hash_again(tmp_path: Path) -> None:
    from tests.test_ansor import ansor_line

    log = tmp_path / "ansor.json"
    log.write_text(ansor_line('["h1", [1, 64, 56, 56], [128, 64, 3, 3]]') + "\n")
    db = str(tmp_path / "a.db")
    assert run(db, "import", str(log))[0] == 0
    code, out, _ = run(db, "workloads", columns=80)
    assert (code, out.splitlines()[2:]) == (
        0,
        [
            "cuda,gpu  h1          [1, 64, 56, 56], [128, 64, 3,  (auto_scheduler)  1.00 ms",
            "                      3]",
        ],
    )
    assert json.loads(run(db, "workloads", "--json")[1])[0]["winner"] == "h1"


@pytest.mark.parametrize(
    ("columns", "sort", "shown"),
    [
        (150, None, ["target", "operator", "shapes", "winner", "latency", "config"]),
        (80, "latency", ["target", "operator", "shapes", "winner", "latency"]),
        (80, "gflops", ["target", "operator", "shapes", "winner", "GFLOPS"]),
        (80, None, ["target", "operator", "shapes", "winner"]),
    ],
)
def test_workloads_keeps_the_winners_latency_and_the_sorted_column_on_a_terminal(
    sample_db: str, columns: int, sort: str | None, shown: list[str]
) -> None:
    """The winner's latency was only in the templates cell, which goes first to fit: a
    column of its own now, and a table sorted by a column always shows that column."""
    code, out, _ = run(
        sample_db, "workloads", *(["--sort", sort] if sort else []), "--task", "dense",
        columns=columns,
    )  # fmt: skip
    assert code == 0
    assert out.splitlines()[0].split()[: len(shown)] == shown


def test_a_paste_imported_with_repair_then_without_is_already_imported_with_its_label(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its bytes are known (read with --repair): the plain import notes that source and takes
    its --label (review of the relabel change: this path exited 1, 'holds no tuning record',
    and kept the old label)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[:3]
    Path("paste.log").write_text(_pasted(lines), encoding="utf-8")
    assert run("p.db", "import", "--repair", "--label", "a", "paste.log")[0] == 0
    code, out, err = run("p.db", "import", "--label", "b", "paste.log")
    assert code == 0, err
    # This read's counts (without --repair), the source's records kept; its rejects ("use
    # --repair") are not listed: the source holds those lines as records.
    assert err == ""
    assert out.splitlines()[2].endswith(
        "already imported as #1, which holds 3 record(s) of these bytes read with the other "
        "--repair setting; label set by this --label"
    )
    assert [s["label"] for s in json.loads(run("p.db", "sources", "--json")[1])] == ["b"]


def test_a_grown_log_whose_new_lines_are_all_rejected_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its earlier lines hold its records: 'holds no tuning record' (exit 1) was wrong."""
    monkeypatch.chdir(tmp_path)
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_bytes().splitlines(keepends=True)
    log = Path("grow.log")
    log.write_bytes(b"".join(lines[:60]))
    assert run("g.db", "import", str(log))[0] == 0
    with log.open("ab") as out:
        out.write(b"Traceback (most recent call last):\n")
    code, out_text, err = run("g.db", "import", str(log))
    assert code == 0, err
    assert "grown: 60 earlier line(s) skipped" in out_text
    assert err == "grow.log:61: not JSON (text line)\n"
