"""Did tuning converge? Best-so-far curves and a verdict per (target group, layer, template).

Pure: sequences of trials in, curves and summaries out.

Trial order
-----------
AutoTVM appends one line per measured trial, so within one log file line order is trial order
(timestamps are not: a batch is written when measured, and real logs hold non-monotonic
timestamps). Records of one sequence (one template of one layer on one target group) may come
from several sources (files imported separately, runs on several machines, a log imported again
after it grew). The order is then:

1. records are split by source; a source's records keep line order (their record ids, which the
   importer assigns in line order);
2. sources are ordered by the earliest timestamp among *their records of this sequence* (the
   start of that source's run on this template), ties by import order (source id).

So two runs are never interleaved: each run is a block, and blocks follow each other in the order
they started. A record stored once but present in two files belongs to the file imported first.

Trials are numbered from 1 over all trials, failed ones included, as AutoTVM's tuner counts them
(`Tuner.tune` counts every measurement towards `n_trial` and `early_stopping`). A trial improves
the best when it is valid (error_no 0) and its mean cost is strictly lower than every earlier
valid trial's, the rule AutoTVM's tuner uses for its best (`flops > best_flops`) and
ApplyHistoryBest uses for a slot (ties keep the earlier record).

Verdict
-------
* `every trial failed`: trials, none of them valid (what to look at is why: `tunelog errors`);
* `too few valid trials`: fewer than MIN_VALID_TRIALS (64) valid trials;
* `still improving`: the best improved by at least SIGNIFICANT_GAIN (1 %) within the last
  RECENT_SHARE (20 %) of the trials;
* `converged`: otherwise;
* `best-only log: no trial history`: every trial of the sequence comes from best-only sources,
  files holding about one trial per (target, workload) (`is_best_only`): TopHub packages,
  pick_best output, graph-tuner output. Their one record is a pick from a run the file does
  not hold, so "too few valid trials (1/1)" would misread a 500-trial run's pick.

Why these numbers (measured on the 30 sequences of at least 200 trials in ../shared/corpus: the
dan-zheng, WoongQ, TLCBench t4 and platinum-8124m, nnfusion and CharlieCurry full logs). Every
prefix of such a sequence (cut every 50 trials, at least 20 valid) was judged by the rule, then
compared with the final best of the whole sequence:

* prefixes judged `still improving` went on to get at least 5 % faster in 48 % of cases (87
  prefixes, median later gain 4.8 %); prefixes judged `converged` in 16 % (372 prefixes, median
  gain 0). Counting any improvement in the window, not only >= 1 %, gives 44 % / 15 %: sub-1 %
  steps are mostly measurement noise, so they do not keep a sequence `still improving`.
* with few valid trials no verdict holds: cut at exactly k valid trials, prefixes judged
  `converged` still gained more than 5 % later in 67 % of cases at k = 20 (median gain 39 %), 58 %
  at k = 64 (median 8.5 %) and 25 % at k = 200 (median 0). 64 is where the rule starts to separate
  the two cases (median later gain 54 % for `still improving`, 8.5 % for `converged`) and is also
  AutoTVM's XGBTuner `plan_size`: its first 64 trials are random samples, before the cost model
  guides the search. A `converged` verdict says "no recent progress", not "optimal": the full
  config space size is not in the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from tunelog.rules.bestsofar import BestSoFar

MIN_VALID_TRIALS = 64
RECENT_SHARE = 0.2
SIGNIFICANT_GAIN = 0.01

CONVERGED = "converged"
STILL_IMPROVING = "still improving"
TOO_FEW = "too few valid trials"
ALL_FAILED = "every trial failed"
BEST_ONLY = "best-only log: no trial history"
NOT_TUNED = "not tuned"  # no trial at all: what a tuning script needs to hear
BEST_ONLY_MEAN = 1.5
VERDICTS = (CONVERGED, STILL_IMPROVING, TOO_FEW, ALL_FAILED, BEST_ONLY, NOT_TUNED)


class Trial(NamedTuple):
    """One measured trial: its place in trial order (any sortable key), mean cost, error number."""

    order: tuple[float, int, int]
    mean_cost: float
    error_no: int


def trial_order(source_start: float, source_id: int, record_id: int) -> tuple[float, int, int]:
    """The sort key of a trial: its source's run start, the source, then line order (record id)."""
    return (source_start, source_id, record_id)


