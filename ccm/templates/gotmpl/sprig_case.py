"""Sprig's case functions (docs/strings.md): ``upper``, ``lower``, ``title``, ``untitle``,
``swapcase``, and huandu/xstrings' ``snakecase``, ``kebabcase``, ``camelcase``.

Go maps case rune by rune (``upper "straße"`` keeps the ß, Python would write SS); the
word splitting of ``snakecase`` follows xstrings (``HTTPServer`` -> ``http_server``,
``Bld4Floor`` -> ``bld4_floor``).
"""
from __future__ import annotations

import unicodedata

from ccm.templates.gotmpl.gofunc import Row
from ccm.templates.gotmpl.sprig_strings import GO_SPACE
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Tuple


def go_upper(s: str) -> str:
    """``strings.ToUpper``: rune by rune (``ß`` stays, where Python writes ``SS``)."""
    if s.isascii():
        return s.upper()
    return "".join(u if len(u := c.upper()) == 1 else c for c in s)


def go_lower(s: str) -> str:
    if s.isascii():
        return s.lower()
    return "".join(u if len(u := c.lower()) == 1 else c for c in s)


def _is_separator(ch: str) -> bool:
    if ch <= "\x7f":
        return not (ch.isalnum() or ch == "_")
    return not (ch.isalpha() or unicodedata.category(ch) == "Nd") and ch in GO_SPACE


def title(s: str) -> str:
    """``strings.Title``: upper-case each letter that follows a separator."""
    out, prev = [], " "
    for ch in s:
        out.append(go_upper(ch) if _is_separator(prev) else ch)
        prev = ch
    return "".join(out)


def untitle(s: str) -> str:
    """goutils ``Uncapitalize``: lower-case the first letter of each space-separated word."""
    out, nxt = [], True
    for ch in s:
        if ch in GO_SPACE:
            nxt = True
            out.append(ch)
        else:
            out.append(go_lower(ch) if nxt else ch)
            nxt = False
    return "".join(out)


def swapcase(s: str) -> str:
    """goutils ``SwapCase``: upper to lower; a lower-case letter after a space (or first)
    to title case, any other to upper case."""
    out = []
    for ch in s:
        cat = unicodedata.category(ch)
        if cat in ("Lu", "Lt"):
            out.append(go_lower(ch))
        elif cat == "Ll":
            out.append(go_upper(ch))   # title case after a space: the same letter here
        else:
            out.append(ch)
    return "".join(out)


def _word_kind(ch: str) -> str:
    if ch in "-_" or ch in GO_SPACE:
        return "connector"
    cat = unicodedata.category(ch)
    if cat.startswith("P"):
        return "punct"
    if cat == "Lu":
        return "upper"
    if cat.startswith("L") and not _cjk(ch):
        return "alpha"
    if cat.startswith("N"):
        return "number"
    return "other"


def _cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x4E00 <= o <= 0x9FCC or 0x3400 <= o <= 0x4D85 or 0x20000 <= o <= 0x2B81D


def _next_word(s: str) -> Tuple[Any, ...]:
    """(kind, word, rest) as xstrings' ``nextWord`` splits ``HTTPServer2xx``."""
    if not s:
        return "invalid", "", ""
    kind = _word_kind(s[0])
    i = 1
    if kind in ("connector", "punct", "number"):
        while i < len(s) and _word_kind(s[i]) == kind:
            i += 1
    elif kind == "upper":
        if i < len(s) and _word_kind(s[i]) == "upper":
            while i < len(s) and _word_kind(s[i]) == "upper":
                i += 1
            if i < len(s) and _word_kind(s[i]) == "alpha":
                i -= 1   # "HTTPStatus": the S starts the next word
        elif i < len(s) and _word_kind(s[i]) == "alpha":
            while i < len(s) and _word_kind(s[i]) == "alpha":
                i += 1
    elif kind == "alpha":
        while i < len(s) and _word_kind(s[i]) == "alpha":
            i += 1
    else:
        while i < len(s) and _word_kind(s[i]) not in ("connector", "alpha", "upper", "number", "punct"):
            i += 1
    return kind, s[:i], s[i:]


def _lowered(kind: str, word: str, connector: str) -> str:
    if kind not in ("upper", "connector"):
        return word
    return "".join(connector if _word_kind(c) == "connector" else go_lower(c) for c in word)


class _Words:
    """xstrings' word cursor: the current word and what follows it."""

    def __init__(self, s: str) -> None:
        self.kind, self.word, self.rest = _next_word(s)

    def advance(self) -> None:
        self.kind, self.word, self.rest = _next_word(self.rest)


def _after_word(w: _Words, out: List[str], c: str) -> None:
    """What follows a letter word: a connector, or a number glued to it (``Bld4Floor`` ->
    ``bld4_floor``, ``HTTP2xx`` -> ``http_2xx``)."""
    plain = ("connector", "punct")
    if w.kind != "number":
        if w.kind not in plain:
            out.append(c)
        return
    if not w.rest:
        return
    last = w.word
    w.advance()
    if w.kind != "alpha":
        out.append(last)
        if w.kind not in plain:
            out.append(c)
        return
    out.append(c + last)
    _lower_run(w, out, c)


def _lower_run(w: _Words, out: List[str], c: str) -> None:
    while w.kind in ("alpha", "number"):
        out.append(_lowered(w.kind, w.word, c))
        w.advance()
    if w.kind not in ("invalid", "connector", "punct"):
        out.append(c)


def _cased(s: str, c: str) -> str:
    """xstrings ``ToSnakeCase``/``ToKebabCase``: ``HTTPServer`` -> ``http_server``."""
    if not s:
        return ""
    out: List[str] = []
    w = _Words(s)
    while w.rest:
        if w.kind != "connector":
            out.append(_lowered(w.kind, w.word, c))
        prev, last = w.kind, w.word
        w.advance()
        if prev == "number":
            _lower_run(w, out, c)
        elif prev == "connector":
            out.append(_lowered(prev, last, c))
        elif prev != "punct":
            _after_word(w, out, c)
    out.append(_lowered(w.kind, w.word, c))
    return "".join(out)


def _connector(ch: str) -> bool:
    return _word_kind(ch) == "connector"


def camelcase(s: str) -> str:
    """xstrings ``ToPascalCase``: ``http_server`` -> ``HttpServer`` (other letters kept)."""
    if not s:
        return ""
    out: List[str] = []
    i, r0 = 0, ""
    while i < len(s):
        r0, i = s[i], i + 1
        if not _connector(r0):
            r0 = go_upper(r0)
            break
        out.append(r0)
    if i >= len(s):
        return "".join(out) + r0   # (a string of connectors gets its last one twice, as in Go)
    while i < len(s):
        r1, r0, i = r0, s[i], i + 1
        if _connector(r0) and _connector(r1):
            out.append(r1)
            continue
        if _connector(r1):
            r0 = go_upper(r0)
        else:
            out.append(r1)
    out.append(r0)
    return "".join(out)


ROWS = [
    # strings.md
    Row("upper", go_upper, "s"),
    Row("lower", go_lower, "s"),
    Row("title", title, "s"),
    Row("untitle", untitle, "s"),
    Row("snakecase", lambda s: _cased(s, "_"), "s"),
    Row("camelcase", camelcase, "s"),
    Row("kebabcase", lambda s: _cased(s, "-"), "s"),
    Row("swapcase", swapcase, "s"),
]
