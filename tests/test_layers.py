"""One layer across templates: the winner relay picks, untuned layers, errors, explain."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import (
    CORPUS,
    EDGE,
    SAMPLE_LOGS,
    X86,
    ImportedOnce,
    autotvm_history,
    corpus_log_for,
    golden_files,
    require_shared,
    write_mixed_version_log,
)
from tunelog import api
from tunelog.layers import Layer, TargetGroup, template_identity
from tunelog.records import TuningRecord, parse_line
from tunelog.selection import HistoryBest
from tunelog.store import Filters, Store
from tunelog.store.layersql import LAYER_TABLES, layer_rows_sql
from tunelog.targets import UNKNOWN_MODEL, parse_target
from tunelog.workloadinfo import WorkloadInfo


def _layers_of(tmp_path: Path, *paths: Path) -> list[Layer]:
    with Store(tmp_path / "l.db") as store:
        tunelog.import_paths(store, [str(p) for p in paths])
        return api.layers(store)


def _golden_query(golden: dict[str, Any], target: str, workload: str) -> tuple[int, float] | None:
    """apply_history_best's answer from the golden slot dictionaries."""
    parsed = parse_target(target)
    hit = golden["by_model"].get(f"{parsed.model}\t{workload}")
    for key in parsed.keys:
        if hit is not None:
            break
        hit = golden["by_targetkey"].get(f"{key}\t{workload}")
    return None if hit is None else (hit["index"], hit["cost"])


def _workload_json(task: str, args: list[Any]) -> str:
    return json.dumps([task, *args], separators=(",", ":"))


