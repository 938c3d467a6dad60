"""Control characters of log text shown as escapes: the one rule every output applies.

Pure. A log's task name holding ESC ]0;... BEL or ESC [2J would set a terminal's title or clear
it, and a NUL is not allowed in an HTML page: the terminal (`cli.output`) and the report
(`htmlreport`) show them as `\\x1b`, `\\n` instead.
"""

from __future__ import annotations

# Control characters (C0, DEL, C1) with a short escape of their own; the others are `\\x..`.
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown(text: str, *, keep_newlines: bool = False) -> str:
    """Text for the terminal: control characters escaped (`\\x1b`, `\\n`), log text included.

    `keep_newlines`: the line breaks of multi-line output stay (table cells escape them).
    """
    if text.isprintable() or (keep_newlines and text.replace("\n", "").isprintable()):
        return text  # the usual text: nothing to escape (also true of most non-ASCII)
    return "".join(
        char
        if char.isprintable() or (keep_newlines and char == "\n") or not _is_control(char)
        else _ESCAPES.get(char) or f"\\x{ord(char):02x}"
        for char in text
    )


def _is_control(char: str) -> bool:
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F
