"""young_collected_less: the collector's thresholds raised inside, the process's restored after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tunelog.collecting import GC_YOUNG_THRESHOLD, young_collected_less


@pytest.fixture(autouse=True)
def process_thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    yield saved
    gc.set_threshold(*saved)


@pytest.mark.parametrize(
    ("before", "inside"),
    [
        ((700, 10, 10), (GC_YOUNG_THRESHOLD, 10, 10)),
        ((500_000, 5, 20), (500_000, 5, 20)),  # never collected more often than the process's
        ((0, 10, 10), (0, 10, 10)),  # nor at all when the process turned collection off
    ],
)
def test_thresholds_are_raised_inside_and_restored_after(
    before: tuple[int, int, int], inside: tuple[int, int, int]
) -> None:
    gc.set_threshold(*before)
    with young_collected_less():
        assert gc.get_threshold() == inside
    assert gc.get_threshold() == before


def test_thresholds_are_restored_when_the_block_fails() -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(KeyError), young_collected_less():
        raise KeyError("x")
    assert gc.get_threshold() == (700, 10, 10)
