"""What a real apache-tvm JSONDatabase answers (needs apache-tvm; imported only by its users).

A record is named by its line number in the database's record file; TVM's answer for a workload
is the list of line numbers `get_top_k` returns, best first, and what `query_tuning_record` returns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Two CPU targets as JSON dicts (target strings parse differently across TVM versions).
TVM_TARGETS: tuple[dict[str, Any], dict[str, Any]] = (
    {"kind": "llvm", "mcpu": "core-avx2", "num-cores": 2},
    {"kind": "llvm", "mcpu": "skylake-avx512", "num-cores": 2},
)
TOP_K = 5


def load(directory: Path) -> Any:
    """The real JSONDatabase of DIRECTORY (default file names)."""
    from tvm.s_tir import meta_schedule as ms

    return ms.database.JSONDatabase(
        path_workload=str(directory / "database_workload.json"),
        path_tuning_record=str(directory / "database_tuning_record.json"),
        allow_missing=False,
    )


def modules(directory: Path) -> list[Any]:
    """The IRModule of each line of DIRECTORY's workload file."""
    from tvm.s_tir import meta_schedule as ms

    lines = (directory / "database_workload.json").read_text().splitlines()
    return [ms.database.Workload.from_json(json.loads(line)).mod for line in lines]


def _run_secs(value: Any) -> tuple[float, ...]:
    return tuple(float(x) for x in value or [])


def _line_numbers(directory: Path) -> dict[tuple[float, ...], int]:
    """Each valid-looking record's run_secs -> its line number.

    TVM re-encodes a trace it returns (booleans for integers, ...), so records are named by
    their measured times, which its JSON round-trips exactly; times must be unique.
    """
    found: dict[tuple[float, ...], int] = {}
    lines = (directory / "database_tuning_record.json").read_text().splitlines()
    for number, line in enumerate(lines):
        run_secs = _run_secs(json.loads(line)[1][1])
        if run_secs and all(x != 1e10 for x in run_secs):
            assert run_secs not in found, f"two records measured {run_secs}: name them apart"
            found[run_secs] = number
    return found


def _number(record: Any, numbers: dict[tuple[float, ...], int]) -> int:
    return numbers[_run_secs(record.run_secs)]


def answers_of(directory: Path, queried: Path | None = None) -> list[dict[str, Any]]:
    """TVM's answers, per workload line of QUERIED (default DIRECTORY), from DIRECTORY's database.

    Each answer: `top` (get_top_k with k = TOP_K, as record line numbers of DIRECTORY) and `query`
    (query_tuning_record's line number, or None).
    """
    import tvm

    database = load(directory)
    numbers = _line_numbers(directory)
    target = tvm.target.Target(TVM_TARGETS[0])
    answers = []
    for module in modules(queried or directory):
        top: list[int] = []
        query: int | None = None
        if database.has_workload(module):
            workload = database.commit_workload(module)
            top = [_number(r, numbers) for r in database.get_top_k(workload, TOP_K)]
            record = database.query_tuning_record(module, target, "main")
            query = None if record is None else _number(record, numbers)
        answers.append({"top": top, "query": query})
    return answers
