"""What the filter options mean: the one definition every command and the API use.

Pure. A filter selects *records* by their own target string and task name; a command shows
what those records decide (the slots they hold, the layers they are measured in). Filters
combine as AND; an empty field matches everything.

* `target_key`: the record's target has this key (`cuda` matches `cuda -model=t4`, whose keys
  are `cuda, gpu`);
* `model`: the record's target has this `-model` value;
* `template`: the task name is exactly this (`conv2d_nchw.cuda`);
* `task`: the task name contains this text (plain, case-sensitive; no wildcards);
* `source`: the record's line was in this source's file, given by id or by the path it was
  imported from (a source is every record line its file held, whoever stored it first);
* `label`: the record's line was in the file of a source imported with this `--label`;
* `target`: the record's target string is exactly this one (byte for byte, unlike
  `target_key`/`model`, which match every target that queries the same slots).

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

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace

from tunelog.exceptions import TargetParseError
from tunelog.optionvalues import source_id
from tunelog.targets import Target, parse_target, query_target_problem


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

    def __post_init__(self) -> None:
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
    def selects_records(self) -> bool:
        """True when the filters look at a record's source or exact target string."""
        return self.selects_sources or self.target is not None

    def sources_only(self) -> Filters:
        """Only these filters' `source` and `label`: which files a selected database holds."""
        return Filters(source=self.source, label=self.label)

    def without_sources(self) -> Filters:
        """These filters without `source` and `label` (once the sources are chosen)."""
        return replace(self, source=None, label=None)

    def matches_source(self, source_id: int, path: str, label: str | None) -> bool:
        """Whether this source's file is chosen (`source`: an id or a path)."""
        if self.label is not None and label != self.label:
            return False
        if self.source is None:
            return True
        return self.source == str(source_id) or self.source == path

    @property
    def selects_tasks(self) -> bool:
        """True when some task names do not match."""
        return self.template is not None or self.task is not None

    def matches_target(self, target: Target) -> bool:
        """Whether a record with this (parsed) target is selected."""
        if self.target is not None and target.raw != self.target:
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


# -- which source the user meant ------------------------------------------------------------------
# A source is named by its id (`3`, `#3`), its label, or a path its file was imported from. Each
# way of naming one has its rule here; a command says which ways it accepts, in which order.


@dataclass(frozen=True)
class SourceNames:
    """What a source can be named by: its id, its label, the paths its file was imported from."""

    id: int
    label: str | None
    paths: tuple[str, ...]  # the stored path first


def named_by_id(ref: str, sources: Iterable[SourceNames]) -> list[int]:
    """The source whose id `ref` is (`3` or `#3`): [] when `ref` is no id, or no source has it.

    Raises InvalidValueError for digits that can be no id (see `optionvalues.source_id`).
    """
    number = source_id(ref)
    return [] if number is None else [s.id for s in sources if s.id == number]


def named_by_label(label: str, sources: Iterable[SourceNames]) -> list[int]:
    """The sources imported with this label, oldest first."""
    return [s.id for s in sources if s.label == label]


def named_by_path(spellings: Collection[str], sources: Iterable[SourceNames]) -> list[int]:
    """The sources imported from one of `spellings` (a path as typed, as stored), oldest first."""
    return [s.id for s in sources if any(path in spellings for path in s.paths)]
