"""What the module of a MetaSchedule workload computes: its function, tensors and FLOPs.

Pure. Reads the object graph `tunelog.msmodule.decode` gives (both layouts TVM has written):
the first PrimFunc's name, its parameters' shapes and dtypes (outputs are the parameters a
BufferStore writes), and the FLOPs TVM's `estimate_tir_flops` would count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tunelog.msmodule import ModuleGraph, node_index
from tunelog.versions import METASCHEDULE_TASK


@dataclass(frozen=True, slots=True)
class Tensor:
    """A function parameter: its shape (None entries for symbolic sizes) and dtype."""

    shape: tuple[int | None, ...]
    dtype: str


@dataclass(frozen=True, slots=True)
class Summary:
    """The first function of a module: name, inputs, outputs (written parameters), FLOPs."""

    name: str
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    flops: int | None


class _Nodes:
    """Access to a graph's nodes in both layouts: `{"type", "data"}` with integer references
    (TVM >= 0.20-ish) and `{"type_key", "attrs"}` with references as decimal strings (older)."""

    def __init__(self, nodes: list[Any]) -> None:
        self.nodes = nodes
        self.expr_flops: dict[int, float] = {}  # each expression's count, once (`_expr_flops`)

    def node(self, index: int | None) -> dict[str, Any]:
        if index is None or not 0 < index < len(self.nodes):
            return {}
        node = self.nodes[index]
        return node if isinstance(node, dict) else {}

    def kind(self, index: int | None) -> str:
        node = self.node(index)
        return str(node.get("type", node.get("type_key", ""))).rsplit(".", 1)[-1]

    def raw(self, index: int | None, name: str) -> Any:
        node = self.node(index)
        fields = node.get("data") if "type" in node else node.get("attrs")
        return fields.get(name) if isinstance(fields, dict) else None

    def ref(self, index: int | None, name: str) -> int | None:
        return node_index(self.raw(index, name), len(self.nodes))

    def items(self, index: int | None) -> list[int]:
        data = self.node(index).get("data")
        if not isinstance(data, list):
            return []
        return [i for i in (node_index(x, len(self.nodes)) for x in data) if i is not None]

    def string(self, index: int | None) -> str:
        node = self.node(index)
        value = node.get("data", node.get("repr_str"))
        return value if isinstance(value, str) else ""

    def integer(self, index: int | None) -> int | None:
        """The value of an IntImm node (None for anything else)."""
        if self.kind(index) != "IntImm":
            return None
        value = self.raw(index, "value")
        if "type" in self.node(index):  # the value is a node of its own
            value = self.node(node_index(value, len(self.nodes))).get("data")
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError):
            return None
        return number if -(1 << 63) <= number < 1 << 63 else None  # as JSON stores it

    def dtype(self, index: int | None) -> str:
        """The dtype field of a node: a string (older), or a PrimType node's (newer)."""
        value = self.raw(index, "dtype")
        if isinstance(value, str) and not value.isdigit():
            return value
        inner = self.raw(node_index(value, len(self.nodes)), "dtype")
        return inner if isinstance(inner, str) else "?"


def summarise(graph: ModuleGraph) -> Summary | None:
    """What the module's first function computes; None when the graph holds no PrimFunc."""
    nodes = _Nodes(graph.nodes)
    functions = nodes.items(nodes.ref(graph.root, "functions"))
    for global_var, func in zip(functions[::2], functions[1::2], strict=False):
        if nodes.kind(func) == "PrimFunc":
            return _summary(nodes, nodes.string(nodes.ref(global_var, "name_hint")), func)
    return None


def _summary(nodes: _Nodes, name: str, func: int) -> Summary:
    buffers = _param_buffers(nodes, func)
    body = nodes.ref(func, "body")
    written = _written_buffers(nodes, body)
    tensors = [(_tensor(nodes, buffer), buffer in written) for buffer in buffers]
    return Summary(
        name or "?",
        tuple(t for t, out in tensors if not out),
        tuple(t for t, out in tensors if out),
        _flops(nodes, body),
    )


