"""MetaSchedule JSONDatabase directories: import, the best record per workload, pruned export."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import CORPUS, DATA, SAMPLE_LOGS, require_shared, runner
from tunelog.api import export_metaschedule
from tunelog.cli import app
from tunelog.exceptions import InvalidValueError
from tunelog.msmodule import decode, structural_identity
from tunelog.selection import metaschedule_valid
from tunelog.store import Store

GMM = DATA / "metaschedule_gmm"
LLVM = {"kind": "llvm", "keys": ["cpu"], "tag": ""}
CUDA = {"kind": "cuda", "keys": ["cuda", "gpu"], "tag": ""}
TRACE = [[["GetBlock", [], ["C", "main"], ["b0"]], ["EnterPostproc", [], [], []]], []]
ONLY_POSTPROC = [[["EnterPostproc", [], [], []]], []]


def _record(index: int, run_secs: Any, target: Any = LLVM, trace: Any = None) -> str:
    return json.dumps([index, [trace or TRACE, run_secs, target, None]], separators=(",", ":"))


def _database(directory: Path, workloads: list[str], records: list[str]) -> Path:
    directory.mkdir()
    (directory / "database_workload.json").write_text(
        "".join(json.dumps([str(n), module]) + "\n" for n, module in enumerate(workloads))
    )
    (directory / "database_tuning_record.json").write_text("".join(r + "\n" for r in records))
    return directory


def _pruned(tmp_path: Path, database: Path) -> tuple[list[str], list[str]]:
    with Store(tmp_path / "ms.db") as store:
        (report,) = tunelog.import_paths(store, [str(database)])
        assert report.rejected == 0
        export_metaschedule(store, str(tmp_path / "out"))
    out = tmp_path / "out"
    return (
        (out / "database_workload.json").read_text().splitlines(),
        (out / "database_tuning_record.json").read_text().splitlines(),
    )


def test_the_pruned_database_keeps_the_best_valid_record_of_each_workload(tmp_path: Path) -> None:
    # Workloads 0 and 2 are the same module (one workload whatever the stored hash says).
    records = [
        _record(0, [0.004]),
        _record(1, [0.009], target=CUDA),
        _record(2, [0.001, 0.005]),  # mean 0.003: best of module A so far
        _record(0, [0.003], target=CUDA),  # tie: the earlier record keeps it, target ignored
        _record(0, [1e10]),  # not measured
        _record(0, None),  # no run_secs
        _record(0, []),  # empty run_secs
        _record(0, [0.0001], trace=ONLY_POSTPROC),  # empty trace: invalid
        _record(1, [1e10, 0.008]),  # valid (one value is not 1e10), mean ~5e9: loses
    ]
    database = _database(tmp_path / "db", [MODULE_A, MODULE_B, MODULE_A], records)
    workloads, kept = _pruned(tmp_path, database)
    # In import order of the winners, each with its own workload line (module A's winner was
    # measured against line 2), its index rewritten to that line's new place.
    assert workloads == [f'["1", "{MODULE_B}"]', f'["2", "{MODULE_A}"]']
    assert kept == [_record(0, [0.009], target=CUDA), records[2].replace("[2,", "[1,", 1)]
    # Each kept record points at its own workload's new line.
    assert [json.loads(workloads[json.loads(r)[0]])[1] for r in kept] == [MODULE_B, MODULE_A]


def _hand_best(directory: Path) -> str:
    """The best valid record, computed straight from the file (one workload)."""
    best: tuple[float, str] | None = None
    for line in (directory / "database_tuning_record.json").read_text().splitlines():
        _, (trace, run_secs, _, _) = json.loads(line)
        valid = any(i[0] != "EnterPostproc" for i in trace[0]) and any(
            s != 1e10 for s in run_secs or []
        )
        if valid:
            mean = sum(run_secs) / len(run_secs)
            if best is None or mean < best[0]:
                best = (mean, line)
    assert best is not None
    return best[1]


def test_the_generated_gmm_database_prunes_to_its_best_record(tmp_path: Path) -> None:
    workloads, kept = _pruned(tmp_path, GMM)
    assert workloads == (GMM / "database_workload.json").read_text().splitlines()
    assert kept == [_hand_best(GMM)]


def test_import_of_the_corpus_databases(tmp_path: Path) -> None:
    require_shared()
    llm = CORPUS / "metaschedule" / "mlc-ai__web-llm@89bbaa4"
    sd = CORPUS / "metaschedule" / "mlc-ai__web-stable-diffusion@96b685a"
    with Store(tmp_path / "ms.db") as store:
        first, second = tunelog.import_paths(store, [str(llm), str(sd)])
        assert (first.new, first.rejected) == (19, 0)
        # No workload file beside it: TVM cannot load it either; one message says why.
        assert (second.lines, second.new, second.rejected) == (292, 0, 292)
        assert [(r.line, r.reason) for r in second.rejects] == [
            (
                0,
                "MetaSchedule records without their workload file: none of the 292 line(s) "
                "can be read (TVM cannot load them either); put the database's workload file "
                "(database_workload.json) beside it and import again",
            )
        ]
        report = export_metaschedule(store, str(tmp_path / "out"))
    assert report.workloads == len(store_workloads(llm))


def store_workloads(directory: Path) -> set[str]:
    """Distinct modules of a workload file."""
    lines = (directory / "database_workload.json").read_text().splitlines()
    return {json.loads(line)[1] for line in lines}


@pytest.mark.parametrize("command", [["export-metaschedule"], ["export", "--metaschedule"]])
def test_cli_export_metaschedule_warns_that_the_target_is_ignored(
    tmp_path: Path, command: list[str]
) -> None:
    db = str(tmp_path / "ms.db")
    assert runner.invoke(app, ["--db", db, "import", str(GMM)]).exit_code == 0
    out = str(tmp_path / "pruned")
    result = runner.invoke(app, ["--db", db, *command, out])
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == (
        "warning: MetaSchedule ignores the target when it queries a database "
        "(apache/tvm#15549): each workload's best record is used for every target\n"
        f"wrote 1 workload(s) and their best record to {out}\n"
    )
    again = runner.invoke(app, ["--db", db, *command, out])
    assert again.exit_code == 1
    assert again.stderr.startswith("Error: ")


# What is in the export's directory before it, and the error that refuses it. Each refusal
# leaves the directory as it was: no new workloads file beside an old records file.
REFUSED_DIRECTORIES: dict[str, tuple[dict[str, str | None], str]] = {
    "an old records file": (
        {"database_tuning_record.json": "[0, []]\n"},
        "Error: {out}/database_tuning_record.json already exists (an earlier MetaSchedule "
        "database file?): choose another path or pass --force to replace it\n",
    ),
    "an old workloads file": (
        {"database_workload.json": '["0", "x"]\n'},
        "Error: {out}/database_workload.json already exists (an earlier MetaSchedule "
        "database file?): choose another path or pass --force to replace it\n",
    ),
    "the records file a link to the workloads file": (
        {"database_workload.json": '["0", "x"]\n', "database_tuning_record.json": None},
        "Error: cannot write {out}/database_workload.json, {out}/database_tuning_record.json: "
        "two of them are one file (a symlink?); remove the link or choose another path\n",
    ),
    "a directory for the records file": (
        {"database_tuning_record.json/keep": ""},
        "Error: {out}/database_tuning_record.json is a directory, where the MetaSchedule "
        "database file goes: move it away, or choose another path\n",
    ),
}


@pytest.mark.parametrize("held", list(REFUSED_DIRECTORIES))
def test_a_refused_metaschedule_export_writes_neither_file(tmp_path: Path, held: str) -> None:
    files, error = REFUSED_DIRECTORIES[held]
    db, out = str(tmp_path / "ms.db"), tmp_path / "pruned"
    assert runner.invoke(app, ["--db", db, "import", str(GMM)]).exit_code == 0
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        if text is None:  # a symlink to the workloads file
            (out / name).symlink_to("database_workload.json")
        else:
            (out / name).write_text(text)
    before = sorted((p.relative_to(out), p.is_file() and p.read_text()) for p in out.rglob("*"))
    force = ["--force"] if any(text is None for text in files.values()) else []
    result = runner.invoke(app, ["--db", db, "export-metaschedule", *force, str(out)])
    assert (result.exit_code, result.stderr) == (1, error.format(out=out))
    after = sorted((p.relative_to(out), p.is_file() and p.read_text()) for p in out.rglob("*"))
    assert after == before


@pytest.mark.parametrize("command", [["export-metaschedule"], ["export", "--metaschedule"]])
def test_a_metaschedule_export_to_stdout_is_a_usage_error(
    tmp_path: Path, command: list[str]
) -> None:
    db = str(tmp_path / "ms.db")
    assert runner.invoke(app, ["--db", db, "import", str(GMM)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, *command, "-"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "a MetaSchedule database is two files: give a directory to write them in" in (
        result.stderr
    )
    assert not (Path.cwd() / "-").exists()
    with Store(db) as store, pytest.raises(InvalidValueError, match="two files"):
        export_metaschedule(store, "-")


def test_a_metaschedule_export_into_a_file_says_it_needs_a_directory(tmp_path: Path) -> None:
    db, out = str(tmp_path / "ms.db"), tmp_path / "pruned"
    assert runner.invoke(app, ["--db", db, "import", str(GMM)]).exit_code == 0
    out.write_text("mine\n")
    result = runner.invoke(app, ["--db", db, "export-metaschedule", str(out)])
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {out} is a file: a MetaSchedule database is a directory of two files; "
        "give a directory's path\n",
    )
    assert out.read_text() == "mine\n"


@pytest.mark.parametrize("top_k", [0, -3, True, 1.5])
def test_the_api_refuses_a_top_k_below_one_as_the_command_line_does(
    tmp_path: Path, top_k: Any
) -> None:
    with Store(tmp_path / "ms.db") as store:
        tunelog.import_paths(store, [str(GMM)])
        with pytest.raises(InvalidValueError, match="top_k must be a whole number >= 1"):
            export_metaschedule(store, str(tmp_path / "out"), top_k=top_k)
        with pytest.raises(InvalidValueError, match="top_k must be a whole number >= 1"):
            tunelog.api.export(store, str(tmp_path / "out.log"), top_k=top_k)
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.log").exists()


def test_a_log_export_leaves_metaschedule_records_out_and_says_where_they_go(
    tmp_path: Path,
) -> None:
    db, out = str(tmp_path / "mixed.db"), tmp_path / "mixed.log"
    x86 = SAMPLE_LOGS / "x86_mini_llvm.log"
    assert runner.invoke(app, ["--db", db, "import", str(x86), str(GMM)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "export", str(out)])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        "warning: left out 1 MetaSchedule record(s), which a log file cannot hold: export them "
        "with `tunelog export --metaschedule DIR`\n"
        f"wrote 5 record(s) to {out}\n"
    )
    assert all(line.startswith('{"input"') for line in out.read_text().splitlines())


def test_a_log_export_of_only_metaschedule_records_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "ms.db")
    assert runner.invoke(app, ["--db", db, "import", str(GMM)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "export", str(tmp_path / "x.log")])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: every matching winner is a MetaSchedule record, which a log file cannot hold: "
        "use `tunelog export --metaschedule DIR`\n"
    )
    assert not (tmp_path / "x.log").exists()


def test_removing_a_source_keeps_metaschedule_winners_target_free(tmp_path: Path) -> None:
    """Records of one database split in two directories; removing the first leaves what
    importing the second alone gives (the target-free slot, as MetaSchedule queries it)."""
    halves = [tmp_path / "a", tmp_path / "b"]
    records = (GMM / "database_tuning_record.json").read_bytes().splitlines(keepends=True)
    middle = len(records) // 2
    for half, part in zip(halves, (records[:middle], records[middle:]), strict=True):
        half.mkdir()
        (half / "database_workload.json").write_bytes((GMM / "database_workload.json").read_bytes())
        (half / "database_tuning_record.json").write_bytes(b"".join(part))
    with Store(tmp_path / "both.db") as both, Store(tmp_path / "b.db") as alone:
        tunelog.import_paths(both, [str(h) for h in halves])
        tunelog.import_paths(alone, [str(halves[1])])
        tunelog.remove_sources(both, "1")
        expected = [(r.slots, r.mean_cost) for r in alone.best()]
        assert [(r.slots, r.mean_cost) for r in both.best()] == expected
        assert expected and expected[0][0] == ["*"]


# -- TVM's two rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instructions", "valid"),
    [
        (["GetSBlock", "EnterPostproc"], True),
        (["GetSBlock"], True),
        (["EnterPostproc"], False),
        ([], False),
        # A schedule with no rules: postprocessing only, whatever follows EnterPostproc.
        (["EnterPostproc", "GetSBlock", "GetLoops", "DecomposeReduction"], False),
    ],
)
def test_a_record_counts_only_with_an_instruction_before_the_first_enter_postproc(
    instructions: list[str], valid: bool
) -> None:
    assert metaschedule_valid(instructions, [0.001]) is valid


def _graph(version: str, buffer_name: str = "A", function: str = "main", root: object = 5) -> str:
    """A module text as TVM writes it: base64 of an 8-byte length header and the JSON graph."""
    graph = {
        "root_index": root,
        "nodes": [
            {"type": "None"},
            {"type": "ffi.String", "data": buffer_name},
            {"type": "ir.Var", "data": {"span": 0, "ty": 0, "name": 1}},
            {"type": "ffi.String", "data": function},
            {"type": "ir.GlobalVar", "data": {"span": 0, "ty": 0, "name_hint": 3}},
            {"type": "ir.IRModule", "data": {"functions": 4, "params": 2}},
        ],
        "metadata": {"tvm_version": version},
    }
    body = json.dumps(graph).encode()
    return base64.b64encode(len(body).to_bytes(8, "little") + body).decode()


# Modules of three functions (one workload each), for tests where the module is only a name.
MODULE_A, MODULE_B, MODULE_C = (_graph("0.27.0", function=name) for name in ("fa", "fb", "fc"))


def test_modules_equal_but_for_variable_names_are_one_workload(tmp_path: Path) -> None:
    modules = [_graph("0.27.0", "A"), _graph("0.27.0", "data"), _graph("0.27.0", "A", "other")]
    records = [_record(0, [0.004]), _record(1, [0.002]), _record(2, [0.003])]
    database = _database(tmp_path / "db", modules, records)
    workloads, kept = _pruned(tmp_path, database)
    # Lines 0 and 1 compete (the faster, of line 1, wins, with its own line: its trace
    # replays against the names it was measured with); line 2 is another function.
    assert [json.loads(line)[1] for line in workloads] == [modules[1], modules[2]]
    assert kept == [records[1].replace("[1,", "[0,", 1), records[2].replace("[2,", "[1,", 1)]


@pytest.mark.parametrize("root", ["\u00b2", "\u0662", "-1", -1, "9" * 5000, True])
def test_a_node_reference_that_is_no_index_is_read_as_none_not_a_crash(
    tmp_path: Path, root: object
) -> None:
    # "²".isdigit() is True, int("²") raises: found by review as a traceback of `import DIR`.
    database = _database(tmp_path / "db", [_graph("0.27.0", root=root)], [_record(0, [0.004])])
    result = runner.invoke(app, ["--db", str(tmp_path / "t.db"), "import", str(database)])
    assert result.exit_code == 0, result.output
    assert result.exception is None


# -- export: top-k, filters, versions -----------------------------------------------------------


def test_the_top_k_export_keeps_the_k_best_valid_distinct_traces(tmp_path: Path) -> None:
    other = [[["GetSBlock", [], ["D", "main"], ["b0"]]], []]
    third = [[["GetSBlock", [], ["E", "main"], ["b0"]]], []]
    records = [
        _record(0, [0.004]),
        _record(0, [0.001], trace=other),
        _record(0, [0.002], trace=other),  # the same trace again: the faster one stays
        _record(0, [0.0005], trace=ONLY_POSTPROC),  # invalid
        _record(0, [0.003], trace=third),
    ]
    database = _database(tmp_path / "db", [MODULE_A], records)
    with Store(tmp_path / "ms.db") as store:
        tunelog.import_paths(store, [str(database)])
        report = export_metaschedule(store, str(tmp_path / "out"), top_k=2)
    assert (report.workloads, report.records) == (1, 2)
    kept = (tmp_path / "out" / "database_tuning_record.json").read_text().splitlines()
    assert kept == [records[1], records[4]]  # file order kept


@pytest.mark.parametrize("command", [["export", "--metaschedule"], ["export-metaschedule"]])
def test_cli_export_metaschedule_takes_top_k_and_filters(
    tmp_path: Path, command: list[str]
) -> None:
    """Both spellings take the filters and --top-k (the README says they are one command)."""
    db = str(tmp_path / "ms.db")
    other = [[["GetSBlock", [], ["D", "main"], ["b0"]]], []]
    first = _database(
        tmp_path / "a", [MODULE_A], [_record(0, [0.004]), _record(0, [0.002], trace=other)]
    )
    second = _database(tmp_path / "b", [MODULE_B], [_record(0, [0.001], target=CUDA)])
    assert runner.invoke(app, ["--db", db, "import", str(first), str(second)]).exit_code == 0
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["--db", db, *command, "--top-k", "5", "--target-key", "cpu", str(out)],
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr.endswith(
        f"wrote 1 workload(s) and up to 5 best records of each (2 in all) to {out}\n"
    )
    assert (out / "database_workload.json").read_text() == f'["0", "{MODULE_A}"]\n'
    result = runner.invoke(app, ["--db", db, *command, "--source", "2", "--force", str(out)])
    assert result.exit_code == 0, result.stderr
    assert (out / "database_workload.json").read_text() == f'["0", "{MODULE_B}"]\n'


ARM = {"kind": "llvm", "keys": ["arm_cpu", "cpu"], "tag": "", "mtriple": "aarch64-linux-gnu"}
T4 = {"kind": "cuda", "keys": ["cuda", "gpu"], "tag": "", "model": "t4"}


@pytest.mark.parametrize(
    ("selection", "best_lines", "exported"),
    [
        # cpu's records alone: arm's 25 us wins (the whole database's winner is cuda's).
        (["--target-key", "cpu"], [4], [3, 0]),
        (["--target-key", "arm_cpu"], [4], [3]),
        (["--target-key", "cuda"], [2], [1, 2, 5]),
        (["--model", "t4"], [6], [5]),
        (["--target-key", "gpu", "--model", "t4"], [6], [5]),
        ([], [2], [1, 2, 3, 5]),  # record 0 has record 1's trace: the faster stays
    ],
)
def test_target_filters_answer_as_a_database_of_the_selected_records(
    tmp_path: Path, selection: list[str], best_lines: list[int], exported: list[int]
) -> None:
    """MetaSchedule's one slot per workload is every target's: `--target-key` and `--model`
    answer with what the selected records decide (as TVM loading only them does), not with the
    whole database's winner when it is theirs (a cpu filter found "no valid measurement")."""
    records = [
        _record(0, [3e-5]),
        _record(0, [2e-5], target=CUDA),
        _record(0, [4e-5], target=CUDA, trace=[[["GetSBlock", [], ["D", "main"], ["b0"]]], []]),
        _record(0, [2.5e-5], target=ARM, trace=[[["GetSBlock", [], ["E", "main"], ["b0"]]], []]),
        _record(0, [1e10]),
        _record(0, [9e-5], target=T4, trace=[[["GetSBlock", [], ["F", "main"], ["b0"]]], []]),
    ]
    database = _database(tmp_path / "db", [MODULE_A], records)
    db = str(tmp_path / "ms.db")
    assert runner.invoke(app, ["--db", db, "import", str(database)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "best", "--json", *selection])
    assert result.exit_code == 0, result.stderr
    assert [row["line"] for row in json.loads(result.stdout)] == best_lines
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["--db", db, "export-metaschedule", "--top-k", "5", *selection, str(out)]
    )
    assert result.exit_code == 0, result.stderr
    written = (out / "database_tuning_record.json").read_text().splitlines()
    assert sorted(written) == sorted(records[i] for i in exported)


