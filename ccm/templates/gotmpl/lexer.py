"""Go template lexing: template text -> text chunks and action token lists."""
from __future__ import annotations


from ccm.gocompat.strconv import EscapeError, decode_go_escapes
from ccm.templates.engine_util import Source, scan_quoted
from ccm.templates.gotmpl.values import _WS, GoTemplateError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Tuple

_T_TEXT, _T_ACTION = "text", "action"


class _Tok:
    __slots__ = ("kind", "val", "pos", "end", "spaced")

    def __init__(self, kind: str, val: Any, pos: int, end: int, spaced: bool):
        self.kind, self.val, self.pos, self.end, self.spaced = kind, val, pos, end, spaced

    def __repr__(self) -> str:
        return f"{self.kind}:{self.val!r}"


class _Src(Source):
    def error(self, reason: str, pos: int) -> GoTemplateError:
        line, col = self.where(pos)
        return GoTemplateError(reason, template=self.name, line=line, column=col)


def _unquote(src: _Src, body: str, pos: int) -> str:
    try:
        return decode_go_escapes(body)
    except EscapeError as exc:
        if exc.sequence:
            raise src.error(f"invalid syntax in quoted string: unknown escape \\{exc.sequence}", pos) from None
        raise src.error("invalid syntax in quoted string", pos) from None


_KEYWORDS = {"if", "else", "end", "range", "with", "define", "template", "block",
             "break", "continue", "nil", "true", "false"}


def _lex_action(src: _Src, start: int, open_pos: int, right: str) -> Tuple[List[_Tok], int, bool]:
    text = src.text
    n = len(text)
    i = start
    toks: List[_Tok] = []
    spaced = True
    while True:
        if i >= n:
            raise src.error("unclosed action", open_pos)
        c = text[i]
        if c in _WS and text.startswith("-" + right, i + 1):
            return toks, i + 2 + len(right), True
        if text.startswith(right, i):
            return toks, i + len(right), False
        if c in _WS:
            spaced = True
            i += 1
            continue
        tok = _lex_token(src, text, c, i, spaced)
        i = tok.end
        toks.append(tok)
        spaced = False


def _number_end(text: str, i: int) -> int:
    """Where the number literal that starts at ``i`` ends (exponent signs included, not after 0x)."""
    n = len(text)
    j = i + 1
    while j < n and (text[j].isalnum() or text[j] in "._" or
                     (text[j] in "+-" and text[j - 1] in "eEpP"
                      and not text[i:j].lower().startswith(("0x", "-0x", "+0x")))):
        j += 1
    return j


def _lex_token(src: _Src, text: str, c: str, i: int, spaced: bool) -> _Tok:
    """The one token that starts with ``c`` at ``i`` inside an action (``text`` is ``src.text``)."""
    if c in "\"`'":
        kind, val, end = scan_quoted(text, i, lambda body, pos: _unquote(src, body, pos), src.error)
        return _Tok("string" if kind == "string" else "number", val, i, end, spaced)
    if (c.isascii() and c.isdigit()) or (c in "+-." and text[i + 1:i + 2].isdigit() and text[i + 1].isascii()):
        j = _number_end(text, i)
        return _Tok("number", _parse_number(src, text[i:j], i), i, j, spaced)
    if c == "$" or c.isalpha() or c == "_" or (c == "." and (text[i + 1:i + 2].isalpha() or text[i + 1:i + 2] == "_")):
        return _lex_name(text, c, i, spaced)
    if text.startswith(":=", i):
        return _Tok("op", ":=", i, i + 2, spaced)
    if c in "|()=,.":
        return _Tok("op", c, i, i + 1, spaced)
    raise src.error(f"unrecognized character in action: {c!r}", i)

def _lex_name(text: str, c: str, i: int, spaced: bool) -> _Tok:
    """A ``$variable``, a ``.field``, a keyword or an identifier: a run of letters, digits and ``_``."""
    n = len(text)
    j = i + 1
    while j < n and (text[j].isalnum() or text[j] == "_"):
        j += 1
    if c == "$":
        return _Tok("variable", text[i:j], i, j, spaced)
    if c == ".":
        return _Tok("field", text[i + 1:j], i, j, spaced)
    word = text[i:j]
    return _Tok("keyword" if word in _KEYWORDS else "identifier", word, i, j, spaced)


def _parse_number(src: _Src, lit: str, pos: int) -> Any:
    s = lit.replace("_", "")
    try:
        low = s.lower().lstrip("+-")
        sign = -1 if s.startswith("-") else 1
        if low.startswith("0x"):
            if "p" in low:
                return sign * float.fromhex(low)
            return sign * int(low, 16)
        if low.startswith("0o"):
            return sign * int(low[2:], 8)
        if low.startswith("0b"):
            return sign * int(low[2:], 2)
        if any(ch in low for ch in ".e") or low in ("inf", "nan"):
            return float(s)
        if len(low) > 1 and low.startswith("0"):
            return sign * int(low, 8)
        return sign * int(low, 10)
    except ValueError:
        raise src.error(f"bad number syntax: {lit!r}", pos) from None


def _lex(src: _Src, left: str, right: str) -> List[Tuple[str, Any, int]]:
    text = src.text
    items: List[Tuple[str, Any, int]] = []
    pos = 0
    while True:
        a = text.find(left, pos)
        if a < 0:
            if pos < len(text):
                items.append((_T_TEXT, text[pos:], pos))
            return items
        body = text[pos:a]
        start = a + len(left)
        if text.startswith("-", start) and start + 1 < len(text) and text[start + 1] in _WS:
            body = body.rstrip(_WS)
            start += 2
        if body:
            items.append((_T_TEXT, body, pos))
        if text.startswith("/*", start):
            end = text.find("*/", start + 2)
            if end < 0:
                raise src.error("unclosed comment", a)
            k = end + 2
            trim = False
            if k < len(text) and text[k] in _WS and text.startswith("-" + right, k + 1):
                trim = True
                k += 2
            if not text.startswith(right, k):
                raise src.error("comment ends before closing delimiter", a)
            pos = k + len(right)
        else:
            toks, pos, trim = _lex_action(src, start, a, right)
            items.append((_T_ACTION, toks, a))
        if trim:
            while pos < len(text) and text[pos] in _WS:
                pos += 1