def source_starts(rows: Iterable[tuple[int, float]]) -> dict[int, float]:
    """Each source's run start in one sequence: the earliest timestamp of its (source, ts) rows."""
    starts: dict[int, float] = {}
    for source_id, timestamp in rows:
        known = starts.get(source_id)
        if known is None or timestamp < known:
            starts[source_id] = timestamp
    return starts


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One trial on the best-so-far curve."""

    trial: int  # 1-based, over all trials
    cost: float | None  # this trial's mean cost; None when it failed
    error_no: int
    best: float | None  # best valid mean cost up to and including this trial
    improved: bool  # this trial set a new best


def best_so_far(trials: Iterable[tuple[float, int]]) -> list[CurvePoint]:
    """The best-so-far curve of (mean_cost, error_no) pairs given in trial order: each trial
    with the best up to it, by the best-so-far rule (`rules.bestsofar.BestSoFar`)."""
    points: list[CurvePoint] = []
    run = BestSoFar()
    for cost, error_no in trials:
        improved = run.add(cost, error_no)
        best = run.best if run.improvements else None
        valid_cost = cost if error_no == 0 else None
        points.append(CurvePoint(run.trials, valid_cost, error_no, best, improved))
    return points


# A NamedTuple, not a frozen dataclass: `workloads` keeps one per (target group, workload),
# 80k at 80k workloads; a frozen dataclass costs several times more to build, and a tuple of
# plain values is one the cyclic garbage collector stops traversing.
class Convergence(NamedTuple):
    """A sequence's summary: trials, valid trials, best, when it was reached, and the verdict."""

    trials: int
    valid: int
    best_cost: float | None
    trials_to_best: int | None  # 1-based number of the trial that reached the best
    last_significant: int | None  # last trial that improved the best by >= SIGNIFICANT_GAIN
    verdict: str

    @property
    def since_last_improvement(self) -> int | None:
        """Trials measured after the best was reached (None when nothing was valid)."""
        if self.trials_to_best is None:
            return None
        return self.trials - self.trials_to_best

    def as_dict(self) -> dict[str, object]:
        """Plain JSON-ready data."""
        return {
            "trials": self.trials,
            "valid": self.valid,
            "best_cost": self.best_cost,
            "trials_to_best": self.trials_to_best,
            "since_last_improvement": self.since_last_improvement,
            "verdict": self.verdict,
        }


@dataclass(slots=True)
class Progress(BestSoFar):
    """Accumulates a sequence trial by trial, or run by run (the best-so-far rule:
    `rules.bestsofar.BestSoFar`), and summarises it with a verdict."""

    def summary(self) -> Convergence:
        """The summary and verdict of the trials seen so far (`run_summary`)."""
        return run_summary(self.trials, self.valid, self.improvements)


class RunMarks(NamedTuple):
    """What a sequence's improvements say of it: the trial that reached its best, that best,
    and its last significant improvement (all None when no trial was valid). The importer
    stores them beside each run (`trial_runs`, schema migration 15), so a listing summarises
    80k runs without reading their improvements."""

    trials_to_best: int | None
    best_cost: float | None
    last_significant: int | None


NO_MARKS = RunMarks(None, None, None)


def run_marks(improvements: Sequence[Sequence[Any]]) -> RunMarks:
    """`RunMarks` of a sequence's improvements, `(trial number, new best)` in order (tuples,
    or lists from JSON)."""
    if not improvements:
        return NO_MARKS
    # The first valid trial counts as significant: before it there was no config at all.
    steps = iter(improvements)
    last_significant, before = next(steps)
    for number, after in steps:
        if is_significant_gain(before, after):
            last_significant = number
        before = after
    to_best, best_cost = improvements[-1]
    return RunMarks(to_best, best_cost, last_significant)


