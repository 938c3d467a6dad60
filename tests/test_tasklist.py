"""tasks (resume tuning): trials done per task of a task list, and what is left to tune."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, REPO, require_shared, runner
from tunelog import api
from tunelog.cli import app
from tunelog.store import Store
from tunelog.tvmmessages import Workload, as_json_list

FIXTURES = DATA / "diagnose"
X86 = "llvm -mcpu=core-avx2"
_KEY = re.compile(r"key=(\(.*\))$")


def resnet18_tasks() -> list[Workload]:
    """The task list of resnet-18 at 224: the unpacked workloads an untuned build printed."""
    found: list[Workload] = []
    for line in (FIXTURES / "empty224.txt").read_text().splitlines():
        match = _KEY.search(line)
        if match:
            workload = ast.literal_eval(match.group(1))
            if "NCHW" in workload or len(workload[2][1]) == 2:
                found.append(workload)
    return found


def test_trials_done_per_task_follow_the_log(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(FIXTURES / "partial224.log")])
        found = api.tuning_progress(store, resnet18_tasks(), X86)
        left = api.tuning_progress(store, resnet18_tasks(), X86, need_trials=2)
    counts = [(t.convergence.trials, t.convergence.valid, t.failed) for t in found]
    tuned, failed, none = (3, 3, 0), (4, 0, 4), (0, 0, 0)
    assert counts[:7] == [tuned, tuned, tuned, none, none, failed, none]
    assert counts[7:] == [tuned, none, failed, none, tuned, none]  # the dense layer last
    assert [t.index for t in left] == [3, 4, 5, 6, 8, 9, 10, 12]
    verdicts = [t.convergence.verdict for t in found]
    said = {none: "not tuned", failed: "every trial failed", tuned: "too few valid trials"}
    assert verdicts == [said[c] for c in counts]


def test_tasks_of_another_target_group_have_no_trials(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(FIXTURES / "full224.log")])
        found = api.tuning_progress(store, resnet18_tasks(), "cuda -model=t4")
    assert {t.convergence.trials for t in found} == {0}


def test_a_task_tuned_only_on_another_model_shows_the_record_tvm_answers_it_with(
    tmp_path: Path,
) -> None:
    # A build for plain `cuda` asks the cuda and gpu key slots, which the t4 records hold: the
    # task has no trials of its own (what a tuning script asks), but it is not a fallback.
    log = FIXTURES / "cuda_only.log"
    tasks = [(r["input"][1], *r["input"][2]) for r in map(json.loads, log.open())]
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(log)])
        own = api.tuning_progress(store, tasks, "cuda -model=t4")
        other = api.tuning_progress(store, tasks, "cuda")
        ansor = api.tuning_progress(store, tasks, "llvm")
    assert len(own) == len(tasks) >= 5
    assert all(t.answer is not None and t.answer.mean_cost == t.convergence.best_cost for t in own)
    assert all(t.answer_warning is None for t in own)
    assert [t.answer for t in other] == [t.answer for t in own]
    assert {t.convergence.verdict for t in other} == {"not tuned"}
    assert all("measured on" in (t.answer_warning or "") for t in other)
    assert {t.answer for t in ansor} == {None}
    db = str(tmp_path / "t.db")
    (tasks_file := tmp_path / "tasks.json").write_text(json.dumps(tasks))
    result = runner.invoke(app, ["--db", db, "tasks", str(tasks_file), "--target", "cuda"])
    row = result.stdout.splitlines()[2]
    assert row.endswith(
        "not tuned  50.0 us measured on 'cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 "
        "-model=t4 -thread_warp_size=32' (cuda_only.log:1)"
    )
    result = runner.invoke(
        app, ["--db", db, "tasks", str(tasks_file), "--target", "cuda", "--json"]
    )
    answer = json.loads(result.stdout)[0]["answer"]
    assert answer["line"] == 1 and answer["warnings"][0].startswith("answer for 'cuda' was")


@pytest.mark.parametrize(
    "log",
    [
        "sample_logs/x86_mini_llvm.log",
        "../shared/corpus/WANNA959__tvm_learning/resnet50-v2-7-autotuner_records.json",
    ],
)
def test_task_counts_and_verdicts_agree_with_workloads(tmp_path: Path, log: str) -> None:
    """On real logs, each template's row of `workloads` and its task agree."""
    if log.startswith("../shared"):
        require_shared()
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(REPO / log)])
        found = api.layers(store)
        convergence = api.layer_convergence(store, found)
        tasks = [
            (t.workload.task_name, *(json.loads(json.dumps(a)) for a in t.workload.args))
            for layer in found
            for t in layer.templates
        ]
        tasks = [tuple(_tuples(part) for part in task) for task in tasks]
        target = found[0].group.targets[0]
        progress = api.tuning_progress(store, tasks, target)
    expected = [
        (t.trials, t.valid, convergence.of(layer, t).verdict)
        for layer in found
        for t in layer.templates
    ]
    got = [(p.convergence.trials, p.convergence.valid, p.convergence.verdict) for p in progress]
    assert got == expected and len(got) >= 5


