"""The layers with failed records: `layers.has_failed_records` in Python, and the store's
`failing_only` stream (`store.layersql.FAILING_ONLY_SQL`), which `errors` reads, agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tunelog
from tests.conftest import ImportedOnce, corpus_log_for, golden_files, golden_params, require_shared
from tunelog.api.listing import each_layer
from tunelog.filters import Filters
from tunelog.layers import Layer, has_failed_records
from tunelog.store import Store

GOLDEN = golden_files()


def _filters_of(store: Store) -> list[Filters | None]:
    """No filter, and each kind of filter the stream reads otherwise: a target asked about
    (one of the log's, and its keys with a model the log never saw), a template, a source."""
    first = next(each_layer(store, None), None)
    if first is None:
        return [None]
    target = first.group.targets[0]
    return [
        None,
        Filters(for_target=target),
        # its own -model replaced (TVM refuses an option given twice)
        Filters(
            for_target=" ".join(
                [*(t for t in target.split() if not t.startswith("-model=")), "-model=never-seen"]
            )
        ),
        Filters(task=first.templates[0].workload.task_name),
        Filters(source="1"),
    ]


def _shown(layers: list[Layer]) -> list[tuple[object, ...]]:
    return [
        (lay.group, lay.key, [(t.workload.id, t.errors, t.chosen) for t in lay.templates])
        for lay in layers
    ]


def _assert_failing_only_is_the_rule(store: Store, filters: Filters | None) -> None:
    """The `failing_only` stream (SQL) is the whole stream's layers that `has_failed_records`
    (Python) keeps, in the same order."""
    every = list(each_layer(store, filters))
    failing = list(each_layer(store, filters, failing_only=True))
    assert _shown(failing) == _shown([lay for lay in every if has_failed_records(lay)])


@pytest.mark.parametrize("golden", golden_params(GOLDEN, ""))
def test_failing_only_streams_exactly_the_layers_with_failed_records_in_their_order(
    golden: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    with imported_once.store(corpus_log_for(golden)) as store:
        for filters in _filters_of(store):
            _assert_failing_only_is_the_rule(store, filters)


def test_the_corpus_holds_layers_with_and_without_failed_records(
    imported_once: ImportedOnce,
) -> None:
    # Else the comparison above could not tell a stream that keeps or drops every layer.
    require_shared()
    kinds: set[bool] = set()
    for golden in GOLDEN:
        with imported_once.store(corpus_log_for(golden)) as store:
            kinds.update(has_failed_records(lay) for lay in each_layer(store, None))
    assert kinds == {True, False}


# Two targets of one group (keys cpu, no model), and another group.
CPU_A = "llvm -keys=cpu -mcpu=skylake-avx512"
CPU_B = "llvm -keys=cpu -mcpu=skylake-avx512 -mtriple=x86_64-pc-linux-gnu"
T4 = "cuda -keys=cuda,gpu -model=t4"


def _line(target: str, template: str, k: int, index: int, error_no: int = 0) -> str:
    """An AutoTVM v0.2 record of the dense layer 1xK * 32xK (failed: error_no, cost 1e9)."""
    args = [["TENSOR", [1, k], "float32"], ["TENSOR", [32, k], "float32"], None, "float32"]
    cost = 1e9 if error_no else 1e-5 * (1 + index)
    return json.dumps(
        {
            "input": [target, template, args, {}],
            "config": {"index": index, "code_hash": None, "entity": []},
            "result": [[cost], error_no, 0.1, 1.7e9 + index],
            "version": 0.2,
            "tvm_version": "0.16.dev0",
        }
    )


CRAFTED = [
    # 1x64: valid on one target of the group, failed on the other (another template).
    _line(CPU_A, "dense_nopack.x86", 64, 1),
    _line(CPU_B, "dense_pack.x86", 64, 2, error_no=4),
    # 1x128: every trial valid.
    _line(CPU_A, "dense_nopack.x86", 128, 3),
    _line(CPU_A, "dense_pack.x86", 128, 4),
    # 1x256: every trial failed.
    _line(CPU_A, "dense_nopack.x86", 256, 5, error_no=6),
    # 1x512: failed trials of a template relay does not offer to x86, beside a valid one.
    _line(CPU_A, "dense_small_batch.gpu", 512, 6, error_no=4),
    _line(CPU_A, "dense_nopack.x86", 512, 7),
    # The same layers on another group: valid, and failed.
    _line(T4, "dense_small_batch.gpu", 64, 8),
    _line(T4, "dense_small_batch.gpu", 256, 9, error_no=1),
]
CRAFTED_FILTERS = [
    None,
    Filters(for_target=CPU_A),
    Filters(for_target=CPU_B),
    Filters(for_target="llvm -keys=cpu -model=never-seen"),
    Filters(for_target=T4),
    Filters(for_target="cuda -keys=cuda,gpu"),
    Filters(task="dense_pack"),
    Filters(target=CPU_B),
]


def _crafted_store(tmp_path: Path, *, unfilled: str | None = None) -> Store:
    log = tmp_path / "crafted.log"
    log.write_text("\n".join(CRAFTED) + "\n")
    store = Store(tmp_path / "crafted.db")
    tunelog.import_paths(store, [str(log)])
    if unfilled is not None:  # as an older tunelog writing into the open database leaves it
        store.conn.execute("UPDATE workloads SET layer_key = NULL WHERE args LIKE ?", (unfilled,))
        store.conn.commit()
    return store


@pytest.mark.parametrize("unfilled", [None, "%256%", "%64]%"])
@pytest.mark.parametrize("filters", CRAFTED_FILTERS, ids=lambda f: f.describe() if f else "none")
def test_failing_only_on_crafted_groups_targets_and_offers(
    tmp_path: Path, filters: Filters | None, unfilled: str | None
) -> None:
    with _crafted_store(tmp_path, unfilled=unfilled) as store:
        _assert_failing_only_is_the_rule(store, filters)


def test_the_crafted_log_has_failing_and_clean_layers_in_every_kind_of_group(
    tmp_path: Path,
) -> None:
    # Else the comparison above could not tell a stream that keeps or drops every layer.
    with _crafted_store(tmp_path) as store:
        for filters in (None, Filters(for_target=CPU_A), Filters(for_target=T4)):
            kinds = {has_failed_records(lay) for lay in each_layer(store, filters)}
            assert kinds == {True, False}, filters


@pytest.mark.parametrize("target", [CPU_A, "llvm -keys=cpu -model=never-seen", T4])
def test_a_target_asked_about_lists_its_layers_by_their_first_workload(
    tmp_path: Path, target: str
) -> None:
    # A group the database's own do not place (--for-target) lists its layers in the order of
    # their layer keys' first workloads, whichever keys it finds rows for.
    with _crafted_store(tmp_path) as store:
        first = {
            str(key): int(n)
            for key, n in store.conn.execute(
                "SELECT layer_key, min(id) FROM workloads GROUP BY layer_key"
            )
        }
        found = [lay.key for lay in each_layer(store, Filters(for_target=target))]
    assert found and [first[key] for key in found] == sorted(first[key] for key in found)


def test_a_workload_without_facts_between_failing_layers_takes_no_place(tmp_path: Path) -> None:
    # Its layer key unfilled (NULL): no layer, and no place whose number another layer's
    # could be (the places are the rowids of one table).
    log = tmp_path / "unfilled.log"
    lines = [
        _line(CPU_A, "dense_nopack.x86", 64, 1, error_no=4),
        _line(CPU_A, "dense_nopack.x86", 128, 2),
        _line(CPU_A, "dense_nopack.x86", 256, 3, error_no=4),
        _line(CPU_A, "dense_pack.x86", 128, 4, error_no=4),
    ]
    log.write_text("\n".join(lines) + "\n")
    with Store(tmp_path / "unfilled.db") as store:
        tunelog.import_paths(store, [str(log)])
        store.conn.execute("UPDATE workloads SET layer_key = NULL WHERE args LIKE '%256%'")
        store.conn.commit()
        for filters in (None, Filters(for_target=CPU_A)):
            failing = list(each_layer(store, filters, failing_only=True))
            assert [len(lay.templates) for lay in failing] == [1, 2], filters