def _param_buffers(nodes: _Nodes, func: int) -> list[int]:
    """The buffer of each parameter: the buffer_map's (older) or the typed variable itself."""
    params = nodes.items(nodes.ref(func, "params"))
    pairs = nodes.items(nodes.ref(func, "buffer_map"))
    buffer_of = dict(zip(pairs[::2], pairs[1::2], strict=False))
    return [buffer_of.get(p, p) for p in params if p in buffer_of or _is_buffer_var(nodes, p)]


def _is_buffer_var(nodes: _Nodes, var: int) -> bool:
    return nodes.kind(nodes.ref(var, "ty")) == "BufferType"


def _tensor(nodes: _Nodes, buffer: int) -> Tensor:
    holder = nodes.ref(buffer, "ty") if _is_buffer_var(nodes, buffer) else buffer
    shape = tuple(nodes.integer(dim) for dim in nodes.items(nodes.ref(holder, "shape")))
    return Tensor(shape, nodes.dtype(holder))


def _written_buffers(nodes: _Nodes, body: int | None) -> set[int]:
    written: set[int] = set()
    for index in range(len(nodes.nodes)):
        if nodes.kind(index) == "BufferStore":
            buffer = nodes.ref(index, "buffer")
            if buffer is not None:
                written.add(buffer)
    return written


# tvm.tir.analysis.estimate_tir_flops (src/tir/analysis/estimate_flops.cc): each arithmetic
# operation in a stored value counts 1 (whatever its dtype), times the extents of the loops
# around it; comparisons and loads count nothing; a Select or an if/else counts its dearer side.
_ARITHMETIC = frozenset({"Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max"})
_COMPARISONS = frozenset({"EQ", "NE", "LT", "LE", "GT", "GE"})
_MAX_DEPTH = 10_000


class _SymbolicExtent(Exception):
    """A loop whose extent is no number (a symbolic shape): the count is not known."""


_MAX_FLOPS = (1 << 63) - 1  # the count is stored as JSON an int of 64 bits holds


def _flops(nodes: _Nodes, body: int | None) -> int | None:
    """The estimate; None when it is 0 (nothing to compute: no GFLOPS to show), too deep, a
    loop's extent is symbolic (counted as 1, `main: ?x? x ?x?` showed 0.0 GFLOPS), or the
    count is past 64 bits or not finite (a hostile graph's extents)."""
    try:
        count = _stmt_flops(nodes, body, 0)
    except (RecursionError, _SymbolicExtent):
        return None
    if not 0 < count <= _MAX_FLOPS:  # NaN and infinity fail too
        return None
    return int(count)


def _stmt_flops(nodes: _Nodes, index: int | None, depth: int) -> float:
    if depth > _MAX_DEPTH:
        raise RecursionError
    kind, down = nodes.kind(index), depth + 1
    if kind == "For":
        extent = nodes.integer(nodes.ref(index, "extent"))
        if extent is None:
            raise _SymbolicExtent
        return _stmt_flops(nodes, nodes.ref(index, "body"), down) * extent
    if kind == "SeqStmt":
        return sum(_stmt_flops(nodes, s, down) for s in nodes.items(nodes.ref(index, "seq")))
    if kind in ("SBlockRealize", "BlockRealize"):
        return _stmt_flops(nodes, nodes.ref(nodes.ref(index, "block"), "body"), down)
    if kind in ("SBlock", "Block"):
        init = nodes.ref(index, "init")
        return _stmt_flops(nodes, init, down) + _stmt_flops(nodes, nodes.ref(index, "body"), down)
    if kind == "BufferStore":
        return _expr_flops(nodes, nodes.ref(index, "value"), down)
    if kind == "IfThenElse":
        branches = [
            _stmt_flops(nodes, nodes.ref(index, case), down) for case in ("then_case", "else_case")
        ]
        return _expr_flops(nodes, nodes.ref(index, "condition"), down) + max(branches)
    if kind in ("LetStmt", "AttrStmt"):
        value = _expr_flops(nodes, nodes.ref(index, "value"), down)
        return value + _stmt_flops(nodes, nodes.ref(index, "body"), down)
    if kind in ("Allocate", "AllocateConst", "DeclBuffer"):
        return _stmt_flops(nodes, nodes.ref(index, "body"), down)
    return 0.0


