"""text/template's builtins (``and or not eq ... call``) and the Sprig helpers; ``printf``
and ``print`` are Go's ``fmt`` (``ccm.gocompat.fmt``)."""
from __future__ import annotations

import base64
import math
import urllib.parse

from ccm.gocompat.fmt import go_print, go_println, go_sprint, go_sprintf, is_number
from ccm.gocompat.strconv import quote
from ccm.templates.gotmpl.values import MISSING, _go_type, truth
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple


class _FuncError(Exception):
    """A builtin rejected its arguments; the message is Go's."""


def _basic_kind(v: Any) -> str:
    if v is None or v is MISSING:
        return "invalid"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "other"


def _eq(a: Any, *others: Any) -> bool:
    if not others:
        raise _FuncError("missing argument for comparison")
    ka = _basic_kind(a)
    for b in others:
        kb = _basic_kind(b)
        if ka == "invalid" or kb == "invalid":
            same = ka == kb
        elif ka != kb:
            raise _FuncError("incompatible types for comparison")
        elif ka == "other":
            if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
                raise _FuncError(f"non-comparable types {go_sprint(a)}: {_go_type(a)}, "
                                 f"{_go_type(b)}: {go_sprint(b)}")
            same = a is b or a == b
        else:
            same = a == b
        if same:
            return True
    return False


def _ne(a: Any, b: Any) -> bool:
    return not _eq(a, b)


def _lt(a: Any, b: Any) -> bool:
    ka, kb = _basic_kind(a), _basic_kind(b)
    if ka in ("invalid", "other", "bool") or kb in ("invalid", "other", "bool"):
        raise _FuncError("invalid type for comparison")
    if ka != kb:
        raise _FuncError("incompatible types for comparison")
    if ka == "string":
        return a.encode("utf-8") < b.encode("utf-8")
    return a < b


def _le(a: Any, b: Any) -> bool:
    return _lt(a, b) or _eq(a, b)


def _gt(a: Any, b: Any) -> bool:
    return not _le(a, b)


def _ge(a: Any, b: Any) -> bool:
    return not _lt(a, b)


def _len(v: Any) -> int:
    if isinstance(v, str):
        return len(v.encode("utf-8"))
    if isinstance(v, (list, tuple, dict, bytes)):
        return len(v)
    if v is None:
        raise _FuncError("len of nil pointer")
    raise _FuncError(f"len of type {_go_type(v)}")


def _index_int(x: Any, cap: int) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise _FuncError(f"cannot index slice/array with type {_go_type(x)}")
    if x < 0 or x >= cap:
        raise _FuncError(f"index out of range: {x}")
    return x


def _index(item: Any, *indexes: Any) -> Any:
    if item is None:
        raise _FuncError("index of untyped nil")
    for idx in indexes:
        if isinstance(item, dict):
            item = item.get(idx)
        elif isinstance(item, (list, tuple)):
            item = item[_index_int(idx, len(item))]
        elif isinstance(item, str):
            data = item.encode("utf-8")
            item = data[_index_int(idx, len(data))]
        elif item is None:
            raise _FuncError("index of nil pointer")
        else:
            raise _FuncError(f"can't index item of type {_go_type(item)}")
    return item


def _slice(item: Any, *indexes: Any) -> Any:
    if isinstance(item, str):
        if len(indexes) > 2:
            raise _FuncError("cannot 3-index slice a string")
        length = len(item.encode("utf-8"))
    elif isinstance(item, (list, tuple)):
        if len(indexes) > 3:
            raise _FuncError(f"too many slice indexes: {len(indexes)}")
        length = len(item)
    else:
        raise _FuncError(f"can't slice item of type {_go_type(item)}")
    idx = [0, length]
    for k, x in enumerate(indexes[:2]):
        if not isinstance(x, int) or isinstance(x, bool):
            raise _FuncError(f"cannot index slice/array with type {_go_type(x)}")
        if x < 0 or x > length:
            raise _FuncError(f"index out of range: {x}")
        idx[k] = x
    if idx[0] > idx[1]:
        raise _FuncError(f"invalid slice index: {idx[0]} > {idx[1]}")
    if isinstance(item, str):
        return item.encode("utf-8")[idx[0]:idx[1]].decode("utf-8", "replace")
    return list(item[idx[0]:idx[1]])


def _html_escape(*args: Any) -> str:
    s = _eval_args_str(args)
    return (s.replace("&", "&amp;").replace("'", "&#39;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&#34;").replace("\x00", "\ufffd"))


def _js_escape(*args: Any) -> str:
    s = _eval_args_str(args)
    out: List[str] = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch == '"':
            out.append('\\"')
        elif ch in "<>&=":
            out.append(f"\\u{ord(ch):04X}")
        elif ord(ch) < 0x20 or not ch.isprintable():
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def _urlquery(*args: Any) -> str:
    return urllib.parse.quote_plus(_eval_args_str(args), safe="")


def _eval_args_str(args: Tuple[Any, ...]) -> str:
    if len(args) == 1 and isinstance(args[0], str):
        return args[0]
    return go_print(*args)


def _call(fn: Any, *args: Any) -> Any:
    if fn is None:
        raise _FuncError("call of nil")
    if not callable(fn):
        raise _FuncError(f"non-function of type {_go_type(fn)}")
    return fn(*args)


# -- a few Sprig helpers

def _empty(v: Any) -> bool:
    return not truth(v)


