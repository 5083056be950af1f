"""text/template's builtins (``and or not eq ... call``); ``printf`` and ``print`` are Go's
``fmt`` (``ccm.gocompat.fmt``). Sprig's functions are ``ccm.templates.gotmpl.sprig``."""
from __future__ import annotations

import urllib.parse
from ccm.gocompat.fmt import go_print, go_println, go_sprint, go_sprintf
from ccm.templates.gotmpl.values import MISSING, FuncError, _go_type, truth
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Tuple


_FuncError = FuncError

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
    less: bool = a.encode("utf-8") < b.encode("utf-8") if ka == "string" else a < b
    return less


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


_BUILTINS: Dict[str, Callable[..., Any]] = {
    "and": lambda *a: None,  # evaluated lazily by the runtime
    "or": lambda *a: None,   # evaluated lazily by the runtime
    "not": lambda a: not truth(a),
    "eq": _eq, "ne": _ne, "lt": _lt, "le": _le, "gt": _gt, "ge": _ge,
    "len": _len, "index": _index, "slice": _slice,
    "print": go_print, "printf": go_sprintf, "println": go_println,
    "html": _html_escape, "js": _js_escape, "urlquery": _urlquery, "call": _call,
}

# text/template's own function names (`ccm doc functions`; Sprig's are ``sprig.SPRIG``)
BUILTIN_NAMES = frozenset(_BUILTINS)
