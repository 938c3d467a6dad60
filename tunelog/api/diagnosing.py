"""Why layers run untuned configs: failed trials, TVM's "not tuned" messages, task lists."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from tunelog.api.listing import each_layer
from tunelog.store import Filters, Store
from tunelog.targets import parse_target

if TYPE_CHECKING:
    from tunelog.diagnosereport import DiagnoseReport
    from tunelog.layers import Layer, TemplateResult
    from tunelog.tasklist import TaskProgress


@dataclass
class ErrorSummary:
    """Failures of one template on one layer, with a diagnosis."""

    layer: Layer
    template: TemplateResult
    diagnosis: list[str]

    @property
    def error_counts(self) -> dict[str, int]:
        """Error name -> records, failures only, most frequent first."""
        return dict(_named_counts(tuple(self.template.errors.items())))


@lru_cache(maxsize=4096)  # a dozen distinct counts among 38k templates at 80k workloads
def _named_counts(counts: tuple[tuple[int, int], ...]) -> tuple[tuple[str, int], ...]:
    """`ErrorSummary.error_counts` of these (error number, records) items."""
    from tunelog.errorcodes import error_name

    failed = [(n, c) for n, c in counts if n != 0]
    return tuple((error_name(n), c) for n, c in sorted(failed, key=lambda nc: (-nc[1], nc[0])))


def errors(store: Store, filters: Filters | None = None) -> list[ErrorSummary]:
    """Every template with failed records, per layer, most failures first."""
    from tunelog.collecting import young_collected_less

    with young_collected_less():  # the errors are held while more are made (tunelog.collecting)
        return sorted(each_error(store, filters), key=lambda e: -e.template.failed)


def each_error(store: Store, filters: Filters | None = None) -> Iterator[ErrorSummary]:
    """`errors` in layer order, one at a time (sorted stably by failures, `errors`' order).

    A row is a template's: with --template or --task, only the selected templates' rows (a
    layer is shown for one of them, its other templates are not what was asked about)."""
    from tunelog.rules.failedrecords import has_failed_records

    selected = filters.matches_task if filters is not None and filters.selects_tasks else None
    # Only the layers with a failed record are read (the others have no template to list).
    for layer in each_layer(store, filters, failing_only=True):
        for template in layer.templates:
            if selected is not None and not selected(template.workload.task_name):
                continue
            if has_failed_records(template.errors):
                yield ErrorSummary(layer, template, _diagnosis(layer, template))


def _diagnosis(layer: Layer, template: TemplateResult) -> list[str]:
    from tunelog.failurecauses import cause_of_failures, diagnose

    cause = cause_of_failures(template.errors)
    all_costs: list[float] = []
    if cause is not None and cause in template.all_cost_range:
        low, high = template.all_cost_range[cause]
        all_costs = [low] if low == high else [low, high]
    return diagnose(template.errors, all_costs=all_costs, answered_by=_answered_by(layer, template))


def _answered_by(layer: Layer, template: TemplateResult) -> str | None:
    """What apply_history_best uses for the layer when this template never measured."""
    if layer.winner is None:
        return None  # the layer really runs a fallback config
    if layer.winner is template and template.chosen is not None:
        return (
            "No valid measurement on these targets; apply_history_best answers with a record "
            f"tuned for another target ({template.chosen.source}:{template.chosen.line})."
        )
    return f"No valid measurement for this template; the layer uses {layer.winner.name}."


def diagnose_untuned(
    store: Store,
    text: str,
    *,
    target: str | None = None,
    show_path: Callable[[str], str] = str,
) -> DiagnoseReport:
    """Why the database does not answer each workload TVM reported untuned (`tunelog diagnose`).

    `text`: TVM's console output ("Cannot find tuning records for" / "Cannot find config for"
    messages, any logging prefix), or a task list (`[[task_name, *args], ...]` JSON) compiled
    for `target`. One reason per (target, workload): see `tunelog.diagnosis`. `show_path`
    writes a stored source path in the details (the CLI shows it relative). Raises
    NotBuildOutputError for a database or a tuning log, TargetRequiredError for a task list
    without `target`.
    """
    from tunelog import optionvalues
    from tunelog.diagnosereport import diagnose_text
    from tunelog.exceptions import NotBuildOutputError
    from tunelog.recordindex import RecordIndex
    from tunelog.tasklists import wrong_input

    if target is not None:  # as `--target` is checked: a target TVM would refuse
        optionvalues.target_string(target)
    refusal = wrong_input(text)
    if refusal is not None:  # before the database is read: nothing to diagnose
        raise NotBuildOutputError(refusal)
    index = RecordIndex(*store.layer_inputs(), show_path=show_path)
    return diagnose_text(index, text, target=target)


def tuning_progress(
    store: Store,
    tasks: str | Sequence[tuple[object, ...]],
    target: str,
    *,
    need_trials: int | None = None,
) -> list[TaskProgress]:
    """Trials already done per task of a task list on `target` (`tunelog tasks`).

    `tasks`: the task list's JSON text, or its workloads as tuples. With `need_trials`, only
    the tasks with fewer valid trials than that (what a tuning script still has to tune).
    Raises NotATaskListError, and InvalidValueError for a target TVM would refuse.
    """
    from tunelog import optionvalues
    from tunelog.store.trials import trial_runs
    from tunelog.tasklist import needing_trials, task_progress
    from tunelog.tasklists import read_tasks
    from tunelog.tvmmessages import as_tuple

    optionvalues.target_string(target)  # as `--target` is checked: a target TVM would refuse
    if need_trials is not None:
        optionvalues.at_least_one(need_trials, "need_trials")
    # Tuples of lists (a workload written out by hand) as a task list's JSON reads: lists as
    # tuples, all the way down (a workload is looked up by its hash).
    workloads = (
        read_tasks(tasks)
        if isinstance(tasks, str)
        else [tuple(as_tuple(part) for part in task) for task in tasks]
    )
    asked = parse_target(target)
    inputs = store.layer_inputs()
    known, infos, _, slots = inputs
    group_of = {
        target_id: (parsed.keys, parsed.model)
        for target_id, text in known
        for parsed in (parse_target(text),)
    }
    own = [text for target_id, text in known if group_of[target_id] == (asked.keys, asked.model)]
    found = task_progress(workloads, asked, infos, trial_runs(store, group_of), slots, own)
    if any(task.answer is None for task in found):
        # A task with no answer of its own may not be needed: relay picks another template of
        # its layer that is tuned (as `diagnose` says of it: "answered through").
        from dataclasses import replace

        from tunelog.diagnosis import layer_answered_by
        from tunelog.recordindex import RecordIndex

        index = RecordIndex(*inputs)
        for number, task in enumerate(found):
            other = layer_answered_by(index, asked, task.workload) if task.answer is None else None
            if other is not None:
                found[number] = replace(task, layer_answer=(other[0].task_name, other[1]))
    return found if need_trials is None else needing_trials(found, need_trials)
