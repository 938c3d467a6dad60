"""Characters of log text that are not printable shown as escapes: the one rule every
output applies.

Pure. A log's task name holding ESC ]0;... BEL or ESC [2J would set a terminal's title or clear
it, U+202E shows the text after it reversed, a NUL is not allowed in an HTML page, and a file
name that is not UTF-8 (a lone surrogate once decoded) cannot be written at all: the terminal
(`cli.output`) and the report (`htmlreport`) show them as `\\x1b`, `\\n`, `\\u202e`, `\\udcff`.
"""

from __future__ import annotations

# Control characters (C0, DEL, C1) with a short escape of their own; the others are `\\x..`.
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown(text: str, *, keep_newlines: bool = False) -> str:
    """Text for the terminal: what Python does not call printable escaped (control characters
    as `\\x1b`, `\\n`; format characters such as bidi overrides, line separators and lone
    surrogates as `\\u202e`), log text included.

    `keep_newlines`: the line breaks of multi-line output stay (table cells escape them).
    """
    if text.isprintable() or (keep_newlines and text.replace("\n", "").isprintable()):
        return text  # the usual text: nothing to escape (also true of most non-ASCII)
    return "".join(
        char if char.isprintable() or (keep_newlines and char == "\n") else _escape(char)
        for char in text
    )


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return _ESCAPES.get(char) or f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
