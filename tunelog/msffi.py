"""The structural identity of a module graph written by tvm-ffi's serialiser (TVM >= 0.22).

Pure (nodes in, a hash out). TVM's structural equality compares a module as a tree: two objects
are equal when their types and fields are, however often the module shares them (one `IntImm`
for a shape used twice, or two), names of variables, buffers and blocks aside, and a map
whatever order its pairs were added in. Only variables are more than their fields: equality
maps each variable of one module to one of the other, where it is first met. The serialiser
writes a graph instead: each distinct value (a string, an int) once, each object once, shared
where the module shares it. So the identity here is a hash of the tree the graph stands for:
each node's hash made of its type, its own values and its children's hashes (each computed
once: a module shares subtrees), with a variable hashed as its number in the order a walk from
the root first meets it (and its own fields) rather than by where it sits in the graph.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from tunelog.msffifields import INT_FIELDS

# Nodes whose data is a value (the serialiser writes each distinct value once).
_VALUE_TYPES = frozenset(
    {"None", "bool", "int", "float", "DataType", "Device", "ffi.String", "ffi.Bytes", "ffi.Shape"}
)
_SEQUENCES = frozenset({"ffi.Array", "ffi.List"})  # data: the items' node indexes
_MAPS = frozenset({"ffi.Map", "ffi.Dict"})  # data: key, value, key, value... node indexes
# Objects equality maps from one module to the other (by the type's last dotted part).
_VARIABLES = frozenset({"Var", "SizeVar", "DataflowVar", "TypeVar"})
SPAN = "span"  # the source span of a node, which equality ignores


def is_ffi_graph(nodes: list[Any]) -> bool:
    """Whether the nodes are tvm-ffi's (`{"type", "data"}`), not the older `type_key` layout."""
    first = nodes[0] if nodes else None
    return isinstance(first, dict) and "type" in first and "type_key" not in first


def ffi_identity(nodes: list[Any], root: Any, ignored: dict[str, tuple[str, ...]]) -> str:
    """The hash of the tree the graph stands for (see the module docstring); `ignored`: the
    fields equality ignores, by the type's last dotted part."""
    graph = _Graph(nodes, ignored)
    top = graph.reference(root)
    if top is None:  # TVM cannot load a graph whose root is no node either
        raise ValueError(f"root index {root!r} names no node of the graph")
    numbers = graph.variables_in_order(top)
    return hashlib.sha256(graph.digest(top, numbers)).hexdigest()


