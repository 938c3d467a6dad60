"""Convergence: best-so-far curves, trials to best, the verdict, and trial order across sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.conftest import CORPUS, SAMPLE_LOGS, runner
from tunelog import api
from tunelog.cli import app
from tunelog.convergence import (
    ALL_FAILED,
    BEST_ONLY,
    CONVERGED,
    MIN_VALID_TRIALS,
    NOT_TUNED,
    SIGNIFICANT_GAIN,
    STILL_IMPROVING,
    TOO_FEW,
    Convergence,
    Progress,
    RunMarks,
    SourceRun,
    best_so_far,
    join_runs,
    run_marks,
    run_summary,
)
from tunelog.store import Store
from tunelog.store.codec import improvements_text

FAILED = 1e9


def test_best_so_far_matches_a_hand_computation() -> None:
    trials = [(5.0, 0), (FAILED, 6), (4.0, 0), (4.0, 0), (4.5, 0), (3.0, 0), (FAILED, 1)]
    points = best_so_far(trials)
    assert [p.best for p in points] == [5.0, 5.0, 4.0, 4.0, 4.0, 3.0, 3.0]
    assert [p.improved for p in points] == [True, False, True, False, False, True, False]
    assert [p.cost for p in points] == [5.0, None, 4.0, 4.0, 4.5, 3.0, None]
    assert [p.trial for p in points] == [1, 2, 3, 4, 5, 6, 7]


def test_failures_before_the_first_valid_trial_have_no_best() -> None:
    points = best_so_far([(FAILED, 4), (FAILED, 6), (2.0, 0)])
    assert [p.best for p in points] == [None, None, 2.0]
    summary = _summary([(FAILED, 4), (FAILED, 6), (2.0, 0)])
    assert (summary.trials, summary.valid, summary.trials_to_best) == (3, 1, 3)
    assert summary.since_last_improvement == 0


def _summary(trials: list[tuple[float, int]]) -> Convergence:
    progress = Progress()
    for cost, error_no in trials:
        progress.add(cost, error_no)
    return progress.summary()


def _decreasing_until(n: int, last_gain_at: int, gain: float = 0.05) -> list[tuple[float, int]]:
    """n valid trials; the best improves by `gain` at trials 1..last_gain_at, then never."""
    cost = 1.0
    trials: list[tuple[float, int]] = []
    for number in range(1, n + 1):
        if number <= last_gain_at:
            cost /= 1 + gain
            trials.append((cost, 0))
        else:
            trials.append((cost * 2, 0))
    return trials


@pytest.mark.parametrize(
    ("trials", "verdict"),
    [
        pytest.param([], NOT_TUNED, id="no trials"),
        pytest.param([(FAILED, 6)] * 200, ALL_FAILED, id="only failures"),
        pytest.param(_decreasing_until(MIN_VALID_TRIALS - 1, 1), TOO_FEW, id="63 valid"),
        pytest.param(_decreasing_until(MIN_VALID_TRIALS, 1), CONVERGED, id="64 valid, best first"),
        pytest.param(_decreasing_until(100, 80), CONVERGED, id="last gain at 80 of 100"),
        pytest.param(_decreasing_until(100, 81), STILL_IMPROVING, id="last gain at 81 of 100"),
        pytest.param(
            _decreasing_until(100, 50) + [(1.0 / 1.05**50 / 1.005, 0)] * 1,
            CONVERGED,
            id="a 0.5% gain at the end is noise",
        ),
        pytest.param(
            [(FAILED, 6)] * 300 + _decreasing_until(70, 1), STILL_IMPROVING, id="first valid late"
        ),
    ],
)
def test_verdict(trials: list[tuple[float, int]], verdict: str) -> None:
    assert _summary(trials).verdict == verdict


trial_lists = st.lists(
    st.tuples(st.sampled_from([1.0, 2.0, 3.0, 0.5, 0.499, FAILED]), st.sampled_from([0, 0, 1, 6])),
    max_size=40,
)


@given(trial_lists, trial_lists, trial_lists)
def test_runs_joined_equal_one_sequence(
    a: list[tuple[float, int]], b: list[tuple[float, int]], c: list[tuple[float, int]]
) -> None:
    """Summaries of separate runs joined in order equal the summary of the concatenation."""
    whole = _summary(a + b + c)
    runs = [SourceRun(source_id, start, Progress()) for source_id, start in ((1, 5.0), (2, 5.0))]
    runs.insert(0, SourceRun(3, 1.0, Progress()))  # starts first, whatever its source id
    for run, part in zip(runs, (a, b, c), strict=True):
        for cost, error_no in part:
            run.progress.add(cost, error_no)
    assert join_runs(list(reversed(runs))) == whole
    expected_best = [p.best for p in best_so_far(a + b + c)]
    assert whole.best_cost == (expected_best[-1] if expected_best else None)


@pytest.mark.parametrize("best_only", [False, True])
@pytest.mark.parametrize(
    "trials",
    [
        pytest.param([], id="no trials"),
        pytest.param([(FAILED, 6)] * 3, id="only failures"),
        pytest.param([(2.0, 0)], id="one valid"),
        pytest.param([(2.0, 0), (1.99, 0), (1.0, 0), (0.999, 0)], id="gains and noise"),
        pytest.param([(0.0, 0), (FAILED, 1)], id="a zero cost"),
        pytest.param(_decreasing_until(100, 81), id="still improving"),
        pytest.param([*_decreasing_until(100, 50), (1.0 / 1.05**50 / 1.005, 0)], id="converged"),
        pytest.param([(FAILED, 6)] * 300 + _decreasing_until(70, 1), id="first valid late"),
    ],
)
def test_a_stored_run_summarised_from_its_columns_equals_its_progress_summary(
    trials: list[tuple[float, int]], best_only: bool
) -> None:
    """`run_summary` of `trial_runs`' columns (improvements as JSON gives them back) is what
    a Progress of the same trials and `join_runs` of that one run say."""
    progress = Progress()
    for cost, error_no in trials:
        progress.add(cost, error_no)
    stored = json.loads(improvements_text(progress.improvements))
    summary = run_summary(progress.trials, progress.valid, stored, best_only=best_only)
    run = SourceRun(1, 0.0, progress, best_only=best_only)
    assert summary == join_runs([run])
    expected = progress.summary()
    assert summary == (expected._replace(verdict=BEST_ONLY) if best_only else expected)


# -- through the store --------------------------------------------------------------------------


def _hand_trials_to_best(path: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """Per (task, args): (trial that reached the best, trials), by reading the log line by line."""
    seen: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        costs, error_no = record["result"][0], record["result"][1]
        key = (record["input"][1], json.dumps(record["input"][2]))
        seen.setdefault(key, []).append((sum(costs) / len(costs), error_no))
    found: dict[tuple[str, str], tuple[int, int]] = {}
    for key, trials in seen.items():
        best, at = None, 0
        for number, (cost, error_no) in enumerate(trials, 1):
            if error_no == 0 and (best is None or cost < best):
                best, at = cost, number
        found[key] = (at, len(trials))
    return found


def test_workloads_json_gives_each_template_its_trials_to_best(store: Store) -> None:
    log = SAMPLE_LOGS / "x86_mini_llvm.log"
    api.import_paths(store, [str(log)])
    found = api.layers(store)
    rows = [api.layer_as_dict(lay, api.layer_convergence(store, found)) for lay in found]
    hand = _hand_trials_to_best(log)
    got = {
        (t["template"], json.dumps(t["args"])): (
            t["convergence"]["trials_to_best"],
            t["convergence"]["trials"],
        )
        for row in rows
        for t in row["templates"]  # type: ignore[attr-defined]
    }
    assert got == hand
    # The winners' (relay's pick) trials to best, as the table shows them.
    assert [row["trials_to_best"] for row in rows] == [6, 35, 6, 34]
    assert {row["verdict"] for row in rows} == {TOO_FEW}  # 40 trials per template < 64


def _line(task: str, cost: float, error_no: int, timestamp: float, index: int) -> str:
    return json.dumps(
        {
            "input": ["llvm -keys=cpu", task, [["TENSOR", [64, 64], "float32"]], {}],
            "config": {"index": index, "code_hash": None, "entity": [["tile", "sp", [-1, index]]]},
            "result": [[cost], error_no, 1.0, timestamp],
            "version": 0.2,
            "tvm_version": "0.9.dev0",
        }
    )


def test_trial_order_puts_the_earlier_run_first_whatever_the_import_order(
    store: Store, tmp_path: Path
) -> None:
    late = tmp_path / "late.log"  # a second run, started later, imported first
    late.write_text(
        "\n".join(
            [_line("mm", 3.0, 0, 2000.0, 1), _line("mm", 1.0, 0, 1999.0, 2)]  # unsorted stamps
        )
        + "\n"
    )
    early = tmp_path / "early.log"
    early.write_text(
        "\n".join([_line("mm", 4.0, 0, 1000.0, 3), _line("mm", FAILED, 6, 1001.0, 4)]) + "\n"
    )
    api.import_paths(store, [str(late), str(early)])
    (layer,) = api.layers(store)
    (curve,) = api.curves(store, layer)
    assert [(r.config_index, r.best) for r in curve.rows] == [
        (3, 4.0),
        (4, 4.0),
        (1, 3.0),
        (2, 1.0),
    ]
    assert (curve.summary.trials_to_best, curve.summary.trials) == (4, 4)
    # The one-pass summary of `workloads` orders the runs the same way.
    assert api.layer_convergence(store, [layer]).of_layer(layer) == curve.summary


CURVE_TABLE = """\
cpu  64x64  mm  (relay picks it)
3 trials, 2 valid; best 2.00 s at trial 3, 0 trials since; too few valid trials
trial    source     config    cost     best so far    new best
-------  ---------  --------  -------  -------------  ----------
1        run.log:1  7         5.00 s   5.00 s         *
2        run.log:2  8         error 6  5.00 s
3        run.log:3  9         2.00 s   2.00 s         *
"""


def test_curve_command_prints_the_series(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("run.log").write_text(
        "\n".join(
            [
                _line("mm", 5.0, 0, 10.0, 7),
                _line("mm", FAILED, 6, 11.0, 8),
                _line("mm", 2.0, 0, 12.0, 9),
            ]
        )
        + "\n"
    )
    assert runner.invoke(app, ["--db", "t.db", "import", "run.log"]).exit_code == 0
    result = runner.invoke(app, ["--db", "t.db", "curve", "64x64"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == CURVE_TABLE
    result = runner.invoke(app, ["--db", "t.db", "curve", "64x64", "--json"])
    (data,) = json.loads(result.stdout)
    assert [p["best"] for p in data["series"]] == [5.0, 5.0, 2.0]
    assert (data["trials_to_best"], data["verdict"]) == (3, TOO_FEW)


@pytest.mark.parametrize(
    ("args", "message", "lines"),
    [
        (["99x99"], "Error: no layer matches '99x99'; `tunelog workloads` lists them", 1),
        (["1x"], "Error: 4 layers match '1x': ", 5),  # one line per candidate
        # A layer the filters leave out: said so, with where it is.
        (
            ["1x8192 * 10x8192", "--target-key", "cuda"],
            "Error: no layer matches '1x8192 * 10x8192' with --target-key 'cuda': the layer it "
            "names is on 'cpu' only; change or drop the filters",
            1,
        ),
        (
            ["1x", "--target-key", "cuda"],
            "Error: no layer matches '1x' with --target-key 'cuda': the 4 layers it names are on "
            "'cpu' only; change or drop the filters",
            1,
        ),
        (  # not a target filter: no target to name
            ["1x8192 * 10x8192", "--template", "winograd"],
            "Error: no layer matches '1x8192 * 10x8192' with --template 'winograd': they leave out "
            "the layer it names; change or drop the filters",
            1,
        ),
        (["99x99", "--target-key", "cuda"], "Error: no layer matches '99x99'; `tunelog", 1),
    ],
)
def test_curve_names_a_layer_or_says_what_to_do(
    tmp_path: Path, args: list[str], message: str, lines: int
) -> None:
    db = str(tmp_path / "t.db")
    runner.invoke(app, ["--db", db, "import", str(SAMPLE_LOGS / "x86_mini_llvm.log")])
    result = runner.invoke(app, ["--db", db, "curve", *args])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == lines


@pytest.mark.parametrize("name", ["1x8192*10x8192", "1x8192 *10x8192", "1x8192  *  10x8192"])
def test_a_layer_name_is_found_whatever_its_spaces(tmp_path: Path, name: str) -> None:
    """`curve "128x768*2304x768"` matched nothing; with the table's spaces it worked."""
    db = str(tmp_path / "t.db")
    runner.invoke(app, ["--db", db, "import", str(SAMPLE_LOGS / "x86_mini_llvm.log")])
    result = runner.invoke(app, ["--db", db, "curve", name])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("cpu  1x8192 * 10x8192  dense_")


