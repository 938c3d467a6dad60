"""Module variants and what apache-tvm's structural equality says of each pair, for tunelog's
MetaSchedule workload identity (tests/test_metaschedule_identity.py).

Run from the checkout with apache-tvm installed (`pip install -e '.[tvm]'`):

    .venv/bin/python -m tests.realtvm.make_identities tests/data/metaschedule_identity.json.gz

Writes each variant's workload line as a JSONDatabase writes it, and the variants grouped by
`tvm_ffi.structural_equal` (one group per workload to TVM). The variants differ in names that
equality ignores, in names a module repeats (tvm-ffi writes each distinct string once: a
module whose two buffers share a name has one node fewer), in a buffer named like the function,
and in what equality does not ignore (shapes, dtypes, operand order, one input used twice).
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path
from typing import Any


def _mod(func: Any) -> Any:
    import tvm

    return tvm.IRModule({"main": func})


def _matmul(
    n: int = 32,
    a: str = "A",
    b: str = "B",
    c: str = "C",
    k: str = "k",
    dtype: str = "float32",
    *,
    same: bool = False,
    swap: bool = False,
) -> Any:
    from tvm import te

    x = te.placeholder((n, n), name=a, dtype=dtype)
    y = x if same else te.placeholder((n, n), name=b, dtype=dtype)
    r = te.reduce_axis((0, n), name=k)
    first, second = (y, x) if swap else (x, y)
    z = te.compute((n, n), lambda i, j: te.sum(first[i, r] * second[r, j], axis=r), name=c)
    return _mod(te.create_prim_func([x, z] if same else [x, y, z]))


def _add2d(a: str = "A", b: str = "B", c: str = "C", *, transpose: bool = False) -> Any:
    from tvm import te

    x = te.placeholder((16, 16), name=a)
    y = te.placeholder((16, 16), name=b)
    z = te.compute(
        (16, 16),
        (lambda i, j: x[i, j] + y[j, i]) if transpose else (lambda i, j: x[i, j] + y[i, j]),
        name=c,
    )
    return _mod(te.create_prim_func([x, y, z]))


def _add_shaped_like(*, reuse: bool) -> Any:
    """An add whose output takes its first input's shape objects (`reuse`: one IntImm object
    in two shapes), or equal ones of its own."""
    from tvm import te

    x = te.placeholder((16, 16), name="A")
    y = te.placeholder((16, 16), name="B")
    z = te.compute(x.shape if reuse else (16, 16), lambda i, j: x[i, j] + y[i, j], name="C")
    return _mod(te.create_prim_func([x, y, z]))


def _with_attrs(names: tuple[str, ...]) -> Any:
    """An add whose function has attributes added in the order of `names`."""
    import tvm

    func: Any = _add2d()["main"]
    for name in names:
        func = func.with_attr(name, "value of " + name)
    return tvm.IRModule({"main": func})


def _max_with(constant: float) -> Any:
    """max(x, constant): TVM writes an infinite or NaN constant as a bare word."""
    from tvm import te, tirx

    x = te.placeholder((4,), name="A")
    y = te.compute((4,), lambda i: te.max(x[i], tirx.const(constant, "float32")), name="B")
    return _mod(te.create_prim_func([x, y]))


def _header_brace(*, longer: bool) -> Any:
    """An add whose graph's length has `{` as its low byte (its 8-byte header starts with
    it), found by lengthening its input's name; `longer`: one character more."""
    import base64
    import json

    for size in range(1, 600):
        module = _add_one(size)
        if base64.b64decode(json.loads(workload_line(module))[1])[:1] == b"{":
            return _add_one(size + 1) if longer else module
    raise AssertionError("no name length gives a header starting with {")


def _add_one(name_size: int) -> Any:
    """x + 1 over 4 floats, its input named with `name_size` characters."""
    from tvm import te

    x = te.placeholder((4,), name="A" * name_size)
    return _mod(te.create_prim_func([x, te.compute((4,), lambda i: x[i] + 1.0, name="B")]))


def _two_functions(order: tuple[str, ...]) -> Any:
    """A module of an add and a matmul, added in `order`."""
    import tvm

    functions = {"f_add": _add2d()["main"], "g_mm": _matmul()["main"]}
    return tvm.IRModule({name: functions[name] for name in order})


