"""Go's ``regexp`` (RE2 syntax) on Python's ``re``, as far as ``re`` allows.

``compile(pattern)`` translates RE2 syntax to ``re`` and refuses what RE2 refuses
(backreferences, look-arounds, atomic groups, conditionals, repeat counts over 1000) with
Go's ``error parsing regexp: ...`` message. ``find_all``, ``split``, ``replace_all`` and
``expand`` follow Go's rules for empty matches and ``$1``/``${name}`` templates (which
differ from ``re.sub``); ``quote_meta`` is ``regexp.QuoteMeta``.

Translated: ``\\z`` (``\\Z`` in ``re``), ``$`` outside multi-line mode (end of text only,
``re``'s ``$`` also matches before a final newline), flag groups in the middle of a
pattern (``a(?i)b``), ``(?<name>...)``, ``\\Q...\\E``, ``[[:alpha:]]`` classes, octal and
``\\x{...}`` escapes, ``\\b``/``\\d``/``\\w``/``\\s`` as ASCII classes.

Differences left: ``re`` backtracks (callers bound the time: ``ccm.expr.limits``); inside
a bracket ``\\D``/``\\S``/``\\W`` use Unicode classes; Unicode classes ``\\p{Greek}``,
the ungreedy flag ``(?U)`` and ``\\C`` are refused. Standard library only.
"""
from __future__ import annotations

import re
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, List, Optional, Tuple

__all__ = ["RegexpError", "compile", "find_all", "split", "replace_all", "expand", "quote_meta"]

_POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ",
          "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z",
          "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z",
          "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f"}
_PERL = {"d": "[0-9]", "D": "[^0-9]", "s": "[\\t\\n\\f\\r ]", "S": "[^\\t\\n\\f\\r ]",
         "w": "[0-9A-Za-z_]", "W": "[^0-9A-Za-z_]"}
_PERL_IN_CLASS = {"d": "0-9", "s": "\\t\\n\\f\\r ", "w": "0-9A-Za-z_"}
_SIMPLE_ESCAPES = frozenset("afnrtv")
_REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}")
_CACHE: Dict[str, "re.Pattern[str]"] = {}


class RegexpError(ValueError):
    """A pattern Go's regexp rejects (or ccm cannot run); the message is Go's style."""


