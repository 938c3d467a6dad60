"""export --winners-only builds only the layers that may add a workload, and finds the same ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tunelog
from tests.conftest import (
    CORPUS,
    EDGE,
    X86,
    ImportedOnce,
    corpus_log_for,
    golden_files,
    require_shared,
)
from tunelog.api.exporting import _may_be_chosen_workloads
from tunelog.layers import layers_of, may_be_chosen
from tunelog.store import Store


def every_layers_choice(store: Store) -> set[int]:
    """The workloads relay may pick, from every layer built (what skipping must not change)."""
    return {
        template.workload.id
        for layer in layers_of(store.layer_candidates(unseen_models=True))
        for template in may_be_chosen(layer)
    }


@pytest.mark.parametrize("logs", [[X86], [X86, EDGE]], ids=["x86", "x86+edge"])
def test_skipping_layers_that_add_nothing_keeps_the_workloads(
    tmp_path: Path, logs: list[Path]
) -> None:
    with Store(tmp_path / "w.db") as store:
        tunelog.import_paths(store, [str(log) for log in logs])
        found = _may_be_chosen_workloads(store)
        assert found and found == every_layers_choice(store)


def _record(template: str, target: str, cost: float) -> str:
    line = next(x for x in X86.read_text().splitlines() if f'"{template}"' in x)
    record = json.loads(line)
    record["input"][0] = target
    record["result"][0] = [cost]
    return json.dumps(record)


def test_a_template_winning_only_beside_a_found_one_is_kept(tmp_path: Path) -> None:
    # nopack wins the key slot (the unseen model) and model a; pack wins model b, where its
    # layer also holds nopack, found already: that layer must still be built.
    log = tmp_path / "two_models.log"
    log.write_text(
        "\n".join(
            [
                _record("dense_nopack.x86", "llvm -keys=cpu -model=a", 1e-5),
                _record("dense_pack.x86", "llvm -keys=cpu -model=a", 2e-5),
                _record("dense_nopack.x86", "llvm -keys=cpu -model=b", 4e-5),
                _record("dense_pack.x86", "llvm -keys=cpu -model=b", 3e-5),
            ]
        )
        + "\n"
    )
    with Store(tmp_path / "w.db") as store:
        tunelog.import_paths(store, [str(log)])
        found = _may_be_chosen_workloads(store)
        assert len(found) == 2 and found == every_layers_choice(store)


# Logs where templates compete and spellings and targets share layers (TopHub packages of
# several targets, a vta log with two spellings of one template), and every golden log.
SHARED_LAYERS = ["tophub/cuda_v0.08.log", "tophub/arm_cpu_v0.06.log", "tophub/vta_v0.08.log"]


@pytest.mark.parametrize("name", SHARED_LAYERS)
def test_skipping_layers_keeps_the_workloads_of_logs_with_shared_layers(
    name: str, imported_once: ImportedOnce
) -> None:
    require_shared()
    with imported_once.store(CORPUS / name) as store:
        found = _may_be_chosen_workloads(store)
        assert found and found == every_layers_choice(store)


@pytest.mark.slow
@pytest.mark.parametrize("golden", golden_files(), ids=[g.name for g in golden_files()])
def test_skipping_layers_keeps_the_workloads_of_every_golden_log(
    golden: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    with imported_once.store(corpus_log_for(golden)) as store:
        assert _may_be_chosen_workloads(store) == every_layers_choice(store)


def _line(target: str, task: str, data: list[int], kernel: list[int], index: int) -> str:
    args = [["TENSOR", data, "float32"], ["TENSOR", kernel, "float32"],
            [1, 1], [0, 0, 0, 0], [1, 1], "float32"]  # fmt: skip
    record = {
        "input": [target, task, args, {}],
        "config": {"index": index, "code_hash": None, "entity": []},
        "result": [[1e-4], 0, 1.0, 1700000000],
        "version": 0.2,
        "tvm_version": "0.16.0",
    }
    return json.dumps(record) + "\n"


def test_a_layer_answered_only_through_a_model_slot_keeps_its_template(tmp_path: Path) -> None:
    """`llvm -device=arm_cpu -model=rk3399` holds the model slot `rk3399`, which `opencl
    -model=rk3399` asks first: relay builds that layer for the mali target with it (TVM 0.16,
    checked), but the mali group has no record of the layer, so the export never looked at it
    and left the record out (found by a round-trip hunt against real relay builds)."""
    log = tmp_path / "min.log"
    mali = "conv2d_nchw_spatial_pack.mali"
    log.write_text(
        _line("opencl -model=rk3399 -device=mali", mali, [1, 832, 7, 7], [128, 832, 1, 1], 1)
        + _line("llvm -device=arm_cpu -model=rk3399", mali, [1, 1024, 14, 14], [512, 1024, 1, 1], 2)
    )
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(log)])
        report = tunelog.export(store, str(tmp_path / "out.log"), winners_only=True)
        assert len(_may_be_chosen_workloads(store)) == 2 == len(every_layers_choice(store))
    assert (report.written, report.skipped_losing_templates) == (2, 0)


@pytest.mark.parametrize(
    "filters",
    [{"target_key": "arm_cpu"}, {"model": "rk3399"}, {"task": "arm_cpu"}],
    ids=["--target-key", "--model", "--task"],
)
def test_winners_only_with_record_filters_leaves_nothing_out(
    tmp_path: Path, filters: dict[str, str]
) -> None:
    """An arm_cpu template losing to a skylake x86 record of the shared `cpu` key slot was left
    out of `--target-key arm_cpu --winners-only`, whose file holds no skylake record: TVM fell
    back on 35 of 254 layers of a real arm_cpu build (found by a new user)."""
    from tunelog.filters import Filters

    mali = "conv2d_nchw_spatial_pack.arm_cpu"
    log = tmp_path / "two.log"
    log.write_text(
        _line(
            "llvm -device=arm_cpu -model=rk3399", mali, [1, 64, 56, 56], [64, 64, 3, 3], 1
        ).replace("[[0.0001]", "[[0.0002]")
        + _line("llvm -mcpu=skylake-avx512", "conv2d_NCHWc.x86", [1, 64, 56, 56], [64, 64, 3, 3], 2)
    )
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(log)])
        chosen = Filters(**filters)
        plain = tunelog.export(store, str(tmp_path / "plain.log"), filters=chosen)
        pruned = tunelog.export(
            store, str(tmp_path / "pruned.log"), filters=chosen, winners_only=True
        )
    assert plain.written == pruned.written == 1
    assert pruned.winners_only_kept_all and "--winners-only left nothing out" in " ".join(
        pruned.warnings
    )
    assert (tmp_path / "plain.log").read_bytes() == (tmp_path / "pruned.log").read_bytes()
