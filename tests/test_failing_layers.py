"""The layers with failed records: `layers.has_failed_records` in Python, and the store's
`failing_only` stream (`store.layerinputs.FAILING_ONLY_SQL`), which `errors` reads, agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ImportedOnce, corpus_log_for, golden_files, require_shared
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
        Filters(for_target=" ".join(f"{target} -model=never-seen".split())),
        Filters(task=first.templates[0].workload.task_name),
        Filters(source="1"),
    ]


def _shown(layers: list[Layer]) -> list[tuple[object, ...]]:
    return [
        (lay.group, lay.key, [(t.workload.id, t.errors, t.chosen) for t in lay.templates])
        for lay in layers
    ]


@pytest.mark.parametrize("golden", GOLDEN, ids=[g.name for g in GOLDEN])
def test_failing_only_streams_exactly_the_layers_with_failed_records_in_their_order(
    golden: Path, imported_once: ImportedOnce
) -> None:
    require_shared()
    with imported_once.store(corpus_log_for(golden)) as store:
        for filters in _filters_of(store):
            every = list(each_layer(store, filters))
            failing = list(each_layer(store, filters, failing_only=True))
            assert _shown(failing) == _shown([lay for lay in every if has_failed_records(lay)])


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