def _tuples(value: object) -> object:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def test_tasks_command_prints_what_is_left_as_json_for_a_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    db = str(tmp_path / "cli.db")
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([as_json_list(t) for t in resnet18_tasks()]))
    runner.invoke(app, ["--db", db, "import", str(FIXTURES / "partial224.log")])
    args = ["--db", db, "tasks", str(tasks), "--target", X86, "--need-trials", "3", "--json"]
    result = runner.invoke(app, args)
    entries = json.loads(result.stdout)
    assert result.exit_code == 0
    assert [e["index"] for e in entries] == [3, 4, 5, 6, 8, 9, 10, 12]
    assert entries[2] == {
        "index": 5,
        "task": as_json_list(resnet18_tasks()[5]),
        "trials": 4,
        "valid": 0,
        "failed": 4,
        "best_cost": None,
        "trials_to_best": None,
        "verdict": "every trial failed",
        "answer": None,
        "layer_answered_by": None,
    }
    result = runner.invoke(app, ["--db", db, "tasks", str(tasks), "--target", X86])
    assert result.stdout.splitlines()[:4] == [
        "index    task                                              trials    valid    failed    best      verdict               TVM uses",
        "-------  ------------------------------------------------  --------  -------  --------  --------  --------------------  ---------------",
        "0        conv2d_NCHWc.x86 1x3x224x224 * 64x3x7x7 s2 p3     3         3        0         100.0 us  too few valid trials  100.0 us",
        "1        conv2d_NCHWc.x86 1x64x56x56 * 64x64x3x3 s1 p1     3         3        0         100.0 us  too few valid trials  100.0 us",
    ]
    assert "fallback config" in result.stdout.splitlines()[5]


@pytest.mark.parametrize(
    ("command", "name", "text", "error"),
    [
        ("tasks", "nope.json", None, "Error: cannot read nope.json: No such file or directory; "
         "give the path of a task list (JSON), or - for standard input\n"),
        ("tasks", "notes.md", "# notes\n", "Error: notes.md: not JSON (Expecting value: line 1 "
         "column 1 (char 0)): a task list is a JSON array of [task_name, *args] arrays\n"),
        ("diagnose", "nope.txt", None, "Error: cannot read nope.txt: No such file or directory; "
         "give the path of a build's output (text), or - for standard input\n"),
    ],
)  # fmt: skip
def test_a_file_that_is_no_task_list_or_build_output_is_named_in_its_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    name: str,
    text: str | None,
    error: str,
) -> None:
    """The errors used to be 'No such file or directory: nope.json' and 'not JSON: Expecting
    value ...' (no file name, nothing to do)."""
    monkeypatch.chdir(tmp_path)
    if text is not None:
        Path(name).write_text(text)
    db = str(tmp_path / "t.db")
    assert runner.invoke(app, ["--db", db, "import", str(REPO / "sample_logs")]).exit_code == 0
    result = runner.invoke(app, ["--db", db, command, name, "--target", X86])
    assert (result.exit_code, result.stderr) == (1, error)


