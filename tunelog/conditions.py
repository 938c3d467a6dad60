"""Conditions of relay's op strategies on a layer, as data, and their three-valued reading.

Pure. A strategy function (TVM v0.19 `python/tvm/relay/op/strategy/*.py`) adds an
implementation under an `if` on the layer's attributes (layout, groups, channels, kernel size,
strides, dilation, dtypes) and sometimes on the compile target (its kind, `-libs`, CPU
features, tensor cores). `tunelog.strategies` writes each such `if` as a `Cond` built from the
classes here; `holds` reads it against the facts of one workload (`workloads.layer_facts`) and
the target keys, and answers:

* True: relay's strategy offers the template for this layer and these keys;
* False: it never does;
* None: it depends on what the log does not hold (the target's `-libs`, CPU features, tensor
  cores, the exact target kind, or an argument tunelog cannot read).

Three-valued logic (Kleene): `All` is False when one part is False, True when all are True,
else None; `AnyOf` the mirror; `Not` swaps True and False and keeps None.

The target kind is read from the keys: the kinds whose default keys all appear in them (`cuda,
gpu` -> cuda or nvptx; `adreno, opencl, gpu` -> opencl). A `-keys=` list that hides the kind's
default keys leaves the kind unknown, and a test on it unknown (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

from tunelog.targets import DEFAULT_KEYS


class Test(NamedTuple):
    """`fact op value`: ==, !=, <, <=, >, >=, in, not in, or `divides` (fact % value == 0)."""

    fact: str
    op: str
    value: object


class All(NamedTuple):
    """Every part holds."""

    parts: tuple[Cond, ...]


class AnyOf(NamedTuple):
    """Some part holds."""

    parts: tuple[Cond, ...]


class Not(NamedTuple):
    """The part does not hold."""

    part: Cond


class Target(NamedTuple):
    """A property of the compile target the log does not hold (`-libs=cudnn`, `has_dsp`)."""

    what: str


Cond = Test | All | AnyOf | Not | Target


def all_of(*parts: Cond) -> All:
    """Every part holds."""
    return All(parts)


def any_of(*parts: Cond) -> AnyOf:
    """Some part holds."""
    return AnyOf(parts)


def test(fact: str, op: str, value: object) -> Test:
    """One test of a fact of the layer (or `kind`, the target kind read from the keys)."""
    if op not in _OPS:
        raise ValueError(f"unknown operator {op!r} in a strategy condition")
    return Test(fact, op, value)


UNREAD = "arguments tunelog cannot read"  # a fact missing from workloads.layer_facts

_OPS = frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "not in", "divides"})


@lru_cache(maxsize=256)
def possible_kinds(keys: tuple[str, ...]) -> frozenset[str] | None:
    """The target kinds whose default keys all appear in `keys`; None when none does."""
    found = frozenset(
        kind for kind, defaults in DEFAULT_KEYS.items() if defaults and set(defaults) <= set(keys)
    )
    return found or None


def holds(cond: Cond, facts: Mapping[str, object], keys: tuple[str, ...]) -> bool | None:
    """Whether `cond` holds for a layer with these facts under these target keys (None: unknown)."""
    if isinstance(cond, Test):
        if cond.fact == "kind":
            return _kind_test(cond, possible_kinds(keys))
        if cond.fact not in facts:
            return None  # tunelog could not read this fact from the arguments
        return _compare(facts[cond.fact], cond.op, cond.value)
    if isinstance(cond, Target):
        return None
    if isinstance(cond, Not):
        inner = holds(cond.part, facts, keys)
        return None if inner is None else not inner
    answers = [holds(part, facts, keys) for part in cond.parts]
    if isinstance(cond, All):
        if False in answers:
            return False
        return True if all(answers) else None
    if True in answers:
        return True
    return False if all(a is False for a in answers) else None


def facts_read(cond: Cond) -> frozenset[str]:
    """The facts of a layer that `holds` and `unknowns` read for `cond` (`kind` is read from
    the keys): two layers whose facts agree on these, each present or absent alike, get the
    same answers."""
    if isinstance(cond, Test):
        return frozenset() if cond.fact == "kind" else frozenset((cond.fact,))
    if isinstance(cond, Target):
        return frozenset()
    parts = (cond.part,) if isinstance(cond, Not) else cond.parts
    return frozenset().union(*(facts_read(part) for part in parts))


def unknowns(cond: Cond, facts: Mapping[str, object], keys: tuple[str, ...]) -> list[str]:
    """The target properties and unread facts that leave `cond` undecided (for messages)."""
    if isinstance(cond, Target):
        return [cond.what]
    if isinstance(cond, Test):
        if holds(cond, facts, keys) is not None:
            return []
        return ["the target kind" if cond.fact == "kind" else UNREAD]
    parts = (cond.part,) if isinstance(cond, Not) else cond.parts
    found: list[str] = []
    for part in parts:
        if holds(part, facts, keys) is None:
            found += [u for u in unknowns(part, facts, keys) if u not in found]
    return found


def _kind_test(cond: Test, kinds: frozenset[str] | None) -> bool | None:
    if kinds is None:
        return None
    answers = {_compare(kind, cond.op, cond.value) for kind in kinds}
    return answers.pop() if len(answers) == 1 else None


def _compare(fact: object, op: str, value: object) -> bool | None:
    """One comparison; None when the fact and the value cannot be compared."""
    if op == "==":
        return fact == value
    if op == "!=":
        return fact != value
    if op in ("in", "not in"):
        if not isinstance(value, (tuple, frozenset)):
            return None
        return (fact in value) == (op == "in")
    if not isinstance(fact, int) or isinstance(fact, bool) or not isinstance(value, int):
        return None
    if op == "divides":
        return value != 0 and fact % value == 0
    return {
        "<": fact < value,
        "<=": fact <= value,
        ">": fact > value,
        ">=": fact >= value,
    }[op]
