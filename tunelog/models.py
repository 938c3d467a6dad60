"""Result objects the library returns and the CLI formats (plain dataclasses, JSON-ready).

Dataclasses, not pydantic models: every command builds some of them, and importing pydantic
costs a read command a third of its start-up. They keep pydantic's `model_dump()` spelling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tunelog.plaindata import Dumpable

REJECTS_KEPT_IN_REPORT = 20
"""A FileReport lists its first rejected lines only; the database keeps all of them."""

if TYPE_CHECKING:
    from tunelog.importreport import FileReport as FileReport
    from tunelog.importreport import RejectedLine as RejectedLine


def __getattr__(name: str) -> object:
    # FileReport and RejectedLine: defined in tunelog.importreport, which only imports and
    # `rejects` load, so that the other commands do not create them at start-up.
    if name in ("FileReport", "RejectedLine"):
        from tunelog import importreport

        return getattr(importreport, name)
    raise AttributeError(f"module 'tunelog.models' has no attribute {name!r}")


_Dumpable = Dumpable  # the name tunelog.store.merging and tunelog.diffing import


@dataclass(slots=True)
class SourceImport(Dumpable):
    """One import of a source's content: from which (absolute) path, and when."""

    path: str
    imported_at: str


@dataclass(slots=True)
class Source(Dumpable):
    """An imported file: the record lines it held; `imports` lists every import of it."""

    id: int
    path: str
    label: str | None
    sha256: str
    size: int
    lines: int
    records: int
    duplicates: int
    comments: int
    blank: int
    rejected: int
    imported_at: str
    merged_from: str | None = None
    """The database a `merge` brought this source from (absolute path); None: imported here."""
    held: int = 0
    """Record lines the file held (`records` stored here first, the rest already stored)."""
    shared: int = 0
    """Of those, the lines holding a record another source holds too."""
    imports: list[SourceImport] = field(default_factory=list)
    split: int = 0
    """Records `--repair` found run together on a line, beyond one a line: `lines + split` =
    records + duplicates + comments + blank + rejected (`importreport.FileReport`'s rule)."""
    repaired: int = 0
    """Records `--repair` recovered (typographic quotes, run together, ...)."""


@dataclass(slots=True)
class Stats(Dumpable):
    """Counts over the whole database."""

    records: int
    valid: int
    failed: int
    sources: int
    targets: int
    workloads: int
    by_target: list[dict[str, object]]
    by_template: list[dict[str, object]]
    by_error: list[dict[str, object]]


@dataclass(slots=True)
class BestRow(Dumpable):
    """A slot winner: the record `apply_history_best` returns for the listed slots."""

    slots: list[str]
    target: str
    task_name: str
    template_key: str
    args: list[object]
    config_index: int
    mean_cost: float
    trials: int
    source: str
    line: int
    record_id: int
    log_version: str
    knobs: list[list[object]] | None = None
    # A target asked about (--for-target, or one that measured the workload and queries the
    # same slot) that the winner was not measured on, machine-wise (see tunelog.machines).
    warnings: list[str] = field(default_factory=list)
    # The arguments' short text as stored with the workload (migration 12), for the table;
    # None: computed from `args` (auto_scheduler rows show their key's items as written).
    shapes: str | None = field(default=None, metadata={"internal": True})
    # Its workload's id in the database read (-1: not read from one).
    workload_id: int = field(default=-1, metadata={"internal": True})


@dataclass(frozen=True)
class SlotHolder:
    """One slot (`kind` "key" or "model", its `name`, the workload) and its holder."""

    kind: str
    name: str
    task_name: str
    template_key: str
    args_json: str
    record_id: int
    source_id: int
    line: int
    config_index: int
    mean_cost: float

    @property
    def workload_json(self) -> str:
        """`[task_name, *args]` as compact JSON (the golden files' form)."""
        from tunelog.rules.workloadidentity import workload_json

        return workload_json(self.task_name, self.args_json)
