"""Any cost the import accepts (0, -0.0, denormals, 1e308) works in every command afterwards."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import runner
from tests.test_ansor import ansor_line
from tunelog.cli import app

CUDA = "cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32"
ARGS = [
    ["TENSOR", [1, 64, 56, 56], "float32"],
    ["TENSOR", [64, 64, 3, 3], "float32"],
    [1, 1],
    [1, 1, 1, 1],
    [1, 1],
    "float32",
]
LAYER = "1x64x56x56"


def autotvm_line(template: str, index: int, costs: list[float], error_no: int = 0) -> str:
    """One AutoTVM v0.2 record of the 3x3 layer (two templates compete for it)."""
    return json.dumps(
        {
            "input": [CUDA, template, ARGS, {}],
            "config": {"index": index, "code_hash": None, "entity": [["tile_f", "sp", [-1, 2]]]},
            "result": [costs, error_no, 1.0, 1700000000.0 + index],
            "version": 0.2,
            "tvm_version": "0.9.dev0",
        }
    )


# Every command a user runs after an import, with the layer's name where one is needed.
COMMANDS: list[list[str]] = [
    ["stats"],
    ["stats", "--json"],
    ["best"],
    ["best", "--knobs"],
    ["best", "--json"],
    ["workloads"],
    ["workloads", "--json"],
    ["workloads", "--sort", "latency"],
    ["untuned"],
    ["errors"],
    ["sources"],
    ["curve", LAYER],
    ["curve", LAYER, "--json"],
    ["knobs", LAYER],
    ["knobs", LAYER, "--json"],
]


def _log(costs: list[list[float]]) -> str:
    lines = [
        autotvm_line("conv2d_nchw.cuda" if n % 2 else "conv2d_nchw_winograd.cuda", n, c)
        for n, c in enumerate(costs)
    ]
    lines += [ansor_line(costs=c, steps=[["SP", 2, 0, 8, [n + 1], 1]]) for n, c in enumerate(costs)]
    return "\n".join(lines) + "\n"


def _run_everything(tmp_path: Path, costs: list[list[float]]) -> None:
    db = str(tmp_path / "costs.db")
    log = tmp_path / "costs.log"
    log.write_text(_log(costs))
    out_dir = tmp_path / "out"
    out_dir.mkdir(exist_ok=True)
    commands = [
        ["import", str(log)],
        *COMMANDS,
        ["report", "--force", str(out_dir / "r.html")],
        ["export", "--force", "--format", "autotvm", str(out_dir / "best.log")],
        ["export", "--force", "--format", "auto_scheduler", "--top-k", "3", str(out_dir / "a.log")],
        ["diff", db, db],
        ["diff", db, db, "--json"],
        ["rejects"],
        ["watch", str(log), "--once"],
    ]
    for command in commands:
        result = runner.invoke(app, ["--db", db, *command])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            command,
            result.exception,
        )
        assert result.exit_code in (0, 1), (command, result.output)
        assert "Traceback" not in result.stderr, command
        if result.exit_code == 1:  # only "nothing to export" (every cost was rejected)
            assert result.stderr.startswith("Error: "), (command, result.stderr)
        if "--json" in command and result.exit_code == 0:
            json.loads(result.stdout, parse_constant=_no_constants)
    merged = str(tmp_path / "merged.db")
    result = runner.invoke(app, ["--db", merged, "merge", db])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["--db", merged, "workloads"]).exit_code == 0


def _no_constants(name: str) -> float:
    raise AssertionError(f"JSON output holds {name}")


ANY_COST = st.one_of(
    st.floats(),  # NaN and the infinities too: the import rejects those lines
    st.sampled_from([0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1e308, 1.79e308]),
)


@pytest.mark.slow
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(costs=st.lists(st.lists(ANY_COST, min_size=1, max_size=3), min_size=1, max_size=4))
def test_every_command_works_on_any_cost_the_import_accepts(
    tmp_path_factory: pytest.TempPathFactory, costs: list[list[float]]
) -> None:
    _run_everything(tmp_path_factory.mktemp("costs"), costs)


@pytest.mark.slow
@pytest.mark.parametrize(
    "costs",
    [
        pytest.param([[0.001], [0.0]], id="zero"),
        pytest.param([[0.001], [-0.0]], id="negative-zero"),
        pytest.param([[0.0], [0.0], [0.0]], id="all-zero"),
        pytest.param([[5e-324], [0.0]], id="denormal-then-zero"),
        pytest.param([[1e308, 1e308], [1e308]], id="huge"),
    ],
)
def test_zero_and_extreme_costs_work_in_every_command(
    tmp_path: Path, costs: list[list[float]]
) -> None:
    _run_everything(tmp_path, costs)


def test_a_new_best_of_zero_cost_is_a_significant_gain() -> None:
    from tunelog.convergence import Progress

    progress = Progress()
    for cost in (0.001, 0.0):
        progress.add(cost, 0)
    summary = progress.summary()
    assert (summary.best_cost, summary.trials_to_best, summary.last_significant) == (0.0, 2, 2)
    assert not math.isnan(summary.best_cost or 0.0)
