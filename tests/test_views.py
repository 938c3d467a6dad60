"""The SQL views (schema 5) hold what the CLI's --json prints, for readers without tunelog."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, SAMPLE_LOGS, cli_import, cli_json, runner
from tunelog.cli import app
from tunelog.targets import parse_target

# Sample logs, and corpus logs with several targets per file, v0.1 records and failures.
CORPUS_LOGS = [
    "tophub/cuda_v0.08.log",
    "tophub/arm_cpu_v0.06.log",
    "tophub/_history/tophub__arm_cpu.log@56202ac.log",
]


def _inputs() -> list[Any]:
    cases: list[Any] = [pytest.param([str(SAMPLE_LOGS)], id="sample_logs")]
    for name in CORPUS_LOGS:
        marks = [] if (CORPUS / name).is_file() else [pytest.mark.skip(reason="no ../shared")]
        cases.append(pytest.param([str(CORPUS / name)], id=name, marks=marks))
    both = [str(SAMPLE_LOGS), *(str(CORPUS / n) for n in CORPUS_LOGS)]
    marks = [] if all((CORPUS / n).is_file() for n in CORPUS_LOGS) else [pytest.mark.skip("")]
    cases.append(pytest.param(both, id="overlapping", marks=marks))
    return cases


@pytest.fixture(params=_inputs())
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / "views.db"
    cli_import(path, *request.param)
    return path


def view(db: Path, name: str) -> list[dict[str, Any]]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in conn.execute(f"SELECT * FROM {name}")]
    finally:
        conn.close()


def test_best_configs_is_best_json(db: Path) -> None:
    expected = cli_json(db, "best")
    rows = view(db, "best_configs")
    for row in rows:
        row["slots"] = row["slots"].split(",")
        row["args"] = json.loads(row["args"])
    for item in expected:
        item.pop("knobs")
        item.pop("warnings")  # cross-machine warnings are Python's (tunelog.machines)
    assert rows == expected
    assert rows


def test_sources_summary_is_sources_json(db: Path, tmp_path: Path) -> None:
    # With a file --repair split (two records on a line): split and repaired are not 0.
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[:3]
    glued = tmp_path / "glued.log"
    glued.write_text(lines[0] + lines[1] + "\n" + lines[2] + "\n")
    cli_import(db, "--repair", str(glued))
    rows = view(db, "sources_summary")
    assert [(r["split"], r["repaired"]) for r in rows if r["path"] == str(glued)] == [(1, 2)]
    for row in rows:
        row["imports"] = json.loads(row["imports"])
    expected = cli_json(db, "sources")
    for item in expected:
        item.pop("shared")  # lines another source holds too: interval arithmetic, in Python
    assert rows == expected


def _group(target: str) -> tuple[tuple[str, ...], str]:
    parsed = parse_target(target)
    return parsed.keys, parsed.model


def test_layer_summary_counts_each_template_as_workloads_json(db: Path) -> None:
    # The view has one row per (target string, template workload); `workloads` groups the
    # targets by (keys, model) and the templates into layers: summed, the trials agree.
    summed: dict[tuple[Any, ...], list[int]] = {}
    for row in view(db, "layer_summary"):
        keys, model = _group(row["target"])
        key = (keys, model, row["task_name"], row["template_key"], row["args"])
        total = summed.setdefault(key, [0, 0, 0])
        for i, name in enumerate(("trials", "valid", "failed")):
            total[i] += row[name]
    expected: dict[tuple[Any, ...], list[int]] = {}
    for layer in cli_json(db, "workloads"):
        for t in layer["templates"]:
            if t["trials"]:  # a template answered by another target's record has no trial here
                key = (
                    tuple(layer["target_keys"]),
                    layer["model"],
                    t["template"],
                    t["template_key"],
                    json.dumps(t["args"], separators=(",", ":")),
                )
                expected[key] = [t["trials"], t["valid"], t["failed"]]
    assert {k: summed[k] for k in expected} == expected
    assert set(summed) == set(expected)


def test_layer_summary_best_cost_is_the_targets_own_best(db: Path) -> None:
    # Where one target string of a group tuned a template, the view's best cost is what
    # `workloads` shows, unless a faster record of another group holds the shared key slot.
    rows = view(db, "layer_summary")
    per_group: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        keys, model = _group(row["target"])
        key = (keys, model, row["task_name"], row["template_key"], row["args"])
        per_group.setdefault(key, []).append(row)
    checked = 0
    for layer in cli_json(db, "workloads"):
        for t in layer["templates"]:
            args = json.dumps(t["args"], separators=(",", ":"))
            found = per_group.get(
                (
                    tuple(layer["target_keys"]),
                    layer["model"],
                    t["template"],
                    t["template_key"],
                    args,
                ),
                [],
            )
            if len(found) == 1 and t["best_cost"] is not None:
                if found[0]["best_cost"] == t["best_cost"]:
                    assert found[0]["best_config"] == t["best_config"]
                else:  # answered by a faster record of another target sharing the key slot
                    assert t["best_cost"] < found[0]["best_cost"]
                checked += 1
    assert checked


def test_failures_sum_to_errors_json(db: Path) -> None:
    summed: dict[tuple[Any, ...], int] = {}
    for row in view(db, "failures"):
        keys, model = _group(row["target"])
        key = (keys, model, row["task_name"], row["error_name"])
        summed[key] = summed.get(key, 0) + row["records"]
    expected: dict[tuple[Any, ...], int] = {}
    for entry in cli_json(db, "errors"):
        for name, count in entry["errors"].items():
            key = (tuple(entry["target_keys"]), entry["model"], entry["template"], name)
            expected[key] = expected.get(key, 0) + count
    assert summed == expected


def test_failures_name_every_error_number(tmp_path: Path) -> None:
    log = tmp_path / "codes.log"
    line = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[0]
    record = json.loads(line)
    lines = []
    for number in (1, 6, 8, 42):
        record["result"][1] = number
        record["config"]["index"] = number
        lines.append(json.dumps(record))
    log.write_text("\n".join(lines) + "\n")
    db = tmp_path / "codes.db"
    assert runner.invoke(app, ["--db", str(db), "import", str(log)]).exit_code == 0
    names = sorted((r["error_no"], r["error_name"]) for r in view(db, "failures"))
    assert names == [
        (1, "INSTANTIATION_ERROR"),
        (6, "BUILD_TIMEOUT"),
        (8, "UNKNOWN_ERROR"),
        (42, "UNKNOWN(42)"),
    ]
