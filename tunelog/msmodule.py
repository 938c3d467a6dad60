"""The IRModule in a MetaSchedule workload line: its identity and the TVM version that wrote it.

Pure (text in, values out). A workload line holds the module as TVM's JSON object graph, base64
encoded behind an 8-byte length header in most versions (tvm-reference §9). The graph is a list
of nodes; an object node names its fields, and a field pointing at another object holds that
node's index.

**Identity is structural equality** (one home for the rule): TVM deserialises each module and
commits it through structural hash and equality, which ignore source spans and the names of
variables, buffers and blocks (their reflection marks those fields `SEqHashIgnore`). So two
modules that differ only in those names are one workload. Here the identity is a hash of the graph
with those names blanked and spans dropped; everything else, the function name included, counts.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from tunelog.versions import METASCHEDULE_TASK

# Fields TVM's structural equality ignores, by the node type's last dotted part (ir.Var, tirx.Var,
# tir.SizeVar, tir.Buffer, s_tir.SBlock, tir.Block across versions).
_IGNORED_FIELDS: dict[str, tuple[str, ...]] = {
    "Var": ("name", "name_hint"),
    "SizeVar": ("name", "name_hint"),
    "Buffer": ("name",),
    "SBlock": ("name_hint",),
    "Block": ("name_hint",),
}
_SPAN = "span"
_NAME_MARK = "ignored:"  # prefix of a blanked name field in the canonical graph
_HEADER_BYTES = 8


class ModuleError(ValueError):
    """The module text of a workload line is not a JSON object graph tunelog can read."""


@dataclass(frozen=True, slots=True)
class ModuleGraph:
    """A decoded module: its nodes, the root node index and the writer's TVM version."""

    nodes: list[Any]
    root: int
    tvm_version: str | None


def decode(text: str) -> ModuleGraph:
    """The object graph of a workload line's module text (base64 with a header, or plain JSON)."""
    raw = _graph_bytes(text)
    try:
        graph = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ModuleError("module is not a JSON object graph") from exc
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
        raise ModuleError("module graph has no node list")
    root = graph.get("root_index", graph.get("root", 0))
    meta = graph.get("metadata") or graph.get("attrs") or {}
    version = meta.get("tvm_version") if isinstance(meta, dict) else None
    return ModuleGraph(
        graph["nodes"],
        int(root) if isinstance(root, (int, str)) and str(root).isdigit() else 0,
        version if isinstance(version, str) else None,
    )


def _graph_bytes(text: str) -> bytes:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return stripped.encode()
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ModuleError("module is neither base64 nor JSON") from exc
    # The header is the graph's length as 8 little-endian bytes (which may hold a `{` byte).
    for start in (0, _HEADER_BYTES):
        if raw[start : start + 1] == b"{":
            return raw[start:]
    raise ModuleError("module holds no JSON object graph")


def structural_identity(graph: ModuleGraph) -> str:
    """A hash equal for two modules exactly when TVM's structural equality holds (see above)."""
    nodes = graph.nodes
    blank: set[int] = set()
    canonical: list[Any] = []
    for node in nodes:
        canonical.append(_without_ignored(node, nodes, blank))
    # A name string also reached from a field that counts (a variable named like the function)
    # keeps its text.
    for index in blank - _counted_references(canonical, blank):
        canonical[index] = {"type": "blanked name"}
    payload = orjson.dumps([graph.root, canonical], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(payload).hexdigest()


def _without_ignored(node: Any, nodes: list[Any], blank: set[int]) -> Any:
    """NODE without spans; its ignored name fields blanked (or their string nodes marked)."""
    if not isinstance(node, dict):
        return node
    type_key = node.get("type", node.get("type_key"))
    fields_key = "data" if "data" in node else "attrs"
    fields = node.get(fields_key)
    if not isinstance(type_key, str) or not isinstance(fields, dict):
        return node
    ignored = _IGNORED_FIELDS.get(type_key.rsplit(".", 1)[-1], ())
    kept: dict[str, Any] = {}
    for name, value in fields.items():
        if name == _SPAN:
            continue
        if name in ignored:
            index = _node_index(value, len(nodes))
            if index is not None:
                blank.add(index)
            kept[_NAME_MARK + name] = ""  # the name, or the node holding it, does not count
            continue
        kept[name] = value
    return {**node, fields_key: kept}


def _counted_references(canonical: list[Any], names: set[int]) -> set[int]:
    """The name nodes a field that counts may point at (a field's value, or an array item)."""
    found: set[int] = set()
    for node in canonical:
        if not isinstance(node, dict):
            continue
        fields = node.get("data", node.get("attrs"))
        values = (
            fields
            if isinstance(fields, list)
            else (
                [v for k, v in fields.items() if not k.startswith(_NAME_MARK)]
                if isinstance(fields, dict)
                else []
            )
        )
        for value in values:
            index = _node_index(value, len(canonical))
            if index in names:
                found.add(index)
    return found


def _node_index(value: Any, count: int) -> int | None:
    """The node a field points at (an int, or a decimal string in older graphs), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, int) and 0 < value < count:
        return value
    return None


# -- what the module computes: names, shapes, FLOPs --------------------------------------------


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
        return _node_index(self.raw(index, name), len(self.nodes))

    def items(self, index: int | None) -> list[int]:
        data = self.node(index).get("data")
        if not isinstance(data, list):
            return []
        return [i for i in (_node_index(x, len(self.nodes)) for x in data) if i is not None]

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
            value = self.node(_node_index(value, len(self.nodes))).get("data")
        try:
            return int(value)
        except (TypeError, ValueError):
            return None

    def dtype(self, index: int | None) -> str:
        """The dtype field of a node: a string (older), or a PrimType node's (newer)."""
        value = self.raw(index, "dtype")
        if isinstance(value, str) and not value.isdigit():
            return value
        inner = self.raw(_node_index(value, len(self.nodes)), "dtype")
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


def _flops(nodes: _Nodes, body: int | None) -> int | None:
    """The estimate; None when it is 0 (nothing to compute: no GFLOPS to show) or too deep."""
    try:
        return int(_stmt_flops(nodes, body, 0)) or None
    except RecursionError:
        return None


def _stmt_flops(nodes: _Nodes, index: int | None, depth: int) -> float:
    if depth > _MAX_DEPTH:
        raise RecursionError
    kind, down = nodes.kind(index), depth + 1
    if kind == "For":
        extent = nodes.integer(nodes.ref(index, "extent"))
        return _stmt_flops(nodes, nodes.ref(index, "body"), down) * (extent or 1)
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