def test_an_auto_scheduler_layer_is_found_as_best_shows_it(tmp_path: Path) -> None:
    """`best` shows an auto_scheduler layer's arguments `[1,8] [8,8]`, `workloads` as
    `[1, 8], [8, 8]`: `curve` took only the second (found by a new user)."""
    from tests.test_ansor import ansor_line

    log = tmp_path / "a.json"
    log.write_text(ansor_line() + "\n")
    db = str(tmp_path / "t.db")
    runner.invoke(app, ["--db", db, "import", str(log)])
    best = runner.invoke(app, ["--db", db, "best", "--json"])
    assert best.exit_code == 0
    for name in ("[1,8] [8,8]", "[1, 8], [8, 8]", "[8,8]"):
        result = runner.invoke(app, ["--db", db, "curve", name])
        assert result.exit_code == 0, (name, result.stderr)
    assert runner.invoke(app, ["--db", db, "curve", "[1,88]"]).exit_code == 1


def test_forum_paste_gets_a_verdict_per_layer(store: Store) -> None:
    paste = CORPUS / "forum" / "centernet_forum_paste.log"
    if not paste.is_file():
        pytest.skip("../shared corpus is not beside this checkout")
    api.import_paths(store, [str(paste)], repair=True)
    found = api.layers(store)
    convergence = api.layer_convergence(store, found)
    rows = [api.layer_as_dict(lay, convergence) for lay in found]
    assert len(rows) == 30  # 40 records: some layers hold several templates
    # A best-only paste: one trial per template, the pick of a run the paste does not hold.
    assert {(row["trials_to_best"], row["verdict"]) for row in rows} == {(1, BEST_ONLY)}


