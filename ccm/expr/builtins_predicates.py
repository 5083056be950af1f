"""expr-lang's builtins that take a predicate (``filter(xs, # > 1)``): the compiler hands
them a Python callable ``pred(item, index)`` (``reduce``: ``pred(item, index, acc)``)."""
from __future__ import annotations


from ccm.expr.builtins_data import need_list as _need_list
from ccm.expr.errors import ExprError
from ccm.expr.runtime import truth
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional


def b_all(items: Any, pred: Callable[..., Any]) -> bool:
    return all(truth(pred(v, i)) for i, v in enumerate(_need_list("all", items)))


def b_any(items: Any, pred: Callable[..., Any]) -> bool:
    return any(truth(pred(v, i)) for i, v in enumerate(_need_list("any", items)))


def b_none(items: Any, pred: Callable[..., Any]) -> bool:
    return not any(truth(pred(v, i)) for i, v in enumerate(_need_list("none", items)))


def b_one(items: Any, pred: Callable[..., Any]) -> bool:
    return sum(1 for i, v in enumerate(_need_list("one", items)) if truth(pred(v, i))) == 1


def b_filter(items: Any, pred: Callable[..., Any]) -> List[Any]:
    return [v for i, v in enumerate(_need_list("filter", items)) if truth(pred(v, i))]


def b_map(items: Any, pred: Callable[..., Any]) -> List[Any]:
    return [pred(v, i) for i, v in enumerate(_need_list("map", items))]


def b_count(items: Any, pred: Optional[Callable[..., Any]] = None) -> int:
    values = _need_list("count", items)
    if pred is None:
        return sum(1 for v in values if truth(v))
    return sum(1 for i, v in enumerate(values) if truth(pred(v, i)))


def b_find(items: Any, pred: Callable[..., Any]) -> Any:
    for i, v in enumerate(_need_list("find", items)):
        if truth(pred(v, i)):
            return v
    return None


def b_find_index(items: Any, pred: Callable[..., Any]) -> int:
    for i, v in enumerate(_need_list("findIndex", items)):
        if truth(pred(v, i)):
            return i
    return -1


def b_find_last(items: Any, pred: Callable[..., Any]) -> Any:
    values = _need_list("findLast", items)
    for i in range(len(values) - 1, -1, -1):
        if truth(pred(values[i], i)):
            return values[i]
    return None


def b_find_last_index(items: Any, pred: Callable[..., Any]) -> int:
    values = _need_list("findLastIndex", items)
    for i in range(len(values) - 1, -1, -1):
        if truth(pred(values[i], i)):
            return i
    return -1


def b_group_by(items: Any, pred: Callable[..., Any]) -> Dict[Any, Any]:
    out: Dict[Any, List[Any]] = {}
    for i, v in enumerate(_need_list("groupBy", items)):
        out.setdefault(pred(v, i), []).append(v)
    return out


def b_sort_by(items: Any, pred: Callable[..., Any], order: Any = "asc") -> List[Any]:
    values = _need_list("sortBy", items)
    keyed = [(pred(v, i), v) for i, v in enumerate(values)]
    try:
        keyed.sort(key=lambda kv: kv[0], reverse=(order == "desc"))
    except TypeError:
        raise ExprError("sortBy: cannot compare mixed types") from None
    return [v for _, v in keyed]


def b_reduce(items: Any, pred: Callable[..., Any], initial: Any = None) -> Any:
    values = _need_list("reduce", items)
    if initial is None:
        if not values:
            raise ExprError("reduce of empty array with no initial value")
        acc, start = values[0], 1
    else:
        acc, start = initial, 0
    for i in range(start, len(values)):
        acc = pred(values[i], i, acc)
    return acc
