"""Which AutoTVM templates relay's op strategy offers a target and a layer: the rule.

Pure. The table (`strategy_table.STRATEGIES`: per strategy key and relay operator, the tuning
task names relay would query, written from TVM v0.19.0's relay op strategies) and how relay
dispatches are described there; here is the rule that reads it.

How relay dispatches (generic_func): for an operator, the first key of the target (in the
target's key order) that registered a strategy for it wins; with none, the generic strategy
(which offers no AutoTVM template).

Per layer (`relay_offers`, the one rule listings and exports use): a strategy offers many
templates only under an `if` on the layer (cuda winograd only for 3x3..7x7 stride-1 NCHW
kernels; adreno's textures only from 4 output channels, cuda's templates below; int8 templates
for int8 dtypes...). Those conditions are `strategy_conditions.CONDITIONS`, read against the
facts of the workload's own arguments: a template is offered for a layer when, for some
operator listing it, the deciding key's condition holds. A condition on what the log does not
hold (`-libs`, CPU features, tensor cores, the target kind when the keys leave it open) leaves
the offer conditional: the template competes, but never pushes another template out of an
export (`layers.may_be_chosen`). The table (STRATEGIES) still lists, per key and
operator, every template offered under *some* condition; `may_offer` reads it alone.

A key TVM v0.19 attaches no strategy to and that is no target kind's default key (`-device=foo`,
`-keys=foo`; `ext_dev -device=vta`, whose strategies live in the VTA package) is skipped as
relay skips it: the other keys decide. A template they do not offer stays offered on a
condition (a strategy registered for that key outside TVM): it competes, but never pushes
another template out of an export (`--winners-only` dropped the
`conv2d_nchw.cuda` relay used for `cuda -device=foo` because a mali template, which relay never
offers a cuda target, was faster). With no known strategy key at all, every template is offered
so. A task name the table does not know (v0.1 names such as `topi_nn_conv2d`,
`conv2d_packed.vta`) is offered.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

from tunelog.conditions import facts_read, holds, unknowns
from tunelog.strategy_conditions import CONDITIONS
from tunelog.strategy_table import KNOWN_TEMPLATES, PASSIVE_KEYS, STRATEGIES


@lru_cache(maxsize=1024)
def offered_templates(keys: tuple[str, ...]) -> frozenset[str] | None:
    """The task names relay's strategies offer a target with these keys; None when unknown.

    Per operator, the first key (in order) that registered a strategy for it decides. None
    (the table cannot tell: keep every template) when a key is neither a strategy key nor a
    key that only some target kind adds by default, or when no key has a strategy.
    """
    if not keys or any(k not in STRATEGIES and k not in PASSIVE_KEYS for k in keys):
        return None
    if not any(k in STRATEGIES for k in keys):
        return None
    operators = {op for table in STRATEGIES.values() for op in table}
    offered: set[str] = set()
    for op in operators:
        for key in keys:
            table = STRATEGIES.get(key)
            if table is not None and op in table:
                offered.update(table[op])
                break
    return frozenset(offered)


def may_offer(keys: tuple[str, ...], task_name: str) -> bool:
    """False only when the table knows relay never queries `task_name` for these keys."""
    if task_name not in KNOWN_TEMPLATES:
        return True  # v0.1 names, VTA and other out-of-tree templates: unknown, keep
    offered = offered_templates(keys)
    return offered is None or task_name in offered


def unknown_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """The keys TVM attaches no strategy to that are no target kind's default key either
    (`-device=foo` adds `foo`): relay skips such a key, unless a strategy for it was
    registered outside TVM."""
    return tuple(k for k in keys if k not in STRATEGIES and k not in PASSIVE_KEYS)


def _known(keys: tuple[str, ...]) -> tuple[str, ...] | None:
    """The keys without the unknown ones, when some of those has a strategy; else None."""
    unknown = unknown_keys(keys)
    known = tuple(k for k in keys if k not in unknown)
    return known if any(k in STRATEGIES for k in known) else None


def strategy_note(keys: tuple[str, ...]) -> str | None:
    """Why the table cannot tell for these keys (None when it can)."""
    if offered_templates(keys) is not None:
        return None
    unknown = ",".join(unknown_keys(keys))
    known = _known(keys)
    if known is not None:
        return (
            f"target key(s) {unknown} have no relay strategy in TVM: relay's choice is read "
            f"from keys {','.join(known)}, as TVM skips such a key; a template only a strategy "
            "registered for it outside TVM would offer competes conditionally"
        )
    return (
        f"no relay strategy table for target keys {','.join(keys) or '(none)'}: "
        "every template competes, conditionally"
    )


class Offer(NamedTuple):
    """Whether relay's strategy offers a template for one layer under some target keys."""

    offered: bool  # False: relay never queries the template for this layer and these keys
    certain: bool = True  # False: offered or not depending on `depends_on` of the target
    depends_on: tuple[str, ...] = ()

    @property
    def note(self) -> str | None:
        """`offered depending on -libs=cudnn, ...` for a conditional offer, else None."""
        if self.certain:
            return None
        return "offered depending on " + ", ".join(self.depends_on)


