"""The msgspec schemas of AutoTVM's two layouts, for the import's fast path, and their caches.

Pure. `tunelog.records` decodes the usual line with these and hands every line they refuse
to the pydantic models of `tunelog.recordmodels`, which say precisely what is wrong. Why two
statements of one schema: the models' errors are the reasons a user reads, but loading pydantic
costs a tenth of a second, and an import of well-formed lines never needs it; msgspec decodes
a line in a fraction of the models' time. The structs here mirror the models field for field
(same names, types and strictness: ints pass as floats) except where they keep text raw (the
arguments, v0.1's workload; each distinct text checked once, below). `tests/test_records.py`
holds the two to the same fields and, line by mutated line, to the same verdicts and values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import msgspec

from tunelog.recordvalues import JsonValue, KnobType
from tunelog.rules.nesting import arguments_too_deep
from tunelog.rules.workloadidentity import canonical_json


class FastConfigV02(msgspec.Struct, gc=False):
    """`_ConfigV02` of the models."""

    index: int
    code_hash: str | None
    entity: list[tuple[str, KnobType, JsonValue]]


class FastRecordV02(msgspec.Struct, gc=False):
    """RecordV02's schema for msgspec: same fields, same strictness (ints pass as floats)."""

    # The arguments stay raw text (still checked to be JSON): see args_json.
    input: tuple[str, str, msgspec.Raw, dict[str, JsonValue]]
    config: FastConfigV02
    result: tuple[tuple[float, ...], int, float, float]
    version: float | None = None
    tvm_version: str | None = None


FAST_V02 = msgspec.json.Decoder(FastRecordV02)


class FastConfigV01(msgspec.Struct, gc=False):
    """`_ConfigV01` of the models."""

    i: int
    e: list[tuple[str, KnobType, JsonValue]]
    t: str = ""
    c: str | None = None


class FastRecordV01(msgspec.Struct, gc=False):
    """RecordV01's schema for msgspec (see FastRecordV02)."""

    i: tuple[str, str, msgspec.Raw, dict[str, JsonValue], JsonValue, FastConfigV01]
    r: tuple[tuple[float, ...], int, float, float]
    v: float


FAST_V01 = msgspec.json.Decoder(FastRecordV01)


# The same layouts refusing any other key (`records.scan_content` tries them first): a v0.2
# line fails the v0.1 schema at its first key and the other way round, so no byte test picks
# the layout. v0.1's workload stays raw text (each distinct text checked once, see
# valid_workload).
#
# The strict v0.2 schema also bounds how deep the values it reads nest (knob values and keyword
# arguments: real ones are a list of numbers at most), so that a line it reads nests deep only
# in its raw arguments (`args_json` checks those), and `records.scan_content` need not count
# the brackets of such a line (rules.nesting). A deeper value takes the tolerant schemas.
SHALLOW_LEVELS = 4
if TYPE_CHECKING:
    ShallowJson: TypeAlias = JsonValue
else:
    ShallowJson = str | int | float | bool | None
    for _ in range(SHALLOW_LEVELS):
        ShallowJson = str | int | float | bool | None | list[ShallowJson] | dict[str, ShallowJson]


class StrictConfigV02(FastConfigV02, forbid_unknown_fields=True):
    """FastConfigV02 refusing any other field; knob values nested SHALLOW_LEVELS deep at most."""

    entity: list[tuple[str, KnobType, ShallowJson]]


class StrictRecordV02(FastRecordV02, forbid_unknown_fields=True):
    """FastRecordV02 refusing any other field (its config's included) and values nested deeper
    than SHALLOW_LEVELS (but the raw arguments)."""

    input: tuple[str, str, msgspec.Raw, dict[str, ShallowJson]]
    config: StrictConfigV02


STRICT_V02 = msgspec.json.Decoder(StrictRecordV02)


class StrictRecordV01(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    """FastRecordV01 refusing any other key, its workload left raw."""

    i: tuple[str, str, msgspec.Raw, dict[str, JsonValue], msgspec.Raw, FastConfigV01]
    r: tuple[tuple[float, ...], int, float, float]
    v: float


STRICT_V01 = msgspec.json.Decoder(StrictRecordV01)


# Canonical JSON by raw argument text: the lines of one workload repeat the same text, so
# decoding and re-encoding it once per workload instead of once per line saves a fifth of the
# parse. Bounded, so that a file of distinct arguments cannot grow it without end. The parser
# reads it inline (`ARGS_JSON.get(raw) or args_json(raw)`): a hit costs no call.
ARGS_JSON: dict[bytes, str] = {}
ARGS_JSON_KEPT = 4096


def args_json(raw: bytes) -> str | None:
    """Canonical JSON of raw argument text not yet cached; None if not a valid list, or if it
    nests the record past the nesting limit (`rules.nesting.arguments_too_deep`)."""
    try:
        value = msgspec.json.decode(raw)
    except (ValueError, RecursionError):  # raw text skips UTF-8 checks inside its strings
        return None
    if not isinstance(value, list) or arguments_too_deep(raw):
        return None
    canonical = canonical_json(value)
    if len(ARGS_JSON) >= ARGS_JSON_KEPT:
        ARGS_JSON.clear()
    ARGS_JSON[raw] = canonical
    return canonical


# The raw v0.1 workload texts (the fifth item of "i") known to be valid JSON (raw text skips
# the UTF-8 checks inside its strings); bounded.
_VALID_WORKLOADS: set[bytes] = set()


def valid_workload(raw: bytes) -> bool:
    """Whether a v0.1 record's raw workload text is JSON (each distinct text decoded once)."""
    if raw in _VALID_WORKLOADS:
        return True
    try:
        msgspec.json.decode(raw)
    except (ValueError, RecursionError):
        return False
    if len(_VALID_WORKLOADS) >= ARGS_JSON_KEPT:
        _VALID_WORKLOADS.clear()
    _VALID_WORKLOADS.add(raw)
    return True
