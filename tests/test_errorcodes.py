"""AutoTVM error numbers (tvm-reference §6): the table, name lookup and the per-workload diagnosis.

The diagnosis cases use error counts computed from real logs in ../shared/corpus, one workload
(target, template, args) at a time. The counts are written out here so these tests run without
../shared; each case names the file it was counted from.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tunelog
from tunelog.errorcodes import (
    ERROR_CODES,
    METASCHEDULE_ERROR_CODES,
    ErrorCode,
    error_name,
    lookup_error_code,
)
from tunelog.exceptions import TunelogError, UnknownErrorCodeError
from tunelog.failurecauses import (
    DOMINANT_SHARE,
    HIGH_FAILURE_SHARE,
    MIN_VALID_TRIALS,
    NOTABLE_SHARE,
    SPACE_MISFIT_SHARE,
    _diagnosed,
    cause_of_failures,
    diagnose,
)

NAMES = {
    0: "NO_ERROR",
    1: "INSTANTIATION_ERROR",
    2: "COMPILE_HOST",
    3: "COMPILE_DEVICE",
    4: "RUNTIME_DEVICE",
    5: "WRONG_ANSWER",
    6: "BUILD_TIMEOUT",
    7: "RUN_TIMEOUT",
    8: "UNKNOWN_ERROR",
}

# --- the table ---------------------------------------------------------------------------------


def test_table_covers_exactly_0_to_8_with_autotvm_names() -> None:
    assert sorted(ERROR_CODES) == list(range(9))
    assert {n: code.name for n, code in ERROR_CODES.items()} == NAMES
    for number, code in ERROR_CODES.items():
        assert code.number == number


def test_names_are_unique() -> None:
    names = [code.name for code in ERROR_CODES.values()]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("number", range(9))
def test_every_code_is_explained(number: int) -> None:
    code = ERROR_CODES[number]
    assert code.meaning.strip()
    assert code.meaning.endswith(".")
    assert all(text.strip() for text in code.causes + code.remedies)
    if number != 0:
        assert len(code.causes) >= 1
        assert len(code.remedies) >= 1


@pytest.mark.parametrize(
    ("number", "phrase"),
    [
        (1, "max_num_threads"),
        (2, "another target"),
        (4, "RPC"),
        (5, "check_correctness"),
        (6, "LocalBuilder(timeout=...)"),
        (7, "LocalRunner(timeout=...)"),
        (7, "number"),
        (8, "tuner's output"),
    ],
)
def test_explanations_name_the_concrete_fix(number: int, phrase: str) -> None:
    code = ERROR_CODES[number]
    text = " ".join((code.meaning, *code.causes, *code.remedies))
    assert phrase in text


def test_error_code_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ERROR_CODES[6].name = "X"  # type: ignore[misc]


# --- error_name --------------------------------------------------------------------------------


@pytest.mark.parametrize(("number", "name"), sorted(NAMES.items()))
def test_error_name_known(number: int, name: str) -> None:
    assert error_name(number) == name


@pytest.mark.parametrize("number", [-1, 9, 42, 10**20])
def test_error_name_unknown(number: int) -> None:
    assert error_name(number) == f"UNKNOWN({number})"


# --- lookup_error_code -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "number"),
    [
        *((n, n) for n in range(9)),
        *((str(n), n) for n in range(9)),
        (" 6 ", 6),
        ("06", 6),
        ("build_timeout", 6),
        ("BUILD_TIMEOUT", 6),
        ("build-timeout", 6),
        ("buildtimeout", 6),
        ("Build Timeout", 6),
        ("BuildTimeout", 6),
        ("  run_timeout ", 7),
        ("RUN-TIMEOUT", 7),
        ("no_error", 0),
        ("instantiation_error", 1),
        ("compile_host", 2),
        ("compile-device", 3),
        ("RuntimeDevice", 4),
        ("wrong_answer", 5),
        ("unknown_error", 8),
        ("MeasureErrorNo.BUILD_TIMEOUT", 6),
        # Short aliases.
        ("ok", 0),
        ("valid", 0),
        ("instantiation", 1),
        ("host", 2),
        ("jit", 3),
        ("runtime", 4),
        ("wrong", 5),
        ("build", 6),
        ("run", 7),
        ("unknown", 8),
    ],
)
def test_lookup(given: str | int, number: int) -> None:
    assert lookup_error_code(given) is ERROR_CODES[number]


@pytest.mark.parametrize("name", sorted(NAMES.values()))
def test_lookup_every_name_in_every_spelling(name: str) -> None:
    expected = lookup_error_code(name)
    for spelling in (name.lower(), name.replace("_", "-"), name.replace("_", "").lower()):
        assert lookup_error_code(spelling) is expected


@pytest.mark.parametrize(
    "given",
    [9, -1, 100, "9", "-1", "6.0", "²", "", "   ", "x", "build_timeout_x", "timeouts", True, False],
)
def test_lookup_unknown_raises_with_the_valid_codes(given: str | int) -> None:
    with pytest.raises(UnknownErrorCodeError) as info:
        lookup_error_code(given)
    message = str(info.value)
    assert "unknown error code" in message
    assert "0-8" in message
    for name in NAMES.values():
        assert name.lower() in message


@pytest.mark.parametrize(
    ("given", "options"),
    [
        ("timeout", ("build_timeout", "run_timeout")),
        ("TIMEOUT", ("build_timeout", "run_timeout")),
        ("compile", ("compile_host", "compile_device")),
        ("device", ("compile_device", "runtime_device")),
    ],
)
def test_lookup_ambiguous_word_raises_with_the_choices(
    given: str, options: tuple[str, ...]
) -> None:
    with pytest.raises(UnknownErrorCodeError, match="ambiguous") as info:
        lookup_error_code(given)
    for option in options:
        assert option in str(info.value)


def test_unknown_error_code_error_is_a_tunelog_lookup_error() -> None:
    with pytest.raises(LookupError):
        lookup_error_code("nope")
    with pytest.raises(TunelogError):
        lookup_error_code(99)


# --- diagnose ----------------------------------------------------------------------------------

FALLBACK = ("No valid measurement", "untuned fallback config")

# (counts, all_costs, one tuple of key phrases per expected sentence, in order)
DIAGNOSIS_CASES: list[tuple[str, dict[int, int], list[float], list[tuple[str, ...]]]] = [
    # WANNA959__tvm_learning/resnet-50-v2-autotuning.json, conv2d_nchw.cuda on
    # [1,3,224,224] x [64,3,7,7]: every trial failed; the 23 BUILD_TIMEOUTs have all_cost 10.
    (
        "wanna959_first_conv_all_failed",
        {1: 58, 4: 39, 6: 23},
        [10.0] * 23,
        [FALLBACK, ("39 of 62 failures after instantiation are RUNTIME_DEVICE", "RPC")],
    ),
    # Same file, conv2d_nchw_winograd.cuda on [1,64,56,56] x [64,64,3,3]: mostly build timeouts.
    (
        "wanna959_winograd_build_timeouts",
        {1: 8, 4: 12, 6: 100},
        [10.0] * 100,
        [
            FALLBACK,
            (
                "100 of 112 failures after instantiation are BUILD_TIMEOUT (timeout was 10 s)",
                "LocalBuilder(timeout=...)",
            ),
        ],
    ),
    # Same file, dense_small_batch.gpu [1,2048] x [1000,2048]: nothing but device failures.
    (
        "wanna959_dense_runtime_device",
        {1: 4, 4: 44},
        [],
        [FALLBACK, ("All 44 failures after instantiation are RUNTIME_DEVICE",)],
    ),
    # CharlieCurry__tvm-learning/autotvm/back/XGBtuner_matmul.log, matmul 1024^3 on llvm:
    # 747 of 850 records are BUILD_TIMEOUT with all_cost 10.
    (
        "charliecurry_xgb_matmul",
        {0: 78, 2: 15, 6: 747},
        [10.0] * 747,
        [
            ("762 of 840 trials failed (90%)", "chosen from the 78 valid ones only"),
            ("747 of 762 failures are BUILD_TIMEOUT (timeout was 10 s)", "builder timeout"),
        ],
    ),
    # Same file, matmul_v4 [512,224,512]: 10 valid trials and nothing else.
    ("charliecurry_matmul_v4_clean", {0: 10}, [], []),
    # CharlieCurry__tvm-learning/autotvm/back/conv2d.log: a CUDA template run on llvm.
    (
        "charliecurry_conv2d_cuda_template_on_llvm",
        {2: 60},
        [],
        [FALLBACK, ("All 60 failures are COMPILE_HOST", "does not match the target")],
    ),
    # generated/x86_mini_short_timeouts.log (0.8 s builder timeout), dense_nopack.x86.
    (
        "x86_mini_dense_nopack",
        {0: 16, 6: 9},
        [0.8] * 9,
        [("All 9 failures are BUILD_TIMEOUT (timeout was 0.8 s)", "LocalBuilder(timeout=...)")],
    ),
    # Same file, dense_pack.x86.
    (
        "x86_mini_dense_pack",
        {0: 17, 6: 8},
        [0.8] * 8,
        [("All 8 failures are BUILD_TIMEOUT (timeout was 0.8 s)",)],
    ),
    # Same file, each conv2d_NCHWc.x86 workload: 25 valid, no failure.
    ("x86_mini_conv2d_clean", {0: 25}, [], []),
    # dan-zheng__cs590-project/matmul.log, matmul 512^3 on cuda: 159 of 160 failed.
    (
        "dan_zheng_matmul_one_valid",
        {0: 1, 1: 52, 2: 107},
        [],
        [
            ("159 of 160 trials failed (99%)", "chosen from the 1 valid one only"),
            ("All 107 failures after instantiation are COMPILE_HOST", "do not compile"),
            ("Only 1 valid trial:", "tune longer"),
        ],
    ),
    # WoongQ__RoboticAI2023_TVM/conv2d.log, tutorial/conv2d: 30% INSTANTIATION_ERROR is routine.
    ("woongq_tutorial_conv2d_routine", {0: 143, 1: 60, 6: 2}, [10.0, 10.0], []),
    # Same file, conv2d: exactly half failed (not more), 3 timeouts in 100 trials is noise.
    ("woongq_conv2d_half_failed", {0: 50, 1: 47, 6: 1, 7: 2}, [10.0, 4.0, 4.0], []),
    # Constructed: the remaining rules and the thresholds' edges.
    (
        "all_instantiation_error",
        {1: 200},
        [],
        [FALLBACK, ("All 200 failures are INSTANTIATION_ERROR", "does not fit this device")],
    ),
    (
        "nearly_all_instantiation_error",
        {1: 95, 6: 5},
        [10.0] * 5,
        [
            FALLBACK,
            ("95 of 100 failures are INSTANTIATION_ERROR", "-max_num_threads"),
            ("All 5 failures after instantiation are BUILD_TIMEOUT (timeout was 10 s)",),
        ],
    ),
    ("gpu_routine_5_percent_instantiation", {0: 950, 1: 50}, [], []),
    ("one_timeout_in_500_is_noise", {0: 499, 6: 1}, [10.0], []),
    (
        "run_timeout_dominant",
        {0: 60, 7: 40},
        [4.0] * 40,
        [("All 40 failures are RUN_TIMEOUT (timeout was 4 s)", "runner timeout", "number/repeat")],
    ),
    (
        "mixed_all_costs_are_not_quoted",
        {0: 60, 6: 40},
        [10.0, 10.0, 12.5],
        [("All 40 failures are BUILD_TIMEOUT: raise the builder timeout",)],
    ),
    (
        "runtime_device_dominant_with_some_valid",
        {0: 30, 4: 70},
        [],
        [("70 of 100 trials failed (70%)",), ("All 70 failures are RUNTIME_DEVICE", "driver")],
    ),
    (
        "tie_goes_to_lower_number_at_exactly_half",
        {0: 80, 4: 10, 6: 10},
        [],
        [("10 of 20 failures are RUNTIME_DEVICE",)],
    ),
    (
        "compile_host_with_some_valid_is_not_a_target_mismatch",
        {0: 40, 2: 60},
        [],
        [("60 of 100 trials failed (60%)",), ("All 60 failures are COMPILE_HOST", "compiler")],
    ),
    (
        "number_outside_0_8",
        {0: 10, 42: 30},
        [],
        [("30 of 40 trials failed (75%)",), ("All 30 failures are UNKNOWN(42)",)],
    ),
    (
        "one_trial_that_failed",
        {6: 1},
        [],
        [("No valid measurement",), ("The 1 failure is BUILD_TIMEOUT: raise the builder",)],
    ),
    (
        "one_failure_of_several",
        {4: 1, 7: 1, 6: 1},
        [],
        [("No valid measurement",), ("1 of 3 failures is RUNTIME_DEVICE",)],
    ),
    ("few_valid", {0: 5}, [], [("Only 5 valid trials: tune longer",)]),
    ("just_enough_valid", {0: MIN_VALID_TRIALS}, [], []),
    ("one_below_enough_valid", {0: MIN_VALID_TRIALS - 1}, [], [("Only 9 valid trials",)]),
    ("no_trials", {}, [], []),
    ("zero_and_negative_counts_are_ignored", {0: 0, 6: 0, 4: -3}, [], []),
]


@pytest.mark.parametrize(
    ("counts", "all_costs", "expected"),
    [pytest.param(c, a, e, id=name) for name, c, a, e in DIAGNOSIS_CASES],
)
def test_diagnose(
    counts: dict[int, int], all_costs: list[float], expected: list[tuple[str, ...]]
) -> None:
    sentences = diagnose(counts, all_costs=all_costs)
    assert len(sentences) == len(expected), sentences
    for sentence, phrases in zip(sentences, expected, strict=True):
        for phrase in phrases:
            assert phrase in sentence, (phrase, sentence)


def test_diagnose_all_costs_default_to_no_timeout_note() -> None:
    (sentence,) = diagnose({0: 16, 6: 9})
    assert "timeout was" not in sentence


@pytest.mark.parametrize("costs", [[0.0], [-10.0], [math.inf], [math.nan]])
def test_diagnose_ignores_meaningless_all_costs(costs: list[float]) -> None:
    (sentence,) = diagnose({0: 16, 6: 9}, all_costs=costs)
    assert "timeout was" not in sentence


def test_diagnose_does_not_quote_all_costs_for_other_causes() -> None:
    sentences = diagnose({4: 30}, all_costs=[10.0])
    assert not any("timeout was" in s for s in sentences)


OTHER_COSTS: list[list[float]] = [[], [3.0, 3.0], [10.0] * 4, [2.5]]
ANSWERS: list[str | None] = [
    None,
    "",
    "No valid measurement here; another target's answers (a.log:7).",
]


def test_diagnose_answers_what_its_rules_say_whatever_it_asked_before() -> None:
    """`diagnose` keeps answers keyed by what they read (no all_costs without a timeout, no
    answered_by with a valid trial): every case, asked after all the others in either order,
    is what the rules say of its full inputs."""
    questions = [
        (counts, costs, answered)
        for _, counts, all_costs, _ in DIAGNOSIS_CASES
        for costs in [all_costs, *OTHER_COSTS]
        for answered in ANSWERS
    ]
    for ordered in (questions, questions[::-1]):
        for counts, costs, answered in ordered:
            expected = list(_diagnosed.__wrapped__(tuple(counts.items()), tuple(costs), answered))
            assert diagnose(counts, all_costs=costs, answered_by=answered) == expected


def test_thresholds_are_documented_fractions() -> None:
    for share in (DOMINANT_SHARE, HIGH_FAILURE_SHARE, NOTABLE_SHARE, SPACE_MISFIT_SHARE):
        assert 0 < share <= 1
    assert MIN_VALID_TRIALS >= 1


_COUNTS = st.dictionaries(
    st.one_of(st.integers(min_value=-2, max_value=12), st.integers()),
    st.one_of(st.integers(min_value=-5, max_value=2000), st.integers()),
    max_size=12,
)
_COSTS = st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20)


@given(counts=_COUNTS, all_costs=_COSTS)
def test_diagnose_never_raises(counts: dict[int, int], all_costs: list[float]) -> None:
    sentences = diagnose(counts, all_costs=all_costs)
    assert isinstance(sentences, list)
    assert all(isinstance(s, str) and s and s.endswith(".") for s in sentences)
    positive = {k: v for k, v in counts.items() if v > 0}
    if not positive:
        assert sentences == []
    elif positive.get(0, 0) == 0:
        assert sentences[0].startswith("No valid measurement")
    else:
        assert not any(s.startswith("No valid measurement") for s in sentences)
    quoted = [m for s in sentences for m in re.findall(r"timeout was (\S+) s", s)]
    if quoted:
        assert len(set(all_costs)) == 1


@given(code=st.one_of(st.integers(), st.text(max_size=30)))
def test_lookup_only_raises_unknown_error_code(code: int | str) -> None:
    try:
        found = lookup_error_code(code)
    except UnknownErrorCodeError:
        return
    assert isinstance(found, ErrorCode)
    assert found is {**ERROR_CODES, **METASCHEDULE_ERROR_CODES}[found.number]


@pytest.mark.parametrize(
    ("counts", "cause"),
    [
        ({1: 50, 6: 3, 0: 10}, 6),  # instantiation is never the cause past which trials fail
        ({1: 50}, None),
        ({0: 5, 4: 2, 6: 2}, 4),  # ties go to the lower number
        ({6: 0, 7: 1}, 7),
    ],
)
def test_cause_of_failures(counts: dict[int, int], cause: int | None) -> None:
    assert cause_of_failures(counts) == cause


def test_errors_quote_the_timeout_when_instantiation_errors_are_most_common(
    tmp_path: Path,
) -> None:
    # 8 INSTANTIATION_ERROR, 4 BUILD_TIMEOUT (all_cost 4.0: the timeout), 6 valid.
    trials = [(1, 0.1)] * 8 + [(6, 4.0)] * 4 + [(0, 1.5)] * 6
    lines = []
    for index, (error_no, all_cost) in enumerate(trials):
        cost = 1e9 if error_no else 0.001 * (index + 1)
        lines.append(
            json.dumps(
                {
                    "input": [
                        "cuda -model=t4",
                        "dense_small_batch.gpu",
                        [["TENSOR", [1, 8], "float32"]],
                        {},
                    ],
                    "config": {"index": index, "code_hash": None, "entity": []},
                    "result": [[cost], error_no, all_cost, 1.6e9 + index],
                    "version": 0.2,
                    "tvm_version": "0.16.dev0",
                }
            )
        )
    log = tmp_path / "inst.log"
    log.write_text("\n".join(lines) + "\n")
    with tunelog.open_store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(log)])
        (summary,) = tunelog.errors(store)
    assert summary.diagnosis == [
        "12 of 18 trials failed (66%); the best config is chosen from the 6 valid ones only.",
        "All 4 failures after instantiation are BUILD_TIMEOUT (timeout was 4 s): raise the "
        "builder timeout, LocalBuilder(timeout=...) (autotvm's, or auto_scheduler's in its "
        "TuningOptions).",
        "Only 6 valid trials: tune longer before trusting the best.",
    ]


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (101, "MS_NOT_MEASURED"),
        ("101", "MS_NOT_MEASURED"),
        ("ms_not_measured", "MS_NOT_MEASURED"),
        ("MS-NO-SCHEDULE", "MS_NO_SCHEDULE"),
    ],
)
def test_metaschedule_s_error_names_are_explained(code: int | str, name: str) -> None:
    """`stats` and `errors` name MetaSchedule's invalid records MS_NOT_MEASURED and
    MS_NO_SCHEDULE; `explain` knew neither (found by a new user)."""
    found = lookup_error_code(code)
    assert found.name == name and found.meaning and found.remedies
