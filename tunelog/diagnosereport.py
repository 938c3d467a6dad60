"""A build's output (or a task list) diagnosed workload by workload, and the one-line verdict.

Pure: reads the text with `tunelog.tvmmessages`, asks `tunelog.diagnosis` about each workload.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from tunelog.diagnoses import NOT_IN_GRAPH, REASONS, Diagnosis
from tunelog.diagnosis import diagnose_workload, layer_of
from tunelog.exceptions import TargetParseError, TargetRequiredError
from tunelog.recordindex import RecordIndex
from tunelog.targets import parse_target
from tunelog.tasklists import (
    looks_like_task_list,
    only_task_reprs,
    read_task_list,
    read_task_reprs,
)
from tunelog.tvmmessages import UnreadMessage, Workload, read_messages, workload_key


def verdict(diagnoses: Sequence[Diagnosis]) -> str:
    """One line: how many workloads are unanswered, by reason, and what to do first."""
    if not diagnoses:
        return "no untuned workload named: nothing to diagnose"
    unanswered = [d for d in diagnoses if not d.answered]
    if not unanswered:
        every = "the 1 workload" if len(diagnoses) == 1 else f"all {len(diagnoses)} workloads"
        return (
            f"the database answers {every}: a build that said otherwise read another file "
            "(export this database and build with it)"
        )
    counts: dict[str, int] = {}
    for d in unanswered:
        counts[d.reason] = counts.get(d.reason, 0) + 1
    parts = ", ".join(f"{reason} {counts[reason]}" for reason in REASONS if reason in counts)
    # A layer is tuned once for all its templates and forms: one per (target, layer key), a
    # packed form counted as its layer. One apply_graph_best never asks is tuned already.
    layers = len({_layer_to_tune(d) for d in unanswered if d.reason != NOT_IN_GRAPH})
    outside = len({_layer_to_tune(d) for d in unanswered if d.reason == NOT_IN_GRAPH})
    targets = len({d.target for d in unanswered})
    return (
        f"{len(unanswered)} of {len(diagnoses)} workloads unanswered ({parts}); "
        f"{layers} layer(s) to tune"
        + (f" (over {targets} targets)" if targets > 1 else "")
        + (
            f"; {outside} tuned layer(s) fall back under apply_graph_best (not in the graph "
            "tuner's output)"
            if outside
            else ""
        )
    )


def _layer_to_tune(diagnosis: Diagnosis) -> tuple[str, str]:
    """The (target, layer key) an unanswered workload asks to tune (a packed form's layer)."""
    workload = diagnosis.original if diagnosis.original is not None else diagnosis.workload
    return diagnosis.target, layer_of(workload)


@dataclass(frozen=True)
class DiagnoseReport:
    """Every workload named, diagnosed; the messages that could not be read; repeats skipped."""

    diagnoses: list[Diagnosis]
    unread: list[UnreadMessage]
    repeats: int = 0

    @property
    def unanswered(self) -> list[Diagnosis]:
        """The diagnoses the database does not answer."""
        return [d for d in self.diagnoses if not d.answered]


def diagnose_text(index: RecordIndex, text: str, *, target: str | None = None) -> DiagnoseReport:
    """Diagnose TVM's console output, or a task list (JSON, or tasks as Python prints them)
    compiled for `target`.

    Raises TargetRequiredError for a task list without a target, NotATaskListError for JSON
    that is not a task list, TargetParseError for a bad `target`.
    """
    read = read_messages(text.splitlines())
    # Tasks as Python prints them, when the text names no untuned operator: a task list too,
    # given with its target or alone (a tuned build's output that printed its tasks is output).
    printed = [] if read.messages or read.unread else read_task_reprs(text)
    if printed and target is None and not only_task_reprs(text):
        printed = []
    if looks_like_task_list(text) or printed:
        workloads = printed or read_task_list(text)
        if target is None:
            raise TargetRequiredError(
                "a task list does not say which target it compiles for: pass --target "
                "(e.g. --target 'llvm -mcpu=core-avx2')"
            )
        parse_target(target)
        first: dict[Hashable, Workload] = {}
        for workload in workloads:  # a workload listed twice is diagnosed once
            first.setdefault(workload_key(workload), workload)
        unique = list(first.values())
        return DiagnoseReport(
            [diagnose_workload(index, target, w) for w in unique], [], len(workloads) - len(unique)
        )
    diagnoses: list[Diagnosis] = []
    unread = list(read.unread)
    # A build that printed apply_graph_best's warning ran under it: relay's own messages of
    # the same build (DEBUG) were asked of the graph tuner's output too.
    under_graph = any(message.graph for message in read.messages)
    for message in read.messages:
        try:
            diagnoses.append(
                diagnose_workload(
                    index,
                    message.target,
                    message.workload,
                    line=message.line,
                    direct=message.direct,
                    graph=message.graph or (under_graph and not message.direct),
                    ansor=message.ansor,
                )
            )
        except TargetParseError as exc:
            unread.append(UnreadMessage(message.line, f"bad target: {exc}"))
    unread.sort()
    return DiagnoseReport(diagnoses, unread, read.repeats)
