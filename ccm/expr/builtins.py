"""Builtin functions of the expression language.

Plain functions over plain data. Collection builtins that take a predicate
receive it as a Python callable ``pred(item, index)`` built by the compiler.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping

from ccm.expr.builtins_data import BUILTINS as DATA_BUILTINS
from ccm.expr.builtins_data import need_list as _need_list
from ccm.expr.builtins_time import b_date, b_duration, b_now, b_timezone
from ccm.expr.errors import ExprError
from ccm.expr.runtime import equal, is_number, type_name
from ccm.expr.validators import VALIDATORS, is_float, is_int
from ccm.gocompat.gotypes import GoValue
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional


def _need_str(fn: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ExprError(f"invalid argument for {fn} (type {type_name(value)})")
    return value


def _need_int(fn: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ExprError(f"invalid argument for {fn} (type {type_name(value)})")


def b_len(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))  # Go len(): bytes
    if isinstance(value, (list, tuple, Mapping)):
        return len(value)
    raise ExprError(f"invalid argument for len (type {type_name(value)})")


def b_upper(s: Any) -> str:
    return _need_str("upper", s).upper()


def b_lower(s: Any) -> str:
    return _need_str("lower", s).lower()


def b_trim(s: Any, cutset: Any = None) -> str:
    text = _need_str("trim", s)
    return text.strip() if cutset is None else text.strip(_need_str("trim", cutset))


def b_trim_prefix(s: Any, prefix: Any = " ") -> str:
    text, start = _need_str("trimPrefix", s), _need_str("trimPrefix", prefix)
    return text[len(start):] if start and text.startswith(start) else text


def b_trim_suffix(s: Any, suffix: Any = " ") -> str:
    text, end = _need_str("trimSuffix", s), _need_str("trimSuffix", suffix)
    return text[:-len(end)] if end and text.endswith(end) else text


def b_split(s: Any, sep: Any, n: Any = -1) -> List[str]:
    from ccm.gocompat.strings import split_n

    return split_n(_need_str("split", s), _need_str("split", sep), _need_int("split", n))


def b_join(items: Any, sep: Any = "") -> str:
    from ccm.gocompat.fmt import go_sprint
    joiner = _need_str("join", sep)
    return joiner.join(x if isinstance(x, str) else go_sprint(x) for x in _need_list("join", items))


def b_replace(s: Any, old: Any, new: Any, n: Any = -1) -> str:
    text, before, after = _need_str("replace", s), _need_str("replace", old), _need_str("replace", new)
    if len(after) > len(before):
        from ccm.expr import limits

        hits = text.count(before) if before else len(text) + 1
        limits.check_string_size("replace", len(text) + hits * (len(after) - len(before)))
    return text.replace(before, after, _need_int("replace", n))


def b_repeat(s: Any, n: Any) -> str:
    text, count = _need_str("repeat", s), _need_int("repeat", n)
    if count < 0:
        raise ExprError("strings: negative Repeat count")
    from ccm.expr import limits

    limits.check_string_size("repeat", len(text) * count)
    return text * count


def b_index_of(s: Any, sub: Any) -> int:
    text, part = _need_str("indexOf", s), _need_str("indexOf", sub)
    return text.encode("utf-8").find(part.encode("utf-8"))  # byte offset, like Go


def b_last_index_of(s: Any, sub: Any) -> int:
    text, part = _need_str("lastIndexOf", s), _need_str("lastIndexOf", sub)
    return text.encode("utf-8").rfind(part.encode("utf-8"))


def b_has_prefix(s: Any, prefix: Any) -> bool:
    return _need_str("hasPrefix", s).startswith(_need_str("hasPrefix", prefix))


def b_has_suffix(s: Any, suffix: Any) -> bool:
    return _need_str("hasSuffix", s).endswith(_need_str("hasSuffix", suffix))


def b_abs(n: Any) -> Any:
    if not is_number(n):
        raise ExprError(f"invalid argument for abs (type {type_name(n)})")
    return abs(n)


def b_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ExprError("invalid operation: int(bool)")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ExprError(f"cannot convert {value} to int")
        return int(value)
    if isinstance(value, str):
        if not is_int(value):  # Go's Atoi: no spaces, no underscores
            raise ExprError(f'strconv.Atoi: parsing "{value}": invalid syntax')
        return int(value, 10)
    raise ExprError(f"invalid operation: int({type_name(value)})")


def b_float(value: Any) -> float:
    if isinstance(value, bool):
        raise ExprError("invalid operation: float(bool)")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if not is_float(value):
            raise ExprError(f'strconv.ParseFloat: parsing "{value}": invalid syntax')
        if "x" in value.lower():
            return float.fromhex(value)
        return float(value)
    raise ExprError(f"invalid operation: float({type_name(value)})")


def b_string(value: Any) -> str:
    from ccm.gocompat.fmt import go_sprint
    return go_sprint(value)


def _kind(value: Any) -> str:
    """Go reflect.Kind name, as used in some builtin error messages."""
    if isinstance(value, (list, tuple)):
        return "slice"
    if isinstance(value, float):
        return "float64"
    return "invalid" if value is None else type_name(value)


def b_keys(m: Any) -> List[Any]:
    if not isinstance(m, Mapping):
        raise ExprError(f"cannot get keys from {_kind(m)}")
    return sorted(m, key=str)


def b_values(m: Any) -> List[Any]:
    if not isinstance(m, Mapping):
        raise ExprError(f"cannot get values from {_kind(m)}")
    return [m[k] for k in sorted(m, key=str)]


def b_first(items: Any) -> Any:
    items = _need_list("first", items)
    return items[0] if items else None


def b_last(items: Any) -> Any:
    items = _need_list("last", items)
    return items[-1] if items else None


def b_reverse(items: Any) -> List[Any]:
    return list(reversed(_need_list("reverse", items)))


def b_uniq(items: Any) -> List[Any]:
    out: List[Any] = []
    for item in _need_list("uniq", items):
        if not any(equal(item, seen) for seen in out):
            out.append(item)
    return out


def b_concat(*lists: Any) -> List[Any]:
    out: List[Any] = []
    for items in lists:
        out.extend(_need_list("concat", items))
    return out


def b_flatten(items: Any) -> List[Any]:
    out: List[Any] = []
    for item in _need_list("flatten", items):
        if isinstance(item, (list, tuple)):
            out.extend(b_flatten(item))
        else:
            out.append(item)
    return out


def b_sort(items: Any, order: Any = "asc") -> List[Any]:
    items = _need_list("sort", items)
    try:
        return sorted(items, reverse=(order == "desc"))
    except TypeError:
        raise ExprError("sort: cannot compare mixed types") from None


def _numbers_of(fn: str, items: Any) -> List[Any]:
    values = _need_list(fn, items)
    for v in values:
        if not is_number(v):
            raise ExprError(f"invalid argument for {fn} (type {type_name(v)})")
    return values


def b_max(*args: Any) -> Any:
    one_list = len(args) == 1 and isinstance(args[0], (list, tuple))
    values = _numbers_of("max", args[0] if one_list else list(args))
    if not values:
        raise ExprError("not enough arguments to call max")
    return max(values)


def b_min(*args: Any) -> Any:
    one_list = len(args) == 1 and isinstance(args[0], (list, tuple))
    values = _numbers_of("min", args[0] if one_list else list(args))
    if not values:
        raise ExprError("not enough arguments to call min")
    return min(values)


def b_sum(items: Any, pred: Optional[Callable[..., Any]] = None) -> Any:
    values = _need_list("sum", items)
    if pred is not None:
        values = [pred(v, i) for i, v in enumerate(values)]
    values = _numbers_of("sum", values)
    return sum(values) if values else 0


def b_round(n: Any) -> float:
    if not is_number(n):
        raise ExprError(f"invalid argument for round (type {type_name(n)})")
    return float(math.floor(abs(n) + 0.5) * (1 if n >= 0 else -1))


def b_ceil(n: Any) -> float:
    if not is_number(n):
        raise ExprError(f"invalid argument for ceil (type {type_name(n)})")
    return float(math.ceil(n))


def b_floor(n: Any) -> float:
    if not is_number(n):
        raise ExprError(f"invalid argument for floor (type {type_name(n)})")
    return float(math.floor(n))


def b_type(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, GoValue) and value.GO_KIND != "ptr":
        return value.GO_TYPE   # a named Go type: time.Time, time.Duration, time.Month
    return "unknown"


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None or not isinstance(key, (int, float)):
        raise ExprError(f"json: unsupported map key type {type_name(key)}")
    from ccm.gocompat.fmt import go_sprint
    return go_sprint(key)


def b_to_json(value: Any) -> str:
    """``json.MarshalIndent(v, "", "  ")``: sorted keys, Go number and string forms."""
    from ccm.gocompat import json as gojson
    try:
        return gojson.dumps(value, indent=2, key=_json_key, default=gojson.go_default)
    except ValueError as err:
        raise ExprError(str(err)) from None


def b_from_json(text: Any) -> Any:
    text = _need_str("fromJSON", text)
    try:
        return json.loads(text, parse_int=float)
    except ValueError as err:
        raise ExprError(f"fromJSON: {err}") from None


from ccm.expr.builtins_predicates import (  # noqa: E402 - after the helpers they share
    b_all, b_any, b_count, b_filter, b_find, b_find_index, b_find_last, b_find_last_index, b_group_by, b_map,
    b_none, b_one, b_reduce, b_sort_by,
)


BUILTINS: Dict[str, Callable[..., Any]] = {
    "len": b_len, "upper": b_upper, "lower": b_lower, "trim": b_trim,
    "trimPrefix": b_trim_prefix, "trimSuffix": b_trim_suffix, "split": b_split,
    "join": b_join, "replace": b_replace, "repeat": b_repeat, "indexOf": b_index_of,
    "lastIndexOf": b_last_index_of, "hasPrefix": b_has_prefix, "hasSuffix": b_has_suffix,
    "abs": b_abs, "int": b_int, "float": b_float, "string": b_string,
    "keys": b_keys, "values": b_values, "first": b_first, "last": b_last,
    "reverse": b_reverse, "uniq": b_uniq, "concat": b_concat, "flatten": b_flatten,
    "sort": b_sort, "max": b_max, "min": b_min, "sum": b_sum,
    "round": b_round, "ceil": b_ceil, "floor": b_floor, "type": b_type,
    "toJSON": b_to_json, "fromJSON": b_from_json,
    "all": b_all, "any": b_any, "none": b_none, "one": b_one, "filter": b_filter,
    "map": b_map, "count": b_count, "find": b_find, "findIndex": b_find_index,
    "findLast": b_find_last, "findLastIndex": b_find_last_index, "groupBy": b_group_by,
    "sortBy": b_sort_by, "reduce": b_reduce,
}
BUILTINS.update(DATA_BUILTINS)
BUILTINS.update({"now": b_now, "duration": b_duration, "date": b_date, "timezone": b_timezone})
BUILTINS.update(VALIDATORS)

# builtins that always return a boolean (lets the compiler skip bool checks)
BOOLEAN_BUILTINS = frozenset({"all", "any", "none", "one", "hasPrefix", "hasSuffix"} | set(VALIDATORS))
