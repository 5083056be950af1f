"""Go's ``strconv`` string rules: reading literal escapes (``Unquote``) and quoting
(``Quote``, ``QuoteToASCII``, ``QuoteRune``), the one ``%q`` quoter ccm has.

``quote`` escapes what Go escapes: ``\\a \\b \\f \\n \\r \\t \\v``, backslash and
the double quote by name, other non-printable runes as ``\\xNN``, ``\\uNNNN`` or
``\\UNNNNNNNN``. Standard library only.
"""
from __future__ import annotations


from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List

__all__ = ["EscapeError", "decode_go_escapes", "quote", "quote_rune"]


class EscapeError(ValueError):
    """A bad escape in a Go string literal; ``sequence`` is set for an unknown escape."""

    def __init__(self, sequence: str = ""):
        self.sequence = sequence
        super().__init__(f"unknown escape \\{sequence}" if sequence else "invalid escape")


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'",
                   "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def decode_go_escapes(body: str) -> str:
    """The text of a double-quoted Go string literal's body (``\\n``, ``\\x41``, ``\\101``...)."""
    if "\\" not in body:
        return body
    out: List[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = body[i + 1:i + 2]
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            i += 2
            continue
        if e in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits, start, base = body[i + 2:i + 2 + width], i + 2, 16
        elif (e.isascii() and e.isdigit()):
            width, digits, start, base = 3, body[i + 1:i + 4], i + 1, 8
        else:
            raise EscapeError(e)
        try:
            if len(digits) != width:
                raise ValueError
            out.append(chr(int(digits, base)))
        except ValueError:
            raise EscapeError() from None
        i = start + width
    return "".join(out)


def quote(s: str, ascii_only: bool = False) -> str:
    """Go's ``strconv.Quote`` (``QuoteToASCII`` with ``ascii_only``): ``%q`` of a string."""
    out = ['"']
    esc = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
           "\v": "\\v", "\\": "\\\\", '"': '\\"'}
    for ch in s:
        if ch in esc:
            out.append(esc[ch])
        elif ch == " " or (ch.isprintable() and not (ascii_only and ord(ch) > 0x7E)):
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def quote_rune(r: int) -> str:
    """Go's ``strconv.QuoteRune``: ``%q`` of an integer."""
    ch = chr(r)
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + quote(ch)[1:-1] + "'"
