"""The nesting limit: a line whose lists and objects nest deeper than MAX_NESTING is rejected.

AutoTVM records nest 5 levels deep (record, input, arguments, tensor, shape); the parsers part
ways far above that (pydantic refuses ~200 levels, msgspec ~1000, orjson cannot write 255,
Python's json and TVM's loader hit the recursion limit near 1000), so one limit well below all
of them keeps every reader of a stored line in agreement. `tunelog.records` applies it to every
line: by `too_deep` before any schema's reading of the line is used, except where the strict
v0.2 schema (`tunelog.recordstructs`) bounds every value it reads itself and the arguments, the
one value it keeps raw, pass `arguments_too_deep` (see `records.scan_content`).

Pure.
"""

from __future__ import annotations

import itertools
import re

MAX_NESTING = 100
TOO_DEEP_REASON = f"lists or objects nested more than {MAX_NESTING} levels deep"

# A record's arguments are a list inside the record's "input" (v0.2) or "i" (v0.1) list: the
# line nests this many levels deeper than the arguments do.
ARGUMENTS_LEVEL = 2

# Bracket text of a line without its strings, and each bracket's step in depth.
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting_depth(text: bytes) -> int:
    """How deep the text's lists and objects nest (brackets inside JSON strings ignored)."""
    brackets = _JSON_STRING.sub(b"", text).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


def nests_deeper_than(text: bytes, levels: int) -> bool:
    """Whether the text's lists and objects nest more than `levels` deep."""
    # Counting brackets first: the text needs more than `levels` of them to nest that deep.
    return text.count(b"[") + text.count(b"{") > levels and nesting_depth(text) > levels


def too_deep(line: bytes) -> bool:
    """Whether a line nests past MAX_NESTING: such a line is rejected (TOO_DEEP_REASON)."""
    return nests_deeper_than(line, MAX_NESTING)


def arguments_too_deep(raw_arguments: bytes) -> bool:
    """Whether a record whose arguments are this JSON text nests past MAX_NESTING there."""
    return nests_deeper_than(raw_arguments, MAX_NESTING - ARGUMENTS_LEVEL)
