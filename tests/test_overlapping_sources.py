"""Overlapping files of the corpus: a log imported early (`before`), then in full (`after`).

A source is the record lines its file held, so every listing and export with `--label after`
equals the same command on a database of the full file alone, `diff label:before label:after`
equals `diff before.log after.log`, and after `sources remove before` the database answers as
if `before` had never been imported. `before` is a prefix of the log, or a rewritten one (its
first lines reversed, every fifth line measured again slower: records `after` lacks).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CORPUS, require_shared, runner
from tests.conftest import stdout_of as cli
from tunelog.cli import app


def _prefix(lines: list[bytes], count: int) -> list[bytes]:
    return lines[:count]


def _rewritten(lines: list[bytes], count: int) -> list[bytes]:
    """The first lines in reverse order, every fifth one with its costs doubled."""
    rewritten = []
    for number, line in enumerate(reversed(lines[:count])):
        if number % 5 == 0:
            record = json.loads(line)
            costs = record["result"][0] if "result" in record else record["r"][0]
            costs[:] = [cost * 2 for cost in costs]
            line = json.dumps(record).encode()
        rewritten.append(line)
    return rewritten


PAIRS = [
    ("tlc-pack__TLCBench/saved_logs/2020_01_11/autotvm/t4/bert-B1-float32.kernel.log", 2500),
    (
        "microsoft__nnfusion/artifacts/kernel_db/autotvm_logs/alexnet_nchw_tuned_conv2d.1000.log",
        1800,
    ),
    ("CharlieCurry__tvm-learning/autoschedule/GRTuner_matmul.log", 1000),
]
PLATINUM = (
    "tlc-pack__TLCBench/saved_logs/2020_01_11/autotvm/platinum-8124m/bert-B1-float32.kernel.log"
)
CASES = [
    *[(log, count, _prefix) for log, count in PAIRS],
    (PLATINUM, 3000, _rewritten),
    (PAIRS[0][0], 2500, _rewritten),
]


def _listings(db: Path, tmp: Path, *filters: str) -> dict[str, object]:
    """What a user sees: every listing (table and JSON), exports, a curve and knob table."""
    seen: dict[str, object] = {}
    for command in ("best", "workloads", "untuned", "errors"):
        seen[command] = cli(db, command, *filters)
        found = json.loads(cli(db, command, *filters, "--json"))
        if command == "best":
            for row in found:
                row.pop("record_id")  # ids are the database's own
        seen[f"{command} --json"] = found
    for top_k in ("1", "3"):
        out = tmp / f"export-{top_k}.log"
        cli(db, "export", "--top-k", top_k, "--include-v01", "--force", str(out), *filters)
        seen[f"export --top-k {top_k}"] = out.read_bytes()
    layers = json.loads(cli(db, "workloads", "--json", *filters))
    for layer in layers[:3]:
        for command in ("curve", "knobs"):
            seen[f"{command} {layer['layer_key']}"] = cli(
                db, command, layer["layer_key"], "--json", *filters
            )
    return seen


@pytest.mark.slow
@pytest.mark.parametrize(("log", "count", "make_before"), CASES)
def test_a_label_of_overlapping_files_answers_as_its_file_alone(
    tmp_path: Path, log: str, count: int, make_before: Callable[[list[bytes], int], list[bytes]]
) -> None:
    require_shared()
    lines = (CORPUS / log).read_bytes().splitlines()
    before, after = tmp_path / "before.log", tmp_path / "after.log"
    before.write_bytes(b"".join(line + b"\n" for line in make_before(lines, count)))
    after.write_bytes(b"".join(line + b"\n" for line in lines))
    both, alone = tmp_path / "both.db", tmp_path / "alone.db"
    cli(both, "import", "--label", "before", str(before))
    cli(both, "import", "--label", "after", str(after))
    cli(alone, "import", str(after))
    expected = _listings(alone, tmp_path)
    assert _listings(both, tmp_path, "--label", "after") == expected
    assert _listings(both, tmp_path, "--source", "2") == expected
    by_label = runner.invoke(app, ["--db", str(both), "diff", "label:before", "label:after"])
    by_file = runner.invoke(app, ["diff", str(before), str(after)])
    assert (by_label.exit_code, by_label.stdout) == (by_file.exit_code, by_file.stdout)
    cli(both, "sources", "remove", "before")
    assert _listings(both, tmp_path) == expected
    assert cli(both, "stats") == cli(alone, "stats")
