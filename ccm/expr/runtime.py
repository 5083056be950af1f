"""Run-time helpers that compiled expressions call.

Each helper implements one expr-lang operation on plain Python data with expr
semantics (nil member access errors, negative indexes, integer-only ``%``,
float ``/``...) and raises ``ExprError`` with upstream's wording.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import lru_cache

from ccm.expr.errors import ExprError
from ccm.gocompat.gotypes import GoValue
from ccm.gocompat.gotypes import type_name as go_type_name
from ccm.gocompat.reflect import member
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, List, Tuple


def type_name(value: Any) -> str:
    """Go's name of a value's type, for error messages (``int``, ``[]interface {}`` ...)."""
    return go_type_name(value)


_NUMERIC = frozenset({int, float})


def is_number(value: Any) -> bool:
    if type(value) in _NUMERIC:
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def truth(value: Any) -> bool:
    if value is True or value is False:
        return value
    raise ExprError(f"expected bool, but got {type_name(value)}")


def variable(env: Mapping[str, Any], name: str) -> Any:
    try:
        return env[name]
    except KeyError:
        raise ExprError(f"unknown name {name}") from None


def let_check(env: Mapping[str, Any], names: Tuple[Any, ...]) -> None:
    """A ``let`` may not shadow a variable or function of the environment (expr-lang
    refuses that when compiling against the environment; ours is known at run time)."""
    for name in names:
        if name in env:
            raise ExprError(f"cannot redeclare {name}")


def function(env: Mapping[str, Any], name: str) -> Callable[..., Any]:
    fn = env.get(name) if isinstance(env, Mapping) else None
    if fn is None or not callable(fn):
        raise ExprError(f"unknown function {name}")
    found: Callable[..., Any] = fn
    return found


def fetch(obj: Any, key: Any) -> Any:
    """``obj[key]``: map key (missing -> nil), list/string index, object field."""
    if type(obj) is dict:
        return obj.get(key) if _hashable(key) else _bad_key(obj, key)
    if obj is None:
        raise ExprError(f"cannot fetch {_key_text(key)} from <nil>")
    if isinstance(obj, Mapping):
        if not _hashable(key):
            return _bad_key(obj, key)
        try:
            return obj[key]
        except KeyError:
            return None
    if isinstance(obj, (list, tuple, str)):
        if isinstance(key, str):
            value = _attribute(obj, key)
            if value is not _NO_ATTR:
                return value
        if isinstance(key, bool) or not isinstance(key, (int, float)):
            raise ExprError(f"cannot fetch {_key_text(key)} from {type_name(obj)}")
        if isinstance(key, float):
            if not key.is_integer():
                raise ExprError(f"non-integer index {key}")
            key = int(key)
        length = len(obj)
        index = key + length if key < 0 else key
        if index < 0 or index >= length:
            raise ExprError(f"index out of range: {key} (array length is {length})")
        return obj[index]
    if isinstance(key, str):
        value = _attribute(obj, key)
        if value is not _NO_ATTR:
            return value
    raise ExprError(f"cannot fetch {_key_text(key)} from {type_name(obj)}")


def _hashable(key: Any) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def _bad_key(obj: Any, key: Any) -> Any:
    raise ExprError(f"cannot use {type_name(key)} as a map key")


def _key_text(key: Any) -> str:
    from ccm.gocompat.fmt import go_sprint
    return go_sprint(key)


def slice_of(obj: Any, lo: Any, hi: Any) -> Any:
    if obj is None:
        raise ExprError("cannot slice <nil>")
    if not isinstance(obj, (list, tuple, str)):
        raise ExprError(f"cannot slice {type_name(obj)}")
    length = len(obj)
    start = 0 if lo is None else _slice_bound(lo, length)
    end = length if hi is None else _slice_bound(hi, length)
    if start > end:
        return obj[0:0]
    return obj[start:end]


def _slice_bound(value: Any, length: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExprError(f"invalid slice index type {type_name(value)}")
    index: int = value + length if value < 0 else value
    return max(0, min(index, length))


# Plain data types expose no Python attributes or methods to expressions
# (``"{0.__class__}".format`` and friends); subclasses (e.g. a list of
# registrations with a ``PrometheusFileSD()`` method) do.
_PLAIN_TYPES = frozenset({str, int, float, bool, list, tuple, dict, bytes, bytearray, set, frozenset})


def _attribute(obj: Any, name: str) -> Any:
    if type(obj) in _PLAIN_TYPES:
        return _NO_ATTR
    return member(obj, name, _NO_ATTR)


_NO_ATTR = object()


def call_method(obj: Any, name: str, *args: Any) -> Any:
    if obj is None:
        raise ExprError(f"cannot call method {name} on <nil>")
    target: Any = None
    if isinstance(obj, Mapping):
        target = obj.get(name)
        if target is None:
            target = _attribute(obj, name)
    else:
        target = _attribute(obj, name)
    if target is None or target is _NO_ATTR or not callable(target):
        raise ExprError(f"method {name} not found on {type_name(obj)}")
    return target(*args)


# equal, the comparisons and startsWith/endsWith below return what Python's operator gives
# for the checked operands (a bool for every value expressions make), annotated ``Any`` for
# the checker: a conversion or a cast would cost every evaluation a call.
def equal(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return a is b
    ta, tb = type(a), type(b)
    if ta is tb:
        return a == b
    if ta is bool or tb is bool:
        return False
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return a == b if isinstance(a, str) and isinstance(b, str) else False


def _numbers(op: str, a: Any, b: Any) -> None:
    if not (is_number(a) and is_number(b)):
        raise ExprError(f"invalid operation: {op} (mismatched types {type_name(a)} and {type_name(b)})")


def _time_op(name: str, a: Any, b: Any) -> Any:
    """A time/duration operation (``ccm.expr.builtins_time``), or None for other operands."""
    if not (isinstance(a, GoValue) or isinstance(b, GoValue)):
        return None
    from ccm.expr import builtins_time
    ops = {"add": builtins_time.add, "sub": builtins_time.sub, "mul": builtins_time.mul}
    return ops[name](a, b)


def add(a: Any, b: Any) -> Any:
    if (is_number(a) and is_number(b)) or (isinstance(a, str) and isinstance(b, str)):
        return a + b
    if isinstance(a, list) and isinstance(b, list):
        return a + b
    result = _time_op("add", a, b)
    if result is not None:
        return result
    raise ExprError(f"invalid operation: + (mismatched types {type_name(a)} and {type_name(b)})")


def sub(a: Any, b: Any) -> Any:
    if not (is_number(a) and is_number(b)):
        result = _time_op("sub", a, b)
        if result is not None:
            return result
    _numbers("-", a, b)
    return a - b


def mul(a: Any, b: Any) -> Any:
    if not (is_number(a) and is_number(b)):
        result = _time_op("mul", a, b)
        if result is not None:
            return result
    _numbers("*", a, b)
    return a * b


def div(a: Any, b: Any) -> float:
    _numbers("/", a, b)
    x, y = float(a), float(b)
    if y == 0.0:
        if x == 0.0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def mod(a: Any, b: Any) -> int:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, int) or not isinstance(b, int):
        raise ExprError(f"invalid operation: % (mismatched types {type_name(a)} and {type_name(b)})")
    if b == 0:
        raise ExprError("integer divide by zero")
    r: int = abs(a) % abs(b)  # Go truncates: the remainder takes the dividend's sign
    return -r if a < 0 else r


def power(a: Any, b: Any) -> float:
    _numbers("**", a, b)
    try:
        return math.pow(float(a), float(b))
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


def negate(a: Any) -> Any:
    if not is_number(a):
        raise ExprError(f"invalid operation: - (mismatched types {type_name(a)})")
    return -a


def plus(a: Any) -> Any:
    if not is_number(a):
        raise ExprError(f"invalid operation: + (mismatched types {type_name(a)})")
    return a


def compare_error(op: str, a: Any, b: Any) -> ExprError:
    return ExprError(f"invalid operation: {op} (mismatched types {type_name(a)} and {type_name(b)})")


def less(a: Any, b: Any) -> Any:
    _ordered("<", a, b)
    return a < b


def greater(a: Any, b: Any) -> Any:
    _ordered(">", a, b)
    return a > b


def less_eq(a: Any, b: Any) -> Any:
    _ordered("<=", a, b)
    return a <= b


def greater_eq(a: Any, b: Any) -> Any:
    _ordered(">=", a, b)
    return a >= b


def _ordered(op: str, a: Any, b: Any) -> None:
    if is_number(a) and is_number(b):
        return
    if isinstance(a, str) and isinstance(b, str):
        return
    if isinstance(a, GoValue) and type(a) is type(b) and a.GO_TYPE in ("time.Time", "time.Duration"):
        return   # times compare with times, durations with durations
    raise compare_error(op, a, b)


def contains_in(item: Any, container: Any) -> bool:
    """``item in container``: list membership or map key."""
    if isinstance(container, Mapping):
        try:
            return item in container
        except TypeError:
            return False
    if isinstance(container, (list, tuple)):
        return any(equal(item, x) for x in container)
    if container is None:
        return False
    raise ExprError(f"operator \"in\" not defined on {type_name(container)}")


def _strings(op: str, a: Any, b: Any) -> None:
    if not (isinstance(a, str) and isinstance(b, str)):
        raise ExprError(f"invalid operation: {op} (mismatched types {type_name(a)} and {type_name(b)})")


def str_contains(a: Any, b: Any) -> bool:
    _strings("contains", a, b)
    return b in a


def starts_with(a: Any, b: Any) -> Any:
    _strings("startsWith", a, b)
    return a.startswith(b)


def ends_with(a: Any, b: Any) -> Any:
    _strings("endsWith", a, b)
    return a.endswith(b)


@lru_cache(maxsize=512)
def regex(pattern: str) -> "re.Pattern[str]":
    from ccm.expr import limits

    try:
        compiled = re.compile(pattern)
    except re.error as err:
        raise ExprError(f"error parsing regexp: {err}: `{pattern}`") from None
    limits.check_pattern(pattern)
    return compiled


def matches(a: Any, b: Any) -> bool:
    from ccm.expr import limits

    _strings("matches", a, b)
    return limits.bounded_search(regex(b), a) is not None


def int_range(a: Any, b: Any) -> List[Any]:
    for v in (a, b):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ExprError(f"invalid operation: .. (mismatched types {type_name(a)} and {type_name(b)})")
    from ccm.expr import limits

    limits.check_items("..", b - a + 1)
    return list(range(a, b + 1))


def elvis(a: Any, b: Any) -> Any:
    """``a ?: b``: ``b`` when ``a`` is nil or a zero value."""
    if a is None or a is False or a == "" or (is_number(a) and a == 0) or (isinstance(a, (list, dict)) and not a):
        return b
    return a


def translate_exception(err: BaseException) -> str:
    """Turn a stray Python exception from a helper or function into a message."""
    text = str(err)
    m = re.match(r"'(.+)' not supported between instances of '(\w+)' and '(\w+)'", text)
    if m:
        names = {"str": "string", "int": "int", "float": "float64", "NoneType": "<nil>",
                 "list": "[]interface {}", "dict": "map[string]interface {}", "bool": "bool",
                 "GoTime": "time.Time", "Duration": "time.Duration"}
        return (f"invalid operation: {m.group(1)} (mismatched types "
                f"{names.get(m.group(2), m.group(2))} and {names.get(m.group(3), m.group(3))})")
    return text or type(err).__name__
