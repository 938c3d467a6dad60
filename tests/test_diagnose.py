"""diagnose: reading TVM's untuned-operator messages and the reason per workload, on real output.

The fixtures under tests/data/diagnose are what a real relay.build of resnet-18 printed under
hand-made logs (see its README.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import DATA
from tunelog import api
from tunelog.diagnosereport import verdict
from tunelog.diagnoses import (
    ALL_FAILED,
    ANSWERED,
    NO_RECORD,
    NOT_OFFERED,
    OTHER_TARGET,
    PACKED,
    V01_ONLY,
    Diagnosis,
)
from tunelog.exceptions import NotATaskListError, TargetRequiredError
from tunelog.layoutforms import packed_original, workload_text
from tunelog.recordindex import reaches
from tunelog.store import Store
from tunelog.targets import parse_target
from tunelog.tasklists import read_task_list
from tunelog.tvmmessages import read_messages

FIXTURES = DATA / "diagnose"
X86 = "llvm -keys=cpu -mcpu=core-avx2 -mtriple=x86_64-pc-linux-gnu"
STEM = (
    "conv2d_NCHWc.x86",
    ("TENSOR", (1, 3, 224, 224), "float32"),
    ("TENSOR", (64, 3, 7, 7), "float32"),
    (2, 2),
    (3, 3, 3, 3),
    (1, 1),
    "NCHW",
    "NCHW",
    "float32",
)
STEM_TEXT = (
    "('conv2d_NCHWc.x86', ('TENSOR', (1, 3, 224, 224), 'float32'), ('TENSOR', (64, 3, 7, 7), "
    "'float32'), (2, 2), (3, 3, 3, 3), (1, 1), 'NCHW', 'NCHW', 'float32')"
)


# -- reading the messages -------------------------------------------------------------------


def _typographic(text: str) -> str:
    """What a web page makes of the quotes: U+2018 and U+2019 for every '."""
    out, opening = [], True
    for char in text:
        if char == "'":
            out.append("\u2018" if opening else "\u2019")
            opening = not opening
        else:
            out.append(char)
    return "".join(out)


DEBUG_FORM = (
    "2026-11-25 10:05:25,039 DEBUG autotvm: Cannot find tuning records for:\n"
    f"    target={X86}\n"
    f"    key={STEM_TEXT}\n"
    "TVM will apply a default schedule which may negatively impact performance.\n"
)
WARNING_FORM = (
    f"WARNING:autotvm:Cannot find config for target={X86}, workload={STEM_TEXT}. A fallback "
    "configuration is used, which may bring great performance regression.\n"
)
PASTED = f"Cannot find tuning records for: target={X86} key={_typographic(STEM_TEXT)} TVM will\n"
ESCAPED = DEBUG_FORM.replace("'", "&#39;")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (DEBUG_FORM, 1),
        ("noise\n" + WARNING_FORM, 2),
        (PASTED, 1),
        (ESCAPED, 1),
        (DEBUG_FORM.replace("\n", "\r\n"), 1),
        ("[12:00:01] " + DEBUG_FORM.replace("\n    ", "\n[12:00:01]     "), 1),
    ],
    ids=["debug", "fallback-warning", "pasted-typographic", "html-escaped", "crlf", "prefixed"],
)
def test_both_message_forms_are_read_whatever_the_wrapping(text: str, line: int) -> None:
    read = read_messages(text.splitlines())
    assert [(m.target, m.workload, m.line) for m in read.messages] == [(X86, STEM, line)]
    assert read.unread == []


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("(__import__('os').system('true'),)", "not a Python literal"),
        ("('conv2d', (1, 2", "cut off"),
        ("(1, 2)", "tuple starting with a task name"),
    ],
)
def test_a_message_that_cannot_be_read_is_reported_with_its_line(key: str, reason: str) -> None:
    text = f"x\nCannot find tuning records for:\n    target={X86}\n    key={key}\nTVM will\n"
    read = read_messages(text.splitlines())
    assert read.messages == []
    ((line, why),) = read.unread
    assert line == 2 and reason in why


def test_a_repeated_message_is_listed_once_and_counted() -> None:
    read = read_messages((DEBUG_FORM * 3).splitlines())
    assert len(read.messages) == 1 and read.repeats == 2