def test_a_task_whose_layer_relay_answers_with_another_template_says_which(
    tmp_path: Path,
) -> None:
    """dense_pack.x86 untuned beside a tuned dense_nopack.x86: relay picks dense_nopack, so
    the task's fallback config is never used; `tasks` said "fallback config" where `diagnose`
    says the layer is answered (found by a new user, checked against relay's choice)."""
    from tests.conftest import SAMPLE_LOGS

    log = tmp_path / "nopack.log"
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines(keepends=True)
    log.write_text("".join(line for line in lines if '"dense_pack.x86"' not in line))
    record = json.loads(next(line for line in lines if '"dense_nopack.x86"' in line))
    target, _, args, _ = record["input"]
    tasks = [["dense_pack.x86", *args], ["dense_nopack.x86", *args]]
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(log)])
        pack, nopack = api.tuning_progress(store, json.dumps(tasks), target)
    assert nopack.answer is not None and nopack.layer_answer is None
    assert pack.answer is None and pack.layer_answer == ("dense_nopack.x86", nopack.answer)
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    result = runner.invoke(
        app,
        ["--db", str(tmp_path / "t.db"), "tasks", str(tmp_path / "tasks.json"), "--target", target],
    )
    assert result.exit_code == 0, result.stderr
    (pack_row,) = [row for row in result.stdout.splitlines() if row.startswith("0 ")]
    assert pack_row.endswith(": relay picks it for this layer")
    assert "dense_nopack.x86 (" in pack_row
    as_json = runner.invoke(
        app,
        [
            "--db",
            str(tmp_path / "t.db"),
            "tasks",
            str(tmp_path / "tasks.json"),
            "--target",
            target,
            "--json",
        ],
    )
    answered_by = json.loads(as_json.stdout)[0]["layer_answered_by"]
    assert answered_by["template"] == "dense_nopack.x86"
    assert answered_by["config_index"] == nopack.answer.config_index


def test_an_answer_tvm_cannot_load_is_warned_of(tmp_path: Path) -> None:
    """A record whose target has -link-params=0 answered the task without a word, though TVM
    0.16's apply_history_best loads nothing of a file holding it (ValueError)."""
    from tests.conftest import SAMPLE_LOGS

    line = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[0]
    record = json.loads(line)
    target = record["input"][0]
    record["input"][0] = target + " -link-params=0"
    (tmp_path / "lp.log").write_text(json.dumps(record) + "\n")
    task = [record["input"][1], *record["input"][2]]
    (tmp_path / "tasks.json").write_text(json.dumps([task]))
    db = str(tmp_path / "t.db")
    runner.invoke(app, ["--db", db, "import", str(tmp_path / "lp.log")])
    args = ["--db", db, "tasks", str(tmp_path / "tasks.json"), "--target", target]
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    assert result.stderr.startswith(
        "warning: 1 answer(s) are records TVM >= 0.10 cannot load (target "
        f"'{target} -link-params=0'), and it then loads nothing of their file: export with "
        "--fix-targets and build with that"
    )
    (entry,) = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert "cannot be loaded by TVM >= 0.10" in entry["answer"]["warnings"][-1]


def _reprs(tasks: list[Workload]) -> str:
    """Tasks as Python prints them (`print(tasks)` of extract_from_program's list)."""
    return "\n".join(
        f"Task(func_name={t[0]}, args={t[1:]!r}, kwargs={{}}, workload={t!r})" for t in tasks
    )


