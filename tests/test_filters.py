"""The filter options: one meaning (tunelog.filters) in every command, combined as AND."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tunelog
from tests.conftest import CORPUS, SAMPLE_LOGS, autotvm_history, require_shared, runner
from tunelog.cli import app
from tunelog.exceptions import TargetParseError
from tunelog.filters import Filters
from tunelog.records import Measurement, scan_line
from tunelog.selection import HistoryBest
from tunelog.store import Store
from tunelog.targets import parse_target

CUDA_T4 = "cuda -keys=cuda,gpu -arch=sm_75 -model=t4"


@pytest.mark.parametrize(
    ("filters", "target", "selected"),
    [
        (Filters(), "llvm", True),
        (Filters(target_key="cuda"), CUDA_T4, True),
        (Filters(target_key="gpu"), CUDA_T4, True),
        (Filters(target_key="cpu"), CUDA_T4, False),
        (Filters(model="t4"), CUDA_T4, True),
        (Filters(model="titanx"), CUDA_T4, False),
        (Filters(target_key="cuda", model="t4"), CUDA_T4, True),
        (Filters(target_key="cuda", model="titanx"), CUDA_T4, False),
        (Filters(target_key="cpu", model="t4"), CUDA_T4, False),
        (Filters(model="unknown"), "llvm -mcpu=skylake-avx512", True),
        (Filters(target=CUDA_T4), CUDA_T4, True),
        (Filters(target=CUDA_T4), CUDA_T4 + " ", True),  # spaces around it: invisible
        (Filters(target=CUDA_T4), CUDA_T4.replace(" ", "  ", 1), False),  # inside: exact
        (Filters(target="llvm"), "llvm -mcpu=skylake-avx512", False),
        (Filters(target=CUDA_T4, model="titanx"), CUDA_T4, False),
    ],
)
def test_target_filters(filters: Filters, target: str, selected: bool) -> None:
    assert filters.matches_target(parse_target(target)) is selected


@pytest.mark.parametrize(
    ("filters", "task", "selected"),
    [
        (Filters(template="conv2d_nchw.cuda"), "conv2d_nchw.cuda", True),
        (Filters(template="conv2d_nchw.cuda"), "conv2d_nchw_winograd.cuda", False),
        (Filters(task="nchw"), "conv2d_nchw_winograd.cuda", True),
        (Filters(task="NCHW"), "conv2d_nchw.cuda", False),  # case-sensitive
        (Filters(task="%"), "conv2d_nchw.cuda", False),  # plain text, not SQL LIKE
        (Filters(task="_"), "dense", False),
        (Filters(task="_"), "conv2d_nchw.cuda", True),
        (Filters(template="conv2d_nchw.cuda", task="winograd"), "conv2d_nchw.cuda", False),
    ],
)
def test_task_filters(filters: Filters, task: str, selected: bool) -> None:
    assert filters.matches_task(task) is selected


@pytest.mark.parametrize(
    "name", ["target_key", "model", "template", "task", "target", "source", "label"]
)
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_filter_is_refused(name: str, value: str) -> None:
    from tunelog.exceptions import InvalidValueError

    option = "--" + name.replace("_", "-")
    with pytest.raises(InvalidValueError, match=f"^{option} is empty: give a value"):
        Filters(**{name: value})


@pytest.mark.parametrize(
    "command",
    [
        ["best", "--source", ""],  # said "no imported source matches source ''" (exit 1)
        ["best", "--label", " "],
        ["curve", "x", "--source", ""],
        ["knobs", "x", "--knob", ""],  # said the template "has no knob ''" (exit 0)
    ],
)
def test_an_empty_option_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    result = runner.invoke(app, ["--db", str(tmp_path / "none.db"), *command])
    assert result.exit_code == 2
    assert "is empty: give a value, or leave the option out" in result.stderr


def test_an_empty_source_to_remove_is_a_usage_error(tmp_path: Path) -> None:
    """It said "no imported source has id, label or path ''" (exit 1), where --label '' is a
    usage error."""
    result = runner.invoke(app, ["--db", str(tmp_path / "none.db"), "sources", "remove", " "])
    assert result.exit_code == 2
    assert "REF is empty: give a source's id, label or path" in result.stderr


def test_an_unparsable_for_target_is_a_target_parse_error() -> None:
    with pytest.raises(TargetParseError):
        Filters(for_target="")


def _task_name(raw: bytes) -> str:
    parsed = scan_line(raw)
    assert isinstance(parsed, Measurement)
    return parsed.task_name


def _sample_store(store: Store) -> Store:
    tunelog.import_paths(store, [str(SAMPLE_LOGS / "x86_mini_llvm.log")])
    tunelog.import_paths(store, [str(SAMPLE_LOGS / "edge_cases.log")])
    return store


@pytest.mark.parametrize(
    ("filters", "tasks"),
    [
        (Filters(target_key="cuda", model="t4"), {"conv2d_nchw.cuda", "conv2d_nchw_winograd.cuda"}),
        (Filters(target_key="cuda", model="titanx"), set()),
        (Filters(task="%nchw"), set()),
        (Filters(task="nchw_w"), {"conv2d_nchw_winograd.cuda"}),
        (Filters(target_key="cpu", task="dense"), {"dense_nopack.x86", "dense_pack.x86"}),
    ],
)
def test_best_export_and_workloads_select_the_same_records(
    store: Store, filters: Filters, tasks: set[str]
) -> None:
    _sample_store(store)
    v02 = {row.task_name for row in store.best(filters) if row.log_version == "0.2"}
    exported = {
        _task_name(line.raw) for line in store.winner_lines(filters) if line.version == "0.2"
    }
    layered = {
        t.workload.task_name
        for layer in tunelog.layers(store, filters)
        for t in layer.templates
        if t.workload.version == "0.2" and filters.matches_task(t.workload.task_name)
    }
    assert v02 == exported == tasks
    assert layered >= tasks


def test_for_target_with_an_unseen_model_answers_from_the_keys(store: Store) -> None:
    _sample_store(store)
    rows = store.best(Filters(for_target="cuda -model=unseen_device"))
    assert {(row.task_name, tuple(row.slots)) for row in rows} == {
        ("conv2d_nchw.cuda", ("cuda",)),
        ("conv2d_nchw_winograd.cuda", ("cuda",)),
        ("topi_nn_dense", ("cuda",)),
    }
    (layer,) = [
        lay
        for lay in tunelog.layers(store, Filters(for_target="cuda -model=unseen_device"))
        if lay.family.startswith("conv2d")
    ]
    assert layer.group.model == "unseen_device"
    assert layer.winner is not None


def _history_of_file(path: Path) -> HistoryBest[bytes]:
    """apply_history_best's dictionaries over a whole log, with each holder's line."""
    lines = path.read_bytes().splitlines()
    return autotvm_history(lines, lambda _, raw: raw, skip_other_lines=True)


@pytest.mark.parametrize(
    "target", ["cuda -model=titanx", "cuda -model=unseen_device", "nvptx -model=tx2"]
)
def test_export_for_target_on_tophub_cuda_answers_as_the_full_log(
    store: Store, tmp_path: Path, target: str
) -> None:
    require_shared()
    log = CORPUS / "tophub/cuda_v0.10.log"
    tunelog.import_paths(store, [str(log)])
    out = tmp_path / "for.log"
    tunelog.export(store, str(out), filters=Filters(for_target=target))
    full, mine = _history_of_file(log), _history_of_file(out)
    workloads = {slot.workload for slot in full.slots}
    assert len(workloads) == 473
    for workload in workloads:
        want, got = full.query(target, workload), mine.query(target, workload)
        assert want is not None and got is not None
        assert got.ref == want.ref, workload
    assert len(out.read_bytes().splitlines()) == len(workloads)


def test_target_selects_the_records_a_layer_counts(store: Store, tmp_path: Path) -> None:
    # Two target strings of one group (keys cpu, no model) measured the same layers: --target
    # counts its own records, as `stats` does, not the group's.
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()
    first = json.loads(lines[0])["input"][0]
    other = "llvm -keys=cpu -mtriple=x86_64-pc-linux-gnu"
    assert first != other
    (tmp_path / "other.log").write_text(
        "\n".join(line.replace(json.dumps(first), json.dumps(other)) for line in lines[:40])
    )
    tunelog.import_paths(store, [str(SAMPLE_LOGS / "x86_mini_llvm.log")])
    tunelog.import_paths(store, [str(tmp_path / "other.log")])

    def trials(filters: Filters | None) -> dict[str, int]:
        return {lay.key: lay.trials for lay in tunelog.layers(store, filters)}

    both, alone, copied = trials(None), trials(Filters(target=first)), trials(Filters(target=other))
    assert sum(both.values()) == len(lines) + 40
    assert sum(alone.values()) == len(lines) and sum(copied.values()) == 40
    assert {key: alone[key] + copied.get(key, 0) for key in alone} == both
    # and the verdicts are judged from the same records
    chosen = Filters(target=other)
    convergence = tunelog.api.layer_convergence(store, filters=chosen)
    for lay in tunelog.layers(store, chosen):
        assert [c.trials for c in convergence.of_templates(lay)] == [
            t.trials for t in lay.templates
        ]