def test_databases_of_two_tvm_releases_warn_on_import_and_refuse_to_export(tmp_path: Path) -> None:
    db = str(tmp_path / "ms.db")
    old = _database(tmp_path / "old", [_graph("0.26.0")], [_record(0, [0.002])])
    new = _database(tmp_path / "new", [_graph("0.27.0.post1")], [_record(0, [0.001])])
    result = runner.invoke(app, ["--db", db, "import", str(old), str(new)])
    assert result.exit_code == 0
    assert result.stderr.endswith(
        "warning: the MetaSchedule databases come from TVM 0.26.0, 0.27.0.post1, which no one "
        "TVM loads together: `export --metaschedule` writes one release at a time (--source or "
        "--label)\n"
    )
    result = runner.invoke(app, ["--db", db, "export", "--metaschedule", str(tmp_path / "out")])
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: the workloads come from TVM 0.26.0, 0.27.0.post1, whose databases no one TVM "
        "loads together: export one version at a time (--source or --label)\n",
    )
    assert not (tmp_path / "out" / "database_tuning_record.json").exists()
    one = ["--db", db, "export", "--metaschedule", "--source", "2", str(tmp_path / "out")]
    assert runner.invoke(app, one).exit_code == 0
    # Said once, by the import that made the mix: not again on an unrelated import or merge.
    log = SAMPLE_LOGS / "x86_mini_llvm.log"
    result = runner.invoke(app, ["--db", db, "import", str(log)])
    assert (result.exit_code, result.stderr) == (0, "")
    other = str(tmp_path / "other.db")
    assert runner.invoke(app, ["--db", other, "import", str(log)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "merge", other])
    assert result.exit_code == 0 and "warning" not in result.stderr


