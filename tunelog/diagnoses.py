"""What a diagnosis is: the reasons a workload TVM reported untuned is (not) answered, and the
`Diagnosis` that says one for a (target, workload). The rules that find them: `diagnosis`
(AutoTVM's templates), `ansordiagnosis` (auto_scheduler's workloads)."""

from __future__ import annotations

from dataclasses import dataclass

from tunelog.layers import TargetGroup
from tunelog.nearest import Nearest
from tunelog.targets import Target
from tunelog.tvmmessages import Workload, as_json_list

ANSWERED = "answered"
PACKED = "packed"
ALL_FAILED = "all_failed"
NOT_OFFERED = "not_offered"
OTHER_TARGET = "other_target"
V01_ONLY = "v01_only"
NO_RECORD = "no_record"
NOT_IN_GRAPH = "not_in_graph"
REASONS = (
    NO_RECORD,
    OTHER_TARGET,
    ALL_FAILED,
    V01_ONLY,
    NOT_OFFERED,
    PACKED,
    NOT_IN_GRAPH,
    ANSWERED,
)


@dataclass(frozen=True)
class Diagnosis:
    """Why one (target, workload) is or is not answered by the database."""

    target: str
    workload: Workload
    reason: str
    detail: str
    original: Workload | None = None
    nearest: tuple[Nearest, ...] = ()
    line: int | None = None

    @property
    def answered(self) -> bool:
        """The database answers it (a build that said otherwise read another file)."""
        return self.reason == ANSWERED

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: workloads as lists, exactly as TVM printed them."""
        return {
            "target": self.target,
            "workload": as_json_list(self.workload),
            "reason": self.reason,
            "original": as_json_list(self.original) if self.original is not None else None,
            "nearest": [
                {
                    "workload": as_json_list(n.workload),
                    "differs": list(n.differs),
                    "targets": list(n.targets),
                }
                for n in self.nearest
            ],
            "detail": self.detail,
            "line": self.line,
        }


def group_of(asked: Target) -> TargetGroup:
    """The target group a target asks as (its keys and model)."""
    return TargetGroup(asked.keys, asked.model, (asked.raw,))


def diagnosis_of(
    asked: Target,
    workload: Workload,
    reason: str,
    detail: str,
    *,
    original: Workload | None = None,
    nearest: tuple[Nearest, ...] = (),
) -> Diagnosis:
    """A diagnosis of `workload` for the target `asked`."""
    return Diagnosis(asked.raw, workload, reason, detail, original, nearest)


def seconds_text(cost: float) -> str:
    """A cost as a diagnosis writes it (`1.61 ms`, `46.1 us`)."""
    if cost >= 1e-3:
        return f"{cost * 1e3:.2f} ms"
    return f"{cost * 1e6:.1f} us"
