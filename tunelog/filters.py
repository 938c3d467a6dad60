"""What the filter options mean: the one definition every command and the API use.

Pure. A filter selects *records* by their own target string and task name; a command shows
what those records decide (the slots they hold, the layers they are measured in). Filters
combine as AND; an empty field matches everything.

* `target_key`: the record's target has this key (`cuda` matches `cuda -model=t4`, whose keys
  are `cuda, gpu`);
* `model`: the record's target has this `-model` value;
* `template`: the task name is exactly this (`conv2d_nchw.cuda`);
* `task`: the task name contains this text (plain, case-sensitive; no wildcards);
* `source`: the record's line was in this source's file, given by id or by a path it was
  imported from (`rules.sourcenames`: `3`, `#3`, or the path as typed, absolute or real; a
  source is every record line its file held, whoever stored it first);
* `label`: the record's line was in the file of a source imported with this `--label`;
* `target`: the record's target string is exactly this one (spaces around it aside, which no
  table shows; unlike `target_key`/`model`, which match every target that queries the same
  slots).

`source` and `label` choose files, not just records: a command answers with what importing only
the chosen files (in import order) gives, their slots, trial counts and convergence included
(`Store.selected`); the other filters then apply there. A layer (one operator on one target
group) is shown when one of its templates has a selected record on a target of the group.

`for_target` is different: it is not a selection of records but a question, "what does
`apply_history_best` answer when compiling for this target string?" (model slot first, then
the keys in order, see `rules.slots.query_order`). It combines with the others: the answer is
computed from every record, then shown only where the answering record matches the filters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from tunelog.exceptions import TargetParseError
from tunelog.optionvalues import not_empty, text
from tunelog.rules.slots import answering_slot_sql, first_held, query_slots
from tunelog.targets import Target, parse_target, query_target_problem

# The filters whose text must say something (an empty one would match nothing, or all).
TEXT_FILTERS = ("target_key", "model", "template", "task", "target")


@dataclass(frozen=True)
class Filters:
    """Which records a query covers, and optionally the target string it answers for."""

    target_key: str | None = None
    model: str | None = None
    template: str | None = None
    task: str | None = None
    for_target: str | None = None
    source: str | None = None
    label: str | None = None
    target: str | None = None
    # Set by `Store.selected` when this database answers `target` as a database of only its
    # records would (`Sources._stand_alone`): the filter then keeps this database's winners.
    target_settled: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in (*TEXT_FILTERS, "for_target", "source", "label"):
            value = getattr(self, name)
            if value is not None:
                text(value, f"--{name.replace('_', '-')}")
                if name in (*TEXT_FILTERS, "source", "label"):  # '' would name no file
                    not_empty(value, f"--{name.replace('_', '-')}")
        if self.for_target is not None:
            problem = query_target_problem(self.for_target)
            if problem is not None:
                raise TargetParseError(
                    f"cannot answer for target {self.for_target!r}: {problem}; give a TVM "
                    'target string, e.g. "cuda -model=titanx"'
                )

    def describe(self) -> str:
        """The filters as the options that give them (`--for-target 'llvm'`), or "" for none."""
        given = [
            (name, value)
            for name in (
                "target_key",
                "model",
                "template",
                "task",
                "for_target",
                "source",
                "label",
                "target",
            )
            if (value := getattr(self, name)) is not None
        ]
        return " ".join(f"--{name.replace('_', '-')} {value!r}" for name, value in given)

    @property
    def query_target(self) -> Target | None:
        """The parsed `for_target`, or None."""
        return None if self.for_target is None else parse_target(self.for_target)

    @property
    def selects_targets(self) -> bool:
        """True when some target strings do not match."""
        return self.target_key is not None or self.model is not None or self.target is not None

    @property
    def selects_sources(self) -> bool:
        """True when only the records of some sources are selected."""
        return self.source is not None or self.label is not None

    @property
    def selects_database(self) -> bool:
        """True when `best` and `export` may answer from a database of some records only:
        the sources' (`--source`, `--label`) or the targets' (`--target`; `--target-key` and
        `--model` where they select MetaSchedule records: see `Store.selected`)."""
        return self.selects_sources or (self.selects_targets and not self.target_settled)

    def with_target_settled(self) -> Filters:
        """These filters, their `target` now keeping this database's slot winners (see
        `target_settled`): what `Store.selected` answers with when no copy is needed."""
        settled = replace(self)
        object.__setattr__(settled, "target_settled", True)  # frozen; no init argument
        return settled

    def sources_only(self) -> Filters:
        """Only these filters' `source` and `label`: which files a selected database holds."""
        return Filters(source=self.source, label=self.label)

    def without_sources(self) -> Filters:
        """These filters without `source` and `label` (once the sources are chosen)."""
        return replace(self, source=None, label=None)

    @property
    def selects_tasks(self) -> bool:
        """True when some task names do not match."""
        return self.template is not None or self.task is not None

    def matches_target(self, target: Target) -> bool:
        """Whether a record with this (parsed) target is selected."""
        # Exactly this target string, spaces around it aside (invisible in every table: a log
        # writing "llvm -keys=cpu " is answered for "llvm -keys=cpu" too, as TVM reads both).
        if self.target is not None and target.raw.strip() != self.target.strip():
            return False
        if self.target_key is not None and self.target_key not in target.keys:
            return False
        return self.model is None or self.model == target.model

    def matches_target_group(self, keys: tuple[str, ...], model: str) -> bool:
        """Whether records of targets with these keys and model are selected."""
        if self.target_key is not None and self.target_key not in keys:
            return False
        return self.model is None or self.model == model

    def matches_layer(self, keys: tuple[str, ...], model: str, task_names: Iterable[str]) -> bool:
        """Whether a layer is shown: records of its target group (these keys and model) and of
        one of its templates (these task names) are selected."""
        if not self.matches_target_group(keys, model):
            return False
        return any(self.matches_task(name) for name in task_names)

    def matches_task(self, task_name: str) -> bool:
        """Whether a record of this task (template) name is selected."""
        if self.template is not None and task_name != self.template:
            return False
        return self.task is None or self.task in task_name

    def shows_slot(
        self,
        target: Target,
        task_name: str,
        slot: tuple[str, str],
        held: Iterable[tuple[str, str]],
    ) -> bool:
        """Whether a slot winner is shown: its record's (parsed) target and task are selected
        and, with `for_target`, the slot `(kind, name)` is the one the query answers from
        among the `held` slots of its workload (`rules.slots.first_held`).

        The store's queries apply it as SQL (`slot_filter_sql`, below)."""
        if not (self.matches_target(target) and self.matches_task(task_name)):
            return False
        query = self.query_target
        if query is None:
            return True
        held_slots = {s: s for s in held}
        return first_held(query_slots(query.keys, query.model), held_slots) == slot