def test_a_task_list_gives_tuples_and_rejects_other_json() -> None:
    assert read_task_list('[["dense_pack.x86", ["TENSOR", [1, 512], "float32"], null]]') == [
        ("dense_pack.x86", ("TENSOR", (1, 512), "float32"), None)
    ]
    with pytest.raises(NotATaskListError):
        read_task_list('[{"name": "x"}]')


# -- the layout-rewrite rule ----------------------------------------------------------------


def _arm_conv(task: str, kernel: tuple[int, ...]) -> tuple[object, ...]:
    return (
        task,
        ("TENSOR", (1, 128, 7, 7), "float32"),
        ("TENSOR", kernel, "float32"),
        (2, 2),
        (0, 0, 0, 0),
        (1, 1),
        "float32",
    )


@pytest.mark.parametrize(
    ("packed", "original"),
    [
        (
            (
                "conv2d_NCHWc.x86",
                ("TENSOR", (1, 1, 224, 224, 3), "float32"),
                ("TENSOR", (8, 1, 7, 7, 3, 8), "float32"),
                (2, 2),
                (3, 3, 3, 3),
                (1, 1),
                "NCHW3c",
                "NCHW8c",
                "float32",
            ),
            STEM,
        ),
        (
            (
                "dense_pack.x86",
                ("TENSOR", (1, 512), "float32"),
                ("TENSOR", (100, 512, 10), "float32"),
                None,
                "float32",
            ),
            (
                "dense_pack.x86",
                ("TENSOR", (1, 512), "float32"),
                ("TENSOR", (1000, 512), "float32"),
                None,
                "float32",
            ),
        ),
        (STEM, None),
        (("dense_pack.x86", ("TENSOR", (1, 512), "float32")), None),
        # arm_cpu's alter_op_layout (TVM 0.16 topi/arm_cpu/conv2d_alter_op.py), as a real
        # rk3399 build printed it for an untuned layer (the fallback VC is 1)
        (
            _arm_conv("conv2d_nchw_spatial_pack.arm_cpu", (256, 128, 1, 1, 1)),
            _arm_conv("conv2d_nchw_spatial_pack.arm_cpu", (256, 128, 1, 1)),
        ),
        (
            _arm_conv("depthwise_conv2d_nchw_spatial_pack.arm_cpu", (32, 1, 3, 3, 4)),
            _arm_conv("depthwise_conv2d_nchw_spatial_pack.arm_cpu", (128, 1, 3, 3)),
        ),
        (
            _arm_conv("conv2d_nchw_winograd.arm_cpu", (6, 6, 64, 128, 4)),
            _arm_conv("conv2d_nchw_winograd.arm_cpu", (256, 128, 3, 3)),
        ),
        (_arm_conv("conv2d_nchw_spatial_pack.arm_cpu", (256, 128, 1, 1)), None),
        (_arm_conv("conv2d_nchw_winograd.arm_cpu", (3, 3, 64, 128, 4)), None),
    ],
    ids=[
        "nchw3c-stem",
        "packed-dense",
        "plain-conv",
        "short-dense",
        "arm-spatial-pack",
        "arm-depthwise-spatial-pack",
        "arm-winograd",
        "arm-plain",
        "arm-winograd-too-small",
    ],
)
def test_packed_forms_unpack_to_their_layer(
    packed: tuple[object, ...], original: tuple[object, ...] | None
) -> None:
    assert packed_original(packed) == original


def test_arm_packed_forms_are_named_by_their_kernel_layout() -> None:
    packed = _arm_conv("conv2d_nchw_spatial_pack.arm_cpu", (64, 128, 1, 1, 4))
    assert workload_text(packed) == (
        "conv2d_nchw_spatial_pack.arm_cpu 1x128x7x7 * 64x128x1x1x4 OIHW4o kernel"
    )


# -- real relay.build output ----------------------------------------------------------------


def _diagnose(tmp_path: Path, log: str, output: str) -> list[Diagnosis]:
    with Store(tmp_path / "d.db") as store:
        api.import_paths(store, [str(FIXTURES / log)])
        report = api.diagnose_untuned(store, (FIXTURES / output).read_text())
    assert report.unread == []
    return report.diagnoses


