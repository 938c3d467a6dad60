"""The best-so-far rule: which trials improve a sequence's best, and how runs are joined.

Trials are numbered from 1 in order, failed ones included (AutoTVM's tuner counts every
measurement). A trial improves the best when it is valid (error_no 0) and its mean cost is
strictly lower than every earlier valid trial's (`rules.bestrecord.improves`). Only the
improvements are kept, `(trial number, new best)`, so runs from several sources can be
summarised apart and joined later in trial order.

The importer keeps a `BestSoFar` per (target, workload) of a file, adds each record to it
(its best record is the trial of the last improvement) and joins stored runs with `joined`;
convergence.Progress and the report's curves build on `BestSoFar` too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tunelog.rules.bestrecord import improves

Improvements = list[tuple[int, float]]


def joined(earlier: Improvements, earlier_trials: int, later: Improvements) -> Improvements:
    """The improvements of a run of `earlier_trials` trials followed by another run: the later
    run's trial numbers shifted, and only its steps that beat the earlier best kept."""
    steps = list(earlier)
    best = steps[-1][1] if steps else math.inf
    for number, cost in later:
        if cost < best:
            steps.append((earlier_trials + number, cost))
            best = cost
    return steps


@dataclass(slots=True)
class BestSoFar:
    """Accumulates a sequence trial by trial, or run by run, without keeping every trial."""

    trials: int = 0
    valid: int = 0
    # (trial number, new best) at each improvement, in order; costs strictly decrease.
    improvements: Improvements = field(default_factory=list)

    @property
    def best(self) -> float:
        """The best valid mean cost so far (infinity before the first valid trial)."""
        return self.improvements[-1][1] if self.improvements else math.inf

    def add(self, mean_cost: float, error_no: int) -> bool:
        """The next trial in order; whether it improved the best (it is the new best record)."""
        self.trials += 1
        if error_no != 0:
            return False
        self.valid += 1
        steps = self.improvements
        if steps and not improves(mean_cost, steps[-1][1]):
            return False
        steps.append((self.trials, mean_cost))
        return True

    def extend(self, later: BestSoFar) -> None:
        """Append a run whose trials all come after this one's."""
        self.improvements = joined(self.improvements, self.trials, later.improvements)
        self.trials += later.trials
        self.valid += later.valid

    def points(self) -> Improvements:
        """(trial number, best so far) at each improvement and at the last trial."""
        steps = self.improvements
        if steps and steps[-1][0] != self.trials:
            return [*steps, (self.trials, steps[-1][1])]
        return list(steps)
