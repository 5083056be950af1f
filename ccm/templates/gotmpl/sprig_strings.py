"""Sprig's string functions (docs/strings.md, string_slice.md, conversion.md, encoding.md).

Go counts string lengths and offsets in UTF-8 bytes (``trunc``, ``substr``, ``abbrev``);
so do we, and a cut inside a character shows as U+FFFD where Go would emit a broken byte.
Differences: goutils' ``nospace``, ``initials`` and ``wrap`` walk bytes and garble
non-ASCII text around the spaces they touch; ours work on characters.
"""
from __future__ import annotations

import base64
import binascii
import random
import secrets
import string as _string
import unicodedata
from typing import Any, Callable, List

from ccm.gocompat.fmt import go_sprint
from ccm.gocompat.gotypes import Int64, StringList, StringMap
from ccm.gocompat.strconv import atoi, parse_float, parse_int, quote
from ccm.templates.gotmpl.gofunc import Row
from ccm.templates.gotmpl.values import FuncError

# unicode.IsSpace
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000"
_MIN64, _MAX64 = -(1 << 63), (1 << 63) - 1


def strval(v: Any) -> str:
    """Sprig's ``strval``: strings as they are, everything else as ``fmt`` prints it."""
    return v if isinstance(v, str) else go_sprint(v)


def wrap64(n: int) -> int:
    """An integer wrapped to int64, as Go's arithmetic overflows."""
    return ((n - _MIN64) % (1 << 64)) + _MIN64


def _cut(s: str, start: int, end: int) -> str:
    return s.encode("utf-8")[start:end].decode("utf-8", "replace")


def _blen(s: str) -> int:
    return len(s.encode("utf-8"))


def _limit(func: str, size: int) -> None:
    from ccm.expr import limits
    limits.check_string_size(func, size)


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


def _abbreviate(s: str, offset: int, width: int) -> str:
    """goutils ``AbbreviateFull`` (byte offsets)."""
    size = _blen(s)
    if s == "" or size <= width:
        return s
    offset = min(offset, size)
    if size - offset < width - 3:
        offset = size - (width - 3)
    if offset <= 4:
        return _cut(s, 0, width - 3) + "..."
    if width < 7:
        return ""
    if offset + width - 3 < size:
        return "..." + _abbreviate(_cut(s, offset, size), 0, width - 3)
    return "..." + _cut(s, size - (width - 3), size)


def abbrev(width: int, s: str) -> str:
    return s if width < 4 else _abbreviate(s, 0, width)


def abbrevboth(left: int, right: int, s: str) -> str:
    if right < 4 or (left > 0 and right < 7):
        return s
    return _abbreviate(s, left, right)


def trunc(c: int, s: str) -> str:
    size = _blen(s)
    if c < 0 and size + c > 0:
        return _cut(s, size + c, size)
    if c >= 0 and size > c:
        return _cut(s, 0, c)
    return s


def substr(start: int, end: int, s: str) -> str:
    """Sprig's ``substr`` (byte offsets) with Go's slice panics: ``start < 0`` means
    ``s[:end]``, an ``end`` past the text or negative means ``s[start:]``."""
    size = _blen(s)
    bounds = "runtime error: slice bounds out of range "
    if start < 0:
        if not 0 <= end <= size:
            raise FuncError(bounds + (f"[:{end}] with length {size}" if end > size else f"[:{end}]"))
        return _cut(s, 0, end)
    if end < 0 or end > size:
        if start > size:
            raise FuncError(bounds + f"[{start}:{size}]")
        return _cut(s, start, size)
    if start > end:
        raise FuncError(bounds + f"[{start}:{end}]")
    return _cut(s, start, end)


def repeat(count: int, s: str) -> str:
    if count < 0:
        raise FuncError("strings: negative Repeat count")
    _limit("repeat", len(s) * count)
    return s * count


def nospace(s: str) -> str:
    return "".join(ch for ch in s if ch not in GO_SPACE)


def initials(s: str) -> str:
    out, gap = [], True
    for ch in s:
        if ch in GO_SPACE:
            gap = True
        elif gap:
            out.append(ch)
            gap = False
    return "".join(out)


def _random(alphabet: str) -> Callable[[int], str]:
    def fn(count: int) -> str:
        if count <= 0:
            return ""
        _limit("random string", count)
        return "".join(secrets.choice(alphabet) for _ in range(count))
    return fn


def shuffle(s: str) -> str:
    chars = list(s)
    random.shuffle(chars)
    return "".join(chars)


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


def _next_word(s: str) -> tuple:
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