PARTIAL_REASONS = {
    4: OTHER_TARGET,
    8: NOT_OFFERED,
    12: ALL_FAILED,
    16: V01_ONLY,
    20: NO_RECORD,
    24: ALL_FAILED,
    28: NO_RECORD,
    32: NO_RECORD,
    **dict.fromkeys(range(36, 65, 4), PACKED),
}


def test_every_message_of_a_partial_log_build_gets_its_reason(tmp_path: Path) -> None:
    found = _diagnose(tmp_path, "partial224.log", "partial224.out")
    assert {d.line: d.reason for d in found} == PARTIAL_REASONS
    by_line = {d.line: d for d in found}
    assert "cuda -keys=cuda,gpu" in by_line[4].detail and "keys cuda,gpu" in by_line[4].detail
    assert "conv2d_nchw_spatial_pack.arm_cpu" in by_line[8].detail
    assert "COMPILE_HOST x4" in by_line[12].detail and "explain 2" in by_line[12].detail
    assert "BUILD_TIMEOUT x4" in by_line[24].detail
    assert "topi_nn_conv2d" in by_line[16].detail


def test_packed_forms_point_at_the_layer_printed_in_the_same_output(tmp_path: Path) -> None:
    found = _diagnose(tmp_path, "partial224.log", "partial224.out")
    layers = {d.workload: d for d in found if d.reason != PACKED}
    packed = [d for d in found if d.reason == PACKED]
    assert len(packed) == 8
    for d in packed:
        assert d.original in layers
        assert f"({layers[d.original].reason})" in d.detail


def test_a_device_never_queried_is_other_target_for_every_conv(tmp_path: Path) -> None:
    found = _diagnose(tmp_path, "cuda_only.log", "cuda_only.out")
    reasons = [d.reason for d in found if d.original is None]
    assert reasons == [OTHER_TARGET] * 12 + [NO_RECORD]  # the dense layer was never tuned
    assert all(d.reason == PACKED for d in found if d.original is not None)


def test_the_wrong_input_size_stem_names_its_tuned_neighbour(tmp_path: Path) -> None:
    found = _diagnose(tmp_path, "tuned112.log", "tuned112.out")
    stem = found[0]
    assert (stem.workload, stem.reason) == (STEM, NO_RECORD)
    assert stem.nearest[0].differs == ("data 1x3x224x224 vs 1x3x112x112",)
    assert stem.nearest[0].workload[1] == ("TENSOR", (1, 3, 112, 112), "float32")
    assert all(len(d.nearest) == 3 for d in found if d.reason == NO_RECORD)
    # every unpacked layer's nearest differs only in its data shape (the input size)
    assert all(
        d.nearest[0].differs[0].startswith("data ") and len(d.nearest[0].differs) == 1
        for d in found
        if d.reason == NO_RECORD
    )


def test_a_build_that_read_an_older_file_is_answered_everywhere(tmp_path: Path) -> None:
    found = _diagnose(tmp_path, "full224.log", "partial224.out")
    assert {d.reason for d in found} == {ANSWERED}
    assert "tunelog export --for-target" in found[0].detail


def test_the_fallback_warning_form_from_a_real_build(tmp_path: Path) -> None:
    found = _diagnose(tmp_path, "tuned112.log", "fallback112.out")
    assert [(d.line, d.workload, d.reason) for d in found] == [(2, STEM, NO_RECORD)]


T4 = "cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32"
WINOGRAD_TEXT = (
    "('conv2d_nchw_winograd.cuda', ('TENSOR', (1, 64, 56, 56), 'float32'), ('TENSOR', "
    "(64, 64, 3, 3), 'float32'), (1, 1), (1, 1, 1, 1), (1, 1), 'float32')"
)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        # relay's choice asks every template of the layer: conv2d_nchw.cuda answers it
        (f"DEBUG autotvm: Cannot find tuning records for:\n target={T4}\n key={WINOGRAD_TEXT}\n",
         ANSWERED),
        # the winograd template called directly asked for its own workload only
        (f"WARNING:autotvm:Cannot find config for target={T4}, workload={WINOGRAD_TEXT}. A "
         "fallback configuration is used\n", NO_RECORD),
    ],
    ids=["relay", "direct"],
)  # fmt: skip
def test_a_direct_calls_fallback_is_answered_only_by_its_own_template(
    tmp_path: Path, message: str, reason: str
) -> None:
    """A "Cannot find config" warning comes from a template called outside relay: exporting the
    layer's other template (what `answered` told the user to do) changes nothing for it."""
    with Store(tmp_path / "d.db") as store:
        api.import_paths(store, [str(FIXTURES / "cuda_only.log")])
        (found,) = api.diagnose_untuned(store, message).diagnoses
    assert found.reason == reason
    if reason == NO_RECORD:
        assert found.detail.startswith(
            "no record of conv2d_nchw_winograd.cuda for this layer: TVM called it directly, "
            "which asks for its own workload only (the layer has records of conv2d_nchw.cuda"
        )


