"""AutoTVM measurement error numbers: what each means, why it happens, and what to change.

Every AutoTVM record stores an ``error_no`` (TVM's ``MeasureErrorNo``, 0-8). The log keeps only
the number: the error message was printed by the tuner and is not in the file. This module turns
the number into an explanation (the table of codes, their names and aliases); advice from the
counts of one workload is `tunelog.failurecauses.diagnose`.

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tunelog.exceptions import UnknownErrorCodeError

__all__ = [
    "ERROR_CODES",
    "ErrorCode",
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
        f"unknown error code {code!r}: use 0-8 or a name such as build_timeout ({_VALID_LIST}), "
        "or MetaSchedule's ms_not_measured (101), ms_no_schedule (102)"
    )


def lookup_error_code(code: str | int) -> ErrorCode:
    """Return the ErrorCode for a number (6, "6") or a name ("build_timeout", "build-timeout",
    "BuildTimeout", alias "build"); raise UnknownErrorCodeError for anything else."""
    if isinstance(code, bool):
        raise _unknown(code)
    if isinstance(code, int):
        if code in ERROR_CODES:
            return ERROR_CODES[code]
        if code in METASCHEDULE_ERROR_CODES:
            return METASCHEDULE_ERROR_CODES[code]
        raise _unknown(code)
    if not isinstance(code, str):
        raise TypeError(f"error code must be an int or a str, not {type(code).__name__}")
    text = code.strip()
    if text.isascii() and text.isdigit():
        return lookup_error_code(int(text))
    key = _normalise(text)
    if key in _BY_NAME:
        return ERROR_CODES[_BY_NAME[key]]
    for number, (name, _) in METASCHEDULE_ERRORS.items():
        if key == name.lower().replace("_", ""):
            return METASCHEDULE_ERROR_CODES[number]
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


# The same as ErrorCodes, for `explain` (the report's and `errors`' meanings read them too).
METASCHEDULE_ERROR_CODES: dict[int, ErrorCode] = {
    MS_NOT_MEASURED: ErrorCode(
        number=MS_NOT_MEASURED,
        name="MS_NOT_MEASURED",
        meaning=METASCHEDULE_ERRORS[MS_NOT_MEASURED][1],
        causes=(
            "MetaSchedule's builder or runner failed for the candidate (a build error, a "
            "timeout, a device error); the database keeps no reason",
        ),
        remedies=(
            "read the work_dir's logs/*.log for the candidate's build or run error",
            "raise the builder's or runner's timeout if the machine was busy",
        ),
    ),
    MS_NO_SCHEDULE: ErrorCode(
        number=MS_NO_SCHEDULE,
        name="MS_NO_SCHEDULE",
        meaning=METASCHEDULE_ERRORS[MS_NO_SCHEDULE][1],
        causes=("the design space had no schedule rules: the trace starts with EnterPostproc",),
        remedies=("tune with the target's schedule rules (the default space generator)",),
    ),
}


def error_name(number: int) -> str:
    """Return the name of an error number, or ``UNKNOWN(n)`` for one AutoTVM does not define."""
    code = ERROR_CODES.get(number)
    if code is not None:
        return code.name
    metaschedule = METASCHEDULE_ERRORS.get(number)
    return metaschedule[0] if metaschedule is not None else f"UNKNOWN({number})"
