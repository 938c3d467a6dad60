"""Result objects the library returns and the CLI formats (pydantic, JSON-ready)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RejectedLine(BaseModel):
    """A line that was not imported, and why."""

    model_config = ConfigDict(defer_build=True)

    line: int
    reason: str


class FileReport(BaseModel):
    """What importing one file did.

    `lines + split == new + duplicates + comments + blank + rejected`: with `--repair`, a line
    holding k records run together counts k entries (`split` = k - 1); otherwise `split` is 0.
    `repaired` counts the records recovered by `--repair`.
    """

    model_config = ConfigDict(defer_build=True)

    path: str
    lines: int = 0
    split: int = 0
    new: int = 0
    duplicates: int = 0
    comments: int = 0
    blank: int = 0
    rejected: int = 0
    repaired: int = 0
    rejects: list[RejectedLine] = Field(default_factory=list)
    sha256: str | None = None
    source_id: int | None = None
    already_imported_as: str | None = None
    rolled_back: bool = False

    @property
    def accounted(self) -> bool:
        """True when every line read is counted exactly once."""
        entries = self.new + self.duplicates + self.comments + self.blank + self.rejected
        return self.lines + self.split == entries


class Source(BaseModel):
    """An imported file."""

    model_config = ConfigDict(defer_build=True)

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


class Stats(BaseModel):
    """Counts over the whole database."""

    model_config = ConfigDict(defer_build=True)

    records: int
    valid: int
    failed: int
    sources: int
    targets: int
    workloads: int
    by_target: list[dict[str, object]]
    by_template: list[dict[str, object]]
    by_error: list[dict[str, object]]


class BestRow(BaseModel):
    """A slot winner: the record `apply_history_best` returns for the listed slots."""

    model_config = ConfigDict(defer_build=True)

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