def test_a_direct_call_is_answered_by_a_template_relay_would_not_offer(tmp_path: Path) -> None:
    # winograd on a stride-2 layer: relay never offers it, but a template called directly asks
    # the dispatch context itself (it was `not_offered`, with advice to tune what is tuned).
    line = (FIXTURES / "cuda_only.log").read_text().splitlines()[3]
    record = json.loads(line)
    record["input"][1] = "conv2d_nchw_winograd.cuda"
    log = tmp_path / "winograd.log"
    log.write_text(json.dumps(record) + "\n")
    (task,) = read_task_list(json.dumps([[record["input"][1], *record["input"][2]]]))
    text = repr(task)  # the workload as TVM prints it: tuples
    direct = f"WARNING:autotvm:Cannot find config for target={T4}, workload={text}. A fallback\n"
    relay = f"DEBUG autotvm: Cannot find tuning records for:\n target={T4}\n key={text}\n"
    with Store(tmp_path / "d.db") as store:
        api.import_paths(store, [str(log)])
        (called,) = api.diagnose_untuned(store, direct).diagnoses
        (chosen,) = api.diagnose_untuned(store, relay).diagnoses
    assert (called.reason, chosen.reason) == (ANSWERED, NOT_OFFERED)


def test_a_task_list_needs_a_target_and_is_diagnosed_for_it(tmp_path: Path) -> None:
    tasks = '[["conv2d_NCHWc.x86", ["TENSOR", [1, 3, 224, 224], "float32"], ["TENSOR", '
    tasks += '[64, 3, 7, 7], "float32"], [2, 2], [3, 3, 3, 3], [1, 1], "NCHW", "NCHW", "float32"]]'
    with Store(tmp_path / "d.db") as store:
        api.import_paths(store, [str(FIXTURES / "full224.log")])
        with pytest.raises(TargetRequiredError):
            api.diagnose_untuned(store, tasks)
        (answered,) = api.diagnose_untuned(store, tasks, target="llvm -mcpu=x").diagnoses
        (other,) = api.diagnose_untuned(store, tasks, target="cuda -model=t4").diagnoses
    assert (answered.reason, answered.line) == (ANSWERED, None)
    assert other.reason == OTHER_TARGET and "keys cpu, model unknown" in other.detail


def test_workload_text_shows_blocked_forms_by_their_layout() -> None:
    (packed, original) = (
        (
            "conv2d_NCHWc.x86",
            ("TENSOR", (1, 8, 56, 56, 8), "float32"),
            ("TENSOR", (8, 8, 3, 3, 8, 8), "float32"),
            (1, 1),
            (1, 1, 1, 1),
            (1, 1),
            "NCHW8c",
            "NCHW8c",
            "float32",
        ),
        STEM,
    )
    assert workload_text(packed) == "conv2d_NCHWc.x86 1x8x56x56x8 * 8x8x3x3x8x8 NCHW8c"
    assert workload_text(original) == "conv2d_NCHWc.x86 1x3x224x224 * 64x3x7x7 s2 p3"


