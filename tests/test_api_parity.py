"""What the CLI prints as JSON, the Python API returns: each pair through both (found by a new
user of the API: `explain` had no API, `untuned --json`'s `answered_by` and `stats --json`'s
`error_name` were added by the CLI alone)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import tunelog
from tests.conftest import EDGE, X86, run
from tunelog import api
from tunelog.store import Store

RECORD = X86.read_text().splitlines()[0]


@pytest.mark.parametrize(
    ("args", "call"),
    [
        (["explain", "6"], lambda: dataclasses.asdict(api.explain_error(6))),
        (
            ["explain", "build_timeout"],
            lambda: dataclasses.asdict(api.explain_error("build_timeout")),
        ),
        (["explain", "fields"], lambda: api.explain_fields()),
        (["explain", "all-cost"], lambda: api.explain_fields("all-cost")),
        (["explain", RECORD], lambda: [f._asdict() for f in api.explain_record(RECORD)]),
    ],
    ids=["error number", "error name", "fields", "one field", "a record"],
)
def test_explain_gives_the_api_what_the_command_prints(args: list[str], call: object) -> None:
    code, out, _ = run(*args, "--json")
    assert code == 0
    expected = json.loads(out)
    got = call()  # type: ignore[operator]
    if isinstance(got, dict) and "causes" in got:  # tuples in the dataclass, lists in JSON
        got = {k: list(v) if isinstance(v, tuple) else v for k, v in got.items()}
    assert got == expected


def test_untuned_and_stats_give_the_api_what_the_commands_print(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    with Store(db) as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)])
        untuned = [api.untuned_as_dict(layer) for layer in tunelog.untuned(store)]
        stats = store.stats().model_dump()
    assert untuned and all("answered_by" in row for row in untuned)
    assert untuned == json.loads(run("--db", db, "untuned", "--json")[1])
    assert stats == json.loads(run("--db", db, "stats", "--json")[1])
    assert {row["error_name"] for row in stats["by_error"]} >= {"NO_ERROR"}


def test_explain_refuses_what_it_cannot_explain_with_what_it_is() -> None:
    from tunelog.exceptions import InvalidValueError, NotARecordError, UnknownErrorCodeError

    with pytest.raises(UnknownErrorCodeError):
        api.explain_error(42)
    with pytest.raises(InvalidValueError, match="'speed' is no record field"):
        api.explain_fields("speed")
    with pytest.raises(NotARecordError, match="a JSON array, not an AutoTVM record"):
        api.explain_record("[1, 2]")