def camelcase(s: str) -> str:
    """xstrings ``ToPascalCase``: ``http_server`` -> ``HttpServer`` (other letters kept)."""
    if not s:
        return ""
    conn = lambda ch: _word_kind(ch) == "connector"   # noqa: E731
    out: List[str] = []
    i, r0 = 0, ""
    while i < len(s):
        r0, i = s[i], i + 1
        if not conn(r0):
            r0 = go_upper(r0)
            break
        out.append(r0)
    if i >= len(s):
        return "".join(out) + r0   # (a string of connectors gets its last one twice, as in Go)
    while i < len(s):
        r1, r0, i = r0, s[i], i + 1
        if conn(r0) and conn(r1):
            out.append(r1)
            continue
        if conn(r1):
            r0 = go_upper(r0)
        else:
            out.append(r1)
    out.append(r0)
    return "".join(out)


def wrap_custom(s: str, width: int, newline: str, long_words: bool) -> str:
    """goutils ``WrapCustom``: break at spaces before column ``width``."""
    if s == "":
        return ""
    newline = newline or "\n"
    width = max(width, 1)
    out, offset, size = [], 0, len(s)
    while size - offset > width:
        if s[offset] == " ":
            offset += 1
            continue
        space = s.rfind(" ", offset, width + offset + 1)
        if space >= offset:
            out.append(s[offset:space] + newline)
            offset = space + 1
        elif long_words:
            out.append(s[offset:offset + width] + newline)
            offset += width
        else:
            space = s.find(" ", width + offset)
            if space < 0:
                out.append(s[offset:])
                offset = size
            else:
                out.append(s[offset:space] + newline)
                offset = space + 1
    out.append(s[offset:])
    return "".join(out)


def _quote(*args: Any) -> str:
    return " ".join(quote(strval(a)) for a in args if a is not None)


def _squote(*args: Any) -> str:
    return " ".join(f"'{go_sprint(a)}'" for a in args if a is not None)


def _cat(*args: Any) -> str:
    return " ".join(go_sprint(a) for a in args if a is not None)


def indent(spaces: int, s: str) -> str:
    pad = " " * max(spaces, 0)
    _limit("indent", len(s) + len(pad) * (s.count("\n") + 1))
    return pad + s.replace("\n", "\n" + pad)


def go_split(s: str, sep: str, n: int = -1) -> List[str]:
    """``strings.SplitN`` (``n < 0``: all; ``sep == ""``: every character)."""
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if 0 < n < len(chars):
            chars = chars[:n - 1] + ["".join(chars[n - 1:])]
        return chars
    return s.split(sep) if n < 0 else s.split(sep, n - 1)


def strslice(v: Any) -> StringList:
    """Sprig's ``strslice``: a list's non-nil items as strings; any other value alone."""
    if isinstance(v, (list, tuple)):
        return StringList(strval(x) for x in v if x is not None)
    return StringList() if v is None else StringList([strval(v)])


def _split_map(parts: List[str]) -> StringMap:
    return StringMap((f"_{i}", p) for i, p in enumerate(parts))


# -- conversion (spf13/cast) ----------------------------------------------------------------

def _trim_zero_decimal(s: str) -> str:
    found_zero = False
    for i in range(len(s), 0, -1):
        c = s[i - 1]
        if c == ".":
            if found_zero:
                return s[:i - 1]
        elif c == "0":
            found_zero = True
        else:
            return s
    return s


def to_int(v: Any) -> int:
    """``cast.ToInt64``: numbers truncated, strings parsed (``0x1f``, ``017``), bools 1/0,
    anything else 0."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return wrap64(int(v))
    if isinstance(v, float):
        if v != v or not _MIN64 <= v < 2.0 ** 63:
            return _MIN64   # what amd64 gives for NaN, infinities and out-of-range floats
        return int(v)
    if isinstance(v, str):
        try:
            return parse_int(_trim_zero_decimal(v), 0)
        except ValueError:
            return 0
    return 0


def to_float(v: Any) -> float:
    """``cast.ToFloat64``."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return parse_float(v)
        except ValueError:
            return 0.0
    return 0.0


def _atoi(s: str) -> int:
    try:
        return atoi(s)
    except ValueError:
        return 0


def _to_decimal(v: Any) -> Int64:
    try:
        return Int64(parse_int(go_sprint(v), 8))
    except ValueError:
        return Int64(0)


# -- encoding -------------------------------------------------------------------------------

