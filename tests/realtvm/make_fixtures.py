"""Tune small workloads with a real apache-tvm MetaSchedule to make tunelog's fixtures.

Run from the checkout with apache-tvm installed (`pip install -e '.[tvm]'`):

    .venv/bin/python -m tests.realtvm.make_fixtures tests/data/metaschedule_real [CASE...]

(a case named, or absent from OUT, is tuned again; the others are only asked again), and with
apache-tvm 0.26 (`pip install apache-tvm==0.26.0 apache-tvm-ffi==0.1.14.post1 psutil cloudpickle`
in another virtualenv):

    python -m tests.realtvm.make_fixtures tests/data/metaschedule_real --other-release

Writes one JSONDatabase directory per case under OUT (each a few tens of kB) and `answers.json`:
what the real `JSONDatabase` answers for each of its workload lines (`get_top_k(5)` as record
line numbers, and `query_tuning_record`), so tests compare tunelog with TVM without TVM.
Tuning takes about 20 minutes on two cores.

Cases (tvm-reference §9):
* `two_targets`: matmul and conv2d tuned for two llvm targets into one database;
* `two_sessions`: softmax tuned twice (two tuning sessions appending to one database);
* `renamed`: the same softmax tuned with its buffers named differently (one workload to TVM);
* `no_rules`: matmul tuned with no schedule rules (traces start with EnterPostproc: invalid,
  however fast), then with them;
* `failures`: conv2d whose runs all fail (run_secs 1e10).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.realtvm.oracle import TVM_TARGETS, answers_of

TRIALS = 6


def _matmul(n: int = 64, a: str = "A", b: str = "B") -> Any:
    from tvm import te

    x = te.placeholder((n, n), name=a)
    y = te.placeholder((n, n), name=b)
    k = te.reduce_axis((0, n), name="k")
    z = te.compute((n, n), lambda i, j: te.sum(x[i, k] * y[k, j], axis=k), name="C")
    return te.create_prim_func([x, y, z])


def _conv2d() -> Any:
    from tvm import te, topi

    data = te.placeholder((1, 8, 14, 14), name="data")
    kernel = te.placeholder((16, 8, 3, 3), name="kernel")
    out = topi.nn.conv2d_nchw(data, kernel, 1, 1, 1)
    return te.create_prim_func([data, kernel, out])


def _softmax(name: str = "A") -> Any:
    from tvm import te, topi

    x = te.placeholder((4, 256), name=name)
    return te.create_prim_func([x, topi.nn.softmax(x)])


def _tune(func: Any, target: dict[str, Any], work_dir: Path, **options: Any) -> None:
    import tvm
    from tvm.s_tir import meta_schedule as ms

    # The default 30 s build timeout fails every build on a busy machine: a "failure" of the
    # machine, not of the schedule. Failures are made on purpose (the `failures` case).
    options.setdefault("builder", ms.builder.LocalBuilder(timeout_sec=600))
    ms.tune_tir(
        tvm.IRModule({"main": func}),
        tvm.target.Target(target),
        str(work_dir),
        max_trials_global=TRIALS,
        num_trials_per_iter=TRIALS,
        cost_model="random",
        seed=1,
        **options,
    )


def _no_rules_space() -> Any:
    from tvm.s_tir import meta_schedule as ms

    return ms.space_generator.PostOrderApply(sch_rules=[], postprocs="llvm", mutator_probs="llvm")


def _failing_runner() -> Any:
    """A local runner whose every run fails (as a device that cannot run the kernel)."""
    from tvm.s_tir import meta_schedule as ms

    def fail(*_args: Any) -> Any:  # a closure: sent by value to the runner's worker
        raise RuntimeError("the device cannot run this kernel")

    return ms.runner.LocalRunner(f_run_evaluator=fail)


def make(out: Path, *, retune: tuple[str, ...] = ()) -> None:
    """Tune every case into OUT/<case>/ (unless there and not named in `retune`) and write
    OUT/answers.json."""
    llvm, avx512 = TVM_TARGETS
    cases: dict[str, list[tuple[Any, dict[str, Any], dict[str, Any]]]] = {
        "two_targets": [
            (_matmul(), llvm, {}),
            (_conv2d(), llvm, {}),
            (_matmul(), avx512, {}),
            (_conv2d(), avx512, {}),
        ],
        "two_sessions": [(_softmax(), llvm, {}), (_softmax(), llvm, {})],
        "renamed": [(_softmax("A"), llvm, {}), (_softmax("data"), llvm, {})],
        "no_rules": [(_matmul(32), llvm, {"space": _no_rules_space()}), (_matmul(32), llvm, {})],
        "failures": [(_conv2d(), llvm, {"runner": _failing_runner()}), (_matmul(32), llvm, {})],
    }
    answers: dict[str, Any] = {}
    for case, runs in cases.items():
        directory = out / case
        if (directory / "database_tuning_record.json").exists() and case not in retune:
            answers[case] = answers_of(directory)
            continue
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        for func, target, options in runs:
            if case == "renamed":  # two databases, one module each, appended into one
                with tempfile.TemporaryDirectory() as work:
                    _tune(func, target, Path(work), **options)
                    _append_database(Path(work), directory)
            else:  # sessions tuning into one work_dir, as a user re-running a script
                _tune(func, target, directory, **options)
        _keep_only_database(directory)
        answers[case] = answers_of(directory)
    (out / "answers.json").write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")


def _keep_only_database(directory: Path) -> None:
    """Drop the work_dir's logs (their paths and times differ on every run)."""
    for path in directory.iterdir():
        if path.name not in ("database_workload.json", "database_tuning_record.json"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def _append_database(work_dir: Path, directory: Path) -> None:
    """Append one session's database to DIRECTORY, as a second session in one work_dir would.

    (Tuning straight into one work_dir re-uses its records: a second session would measure
    nothing new. Appending keeps every line TVM wrote, its workload indices shifted.)
    """
    workloads = directory / "database_workload.json"
    records = directory / "database_tuning_record.json"
    base = len(workloads.read_bytes().splitlines()) if workloads.exists() else 0
    new_workloads = (work_dir / "database_workload.json").read_bytes()
    with workloads.open("ab") as file:
        file.write(new_workloads)
    with records.open("ab") as file:
        for line in (work_dir / "database_tuning_record.json").read_bytes().splitlines():
            index, rest = line.split(b",", 1)
            file.write(b"[" + str(int(index.lstrip(b"[")) + base).encode() + b"," + rest + b"\n")


def make_other_release(out: Path) -> None:
    """Tune a matmul into OUT/other_release/ with the TVM running this (apache-tvm 0.26: its
    databases and 0.27's cannot be read by the other; tunelog must not mix them)."""
    import tvm

    directory = out / "other_release"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    _tune(_matmul(32), TVM_TARGETS[0], directory)
    _keep_only_database(directory)
    print(f"tuned with apache-tvm {tvm.__version__} into {directory}")


if __name__ == "__main__":
    if sys.argv[2:] == ["--other-release"]:
        make_other_release(Path(sys.argv[1]))
    else:
        make(Path(sys.argv[1]), retune=tuple(sys.argv[2:]))
