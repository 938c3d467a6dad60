"""AutoTVM measurement error numbers: what each means, why it happens, and what to change.

Every AutoTVM record stores an ``error_no`` (TVM's ``MeasureErrorNo``, 0-8). The log keeps only
the number: the error message was printed by the tuner and is not in the file. This module turns
the number into an explanation and, given the counts for one workload, into short advice.

Pure: no I/O. ``diagnose`` takes counts the caller has already gathered.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tunelog.exceptions import UnknownErrorCodeError

__all__ = [
    "DOMINANT_SHARE",
    "ERROR_CODES",
    "HIGH_FAILURE_SHARE",
    "MIN_VALID_TRIALS",
    "NOTABLE_SHARE",
    "SPACE_MISFIT_SHARE",
    "ErrorCode",
    "diagnose",
    "error_name",
    "lookup_error_code",
]


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One AutoTVM ``MeasureErrorNo`` value with an explanation for users."""

    number: int
    name: str
    meaning: str
    causes: tuple[str, ...]
    remedies: tuple[str, ...]


NO_ERROR = 0
INSTANTIATION_ERROR = 1
COMPILE_HOST = 2
COMPILE_DEVICE = 3
RUNTIME_DEVICE = 4
WRONG_ANSWER = 5
BUILD_TIMEOUT = 6
RUN_TIMEOUT = 7
UNKNOWN_ERROR = 8

_CODES: tuple[ErrorCode, ...] = (
    ErrorCode(
        number=NO_ERROR,
        name="NO_ERROR",
        meaning="The config was built and run; its costs are real measurements.",
        causes=(),
        remedies=(),
    ),
    ErrorCode(
        number=INSTANTIATION_ERROR,
        name="INSTANTIATION_ERROR",
        meaning="The config was rejected before it was built, so it was never measured.",
        causes=(
            "the kernel would exceed a GPU limit checked before building: threads per block, "
            "threads along one axis, or shared memory per block",
            "the template itself refuses this combination of knob values",
            "when every trial fails: the target describes a different device than the one "
            "measured (wrong -arch or -max_num_threads), or the template is meant for "
            "another device",
        ),
        remedies=(
            "nothing, when some trials of the task succeed: this is routine on GPUs and the "
            "tuner simply moves on to other configs",
            "when every trial fails: the config space does not fit this device; fix the target "
            "string (-arch, -max_num_threads) or pick a template written for this device",
        ),
    ),
    ErrorCode(
        number=COMPILE_HOST,
        name="COMPILE_HOST",
        meaning="Building the kernel on the host failed: lowering or code generation raised.",
        causes=(
            "a template written for another target, e.g. a CUDA schedule with thread bindings "
            "built for llvm",
            "a schedule step the target's code generator does not support (tensorize "
            "intrinsic, vector width)",
            "a missing or broken toolchain: nvcc, a cross compiler, the Android NDK, or an LLVM "
            "built without that backend",
            "a template bug that only shows for some knob values",
        ),
        remedies=(
            "read the build error the tuner printed (the log file keeps only the number); "
            "turn on DEBUG logging for the 'autotvm' logger to see it",
            "make sure the task was created with the target it will run on and that the "
            "template is one written for that target",
            "install the missing compiler or pass the right build_func to "
            "autotvm.LocalBuilder (e.g. 'ndk' for Android)",
        ),
    ),
    ErrorCode(
        number=COMPILE_DEVICE,
        name="COMPILE_DEVICE",
        meaning="The device-side compiler (a driver's JIT, e.g. OpenCL) rejected the kernel.",
        causes=(
            "the device driver's kernel compiler fails on the generated source (OpenCL, "
            "Vulkan, Metal)",
            "the driver or SDK on the device is too old for the code TVM generates",
        ),
        remedies=(
            "read the device compiler's message in the tuner's output",
            "update the driver or SDK on the device, then check a small TVM kernel runs there",
        ),
    ),
    ErrorCode(
        number=RUNTIME_DEVICE,
        name="RUNTIME_DEVICE",
        meaning="The kernel was built but failed when it was loaded or run on the device.",
        causes=(
            "kernel launch failure: invalid launch configuration or illegal memory access",
            "the RPC connection dropped or the RPC server on the device crashed",
            "driver trouble: a driver older than the CUDA toolkit, or code built for the wrong "
            "-arch",
            "the device ran out of memory",
        ),
        remedies=(
            "check the device itself: run a small TVM kernel on it and look at the driver's "
            "messages (nvidia-smi, dmesg)",
            "check the RPC tracker and server (python -m tvm.exec.query_rpc_tracker) and "
            "restart them",
            "match -arch to the GPU and the driver to the toolkit; free device memory used by "
            "other processes",
        ),
    ),
    ErrorCode(
        number=WRONG_ANSWER,
        name="WRONG_ANSWER",
        meaning="The kernel ran but its output differed from the reference "
        "(only checked with check_correctness=True).",
        causes=(
            "a schedule bug that shows only for some knob values (missing synchronisation, "
            "bad boundary handling)",
            "a code generation bug for this target",
            "low precision (float16, int8) results compared with a tight tolerance",
        ),
        remedies=(
            "do not deploy this template on this target until the cause is found; the "
            "failing configs are already excluded from the best",
            "reproduce one failing config outside the tuner and compare its output with "
            "a reference implementation",
        ),
    ),
    ErrorCode(
        number=BUILD_TIMEOUT,
        name="BUILD_TIMEOUT",
        meaning="Building the config took longer than the builder's timeout.",
        causes=(
            "the builder timeout is too short for this kernel (autotvm.LocalBuilder defaults "
            "to 10 s)",
            "large unrolling or huge tiles make the generated code slow to compile",
            "too many parallel builds for the CPU cores or memory of the host",
        ),
        remedies=(
            "raise the builder timeout: autotvm.LocalBuilder(timeout=...); tvmc tune's "
            "--timeout does not reach the builder, it sets the runner's timeout",
            "lower the builder's n_parallel when the host is overloaded",
        ),
    ),
    ErrorCode(
        number=RUN_TIMEOUT,
        name="RUN_TIMEOUT",
        meaning="Running the config took longer than the runner's timeout, "
        "or the runner's worker died.",
        causes=(
            "the runner timeout is too short for number x repeat runs of a slow kernel",
            "a very slow config, e.g. a tiny tile on a large workload",
            "the device or its RPC server hung or crashed",
        ),
        remedies=(
            "raise the runner timeout: autotvm.LocalRunner(timeout=...) or "
            "RPCRunner(timeout=...); tvmc tune --timeout sets it too",
            "lower number, repeat or min_repeat_ms so one measurement fits in the timeout",
            "check that the device and the RPC tracker/server are still alive",
        ),
    ),
    ErrorCode(
        number=UNKNOWN_ERROR,
        name="UNKNOWN_ERROR",
        meaning="The measurement failed in a way AutoTVM did not classify.",
        causes=(
            "an exception in a custom builder, runner or build_func",
            "different TVM versions on the tuning host and on the RPC server",
        ),
        remedies=(
            "read the tuner's output for the exception: the log file keeps only the number",
            "use the same TVM build on the host and on the device",
        ),
    ),
)