@pytest.mark.parametrize(
    ("improvements", "marks"),
    [
        ([], RunMarks(None, None, None)),
        ([(3, 1.0)], RunMarks(3, 1.0, 3)),  # the first valid trial is significant
        ([(1, 1.0), (5, 0.995)], RunMarks(5, 0.995, 1)),  # 0.5 % faster: noise
        ([(1, 1.0), (5, 0.99)], RunMarks(5, 0.99, 5)),  # 1 % faster: significant
        ([(1, 1.0), (4, 0.5), (9, 0.499)], RunMarks(9, 0.499, 4)),
        ([(2, 1.0), (7, 0.0)], RunMarks(7, 0.0, 7)),  # a drop to 0 is an unbounded gain
        ([[2, 1.0], [7, 0.5]], RunMarks(7, 0.5, 7)),  # lists, as JSON gives them back
    ],
)
def test_a_runs_marks_are_its_best_and_its_last_significant_improvement(
    improvements: list[tuple[int, float]], marks: RunMarks
) -> None:
    assert run_marks(improvements) == marks


@given(trial_lists)
@example([(0.5, 0), (3.0, 6), (0.499, 0)])  # its last gain is no significant one
@example([(2.0, 1), (1.0, 0), (0.5, 0), (0.499, 0), (FAILED, 6)])
def test_a_runs_marks_are_what_its_trials_say(trials: list[tuple[float, int]]) -> None:
    """`run_marks` of a run's improvements against the trials read one by one: the trial that
    reached the best, the best, and the last valid trial at least SIGNIFICANT_GAIN faster than
    every earlier one (the first valid trial included)."""
    best = to_best = last_significant = None
    for number, (cost, error_no) in enumerate(trials, 1):
        if error_no == 0 and (best is None or cost < best):
            if best is None or best / (1 + SIGNIFICANT_GAIN) >= cost:
                last_significant = number
            best, to_best = cost, number
    progress = Progress()
    for cost, error_no in trials:
        progress.add(cost, error_no)
    assert run_marks(progress.improvements) == RunMarks(to_best, best, last_significant)


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=2**62),
            st.floats(allow_nan=False, allow_infinity=False),
        ),
        max_size=6,
    )
)
def test_improvements_are_stored_as_json_dumps_writes_them(
    improvements: list[tuple[int, float]],
) -> None:
    assert improvements_text(improvements) == json.dumps(improvements)
