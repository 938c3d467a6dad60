"""Characters of log text that would act on a terminal or page shown as escapes: the one
rule every output applies.

Pure. A log's task name holding ESC ]0;... BEL or ESC [2J would set a terminal's title or clear
it, U+202E shows the text after it reversed, U+2028 breaks a line, a NUL is not allowed in an
HTML page, and a file name that is not UTF-8 (a lone surrogate once decoded) cannot be written
at all: the terminal (`cli.output`) and the report (`htmlreport`) show them as `\\x1b`, `\\n`,
`\\u202e`, `\\udcff`. Other characters Python does not call printable (a no-break or
ideographic space, a zero-width joiner) are text, and stay.
"""

from __future__ import annotations

import unicodedata

# Control characters (C0, DEL, C1) with a short escape of their own; the others are `\\x..`.
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown(text: str, *, keep_newlines: bool = False) -> str:
    """Text for the terminal: control characters escaped (`\\x1b`, `\\n`), and line and
    paragraph separators, bidi controls and lone surrogates (`\\u202e`), log text included.

    `keep_newlines`: the line breaks of multi-line output stay (table cells escape them).
    """
    if text.isprintable() or (keep_newlines and text.replace("\n", "").isprintable()):
        return text  # the usual text: nothing to escape (also true of most non-ASCII)
    return "".join(
        _escape(char) if _acts(char) and not (keep_newlines and char == "\n") else char
        for char in text
    )


# Bidi controls (Cf): they reorder the text shown around them (U+202E: "trojan source").
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Control characters, lone surrogates, line and paragraph separators.
_ACTING = frozenset(("Cc", "Cs", "Zl", "Zp"))


def _acts(char: str) -> bool:
    return char in _BIDI or unicodedata.category(char) in _ACTING


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return _ESCAPES.get(char) or f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