# -- the filters in SQL ---------------------------------------------------------------------------
# `Filters.shows_slot` as the WHERE clause of the store's slot queries (`best`, `export`, ...):
# `tests/test_filter_rules.py` runs every case through both. Targets and task names are matched
# by the Python methods above, and their ids listed: the tables they live in are small.


def slot_filter_sql(
    filters: Filters,
    targets: Callable[[], Iterable[tuple[int, str]]],
    tasks: Callable[[], Iterable[tuple[int, str]]],
) -> tuple[str, tuple[object, ...]]:
    """A WHERE clause over `slots s JOIN records r` keeping the slot winners `filters.shows_slot`
    shows (or "" for none), and its parameters.

    `targets`: reads (id, target string) of every target; `tasks`: (id, task name) of every
    workload; each called only when the filters select by it. The source filters are not
    here: a store answers them with the database they select (`Store.selected`).
    """
    if filters.selects_sources:  # not `assert`: under -O the sources would be ignored
        raise ValueError("source filters are answered by Store.selected: call through it")
    clauses: list[str] = []
    params: list[object] = []
    if filters.selects_targets:
        ids = [i for i, target in targets() if filters.matches_target(parse_target(target))]
        clauses.append(f"r.target_id IN ({_id_list(ids)})")
    if filters.selects_tasks:
        ids = [i for i, task_name in tasks() if filters.matches_task(task_name)]
        clauses.append(f"s.workload_id IN ({_id_list(ids)})")
    query = filters.query_target
    if query is not None:
        clause, answering = answering_slot_sql(query_slots(query.keys, query.model))
        clauses.append(clause)
        params += answering
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", tuple(params)


def _id_list(ids: Iterable[int]) -> str:
    """Integer ids as SQL list text (ints only, so nothing to quote); `NULL` when empty."""
    return ",".join(str(int(i)) for i in ids) or "NULL"