def test_what_diagnose_calls_answered_is_what_real_tvm_did_not_print(tmp_path: Path) -> None:
    """Against a corpus log (resnet-50 records): diagnosing the untuned build's messages
    predicts exactly the messages a real build under that log printed."""
    from tests.conftest import CORPUS, require_shared

    require_shared()
    log = CORPUS / "WANNA959__tvm_learning/resnet50-v2-7-autotuner_records.json"
    with Store(tmp_path / "d.db") as store:
        api.import_paths(store, [str(log)])
        predicted = api.diagnose_untuned(store, (FIXTURES / "empty224.txt").read_text())
    printed = read_messages((FIXTURES / "corpus_resnet50.out").read_text().splitlines())
    unanswered = {(d.target, d.workload) for d in predicted.unanswered}
    assert unanswered == {(m.target, m.workload) for m in printed.messages}
    assert len(unanswered) == 14 and len(predicted.diagnoses) == 26
    # its -link-params=0 targets made the real TVM 0.16 stop loading: export must fix them
    answered = [d for d in predicted.diagnoses if d.answered]
    assert all("tunelog export --fix-targets" in d.detail for d in answered)


@pytest.mark.parametrize("log", ["partial224", "cuda_only", "tuned112", "full224"])
def test_diagnosing_the_untuned_build_predicts_what_tvm_printed_under_the_log(
    tmp_path: Path, log: str
) -> None:
    """empty224.txt names every workload resnet-18 queries; under each log, the ones diagnose
    leaves unanswered are exactly those real TVM printed (full224.out: none)."""
    predicted = _diagnose(tmp_path, f"{log}.log", "empty224.txt")
    printed = read_messages((FIXTURES / f"{log}.out").read_text().splitlines()).messages
    unanswered = {(d.target, d.workload) for d in predicted if not d.answered}
    assert unanswered == {(m.target, m.workload) for m in printed}


# -- property: whatever workload TVM prints, the message gives it back ------------------------

_scalars = st.one_of(
    st.integers(-(10**6), 10**6),
    st.none(),
    st.booleans(),
    st.text(alphabet="abcNCHWc0123456789_.,()' \"", max_size=8),
)
_values = st.recursive(
    _scalars, lambda inner: st.tuples(inner, inner) | st.tuples(inner), max_leaves=6
)


@given(
    task=st.from_regex(r"[a-z][a-z0-9_]{0,12}\.[a-z0-9_]{1,6}", fullmatch=True),
    args=st.lists(_values, max_size=6),
    prefix=st.sampled_from(["", "2026-11-25 10:05:25,039 DEBUG autotvm: ", "[x] "]),
    form=st.sampled_from(["debug", "warning", "pasted"]),
)
@settings(max_examples=200, deadline=None)
def test_any_printed_workload_reads_back_exactly(
    task: str, args: list[object], prefix: str, form: str
) -> None:
    workload = (task, *args)
    text = repr(workload)
    if form == "debug":
        message = (
            f"{prefix}Cannot find tuning records for:\n    target={X86}\n    key={text}\nTVM will"
        )
    elif form == "warning":
        message = f"{prefix}Cannot find config for target={X86}, workload={text}. A fallback"
    else:
        message = f"{prefix}Cannot find tuning records for: target={X86} key={text} TVM will"
    read = read_messages(message.splitlines())
    assert read.unread == []
    assert [(m.target, m.workload) for m in read.messages] == [(X86, workload)]


@pytest.mark.parametrize(
    ("asked", "recorded", "expected"),
    [
        ("cuda -model=t4", "cuda -model=v100", True),  # the cuda and gpu keys
        ("opencl -device=mali", "cuda", True),  # the gpu key
        ("llvm", "cuda", False),
        ("llvm -keys=foo -model=m", "cuda -model=m", True),  # the model slot alone
        ("llvm -keys=foo", "cuda -model=unknown", False),  # "unknown" opens no model slot
        ("llvm -keys=foo -model=unknown", "cuda", False),
    ],
)
def test_a_record_reaches_a_target_when_it_holds_a_slot_the_target_queries(
    asked: str, recorded: str, expected: bool
) -> None:
    assert reaches(parse_target(asked), parse_target(recorded)) is expected