# -- files ----------------------------------------------------------------------------------------


def test_a_database_is_recognised_by_content_whatever_its_file_names(tmp_path: Path) -> None:
    database = _database(tmp_path / "db", [MODULE_A], [_record(0, [0.004])])
    (database / "database_workload.json").rename(database / "wl.jsonl")
    (database / "database_tuning_record.json").rename(database / "tuning.jsonl")
    (database / "logs").mkdir()
    (database / "logs" / "task_scheduler.log").write_text("2026-11-25 10:11:24 [INFO] picks\n")
    with Store(tmp_path / "ms.db") as store:
        (report,) = tunelog.import_paths(store, [str(tmp_path / "db")])
        assert (Path(report.path).name, report.new, report.rejected) == ("tuning.jsonl", 1, 0)
        assert len(store.best()) == 1


def test_records_without_their_workload_file_give_one_message(tmp_path: Path) -> None:
    directory = tmp_path / "db"
    directory.mkdir()
    records = directory / "database_tuning_record.json"
    records.write_text("".join(_record(0, [0.001]) + "\n" for _ in range(3)))
    said = (
        f"{records}: MetaSchedule records without their workload file: none of the 3 line(s) "
        "can be read (TVM cannot load them either); put the database's workload file "
        "(database_workload.json) beside it and import again\n"
    )
    result = runner.invoke(app, ["--db", str(tmp_path / "ms.db"), "import", str(directory)])
    assert (result.exit_code, result.stderr) == (0, said)
    # Named alone, the file is refused with the same reason (not "not MetaSchedule records").
    result = runner.invoke(app, ["--db", str(tmp_path / "ms.db"), "import", str(records)])
    assert (result.exit_code, result.stderr) == (1, f"Error: {said}")