def _strval(v: Any) -> str:
    return v if isinstance(v, str) else go_sprint(v)


def _go_json(v: Any, indent: Optional[str] = None) -> str:
    from ccm.gocompat import json as gojson

    def default(x: Any) -> Any:
        if x is MISSING:
            return None
        raise _FuncError(f"json: unsupported type: {_go_type(x)}")
    try:
        return gojson.dumps(v, indent=None if indent is None else len(indent), default=default)
    except ValueError as exc:
        raise _FuncError(str(exc)) from None


def _to_int64(v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    if is_number(v):
        return int(v)
    if isinstance(v, str):
        try:
            return int(float(v)) if "." in v else int(v, 10)
        except ValueError:
            return 0
    return 0


def _indent(n: int, s: str) -> str:
    pad = " " * n
    return pad + s.replace("\n", "\n" + pad)


def _sprig_default(d: Any, *given: Any) -> Any:
    if not given or _empty(given[0]):
        return d
    return given[0]


def _sprig_div(a: Any, b: Any) -> int:
    x, y = _to_int64(a), _to_int64(b)
    if y == 0:
        raise _FuncError("runtime error: integer divide by zero")
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _sprig_mod(a: Any, b: Any) -> int:
    x, y = _to_int64(a), _to_int64(b)
    if y == 0:
        raise _FuncError("runtime error: integer divide by zero")
    return x - y * _sprig_div(x, y)


def _sprig_list_arg(v: Any) -> List[Any]:
    if isinstance(v, (list, tuple)):
        return list(v)
    raise _FuncError(f"cannot find first or last on type {_go_type(v)}")


def _sprig_dict(*kv: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for i in range(0, len(kv), 2):
        out[_strval(kv[i])] = kv[i + 1] if i + 1 < len(kv) else ""
    return out


_SPRIG: Dict[str, Callable[..., Any]] = {
    "default": _sprig_default,
    "empty": _empty,
    "coalesce": lambda *a: next((x for x in a if not _empty(x)), None),
    "ternary": lambda t, f, c: t if c else f,
    "upper": lambda s: _strval(s).upper(),
    "lower": lambda s: _strval(s).lower(),
    "title": lambda s: " ".join(w[:1].upper() + w[1:] for w in _strval(s).split(" ")),
    "trim": lambda s: _strval(s).strip(" \t\n\r\v\f\u0085\u00a0"),
    "trimAll": lambda c, s: _strval(s).strip(_strval(c)),
    "trimPrefix": lambda p, s: _strval(s)[len(p):] if _strval(s).startswith(p) else _strval(s),
    "trimSuffix": lambda p, s: _strval(s)[:-len(p)] if p and _strval(s).endswith(p) else _strval(s),
    "quote": lambda *a: " ".join(quote(_strval(x)) for x in a if x is not None),
    "squote": lambda *a: " ".join("'" + _strval(x) + "'" for x in a if x is not None),
    "join": lambda sep, v: _strval(sep).join(_strval(x) for x in (v if isinstance(v, (list, tuple)) else [v])),
    "splitList": lambda sep, s: _strval(s).split(sep) if sep else list(_strval(s)),
    "contains": lambda sub, s: _strval(sub) in _strval(s),
    "hasPrefix": lambda p, s: _strval(s).startswith(_strval(p)),
    "hasSuffix": lambda p, s: _strval(s).endswith(_strval(p)),
    "replace": lambda old, new, s: _strval(s).replace(old, new),
    "repeat": lambda n, s: _strval(s) * max(_to_int64(n), 0),
    "indent": lambda n, s: _indent(_to_int64(n), _strval(s)),
    "nindent": lambda n, s: "\n" + _indent(_to_int64(n), _strval(s)),
    "toJson": lambda v: _go_json(v),
    "toPrettyJson": lambda v: _go_json(v, "  "),
    "toString": _strval,
    "list": lambda *a: list(a),
    "dict": _sprig_dict,
    "add": lambda *a: sum(_to_int64(x) for x in a),
    "add1": lambda a: _to_int64(a) + 1,
    "sub": lambda a, b: _to_int64(a) - _to_int64(b),
    "mul": lambda a, *b: math.prod([_to_int64(a)] + [_to_int64(x) for x in b]),
    "div": _sprig_div,
    "mod": _sprig_mod,
    "keys": lambda *ds: [k for d in ds for k in d],
    "sortAlpha": lambda v: sorted(_strval(x) for x in v),
    "first": lambda v: _sprig_list_arg(v)[0] if _sprig_list_arg(v) else None,
    "last": lambda v: _sprig_list_arg(v)[-1] if _sprig_list_arg(v) else None,
    "b64enc": lambda s: base64.b64encode(_strval(s).encode("utf-8")).decode("ascii"),
    "b64dec": lambda s: base64.b64decode(_strval(s).encode("ascii")).decode("utf-8", "replace"),
}

_BUILTINS: Dict[str, Callable[..., Any]] = {
    "and": lambda *a: None,  # evaluated lazily by the runtime
    "or": lambda *a: None,   # evaluated lazily by the runtime
    "not": lambda a: not truth(a),
    "eq": _eq, "ne": _ne, "lt": _lt, "le": _le, "gt": _gt, "ge": _ge,
    "len": _len, "index": _index, "slice": _slice,
    "print": go_print, "printf": go_sprintf, "println": go_println,
    "html": _html_escape, "js": _js_escape, "urlquery": _urlquery, "call": _call,
}
