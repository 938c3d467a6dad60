"""auto_scheduler (Ansor) logs against a real auto_scheduler's verdicts (../shared/golden).

Each `*.ansor.json` golden holds, for every (target string, workload key) of an Ansor corpus
log, the mean cost ApplyHistoryBest answers with and the lines holding that answer (null when
it answers nothing). The export must make the same answer for every query, with one of those
lines, and the import must keep every record TVM can decode. Skipped when ../shared is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import (
    ImportedOnce,
    ansor_golden_files,
    corpus_log_for_ansor,
    golden_params,
    require_shared,
)
from tunelog.ansor import AnsorRecord
from tunelog.records import numpy_mean, parse_line
from tunelog.selection import HistoryBest, ansor_workload_json
from tunelog.store import Store


def _load(golden: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(golden.read_text())
    return data


def _history(lines: list[bytes], numbers: dict[bytes, set[int]]) -> HistoryBest[frozenset[int]]:
    """ApplyHistoryBest over `lines`, each holder known by the original line numbers."""
    history: HistoryBest[frozenset[int]] = HistoryBest()
    for raw in lines:
        record = parse_line(raw)
        assert isinstance(record, AnsorRecord), raw[:80]
        if record.error_no == 0:
            workload = ansor_workload_json(record.workload_key)
            ref = frozenset(numbers.get(raw, set()))
            history.add(record.target, workload, numpy_mean(record.costs), ref)
    return history


def _line_numbers(log: Path) -> dict[bytes, set[int]]:
    numbers: dict[bytes, set[int]] = {}
    for number, raw in enumerate(log.read_bytes().splitlines(), start=1):
        numbers.setdefault(raw, set()).add(number)
    return numbers


def _exported(store: Store, out: Path, filters: tunelog.Filters | None = None) -> list[bytes]:
    if not store.has_slot_winners(filters):
        return []
    tunelog.export(store, str(out), filters=filters)
    return out.read_bytes().splitlines()


def _assert_answers(history: HistoryBest[frozenset[int]], query: dict[str, Any]) -> None:
    holder = history.query(query["target"], ansor_workload_json(query["workload_key"]))
    if query["lines"] is None:
        assert holder is None, query
        return
    assert holder is not None, query
    assert holder.ref & set(query["lines"]), (sorted(holder.ref), query)
    assert holder.mean_cost == pytest.approx(query["cost"], rel=1e-6), query


@pytest.mark.parametrize("golden", golden_params(ansor_golden_files(), ".ansor.json"))
def test_records_imported_equal_what_tvm_decodes(golden: Path, imported_once: ImportedOnce) -> None:
    require_shared()
    (report,) = imported_once.reports(corpus_log_for_ansor(golden))
    assert report.new + report.duplicates == _load(golden)["decodable"]
    assert report.rejected == 0
    assert report.accounted


@pytest.mark.parametrize("golden", golden_params(ansor_golden_files(), ".ansor.json"))
def test_export_answers_every_golden_query(
    golden: Path, tmp_path: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    log = corpus_log_for_ansor(golden)
    with imported_once.store(log) as store:
        lines = _exported(store, tmp_path / "best.json")
    assert set(lines) <= set(log.read_bytes().splitlines())
    history = _history(lines, _line_numbers(log))
    queries = _load(golden)["queries"]
    assert queries
    for query in queries:
        _assert_answers(history, query)


@pytest.mark.parametrize("golden", golden_params(ansor_golden_files(), ".ansor.json"))
def test_export_for_each_target_answers_every_golden_query(
    golden: Path, tmp_path: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    log = corpus_log_for_ansor(golden)
    queries = _load(golden)["queries"]
    numbers = _line_numbers(log)
    with imported_once.store(log) as store:
        for n, target in enumerate(sorted({q["target"] for q in queries})):
            filters = tunelog.Filters(for_target=target)
            history = _history(_exported(store, tmp_path / f"for{n}.json", filters), numbers)
            for query in queries:
                if query["target"] == target:
                    _assert_answers(history, query)
