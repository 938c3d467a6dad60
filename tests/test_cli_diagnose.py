"""`tunelog diagnose`: exact output on real relay.build messages (tests/data/diagnose)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, run

FIXTURES = "tests/data/diagnose"


FALLBACK_TABLE = """\
line    reason     workload                                       detail
------  ---------  ---------------------------------------------  --------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------
2       no_record  conv2d_NCHWc.x86 1x3x224x224 * 64x3x7x7 s2 p3  no record of this layer for any target; nearest tuned: data 1x3x224x224 vs 1x3x112x112 | data 1x3x224x224 vs 1x64x28x28, kernel 64x3x7x7 vs 128x64x1x1, padding 3,3,3,3 vs 0,0,0,0 | data 1x3x224x224 vs 1x128x14x14, kernel 64x3x7x7 vs 256x128x1x1, padding 3,3,3,3 vs 0,0,0,0

1 of 1 workloads unanswered (no_record 1); 1 layer(s) to tune
"""


def test_diagnose_prints_a_table_and_a_verdict(db: str) -> None:
    run("--db", db, "import", f"{FIXTURES}/tuned112.log")
    assert run("--db", db, "diagnose", f"{FIXTURES}/fallback112.out") == (0, FALLBACK_TABLE, "")


def test_diagnose_reads_stdin_and_check_fails_on_anything_unanswered(db: str) -> None:
    run("--db", db, "import", f"{FIXTURES}/tuned112.log")
    text = (REPO / FIXTURES / "fallback112.out").read_text()
    code, out, _ = run("--db", db, "diagnose", "--check", stdin=text)
    assert (code, out) == (1, FALLBACK_TABLE)


def test_diagnose_check_passes_when_the_database_answers_everything(db: str) -> None:
    run("--db", db, "import", f"{FIXTURES}/full224.log")
    code, out, err = run("--db", db, "diagnose", "--check", f"{FIXTURES}/partial224.out")
    assert (code, err) == (0, "")
    assert out.endswith(
        "\nthe database answers all 16 workloads: a build that said otherwise read another file "
        "(export this database and build with it)\n"
    )
    assert f"from {FIXTURES}/full224.log:10 " in out  # paths shown relative, as elsewhere


def test_diagnose_json_keeps_workloads_as_tvm_printed_them(db: str) -> None:
    run("--db", db, "import", f"{FIXTURES}/partial224.log")
    code, out, _ = run("--db", db, "diagnose", "--json", f"{FIXTURES}/partial224.out")
    entries = json.loads(out)
    assert code == 0 and len(entries) == 16
    assert set(entries[0]) == {
        "target",
        "workload",
        "reason",
        "original",
        "nearest",
        "detail",
        "line",
    }
    packed = entries[8]
    assert packed["reason"] == "packed"
    assert packed["workload"][1] == ["TENSOR", [1, 8, 56, 56, 8], "float32"]
    assert packed["original"] == entries[0]["workload"]
    assert entries[0]["target"] == "llvm -keys=cpu -mcpu=core-avx2 -mtriple=x86_64-pc-linux-gnu"


def test_diagnose_a_task_list_needs_target(db: str, tmp_path: Path) -> None:
    run("--db", db, "import", f"{FIXTURES}/full224.log")
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        '[["dense_pack.x86", ["TENSOR", [1, 512], "float32"], ["TENSOR", [1000, 512], "float32"], null, "float32"]]'
    )
    code, out, err = run("--db", db, "diagnose", str(tasks))
    assert (code, out) == (2, "")  # a usage error, as `tasks` without --target
    assert "a task list does not say which target it compiles for" in err
    code, out, _ = run("--db", db, "diagnose", "--target", "llvm", "--json", str(tasks))
    assert (code, [e["reason"] for e in json.loads(out)]) == (0, ["answered"])


def test_diagnose_of_an_empty_task_list_says_so(db: str, tmp_path: Path) -> None:
    run("--db", db, "import", f"{FIXTURES}/full224.log")
    tasks = tmp_path / "tasks.json"
    tasks.write_text("[]")
    assert run("--db", db, "diagnose", "--target", "llvm", str(tasks)) == (
        0,
        "",
        "the task list is empty\n",
    )


WHAT_IT_READS = (
    "diagnose reads the text a build printed (relay.build with DEBUG logging, or the fallback "
    "warnings), or a task list"
)


@pytest.mark.parametrize(
    ("given", "what"),
    [
        ("database", "it is an SQLite database (a tunelog database is given as --db)"),
        ("log", "it holds JSON records (a tuning log? import it with `tunelog import`)"),
    ],
)
def test_diagnose_refuses_a_database_or_a_tuning_log(
    db: str, tmp_path: Path, given: str, what: str
) -> None:
    """Not a build's output: one Error: line saying what it is and what diagnose reads, not
    "no message found" and exit 0."""
    run("--db", db, "import", f"{FIXTURES}/full224.log")
    path = db if given == "database" else f"{FIXTURES}/full224.log"
    assert run("--db", db, "diagnose", path) == (1, "", f"Error: {path}: {what}; {WHAT_IT_READS}\n")


def test_diagnose_warns_about_a_message_it_cannot_read(db: str) -> None:
    run("--db", db, "import", f"{FIXTURES}/full224.log")
    text = "Cannot find tuning records for:\n  target=llvm\n  key=(os.system('x'),)\n"
    code, out, err = run("--db", db, "diagnose", "-", stdin=text)
    assert (code, out) == (0, "")
    assert err == (
        "warning: -:1: message not read: the workload is not a Python literal (ValueError)\n"
        "no 'Cannot find tuning records', 'Cannot find config', 'missing in ApplyGraphBest "
        "context' or 'Cannot find tuned schedules' message found\n"
    )


_DICT_ARGS = '["TENSOR", [1, 16], "float32"], ["TENSOR", [8, 16], "float32"], null, {"a": 1}'


def test_workloads_holding_an_object_or_a_set_are_diagnosed_not_a_traceback(
    db: str, tmp_path: Path
) -> None:
    # A stored argument or a message's holding a dict (a set) made every lookup raise
    # "unhashable type"; a task list naming one task twice, too.
    log = tmp_path / "d.log"
    log.write_text(
        f'{{"input": ["llvm -keys=cpu", "dense_nopack.x86", [{_DICT_ARGS}], {{}}], "config": '
        '{"index": 1, "code_hash": null, "entity": []}, "result": [[1e-05], 0, 0.1, 1.7e9], '
        '"version": 0.2}\n'
    )
    build = tmp_path / "build.txt"
    prefix = "Cannot find config for target=llvm -keys=cpu, workload=('dense_nopack.x86', "
    build.write_text(
        f"{prefix}('TENSOR', (1, 16), 'float32'), ('TENSOR', (8, 16), 'float32'), None, "
        "{'a': 1})\n"
        f"{prefix}('TENSOR', (1, 16), 'float32'), None, {{1, 2}})\n"
    )
    tasks = tmp_path / "tasks.json"
    tasks.write_text(f'[["dense_nopack.x86", {_DICT_ARGS}], ["dense_nopack.x86", {_DICT_ARGS}]]')
    run("--db", db, "import", str(log))
    code, out, err = run("--db", db, "diagnose", "--json", str(build))
    assert (code, err) == (0, "")
    assert [d["reason"] for d in json.loads(out)] == ["answered", "no_record"]
    code, out, err = run("--db", db, "diagnose", "--json", str(tasks), "--target", "llvm")
    assert (code, [d["reason"] for d in json.loads(out)]) == (0, ["answered"])
    code, out, err = run("--db", db, "tasks", "--json", str(tasks), "--target", "llvm")
    assert (code, [t["valid"] for t in json.loads(out)]) == (0, [1, 1])


def test_build_output_starting_with_a_cpp_log_line_is_read_as_build_output(
    db: str, tmp_path: Path
) -> None:
    # TVM's C++ logger starts its lines with "[20:32:53]": read as a task list (not JSON).
    run("--db", db, "import", f"{FIXTURES}/tuned112.log")
    text = (REPO / FIXTURES / "fallback112.out").read_text()
    prefixed = tmp_path / "build.txt"
    prefixed.write_text(
        "[20:32:53] /src/target/target_kind.cc:181: Warning: Unable to detect CUDA version\n" + text
    )
    code, out, err = run("--db", db, "diagnose", "--json", str(prefixed))
    plain = json.loads(run("--db", db, "diagnose", "--json", stdin=text)[1])
    assert (code, err) == (0, "")
    moved = [{**d, "line": d["line"] + 1} for d in plain]
    assert json.loads(out) == moved and moved
    # Without DEBUG logging no operator is named: still build output, not a task list.
    prefixed.write_text(
        "[20:32:53] /src/target/target_kind.cc:181: Warning: Unable to detect CUDA version\n"
        "One or more operators have not been tuned. Please tune your model for better "
        "performance. Use DEBUG logging level to see more details.\n"
    )
    code, out, err = run("--db", db, "diagnose", str(prefixed))
    assert (code, err) == (
        0,
        "no 'Cannot find tuning records', 'Cannot find config', 'missing in ApplyGraphBest "
        "context' or 'Cannot find tuned schedules' message found\n",
    )


DEEP = "[" * 150 + "1" + "]" * 150


@pytest.mark.parametrize(
    ("args", "text", "said"),
    [
        (
            ["diagnose"],
            "Cannot find tuned schedules for target=llvm -keys=cpu, "
            'workload_key=["h", Infinity]. A fallback TOPI schedule is used',
            "message not read: the workload key cannot be read (non-finite number inf in "
            "workload key)",
        ),
        (
            ["diagnose"],
            f'Cannot find tuned schedules for target=llvm -keys=cpu, workload_key=["h", {DEEP}]',
            "message not read: lists or objects nested more than 100 levels deep",
        ),
        (
            ["diagnose"],
            "Cannot find config for target=llvm -keys=cpu, workload=('dense_nopack.x86', "
            + DEEP
            + "). A fallback configuration is used",
            "message not read: lists or objects nested more than 100 levels deep",
        ),
        (
            ["diagnose", "--json"],
            "Cannot find config for target=llvm -keys=cpu, workload=('dense_nopack.x86', 1j). "
            "A fallback configuration is used",
            "message not read: the workload holds a value of type complex, which no workload holds",
        ),
        (
            ["diagnose", "--json"],
            "Cannot find config for target=llvm -keys=cpu, workload=('dense_nopack.x86', 0x"
            + "f" * 80
            + "). A fallback configuration is used",
            "message not read: the workload holds an integer past 64 bits",
        ),
        (
            ["tasks", "--target", "llvm"],
            f'[["dense_nopack.x86", {DEEP}]]',
            "Error: {path}: a task list whose lists or objects nested more than 100 levels deep",
        ),
    ],
)
def test_deep_or_unreadable_text_given_to_diagnose_and_tasks_is_said_not_a_traceback(
    db: str, tmp_path: Path, args: list[str], text: str, said: str
) -> None:
    """A fuzzer's text: a workload key or tuple nested past the nesting limit, a key holding
    Infinity: tracebacks (RecursionError, AnsorKeyError) instead of one line saying so."""
    path = tmp_path / "build.txt"
    path.write_text(text + "\n")
    run("--db", db, "import", str(REPO / "sample_logs" / "x86_mini_llvm.log"))
    code, _, err = run("--db", db, args[0], str(path), *args[1:])
    assert "Traceback" not in err and code in (0, 1)
    assert said.format(path=path) in err


def test_explain_reads_a_line_whose_bytes_are_not_utf_8(db: str) -> None:
    """A command line's bytes that are not UTF-8 come to Python as lone surrogates: explain
    crashed encoding them (UnicodeEncodeError); they are the line's bytes, read as a log's."""
    line = (REPO / "sample_logs" / "x86_mini_llvm.log").read_text().splitlines()[0]
    code, _, err = run("--db", db, "explain", line.replace("NCHW", "NC\udcffHW", 1))
    assert "Traceback" not in err and code in (0, 1)


def test_json_output_escapes_what_the_table_escapes(db: str, tmp_path: Path) -> None:
    """--json wrote bidi controls and line separators raw (the table escapes them: U+202E
    shows the text after it reversed on a terminal; found by a fuzzer)."""
    path = tmp_path / "build.txt"
    path.write_text(
        "Cannot find config for target=llvm -keys=cpu, workload=('x\u202e\u2028', 1). "
        "A fallback configuration is used\n"
    )
    run("--db", db, "import", str(REPO / "sample_logs" / "x86_mini_llvm.log"))
    code, out, _ = run("--db", db, "diagnose", str(path), "--json")
    assert code == 0
    assert "\u202e" not in out and "\u2028" not in out
    assert '"x\\u202e' in out


def test_junk_task_reprs_are_given_up_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of 20,000 `Task(func_name=workload=(` took 18 s: each unreadable workload scans
    up to 20,000 characters. After a hundred, the text is no print of tasks."""
    from tunelog import tasklists

    tries: list[str] = []
    real = getattr(tasklists, "read_workload")  # noqa: B009 - not exported: patched here

    def counted(text: str) -> object:
        tries.append(text[:1])
        return real(text)

    monkeypatch.setattr(tasklists, "read_workload", counted)
    assert tasklists.read_task_reprs("Task(func_name=workload=(" * 20_000) == []
    assert len(tries) == tasklists._MAX_FAILED_REPRS + 1