def _relax(op: str, *, axis: int = 0, names: tuple[str, str] = ("x", "lv")) -> Any:
    """A relax function of one op on a rank-8 tensor (op attributes written as plain ints;
    a dataflow variable's name, which equality ignores)."""
    from tvm import relax

    builder = relax.BlockBuilder()
    x = relax.Var(names[0], relax.TensorType((2,) * 8, "float32"))
    with builder.function("main", [x]):
        with builder.dataflow():
            ops = {
                "softmax": lambda: relax.op.nn.softmax(x, axis=axis),
                "repeat": lambda: relax.op.repeat(x, 26, axis=axis),
            }
            value = builder.emit(ops[op](), name_hint=names[1])
            out = builder.emit_output(value)
        builder.emit_func_output(out)
    return builder.get()


def _softmax(name: str = "A", n: int = 256) -> Any:
    from tvm import te, topi

    x = te.placeholder((4, n), name=name)
    return _mod(te.create_prim_func([x, topi.nn.softmax(x)]))


def variants() -> dict[str, Any]:
    """The modules, by name."""
    return {
        "matmul": _matmul(),
        "matmul X X": _matmul(a="X", b="X"),
        "matmul main B": _matmul(a="main"),
        "matmul k B (the reduction's name)": _matmul(a="k"),
        "matmul placeholder placeholder": _matmul(a="placeholder", b="placeholder"),
        "matmul C C (the output's name)": _matmul(a="C", b="C"),
        "matmul every name Z": _matmul(a="Z", b="Z", c="Z", k="Z"),
        "matmul swapped": _matmul(swap=True),
        "matmul swapped X X": _matmul(a="X", b="X", swap=True),
        "matmul of one input": _matmul(same=True),
        "matmul of one input B": _matmul(same=True, a="B"),
        "matmul 64": _matmul(64),
        "matmul float16": _matmul(dtype="float16"),
        "add": _add2d(),
        "add X X": _add2d(a="X", b="X"),
        "add transposed": _add2d(transpose=True),
        "add transposed X X": _add2d(a="X", b="X", transpose=True),
        "add A A A": _add2d(a="A", b="A", c="A"),
        "add shaped like its input (shared IntImm objects)": _add_shaped_like(reuse=True),
        "add shaped alike": _add_shaped_like(reuse=False),
        "add with attributes a, bb": _with_attrs(("a", "bb")),
        "add with attributes bb, a": _with_attrs(("bb", "a")),
        "add with attribute a": _with_attrs(("a",)),
        "max with -inf": _max_with(float("-inf")),
        "max with +inf": _max_with(float("inf")),
        "add, header starting with {": _header_brace(longer=False),
        "add, its input named one character longer": _header_brace(longer=True),
        "add and matmul": _two_functions(("f_add", "g_mm")),
        "matmul and add": _two_functions(("g_mm", "f_add")),
        "relax softmax axis 3": _relax("softmax", axis=3),
        "relax softmax axis 4": _relax("softmax", axis=4),
        "relax softmax axis 3, its dataflow variable renamed": _relax(
            "softmax", axis=3, names=("x", "other")
        ),
        "relax repeat 26": _relax("repeat"),
        "relax repeat 26, its input renamed": _relax("repeat", names=("xxxxxxxxx", "lv")),
        "softmax": _softmax(),
        "softmax data": _softmax("data"),
        "softmax T_softmax_exp (a block's name)": _softmax("T_softmax_exp"),
        "softmax 512": _softmax(n=512),
    }


def workload_line(module: Any) -> str:
    """The module's line as a JSONDatabase writes it (one database per module: a database
    commits structurally equal modules once)."""
    from tvm.s_tir import meta_schedule as ms

    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "database_workload.json"
        database = ms.database.JSONDatabase(
            path_workload=str(path), path_tuning_record=str(Path(work) / "records.json")
        )
        database.commit_workload(module)
        return path.read_text().strip()


def make(out: Path) -> None:
    """Write OUT: {"tvm", "variants": {name: workload line}, "groups": [[name, ...], ...]}."""
    import tvm
    import tvm_ffi

    modules = variants()
    groups: list[list[str]] = []
    for name, module in modules.items():
        for group in groups:
            if tvm_ffi.structural_equal(modules[group[0]], module):
                group.append(name)
                break
        else:
            groups.append([name])
    found = {
        "tvm": tvm.__version__,
        "variants": {name: workload_line(module) for name, module in modules.items()},
        "groups": groups,
    }
    out.write_bytes(gzip.compress(json.dumps(found, indent=1).encode() + b"\n", mtime=0))


if __name__ == "__main__":
    make(Path(sys.argv[1]))
