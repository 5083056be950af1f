"""Jet lexing: template text -> text chunks and action token lists."""
from __future__ import annotations


from ccm.gocompat.strconv import EscapeError, decode_go_escapes
from ccm.templates.engine_util import Source, scan_quoted
from ccm.templates.jet.values import _WS, JetError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Tuple


class _Src(Source):
    """The template text plus position helpers for messages."""

    def parse_error(self, reason: str, pos: int) -> JetError:
        line, col = self.where(pos)
        return JetError(reason, template=self.name, line=line, column=col)

    def runtime_error(self, reason: str, pos: int) -> JetError:
        line, col = self.where(pos)
        return JetError(reason, template=self.name, line=line, column=col, runtime=True)


# token kinds
_NUM, _STR, _IDENT, _FIELD, _OP = "number", "string", "identifier", "field", "operator"
_OPS2 = (":=", "==", "!=", "<=", ">=", "&&", "||")
_OPS1 = "=<>!+-*/%()[],:?|.;"


class _Tok:
    __slots__ = ("kind", "val", "pos")

    def __init__(self, kind: str, val: Any, pos: int):
        self.kind = kind
        self.val = val
        self.pos = pos

    def is_op(self, op: str) -> bool:
        return self.kind == _OP and self.val == op

    def is_ident(self, name: str) -> bool:
        return self.kind == _IDENT and self.val == name

    def __repr__(self) -> str:
        return f"{self.kind}:{self.val!r}"


def _unquote(src: _Src, body: str, pos: int) -> str:
    """Interpret Go escapes in a double-quoted string body."""
    try:
        return decode_go_escapes(body)
    except EscapeError as exc:
        if exc.sequence:
            raise src.parse_error(f"unknown escape sequence \\{exc.sequence}", pos) from None
        raise src.parse_error("invalid escape sequence in string", pos) from None


def _scan_number(text: str, i: int) -> int:
    n = len(text)
    if text.startswith(("0x", "0X"), i):
        j = i + 2
        while j < n and (text[j] in "0123456789abcdefABCDEF_"):
            j += 1
        return j
    j = i
    while j < n and ((text[j].isascii() and text[j].isdigit()) or text[j] == "_"):
        j += 1
    if j < n and text[j] == "." and j + 1 < n and (text[j + 1].isascii() and text[j + 1].isdigit()):
        j += 1
        while j < n and (text[j].isascii() and text[j].isdigit()):
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and (text[k].isascii() and text[k].isdigit()):
            j = k
            while j < n and (text[j].isascii() and text[j].isdigit()):
                j += 1
    return j


def _tokenize_action(src: _Src, start: int, open_pos: int, right: str) -> Tuple[List[_Tok], int, bool]:
    """Tokens of one action from ``start``; returns (tokens, end, trim_right)."""
    text = src.text
    n = len(text)
    i = start
    toks: List[_Tok] = []
    while True:
        if i >= n:
            raise src.parse_error("unclosed action", open_pos)
        c = text[i]
        if c == " " and text.startswith("-" + right, i + 1):  # Jet's marker is exactly " -"
            return toks, i + 2 + len(right), True
        if text.startswith(right, i):
            return toks, i + len(right), False
        if c in _WS:
            i += 1
            continue
        tok, i = _lex_token(src, text, c, i)
        toks.append(tok)


def _lex_token(src: _Src, text: str, c: str, i: int) -> Tuple[_Tok, int]:
    """The one token that starts with ``c`` at ``i`` inside an action (``text`` is ``src.text``),
    and where it ends."""
    if c in "\"`'":
        kind, literal, end = scan_quoted(text, i, lambda body, pos: _unquote(src, body, pos), src.parse_error)
        return _Tok(_STR if kind == "string" else _NUM, literal, i), end
    if c.isascii() and c.isdigit():
        return _number_token(src, i)
    if c.isalpha() or c == "_" or (c == "." and (text[i + 1:i + 2].isalpha() or text[i + 1:i + 2] == "_")):
        return _lex_name(text, c, i)
    if text[i:i + 2] in _OPS2:
        return _Tok(_OP, text[i:i + 2], i), i + 2
    if c in _OPS1:
        return _Tok(_OP, c, i), i + 1
    raise src.parse_error(f"unrecognized character in action: {c!r}", i)


def _lex_name(text: str, c: str, i: int) -> Tuple[_Tok, int]:
    """An identifier or a ``.field``: a run of letters, digits and ``_``."""
    n = len(text)
    j = i + 1
    while j < n and (text[j].isalnum() or text[j] == "_"):
        j += 1
    if c == ".":
        return _Tok(_FIELD, text[i + 1:j], i), j
    return _Tok(_IDENT, text[i:j], i), j


def _number_token(src: _Src, i: int) -> Tuple[_Tok, int]:
    text = src.text
    j = _scan_number(text, i)
    lit = text[i:j].replace("_", "")
    try:
        if lit.lower().startswith("0x"):
            val: Any = int(lit, 16)
        elif any(ch in lit for ch in ".eE"):
            val = float(lit)
        elif len(lit) > 1 and lit.startswith("0"):
            val = int(lit, 8)
        else:
            val = int(lit)
    except ValueError:
        raise src.parse_error(f"bad number syntax: {text[i:j]!r}", i) from None
    if j < len(text) and (text[j].isalpha() or text[j] == "_"):
        raise src.parse_error(f"bad number syntax: {text[i:j + 1]!r}", i)
    return _Tok(_NUM, val, i), j

def _lex(src: _Src, left: str, right: str) -> List[Tuple[str, Any, int]]:
    """Split the template into ("text", str, pos) and ("action", tokens, pos)."""
    text = src.text
    items: List[Tuple[str, Any, int]] = []
    pos = 0
    while True:
        a = text.find(left, pos)
        c = text.find("{*", pos)
        if a < 0 and c < 0:
            if pos < len(text):
                items.append(("text", text[pos:], pos))
            return items
        if c >= 0 and (a < 0 or c < a):
            if c > pos:
                items.append(("text", text[pos:c], pos))
            end = text.find("*}", c + 2)
            if end < 0:
                raise src.parse_error("unclosed comment", c)
            pos = end + 2
            continue
        body = text[pos:a]
        start = a + len(left)
        if text.startswith("- ", start):  # Jet's marker is exactly "- "
            body = body.rstrip(_WS)
            start += 1
        if body:
            items.append(("text", body, pos))
        toks, pos, trim = _tokenize_action(src, start, a, right)
        # the closing delimiter's position locates "unexpected end of action"
        close = pos - len(right) - (1 if trim else 0)
        items.append(("action", (toks, close), a))
        if trim:
            while pos < len(text) and text[pos] in _WS:
                pos += 1
