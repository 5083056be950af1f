"""expr-lang builtins over strings, collections and integers: ``splitAfter``, ``median``,
``take``, ``get``, ``toPairs``, ``fromPairs``, ``toBase64``, ``fromBase64`` and the
``bit*`` functions, with expr-lang v1.17's semantics and messages.

Integers are Go's 64-bit ``int``: the bit functions wrap as Go does, and a shift by more
than 63 places is refused (Go would give 0 or -1; nobody means that) rather than building a
huge number. Results are bounded by ``ccm.expr.limits``.
"""
from __future__ import annotations

from collections.abc import Mapping

from ccm.expr.errors import ExprError
from ccm.expr.runtime import _attribute, _NO_ATTR, is_number, type_name
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List

_MIN64 = -(1 << 63)


def _wrap(n: int) -> int:
    return ((n - _MIN64) % (1 << 64)) + _MIN64


def _to_int(fn: str, value: Any) -> int:
    """expr-lang's ``toInt`` for the bit functions: Go integers only."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExprError(f"cannot use {type_name(value)} as argument (type int) to call {fn}")
    return _wrap(int(value))


def need_list(fn: str, value: Any) -> List[Any]:
    """The items a collection builtin iterates: a list's, a map's values; nil is empty."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, Mapping):
        return list(value.values())
    raise ExprError(f"cannot iterate over {type_name(value)} in {fn}")


def _index(value: Any) -> int:
    """expr-lang's ``runtime.ToInt`` (numbers truncate, anything else fails)."""
    if isinstance(value, bool) or not is_number(value):
        raise ExprError(f"invalid operation: int({type_name(value)})")
    return int(value)


def b_split_after(s: Any, sep: Any, n: Any = -1) -> List[str]:
    """Go's ``strings.SplitAfterN``: each piece keeps its separator."""
    from ccm.gocompat.strings import split_after_n

    if not isinstance(s, str) or not isinstance(sep, str):
        raise ExprError(f"invalid argument for splitAfter (type {type_name(s if not isinstance(s, str) else sep)})")
    return split_after_n(s, sep, _index(n))


def _numbers(fn: str, args: Any, out: List[float], depth: int = 0) -> List[float]:
    if depth > 100:
        raise ExprError("max depth reached")
    for arg in args:
        if isinstance(arg, (list, tuple)):
            _numbers(fn, arg, out, depth + 1)
        elif is_number(arg):
            out.append(float(arg))
        else:
            raise ExprError(f"invalid argument for {fn} (type {type_name(arg)})")
    return out


def b_median(*args: Any) -> float:
    values = sorted(_numbers("median", args, []))
    n = len(values)
    if not n:
        return 0.0
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def b_mean(*args: Any) -> float:
    values = _numbers("mean", args, [])
    return sum(values) / len(values) if values else 0.0


def _kind(value: Any) -> str:
    """Go's reflect kind name, as expr-lang's messages show it."""
    if isinstance(value, (list, tuple)):
        return "slice"
    if isinstance(value, Mapping):
        return "map"
    return "invalid" if value is None else type_name(value)


def b_take(items: Any, n: Any) -> List[Any]:
    if not isinstance(items, (list, tuple)):
        raise ExprError(f"cannot take from {_kind(items)}")
    if isinstance(n, bool) or not isinstance(n, int):
        raise ExprError(f"cannot take {_kind(n)} elements")
    if n < 0:
        raise ExprError("reflect: slice index out of range")
    return list(items[:n])


def b_get(value: Any, key: Any) -> Any:
    """``get(v, i)``: the element, key or field, or nil when there is none."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        try:
            return value.get(key)
        except TypeError:   # an unhashable key is in no map
            return None
    if isinstance(key, str):
        attr = _attribute(value, key)
        if attr is not _NO_ATTR:
            return attr
    if isinstance(value, (list, tuple, str)):
        index = _index(key)
        data: Any = value.encode("utf-8") if isinstance(value, str) else value
        if index < 0:
            index += len(data)
        return data[index] if 0 <= index < len(data) else None
    return None


def _pairs_key(key: Any) -> Any:
    from ccm.gocompat.fmt import go_key_order
    return go_key_order(key)


def b_to_pairs(m: Any) -> List[Any]:
    if not isinstance(m, Mapping):
        raise ExprError(f"cannot transform {_kind(m)} to pairs")
    return [[k, m[k]] for k in sorted(m, key=_pairs_key)]


def b_from_pairs(pairs: Any) -> Dict[Any, Any]:
    from ccm.gocompat.fmt import go_sprint
    if not isinstance(pairs, (list, tuple)):
        raise ExprError(f"cannot transform {go_sprint(pairs)} from pairs")
    out: Dict[Any, Any] = {}
    for pair in pairs:
        if not isinstance(pair, (list, tuple)):
            raise ExprError(f"invalid pair {go_sprint(pair)}")
        if len(pair) != 2:
            raise ExprError(f"invalid pair length {go_sprint(pair)}")
        try:
            out[pair[0]] = pair[1]
        except TypeError:
            raise ExprError(f"cannot use {type_name(pair[0])} as a map key") from None
    return out


def b_to_base64(s: Any) -> str:
    if not isinstance(s, str):
        raise ExprError(f"cannot use {type_name(s)} as argument (type string) to call toBase64")
    import base64

    from ccm.expr import limits

    data = s.encode("utf-8")
    limits.check_string_size("toBase64", (len(data) + 2) // 3 * 4)
    return base64.b64encode(data).decode("ascii")


def b_from_base64(s: Any) -> str:
    if not isinstance(s, str):
        raise ExprError(f"cannot use {type_name(s)} as argument (type string) to call fromBase64")
    import base64
    import binascii

    text = s.replace("\r", "").replace("\n", "")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True).decode("utf-8", "replace")
    except (binascii.Error, UnicodeEncodeError):
        alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        bad = next((i for i, ch in enumerate(text) if ch not in alphabet and ch != "="), len(text) - len(text) % 4)
        raise ExprError(f"illegal base64 data at input byte {bad}") from None


def _bits(name: str, op: Callable[[int, int], int], shift: bool = False) -> Callable[[Any, Any], int]:
    def fn(x: Any, y: Any) -> int:
        a, b = _to_int(name, x), _to_int(name, y)
        if shift:
            from ccm.expr import limits

            if b < 0:
                raise ExprError(f"invalid operation: negative shift count {b} (type int)")
            if b > 63:
                raise limits.LimitError(f"{name}: shift count {b} is more than 63 (Go's int has 64 bits)")
        return _wrap(op(a, b))
    fn.__name__ = f"b_{name}"
    return fn


def b_bitnot(x: Any) -> int:
    return ~_to_int("bitnot", x)


BUILTINS: Dict[str, Callable[..., Any]] = {
    "splitAfter": b_split_after, "median": b_median, "mean": b_mean, "take": b_take, "get": b_get,
    "toPairs": b_to_pairs, "fromPairs": b_from_pairs, "toBase64": b_to_base64, "fromBase64": b_from_base64,
    "bitand": _bits("bitand", lambda a, b: a & b), "bitor": _bits("bitor", lambda a, b: a | b),
    "bitxor": _bits("bitxor", lambda a, b: a ^ b), "bitnand": _bits("bitnand", lambda a, b: a & ~b),
    "bitshl": _bits("bitshl", lambda a, b: a << b, shift=True),
    "bitshr": _bits("bitshr", lambda a, b: a >> b, shift=True),
    "bitushr": _bits("bitushr", lambda a, b: (a % (1 << 64)) >> b, shift=True),
    "bitnot": b_bitnot,
}