def test_one_failed_trial_and_one_answered_workload_are_said_in_the_singular(
    tmp_path: Path,
) -> None:
    task = (
        '["conv2d_NCHWc.x86", ["TENSOR", [1, 3, 224, 224], "float32"], ["TENSOR", [64, 3, 7, 7], '
        '"float32"], [2, 2], [3, 3, 3, 3], [1, 1], "NCHW", "NCHW", "float32"]'
    )
    name, *args = json.loads(task)
    record = {
        "input": [X86, name, args, {}],
        "config": {"index": 1, "code_hash": None, "entity": []},
        "result": [[1e9], 6, 10.0, 1700000000.0],  # one trial: BUILD_TIMEOUT
        "version": 0.2,
        "tvm_version": "0.8.0",
    }
    log = tmp_path / "one.log"
    log.write_text(json.dumps(record) + "\n")
    with Store(tmp_path / "d.db") as store:
        api.import_paths(store, [str(log)])
        (failed,) = api.diagnose_untuned(store, f"[{task}]", target=X86).diagnoses
    assert failed.reason == ALL_FAILED
    assert failed.detail.startswith("its 1 trial failed (BUILD_TIMEOUT x1). The 1 failure is ")
    answered = Diagnosis(X86, failed.workload, ANSWERED, "")
    assert verdict([answered]).startswith("the database answers the 1 workload: ")


CONV = (("TENSOR", (1, 64, 56, 56), "float32"), ("TENSOR", (64, 64, 3, 3), "float32"), (1, 1))
CUDA = "cuda -keys=cuda,gpu -arch=sm_75"


@pytest.mark.parametrize(
    ("unanswered", "layers"),
    [
        # one layer: two templates, and its padding spelled as one number
        (
            [
                (CUDA, ("conv2d_nchw.cuda", *CONV, (1, 1, 1, 1), (1, 1), "float32")),
                (CUDA, ("conv2d_nchw_winograd.cuda", *CONV, (1, 1, 1, 1), (1, 1), "float32")),
                (CUDA, ("conv2d_nchw.cuda", *CONV, 1, (1, 1), "float32")),
            ],
            1,
        ),
        # the same layer on two targets: tuned on each
        (
            [
                (CUDA, ("conv2d_nchw.cuda", *CONV, (1, 1, 1, 1), (1, 1), "float32")),
                ("cuda -model=t4", ("conv2d_nchw.cuda", *CONV, (1, 1, 1, 1), (1, 1), "float32")),
            ],
            2,
        ),
        # another layer (another padding)
        (
            [
                (CUDA, ("conv2d_nchw.cuda", *CONV, (1, 1, 1, 1), (1, 1), "float32")),
                (CUDA, ("conv2d_nchw.cuda", *CONV, (0, 0, 0, 0), (1, 1), "float32")),
            ],
            2,
        ),
    ],
)
def test_verdict_counts_each_layer_to_tune_once(
    unanswered: list[tuple[str, tuple[object, ...]]], layers: int
) -> None:
    diagnoses = [Diagnosis(target, workload, ALL_FAILED, "") for target, workload in unanswered]
    targets = len({target for target, _ in unanswered})
    over = f" (over {targets} targets)" if targets > 1 else ""
    assert verdict(diagnoses).endswith(f"; {layers} layer(s) to tune{over}")


def test_verdict_counts_a_packed_form_as_its_layer() -> None:
    original = ("conv2d_NCHWc.x86", ("TENSOR", (1, 64, 56, 56), "float32"),
                ("TENSOR", (64, 64, 3, 3), "float32"), (1, 1), (1, 1, 1, 1), (1, 1),
                "NCHW", "NCHW", "float32")  # fmt: skip
    packed = ("conv2d_NCHWc.x86", ("TENSOR", (1, 8, 56, 56, 8), "float32"),
              ("TENSOR", (8, 8, 3, 3, 8, 8), "float32"), (1, 1), (1, 1, 1, 1), (1, 1),
              "NCHW8c", "NCHW8c", "float32")  # fmt: skip
    diagnoses = [
        Diagnosis(X86, original, NO_RECORD, ""),
        Diagnosis(X86, packed, PACKED, "", original=original),
    ]
    assert verdict(diagnoses).endswith("(no_record 1, packed 1); 1 layer(s) to tune")
    # a packed form alone still asks for its layer
    assert verdict(diagnoses[1:]).endswith("(packed 1); 1 layer(s) to tune")


def test_arm_packed_forms_count_as_their_layer_in_a_real_build(tmp_path: Path) -> None:
    """An rk3399 build printed 4 untuned spatial-pack layers, their packed forms, dense and its
    packed form: 5 layers to tune, where the packed forms counted as 4 more."""
    from tunelog.diagnosereport import verdict

    found = _diagnose(tmp_path, "arm_rk3399.log", "arm_rk3399.out")
    assert [d.reason for d in found] == [NO_RECORD] * 5 + [PACKED] * 5
    assert verdict(found) == (
        "10 of 10 workloads unanswered (no_record 5, packed 5); 5 layer(s) to tune"
    )