ERROR_CODES: dict[int, ErrorCode] = {code.number: code for code in _CODES}
"""Every AutoTVM error number, 0-8, mapped to its explanation."""

# Short names accepted by lookup_error_code besides the full names. Keys are normalised
# (lower case, no "_", "-" or spaces).
_ALIASES: dict[str, int] = {
    "ok": NO_ERROR,
    "valid": NO_ERROR,
    "measured": NO_ERROR,
    "success": NO_ERROR,
    "instantiation": INSTANTIATION_ERROR,
    "inst": INSTANTIATION_ERROR,
    "host": COMPILE_HOST,
    "hostcompile": COMPILE_HOST,
    "jit": COMPILE_DEVICE,
    "devicejit": COMPILE_DEVICE,
    "devicecompile": COMPILE_DEVICE,
    "runtime": RUNTIME_DEVICE,
    "deviceruntime": RUNTIME_DEVICE,
    "wrong": WRONG_ANSWER,
    "incorrect": WRONG_ANSWER,
    "build": BUILD_TIMEOUT,
    "run": RUN_TIMEOUT,
    "unknown": UNKNOWN_ERROR,
}

# Words that would fit more than one code: refused with a hint rather than guessed.
_AMBIGUOUS: dict[str, tuple[int, ...]] = {
    "timeout": (BUILD_TIMEOUT, RUN_TIMEOUT),
    "compile": (COMPILE_HOST, COMPILE_DEVICE),
    "compileerror": (COMPILE_HOST, COMPILE_DEVICE),
    "device": (COMPILE_DEVICE, RUNTIME_DEVICE),
}