def test_watch_on_a_work_dir_reads_the_database_and_skips_its_text_logs(tmp_path: Path) -> None:
    work_dir = _database(tmp_path / "work", [MODULE_A], [_record(0, [0.004])])
    (work_dir / "logs").mkdir()
    (work_dir / "logs" / "task_0_main.log").write_text("2026-11-25 10:11:24 [INFO] picks\n")
    with Store(tmp_path / "ms.db") as store:
        refresh = tunelog.api.watch(
            store, [str(work_dir)], on_refresh=lambda _: None, interval=0, refreshes=1
        )
    assert [(Path(r.path).name, r.new, r.rejected) for r in refresh.reports] == [
        ("database_tuning_record.json", 1, 0)
    ]


# -- what a user sees ---------------------------------------------------------------------------


def test_workloads_show_the_function_its_shapes_and_gflops(tmp_path: Path) -> None:
    db = str(tmp_path / "ms.db")
    assert runner.invoke(app, ["--db", db, "import", str(GMM)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "workloads", "--json"])
    (layer,) = json.loads(result.stdout)
    assert layer["shapes"] == "main: 1x128x128 x 1x128x128 -> 1x128x128 float32"
    # 2 * 128^3 multiply-adds, as estimate_tir_flops counts (and the tuner printed).
    assert layer["gflops"] == pytest.approx(4194304 / float(_hand_mean(GMM)) / 1e9)


