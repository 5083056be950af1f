"""GJSON path queries over decoded JSON data (the ``lookup()`` path syntax).

Supported: dotted keys, ``\\.`` (and other ``\\x``) escapes, ``*``/``?`` key
wildcards (first matching key), numeric array indexes, ``#`` (array length),
``#.rest`` (map ``rest`` over the elements, dropping misses),
``#(query)`` (first matching element) and ``#(query)#`` (all matches) with the
operators ``== != < <= > >= % !%``. Not supported: modifiers (``@reverse``),
``|`` pipes, multipaths.
"""
from __future__ import annotations

import json
import operator
import re
from functools import lru_cache
from typing import NamedTuple

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["get"]

_MISSING = object()


class _Query(NamedTuple):
    path: Tuple["_Part", ...]  # left-hand path inside the element ("" = the element)
    op: str                    # "" = existence test
    value: Any
    all_matches: bool


class _Part(NamedTuple):
    kind: str  # "key", "count", "query"
    key: str = ""      # the key, or a regex when ``wild``
    wild: bool = False
    query: Optional[_Query] = None


def get(document: Any, path: str) -> Tuple[bool, Any]:
    """Return ``(found, value)`` for ``path`` in ``document`` (JSON text or data)."""
    if isinstance(document, (str, bytes)):
        try:
            document = json.loads(document)
        except ValueError:
            return False, None
    parts = _parse(path)
    if not parts:
        return False, None
    value = _walk(document, parts, 0)
    if value is _MISSING:
        return False, None
    return True, value


def _walk(value: Any, parts: Tuple[_Part, ...], i: int) -> Any:
    while i < len(parts):
        part = parts[i]
        if part.kind == "key":
            value = _child(value, part)
            if value is _MISSING:
                return _MISSING
        elif part.kind == "count":
            if not isinstance(value, list):
                return _MISSING
            if i + 1 == len(parts):
                return len(value)
            return _walk_each(value, parts, i + 1)
        else:
            if not isinstance(value, list):
                return _MISSING
            query = part.query
            assert query is not None
            if query.all_matches:
                matched = [item for item in value if _matches(item, query)]
                if i + 1 == len(parts):
                    return matched
                return _walk_each(matched, parts, i + 1)
            for item in value:
                if _matches(item, query):
                    value = item
                    break
            else:
                return _MISSING
        i += 1
    return value


def _walk_each(items: List[Any], parts: Tuple[_Part, ...], i: int) -> List[Any]:
    """The rest of the path from each item, leaving out the items it does not reach."""
    out = []
    for item in items:
        res = _walk(item, parts, i)
        if res is not _MISSING:
            out.append(res)
    return out


def _child(value: Any, part: _Part) -> Any:
    key = part.key
    if isinstance(value, dict):
        if part.wild:
            for name, child in value.items():
                if re.fullmatch(key, name, re.DOTALL):
                    return child
            return _MISSING
        return value.get(key, _MISSING) if key in value else _MISSING
    if isinstance(value, list) and not part.wild and (key.isascii() and key.isdigit()):
        index = int(key)
        return value[index] if index < len(value) else _MISSING
    return _MISSING


def _matches(item: Any, query: _Query) -> bool:
    if query.path:
        target = _walk(item, query.path, 0)
    else:
        target = item
    if target is _MISSING:
        return False
    op, want = query.op, query.value
    if op == "":
        return True
    if op in ("%", "!%"):
        if not isinstance(target, str) or not isinstance(want, str):
            return False
        hit = _pattern_match(target, want)
        return hit if op == "%" else not hit
    if isinstance(want, bool) or want is None:
        if op == "==":
            return target is want
        if op == "!=":
            return target is not want
        return False
    if _other_kind(target, want):
        return False
    compare = _COMPARISONS.get(op)
    return compare(target, want) if compare is not None else False


def _other_kind(target: Any, want: Any) -> bool:
    """Like gjson, a value of another kind never matches, not even with "!="."""
    if isinstance(want, str):
        return not isinstance(target, str)
    if isinstance(want, (int, float)):
        return isinstance(target, bool) or not isinstance(target, (int, float))
    return False


_COMPARISONS: Dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}

def _pattern_match(text: str, pattern: str) -> bool:
    # gjson patterns know only * and ? (with \ escapes); translate to a regex
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.fullmatch("".join(out), text, re.DOTALL) is not None


@lru_cache(maxsize=2048)
def _parse(path: str) -> Tuple[_Part, ...]:
    parts: List[_Part] = []
    i, n = 0, len(path)
    while i < n:
        if path.startswith("#(", i):
            end = _query_end(path, i + 1)
            if end < 0:
                return ()
            inner = path[i + 2:end]
            i = end + 1
            all_matches = i < n and path[i] == "#"
            if all_matches:
                i += 1
            query = _parse_query(inner, all_matches)
            if query is None:
                return ()
            parts.append(_Part("query", query=query))
        elif path[i] == "#" and (i + 1 == n or path[i + 1] == "."):
            parts.append(_Part("count"))
            i += 1
        else:
            plain: List[str] = []
            regex: List[str] = []
            wild = False
            while i < n and path[i] != ".":
                ch = path[i]
                if ch == "\\" and i + 1 < n:
                    plain.append(path[i + 1])
                    regex.append(re.escape(path[i + 1]))
                    i += 2
                    continue
                if ch in "*?":
                    wild = True
                    regex.append(".*" if ch == "*" else ".")
                else:
                    regex.append(re.escape(ch))
                plain.append(ch)
                i += 1
            text = "".join(regex) if wild else "".join(plain)
            parts.append(_Part("key", key=text, wild=wild))
        if i < n:
            if path[i] != ".":
                return ()
            i += 1
            if i == n:
                return ()
    return tuple(parts)


def _query_end(path: str, open_index: int) -> int:
    depth = 0
    i = open_index
    quote = ""
    while i < len(path):
        ch = path[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == '"':
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


_QUERY = re.compile(r"\s*(.*?)\s*(==|!=|<=|>=|!%|<|>|%|=)\s*(.*?)\s*\Z", re.DOTALL)


def _parse_query(text: str, all_matches: bool) -> Optional[_Query]:
    match = _QUERY.match(text)
    if match is None:
        path = text.strip()
        return _Query(_parse(path) if path else (), "", None, all_matches)
    left, op, raw = match.groups()
    if op == "=":
        op = "=="
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw  # gjson accepts bare words as strings in queries
    left_parts: Tuple[_Part, ...] = ()
    if left:
        left_parts = _parse(left)
        if not left_parts:
            return None
    return _Query(left_parts, op, value, all_matches)
