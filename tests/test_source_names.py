"""Which source the user meant: the ways of naming one (tunelog.filters), each as a table."""

from __future__ import annotations

import pytest

from tunelog.exceptions import InvalidValueError
from tunelog.filters import Filters, SourceNames, named_by_id, named_by_label, named_by_path

SOURCES = [
    SourceNames(1, "base", ("/logs/a.log",)),
    SourceNames(2, None, ("/logs/b.log", "/elsewhere/b.log")),
    SourceNames(3, "base", ("/logs/c.log",)),
]


@pytest.mark.parametrize(
    ("ref", "expected"),
    [("2", [2]), ("#2", [2]), ("4", []), ("base", []), ("/logs/a.log", []), ("", [])],
)
def test_named_by_id(ref: str, expected: list[int]) -> None:
    assert named_by_id(ref, SOURCES) == expected


@pytest.mark.parametrize("ref", ["\u00b2", "99999999999999999999999"])
def test_digits_that_can_be_no_id_are_refused(ref: str) -> None:
    with pytest.raises(InvalidValueError):
        named_by_id(ref, SOURCES)


@pytest.mark.parametrize(("label", "expected"), [("base", [1, 3]), ("other", []), ("1", [])])
def test_named_by_label(label: str, expected: list[int]) -> None:
    assert named_by_label(label, SOURCES) == expected


@pytest.mark.parametrize(
    ("spellings", "expected"),
    [
        ({"/logs/a.log"}, [1]),
        ({"b.log", "/elsewhere/b.log"}, [2]),  # a path it was imported from again
        ({"a.log"}, []),
        ({"/logs/a.log", "/logs/c.log"}, [1, 3]),
    ],
)
def test_named_by_path(spellings: set[str], expected: list[int]) -> None:
    assert named_by_path(spellings, SOURCES) == expected


@pytest.mark.parametrize(
    ("keys", "model", "tasks", "filters", "shown"),
    [
        (("cpu",), "unknown", ["dense_nopack.x86"], Filters(), True),
        (("cpu",), "unknown", ["dense_nopack.x86"], Filters(target_key="cuda"), False),
        (("cuda", "gpu"), "t4", ["conv2d_nchw.cuda"], Filters(model="t4"), True),
        (("cuda", "gpu"), "t4", ["conv2d_nchw.cuda"], Filters(model="v100"), False),
        (("cpu",), "unknown", ["dense_nopack.x86", "dense_pack.x86"], Filters(task="_pack"), True),
        (("cpu",), "unknown", ["dense_nopack.x86"], Filters(template="dense_pack.x86"), False),
    ],
)
def test_a_layer_is_shown_when_its_group_and_a_template_are_selected(
    keys: tuple[str, ...], model: str, tasks: list[str], filters: Filters, shown: bool
) -> None:
    assert filters.matches_layer(keys, model, tasks) is shown