def _expr_flops(nodes: _Nodes, index: int | None, depth: int) -> float:
    """An expression's count, each node counted once per graph (a module shares
    subexpressions: counted again at every use, as a tree, but computed once: a chain of
    nodes using the next one twice took time doubling with each)."""
    known = nodes.expr_flops.get(index) if index is not None else None
    if known is not None:
        return known
    count = _expr_flops_of(nodes, index, depth)
    if index is not None:
        nodes.expr_flops[index] = count
    return count


def _expr_flops_of(nodes: _Nodes, index: int | None, depth: int) -> float:
    if depth > _MAX_DEPTH:
        raise RecursionError
    kind, down = nodes.kind(index), depth + 1
    if kind in _ARITHMETIC:
        operands = (nodes.ref(index, "a"), nodes.ref(index, "b"))
        return 1.0 + sum(_expr_flops(nodes, x, down) for x in operands)
    if kind in ("And", "Or"):
        operands = (nodes.ref(index, "a"), nodes.ref(index, "b"))
        return sum(_expr_flops(nodes, x, down) for x in operands)
    if kind in ("Not", "Cast"):
        return _expr_flops(nodes, nodes.ref(index, "a" if kind == "Not" else "value"), down)
    if kind == "Select":
        sides = [
            _expr_flops(nodes, nodes.ref(index, s), down) for s in ("true_value", "false_value")
        ]
        return _expr_flops(nodes, nodes.ref(index, "condition"), down) + max(sides)
    if kind == "Call":
        return sum(_expr_flops(nodes, x, down) for x in nodes.items(nodes.ref(index, "args")))
    return 0.0  # loads, variables, constants, comparisons (_COMPARISONS)


def summary_text(summary: Summary) -> str:
    """`main: 128x128 x 128x128 -> 128x128 float32` (the dtype once when all tensors share it)."""
    tensors = summary.inputs + summary.outputs
    dtypes = {t.dtype for t in tensors}
    one_dtype = len(dtypes) == 1

    def shape(tensor: Tensor) -> str:
        text = "x".join("?" if d is None else str(d) for d in tensor.shape) or "scalar"
        return text if one_dtype else f"{text} {tensor.dtype}"

    text = f"{summary.name}: " + " x ".join(shape(t) for t in summary.inputs)
    text += " -> " + ", ".join(shape(t) for t in summary.outputs)
    return text + (f" {dtypes.pop()}" if one_dtype else "")


def summary_args(summary: Summary) -> dict[str, Any]:
    """The summary as JSON (kept in the workload's arguments; `from_args` reads it back)."""
    return {
        "function": summary.name,
        "inputs": [[list(t.shape), t.dtype] for t in summary.inputs],
        "outputs": [[list(t.shape), t.dtype] for t in summary.outputs],
        "flops": summary.flops,
    }


def from_args(value: Any) -> Summary | None:
    """The Summary `summary_args` wrote; None for anything else."""
    if not isinstance(value, dict) or not isinstance(value.get("function"), str):
        return None
    try:
        inputs, outputs = (
            tuple(Tensor(tuple(shape), str(dtype)) for shape, dtype in value[side])
            for side in ("inputs", "outputs")
        )
    except (KeyError, TypeError, ValueError):
        return None
    flops = value.get("flops")
    return Summary(value["function"], inputs, outputs, flops if isinstance(flops, int) else None)


def summary_of_task(task_name: str, args: Sequence[Any]) -> Summary | None:
    """The Summary kept in a MetaSchedule workload's arguments; None for any other task."""
    if task_name != METASCHEDULE_TASK or len(args) != 2:
        return None
    return from_args(args[1])
