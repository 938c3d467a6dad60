"""Which AutoTVM layout a line is read as first: v0.1 (`{"i": ..., "r": ..., "v": 0.1}`) or
v0.2 (`{"input": ..., "config": ..., "result": ...}`).

Both parsers guess from the line's bytes (`v01_layout_first`: a "v" key and no "input" key),
which costs no decoding. The bytes can mislead only where a key is written with an escape
(`"\\u0069nput"`); TVM's reader looks at the decoded keys, so when the v0.1 guess fails the
models read the line again as v0.2 if it has an "input" key (`has_input_key`), as they would
have had the key been written plainly.

Pure.
"""

from __future__ import annotations

import orjson


def v01_layout_first(line: bytes) -> bool:
    """Whether the v0.1 layout is tried before v0.2: the line has a "v" key and no "input" key
    (as bytes)."""
    return b'"v"' in line and b'"input"' not in line


# What a v0.2 record marked `"v": 0.1` is rejected with (`marked_v01`).
MARKED_V01 = (
    'a v0.2 record marked "v": 0.1: TVM\'s loader takes any such line for the v0.1 format, '
    "which TVM >= 0.7 skips (remove the key)"
)


def marked_v01(line: bytes) -> bool:
    """Whether a line with the v0.2 layout also has `"v": 0.1`: TVM's `decode` checks that key
    before anything else and skips the line (`return None`), whatever else it holds. Only a
    line with a "v" key as bytes, or with an escape that may spell one (`"\\u0076"`), is
    decoded."""
    if b'"v"' not in line and b"\\" not in line:
        return False
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    # (a line with both layouts' keys is told apart by the models: "mixes v0.1 and v0.2")
    return (
        isinstance(value, dict) and "input" in value and "i" not in value and value.get("v") == 0.1
    )


def has_input_key(line: bytes) -> bool:
    """Whether the line decodes to an object with an "input" key (the v0.2 layout's)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict) and "input" in value
