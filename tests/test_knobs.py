"""tunelog knobs: per knob value counts, best/median cost, the chosen config, implied layouts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import DATA, runner
from tunelog.cli import app
from tunelog.knobs import KnobTrial, coverage, implied_layouts, knob_values

BLOCKS_LOG = DATA / "nchwc_blocks.log"
TARGET = "llvm -keys=cpu -mcpu=skylake-avx512"
ARGS = [
    ["TENSOR", [1, 32, 16, 16], "float32"],
    ["TENSOR", [64, 32, 3, 3], "float32"],
    [1, 1],
    [1, 1, 1, 1],
    [1, 1],
    "NCHW",
    "NCHW",
    "float32",
]
# (tile_ic block, tile_oc block, mean cost in us or None for a BUILD_TIMEOUT): 16c tried 3 times.
TRIALS = [
    (8, 16, 40.0),
    (16, 16, 30.0),
    (4, 8, 55.0),
    (16, 32, None),
    (8, 32, 35.0),
    (16, 8, 25.0),
    (4, 16, 50.0),
]


def blocks_log_text() -> str:
    """The generated test log: one conv2d_NCHWc.x86 layer, block sizes 4c, 8c and 16c."""
    lines = []
    for number, (ic, oc, cost) in enumerate(TRIALS):
        lines.append(
            json.dumps(
                {
                    "input": [TARGET, "conv2d_NCHWc.x86", ARGS, {}],
                    "config": {
                        "index": number * 10,
                        "code_hash": None,
                        "entity": [
                            ["tile_ic", "sp", [-1, ic]],
                            ["tile_oc", "sp", [-1, oc]],
                            ["tile_ow", "sp", [-1, 8]],
                            ["unroll_kw", "ot", number % 2 == 0],
                        ],
                    },
                    "result": [
                        [1e9] if cost is None else [cost * 1e-6],
                        6 if cost is None else 0,
                        10 if cost is None else 0.5,
                        1700000000.0 + number,
                    ],
                    "version": 0.2,
                    "tvm_version": "0.16.dev0",
                }
            )
        )
    return "\n".join(lines) + "\n"


def test_the_committed_log_is_what_the_generator_writes() -> None:
    assert BLOCKS_LOG.read_text() == blocks_log_text()


KNOBS_LAYOUT = """\
cpu  1x32x16x16 * 64x32x3x3 s1 p1  conv2d_NCHWc.x86  (relay picks it)
7 trials, 7 distinct configs; split factorisations: tile_ic 3, tile_oc 3, tile_ow 1 (the full space size is not in the log)
knob           value       trials    valid/failed    best     median    chosen
-------------  ----------  --------  --------------  -------  --------  --------
layout:data    NCHW16c     3         2/1             25.0 us  27.5 us   yes
layout:data    NCHW8c      2         2/0             35.0 us  37.5 us
layout:data    NCHW4c      2         2/0             50.0 us  52.5 us
layout:kernel  OIHW16i8o   1         1/0             25.0 us  25.0 us   yes
layout:kernel  OIHW16i16o  1         1/0             30.0 us  30.0 us
layout:kernel  OIHW8i32o   1         1/0             35.0 us  35.0 us
layout:kernel  OIHW8i16o   1         1/0             40.0 us  40.0 us
layout:kernel  OIHW4i16o   1         1/0             50.0 us  50.0 us
layout:kernel  OIHW4i8o    1         1/0             55.0 us  55.0 us
layout:kernel  OIHW16i32o  1         0/1
layout:out     NCHW8c      2         2/0             25.0 us  40.0 us   yes
layout:out     NCHW16c     3         3/0             30.0 us  40.0 us
layout:out     NCHW32c     2         1/1             35.0 us  35.0 us
"""


def test_knobs_lists_every_block_size_with_counts_and_best_latency(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    assert runner.invoke(app, ["--db", db, "import", str(BLOCKS_LOG)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "knobs", "1x32x16x16", "--knob", "layout"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == KNOBS_LAYOUT
    result = runner.invoke(app, ["--db", db, "knobs", "1x32x16x16", "--knob", "tile_ic", "--json"])
    (entry,) = json.loads(result.stdout)
    assert [(k["value"], k["trials"], k["failed"], k["best_cost"]) for k in entry["knobs"]] == [
        ("[-1,16]", 3, 1, 25.0 * 1e-6),
        ("[-1,8]", 2, 0, 35.0 * 1e-6),
        ("[-1,4]", 2, 0, 50.0 * 1e-6),
    ]
    assert entry["coverage"] == {
        "trials": 7,
        "distinct_configs": 7,
        "sp_factorisations": {"tile_ic": 3, "tile_oc": 3, "tile_ow": 1},
        "space_size": None,
    }
    assert entry["chosen_config"] == 50


def _trial(ic: int, oc: int, cost: float, error_no: int = 0, index: int = 0) -> KnobTrial:
    knobs: dict[str, tuple[str, object]] = {
        "tile_ic": ("sp", [-1, ic]),
        "tile_oc": ("sp", [-1, oc]),
    }
    return KnobTrial(knobs, error_no, cost, index)


def test_implied_layouts_follow_topi_x86_alter_layout() -> None:
    knobs = _trial(16, 8, 1.0).knobs
    assert implied_layouts("conv2d_NCHWc.x86", knobs) == {
        "layout:data": "NCHW16c",
        "layout:kernel": "OIHW16i8o",
        "layout:out": "NCHW8c",
    }
    assert implied_layouts("conv2d_NCHWc_int8.x86", knobs)["layout:kernel"] == "OIHW4i8o4i"
    assert implied_layouts("depthwise_conv2d_NCHWc.x86", knobs)["layout:kernel"] == "OIHW1i8o"
    assert implied_layouts("conv2d_nchw.cuda", knobs) == {}
    assert implied_layouts("conv2d_NCHWc.x86", {"tile_ic": ("sp", [-1, "x"])}) == {}


def test_median_and_chosen_of_a_knob_value() -> None:
    trials = [_trial(4, 8, 3.0), _trial(4, 8, 1.0), _trial(4, 8, 2.0), _trial(8, 8, 9.0, 6)]
    rows = knob_values("mm", trials, chosen=trials[1])
    by_value = {(r.knob, r.value): r for r in rows}
    four = by_value[("tile_ic", "[-1,4]")]
    assert (four.trials, four.valid, four.best, four.median, four.chosen) == (3, 3, 1.0, 2.0, True)
    eight = by_value[("tile_ic", "[-1,8]")]
    assert (eight.trials, eight.valid, eight.best, eight.median, eight.chosen) == (
        1,
        0,
        None,
        None,
        False,
    )
    assert coverage(trials).configs == 1  # every trial above has config index 0


def test_values_without_a_valid_trial_sort_by_their_numbers() -> None:
    """They sorted as text: [-1,16] before [-1,2]."""
    trials = [_trial(ic, 8, 1.0, error_no=6) for ic in (16, 2, 4)]
    rows = [r.value for r in knob_values("mm", trials, chosen=None) if r.knob == "tile_ic"]
    assert rows == ["[-1,2]", "[-1,4]", "[-1,16]"]
