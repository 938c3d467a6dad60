"""Resuming tuning: what a task list has already been tuned on one target (apache/tvm#4150).

Pure. A task list is `[[task_name, *args], ...]` (what users dump from
`autotvm.task.extract_from_program`); a task's workload is matched exactly (task name and
arguments, lists as tuples: the key AutoTVM writes and reads). Its trials are the records of that
workload on targets of the asked target's group (same keys and -model, as `workloads` counts
them), summarised with the convergence rule of `tunelog.convergence` (runs of several files
joined in trial order). Beside them, each task's answer: the record apply_history_best returns
for the asked target (`layers.query`), which may be another machine's when the task has no
trials of its own, or none faster.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from tunelog.convergence import Convergence, Progress, SourceRun, join_runs
from tunelog.layers import SlotWinner, TargetGroup, query
from tunelog.machines import cross_machine_warning
from tunelog.targets import Target, parse_target
from tunelog.tvmmessages import Workload, as_json_list, workload_key
from tunelog.versions import V02
from tunelog.workloadinfo import WorkloadInfo

GroupKey = tuple[tuple[str, ...], str]


@dataclass(frozen=True)
class TaskProgress:
    """One task of a task list: its place in the list, workload, and trials so far, and the
    record TVM answers it with for the asked target (`answer`; None: a fallback config)."""

    index: int
    workload: Workload
    convergence: Convergence
    answer: SlotWinner | None = None
    # Why the answer is not one of the task's trials: measured on a target of another group.
    answer_warning: str | None = None
    # With no answer: the template relay uses for the task's layer instead (another template
    # of the layer, tuned: this one's fallback config is never used), and its answer.
    layer_answer: tuple[str, SlotWinner] | None = None

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
            "answer": None
            if self.answer is None
            else {
                "mean_cost": self.answer.mean_cost,
                "config_index": self.answer.config_index,
                "target": self.answer.target,
                "source": self.answer.source,
                "line": self.answer.line,
                "warnings": [self.answer_warning] if self.answer_warning else [],
            },
            # relay's choice for the layer when this template has no answer: another one's
            "layer_answered_by": None
            if self.layer_answer is None
            else {
                "template": self.layer_answer[0],
                "mean_cost": self.layer_answer[1].mean_cost,
                "config_index": self.layer_answer[1].config_index,
                "target": self.layer_answer[1].target,
                "source": self.layer_answer[1].source,
                "line": self.layer_answer[1].line,
            },
        }


def task_progress(
    tasks: Sequence[Workload],
    target: Target,
    workloads: Iterable[WorkloadInfo],
    runs: Mapping[tuple[GroupKey, int], Sequence[SourceRun]],
    slots: Mapping[tuple[str, str, int], SlotWinner],
    own_targets: Collection[str],
) -> list[TaskProgress]:
    """Each task's trials on `target`'s group (`own_targets`: its targets in the database), in
    task-list order, and its answer among the slots' holders (module docstring): an answer
    measured on a target outside the group comes with a warning."""
    exact: dict[tuple[str, Hashable], int] = {}
    for w in workloads:
        if w.version == V02:
            exact.setdefault((w.task_name, workload_key(w.args)), w.id)
    group = (target.keys, target.model)
    asked = TargetGroup(target.keys, target.model, ())
    found: list[TaskProgress] = []
    for index, task in enumerate(tasks):
        workload_id = exact.get((str(task[0]), workload_key(task[1:])))
        parts = runs.get((group, workload_id)) if workload_id is not None else None
        summary = join_runs(parts) if parts else Progress().summary()
        answer = query(slots, asked, workload_id) if workload_id is not None else None
        warning = None
        if answer is not None and answer.target not in own_targets:  # not one of its trials
            warning = cross_machine_warning(target.raw, answer.target) or (
                f"answer for {target.raw!r} was measured on {answer.target!r}, a target of "
                "another group: its trials are not counted here"
            )
        problems = () if answer is None else parse_target(answer.target).load_problems
        if answer is not None and problems:  # TVM >= 0.10 loads nothing of a file holding it
            fix = (
                "export it with --fix-targets"
                if parse_target(answer.target).fixed_by_dropping_options
                else "re-tune it on a target string TVM reads"
            )
            unloadable = (
                f"its target {answer.target!r} cannot be loaded by TVM >= 0.10 "
                f"({'; '.join(problems)}), which then loads nothing of the file: {fix}"
            )
            warning = unloadable if warning is None else f"{warning}; {unloadable}"
        found.append(TaskProgress(index, task, summary, answer, warning))
    return found


def needing_trials(found: Iterable[TaskProgress], valid_trials: int) -> list[TaskProgress]:
    """The tasks with fewer than `valid_trials` valid trials: the ones a tuning script runs."""
    return [task for task in found if task.needs(valid_trials) > 0]