def _hand_mean(directory: Path) -> float:
    _, (_, run_secs, _, _) = json.loads(_hand_best(directory))
    return float(sum(run_secs) / len(run_secs))


def test_knobs_are_the_sampling_decisions_of_the_traces(tmp_path: Path) -> None:
    db = str(tmp_path / "ms.db")
    assert runner.invoke(app, ["--db", db, "import", str(GMM)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "knobs", "main", "--json"])
    (entry,) = json.loads(result.stdout)
    knobs = {row["knob"] for row in entry["knobs"]}
    assert knobs == {
        "SamplePerfectTile(l2)",
        "SamplePerfectTile(l3)",
        "SamplePerfectTile(l4)",
        "SamplePerfectTile(l5)",
        "SampleCategorical(v34)",
        "SampleCategorical(v35)",
    }
    # The chosen trace's decisions are marked; a categorical shows the candidate it picked.
    best = json.loads(_hand_best(GMM))[1][0]
    chosen = {row["knob"]: row["value"] for row in entry["knobs"] if row["chosen"]}
    instructions, decisions = best
    for position, decision in decisions:
        kind, inputs, attrs, outputs = instructions[position]
        name = f"{kind}({','.join(inputs or outputs)})"
        value = attrs[0][decision] if kind == "SampleCategorical" else decision
        assert chosen[name] == json.dumps(value, separators=(",", ":"))