@pytest.mark.parametrize(
    "written",
    [
        lambda tasks: json.dumps([as_json_list(t) for t in tasks]),
        # `[[t.name, t.args] for t in tasks]`: read as every task untuned, without a word
        lambda tasks: json.dumps([[t[0], as_json_list(t[1:])] for t in tasks]),
        _reprs,  # `tasks` refused them as "not JSON"; `diagnose --check` found no message
    ],
    ids=["[name, *args]", "[name, args]", "printed tasks"],
)
def test_task_lists_written_each_way_give_the_same_answers(tmp_path: Path, written: Any) -> None:
    tasks = resnet18_tasks()
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(FIXTURES / "partial224.log")])
        expected = api.tuning_progress(store, tasks, X86)
        found = api.tuning_progress(store, written(tasks), X86)
        diagnosed = api.diagnose_untuned(store, written(tasks), target=X86)
    assert [(t.workload, t.convergence, t.answer) for t in found] == [
        (t.workload, t.convergence, t.answer) for t in expected
    ]
    assert [d.workload for d in diagnosed.diagnoses] == tasks


def test_a_tuning_log_given_as_a_task_list_says_what_it_is(tmp_path: Path) -> None:
    from tunelog.exceptions import NotATaskListError

    with Store(tmp_path / "t.db") as store, pytest.raises(NotATaskListError) as raised:
        api.tuning_progress(store, (FIXTURES / "partial224.log").read_text(), X86)
    assert str(raised.value) == (
        "it holds JSON records (a tuning log? import it with `tunelog import`); tasks reads a "
        "task list: a JSON array of [task_name, *args] arrays, or the tasks as Python prints "
        "them"
    )


_DENSE = [["TENSOR", [1, 512], "float32"], ["TENSOR", [1000, 512], "float32"], None, "float32"]


def _dense_line(task: str, index: int, cost: float) -> str:
    record = {
        "input": ["llvm", task, _DENSE, {}],
        "config": {"index": index, "code_hash": None, "entity": []},
        "result": [[cost], 0, 1.0, 1700000000],
        "version": 0.2,
        "tvm_version": "0.16.0",
    }
    return json.dumps(record) + "\n"


@pytest.mark.parametrize(
    ("target", "picked"),
    [
        ("llvm -mcpu=core-avx2", "dense_nopack.x86"),  # dense_cblas is offered with cblas only
        ("llvm -libs=cblas", "dense_cblas.x86"),  # the faster, which relay compares
    ],
)
def test_tasks_and_diagnose_name_the_template_relay_picks_for_the_layer(
    tmp_path: Path, target: str, picked: str
) -> None:
    """Both said another template answers an untuned dense_pack.x86, by two rules: tasks the
    fastest (also one relay offers only with -libs=cblas, to a target without it), diagnose
    the first in id order (found by a review)."""
    log = tmp_path / "dense.log"
    log.write_text(
        _dense_line("dense_nopack.x86", 1, 9e-5) + _dense_line("dense_cblas.x86", 2, 1e-5)
    )
    message = (
        f"Cannot find tuning records for:\n    target={target}\n    key=('dense_pack.x86', "
        "('TENSOR', (1, 512), 'float32'), ('TENSOR', (1000, 512), 'float32'), None, 'float32')\n"
    )
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(log)])
        (task,) = api.tuning_progress(store, json.dumps([["dense_pack.x86", *_DENSE]]), target)
        (diagnosed,) = api.diagnose_untuned(store, message).diagnoses
    assert task.layer_answer is not None and task.layer_answer[0] == picked
    assert diagnosed.reason == "answered"
    assert f"answers it through {picked} (same layer)" in diagnosed.detail


def test_a_layer_answered_only_by_a_template_relay_does_not_offer_the_target_is_a_fallback(
    tmp_path: Path,
) -> None:
    log = tmp_path / "cblas.log"
    log.write_text(_dense_line("dense_cblas.x86", 2, 1e-5))
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(log)])
        tasks = json.dumps([["dense_pack.x86", *_DENSE]])
        (plain,) = api.tuning_progress(store, tasks, "llvm -mcpu=core-avx2")
        (cblas,) = api.tuning_progress(store, tasks, "llvm -libs=cblas")
    assert plain.layer_answer is None
    assert cblas.layer_answer is not None and cblas.layer_answer[0] == "dense_cblas.x86"
