"""Jet expression and statement nodes; expressions evaluate themselves against a runtime."""
from __future__ import annotations

from collections.abc import Mapping

from ccm.gocompat.fmt import go_sprint, is_number
from ccm.gocompat.reflect import member
from ccm.templates.jet.values import MISSING, _go_type, _truth
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Optional, Tuple

    from ccm.templates.jet.runtime import _Runtime


class _Node:
    pos = 0

    def eval(self, rt: "_Runtime") -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class _Lit(_Node):
    def __init__(self, value: Any, pos: int):
        self.value, self.pos = value, pos

    def eval(self, rt: "_Runtime") -> Any:
        return self.value


class _Ident(_Node):
    def __init__(self, name: str, pos: int):
        self.name, self.pos = name, pos

    def eval(self, rt: "_Runtime") -> Any:
        return rt.resolve(self.name, self.pos)


class _Ctx(_Node):
    def __init__(self, pos: int):
        self.pos = pos

    def eval(self, rt: "_Runtime") -> Any:
        return rt.ctx


def _get_member(rt: "_Runtime", base: Any, name: Any, pos: int) -> Any:
    """One field/key step; MISSING when a map lacks the key."""
    if isinstance(base, Mapping):
        return base[name] if name in base else MISSING
    if base is None or base is MISSING:
        raise rt.error(f"there is no field or method '{name}' in {_go_type(base)}", pos)
    if isinstance(name, str):
        value = member(base, name, MISSING)
        if value is not MISSING:
            return value
    raise rt.error(f"can't evaluate index {name} ({name}) in type {_go_type(base)}", pos)


class _CtxField(_Node):
    """``.a.b`` on the context: every step must exist (Jet's field node)."""

    def __init__(self, names: List[str], pos: int):
        self.names, self.pos = names, pos

    def eval(self, rt: "_Runtime") -> Any:
        cur = rt.ctx
        for name in self.names:
            nxt = _get_member(rt, cur, name, self.pos)
            if nxt is MISSING:
                raise rt.error(
                    f"there is no field or method '{name}' in {_go_type(cur)} (.{'.'.join(self.names)})",
                    self.pos)
            cur = nxt
        return cur


class _Chain(_Node):
    """``base.a.b``: a missing key is only allowed at the last step on a map."""

    def __init__(self, base: _Node, names: List[str], pos: int):
        self.base, self.names, self.pos = base, names, pos

    def eval(self, rt: "_Runtime") -> Any:
        cur = self.base.eval(rt)
        last = len(self.names) - 1
        for i, name in enumerate(self.names):
            nxt = _get_member(rt, cur, name, self.pos)
            if nxt is MISSING:
                if isinstance(cur, Mapping) and i == last:
                    return MISSING
                raise rt.error(f"there is no field or method '{name}' in {_go_type(cur)}", self.pos)
            cur = nxt
        return cur


class _Index(_Node):
    def __init__(self, base: _Node, index: _Node, pos: int):
        self.base, self.index, self.pos = base, index, pos

    def eval(self, rt: "_Runtime") -> Any:
        base = self.base.eval(rt)
        idx = self.index.eval(rt)
        if isinstance(base, Mapping):
            return base[idx] if idx in base else MISSING
        if isinstance(base, (list, tuple, str)):
            if not is_number(idx):
                raise rt.error(f"non numeric value in index expression kind {_kind(base)}", self.pos)
            i = int(idx)
            if isinstance(base, str):
                data = base.encode("utf-8")
                if 0 <= i < len(data):
                    return data[i]
                raise rt.error(f"string index out of range (index: {i}, len: {len(data)})", self.pos)
            if 0 <= i < len(base):
                return base[i]
            raise rt.error(f"{_kind(base)} index out of range (index: {i}, len: {len(base)})", self.pos)
        if base is None or base is MISSING:
            raise rt.error(f"can't index {_go_type(base)}", self.pos)
        if isinstance(idx, str):
            value = member(base, idx, MISSING)
            if value is not MISSING:
                return value
        raise rt.error(f"indexing is not supported in value type {_go_type(base)}", self.pos)


def _kind(v: Any) -> str:
    return "string" if isinstance(v, str) else "slice"


class _Slice(_Node):
    def __init__(self, base: _Node, lo: Optional[_Node], hi: Optional[_Node], pos: int):
        self.base, self.lo, self.hi, self.pos = base, lo, hi, pos

    def eval(self, rt: "_Runtime") -> Any:
        base = self.base.eval(rt)
        if not isinstance(base, (list, tuple, str)):
            raise rt.error(f"slicing is not supported in value type {_go_type(base)}", self.pos)
        length = len(base)
        lo = 0 if self.lo is None else self.lo.eval(rt)
        hi = length if self.hi is None else self.hi.eval(rt)
        if not (is_number(lo) and is_number(hi)):
            raise rt.error("non numeric value in slice expression", self.pos)
        lo, hi = int(lo), int(hi)
        if not 0 <= lo <= hi <= length:
            raise rt.error(f"slice bounds out of range [{lo}:{hi}] with length {length}", self.pos)
        return list(base[lo:hi]) if not isinstance(base, str) else base[lo:hi]