OFFERED = Offer(True)
NEVER_OFFERED = Offer(False)
# What an offer only a strategy registered outside TVM could make depends on (`relay_offers`
# of a target with a key TVM has no strategy for): relay, in tree, does not offer it.
OUTSIDE_TVM = "a strategy registered for key "


@lru_cache(maxsize=1024)
def _deciding_keys(keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(operator, key) pairs: per operator, the first key that registered a strategy for it."""
    pairs: list[tuple[str, str]] = []
    operators = sorted({op for table in STRATEGIES.values() for op in table})
    for op in operators:
        key = next((k for k in keys if op in STRATEGIES.get(k, {})), None)
        if key is not None:
            pairs.append((op, key))
    return tuple(pairs)


@lru_cache(maxsize=4096)
def offer_facts(keys: tuple[str, ...], task_name: str) -> tuple[str, ...]:
    """The facts of a layer that `relay_offers(keys, task_name, facts)` reads: it answers
    alike for any two layers whose facts agree on these (each present or absent alike).

    Every condition its loop may read, whichever it stops at (a superset is still exact).
    """
    if task_name not in KNOWN_TEMPLATES or not may_offer(keys, task_name):
        return ()
    if offered_templates(keys) is None:
        known = _known(keys)
        return () if known is None else offer_facts(known, task_name)
    names: set[str] = set()
    for op, key in _deciding_keys(keys):
        cond = CONDITIONS.get(key, {}).get(op, {}).get(task_name)
        if task_name in STRATEGIES[key][op] and cond is not None:
            names |= facts_read(cond)
    return tuple(sorted(names))


def relay_offers(keys: tuple[str, ...], task_name: str, facts: Mapping[str, object]) -> Offer:
    """Whether relay's strategy for these keys offers `task_name` for the layer with `facts`.

    The one rule every listing and export uses to tell relay's candidates for a (target,
    layer). `facts` are the workload's own (`workloads.layer_facts`). Per operator the deciding
    key's condition (CONDITIONS) is read; the template is offered when some operator offers it,
    conditionally when an operator's condition depends on what the log does not hold (-libs,
    CPU features, tensor cores); unknown task names keep every template (OFFERED). A target
    with unknown keys (`unknown_keys`) is read by its other keys, as TVM skips such a key; a
    template they do not offer stays offered on a condition (a strategy registered for the
    unknown key outside TVM), so that it never pushes another out of an export.
    """
    if not may_offer(keys, task_name) or task_name not in KNOWN_TEMPLATES:
        return OFFERED if task_name not in KNOWN_TEMPLATES else NEVER_OFFERED
    if offered_templates(keys) is None:
        known = _known(keys)
        offer = NEVER_OFFERED if known is None else relay_offers(known, task_name, facts)
        if offer.offered:
            return offer
        unknown = unknown_keys(keys) or keys
        return Offer(True, False, tuple(f"{OUTSIDE_TVM}{k}" for k in unknown))
    open_questions: list[str] = []
    for op, key in _deciding_keys(keys):
        if task_name not in STRATEGIES[key][op]:
            continue
        cond = CONDITIONS.get(key, {}).get(op, {}).get(task_name)
        if cond is None:
            return OFFERED
        answer = holds(cond, facts, keys)
        if answer:
            return OFFERED
        if answer is None:
            open_questions += [u for u in unknowns(cond, facts, keys) if u not in open_questions]
    if open_questions:
        return Offer(True, False, tuple(open_questions))
    return NEVER_OFFERED
