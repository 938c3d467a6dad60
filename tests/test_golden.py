"""The specification of "best": real AutoTVM's own verdicts on the corpus (../shared/golden).

For each golden file: a database holding only that log gives exactly the golden slot winners,
the export of it answers every golden query exactly as AutoTVM does on the full log, and the
imported record count equals what TVM could decode. Skipped when ../shared is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import (
    ImportedOnce,
    autotvm_history,
    corpus_log_for,
    golden_files,
    golden_params,
    require_shared,
)
from tunelog.selection import HistoryBest
from tunelog.targets import parse_target

# Each golden log is a whole real tuning run: the module is slow (`pytest -m "not slow"` skips it).
pytestmark = pytest.mark.slow


def _load(golden: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(golden.read_text())
    return data


def _compact(workload: list[Any]) -> str:
    return json.dumps(workload, separators=(",", ":"))


def _history_of_lines(lines: list[bytes]) -> HistoryBest[int]:
    return autotvm_history(lines, lambda record, _: record.config_index)


@pytest.mark.parametrize("golden", golden_params(golden_files(), ".oracle.json"))
def test_slot_winners_equal_golden(golden: Path, imported_once: ImportedOnce) -> None:
    require_shared()
    expected = _load(golden)
    with imported_once.store(corpus_log_for(golden)) as store:
        mine = {
            (h.kind, f"{h.name}\t{h.workload_json}"): {
                "line": h.line,
                "index": h.config_index,
                "cost": h.mean_cost,
            }
            for h in store.slot_holders()
        }
    by_key = {k: v for (kind, k), v in mine.items() if kind == "key"}
    by_model = {k: v for (kind, k), v in mine.items() if kind == "model"}
    assert by_key == expected["by_targetkey"]
    assert by_model == expected["by_model"]


@pytest.mark.parametrize("golden", golden_params(golden_files(), ".oracle.json"))
def test_records_imported_equal_what_tvm_decodes(golden: Path, imported_once: ImportedOnce) -> None:
    require_shared()
    expected = _load(golden)
    (report,) = imported_once.reports(corpus_log_for(golden))
    assert report.new + report.duplicates == expected["decodable"]
    assert report.rejected == 0
    assert report.accounted


@pytest.mark.parametrize("golden", golden_params(golden_files(), ".oracle.json"))
def test_export_answers_every_golden_query(
    golden: Path, tmp_path: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    expected = _load(golden)
    out = tmp_path / "best.log"
    with imported_once.store(corpus_log_for(golden)) as store:
        if store.has_slot_winners():
            tunelog.export(store, str(out))
            lines = out.read_bytes().splitlines()
        else:
            lines = []
    history = _history_of_lines(lines)
    for query in expected["queries"]:
        holder = history.query(query["target"], _compact(query["workload"]))
        got = None if holder is None else holder.ref
        assert got == query["index"], query


@pytest.mark.parametrize("golden", golden_params(golden_files(), ".oracle.json"))
def test_export_writes_each_winner_once_as_original_bytes(
    golden: Path, tmp_path: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    out = tmp_path / "best.log"
    original = set(corpus_log_for(golden).read_bytes().splitlines())
    with imported_once.store(corpus_log_for(golden)) as store:
        if not store.has_slot_winners():
            pytest.skip("every trial failed: nothing to export")
        tunelog.export(store, str(out))
        winners = {h.record_id for h in store.slot_holders()}
    lines = out.read_bytes().splitlines()
    assert len(lines) == len(set(lines)) == len(winners)
    assert set(lines) <= original


def _unseen_model(target: str) -> str:
    """The same target string deployed on a device the log never saw."""
    parsed = parse_target(target)
    options = " ".join(f"-{name}={value}" for name, value in parsed.options if name != "model")
    return f"{parsed.kind} {options} -model=unseen_device".replace("  ", " ")


@pytest.mark.parametrize("golden", golden_params(golden_files(), ".oracle.json"))
def test_export_for_one_target_answers_as_the_full_log(
    golden: Path, tmp_path: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    expected = _load(golden)
    targets = sorted({q["target"] for q in expected["queries"]})
    targets += [_unseen_model(t) for t in targets]
    with imported_once.store(corpus_log_for(golden)) as store:
        full = _history_of_lines([line.raw for line in store.winner_lines()])
        for n, target in enumerate(targets):
            filters = tunelog.Filters(for_target=target)
            out = tmp_path / f"for{n}.log"
            if not store.has_slot_winners(filters):
                continue
            tunelog.export(store, str(out), filters=filters)
            mine = _history_of_lines(out.read_bytes().splitlines())
            for query in expected["queries"]:
                workload = _compact(query["workload"])
                want = full.query(target, workload)
                got = mine.query(target, workload)
                assert (got and got.ref) == (want and want.ref), (target, workload)
