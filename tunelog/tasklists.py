"""Task lists: the workloads a tuning script extracted, given to `tasks` and `diagnose`
without a target (the caller supplies it), and what a text given to them is otherwise.

Pure. A task list is `[[task_name, *args], ...]` JSON, as users dump `extract_from_program`'s
tasks; `[[task_name, [args]], ...]` too (`[t.name, t.args]`), and the tasks as Python prints
them (`Task(func_name=..., workload=(...))`). Lists are read as tuples (the key AutoTVM writes
and reads: `tvmmessages.workload_key`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tunelog.exceptions import NotATaskListError
from tunelog.rules.nesting import MAX_NESTING, TOO_DEEP_REASON, nests_deeper_than
from tunelog.tvmmessages import (
    ANSOR_MARK,
    CONFIG_MARK,
    GRAPH_MARK,
    RECORDS_MARK,
    Workload,
    as_tuple,
    normalise_text,
    read_messages,
    read_workload,
)


def read_task_list(text: str) -> list[Workload]:
    """Workloads of a task list: a JSON array of `[task_name, *args]` arrays, lists as tuples.

    Raises NotATaskListError for JSON that is not such a list.
    """
    if nests_deeper_than(text.encode("utf-8", "surrogateescape"), MAX_NESTING):
        raise NotATaskListError(f"a task list whose {TOO_DEEP_REASON}")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise NotATaskListError(
            f"not JSON ({exc}): a task list is a JSON array of [task_name, *args] arrays"
        ) from None
    if not isinstance(value, list):
        raise NotATaskListError("a task list is a JSON array of [task_name, *args] arrays")
    workloads: list[Workload] = []
    for index, item in enumerate(value):
        if not isinstance(item, list) or not item or not isinstance(item[0], str):
            raise NotATaskListError(f"item {index} is not a [task_name, *args] array")
        if _args_in_one_list(item):  # `[[t.name, t.args] for t in tasks]`: the same tasks
            item = [item[0], *item[1]]
        workloads.append(tuple(as_tuple(part) for part in item))
    return workloads


def _args_in_one_list(item: list[Any]) -> bool:
    """`[task_name, [arg, ...]]`, as `[t.name, t.args]` writes a task: its arguments in one
    list whose first is a tensor (`["TENSOR", shape, dtype]`). A template's own first argument
    is that tensor itself, never a list of them: the two spellings cannot be confused."""
    return (
        len(item) == 2
        and isinstance(item[1], list)
        and bool(item[1])
        and isinstance(item[1][0], list)
        and item[1][0][:1] == ["TENSOR"]
    )


_TASK_REPR = "Task(func_name="
_TASK_WORKLOAD = "workload=("


def only_task_reprs(text: str) -> bool:
    """Every line that says something is a task as Python prints it."""
    return all(_TASK_REPR in line for line in text.splitlines() if line.strip())


def read_task_reprs(text: str) -> list[Workload]:
    """The workloads of tasks as Python prints them (`print(tasks)` after
    `extract_from_program`: `Task(func_name=..., args=..., kwargs=..., workload=(...))`), in
    order; none when the text holds no such task."""
    found: list[Workload] = []
    failed = 0
    for line in text.splitlines():
        line = normalise_text(line)
        at = line.find(_TASK_REPR)
        while at >= 0:
            start = line.find(_TASK_WORKLOAD, at)
            if start < 0:
                break
            workload = read_workload(line[start + len(_TASK_WORKLOAD) - 1 :])
            if not isinstance(workload, str):
                found.append(workload)
            else:
                failed += 1
                if failed > _MAX_FAILED_REPRS:  # junk: each try scans up to _MAX_TUPLE
                    return found
            at = line.find(_TASK_REPR, start)
    return found


# `Task(` reprs whose workload cannot be read before the text is taken for no task list: a
# print of tasks has none, and each costs a scan of up to 20,000 characters (20,000 of them on
# one line took 18 s).
_MAX_FAILED_REPRS = 100


def looks_like_task_list(text: str) -> bool:
    """The input is JSON (a task list), not console output: it starts with `[` and holds no
    message TVM prints for an untuned operator (a build's output may start with `[`: TVM's C++
    logger writes `[20:32:53] .../target_kind.cc:181: Warning: ...`)."""
    start = text.lstrip()
    return (
        start.startswith("[")
        and _CPP_LOG_LINE.match(start) is None
        and not any(mark in text for mark in (RECORDS_MARK, CONFIG_MARK, GRAPH_MARK, ANSOR_MARK))
    )


_CPP_LOG_LINE = re.compile(r"\[\d{1,2}:\d{2}:\d{2}\] ")  # TVM's C++ logger: `[20:32:53] file:line:`


_WHAT_DIAGNOSE_READS = (
    "diagnose reads the text a build printed (relay.build with DEBUG logging, or the "
    "fallback warnings), or a task list"
)


_WHAT_TASKS_READS = (
    "tasks reads a task list: a JSON array of [task_name, *args] arrays, or the tasks as "
    "Python prints them"
)


def wrong_input(text: str, reads: str = _WHAT_DIAGNOSE_READS) -> str | None:
    """What the input is when it is surely not a build's output or a task list (a database, a
    tuning log), and what to do (`reads`: what the command reads); else None (output without
    a message is diagnosed as such)."""
    if text.startswith("SQLite format 3"):
        return f"it is an SQLite database (a tunelog database is given as --db); {reads}"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first.startswith("{") and not read_messages(text.splitlines()).messages:
        return f"it holds JSON records (a tuning log? import it with `tunelog import`); {reads}"
    return None


def read_tasks(text: str) -> list[Workload]:
    """The workloads of a task list for `tasks`: JSON (`read_task_list`), or tasks as Python
    prints them (`read_task_reprs`). NotATaskListError saying what the text is otherwise (a
    tuning log was "not JSON (Extra data: line 2 ...)")."""
    refusal = wrong_input(text, _WHAT_TASKS_READS)
    if refusal is not None:
        raise NotATaskListError(refusal)
    if not text.lstrip().startswith("["):
        printed = read_task_reprs(text)
        if printed:
            return printed
    return read_task_list(text)