def test_failed_runs_are_named_for_what_they_are(tmp_path: Path) -> None:
    records = [
        _record(0, [0.004]),
        _record(0, [1e10]),
        _record(0, [0.001], trace=[[["EnterPostproc", [], [], []], ["GetSBlock", [], [], []]], []]),
    ]
    db = str(tmp_path / "ms.db")
    database = _database(tmp_path / "db", [MODULE_A], records)
    assert runner.invoke(app, ["--db", db, "import", str(database)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "errors", "--json"])
    (row,) = json.loads(result.stdout)
    assert row["errors"] == {"MS_NOT_MEASURED": 1, "MS_NO_SCHEDULE": 1}


def test_a_name_shared_with_the_function_name_still_counts() -> None:
    """A variable whose name node is also the function's name: renaming it renames the
    function, which structural equality does not ignore."""

    def module(function: str) -> str:
        graph = {
            "root_index": 4,
            "nodes": [
                {"type": "None"},
                {"type": "ffi.String", "data": function},
                {"type": "ir.Var", "data": {"span": 0, "ty": 0, "name": 1}},
                {"type": "ir.GlobalVar", "data": {"span": 0, "ty": 0, "name_hint": 1}},
                {"type": "ir.IRModule", "data": {"functions": 3, "params": 2}},
            ],
            "metadata": {"tvm_version": "0.27.0"},
        }
        return json.dumps(graph)

    main, other = (structural_identity(decode(module(name))) for name in ("main", "other"))
    assert main != other
    assert structural_identity(decode(_graph("0.27.0", "A"))) == structural_identity(
        decode(_graph("0.27.0", "B"))
    )


def test_the_same_records_file_beside_another_workload_file_is_other_records(
    tmp_path: Path,
) -> None:
    # Byte-identical records files: their index 0 names another module in each database.
    records = [_record(0, [0.004]), _record(0, [0.002])]
    first = _database(tmp_path / "a", [_graph("0.27.0", "A", "main")], records)
    second = _database(tmp_path / "b", [_graph("0.27.0", "A", "other")], records)
    with Store(tmp_path / "ms.db") as store:
        reports = tunelog.import_paths(store, [str(first), str(second)])
        again = tunelog.import_paths(store, [str(second)])
        assert [(r.new, r.duplicates) for r in reports + again] == [(2, 0), (2, 0), (0, 2)]
        assert len(store.best()) == 2


@pytest.mark.parametrize(
    ("records_name", "workloads_name"),
    [
        ("a_records.json", "a_workloads.json"),
        ("a_tuning_record.json", "a_workload.json"),
        ("database_tuning_record.json", "database_workload.json"),
    ],
)
def test_two_databases_in_one_directory_are_paired_by_name(
    tmp_path: Path, records_name: str, workloads_name: str
) -> None:
    directory = tmp_path / "two"
    directory.mkdir()
    for prefix, function in (("", "main"), ("b_", "other")):
        (directory / (prefix + workloads_name)).write_text(
            json.dumps(["0", _graph("0.27.0", "A", function)]) + "\n"
        )
        (directory / (prefix + records_name)).write_text(_record(0, [0.004]) + "\n")
    with Store(tmp_path / "ms.db") as store:
        reports = tunelog.import_paths(store, [str(directory)])
        assert sorted((Path(r.path).name, r.new, r.rejected) for r in reports) == sorted(
            [(records_name, 1, 0), ("b_" + records_name, 1, 0)]
        )
        assert len(store.best()) == 2
    with Store(tmp_path / "named.db") as store:  # the files of one database named
        named = [str(directory / ("b_" + records_name)), str(directory / ("b_" + workloads_name))]
        (report,) = tunelog.import_paths(store, named)
        assert (report.new, report.rejected) == (1, 0)
    with Store(tmp_path / "alone.db") as store:  # its workload file named alone: the database
        (report,) = tunelog.import_paths(store, [named[1]])
        assert (report.path, report.new, report.rejected) == (named[0], 1, 0)


GOOD = _record(0, [0.004])


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        # Each makes TVM 0.27's JSONDatabase refuse the whole database (checked).
        (_record(0, [0.001], target="llvm"), "target is not a target's JSON object with its kind"),
        (
            _record(0, [0.001], target={"kind": "cuda", "host": ["llvm"]}),
            "target is not a target's JSON object with its kind",
        ),
        # A kind the TVMs tunelog knows do not register: the TVM that wrote it did (BYOC).
        (_record(0, [0.001], target={"kind": "ethos-u", "keys": ["ethos-u", "cpu"]}), None),
        (
            _record(0, [0.001], trace=[[["GetSBlock", [], ["C", "main"]]], []]),
            "a trace instruction is not [kind, inputs, attrs, outputs]",
        ),
        ("", "a blank line, which TVM's JSONDatabase cannot read"),
        (_record(2, [0.001]), "workload line 3 unreadable (module is neither base64 nor JSON)"),
        # JSON's true and false are numbers to it: read, as TVM reads them.
        (GOOD.replace("[0.004]", "[false]"), None),
        (GOOD.replace("[0,", "[true,", 1).replace("[0.004]", "[0.001]"), None),
    ],
)
def test_record_lines_are_read_as_tvm_reads_them(
    tmp_path: Path, line: str, reason: str | None
) -> None:
    """Lines TVM's JSONDatabase refuses (and with them the database) were accepted, and
    exported (found against apache-tvm 0.27); lines it reads were refused."""
    database = _database(tmp_path / "db", [MODULE_A, MODULE_B, "@@@"], [GOOD, line])
    with Store(tmp_path / "ms.db") as store:
        (report,) = tunelog.import_paths(store, [str(database)])
        rejects = [(r.line, r.reason) for r in report.rejects]
        assert rejects == ([] if reason is None else [(2, f"MetaSchedule record: {reason}")])
        assert report.accounted and report.new == 2 - (reason is not None)


