"""Sprig's string functions (docs/strings.md, string_slice.md); case conversions are in
``sprig_case``, conversion and encoding in ``sprig_convert``.

Go counts string lengths and offsets in UTF-8 bytes (``trunc``, ``substr``, ``abbrev``);
so do we, and a cut inside a character shows as U+FFFD where Go would emit a broken byte.
Differences: goutils' ``nospace``, ``initials`` and ``wrap`` walk bytes and garble
non-ASCII text around the spaces they touch; ours work on characters.
"""
from __future__ import annotations


from ccm.gocompat.fmt import go_sprint
from ccm.gocompat.gotypes import StringList, StringMap
from ccm.gocompat.strconv import quote
from ccm.gocompat.strings import split_n
from ccm.templates.gotmpl.gofunc import Row
from ccm.templates.gotmpl.values import FuncError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, List

# unicode.IsSpace
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000"
_MIN64, _MAX64 = -(1 << 63), (1 << 63) - 1
_DIGITS = "0123456789"
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


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
        import secrets   # crypto/rand, as Sprig's

        return "".join(secrets.choice(alphabet) for _ in range(count))
    return fn


def shuffle(s: str) -> str:
    chars = list(s)
    import random

    random.shuffle(chars)
    return "".join(chars)


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
    return split_n(s, sep, n)


def strslice(v: Any) -> StringList:
    """Sprig's ``strslice``: a list's non-nil items as strings; any other value alone."""
    if isinstance(v, (list, tuple)):
        return StringList(strval(x) for x in v if x is not None)
    return StringList() if v is None else StringList([strval(v)])


def _split_map(parts: List[str]) -> StringMap:
    return StringMap((f"_{i}", p) for i, p in enumerate(parts))


ROWS = [
    # strings.md
    Row("trim", lambda s: s.strip(GO_SPACE), "s"),
    Row("trimAll", lambda a, b: b.strip(a), "ss", aliases=("trimall",)),
    Row("trimSuffix", lambda a, b: b[:-len(a)] if a and b.endswith(a) else b, "ss"),
    Row("trimPrefix", lambda a, b: b[len(a):] if b.startswith(a) else b, "ss"),
    Row("repeat", repeat, "is"),
    Row("substr", substr, "iis"),
    Row("nospace", nospace, "s"),
    Row("trunc", trunc, "is"),
    Row("abbrev", abbrev, "is"),
    Row("abbrevboth", abbrevboth, "iis"),
    Row("initials", initials, "s"),
    Row("randAlphaNum", _random(_LETTERS + _DIGITS), "i"),
    Row("randAlpha", _random(_LETTERS), "i"),
    Row("randNumeric", _random(_DIGITS), "i"),
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
    Row("shuffle", shuffle, "s"),
    Row("toString", strval, "a"),
    Row("toStrings", strslice, "a"),   # conversion.md
    # string_slice.md
    Row("join", lambda sep, v: sep.join(strslice(v)), "sa"),
    Row("splitList", lambda sep, s: StringList(go_split(s, sep)), "ss"),
    Row("split", lambda sep, s: _split_map(go_split(s, sep)), "ss"),
    Row("splitn", lambda sep, n, s: _split_map(go_split(s, sep, n)), "sis"),
    Row("sortAlpha", lambda v: StringList(sorted(strslice(v))) if isinstance(v, (list, tuple))
        else StringList([strval(v)]), "a"),
]