@pytest.mark.slow
@pytest.mark.parametrize("golden", golden_files(), ids=[g.name for g in golden_files()])
def test_every_layer_winner_is_the_cheapest_golden_template_query(
    golden: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    expected = json.loads(golden.read_text())
    with imported_once.store(corpus_log_for(golden)) as store:
        found = api.layers(store)
    for layer in found:
        target = layer.group.targets[0]
        answers = []
        for template in layer.templates:
            w = template.workload
            answer = _golden_query(expected, target, _workload_json(w.task_name, w.args))
            if answer is not None:
                answers.append(answer)
        if not answers:
            assert layer.winner is None
            continue
        best_cost = min(cost for _, cost in answers)
        assert layer.winner is not None and layer.winner.chosen is not None
        assert layer.winner.chosen.mean_cost == best_cost
        assert layer.winner.chosen.config_index in {i for i, c in answers if c == best_cost}


def _history_of(path: Path) -> HistoryBest[tuple[int, float]]:
    lines = path.read_bytes().splitlines()
    return autotvm_history(lines, lambda record, _: (record.config_index, record.mean_cost))


@pytest.mark.slow
@pytest.mark.parametrize("golden", golden_files(), ids=[g.name for g in golden_files()])
def test_winners_only_export_keeps_every_layer_choice(
    golden: Path, tmp_path: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    out = tmp_path / "winners.log"
    with imported_once.store(corpus_log_for(golden)) as store:
        found = api.layers(store)
        if not any(layer.winner for layer in found):
            pytest.skip("every trial failed: nothing to export")
        tunelog.export(store, str(out), winners_only=True)
    history = _history_of(out)
    for layer in found:
        answers = []
        for template in layer.templates:
            w = template.workload
            holder = history.query(layer.group.targets[0], _workload_json(w.task_name, w.args))
            if holder is not None:
                answers.append((holder.ref[1], template.workload.id, holder.ref[0]))
        if layer.winner is None:
            assert answers == []
            continue
        assert layer.winner.chosen is not None
        cost, workload_id, index = min(answers)
        assert (cost, index) == (layer.winner.chosen.mean_cost, layer.winner.chosen.config_index)
        assert workload_id == layer.winner.workload.id


def test_winners_only_drops_losing_templates(tmp_path: Path) -> None:
    out = tmp_path / "w.log"
    with Store(tmp_path / "w.db") as store:
        tunelog.import_paths(store, [str(X86)])
        report = tunelog.export(store, str(out), winners_only=True)
    tasks = [
        r.task_name
        for r in map(parse_line, out.read_bytes().splitlines())
        if isinstance(r, TuningRecord)
    ]
    assert "dense_pack.x86" not in tasks and "dense_nopack.x86" in tasks
    assert report.skipped_losing_templates == 1


def test_direct_and_winograd_of_one_layer_are_one_workload(tmp_path: Path) -> None:
    require_shared()
    found = _layers_of(tmp_path, CORPUS / "tophub/cuda_v0.10.log")
    mixed = [lay for lay in found if len({t.workload.task_name for t in lay.templates}) > 1]
    assert len(mixed) >= 30
    for layer in mixed:
        names = {t.workload.task_name for t in layer.templates}
        assert names == {"conv2d_nchw.cuda", "conv2d_nchw_winograd.cuda"}
        costs = [t.chosen.mean_cost for t in layer.templates if t.chosen]
        assert layer.winner is not None and layer.winner.chosen is not None
        assert layer.winner.chosen.mean_cost == min(costs)


def test_dense_pack_and_nopack_are_one_workload_and_nopack_wins(tmp_path: Path) -> None:
    (dense,) = [lay for lay in _layers_of(tmp_path, X86) if lay.family == "dense"]
    assert [t.workload.task_name for t in dense.templates] == ["dense_nopack.x86", "dense_pack.x86"]
    assert dense.winner is dense.templates[0]
    assert dense.winner.chosen is not None
    assert dense.winner.chosen.config_index == 19
    assert dense.margin == pytest.approx(1.630099995963974e-05 / 1.1296666646861317e-05 - 1)
    # 2 * M * N * K = 2 * 1 * 10 * 8192 FLOPs in 11.30 us
    assert dense.flops == 163840
    assert dense.gflops == pytest.approx(163840 / 1.1296666646861317e-05 / 1e9)


def test_targets_group_by_keys_and_model_not_the_raw_string(tmp_path: Path) -> None:
    short = SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz"
    found = _layers_of(tmp_path, X86, short)
    assert {lay.group.label for lay in found} == {"cpu"}
    (dense,) = [lay for lay in found if lay.family == "dense"]
    assert dense.trials == 80 + 50  # dense records of the two runs
    assert len(dense.group.targets) == 2


def test_layers_sort_by_latency_gflops_and_trials(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        tunelog.import_paths(store, [str(X86)])
        by_latency = api.layers(store, sort="latency")
        by_trials = api.layers(store, sort="trials")
        by_gflops = api.layers(store, sort="gflops")
    costs = [lay.winner.chosen.mean_cost for lay in by_latency if lay.winner and lay.winner.chosen]
    assert costs == sorted(costs, reverse=True)
    assert [lay.trials for lay in by_trials] == sorted(lay.trials for lay in by_trials)
    gflops = [lay.gflops for lay in by_gflops if lay.gflops is not None]
    assert gflops == sorted(gflops)


def test_every_trial_failed_means_every_layer_is_untuned(tmp_path: Path) -> None:
    require_shared()
    log = CORPUS / "WANNA959__tvm_learning/resnet-50-v2-autotuning.json"
    with Store(tmp_path / "u.db") as store:
        tunelog.import_paths(store, [str(log)])
        untuned = api.untuned(store)
        found = api.errors(store)
    assert untuned and all(layer.winner is None for layer in untuned)
    assert sum(layer.trials for layer in untuned) == 2488
    assert all(
        e.diagnosis[0].startswith("No valid measurement: this layer will run an untuned")
        for e in found
    )


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        (
            "CharlieCurry__tvm-learning/autotvm/back/XGBtuner_matmul.log",
            "raise the builder timeout",
        ),
        ("generated/x86_mini_short_timeouts.log", "timeout was 0.8 s"),
        (
            "CharlieCurry__tvm-learning/autotvm/back/conv2d.log",
            "the template likely does not match the target",
        ),
    ],
)
def test_errors_diagnose_build_timeouts_and_mismatched_templates(
    log: str, expected: str, tmp_path: Path
) -> None:
    require_shared()
    with Store(tmp_path / "e.db") as store:
        tunelog.import_paths(store, [str(CORPUS / log)])
        found = api.errors(store)
    assert any(expected in " ".join(e.diagnosis) for e in found)


def test_a_layer_answered_through_another_targets_key_slot_is_untuned_with_its_answer(
    tmp_path: Path,
) -> None:
    """TVM would use the other machine's config; `untuned` lists the layer and names it."""
    require_shared()
    log = CORPUS / "WANNA959__tvm_learning/resnet-50-v2-autotuning.json"
    with Store(tmp_path / "k.db") as store:
        tunelog.import_paths(store, [str(log), str(EDGE)])
        found = api.errors(store)
        untuned = api.untuned(store)
    shared = [
        e
        for e in found
        if e.layer.shapes == "1x64x56x56 * 64x64x3x3 s1 p1"
        and e.template.workload.task_name == "conv2d_nchw.cuda"
        and e.layer.group.model == "unknown"
    ]
    assert shared and "another target" in shared[0].diagnosis[0]
    (listed,) = [
        lay
        for lay in untuned
        if lay.shapes == "1x64x56x56 * 64x64x3x3 s1 p1" and lay.group.model == "unknown"
    ]
    assert listed.winner is not None and listed.winner.chosen is not None
    assert listed.warnings and "was measured on" in listed.warnings[0]


def test_a_v01_template_cannot_win_a_layer_that_has_v02_records(tmp_path: Path) -> None:
    log = write_mixed_version_log(tmp_path)
    (layer,) = _layers_of(tmp_path, log)
    assert [t.name for t in layer.templates] == ["matmul", "matmul (v0.1)"]
    assert layer.winner is layer.templates[0]
    assert layer.winner.chosen is not None and layer.winner.chosen.config_index == 9


def _relay_choice(
    history: HistoryBest[tuple[int, float]], target: str, spellings: list[WorkloadInfo]
) -> tuple[str, tuple[int, float]] | None:
    """What relay picks when it queries these spellings (one per template) for `target`."""
    answers = []
    for w in spellings:
        holder = history.query(target, _workload_json(w.task_name, w.args))
        if holder is not None:
            answers.append((holder.ref[1], w.task_name, holder.ref))
    if not answers:
        return None
    cheapest = min(cost for cost, _, _ in answers)
    # Equal costs: relay's implementation order decides; any of them is a faithful answer.
    return min((name, ref) for cost, name, ref in answers if cost == cheapest)


def _spelling_choices(layer: Layer) -> list[list[WorkloadInfo]]:
    """Every way relay could query the layer: one spelling per template."""
    by_template: dict[tuple[str, str, str], list[WorkloadInfo]] = {}
    for t in layer.templates:
        by_template.setdefault(template_identity(t.workload), []).append(t.workload)
    return [list(choice) for choice in itertools.product(*by_template.values())]


def _query_targets(layer: Layer) -> list[str]:
    unseen = [
        " ".join([t.split()[0], *(o for o in t.split()[1:] if not o.startswith("-model="))])
        + " -model=unseen_device"
        for t in layer.group.targets
    ]
    return [*layer.group.targets, *unseen]


@pytest.mark.slow
@pytest.mark.parametrize("golden", golden_files(), ids=[g.name for g in golden_files()])
def test_winners_only_keeps_relay_choice_for_every_spelling_and_unseen_model(
    golden: Path, tmp_path: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    full = tmp_path / "full.log"
    out = tmp_path / "winners.log"
    with imported_once.store(corpus_log_for(golden)) as store:
        found = api.layers(store)
        if not any(layer.winner for layer in found):
            pytest.skip("every trial failed: nothing to export")
        tunelog.export(store, str(full))
        tunelog.export(store, str(out), winners_only=True)
    before, after = _history_of(full), _history_of(out)
    for layer in found:
        for target in _query_targets(layer):
            for spellings in _spelling_choices(layer):
                expected = _relay_choice(before, target, spellings)
                assert _relay_choice(after, target, spellings) == expected, (target, layer.key)


def test_winners_only_keeps_both_spellings_of_one_template(tmp_path: Path) -> None:
    require_shared()
    out = tmp_path / "w.log"
    with Store(tmp_path / "w.db") as store:
        tunelog.import_paths(store, [str(CORPUS / "tophub/vta_v0.08.log")])
        tunelog.export(store, str(out), winners_only=True)
        exported = len(out.read_bytes().splitlines())
        assert exported == len({h.record_id for h in store.slot_holders()})


@pytest.mark.parametrize("golden", golden_files()[:6], ids=[g.name for g in golden_files()[:6]])
def test_unseen_models_in_one_pass_are_the_groups_and_each_keys_without_a_model(
    golden: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    with imported_once.store(corpus_log_for(golden)) as store:
        seen = list(store.layer_candidates())
        keys = dict.fromkeys(group.keys for group, _, _ in seen)
        unseen = [TargetGroup(k, UNKNOWN_MODEL, ()) for k in keys]
        expected = seen + list(store.layer_candidates(unseen))
        # In an order of its own (each workload's layers together): the same layers.
        found = list(store.layer_candidates(unseen_models=True))
        assert sorted(found, key=repr) == sorted(expected, key=repr)


@pytest.mark.parametrize("golden", golden_files()[:3], ids=[g.name for g in golden_files()[:3]])
def test_layer_streams_read_together_or_left_early_give_the_same_layers(
    golden: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    with imported_once.store(corpus_log_for(golden)) as store:
        whole = list(store.layer_candidates())
        left = store.layer_candidates()
        next(left, None)
        left.close()  # its statement ends and its tables go before the next stream reads
        first, second = store.layer_candidates(), store.layer_candidates()
        together = [pair for pairs in zip(first, second, strict=True) for pair in pairs]
        assert together == [layer for layer in whole for _ in range(2)]
        assert list(store.layer_candidates()) == whole


def test_the_layer_query_reads_its_rows_in_layer_order_without_a_sort(tmp_path: Path) -> None:
    # Each step of LAYER_ROWS_SQL reads an index in the order its ORDER BY asks: a sort of
    # the answer (or of each layer's rows) would cost a listing seconds at 80k workloads.
    with Store(tmp_path / "l.db") as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)])
        stream = store.layer_candidates(unseen_models=True)
        assert next(stream, None) is not None  # the stream's tables exist while it is read
        names = [str(n) for (n,) in store.conn.execute("SELECT name FROM sqlite_temp_master")]
        tables = {
            table: "temp." + next(n for n in names if n.startswith(f"layer_{table}_"))
            for table in LAYER_TABLES
        }
        plan = [
            str(step[3])
            for step in store.conn.execute("EXPLAIN QUERY PLAN " + layer_rows_sql(tables))
        ]
        stream.close()
    assert plan and not [step for step in plan if "B-TREE" in step], plan


@pytest.mark.parametrize("failing_only", [False, True])
def test_every_place_of_the_layer_stream_has_rows(tmp_path: Path, failing_only: bool) -> None:
    # A group of other keys (unseen_models) is placed only at the layer keys it has rows for:
    # a place without rows would cost the query a scan of its workloads for nothing.
    with Store(tmp_path / "p.db") as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)])
        stream = store.layer_candidates(unseen_models=True, failing_only=failing_only)
        layers = [next(stream, None)]
        names = [str(n) for (n,) in store.conn.execute("SELECT name FROM sqlite_temp_master")]
        places = next(f"temp.{n}" for n in names if n.startswith("layer_places_"))
        (placed,) = store.conn.execute(f"SELECT count(*) FROM {places}").fetchone()
        layers += list(stream)
    assert None not in layers and len(layers) == placed


@pytest.mark.parametrize(
    ("options", "templates"),
    [
        ({}, ["dense_nopack.x86", "dense_pack.x86"]),
        ({"template": "dense_pack.x86"}, ["dense_pack.x86"]),
        ({"template": "dense_nopack.x86"}, ["dense_nopack.x86"]),
        ({"task": "pack"}, ["dense_nopack.x86", "dense_pack.x86"]),
        ({"task": "nopack"}, ["dense_nopack.x86"]),
        ({"template": "conv2d_NCHWc.x86"}, []),
    ],
)
def test_errors_list_only_the_selected_templates_of_a_layer(
    tmp_path: Path, options: dict[str, str], templates: list[str]
) -> None:
    """An errors row is a template's: --template and --task select rows, as they select
    `best`'s, not every template of a layer one of them is in."""
    with Store(tmp_path / "x.db") as store:
        tunelog.import_paths(store, [str(X86)])
        found = api.errors(store, Filters(**options))
    assert sorted(e.template.workload.task_name for e in found) == templates