class _Hole(_Node):
    """``_`` in a piped call's arguments: the piped value goes here."""

    def __init__(self, pos: int):
        self.pos = pos

    def eval(self, rt: "_Runtime") -> Any:
        raise rt.error("'_' is only allowed as an argument in a pipeline", self.pos)


class _Call(_Node):
    def __init__(self, callee: _Node, args: List[_Node], pos: int):
        self.callee, self.args, self.pos = callee, args, pos

    def eval(self, rt: "_Runtime") -> Any:
        return rt.call(self.callee, self.args, self.pos)


class _Unary(_Node):
    def __init__(self, op: str, operand: _Node, pos: int):
        self.op, self.operand, self.pos = op, operand, pos

    def eval(self, rt: "_Runtime") -> Any:
        v = self.operand.eval(rt)
        if self.op == "!":
            return not _truth(v)
        if not is_number(v):
            raise rt.error(f"additive expression: right side is not a numeric value ({_go_type(v)})", self.pos)
        return -v if self.op == "-" else v


def _to_int(rt: "_Runtime", v: Any, pos: int) -> int:
    if isinstance(v, bool):
        return 0 if v else 1  # sic: Jet's toInt
    if is_number(v):
        return int(v)
    if isinstance(v, str):
        try:
            return int(v, 10)
        except ValueError:
            raise rt.error(f"strconv.ParseInt: parsing {v!r}: invalid syntax", pos) from None
    raise rt.error(f"type: {_go_type(v)!r} can't be converted to int64", pos)


def _to_float(rt: "_Runtime", v: Any, pos: int) -> float:
    if isinstance(v, bool):
        return 0.0 if v else 1.0
    if is_number(v):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            raise rt.error(f"strconv.ParseFloat: parsing {v!r}: invalid syntax", pos) from None
    raise rt.error(f"type: {_go_type(v)!r} can't be converted to float64", pos)


def _go_idiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_imod(a: int, b: int) -> int:
    return a - b * _go_idiv(a, b)


