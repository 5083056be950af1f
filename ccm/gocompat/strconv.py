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

__all__ = ["EscapeError", "decode_go_escapes", "quote", "quote_rune", "parse_int", "parse_float", "atoi"]


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


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _underscore_ok(body: str) -> bool:
    """Go's underscoreOK: each '_' sits between digits (or right after a base prefix)."""
    prev = "^"   # start; a base prefix counts as a digit for this rule
    for ch in body:
        if ch == "_":
            if prev != "0":
                return False
            prev = "_"
        else:
            prev = "0"
    return prev != "_"


def parse_int(s: str, base: int = 10, bits: int = 64) -> int:
    """Go's ``strconv.ParseInt``; raises ``ValueError`` with Go's message."""
    syntax = ValueError(f'strconv.ParseInt: parsing {quote(s)}: invalid syntax')
    body, sign = s, 1
    if body[:1] in ("+", "-"):
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    prefix_ok = False
    if base == 0:
        low = body[:2].lower()
        base, prefix_ok = 10, False
        if low in ("0x", "0o", "0b"):
            base, body, prefix_ok = {"0x": 16, "0o": 8, "0b": 2}[low], body[2:], True
        elif body[:1] == "0" and len(body) > 1:
            base, body, prefix_ok = 8, body[1:], True
        if "_" in body and not _underscore_ok(("0" if prefix_ok else "") + body):
            raise syntax
        body = body.replace("_", "")
    if not body or any(ch.lower() not in _DIGITS[:base] for ch in body):
        raise syntax
    value = sign * int(body, base)
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise ValueError(f"strconv.ParseInt: parsing {quote(s)}: value out of range")
    return value


def atoi(s: str) -> int:
    """Go's ``strconv.Atoi`` (decimal, optional sign)."""
    try:
        return parse_int(s, 10)
    except ValueError as err:
        raise ValueError(str(err).replace("ParseInt", "Atoi")) from None


def parse_float(s: str) -> float:
    """Go's ``strconv.ParseFloat(s, 64)``: decimal and hex floats, ``inf``/``nan``;
    underscores only after a base prefix. Raises ``ValueError`` (syntax or range)."""
    import math
    import re

    syntax = ValueError(f'strconv.ParseFloat: parsing {quote(s)}: invalid syntax')
    body = s[1:] if s[:1] in ("+", "-") else s
    low = body.lower()
    if low in ("inf", "infinity"):
        return -math.inf if s[:1] == "-" else math.inf
    if low == "nan" and body == s:
        return math.nan
    if low.startswith("0x"):
        if not re.fullmatch(r"0x(?:_?[0-9a-f])*(?:\.(?:[0-9a-f]_?)*)?p[+-]?[0-9](?:_?[0-9])*", low) \
                or not _underscore_ok("0" + low[2:].split("p")[0].replace(".", "")):
            raise syntax
        value = float.fromhex(("-" if s[:1] == "-" else "") + low.replace("_", ""))
    else:
        if "_" in body or not re.fullmatch(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", body):
            raise syntax
        value = float(s)
    if math.isinf(value):
        raise ValueError(f"strconv.ParseFloat: parsing {quote(s)}: value out of range")
    return value
