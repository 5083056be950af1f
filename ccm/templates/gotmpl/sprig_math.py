"""Sprig's integer and float math (docs/math.md, mathf.md, integer_slice.md).

Integer functions convert their operands with ``cast.ToInt64`` and return Go ``int64``
(wrapping on overflow, as Go does); float functions go through ``shopspring/decimal``
(so ``addf 1.1 2.2`` is ``3.3``, and ``divf`` keeps 16 decimal places). ``until``,
``untilStep`` and ``seq`` are bounded by ccm's item limit.
"""
from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal, DivisionByZero, InvalidOperation, localcontext

from ccm.gocompat.gotypes import Int64, IntList
from ccm.templates.gotmpl.gofunc import Row
from ccm.templates.gotmpl.sprig_convert import to_float, to_int
from ccm.templates.gotmpl.sprig_strings import wrap64
from ccm.templates.gotmpl.values import FuncError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, List


def _i64(n: int) -> Int64:
    return Int64(wrap64(n))


def _add(*args: Any) -> Int64:
    return _i64(sum(to_int(a) for a in args))


def _mul(a: Any, *rest: Any) -> Int64:
    value = to_int(a)
    for b in rest:
        value = wrap64(value * to_int(b))
    return Int64(value)


def _div(a: Any, b: Any) -> Int64:
    x, y = to_int(a), to_int(b)
    if y == 0:
        raise FuncError("runtime error: integer divide by zero")
    q = abs(x) // abs(y)
    return _i64(q if (x >= 0) == (y >= 0) else -q)


def _mod(a: Any, b: Any) -> Int64:
    x, y = to_int(a), to_int(b)
    if y == 0:
        raise FuncError("runtime error: integer divide by zero")
    r = abs(x) % abs(y)
    return _i64(-r if x < 0 else r)


def _max(a: Any, *rest: Any) -> Int64:
    return Int64(max([to_int(a)] + [to_int(b) for b in rest]))


def _min(a: Any, *rest: Any) -> Int64:
    return Int64(min([to_int(a)] + [to_int(b) for b in rest]))


def _go_max(x: float, y: float) -> float:
    """``math.Max``: NaN wins, and +0 beats -0."""
    if math.isinf(x) or math.isinf(y):
        return math.inf if math.inf in (x, y) else max(x, y)
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == y == 0:
        return x if math.copysign(1, x) > 0 else y
    return max(x, y)


def _go_min(x: float, y: float) -> float:
    if math.isinf(x) or math.isinf(y):
        return -math.inf if -math.inf in (x, y) else min(x, y)
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == y == 0:
        return x if math.copysign(1, x) < 0 else y
    return min(x, y)


def _fold(fn: Callable[[float, float], float]) -> Callable[..., float]:
    def run(a: Any, *rest: Any) -> float:
        value = to_float(a)
        for b in rest:
            value = fn(value, to_float(b))
        return value
    return run


def _dec(v: Any) -> Decimal:
    f = to_float(v)
    if math.isnan(f) or math.isinf(f):
        raise FuncError(f"decimal: cannot create a Decimal from {f}")
    return Decimal(repr(f))


def _decimal_op(op: str) -> Callable[..., float]:
    """shopspring/decimal arithmetic over the operands' shortest decimal forms."""
    def run(first: Any, *rest: Any) -> float:
        value = _dec(first)
        with localcontext(Context(prec=80)):
            for b in rest:
                other = _dec(b)
                if op == "+":
                    value += other
                elif op == "-":
                    value -= other
                elif op == "*":
                    value *= other
                else:
                    value = _divide(value, other)
        return float(value)
    return run


def _divide(a: Decimal, b: Decimal) -> Decimal:
    if b == 0:
        raise FuncError("decimal division by 0")
    try:
        return (a / b).quantize(Decimal(1).scaleb(-16), rounding=ROUND_HALF_UP)
    except (DivisionByZero, InvalidOperation):
        raise FuncError("decimal division by 0") from None


def _round(a: Any, places: int, *opt: float) -> float:
    """Sprig's ``round``: ``round 123.555555 3`` is ``123.556`` (a fraction at or above
    ``roundOn``, default 0.5, rounds up)."""
    round_on = opt[0] if opt else 0.5
    value = to_float(a)
    power = math.pow(10, places)
    digit = power * value
    frac = math.modf(digit)[0]
    return (math.ceil(digit) if frac >= round_on else math.floor(digit)) / power


def until_step(start: int, stop: int, step: int) -> IntList:
    """Sprig's ``untilStep``: like Python's ``range`` (empty for a step going the wrong way)."""
    if (stop < start and step >= 0) or (stop >= start and step <= 0):
        return IntList()
    count = max(0, -((stop - start) // -step)) if step > 0 else max(0, (start - stop + (-step) - 1) // (-step))
    from ccm.expr import limits
    limits.check_items("untilStep", count)
    return IntList(range(start, stop, step))


def _until(count: int) -> IntList:
    return until_step(0, count, 1 if count >= 0 else -1)


def _seq(*params: int) -> str:
    """Like the shell's ``seq``: ``seq 5``, ``seq 0 2``, ``seq 0 2 10`` (start step end)."""
    if len(params) == 1:
        end = params[0]
        inc = -1 if end < 1 else 1
        items: List[int] = until_step(1, end + inc, inc)
    elif len(params) == 2:
        start, end = params
        step = -1 if end < start else 1
        items = until_step(start, end + step, step)
    elif len(params) == 3:
        start, step, end = params
        inc = 1
        if end < start:
            inc = -1
            if step > 0:
                return ""
        items = until_step(start, end + inc, step)
    else:
        return ""
    return " ".join(str(i) for i in items)


def _rand_int(low: int, high: int) -> int:
    if high - low <= 0:
        raise FuncError("invalid argument to Intn")
    import random

    return random.randrange(high - low) + low


ROWS = [
    # math.md
    Row("add", _add, "*a"),
    Row("add1", lambda a: _i64(to_int(a) + 1), "a"),
    Row("sub", lambda a, b: _i64(to_int(a) - to_int(b)), "aa"),
    Row("div", _div, "aa"),
    Row("mod", _mod, "aa"),
    Row("mul", _mul, "a*a"),
    Row("max", _max, "a*a", aliases=("biggest",)),
    Row("min", _min, "a*a"),
    Row("floor", lambda a: float(math.floor(to_float(a))) if math.isfinite(to_float(a)) else to_float(a), "a"),
    Row("ceil", lambda a: float(math.ceil(to_float(a))) if math.isfinite(to_float(a)) else to_float(a), "a"),
    Row("round", _round, "ai*f"),
    Row("randInt", _rand_int, "ii"),
    # mathf.md
    Row("addf", lambda *a: _decimal_op("+")(0.0, *a), "*a"),
    Row("add1f", lambda a: _decimal_op("+")(a, 1), "a"),
    Row("subf", _decimal_op("-"), "a*a"),
    Row("divf", _decimal_op("/"), "a*a"),
    Row("mulf", _decimal_op("*"), "a*a"),
    Row("maxf", _fold(_go_max), "a*a"),
    Row("minf", _fold(_go_min), "a*a"),
    # integer_slice.md
    Row("until", _until, "i"),
    Row("untilStep", until_step, "iii"),
    Row("seq", _seq, "*i"),
]
