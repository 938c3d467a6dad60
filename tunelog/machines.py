"""When an answer crosses machines: the record was measured on another device than asked about.

Pure. AutoTVM matches records by target keys and `-model` only (tvm-reference §2), so a record
tuned with `-mcpu=skylake-avx512`, on another GPU architecture, or on another target kind that
shares a key (`gpu` is shared by cuda, opencl, vulkan...) answers a query just the same. TVM
does this silently; tunelog keeps the answer (it is what TVM does) and says so.
"""

from __future__ import annotations

import re

from tunelog.exceptions import TargetParseError
from tunelog.targets import Target, parse_target

# The options that name the machine a record was measured on.
MACHINE_OPTIONS = ("mcpu", "mtriple", "arch", "model", "device")


def machine_differences(asked: Target, measured: Target) -> list[str]:
    """How the measuring target differs from the asked one, e.g. `-mcpu skylake-avx512 vs none`.

    Empty when both name the same machine (other options, such as `-libs`, do not count).
    """
    notes: list[str] = []
    if asked.kind != measured.kind:
        notes.append(f"target kind {measured.kind} vs {asked.kind}")
    for name in MACHINE_OPTIONS:
        mine, theirs = asked.machine_option(name), measured.machine_option(name)
        if mine != theirs:
            notes.append(f"-{name} {theirs or 'none'} vs {mine or 'none'}")
    return notes


def conflicting_machines(asked: str, measured: str) -> bool:
    """True when the two target strings surely name different machines: another target kind,
    or a machine option both give with different values (`-mcpu=znver3` vs
    `-mcpu=skylake-avx512`). An option only one of them gives may be the same machine spelled
    differently (`cuda -model=t4` and `cuda -arch=sm_75 -model=t4`): a warning, not a conflict.
    """
    if asked == measured:
        return False
    try:
        mine, theirs = parse_target(asked), parse_target(measured)
    except TargetParseError:
        return False
    if mine.kind != theirs.kind:
        return True
    return any(
        a is not None and b is not None and a != b
        for a, b in ((mine.machine_option(n), theirs.machine_option(n)) for n in MACHINE_OPTIONS)
    )


def cross_machine_warning(asked: str, measured: str) -> str | None:
    """A one-line warning when `measured` is another machine than `asked`, else None."""
    if asked == measured:
        return None
    try:
        differences = machine_differences(parse_target(asked), parse_target(measured))
    except TargetParseError:
        return None  # stored targets parsed on import; an unparsable question is refused earlier
    if not differences:
        return None
    return (
        f"answer for {asked!r} was measured on {measured!r} "
        f"({'; '.join(differences)}): {CROSS_MACHINE_ADVICE}"
    )


CROSS_MACHINE_ADVICE = "re-tune on this machine, or filter with --target"
# What cross_machine_warning writes (the target strings are Python reprs: quotes vary).
_CROSS_MACHINE = re.compile(
    r"answer for (?P<asked>.+) was measured on (?P<measured>.+) \((?P<differences>[^()]*)\): "
    + re.escape(CROSS_MACHINE_ADVICE)
    + "$"
)


def cross_machine_differences(warning: str) -> str | None:
    """The differences (`-mcpu skylake-avx512 vs none`) a `cross_machine_warning` names, found
    anywhere in `warning` (which may start with what it is about); None for other warnings."""
    match = _CROSS_MACHINE.search(warning)
    return None if match is None else match["differences"]
