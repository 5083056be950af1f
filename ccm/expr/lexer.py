"""Tokenizer for the expression language.

Turns source text into a list of ``Token`` (kind, value, 0-based position).
Kinds: ``num``, ``str``, ``ident``, ``op``, ``pointer`` (``#``, ``#index``), ``eof``.
Word operators (``and``, ``in``, ``matches``...) come out as ``op`` tokens; ``let``,
``if`` and ``else`` stay identifiers (the parser knows where they are keywords).
Comments (``// to the end of the line``, ``/* ... */``) are skipped.
"""
from __future__ import annotations

from typing import NamedTuple

from ccm.expr.errors import ExprError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, List, Tuple

    Fail = Callable[[str, int], ExprError]  # makes the error for a message at a position

WORD_OPERATORS = frozenset(
    {"and", "or", "not", "in", "matches", "contains", "startsWith", "endsWith"}
)
_TWO_CHAR = frozenset({"**", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", ".."})
_ONE_CHAR = frozenset("+-*/%^!<>?:.,()[]{}|=;")
_SIMPLE_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "`": "`",
    "a": "\a", "b": "\b", "f": "\f", "v": "\v",
}


class Token(NamedTuple):
    kind: str
    value: Any
    pos: int


def _is_ident_start(ch: str) -> bool:
    return ch.isalpha() or ch == "_" or ch == "$"


def _is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_" or ch == "$"


def tokenize(source: str) -> List[Token]:
    """Split ``source`` into tokens; raises a compile ``ExprError`` on bad input."""
    tokens: List[Token] = []
    i, n = 0, len(source)

    def fail(message: str, pos: int) -> ExprError:
        return ExprError(message, expr=source, column=pos + 1, compile_error=True)

    while i < n:
        ch = source[i]
        if ch.isspace():
            i += 1
            continue
        if ch == "/" and source[i + 1:i + 2] in ("/", "*"):
            i = _skip_comment(source, i, fail)
            continue
        start = i
        if (ch.isascii() and ch.isdigit()) or (ch == "." and _leading_dot_number(source, i, tokens)):
            i, value = _scan_number(source, i, fail)
            tokens.append(Token("num", value, start))
        elif ch in "\"'":
            i, value = _scan_quoted(source, i, fail)
            tokens.append(Token("str", value, start))
        elif ch == "`":
            end = source.find("`", i + 1)
            if end < 0:
                raise fail("literal not terminated", start)
            tokens.append(Token("str", source[i + 1:end], start))
            i = end + 1
        elif _is_ident_start(ch):
            while i < n and _is_ident_char(source[i]):
                i += 1
            word = source[start:i]
            tokens.append(Token("op" if word in WORD_OPERATORS else "ident", word, start))
        elif ch == "#":
            i += 1
            while i < n and _is_ident_char(source[i]):
                i += 1
            tokens.append(Token("pointer", source[start + 1:i], start))
        elif source[i:i + 2] in _TWO_CHAR:
            tokens.append(Token("op", source[i:i + 2], start))
            i += 2
        elif ch in _ONE_CHAR:
            tokens.append(Token("op", ch, start))
            i += 1
        else:
            raise fail(f"unrecognized character: {ch!r}", start)
    tokens.append(Token("eof", None, n))
    return tokens


def _leading_dot_number(source: str, i: int, tokens: List[Token]) -> bool:
    """``.5`` is a float where an operand may start (not ``x.5``, not ``1..5``)."""
    if not source[i + 1:i + 2].isdigit() or not source[i + 1:i + 2].isascii():
        return False
    if not tokens:
        return True
    prev = tokens[-1]
    return prev.kind == "op" and prev.value not in (")", "]", "}")


def _skip_comment(source: str, i: int, fail: Fail) -> int:
    if source[i + 1] == "/":
        end = source.find("\n", i)
        return len(source) if end < 0 else end + 1
    end = source.find("*/", i + 2)
    if end < 0:
        raise fail("unclosed comment", i)
    return end + 2


def _scan_number(source: str, i: int, fail: Fail) -> Tuple[Any, ...]:
    n = len(source)
    start = i
    if source[i] == "0" and i + 1 < n and source[i + 1] in "xXoObB":
        base = {"x": 16, "o": 8, "b": 2}[source[i + 1].lower()]
        i += 2
        while i < n and (source[i].isalnum() or source[i] == "_"):
            i += 1
        try:
            return i, int(source[start + 2:i].replace("_", ""), base)
        except ValueError:
            raise fail(f"invalid number: {source[start:i]}", start) from None
    while i < n and ((source[i].isascii() and source[i].isdigit()) or source[i] == "_"):
        i += 1
    is_float = False
    # "1..3" is a range, not the float "1."; "1.foo" is not a float either.
    if i + 1 < n and source[i] == "." and (source[i + 1].isascii() and source[i + 1].isdigit()):
        is_float = True
        i += 1
        while i < n and ((source[i].isascii() and source[i].isdigit()) or source[i] == "_"):
            i += 1
    if i < n and source[i] in "eE":
        j = i + 1
        if j < n and source[j] in "+-":
            j += 1
        if j < n and (source[j].isascii() and source[j].isdigit()):
            is_float = True
            i = j
            while i < n and (source[i].isascii() and source[i].isdigit()):
                i += 1
    if i < n and _is_ident_char(source[i]):
        raise fail(f"invalid number: {source[start:i + 1]}", start)
    text = source[start:i].replace("_", "")
    return i, (float(text) if is_float else int(text))


def _scan_quoted(source: str, i: int, fail: Fail) -> Tuple[Any, ...]:
    quote = source[i]
    start = i
    i += 1
    n = len(source)
    out: List[str] = []
    while True:
        if i >= n or source[i] == "\n":
            raise fail("literal not terminated", start)
        ch = source[i]
        if ch == quote:
            return i + 1, "".join(out)
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            raise fail("literal not terminated", start)
        esc = source[i + 1]
        if esc in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[esc])
            i += 2
            continue
        width = {"x": 2, "u": 4, "U": 8}.get(esc)
        if width is not None:
            digits = source[i + 2:i + 2 + width]
            try:
                if len(digits) != width:
                    raise ValueError
                out.append(chr(int(digits, 16)))
            except ValueError:
                raise fail("invalid char escape", i) from None
            i += 2 + width
            continue
        if esc in "01234567":
            digits = source[i + 1:i + 4]
            try:
                if len(digits) != 3:
                    raise ValueError
                out.append(chr(int(digits, 8)))
            except ValueError:
                raise fail("invalid char escape", i) from None
            i += 4
            continue
        raise fail("invalid char escape", i)
