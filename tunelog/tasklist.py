"""Resuming tuning: what a task list has already been tuned on one target (apache/tvm#4150).

Pure. A task list is `[[task_name, *args], ...]` (what users dump from
`autotvm.task.extract_from_program`); a task's workload is matched exactly (task name and
arguments, lists as tuples: the key AutoTVM writes and reads). Its trials are the records of that
workload on targets of the asked target's group (same keys and -model, as `workloads` counts
them), summarised with the convergence rule of `tunelog.convergence` (runs of several files
joined in trial order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tunelog.convergence import Convergence, Progress, SourceRun, join_runs
from tunelog.targets import Target
from tunelog.tvmmessages import Workload, as_json_list, as_tuple
from tunelog.versions import V02
from tunelog.workloadinfo import WorkloadInfo

GroupKey = tuple[tuple[str, ...], str]


@dataclass(frozen=True)
class TaskProgress:
    """One task of a task list: its place in the list, workload, and trials so far."""

    index: int
    workload: Workload
    convergence: Convergence

    @property
    def failed(self) -> int:
        """Trials with a non-zero error number."""
        return self.convergence.trials - self.convergence.valid

    def needs(self, valid_trials: int) -> int:
        """Valid trials still missing to reach `valid_trials` (0: enough)."""
        return max(0, valid_trials - self.convergence.valid)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: `index` in the task list, `task` as the list gave it, counts, verdict."""
        summary = self.convergence
        return {
            "index": self.index,
            "task": as_json_list(self.workload),
            "trials": summary.trials,
            "valid": summary.valid,
            "failed": self.failed,
            "best_cost": summary.best_cost,
            "trials_to_best": summary.trials_to_best,
            "verdict": summary.verdict,
        }


def task_progress(
    tasks: Sequence[Workload],
    target: Target,
    workloads: Iterable[WorkloadInfo],
    runs: Mapping[tuple[GroupKey, int], Sequence[SourceRun]],
) -> list[TaskProgress]:
    """Each task's trials on `target`'s group, in task-list order (module docstring)."""
    exact: dict[tuple[str, object], int] = {}
    for w in workloads:
        if w.version == V02:
            exact.setdefault((w.task_name, as_tuple(w.args)), w.id)
    group = (target.keys, target.model)
    found: list[TaskProgress] = []
    for index, task in enumerate(tasks):
        workload_id = exact.get((str(task[0]), task[1:]))
        parts = runs.get((group, workload_id)) if workload_id is not None else None
        summary = join_runs(parts) if parts else Progress().summary()
        found.append(TaskProgress(index, task, summary))
    return found


def needing_trials(found: Iterable[TaskProgress], valid_trials: int) -> list[TaskProgress]:
    """The tasks with fewer than `valid_trials` valid trials: the ones a tuning script runs."""
    return [task for task in found if task.needs(valid_trials) > 0]
