"""A log line's text before it is parsed: its content (`strip_line`: the UTF-8 BOM and the line
end taken off) and the records of a line pasted from a web page (`repair_line`, for --repair).

Pure: bytes in, bytes out.
"""

from __future__ import annotations

import json

UTF8_BOM = b"\xef\xbb\xbf"


def strip_line(raw: bytes) -> bytes:
    """The line's content: without a UTF-8 BOM and without the line end (LF, CRLF or CR)."""
    # Two C calls and no branch: this runs once per line of every import.
    return raw.removeprefix(UTF8_BOM).rstrip(b"\r\n")


# Quote characters a web page or word processor substitutes for ASCII `"`.
_TYPOGRAPHIC_QUOTES = str.maketrans({c: '"' for c in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"})
_DECODER = json.JSONDecoder()


def repair_line(raw: bytes) -> list[bytes]:
    """Recover the records of a line pasted from a web page, or [] when nothing is recoverable.

    Undoes the two things forums do to AutoTVM logs: typographic quotes instead of `"`, and
    several records run together on one line. Each piece is returned as the text of one record
    (AutoTVM's strings never contain quotes, so replacing them cannot change a value).
    """
    try:
        text = strip_line(raw).decode("utf-8")
    except UnicodeDecodeError:
        return []
    text = text.translate(_TYPOGRAPHIC_QUOTES)
    pieces: list[bytes] = []
    position = 0
    while position < len(text):
        while position < len(text) and text[position] in " \t,;":
            position += 1
        if position >= len(text):
            break
        try:
            _, end = _DECODER.raw_decode(text, position)
        except ValueError:
            return []
        pieces.append(text[position:end].encode("utf-8"))
        position = end
    return pieces