def test_apply_graph_best_s_warning_is_read_and_its_cause_named(tmp_path: Path) -> None:
    """A graph-tuned build (the x86 tutorial's apply_graph_best) printed "Config for target=...,
    workload=(...) is missing in ApplyGraphBest context" for dense, which the graph tuner's
    output never holds: diagnose found no message and `--check` passed."""
    from tunelog.diagnosereport import verdict

    found = _diagnose(tmp_path, "full224.log", "graph_best.out")
    assert [(d.line, d.reason, d.workload[0]) for d in found] == [
        (1, "not_in_graph", "dense_nopack.x86"),
        (2, "not_in_graph", "dense_pack.x86"),
    ]
    assert found[0].detail.startswith(
        "the build ran under apply_graph_best, which answers only the layers the graph tuner "
        "placed layouts for (its output file): this one is not in it, so relay used a fallback "
        "config for it; this database answers it under apply_history_best"
    )
    assert "us, tuned on llvm -keys=cpu -mcpu=core-avx2" in found[0].detail
    assert verdict(found) == (
        "2 of 2 workloads unanswered (not_in_graph 2); 0 layer(s) to tune; 1 tuned layer(s) "
        "fall back under apply_graph_best (not in the graph tuner's output)"
    )
    with Store(tmp_path / "empty.db") as store:
        api.import_paths(store, [str(FIXTURES / "partial224.log")])  # no dense layer
        report = api.diagnose_untuned(store, (FIXTURES / "graph_best.out").read_text())
    assert [d.reason for d in report.diagnoses] == [NO_RECORD, NO_RECORD]
    assert report.diagnoses[0].detail.endswith(
        "; the build ran under apply_graph_best, which "
        "answers only the layers the graph tuner placed "
        "layouts for (its output file)"
    )


@pytest.mark.parametrize(
    ("target", "error_no", "reason"),
    [
        ("llvm -keys=cpu -mcpu=core-avx2 -mtriple=x86_64-pc-linux-gnu", 0, "answered"),
        ("llvm -keys=cpu -mcpu=core-avx2 -mtriple=x86_64-pc-linux-gnu", 6, "all_failed"),
        ("cuda -keys=cuda,gpu -arch=sm_75", 0, "other_target"),
        (None, 0, "no_record"),
    ],
)
def test_auto_scheduler_s_message_is_read_and_its_workload_diagnosed(
    tmp_path: Path, target: str | None, error_no: int, reason: str
) -> None:
    """auto_scheduler's "Cannot find tuned schedules for target=..., workload_key=[...]" was
    not read: a build of an Ansor-tuned model got "no message found" (and --check passed)."""
    from tests.test_ansor import ansor_line

    key = (
        '["07f9fcad27bdd3233f86fe35a5185d33", [1, 56, 56, 3], [7, 7, 3, 64], [1, 1, 1, 64], '
        "[1, 28, 28, 64]]"
    )
    with Store(tmp_path / "t.db") as store:
        if target is not None:
            log = tmp_path / "ansor.log"
            log.write_text(ansor_line(key=key, target=target, error_no=error_no) + "\n")
            api.import_paths(store, [str(log)])
        report = api.diagnose_untuned(store, (FIXTURES / "ansor_untuned.out").read_text())
    (found,) = report.diagnoses
    assert (found.line, found.reason, found.workload[0]) == (
        3,
        reason,
        "07f9fcad27bdd3233f86fe35a5185d33",
    )
    assert report.unread == []


def test_apply_graph_best_s_warning_behind_a_bracketed_prefix_is_read(tmp_path: Path) -> None:
    """`[WARNING] Config for target=...`: the leading `[` read the output as a task list."""
    text = "".join(
        f"[WARNING] {line}\n" for line in (FIXTURES / "graph_best.out").read_text().splitlines()
    )
    with Store(tmp_path / "d.db") as store:
        api.import_paths(store, [str(FIXTURES / "full224.log")])
        report = api.diagnose_untuned(store, text)
    assert [d.reason for d in report.diagnoses] == ["not_in_graph", "not_in_graph"]


