"""Hostile MetaSchedule databases: every line accounted for, no traceback, no hang.

Each case is a real database (tests/data/metaschedule_real/two_targets, tuned by apache-tvm)
with one thing changed, as a fuzzer over 180k mutated lines found them: values in a module
graph tunelog's summary could not take (an Infinity int, 64-bit-plus extents, a chain of
subexpressions each used twice), a record nested past the nesting limit, a target with an empty
kind, trace decisions that are no list, run times whose mean overflows.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import DATA, runner
from tunelog import mssummary
from tunelog.cli import app
from tunelog.store import Store

BASE = DATA / "metaschedule_real" / "two_targets"
WORKLOADS, RECORDS = "database_workload.json", "database_tuning_record.json"


def _graph(line: str) -> dict[str, Any]:
    raw = base64.b64decode(json.loads(line)[1])
    return dict(json.loads(raw[8:]))


def _line(stored_hash: str, graph: dict[str, Any]) -> str:
    body = json.dumps(graph).encode()  # Infinity and NaN as Python's json writes them
    text = base64.b64encode(len(body).to_bytes(8, "little") + body).decode()
    return json.dumps([stored_hash, text])


def _edit_graph(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(directory: Path) -> None:
        path = directory / WORKLOADS
        lines = path.read_text().splitlines()
        graph = _graph(lines[0])
        edit(graph)
        lines[0] = _line(json.loads(lines[0])[0], graph)
        path.write_text("\n".join(lines) + "\n")

    return apply


def _edit_record(edit: Callable[[list[Any]], None], line: int = 0) -> Callable[[Path], None]:
    def apply(directory: Path) -> None:
        path = directory / RECORDS
        lines = path.read_text().splitlines()
        record = json.loads(lines[line])
        edit(record)
        lines[line] = json.dumps(record, separators=(",", ":"))
        path.write_text("\n".join(lines) + "\n")

    return apply


def _ints(graph: dict[str, Any], value: Any) -> None:
    """Every `int` node holding 64 (the matmul's extents and shapes) set to `value`."""
    for node in graph["nodes"]:
        if node.get("type") == "int" and node.get("data") == 64:
            node["data"] = value


def _twice_used_chain(graph: dict[str, Any]) -> None:
    """40 Add nodes, each using the next one as both operands, stored by a BufferStore."""
    nodes = graph["nodes"]
    store = next(n for n in nodes if str(n.get("type", "")).endswith("BufferStore"))
    first = len(nodes)
    for k in range(40):
        following = first + k + 1 if k < 39 else store["data"]["value"]
        nodes.append({"type": "tirx.Add", "data": {"a": following, "b": following, "span": 0}})
    store["data"]["value"] = first


def _deep(record: list[Any]) -> None:
    value: Any = 0
    for _ in range(300):
        value = [value]
    record[1][0][1] = value


def _set(path: tuple[int, ...], value: Any) -> Callable[[list[Any]], None]:
    def edit(record: list[Any]) -> None:
        node: Any = record
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value

    return edit


CASES: dict[str, tuple[Callable[[Path], None], str | None]] = {
    "an int node of Infinity": (_edit_graph(lambda g: _ints(g, float("inf"))), None),
    "extents past 64 bits of FLOPs": (_edit_graph(lambda g: _ints(g, 1 << 21)), None),
    "a 1e300 extent": (_edit_graph(lambda g: _ints(g, 1e300)), None),
    "a chain of subexpressions used twice": (_edit_graph(_twice_used_chain), None),
    "a root that is no node": (
        _edit_graph(lambda g: g.update(root_index=-1)),
        "workload line 1 unreadable (module graph's root is no node index)",
    ),
    "a trace nested 300 deep": (
        _edit_record(_deep),
        "its trace nests too deep to read (254 levels)",
    ),
    "a target of an empty kind": (
        _edit_record(_set((1, 2), {"kind": ""})),
        "its target cannot be read (empty target string)",
    ),
    "trace decisions that are a number": (_edit_record(_set((1, 0, 1), 7)), None),
    "run times whose mean overflows": (_edit_record(_set((1, 1), [1e308, 1e308])), None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_database_imports_line_by_line_and_every_command_works(
    tmp_path: Path, case: str
) -> None:
    directory = tmp_path / "db"
    shutil.copytree(BASE, directory)
    edit, reason = CASES[case]
    edit(directory)
    with Store(tmp_path / "ms.db") as store:
        (report,) = tunelog.import_paths(store, [str(directory)])
    assert report.accounted and report.lines == 24
    assert {r.reason for r in report.rejects} == (
        set() if reason is None else {f"MetaSchedule record: {reason}"}
    )
    db = str(tmp_path / "ms.db")
    for command in (
        ["best"],
        ["workloads"],
        ["workloads", "--json"],
        ["untuned"],
        ["errors"],
        ["knobs", "main: 64x64"],
        ["report", str(tmp_path / "r.html")],
        ["export-metaschedule", str(tmp_path / "out")],
    ):
        result = runner.invoke(app, ["--db", db, *command])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            command,
            result.exception,
        )
        assert "Traceback" not in result.stderr


def test_each_subexpression_is_counted_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A chain of 40 nodes each using the next twice: the FLOPs count visited 2^40 nodes (22
    nodes took 16 s; found by a fuzzer). Each node's count is computed once."""
    counted: list[Any] = []
    real = mssummary._expr_flops_of

    def counting(nodes: Any, index: Any, depth: int) -> float:
        counted.append(index)
        return real(nodes, index, depth)

    monkeypatch.setattr(mssummary, "_expr_flops_of", counting)
    directory = tmp_path / "db"
    shutil.copytree(BASE, directory)
    _edit_graph(_twice_used_chain)(directory)
    from tunelog.metaschedule import read_workloads

    read_workloads(directory / WORKLOADS)
    assert len(counted) == len(set(counted)) < 400
