"""`diagnose`, `tasks`: a build's output and task lists against the database."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tunelog import optionvalues
from tunelog.cli.app import app, example
from tunelog.cli.cells import display_path, format_seconds
from tunelog.cli.emitters import emit_json, emit_table
from tunelog.cli.notes import WARNINGS_SHOWN
from tunelog.cli.options import (
    JsonOption,
)
from tunelog.cli.output import _err, echo_lines
from tunelog.cli.running import checked, handles_errors, opened_store
from tunelog.tables import Column

if TYPE_CHECKING:
    from tunelog.diagnoses import Diagnosis
    from tunelog.tasklist import TaskProgress


@app.command(epilog=example("tunelog diagnose build_output.txt --check"))
@handles_errors
def diagnose(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE|-",
            help="TVM's console output (or a task list, JSON); - or nothing for stdin.",
        ),
    ] = "-",
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            "--for-target",
            metavar="TARGET",
            help="The target a task list is compiled for (console output names its own).",
            callback=checked(optionvalues.target_string),
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option("--check", help="Exit 1 when a workload is not answered (for scripts, CI)."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Why each operator TVM reported untuned is not answered by the database.

    Reads relay's "Cannot find tuning records for" (DEBUG), the fallback context's "Cannot
    find config for", apply_graph_best's "... is missing in ApplyGraphBest context" and
    auto_scheduler's "Cannot find tuned schedules for" messages, or a task list; one reason
    per (target, workload): no_record (with the nearest tuned layers), other_target,
    all_failed, v01_only, not_offered, packed (the NCHW[x]c form of another layer),
    not_in_graph (tuned, but not in the graph tuner's output) or answered (the build read
    another file).
    """
    from tunelog import api
    from tunelog.exceptions import NotBuildOutputError, TargetRequiredError

    text = _read_text(file, "a build's output (text)")
    with opened_store() as store:
        try:
            report = api.diagnose_untuned(store, text, target=target, show_path=display_path)
        except NotBuildOutputError as exc:  # named with the file given
            raise NotBuildOutputError(f"{display_path(file)}: {exc}") from None
        except TargetRequiredError as exc:  # a usage error, as `tasks` makes it
            raise typer.BadParameter(str(exc), param_hint="--target") from None
    for unread in report.unread[:WARNINGS_SHOWN]:
        _err(f"warning: {display_path(file)}:{unread.line}: message not read: {unread.reason}")
    from tunelog.tasklists import looks_like_task_list

    empty = _EMPTY_TASKS if looks_like_task_list(text) else _NO_MESSAGE
    if as_json:
        emit_json([d.as_dict() for d in report.diagnoses], empty=empty)
    else:
        _print_diagnoses(report.diagnoses, empty=empty)
    if check and (report.unanswered or report.unread):  # an unread message is one TVM said
        raise typer.Exit(1)


_EMPTY_TASKS = "the task list is empty"
_NO_MESSAGE = (
    "no 'Cannot find tuning records', 'Cannot find config', 'missing in ApplyGraphBest "
    "context' or 'Cannot find tuned schedules' message found"
)


def _print_diagnoses(found: Sequence[Diagnosis], *, empty: str) -> None:
    """The diagnoses as a table (`empty`: the note when there is none), then their verdict."""
    from tunelog.diagnosereport import verdict
    from tunelog.layoutforms import workload_text

    several = len({d.target for d in found}) > 1
    rows = []
    for d in found:
        row = [d.line or "", d.target] if several else [d.line or ""]
        rows.append([*row, d.reason, workload_text(d.workload), d.detail])
    headers = ["line", "target"] if several else ["line"]
    emit_table(
        rows,
        [*headers, "reason", "workload", "detail"],
        empty=empty,
    )
    if found:
        echo_lines(["", verdict(found)])