def run_summary(
    trials: int,
    valid: int,
    improvements: Sequence[Sequence[Any]],  # (int, float) pairs: tuples, or lists from JSON
    *,
    best_only: bool = False,
) -> Convergence:
    """The summary and verdict of a sequence from its counts and improvements, `(trial
    number, new best)` in order (`Progress.summary`'s, and a stored run's columns as they
    are).

    `best_only`: every trial comes from best-only sources (verdict BEST_ONLY).
    """
    return marked_summary(trials, valid, run_marks(improvements), best_only=best_only)


def marked_summary(
    trials: int,
    valid: int,
    marks: tuple[int | None, float | None, int | None],  # a RunMarks, or its stored columns
    *,
    best_only: bool = False,
) -> Convergence:
    """`run_summary` from the sequence's `run_marks` (a stored run's columns: the listings
    summarise 80k stored runs without reading their improvements)."""
    to_best, best_cost, last_significant = marks
    return Convergence(
        trials,
        valid,
        best_cost,
        to_best,
        last_significant,
        BEST_ONLY if best_only else verdict(trials, valid, last_significant),
    )


def is_significant_gain(before: float, after: float) -> bool:
    """True when a new best `after` is at least SIGNIFICANT_GAIN faster than `before`.

    `before / after - 1 >= gain`, multiplied out: a valid record may cost 0 (or -0.0), and a
    drop to 0 from any positive cost is an unbounded gain, not a ZeroDivisionError.
    """
    return before - after >= SIGNIFICANT_GAIN * after


def verdict(trials: int, valid: int, last_significant: int | None) -> str:
    """`not tuned`, `every trial failed`, `too few valid trials`, `still improving` or
    `converged` (rule: module docstring)."""
    if trials == 0:
        return NOT_TUNED
    if valid == 0:
        return ALL_FAILED
    if valid < MIN_VALID_TRIALS:
        return TOO_FEW
    if last_significant is not None and last_significant > trials * (1.0 - RECENT_SHARE):
        return STILL_IMPROVING
    return CONVERGED


def summarize(trials: Iterable[Trial], *, best_only: bool = False) -> Convergence:
    """The summary of trials given in any order (sorted by their `order` here); `best_only`:
    every trial comes from best-only sources (verdict BEST_ONLY)."""
    progress = Progress()
    for trial in sorted(trials, key=lambda t: t.order):
        progress.add(trial.mean_cost, trial.error_no)
    return run_summary(progress.trials, progress.valid, progress.improvements, best_only=best_only)


@dataclass(slots=True)
class SourceRun:
    """One source's trials of a sequence: where its run starts, and its progress."""

    source_id: int
    start: float
    progress: Progress
    best_only: bool = False  # the source is a best-only file (`is_best_only`)


def is_best_only(trials_per_sequence: Iterable[int]) -> bool:
    """A source of picks, not runs: at most BEST_ONLY_MEAN trials per (target, workload).

    TopHub and pick_best files hold exactly one record per (target, workload); a graph-tuner
    output holds one per layer occurrence, and occurrences of one workload may keep different
    configs (TLCBench's resnet_50 graph log: 22 distinct records of 20 workloads). A tuning run
    measures tens to thousands of configs per task.
    """
    counts = list(trials_per_sequence)
    return is_best_only_total(sum(counts), len(counts))


def is_best_only_total(trials: int, sequences: int) -> bool:
    """`is_best_only` from a source's trials summed over its `sequences` (target, workload)s
    (what SQL's SUM and COUNT give without listing every sequence)."""
    return sequences > 0 and trials <= BEST_ONLY_MEAN * sequences


def join_runs(runs: Sequence[SourceRun]) -> Convergence:
    """The summary of a sequence made of several sources' runs (ordered as in the docstring)."""
    best_only = bool(runs) and all(run.best_only for run in runs)
    if len(runs) == 1:  # most sequences: a run joined to nothing is itself
        progress = runs[0].progress
    else:
        progress = Progress()
        for run in sorted(runs, key=lambda r: (r.start, r.source_id)):
            progress.extend(run.progress)
    return run_summary(progress.trials, progress.valid, progress.improvements, best_only=best_only)