@pytest.mark.parametrize(("index", "workload"), [("true", 1), ("false", 0), ("1", 1), (" 1", 1)])
def test_an_export_rewrites_the_workload_index_however_it_is_written(
    tmp_path: Path, index: str, workload: int
) -> None:
    """A record indexed `true` was written `[0true, ...` (TVM refused the export)."""
    line = "[" + index + _record(1, [0.001])[2:]
    other = _record(1 - workload, [0.004])
    database = _database(tmp_path / "db", [MODULE_A, MODULE_B], [other, line])
    with Store(tmp_path / "ms.db") as store:
        tunelog.import_paths(store, [str(database)])
        export_metaschedule(store, str(tmp_path / "out"))
    written = (tmp_path / "out" / "database_tuning_record.json").read_text().splitlines()
    assert written == ["[0," + other.split(",", 1)[1], "[1," + line.split(",", 1)[1]]


def test_a_workload_line_tvm_cannot_read_is_said_though_no_record_names_it(
    tmp_path: Path,
) -> None:
    """TVM's JSONDatabase reads every workload line first: one it cannot read refuses the
    database, named by a record or not (tunelog's import said nothing)."""
    database = _database(tmp_path / "db", [MODULE_A, "@@@", "QUFB"], [GOOD])
    result = runner.invoke(app, ["--db", str(tmp_path / "ms.db"), "import", str(database)])
    assert result.exit_code == 0
    assert result.stderr == (
        f"warning: TVM's JSONDatabase cannot load the database of {database}/"
        "database_tuning_record.json as it is: it refuses it over a line of its workload file "
        "it cannot read (line 2: module is neither base64 nor JSON; 1 more such line(s); their "
        "records tunelog left out); `tunelog export-metaschedule DIR` writes one it loads\n"
    )


@pytest.mark.parametrize("other_name", ["other_tuning_record.json", "run2_records.json"])
def test_records_beside_another_database_are_not_read_against_its_workload_file(
    tmp_path: Path, other_name: str
) -> None:
    """A records file whose named workload file is missing took the default-named one, which
    its own records file beside it names: one database's records were read against another's
    modules (their best assigned to the wrong operator; the export loads in no TVM)."""
    database = _database(tmp_path / "db", [_graph("0.27.0", "A")], [_record(0, [0.004])])
    other = database / other_name
    other.write_text(_record(0, [0.001]) + "\n")
    said = (
        f"{other}: MetaSchedule records without their workload file: none of the 1 line(s) "
        f"can be read (TVM cannot load them either); put the database's workload file "
        f"({other_name.replace('tuning_record', 'workload').replace('records', 'workloads')}) "
        "beside it and import again\n"
    )
    db = str(tmp_path / "ms.db")
    result = runner.invoke(app, ["--db", db, "import", str(database)])
    assert (result.exit_code, result.stderr) == (0, said)
    result = runner.invoke(app, ["--db", db, "import", str(other)])
    assert (result.exit_code, result.stderr) == (1, f"Error: {said}")
    with Store(tmp_path / "ms.db") as store:
        assert [(r.mean_cost, Path(r.source).name) for r in store.best()] == [
            (0.004, "database_tuning_record.json")
        ]
    # A copy of the database's records file kept before (it starts as that file does: the
    # files only grow) is read against its workload file, as TVM reads it.
    kept = database / "database_tuning_record_old.json"
    kept.write_text((database / "database_tuning_record.json").read_text())
    with Store(tmp_path / "kept.db") as store:
        (report,) = tunelog.import_paths(store, [str(kept)])
        assert (report.new, report.rejected) == (1, 0)
    kept.unlink()
    # Alone beside the default-named workload file, it is still read against it.
    (database / "database_tuning_record.json").unlink()
    with Store(tmp_path / "alone.db") as store:
        (report,) = tunelog.import_paths(store, [str(database)])
        assert (Path(report.path).name, report.new) == (other_name, 1)


def test_a_database_with_a_line_tvm_cannot_read_is_said_to_load_in_no_tvm(
    tmp_path: Path,
) -> None:
    """TVM's JSONDatabase refuses the whole database over a cut-off last line, where tunelog
    keeps the other records: the import says so (it said only the line was rejected)."""
    records = [_record(0, [0.004]), _record(0, [0.002])]
    database = _database(tmp_path / "db", [MODULE_A], records)
    record_file = database / "database_tuning_record.json"
    record_file.write_text(record_file.read_text() + records[0][:30])
    result = runner.invoke(app, ["--db", str(tmp_path / "ms.db"), "import", str(database)])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"warning: TVM's JSONDatabase cannot load {record_file} as it is: it refuses the whole "
        "database over a line it cannot read (1 here, which tunelog left out); `tunelog "
        "export-metaschedule DIR` writes one it loads"
    )
    whole = _database(tmp_path / "whole", [MODULE_A], records)
    result = runner.invoke(app, ["--db", str(tmp_path / "b.db"), "import", "--json", str(whole)])
    assert "JSONDatabase" not in result.stderr
    assert [f["metaschedule"] for f in json.loads(result.stdout)["files"]] == [True]