@app.command(epilog=example("tunelog tasks tasks.json --target 'llvm -mcpu=core-avx2'"))
@handles_errors
def tasks(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE|-", help="A task list: JSON [[task_name, *args], ...]; - for stdin."
        ),
    ],
    target: Annotated[
        str,
        typer.Option(
            "--target",
            "--for-target",
            metavar="TARGET",
            help="The target the tasks are tuned for (its keys and -model pick the records).",
            callback=checked(optionvalues.target_string),
        ),
    ],
    need_trials: Annotated[
        int | None,
        typer.Option(
            "--need-trials",
            min=1,
            metavar="N",
            help="Only the tasks with fewer than N valid trials (what is left to tune).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Trials already done per task of a task list, and each task's convergence (resume tuning)."""
    from tunelog import api
    from tunelog.exceptions import NotATaskListError
    from tunelog.layoutforms import workload_text

    text = _read_text(file, "a task list (JSON)")
    with opened_store() as store:
        try:
            found = api.tuning_progress(store, text, target, need_trials=need_trials)
        except NotATaskListError as exc:  # which file, since the error cannot know
            raise NotATaskListError(f"{display_path(file)}: {exc}") from None
    empty = "every task has enough valid trials" if need_trials is not None else _EMPTY_TASKS
    _warn_unloadable_answers(found)
    if as_json:
        emit_json([task.as_dict() for task in found], empty=empty)
        return
    emit_table(
        [
            (
                task.index,
                workload_text(task.workload),
                task.convergence.trials,
                task.convergence.valid,
                task.failed,
                format_seconds(task.convergence.best_cost)
                if task.convergence.best_cost is not None
                else "",
                task.convergence.verdict,
                _answer_text(task),
            )
            for task in found
        ],
        (
            Column("index"),
            Column("task"),
            Column("trials", rank=1),
            Column("valid"),
            Column("failed", rank=2),
            Column("best"),
            Column("verdict"),
            Column("TVM uses", rank=1),
        ),
        empty=empty,
    )


def _warn_unloadable_answers(found: Sequence[TaskProgress]) -> None:
    """One stderr line for the answers whose record TVM >= 0.10 cannot load (its target has
    an option it rejects): such a TVM loads nothing of a file holding one."""
    from tunelog.targets import parse_target

    targets = {t.answer.target for t in found if t.answer is not None}
    unloadable = sorted(t for t in targets if parse_target(t).load_problems)
    if unloadable:
        count = sum(1 for t in found if t.answer is not None and t.answer.target in unloadable)
        fixable = all(parse_target(t).fixed_by_dropping_options for t in unloadable)
        _err(
            f"warning: {count} answer(s) are records TVM >= 0.10 cannot load (target "
            f"{', '.join(repr(t) for t in unloadable[:2])}{', ...' if len(unloadable) > 2 else ''}"
            "), and it then loads nothing of their file: "
            + (
                "export with --fix-targets and build with that"
                if fixable
                else "re-tune on a target string TVM reads, or leave them out (--target-key)"
            )
        )


def _answer_text(task: TaskProgress) -> str:
    """What apply_history_best answers the task with for the asked target: the record's mean,
    and where it was measured when that is another machine (its trials are not the task's)."""
    answer = task.answer
    if answer is None and task.layer_answer is not None:
        name, other = task.layer_answer
        return f"{name} ({format_seconds(other.mean_cost)}): relay picks it for this layer"
    if answer is None:
        return "fallback config"
    text = format_seconds(answer.mean_cost)
    if task.answer_warning is not None:
        text += f" measured on {answer.target!r} ({Path(answer.source).name}:{answer.line})"
    return text


def _read_text(file: str, what: str) -> str:
    """The text of FILE (stdin for `-`); InputNotFoundError saying what it should be."""
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text(errors="replace")
    except OSError as exc:
        from tunelog.exceptions import InputNotFoundError

        raise InputNotFoundError(
            f"cannot read {display_path(file)}: {exc.strerror or exc}; give the path of {what}, "
            "or - for standard input"
        ) from None
