"""Sprig's lists and dicts (docs/lists.md, dicts.md).

List functions take any Go slice (``[]interface{}``, ``[]string`` ...) and fail on other
kinds with Sprig's ``Cannot ... on type <kind>``; comparisons are ``reflect.DeepEqual``
(types count: ``1`` is not ``int64(1)``). Go iterates maps in random order, so upstream's
``keys``, ``values`` and ``omit`` have no fixed order; ours is sorted (a stable file).
``merge``/``mergeOverwrite`` follow mergo: nested maps merge, an existing non-empty value
is kept (or, overwriting, replaced).
"""
from __future__ import annotations

import copy
import math

from ccm.gocompat.duration import Duration
from ccm.gocompat.fmt import go_key_order
from ccm.gocompat.gotypes import GoValue, StringList, kind_name, type_name
from ccm.templates.gotmpl.gofunc import Row, returns
from ccm.templates.gotmpl.sprig_convert import to_int
from ccm.templates.gotmpl.sprig_strings import strval
from ccm.templates.gotmpl.values import FuncError, truth
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List

_NIL_DEREF = "runtime error: invalid memory address or nil pointer dereference"


def deep_equal(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` on Go-typed values."""
    if type_name(a) != type_name(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return False
    return bool(a == b)


def empty(v: Any) -> bool:
    """Sprig's ``empty``: nil, zero numbers, false, and empty strings, lists and maps
    (a struct such as a time is never empty)."""
    if isinstance(v, Duration):
        return v.ns == 0
    if isinstance(v, GoValue) and not isinstance(v, (int, list, dict)):
        return False
    return not truth(v)


_VERBS = {"push": "Cannot push on type", "prepend": "Cannot prepend on type",
          "compact": "Cannot compact on type", "chunk": "Cannot chunk type"}


def _items(fn: str, v: Any) -> List[Any]:
    """The items of a Go slice, or Sprig's error for another kind."""
    if v is None:
        raise FuncError(_NIL_DEREF)
    if not isinstance(v, (list, tuple)):
        raise FuncError(f"{_VERBS.get(fn, f'Cannot find {fn} on type')} {kind_name(v)}")
    return list(v)


def _first(v: Any) -> Any:
    items = _items("first", v)
    return items[0] if items else None


def _last(v: Any) -> Any:
    items = _items("last", v)
    return items[-1] if items else None


def _rest(v: Any) -> List[Any]:
    return _items("rest", v)[1:]


def _initial(v: Any) -> List[Any]:
    return _items("initial", v)[:-1]


def _uniq(v: Any) -> List[Any]:
    out: List[Any] = []
    for item in _items("uniq", v):
        if not any(deep_equal(item, seen) for seen in out):
            out.append(item)
    return out


def _without(v: Any, *omit: Any) -> List[Any]:
    return [x for x in _items("without", v) if not any(deep_equal(x, o) for o in omit)]


def _has(needle: Any, haystack: Any) -> bool:
    if haystack is None:
        return False
    return any(deep_equal(needle, x) for x in _items("has", haystack))


def _slice(v: Any, *indices: Any) -> Any:
    if v is None:
        raise FuncError(_NIL_DEREF)
    if not isinstance(v, (list, tuple)):
        raise FuncError(f"list should be type of slice or array but {kind_name(v)}")
    if not v:
        return None
    start = to_int(indices[0]) if indices else 0
    end = to_int(indices[1]) if len(indices) > 1 else len(v)
    if not 0 <= start <= end <= len(v):
        raise FuncError("reflect: slice index out of range")
    return type(v)(v[start:end]) if isinstance(v, GoValue) else list(v[start:end])


def _concat(*lists: Any) -> List[Any]:
    out: List[Any] = []
    for v in lists:
        if v is None:
            raise FuncError(_NIL_DEREF)
        if not isinstance(v, (list, tuple)):
            raise FuncError(f"Cannot concat type {kind_name(v)} as list")
        out.extend(v)
    return out


def _chunk(size: int, v: Any) -> List[List[Any]]:
    items = _items("chunk", v)
    if size <= 0:
        reason = "integer divide by zero" if size == 0 else "makeslice: len out of range"
        raise FuncError(f"runtime error: {reason}")
    return [items[i:i + size] for i in range(0, len(items), size)]


def _dict(*kv: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for i in range(0, len(kv), 2):
        out[strval(kv[i])] = kv[i + 1] if i + 1 < len(kv) else ""
    return out


def _keys(*dicts: Dict[str, Any]) -> StringList:
    return StringList(k for d in dicts for k in sorted(d, key=go_key_order))


def _merge_into(dst: Dict[str, Any], src: Dict[str, Any], overwrite: bool) -> None:
    for key, value in src.items():
        if value is None:
            if overwrite:
                dst[key] = None
            continue
        current = dst.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            _merge_into(current, value, overwrite)
            continue
        if key not in dst or empty(current) or (overwrite and not (isinstance(value, list) and empty(value))):
            dst[key] = value


def _merger(overwrite: bool) -> Any:
    def merge(dst: Dict[str, Any], *srcs: Dict[str, Any]) -> Dict[str, Any]:
        for src in srcs:
            _merge_into(dst, src, overwrite)
        return dst
    return merge


def _dig(*ps: Any) -> Any:
    if len(ps) < 3:
        raise FuncError("dig needs at least three arguments")
    current, default = ps[-1], ps[-2]
    for key in ps[:-2]:
        if not isinstance(key, str):
            raise FuncError(f"interface conversion: interface {{}} is {type_name(key)}, not string")
        if not isinstance(current, dict):
            got = "nil" if current is None else type_name(current)
            raise FuncError(f"interface conversion: interface {{}} is {got}, not map[string]interface {{}}")
        if key not in current:
            return default
        current = current[key]
    return current


def _deep_copy(v: Any) -> Any:
    try:
        return copy.deepcopy(v)
    except (TypeError, copy.Error, RecursionError) as err:
        raise FuncError(f"deepCopy error: {err}") from None


ROWS = [
    # lists.md
    Row("list", lambda *a: list(a), "*a", aliases=("tuple",)),
    Row("first", _first, "a", must="mustFirst"),
    Row("rest", _rest, "a", must="mustRest"),
    Row("last", _last, "a", must="mustLast"),
    Row("initial", _initial, "a", must="mustInitial"),
    Row("append", lambda v, x: _items("push", v) + [x], "aa", must="mustAppend", aliases=("push",)),
    Row("mustPush", lambda v, x: _items("push", v) + [x], "aa"),
    Row("prepend", lambda v, x: [x] + _items("prepend", v), "aa", must="mustPrepend"),
    Row("concat", _concat, "*a"),
    Row("reverse", lambda v: _items("reverse", v)[::-1], "a", must="mustReverse"),
    Row("uniq", _uniq, "a", must="mustUniq"),
    Row("without", _without, "a*a", must="mustWithout"),
    Row("has", _has, "aa", must="mustHas"),
    Row("compact", lambda v: [x for x in _items("compact", v) if not empty(x)], "a", must="mustCompact"),
    Row("slice", _slice, "a*a", must="mustSlice"),
    Row("chunk", _chunk, "ia", must="mustChunk"),
    # dicts.md
    Row("dict", _dict, "*a"),
    Row("get", lambda d, k: d[k] if k in d else "", "ms"),
    Row("set", lambda d, k, v: (d.__setitem__(k, v), d)[1], "msa"),
    Row("unset", lambda d, k: (d.pop(k, None), d)[1], "ms"),
    Row("hasKey", lambda d, k: k in d, "ms"),
    Row("pluck", lambda k, *ds: [d[k] for d in ds if k in d], "s*m"),
    Row("dig", _dig, "*a"),
    Row("merge", _merger(False), "m*m", must="mustMerge", lenient=returns("")),
    Row("mergeOverwrite", _merger(True), "m*m", must="mustMergeOverwrite", lenient=returns("")),
    Row("keys", _keys, "*m"),
    Row("pick", lambda d, *ks: {k: d[k] for k in ks if k in d}, "m*s"),
    Row("omit", lambda d, *ks: {k: v for k, v in d.items() if k not in ks}, "m*s"),
    Row("values", lambda d: [d[k] for k in sorted(d, key=go_key_order)], "m"),
    Row("deepCopy", _deep_copy, "a", must="mustDeepCopy"),
]
