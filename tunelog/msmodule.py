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
from dataclasses import dataclass
from typing import Any

import orjson

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
        _index(root) or 0,
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
    if _is_ffi_graph(graph.nodes):
        payload = orjson.dumps(_ffi_canonical(graph), option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(payload).hexdigest()
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
            index = node_index(value, len(nodes))
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
            index = node_index(value, len(canonical))
            if index in names:
                found.add(index)
    return found


def node_index(value: Any, count: int) -> int | None:
    """The node a field points at (an int, or a decimal string in older graphs), else None."""
    index = _index(value)
    return index if index is not None and 0 < index < count else None


def _index(value: Any) -> int | None:
    """An int, or a string of ASCII digits (`"²"` is a digit to Python, no number to int())."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
        return int(value)
    return value if isinstance(value, int) and value >= 0 else None


# -- graphs of tvm-ffi's serialiser (TVM >= 0.22) ------------------------------------------------
#
# It writes each distinct value of a value type once, however many fields hold it (two buffers
# named "X", a buffer named like the function): equal strings share one node, so which names a
# module repeats changes its node count and every index after. Such nodes are read into the
# fields that point at them, and the other nodes (objects, shared only where the module shares
# them, which structural equality sees: a variable used twice) renumbered without them.

_FFI_VALUE_TYPES = frozenset(
    {"None", "bool", "int", "float", "DataType", "Device", "ffi.String", "ffi.Bytes", "ffi.Shape"}
)
# Data of these types lists references (the others' data is a value of its own).
_FFI_SEQUENCES = frozenset({"ffi.Array", "ffi.List", "ffi.Map", "ffi.Dict"})
# Object fields of a plain int type, written as the int itself (any other object field holds a
# node index): by the type's last dotted part, as reflected by apache-tvm 0.27 (and the names
# the same fields had before).
_FFI_INT_FIELDS: dict[str, frozenset[str]] = {
    name: frozenset(fields)
    for name, fields in {
        "For": ("kind",),
        "IterVar": ("iter_type",),
        "Buffer": ("data_alignment", "offset_factor"),
        "BufferType": ("data_alignment", "offset_factor"),
        "ShapeType": ("ndim",),
        "TensorType": ("ndim",),
        "ShapeStructInfo": ("ndim",),
        "TensorStructInfo": ("ndim",),
        "TupleGetItem": ("index",),
        "TupleGetItemPattern": ("index",),
        "VDevice": ("vdevice_id",),
        "PlacementSpec": ("axis", "kind"),
        "ExecScope": ("kind",),
        "ScopeIdDef": ("scope",),
        "Op": ("num_inputs", "support_level"),
        "StmtSRef": ("seq_index",),
        "ComposeLayout": ("atom_len", "inner_mask", "outer_mask", "per_element", "swizzle_len"),
        "TensorMapEncodeTiledAttr": (
            "force_cu_dtype",
            "interleave",
            "l2_promotion",
            "oob_fill",
            "rank",
            "swizzle",
        ),
    }.items()
}


def _is_ffi_graph(nodes: list[Any]) -> bool:
    """Whether the nodes are tvm-ffi's (`{"type", "data"}`), not the older `type_key` layout."""
    first = nodes[0] if nodes else None
    return isinstance(first, dict) and "type" in first and "type_key" not in first


def _ffi_canonical(graph: ModuleGraph) -> list[Any]:
    """The graph's object nodes, renumbered without its value nodes, each field holding its
    value (spans dropped, ignored names blanked); the root first."""
    nodes = graph.nodes
    count = len(nodes)
    values: dict[int, Any] = {}
    numbers: dict[int, int] = {}
    for index, node in enumerate(nodes):
        if isinstance(node, dict) and node.get("type") in _FFI_VALUE_TYPES:
            values[index] = [node.get("type"), node.get("data")]
        else:
            numbers[index] = len(numbers)

    def held(value: Any) -> Any:
        """A reference's canonical form: the value it names, or the object's new number."""
        index = _index(value)
        if index is None or index >= count:
            return ["literal", value]
        return values[index] if index in values else ["node", numbers[index]]

    canonical: list[Any] = [held(graph.root)]
    for index, node in enumerate(nodes):
        if index in values:
            continue
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            canonical.append(["literal", node])
            continue
        type_key: str = node["type"]
        data = node.get("data")
        last = type_key.rsplit(".", 1)[-1]
        if isinstance(data, dict):
            ignored = _IGNORED_FIELDS.get(last, ())
            plain = _FFI_INT_FIELDS.get(last, frozenset())
            fields: dict[str, Any] = {}
            for name, value in data.items():
                if name == _SPAN:
                    continue
                if name in ignored:
                    fields[_NAME_MARK + name] = ""
                elif isinstance(value, int) and not isinstance(value, bool) and name not in plain:
                    fields[name] = held(value)
                else:
                    fields[name] = value
            canonical.append([type_key, fields])
        elif type_key in _FFI_SEQUENCES and isinstance(data, list):
            canonical.append([type_key, [held(item) for item in data]])
        else:
            canonical.append([type_key, data])
    return canonical
