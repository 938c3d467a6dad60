"""The IRModule in a MetaSchedule workload line: its identity and the TVM version that wrote it.

Pure (text in, values out). A workload line holds the module as TVM's JSON object graph, base64
encoded behind an 8-byte length header in most versions (tvm-reference §9). The graph is a list
of nodes; an object node names its fields, and a field pointing at another object holds that
node's index.

**Identity is structural equality** (one home for the rule): TVM deserialises each module and
commits it through structural hash and equality, which ignore source spans and the names of
variables, buffers and blocks (their reflection marks those fields `SEqHashIgnore`). So two
modules that differ only in those names are one workload. The fields it ignores are named here
(`_IGNORED_FIELDS`); a graph tvm-ffi wrote (TVM >= 0.22) is hashed as the tree TVM compares
(`tunelog.msffi`), an older `type_key` graph as its nodes in place, those names blanked and
spans dropped. Everything else, the function name included, counts.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from tunelog.msffi import SPAN, ffi_identity, is_ffi_graph

# Fields TVM's structural equality ignores, by the node type's last dotted part (ir.Var, tirx.Var,
# tir.SizeVar, tir.Buffer, s_tir.SBlock, tir.Block across versions).
_IGNORED_FIELDS: dict[str, tuple[str, ...]] = {
    "Var": ("name", "name_hint"),
    "DataflowVar": ("name", "name_hint"),
    "IndexMap": ("inverse_index_map",),
    "SizeVar": ("name", "name_hint"),
    "Buffer": ("name",),
    "SBlock": ("name_hint",),
    "Block": ("name_hint",),
}
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
    except orjson.JSONDecodeError:
        graph = _with_non_finite_floats(raw)
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
        raise ModuleError("module graph has no node list")
    if not graph["nodes"]:
        raise ModuleError("module graph has no node")
    root = _index(graph.get("root_index", graph.get("root", 0)))
    if root is None:  # -1, "x", 2.5, true: no node (each was read as node 0: one identity)
        raise ModuleError("module graph's root is no node index")
    meta = graph.get("metadata") or graph.get("attrs") or {}
    version = meta.get("tvm_version") if isinstance(meta, dict) else None
    return ModuleGraph(graph["nodes"], root, version if isinstance(version, str) else None)


def _graph_bytes(text: str) -> bytes:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return stripped.encode()
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ModuleError("module is neither base64 nor JSON") from exc
    # The header is the graph's length as 8 little-endian bytes: its first byte may be `{`
    # (one graph length in 256), so a header is known by the length it gives.
    if (
        len(raw) > _HEADER_BYTES
        and int.from_bytes(raw[:_HEADER_BYTES], "little") == len(raw) - _HEADER_BYTES
        and raw[_HEADER_BYTES : _HEADER_BYTES + 1] == b"{"
    ):
        return raw[_HEADER_BYTES:]
    for start in (0, _HEADER_BYTES):  # no header, or one that gives another length
        if raw[start : start + 1] == b"{":
            return raw[start:]
    raise ModuleError("module holds no JSON object graph")


def _with_non_finite_floats(raw: bytes) -> Any:
    """The graph as Python's json reads it: TVM writes an infinite or NaN float constant as
    the bare word `Infinity`, `-Infinity` or `NaN` (a -inf mask in an attention kernel),
    which orjson refuses."""
    import json

    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ModuleError("module is not a JSON object graph") from exc


def structural_identity(graph: ModuleGraph) -> str:
    """A hash equal for two modules exactly when TVM's structural equality holds (see above).

    Raises ModuleError for a graph TVM cannot load either: its root no node, or a value
    nested too deep to write out again (orjson writes 254 levels; no module nests a tenth of
    that) or an integer past 64 bits.
    """
    try:
        return _identity(graph)
    except (TypeError, RecursionError, ValueError) as exc:  # orjson's errors are TypeErrors
        raise ModuleError(f"module graph cannot be read ({exc})") from exc


def _identity(graph: ModuleGraph) -> str:
    if is_ffi_graph(graph.nodes):
        return ffi_identity(graph.nodes, graph.root, _IGNORED_FIELDS)
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
        if name == SPAN:
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