def test_workloads_no_record_names_are_said_to_run_untuned(tmp_path: Path) -> None:
    """TVM answers a workload of the database without a record with nothing (no tuned
    schedule); tunelog, which stores workloads through their records, said nothing of them
    and `untuned --check` passed. Module A's two lines are one workload (names aside)."""
    database = _database(
        tmp_path / "db", [MODULE_A, MODULE_B, MODULE_A, MODULE_C], [_record(0, [0.004])]
    )
    db = str(tmp_path / "ms.db")
    result = runner.invoke(app, ["--db", db, "import", "--json", str(database)])
    assert result.exit_code == 0, result.stderr
    assert [f["workloads_without_records"] for f in json.loads(result.stdout)["files"]] == [2]
    assert result.stderr == (
        f"warning: 2 workload(s) of the database of {database / 'database_tuning_record.json'} "
        "have no record: TVM compiles them with no tuned schedule (workload line 2; workload "
        "line 4; `tunelog untuned` lists only layers with records)\n"
    )
    again = runner.invoke(app, ["--db", db, "import", "--json", str(database)])  # known bytes
    assert [f["workloads_without_records"] for f in json.loads(again.stdout)["files"]] == [None]


def test_a_workload_file_whose_first_line_is_unreadable_is_still_its_records_partner(
    tmp_path: Path,
) -> None:
    """Not known by its content, it was taken for missing: "records without their workload
    file ... put it beside it" of a database that has it, and no record was read."""
    database = _database(
        tmp_path / "db", [MODULE_A, MODULE_B], [_record(0, [0.004]), _record(1, [0.002])]
    )
    workloads = database / "database_workload.json"
    workloads.write_text("garbage\n" + workloads.read_text().splitlines()[1] + "\n")
    result = runner.invoke(
        app, ["--db", str(tmp_path / "ms.db"), "import", "--json", str(database)]
    )
    (report,) = json.loads(result.stdout)["files"]
    assert (report["new"], report["rejected"]) == (1, 1)
    assert report["rejects"][0]["reason"] == (
        "MetaSchedule record: workload line 1 unreadable (invalid JSON)"
    )


def _autotvm_line(target: str, index: int, cost: float) -> str:
    args = [["TENSOR", [1, 3, 32, 32], "float32"], ["TENSOR", [16, 3, 3, 3], "float32"]]
    return json.dumps(
        {
            "input": [target, "conv2d_NCHWc.x86", args, {}],
            "config": {"index": index, "code_hash": None, "entity": [["tile_ic", "sp", [-1, 3]]]},
            "result": [[cost], 0, 0.1, 1700000000.0],
            "version": 0.2,
            "tvm_version": "0.16.dev0",
        }
    )


def test_metaschedule_records_leave_autotvm_answers_to_target_filters_alone(
    tmp_path: Path,
) -> None:
    """The MetaSchedule records of --target-key's targets answer alone; AutoTVM's still compete
    with every target's (review: a MetaSchedule database made `best --target-key cpu` answer
    slot model=a with the cpu record, which the arm_cpu record holds when TVM loads the log)."""
    log = tmp_path / "autotvm.log"
    log.write_text(
        _autotvm_line("llvm -keys=cpu -model=a", 1, 3e-5)
        + "\n"
        + _autotvm_line("llvm -keys=arm_cpu -model=a", 2, 1e-5)
        + "\n"
    )
    db = str(tmp_path / "mix.db")

    def rows() -> list[tuple[str, str, float]]:
        result = runner.invoke(app, ["--db", db, "best", "--json", "--target-key", "cpu"])
        return [(r["slots"][0], r["task_name"], r["mean_cost"]) for r in json.loads(result.stdout)]

    runner.invoke(app, ["--db", db, "import", str(log)])
    autotvm_alone = rows()
    assert autotvm_alone == [("cpu", "conv2d_NCHWc.x86", 3e-5)]
    database = _database(tmp_path / "ms", [MODULE_A], [_record(0, [2e-5])])
    runner.invoke(app, ["--db", db, "import", str(database)])
    assert rows() == [*autotvm_alone, ("*", "metaschedule", 2e-5)]


def test_a_grown_records_file_read_again_keeps_its_records_place_among_ties(
    tmp_path: Path,
) -> None:
    """Read in full again, it is another source, the earlier read kept: a version that
    replaced the earlier read replayed its records after a later database's, and a tie went
    to the later one (TVM keeps the earlier record)."""
    a = _database(tmp_path / "a", [MODULE_A], [_record(0, [0.003])])
    b = _database(
        tmp_path / "b",
        [MODULE_A],
        [_record(0, [0.003], trace=[[["GetSBlock", [], ["D", "main"], ["b0"]]], []])],
    )
    db = str(tmp_path / "ms.db")

    def best_source() -> str:
        (row,) = json.loads(runner.invoke(app, ["--db", db, "best", "--json"]).stdout)
        return str(Path(row["source"]).parent.name)

    runner.invoke(app, ["--db", db, "import", str(a)])
    runner.invoke(app, ["--db", db, "import", str(b)])
    assert best_source() == "a"
    with (a / "database_tuning_record.json").open("a") as file:
        file.write(_record(0, [0.005]) + "\n")
    runner.invoke(app, ["--db", db, "import", str(a)])
    assert best_source() == "a"
    sources = json.loads(runner.invoke(app, ["--db", db, "sources", "--json"]).stdout)
    assert [s["lines"] for s in sources] == [1, 1, 2]