class _Graph:
    """The nodes, each read once into its type, its own values and its children."""

    def __init__(self, nodes: list[Any], ignored: dict[str, tuple[str, ...]]) -> None:
        self.nodes = nodes
        self.ignored = ignored
        self._read: dict[int, tuple[Any, list[int]]] = {}
        # Memos shared by every map key a walk orders (a graph may point many keys at one
        # large subtree: each node is looked at once, not once per key).
        self._holds_variable: dict[int, bool] = {}
        self._free_digests: dict[int, bytes] = {}

    def reference(self, value: Any) -> int | None:
        """The node a field's int points at, or None (not an index of this graph)."""
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(self.nodes):
            return value
        return None

    def read(self, index: int) -> tuple[Any, list[int]]:
        """(the node's own content with a `_Child(n)` where its n-th child goes, children)."""
        found = self._read.get(index)
        if found is None:
            found = self._read[index] = self._read_node(self.nodes[index])
        return found

    def _read_node(self, node: Any) -> tuple[Any, list[int]]:
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            return ["literal", node], []
        type_key: str = node["type"]
        data = node.get("data")
        if type_key in _VALUE_TYPES:
            return [type_key, _scalar(data)], []
        children: list[int] = []

        def held(value: Any) -> Any:
            index = self.reference(value)
            if index is None:
                return ["literal", value]
            children.append(index)
            return _Child(len(children) - 1)

        if type_key in _SEQUENCES and isinstance(data, list):
            return [type_key, [held(item) for item in data]], children
        if type_key in _MAPS and isinstance(data, list):
            pairs = [[held(k), held(v)] for k, v in zip(data[::2], data[1::2], strict=False)]
            return [type_key, pairs], children
        if not isinstance(data, dict):
            return [type_key, data], []
        last = type_key.rsplit(".", 1)[-1]
        ignored = self.ignored.get(last, ())
        plain = INT_FIELDS.get(last, frozenset())
        fields: dict[str, Any] = {}
        for name, value in data.items():
            if name == SPAN:
                continue
            if name in ignored:
                fields["ignored:" + name] = ""
            elif isinstance(value, int) and not isinstance(value, bool) and name not in plain:
                fields[name] = held(value)
            else:
                fields[name] = _scalar(value)
        return [type_key, fields], children

    def is_variable(self, index: int) -> bool:
        """Whether the node is a variable (equality maps it, it does not compare its fields)."""
        node = self.nodes[index]
        type_key = node.get("type") if isinstance(node, dict) else None
        return isinstance(type_key, str) and type_key.rsplit(".", 1)[-1] in _VARIABLES

    def ordered_children(self, index: int) -> list[int]:
        """The node's children in the order a walk meets them: a map's pairs by their keys
        where no key holds a variable (its pairs' order is no part of it: a module's functions
        added in another order are one module)."""
        content, children = self.read(index)
        if content[0] in _MAPS and isinstance(content[1], list):
            pairs = content[1]
            keys = [self._key_order(pair[0], children) for pair in pairs]
            if all(key is not None for key in keys):
                order = sorted(range(len(pairs)), key=lambda n: keys[n] or b"")
                return [c for n in order for c in self._pair_children(pairs[n], children)]
        return children

    def _key_order(self, item: Any, children: list[int]) -> bytes | None:
        """A map key's sort key: its value, or the hash of an object holding no variable
        (a function's GlobalVar); None for one that does (no order without numbering it)."""
        if not isinstance(item, _Child):
            return orjson.dumps(item)
        key = children[item.n]
        if self.holds_variable(key):
            return None
        return self.digest(key, {}, self._free_digests)  # no variable: no number to know

    def holds_variable(self, top: int) -> bool:
        """Whether the node or a node below it is a variable (each node looked at once per
        graph; a reference back up the walk counts as none)."""
        found = self._holds_variable
        for index in self._children_first(top, found):
            children = self.read(index)[1]
            found[index] = self.is_variable(index) or any(found.get(c, False) for c in children)
        return found[top]

    @staticmethod
    def _pair_children(pair: list[Any], children: list[int]) -> Iterator[int]:
        for item in pair:
            if isinstance(item, _Child):
                yield children[item.n]

    def variables_in_order(self, top: int) -> dict[int, int]:
        """Each variable's number: the order a walk from the root first meets it."""
        numbers: dict[int, int] = {}
        seen: set[int] = set()
        stack = [top]
        while stack:
            index = stack.pop()
            if index in seen:
                continue
            seen.add(index)
            if self.is_variable(index):
                numbers[index] = len(numbers)
            stack.extend(reversed(self.ordered_children(index)))
        return numbers

    def digest(
        self, top: int, numbers: dict[int, int], done: dict[int, bytes] | None = None
    ) -> bytes:
        """The root's hash input: each node's content with its children's hashes in place,
        computed once per node, children first (a reference back up the walk, which no module
        holds, is hashed as its index); `done`: the hashes known already."""
        done = {} if done is None else done
        for index in self._children_first(top, done):
            content, children = self.read(index)
            done[index] = self._node_digest(index, content, children, numbers, done)
        return done[top]

    def _children_first(self, top: int, done: Mapping[int, Any]) -> Iterator[int]:
        """Each node below `top` not in `done`, once, after its children (a reference back up
        the walk is left out); the caller puts each yielded node in `done` before the next."""
        open_nodes: set[int] = set()
        stack: list[tuple[int, bool]] = [(top, False)]
        while stack:
            index, expanded = stack.pop()
            if index in done:
                continue
            if not expanded:
                open_nodes.add(index)
                stack.append((index, True))
                children = self.read(index)[1]
                stack.extend((c, False) for c in children if c not in done and c not in open_nodes)
                continue
            open_nodes.discard(index)
            yield index

    def _node_digest(
        self,
        index: int,
        content: Any,
        children: list[int],
        numbers: dict[int, int],
        done: dict[int, bytes],
    ) -> bytes:
        hashes = [done.get(c, b"cycle:%d" % c).hex() for c in children]
        filled = _filled(content, hashes)
        if content[0] in _MAPS and isinstance(filled[1], list):
            filled = [filled[0], sorted(filled[1], key=orjson.dumps)]
        if index in numbers:
            filled = ["variable", numbers[index], filled]
        return hashlib.blake2b(orjson.dumps(filled), digest_size=16).digest()


def _scalar(value: Any) -> Any:
    """A value as hashed: an infinite or NaN float by its sign and kind (JSON has none of
    them: written out, each would be null, and -inf, inf and NaN one value)."""
    if isinstance(value, float) and not math.isfinite(value):
        return ["float", repr(value)]
    return value


class _Child:
    """Where a node's n-th child goes in its content (no JSON value: a literal never is one)."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n


def _filled(content: Any, hashes: list[str], depth: int = 0) -> Any:
    """`content` with each `_Child(n)` replaced by the n-th child's hash (children sit in a
    node's fields, its sequence's items or its map's pairs: three levels down at most; a
    literal below is left as it is)."""
    if isinstance(content, _Child):
        return ["hash", hashes[content.n]]
    if depth > 3:
        return content
    if isinstance(content, list):
        return [_filled(item, hashes, depth + 1) for item in content]
    if isinstance(content, dict):
        return {name: _filled(value, hashes, depth + 1) for name, value in content.items()}
    return content