def test_a_tuned_build_that_printed_its_tasks_is_output_not_a_task_list(tmp_path: Path) -> None:
    """A build with every layer tuned that printed `print(tasks)` was read as a task list and
    asked for --target; printed tasks are a task list given with --target, or alone."""
    task = (
        "Task(func_name=dense_nopack.x86, args=(('TENSOR', (1, 512), 'float32'), ('TENSOR', "
        "(1000, 512), 'float32'), None, 'float32'), kwargs={}, workload=('dense_nopack.x86', "
        "('TENSOR', (1, 512), 'float32'), ('TENSOR', (1000, 512), 'float32'), None, 'float32'))"
    )
    with Store(tmp_path / "d.db") as store:
        api.import_paths(store, [str(FIXTURES / "full224.log")])
        output = api.diagnose_untuned(store, f"Extract tasks...\n[{task}]\nCompile...\nBUILD OK\n")
        alone = api.diagnose_untuned(store, task + "\n", target="llvm -mcpu=core-avx2")
    assert output.diagnoses == []
    assert [d.reason for d in alone.diagnoses] == ["answered"]


def test_a_packed_form_under_apply_graph_best_keeps_its_detail_whole() -> None:
    from tunelog.diagnoses import ANSWERED
    from tunelog.diagnosis import ANSWER_PREFIX, ANSWER_REMEDY, _under_graph_best

    layer = "the NCHW8c form of layer 1x64x56x56 * 64x64x3x3 s1 p1, which the database answers"
    found = Diagnosis(
        "llvm",
        ("conv2d_NCHWc.x86",),
        ANSWERED,
        f"{layer}: {ANSWER_PREFIX}: config 3 from a.log:1{ANSWER_REMEDY}export ...",
    )
    assert _under_graph_best(found).detail.endswith(
        f"this database answers it under apply_history_best ({found.detail})"
    )


def test_relay_s_messages_of_a_graph_tuned_build_are_asked_of_the_graph_tuner_s_output(
    tmp_path: Path,
) -> None:
    """With DEBUG logging, a graph-tuned build also printed relay's message for dense's packed
    form; it was called answered ("the build read another file"), though apply_graph_best
    answered it no more than the layer (found by a new user, on a real build)."""
    packed = (
        "Cannot find tuning records for:\n    target=llvm -keys=cpu -mcpu=core-avx2 "
        "-mtriple=x86_64-pc-linux-gnu\n    key=('dense_pack.x86', ('TENSOR', (1, 512), "
        "'float32'), ('TENSOR', (100, 512, 10), 'float32'), None, 'float32')\n"
    )
    text = (FIXTURES / "graph_best.out").read_text() + packed
    with Store(tmp_path / "d.db") as store:
        api.import_paths(store, [str(FIXTURES / "full224.log")])
        report = api.diagnose_untuned(store, text)
    assert [d.reason for d in report.diagnoses] == ["not_in_graph"] * 3


def test_apply_graph_best_past_the_end_of_its_file_is_said_and_fails_check(
    tmp_path: Path,
) -> None:
    """`workload=None`: the graph tuner's output is shorter than the network (TVM then fails
    with an AttributeError); it was "cut off or too long", and --check passed."""
    from tests.conftest import run_db

    text = (
        "Config for target=llvm -keys=cpu -mcpu=core-avx2, workload=None is missing in "
        "ApplyGraphBest context. A fallback configuration is used, which may bring great "
        "performance regression.\n"
    )
    db = tmp_path / "d.db"
    with Store(db) as store:
        api.import_paths(store, [str(FIXTURES / "full224.log")])
    code, _, err = run_db(db, "diagnose", "-", "--check", stdin=text)
    assert code == 1
    assert "message not read: apply_graph_best ran past the end of the graph tuner's output" in err


def test_the_verdict_says_when_its_layers_are_counted_per_target() -> None:
    from tunelog.diagnosereport import verdict

    found = [
        Diagnosis(target, ("dense_pack.x86", ("TENSOR", (1, n), "float32")), NO_RECORD, "")
        for target in ("llvm", "cuda")
        for n in (8, 16)
    ]
    assert verdict(found).endswith("; 4 layer(s) to tune (over 2 targets)")