def _equal(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return a is b
    if a is None or b is None:
        return a is b
    if isinstance(a, bool):
        return a == _truth(b)
    if isinstance(a, int):
        return _int_equal(a, b)
    if isinstance(a, float):
        return _float_equal(a, b)
    if isinstance(a, str):
        return isinstance(b, str) and a == b
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_equal(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(_equal(a[k], b[k]) for k in a))
    return a is b or a == b


def _int_equal(a: int, b: Any) -> bool:
    if isinstance(b, str):
        try:
            return a == int(b, 10)
        except ValueError:
            return False
    if is_number(b) or isinstance(b, bool):
        return a == (int(b) if not isinstance(b, bool) else (0 if b else 1))
    return False


def _float_equal(a: float, b: Any) -> bool:
    if isinstance(b, bool):
        return a == (0.0 if b else 1.0)
    if is_number(b):
        return a == float(b)
    if isinstance(b, str):
        try:
            return a == float(b)
        except ValueError:
            return False
    return False


class _Binary(_Node):
    def __init__(self, op: str, left: _Node, right: _Node, pos: int):
        self.op, self.left, self.right, self.pos = op, left, right, pos

    def eval(self, rt: "_Runtime") -> Any:
        op = self.op
        if op == "&&":
            return _truth(self.left.eval(rt)) and _truth(self.right.eval(rt))
        if op == "||":
            return _truth(self.left.eval(rt)) or _truth(self.right.eval(rt))
        a = self.left.eval(rt)
        b = self.right.eval(rt)
        if op == "==":
            return _equal(a, b)
        if op == "!=":
            return not _equal(a, b)
        if op in ("<", ">", "<=", ">="):
            return self._compare(rt, op, a, b)
        if op in ("+", "-"):
            return self._additive(rt, op, a, b)
        return self._multiplicative(rt, op, a, b)

    def _compare(self, rt: "_Runtime", op: str, a: Any, b: Any) -> bool:
        if isinstance(a, float) or (isinstance(a, int) and not isinstance(a, bool) and isinstance(b, float)):
            x: float = float(a)
            y: float = _to_float(rt, b, self.pos)
        elif is_number(a):
            x, y = a, _to_int(rt, b, self.pos)
        else:
            raise rt.error("a non numeric value in numeric comparative expression", self.pos)
        if op == "<":
            return x < y
        if op == ">":
            return x > y
        if op == "<=":
            return x <= y
        return x >= y

    def _additive(self, rt: "_Runtime", op: str, a: Any, b: Any) -> Any:
        if a is MISSING:
            raise rt.error("left side of additive expression is invalid value", self.pos)
        if b is MISSING:
            raise rt.error("right side of additive expression is invalid value", self.pos)
        if isinstance(a, str):
            if op == "+":
                return a + go_sprint(b)
            raise rt.error("minus signal is not allowed with strings", self.pos)
        if not is_number(a):
            raise rt.error(f"additive expression: left side {_go_type(a)} is not a numeric value", self.pos)
        if isinstance(a, float) or isinstance(b, float):
            y: Any = _to_float(rt, b, self.pos)
            return float(a) + y if op == "+" else float(a) - y
        y = _to_int(rt, b, self.pos)
        return a + y if op == "+" else a - y

    def _multiplicative(self, rt: "_Runtime", op: str, a: Any, b: Any) -> Any:
        if not is_number(a):
            raise rt.error("a non numeric value in multiplicative expression", self.pos)
        if op == "/" and (b == 0 or b is None or b == "" or b is False):
            raise rt.error("division by zero", self.pos)
        if op == "%":
            y = _to_int(rt, b, self.pos)
            if y == 0:
                raise rt.error("integer divide by zero", self.pos)
            return _go_imod(int(a), y)
        if isinstance(a, float) or isinstance(b, float):
            x, yf = float(a), _to_float(rt, b, self.pos)
            return x * yf if op == "*" else x / yf
        y = _to_int(rt, b, self.pos)
        if op == "*":
            return a * y
        if y == 0:
            raise rt.error("integer divide by zero", self.pos)
        return _go_idiv(a, y)


class _Ternary(_Node):
    def __init__(self, cond: _Node, yes: _Node, no: _Node, pos: int):
        self.cond, self.yes, self.no, self.pos = cond, yes, no, pos

    def eval(self, rt: "_Runtime") -> Any:
        return self.yes.eval(rt) if _truth(self.cond.eval(rt)) else self.no.eval(rt)


class _Pipe(_Node):
    """``first | cmd | cmd``; each cmd is (callee, args or None)."""

    def __init__(self, first: _Node, cmds: List[Tuple[_Node, Optional[List[_Node]], int]], pos: int):
        self.first, self.cmds, self.pos = first, cmds, pos

    def eval(self, rt: "_Runtime") -> Any:
        value = self.first.eval(rt)
        for callee, args, pos in self.cmds:
            args = list(args or [])
            holes = [i for i, a in enumerate(args) if isinstance(a, _Hole)]
            piped = _Lit(value, pos)
            if holes:
                for i in holes:
                    args[i] = piped
            else:
                args.insert(0, piped)
            value = rt.call(callee, args, pos)
        return value


class _Text:
    def __init__(self, text: str):
        self.text = text


class _Output:
    def __init__(self, expr: _Node):
        self.expr = expr


class _Assign:
    def __init__(self, targets: List[_Node], values: List[_Node], let: bool, comma_ok: bool, pos: int):
        self.targets, self.values, self.let, self.comma_ok, self.pos = targets, values, let, comma_ok, pos


class _If:
    def __init__(self, cond: _Node, body: List[Any], orelse: Optional[List[Any]], pos: int,
                 setup: Optional[_Assign] = None):
        self.cond, self.body, self.orelse, self.pos, self.setup = cond, body, orelse, pos, setup


class _Range:
    def __init__(self, names: List[_Node], let: bool, expr: _Node, body: List[Any],
                 orelse: Optional[List[Any]], pos: int):
        self.names, self.let, self.expr, self.body, self.orelse, self.pos = names, let, expr, body, orelse, pos


class _Try:
    def __init__(self, body: List[Any], err_name: Optional[str], catch: Optional[List[Any]]):
        self.body, self.err_name, self.catch = body, err_name, catch


class _Include:
    def __init__(self, name: _Node, ctx: Optional[_Node], pos: int):
        self.name, self.ctx, self.pos = name, ctx, pos


class _Block:
    """A block definition; ``invoke`` when it is defined in the running template."""

    def __init__(self, name: str, params: List[Tuple[str, Optional[_Node]]], ctx: Optional[_Node],
                 body: List[Any], pos: int, invoke: bool):
        self.name, self.params, self.ctx, self.body, self.pos, self.invoke = name, params, ctx, body, pos, invoke


class _Yield:
    def __init__(self, name: str, args: List[Tuple[Optional[str], _Node]], ctx: Optional[_Node], pos: int):
        self.name, self.args, self.ctx, self.pos = name, args, ctx, pos