def _fail(reason: str, what: str) -> RegexpError:
    return RegexpError(f"error parsing regexp: {reason}: `{what}`")


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.out: List[str] = []
        # per open group: (flags active inside it, extra ")" owed by mid-group flag changes)
        self.stack: List[List[Any]] = [[frozenset(), 0]]

    @property
    def flags(self) -> FrozenSet[str]:
        flags: FrozenSet[str] = self.stack[-1][0]
        return flags

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if c == "\\":
                self.escape()
            elif c == "[":
                self.char_class()
            elif c == "(":
                self.group()
            elif c == ")":
                self.close_group()
            elif c == "$":
                self.out.append("$" if "m" in self.flags else "\\Z")
                self.i += 1
            elif c == "{":
                self.repeat()
            else:
                self.out.append(c)
                self.i += 1
        if len(self.stack) > 1:
            raise _fail("missing closing )", p)
        self.out.append(")" * self.stack[0][1])
        return "".join(self.out)

    def repeat(self) -> None:
        m = _REPEAT.match(self.p, self.i)
        if m is None:
            self.out.append("\\{")   # a literal brace, as RE2 reads it
            self.i += 1
            return
        for number in (m.group(1), m.group(3)):
            if number and int(number) > 1000:
                raise _fail("invalid repeat count", m.group(0))
        self.out.append(m.group(0))
        self.i = m.end()

    def escape(self) -> None:
        p, i = self.p, self.i
        if i + 1 >= len(p):
            raise _fail("trailing backslash at end of expression", "")
        c = p[i + 1]
        self.i = i + 2
        if c == "z":
            self.out.append("\\Z")
        elif c in "AbB":
            self.out.append(f"(?a:\\{c})" if c in "bB" else "\\A")
        elif c in _PERL:
            self.out.append(_PERL[c])
        elif c in "pP":
            raise _fail("ccm does not support Unicode classes", p[i:i + 3])
        elif c == "C":
            raise _fail("invalid escape sequence", "\\C")
        elif c == "Q":
            end = p.find("\\E", self.i)
            end = len(p) if end < 0 else end
            self.out.append(re.escape(p[self.i:end]))
            self.i = end + 2
        elif c == "x":
            self.out.append(self.hex_escape())
        elif c in "01234567":
            self.out.append(self.octal_escape(c))
        elif c in "89":
            raise _fail("invalid escape sequence", "\\" + c)
        elif c in _SIMPLE_ESCAPES or (not c.isalnum() and c.isascii()):
            self.out.append("\\" + c)
        else:
            raise _fail("invalid escape sequence", "\\" + c)

    def hex_escape(self) -> str:
        p = self.p
        if p[self.i:self.i + 1] == "{":
            end = p.find("}", self.i)
            digits = p[self.i + 1:end] if end > 0 else ""
            if not digits or not all(ch in "0123456789abcdefABCDEF" for ch in digits) or int(digits, 16) > 0x10FFFF:
                raise _fail("invalid escape sequence", p[self.i - 2:end + 1 if end > 0 else len(p)])
            self.i = end + 1
        else:
            digits = p[self.i:self.i + 2]
            if len(digits) != 2 or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
                raise _fail("invalid escape sequence", p[self.i - 2:self.i + 2])
            self.i += 2
        return re.escape(chr(int(digits, 16)))

    def octal_escape(self, first: str) -> str:
        p = self.p
        if first != "0" and not (self.i < len(p) and "0" <= p[self.i] <= "7"):
            raise _fail("invalid escape sequence", "\\" + first)   # \1 is a backreference
        digits = first
        while len(digits) < 3 and self.i < len(p) and "0" <= p[self.i] <= "7":
            digits += p[self.i]
            self.i += 1
        return re.escape(chr(int(digits, 8)))

    def char_class(self) -> None:
        p = self.p
        start = self.i
        j = self.i + 1
        parts = ["["]
        if p[j:j + 1] == "^":
            parts.append("^")
            j += 1
        first = True
        while True:
            if j >= len(p):
                raise _fail("missing closing ]", p[start:])
            c = p[j]
            if c == "]" and not first:
                break
            first = False
            if p.startswith("[:", j):
                end = p.find(":]", j + 2)
                name = p[j + 2:end] if end > 0 else ""
                if name.startswith("^") or name not in _POSIX:
                    raise _fail("invalid character class range", p[j:end + 2 if end > 0 else len(p)])
                parts.append(_POSIX[name])
                j = end + 2
            elif c == "\\" and j + 1 < len(p):
                e = p[j + 1]
                if e in _PERL_IN_CLASS:
                    parts.append(_PERL_IN_CLASS[e])
                elif e in "pP":
                    raise _fail("ccm does not support Unicode classes", p[j:j + 3])
                elif e == "x" or e in "01234567":
                    self.i = j + 2
                    parts.append(self.hex_escape() if e == "x" else self.octal_escape(e))
                    j = self.i
                    continue
                else:
                    parts.append("\\" + e)
                j += 2
            elif c in "[&~|":
                parts.append("\\" + c)   # literal in RE2, "nested set" syntax to re
                j += 1
            else:
                parts.append(c)
                j += 1
        parts.append("]")
        self.out.append("".join(parts))
        self.i = j + 1

    def group(self) -> None:
        p, i = self.p, self.i
        if not p.startswith("(?", i):
            self.stack.append([self.flags, 0])
            self.out.append("(")
            self.i += 1
            return
        if p.startswith("(?P<", i) or (p.startswith("(?<", i) and p[i + 3:i + 4] not in ("=", "!")):
            skip = 4 if p.startswith("(?P<", i) else 3
            end = p.find(">", i)
            if end < 0:
                raise _fail("invalid named capture", p[i:])
            self.stack.append([self.flags, 0])
            self.out.append("(?P<" + p[i + skip:end] + ">")
            self.i = end + 1
            return
        m = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])").match(p, i)
        if m is None:
            raise _fail("invalid or unsupported Perl syntax", p[i:i + 3])
        on, off, closer = m.group(1), m.group(2) or "", m.group(3)
        if any(f not in "ims" for f in on + off):
            bad = next(f for f in on + off if f not in "ims")
            if bad == "U":
                raise _fail("ccm does not support the ungreedy flag", m.group(0))
            raise _fail("invalid or unsupported Perl syntax", m.group(0))
        flags = (self.flags | set(on)) - set(off)
        spec = on + (("-" + off) if off else "")
        self.i = m.end()
        if closer == ":":
            self.stack.append([frozenset(flags), 0])
            self.out.append(f"(?{spec}:" if spec else "(?:")
        else:
            # "a(?i)b": the flags hold to the end of the enclosing group
            self.stack[-1][0] = frozenset(flags)
            self.stack[-1][1] += 1
            self.out.append(f"(?{spec}:" if spec else "(?:")

    def close_group(self) -> None:
        if len(self.stack) == 1:
            raise _fail("unexpected )", self.p)
        _, owed = self.stack.pop()
        self.out.append(")" * owed + ")")
        self.i += 1


