"""Why one workload's trials failed, and what to change: advice from its error counts.

Pure: no I/O. ``diagnose`` takes counts the caller has already gathered; what each error
number means is `tunelog.errorcodes`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

from tunelog.errorcodes import (
    BUILD_TIMEOUT,
    COMPILE_DEVICE,
    COMPILE_HOST,
    INSTANTIATION_ERROR,
    METASCHEDULE_ERRORS,
    NO_ERROR,
    RUN_TIMEOUT,
    RUNTIME_DEVICE,
    UNKNOWN_ERROR,
    WRONG_ANSWER,
    error_name,
)

__all__ = [
    "DOMINANT_SHARE",
    "HIGH_FAILURE_SHARE",
    "MIN_VALID_TRIALS",
    "NOTABLE_SHARE",
    "SPACE_MISFIT_SHARE",
    "cause_of_failures",
    "diagnose",
]

DOMINANT_SHARE = 0.5
"""A failure kind dominates when it makes up at least this share of the failures that got past
instantiation (INSTANTIATION_ERROR is left out: it is routine on GPUs and never reaches the
builder, so it says nothing about why built configs failed)."""

HIGH_FAILURE_SHARE = 0.5
"""With some valid trials, the failure share is reported when failed / total exceeds this."""

NOTABLE_SHARE = 0.1
"""With some valid trials, a dominant failure kind is reported only when it is at least this
share of all trials (one timeout in 500 trials is noise, not a pattern)."""

MIN_VALID_TRIALS = 10
"""Fewer valid trials than this (but at least one) earns a "tune longer" note."""

SPACE_MISFIT_SHARE = 0.9
"""When every trial failed and at least this share of them are INSTANTIATION_ERROR, the config
space does not fit the device."""

# Advice given when a failure kind is the main cause. The COMPILE_HOST advice depends on
# whether any trial succeeded (see _cause_advice).
_CAUSE_ADVICE: dict[int, str] = {
    INSTANTIATION_ERROR: "the config space does not fit this device; check the target "
    "(-arch, -max_num_threads) and the template choice",
    COMPILE_DEVICE: "the device's kernel compiler rejects them; check its driver and SDK",
    RUNTIME_DEVICE: "check the device, the RPC server/tracker and the driver "
    "(launch failures, out of memory)",
    WRONG_ANSWER: "these configs compute wrong results; suspect the template or the codegen",
    # The same words for AutoTVM and auto_scheduler logs: each has its LocalBuilder.
    BUILD_TIMEOUT: "raise the builder timeout, LocalBuilder(timeout=...) (autotvm's, or "
    "auto_scheduler's in its TuningOptions)",
    RUN_TIMEOUT: "raise the runner timeout, LocalRunner/RPCRunner(timeout=...) or tvmc "
    "--timeout, lower number/repeat, and check the device",
    UNKNOWN_ERROR: "read the tuner's output for the exception",
}


def _cause_advice(number: int, *, any_valid: bool) -> str:
    if number == COMPILE_HOST:
        if any_valid:
            return "some configs do not compile; the tuner's output has the compiler error"
        return "the template likely does not match the target (e.g. a GPU template on llvm)"
    advice = _CAUSE_ADVICE.get(number)
    if advice is None and number in METASCHEDULE_ERRORS:
        return METASCHEDULE_ERRORS[number][1]
    if advice is None:
        return "not an AutoTVM error number; check where this log came from"
    return advice


def _timeout_note(number: int, all_costs: Sequence[float]) -> str:
    """Return " (timeout was X s)" when all given all_costs are one positive finite value."""
    if number not in (BUILD_TIMEOUT, RUN_TIMEOUT) or not all_costs:
        return ""
    first = all_costs[0]
    if not math.isfinite(first) or first <= 0:
        return ""
    if any(cost != first for cost in all_costs):
        return ""
    return f" (timeout was {first:g} s)"


def _cause_sentence(
    number: int, count: int, out_of: int, after_instantiation: bool, note: str, any_valid: bool
) -> str:
    where = " after instantiation" if after_instantiation else ""
    advice = _cause_advice(number, any_valid=any_valid)
    if count == out_of:
        share = "The 1 failure" if count == 1 else f"All {count} failures"
    else:
        share = f"{count} of {out_of} failures"
    verb = "is" if count == 1 else "are"
    return f"{share}{where} {verb} {error_name(number)}{note}: {advice}."


def _built_failures(counts: Mapping[int, int]) -> dict[int, int]:
    return {
        number: n
        for number, n in counts.items()
        if n > 0 and number not in (NO_ERROR, INSTANTIATION_ERROR)
    }


def cause_of_failures(counts: Mapping[int, int]) -> int | None:
    """The failure kind `diagnose` names as the cause: the most common one past instantiation.

    Ties go to the lower number; None when no trial failed past instantiation. Callers use it
    to pick the all_cost values to pass to `diagnose` (the timeout in effect for that kind).
    """
    return _cause_of(tuple(counts.items()))


@lru_cache(maxsize=4096)  # asked per failing template (38k at 80k workloads), of a few counts
def _cause_of(items: tuple[tuple[int, int], ...]) -> int | None:
    built = _built_failures(dict(items))
    return min(built, key=lambda number: (-built[number], number), default=None)


def diagnose(
    counts: Mapping[int, int],
    *,
    all_costs: Sequence[float] = (),
    answered_by: str | None = None,
) -> list[str]:
    """Explain the error pattern of ONE workload under one template, most important first.

    ``counts`` maps error_no to the number of trials (0 = valid); counts of zero or below are
    ignored. ``all_costs`` are the all_cost values of the records of the kind reported as the
    cause (`cause_of_failures`); for BUILD_TIMEOUT and RUN_TIMEOUT AutoTVM writes the timeout
    in effect there, so when they are all equal the value is quoted as "(timeout was X s)".
    Mixed or other values
    are simply not quoted. ``answered_by``: when every trial failed but apply_history_best still
    finds a config for the layer (another template, another target's record), the sentence that
    says so, replacing the fallback one. Returns [] when nothing is notable.

    Rules (thresholds are the module constants):

    * every trial failed: "No valid measurement" (the layer runs an untuned fallback config),
      then, if >= SPACE_MISFIT_SHARE of the failures are INSTANTIATION_ERROR, that the space does
      not fit the device, then the most common other failure kind with its remedy
      (COMPILE_HOST here means the template likely does not match the target);
    * some valid and failed / total > HIGH_FAILURE_SHARE: the share, and that the best config is
      chosen from the valid ones only;
    * some valid and one failure kind other than INSTANTIATION_ERROR is >= DOMINANT_SHARE of the
      non-instantiation failures and >= NOTABLE_SHARE of all trials: that kind with its remedy;
    * 0 < valid < MIN_VALID_TRIALS: "Only N valid trials: tune longer".
    """
    # Judged once per distinct question (`errors` asks for 38k templates at 80k workloads,
    # with a dozen distinct counts): what the answer does not read is left out of the key.
    # all_costs are read only when a timeout is the cause (`_timeout_note`), answered_by only
    # when no trial is valid.
    costs = tuple(all_costs) if BUILD_TIMEOUT in counts or RUN_TIMEOUT in counts else ()
    answered = answered_by if counts.get(NO_ERROR, 0) <= 0 else None
    return list(_diagnosed(tuple(counts.items()), costs, answered))


@lru_cache(maxsize=4096)
def _diagnosed(
    items: tuple[tuple[int, int], ...], all_costs: tuple[float, ...], answered_by: str | None
) -> tuple[str, ...]:
    """`diagnose` of `dict(items)` (its rules)."""
    positive = {number: n for number, n in items if n > 0}
    total = sum(positive.values())
    if total == 0:
        return ()
    valid = positive.get(NO_ERROR, 0)
    failed = total - valid
    instantiation = positive.get(INSTANTIATION_ERROR, 0)
    built_failures = _built_failures(positive)
    built_failed = sum(built_failures.values())
    top = cause_of_failures(positive)

    def top_cause(top: int, *, any_valid: bool) -> str:
        note = _timeout_note(top, all_costs)
        after_instantiation = instantiation > 0
        return _cause_sentence(
            top, built_failures[top], built_failed, after_instantiation, note, any_valid
        )

    sentences: list[str] = []
    if valid == 0:
        sentences.append(
            answered_by or "No valid measurement: this layer will run an untuned fallback config."
        )
        if instantiation / failed >= SPACE_MISFIT_SHARE:
            sentences.append(
                _cause_sentence(INSTANTIATION_ERROR, instantiation, failed, False, "", False)
            )
        if top is not None:
            sentences.append(top_cause(top, any_valid=False))
        return tuple(sentences)

    if failed / total > HIGH_FAILURE_SHARE:
        ones = "one" if valid == 1 else "ones"
        percent = 100 * failed // total  # floored: 999 of 1000 is 99%, not 100%
        sentences.append(
            f"{failed} of {total} trials failed ({percent}%); "
            f"the best config is chosen from the {valid} valid {ones} only."
        )
    if (
        top is not None
        and built_failures[top] / built_failed >= DOMINANT_SHARE
        and built_failures[top] / total >= NOTABLE_SHARE
    ):
        sentences.append(top_cause(top, any_valid=True))
    if valid < MIN_VALID_TRIALS:
        plural = "trial" if valid == 1 else "trials"
        sentences.append(f"Only {valid} valid {plural}: tune longer before trusting the best.")
    return tuple(sentences)
