"""Best-only logs (TopHub, pick_best output, graph-tuner output): no trial history, no verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS, DATA, SAMPLE_LOGS, require_shared
from tunelog import api
from tunelog.convergence import (
    BEST_ONLY,
    NOT_TUNED,
    TOO_FEW,
    Progress,
    SourceRun,
    is_best_only,
    join_runs,
)
from tunelog.store import Store

# What real TVM's `python -m tvm.autotvm.record --mode pick` wrote for sample_logs' x86 log.
PICK_BEST = DATA / "x86_mini_pick_best.log"
GRAPH_LOG = "tlc-pack__TLCBench/saved_logs/2020_01_11/autotvm/platinum-8124m/"
GRAPH_LOG += "resnet_50-B1-float32.graph.log"


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ([1, 1, 1], True),  # TopHub, pick_best
        ([1] * 18 + [2, 2], True),  # graph tuner: a workload kept with two configs
        ([40, 40, 40], False),  # a tuning run
        ([1, 1, 200], False),
        ([], False),
    ],
)
def test_a_source_of_picks_is_best_only(counts: list[int], expected: bool) -> None:
    assert is_best_only(counts) is expected


def _run(source_id: int, trials: int, best_only: bool) -> SourceRun:
    progress = Progress()
    for number in range(trials):
        progress.add(1.0 / (number + 1), 0)
    return SourceRun(source_id, float(source_id), progress, best_only)


def test_only_a_sequence_made_of_best_only_runs_gets_the_best_only_verdict() -> None:
    assert join_runs([_run(1, 1, True)]).verdict == BEST_ONLY
    assert join_runs([_run(1, 1, True), _run(2, 1, True)]).verdict == BEST_ONLY
    assert join_runs([_run(1, 40, False), _run(2, 1, True)]).verdict == TOO_FEW
    assert join_runs([]).verdict == NOT_TUNED


def _verdicts(tmp_path: Path, *logs: Path) -> list[str]:
    with Store(tmp_path / "b.db") as store:
        api.import_paths(store, [str(log) for log in logs])
        found = api.layers(store)
        convergence = api.layer_convergence(store, found)
        return [convergence.of_layer(layer).verdict for layer in found]


@pytest.mark.parametrize(
    ("logs", "expected"),
    [((PICK_BEST,), BEST_ONLY), ((SAMPLE_LOGS / "x86_mini_llvm.log", PICK_BEST), TOO_FEW)],
    ids=["picks", "picks-beside-run"],
)
def test_curve_gives_the_verdict_the_listings_give(
    tmp_path: Path, logs: tuple[Path, ...], expected: str
) -> None:
    """`curve` said "too few valid trials" of a TopHub layer that `workloads` and the report
    call a best-only log (its summary was made without the sources' kind)."""
    with Store(tmp_path / "c.db") as store:
        api.import_paths(store, [str(log) for log in logs])
        found = api.layers(store)
        convergence = api.layer_convergence(store, found)
        for layer in found:
            picked = [c for c in api.curves(store, layer) if c.template is layer.templates[0]]
            assert picked[0].summary.verdict == convergence.of_layer(layer).verdict == expected


def test_a_real_pick_best_output_is_best_only(tmp_path: Path) -> None:
    assert _verdicts(tmp_path, PICK_BEST) == [BEST_ONLY] * 4  # 5 records, dense has two


def test_a_pick_beside_its_run_keeps_the_run_verdict(tmp_path: Path) -> None:
    assert set(_verdicts(tmp_path, SAMPLE_LOGS / "x86_mini_llvm.log", PICK_BEST)) == {TOO_FEW}


def test_a_graph_tuner_output_is_best_only(tmp_path: Path) -> None:
    require_shared()
    assert set(_verdicts(tmp_path, CORPUS / GRAPH_LOG)) == {BEST_ONLY}