def _decode(decoder: Callable[[bytes], bytes], alphabet: str, quantum: int, s: str) -> str:
    """Go's ``DecodeString`` result, or its error text (Sprig returns that as the value)."""
    data = s.replace("\r", "").replace("\n", "")
    try:
        return decoder(data.encode("ascii")).decode("utf-8", "replace")
    except (binascii.Error, ValueError, UnicodeEncodeError):
        pass
    bad = next((i for i, ch in enumerate(data) if ch not in alphabet and ch != "="), None)
    if bad is None:
        pad = data.find("=")
        bad = pad if 0 <= pad < len(data) - len(data) % quantum and pad % quantum < quantum - 2 \
            else len(data) - len(data) % quantum
    return f"illegal base{64 if quantum == 4 else 32} data at input byte {bad}"


_B64 = _string.ascii_uppercase + _string.ascii_lowercase + _string.digits + "+/"
_B32 = _string.ascii_uppercase + "234567"

ROWS = [
    # strings.md
    Row("trim", lambda s: s.strip(GO_SPACE), "s"),
    Row("trimAll", lambda a, b: b.strip(a), "ss", aliases=("trimall",)),
    Row("trimSuffix", lambda a, b: b[:-len(a)] if a and b.endswith(a) else b, "ss"),
    Row("trimPrefix", lambda a, b: b[len(a):] if b.startswith(a) else b, "ss"),
    Row("upper", go_upper, "s"),
    Row("lower", go_lower, "s"),
    Row("title", title, "s"),
    Row("untitle", untitle, "s"),
    Row("repeat", repeat, "is"),
    Row("substr", substr, "iis"),
    Row("nospace", nospace, "s"),
    Row("trunc", trunc, "is"),
    Row("abbrev", abbrev, "is"),
    Row("abbrevboth", abbrevboth, "iis"),
    Row("initials", initials, "s"),
    Row("randAlphaNum", _random(_string.ascii_letters + _string.digits), "i"),
    Row("randAlpha", _random(_string.ascii_letters), "i"),
    Row("randNumeric", _random(_string.digits), "i"),
    Row("randAscii", _random("".join(chr(c) for c in range(32, 127))), "i"),
    Row("wrap", lambda n, s: wrap_custom(s, n, "", False), "is"),
    Row("wrapWith", lambda n, sep, s: wrap_custom(s, n, sep, True), "iss"),
    Row("contains", lambda sub, s: sub in s, "ss"),
    Row("hasPrefix", lambda p, s: s.startswith(p), "ss"),
    Row("hasSuffix", lambda p, s: s.endswith(p), "ss"),
    Row("quote", _quote, "*a"),
    Row("squote", _squote, "*a"),
    Row("cat", _cat, "*a"),
    Row("indent", indent, "is"),
    Row("nindent", lambda n, s: "\n" + indent(n, s), "is"),
    Row("replace", lambda old, new, s: s.replace(old, new), "sss"),
    Row("plural", lambda one, many, n: one if n == 1 else many, "ssi"),
    Row("snakecase", lambda s: _cased(s, "_"), "s"),
    Row("camelcase", camelcase, "s"),
    Row("kebabcase", lambda s: _cased(s, "-"), "s"),
    Row("swapcase", swapcase, "s"),
    Row("shuffle", shuffle, "s"),
    Row("toString", strval, "a"),
    # string_slice.md
    Row("join", lambda sep, v: sep.join(strslice(v)), "sa"),
    Row("splitList", lambda sep, s: StringList(go_split(s, sep)), "ss"),
    Row("split", lambda sep, s: _split_map(go_split(s, sep)), "ss"),
    Row("splitn", lambda sep, n, s: _split_map(go_split(s, sep, n)), "sis"),
    Row("sortAlpha", lambda v: StringList(sorted(strslice(v))) if isinstance(v, (list, tuple))
        else StringList([strval(v)]), "a"),
    # conversion.md
    Row("atoi", _atoi, "s"),
    Row("int64", lambda v: Int64(to_int(v)), "a"),
    Row("int", to_int, "a"),
    Row("float64", to_float, "a"),
    Row("toDecimal", _to_decimal, "a"),
    Row("toStrings", strslice, "a"),
    # encoding.md
    Row("b64enc", lambda s: base64.b64encode(s.encode("utf-8")).decode("ascii"), "s"),
    Row("b64dec", lambda s: _decode(lambda b: base64.b64decode(b, validate=True), _B64, 4, s), "s"),
    Row("b32enc", lambda s: base64.b32encode(s.encode("utf-8")).decode("ascii"), "s"),
    Row("b32dec", lambda s: _decode(base64.b32decode, _B32, 8, s), "s"),
]