_BY_NAME: dict[str, int] = {
    **{code.name.lower().replace("_", ""): code.number for code in _CODES},
    **_ALIASES,
}

_SEPARATORS = re.compile(r"[\s_\-]+")
_VALID_LIST = ", ".join(f"{c.number} {c.name.lower()}" for c in _CODES)


def _normalise(text: str) -> str:
    key = _SEPARATORS.sub("", text.strip().lower())
    return key.removeprefix("measureerrorno.")


def _unknown(code: object) -> UnknownErrorCodeError:
    return UnknownErrorCodeError(
        f"unknown error code {code!r}: use 0-8 or a name such as build_timeout ({_VALID_LIST})"
    )


def lookup_error_code(code: str | int) -> ErrorCode:
    """Return the ErrorCode for a number (6, "6") or a name ("build_timeout", "build-timeout",
    "BuildTimeout", alias "build"); raise UnknownErrorCodeError for anything else."""
    if isinstance(code, bool):
        raise _unknown(code)
    if isinstance(code, int):
        if code in ERROR_CODES:
            return ERROR_CODES[code]
        raise _unknown(code)
    if not isinstance(code, str):
        raise TypeError(f"error code must be an int or a str, not {type(code).__name__}")
    text = code.strip()
    if text.isascii() and text.isdigit():
        number = int(text)
        if number in ERROR_CODES:
            return ERROR_CODES[number]
        raise _unknown(code)
    key = _normalise(text)
    if key in _BY_NAME:
        return ERROR_CODES[_BY_NAME[key]]
    if key in _AMBIGUOUS:
        options = " or ".join(f"{ERROR_CODES[n].name.lower()} ({n})" for n in _AMBIGUOUS[key])
        raise UnknownErrorCodeError(f"ambiguous error code {code!r}: use {options}")
    raise _unknown(code)


# MetaSchedule records no error, only run_secs of 1e10 for a build or run that failed; tunelog
# stores its invalid records under these numbers (outside AutoTVM's 0-8) so they are named for
# what they are (see tunelog.metaschedule).
MS_NOT_MEASURED = 101
MS_NO_SCHEDULE = 102
METASCHEDULE_ERRORS: dict[int, tuple[str, str]] = {
    MS_NOT_MEASURED: (
        "MS_NOT_MEASURED",
        "the build or the run failed (MetaSchedule writes run_secs 1e10 and no reason): the "
        'work_dir\'s logs/*.log say why ("Build errors", "Run errors")',
    ),
    MS_NO_SCHEDULE: (
        "MS_NO_SCHEDULE",
        "the trace holds no schedule instruction before EnterPostproc (a space with no "
        "schedule rules): TVM never uses such a record; give the space its schedule rules",
    ),
}


def error_name(number: int) -> str:
    """Return the name of an error number, or ``UNKNOWN(n)`` for one AutoTVM does not define."""
    code = ERROR_CODES.get(number)
    if code is not None:
        return code.name
    metaschedule = METASCHEDULE_ERRORS.get(number)
    return metaschedule[0] if metaschedule is not None else f"UNKNOWN({number})"


# --- diagnosis -------------------------------------------------------------------------------

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
    BUILD_TIMEOUT: "raise the builder timeout, autotvm.LocalBuilder(timeout=...)",
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
    share = f"All {count}" if count == out_of else f"{count} of {out_of}"
    return f"{share} failures{where} are {error_name(number)}{note}: {advice}."


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
    built = _built_failures(counts)
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
    positive = {number: n for number, n in counts.items() if n > 0}
    total = sum(positive.values())
    if total == 0:
        return []
    valid = positive.get(NO_ERROR, 0)
    failed = total - valid
    instantiation = positive.get(INSTANTIATION_ERROR, 0)
    built_failures = _built_failures(positive)
    built_failed = sum(built_failures.values())
    top = cause_of_failures(positive)

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
            sentences.append(
                _cause_sentence(
                    top,
                    built_failures[top],
                    built_failed,
                    instantiation > 0,
                    _timeout_note(top, all_costs),
                    False,
                )
            )
        return sentences

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
        sentences.append(
            _cause_sentence(
                top,
                built_failures[top],
                built_failed,
                instantiation > 0,
                _timeout_note(top, all_costs),
                True,
            )
        )
    if valid < MIN_VALID_TRIALS:
        plural = "trial" if valid == 1 else "trials"
        sentences.append(f"Only {valid} valid {plural}: tune longer before trusting the best.")
    return sentences