def compile(pattern: str) -> "re.Pattern[str]":   # noqa: A001 - the Go name
    """The ``re`` pattern for an RE2 ``pattern`` (cached); raises ``RegexpError``."""
    compiled = _CACHE.get(pattern)
    if compiled is not None:
        return compiled
    try:
        compiled = re.compile(_Translator(pattern).run())
    except re.error as err:
        raise _fail(str(err), pattern) from None
    except RecursionError:
        raise _fail("expression nests too deeply", pattern) from None
    if len(_CACHE) > 256:
        _CACHE.clear()
    _CACHE[pattern] = compiled
    return compiled


def _matches(rx: "re.Pattern[str]", s: str, n: int) -> List["re.Match[str]"]:
    """Go's ``allMatches``: an empty match right after the previous match is skipped."""
    if n < 0:
        n = len(s) + 1
    out: List["re.Match[str]"] = []
    pos, prev_end = 0, -1
    while len(out) < n and pos <= len(s):
        m = rx.search(s, pos)
        if m is None:
            break
        accept = True
        if m.end() == pos:
            accept = m.start() != prev_end
            pos += 1
        else:
            pos = m.end()
        prev_end = m.end()
        if accept:
            out.append(m)
    return out


def find_all(rx: "re.Pattern[str]", s: str, n: int) -> List[str]:
    """``FindAllString(s, n)``; ``n < 0`` means all."""
    return [m.group(0) for m in _matches(rx, s, n)]


def split(rx: "re.Pattern[str]", s: str, n: int) -> List[str]:
    """``Regexp.Split(s, n)``."""
    if n == 0:
        return []
    if rx.pattern and s == "":
        return [""]
    out: List[str] = []
    beg = end = 0
    for m in _matches(rx, s, n):
        if n > 0 and len(out) == n - 1:
            break
        end = m.start()
        if m.end() != 0:
            out.append(s[beg:end])
        beg = m.end()
    if end != len(s):
        out.append(s[beg:])
    return out


def _extract(template: str) -> Optional[Tuple[str, int, str]]:
    """(name, number or -1, rest) of a ``name`` or ``{name}`` after a ``$``."""
    brace = template[:1] == "{"
    body = template[1:] if brace else template
    i = 0
    while i < len(body) and (body[i].isalnum() or body[i] == "_"):
        i += 1
    if i == 0:
        return None
    name = body[:i]
    if brace:
        if body[i:i + 1] != "}":
            return None
        i += 1
    num = int(name) if name.isdigit() and name.isascii() and len(name) < 9 else -1
    if name[0] == "0" and len(name) > 1:
        num = -1
    return name, num, body[i:]


def expand(rx: "re.Pattern[str]", template: str, m: "re.Match[str]") -> str:
    """Go's ``Regexp.Expand``: ``$1``, ``${1}``, ``$name``, ``${name}``, ``$$``; an unknown
    group is empty, and ``$1x`` names the group ``1x``."""
    out: List[str] = []
    names = rx.groupindex
    while template:
        before, dollar, after = template.partition("$")
        out.append(before)
        if not dollar:
            return "".join(out)
        template = after
        if template[:1] == "$":
            out.append("$")
            template = template[1:]
            continue
        found = _extract(template)
        if found is None:
            out.append("$")
            continue
        name, num, template = found
        index = num if num >= 0 else names.get(name, -1)
        if 0 <= index <= rx.groups and m.group(index) is not None:
            out.append(m.group(index))
    return "".join(out)


def replace_all(rx: "re.Pattern[str]", src: str, repl: str, literal: bool = False) -> str:
    """``ReplaceAllString`` (``literal``: ``ReplaceAllLiteralString``) with Go's rule for
    empty matches next to a previous match."""
    out: List[str] = []
    last_end = search = 0
    while search <= len(src):
        m = rx.search(src, search)
        if m is None:
            break
        out.append(src[last_end:m.start()])
        if m.end() > last_end or m.start() == 0:
            out.append(repl if literal else expand(rx, repl, m))
        last_end = m.end()
        if search + 1 > m.end():
            search += 1
        else:
            search = m.end()
    out.append(src[last_end:])
    return "".join(out)


def quote_meta(s: str) -> str:
    """``regexp.QuoteMeta``: a backslash before each of ``\\.+*?()|[]{}^$``."""
    return "".join("\\" + c if c in "\\.+*?()|[]{}^$" else c for c in s)
