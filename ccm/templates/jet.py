"""Jet template renderer (the CloudyKit/jet v6 language, the subset CCM uses).

What: ``render_jet(source, variables, ...)`` renders a Jet template to text.
Used by manifests' ``resources_jet_file``, the ``jet()`` expression function,
``template('x.jet')`` and the scaffold ``jet`` engine.

Guarantees: pure (no I/O except through the ``loader`` and the functions the
caller passes); output is raw (no HTML escaping, CCM renders config files);
values print as Go's ``fmt.Sprint`` does (``go_sprint``); maps are ranged in
sorted key order (Go's order is random, so any fixed order is faithful).

Supported: text, ``{* comments *}``, trim markers ``[[- `` / `` -]]``, custom
delimiters, literals (strings with Go escapes, raw strings, chars, ints,
floats, true/false/nil), identifiers, ``.`` / ``.field`` on the context,
chains ``a.b.c``, index ``x[k]``, slices ``x[a:b]``, calls ``f(a)``, method
calls on objects, ``+ - * / %`` (Jet's int/float rules), ``== != < > <= >=``,
``&& || !``, ternary, pipelines ``x | f | g: a | h(a, _)``, prefix calls
``f: a, b``, ``x := e`` / ``x = e`` / ``a, b := e1, e2`` / ``v, ok := m[k]``,
``if``/``else if``/``else``, ``range`` (all Jet forms, ``else``),
``try``/``catch``, ``include`` (through ``loader``), ``block``/``yield``
(with parameters and defaults), ``return`` (ignored), and the builtins
``len isset lower upper hasPrefix hasSuffix repeat replace split trimSpace
html url json writeJson map slice array ints raw unsafe safeHtml safeJs``.

Not: ``extends``/``import``/``content``/``exec``, Go channels, the Jet
translator. Jet's quirks are kept where they decide output: with one range
variable over a list or map the variable is the index/key and ``.`` the value;
a non-nil empty list or map is true; a missing key at the end of a chain
(``Data.nokey``) prints nothing while ``.nokey`` on the context is an error.
"""
from __future__ import annotations

import inspect
import json as _json
import urllib.parse
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ccm.model.errors import TemplateError
from ccm.templates.gofmt import (EscapeError, decode_go_escapes, go_key_order, go_sprint, go_type_name,
                                  is_number)

__all__ = ["JetError", "render_jet"]


class JetError(TemplateError):
    """A Jet template could not be parsed or rendered.

    ``template``, ``line`` and ``column`` locate the problem, ``reason`` says what
    it was; ``str()`` gives ``template: <name>:<line>:<col>: <reason>`` for parse
    errors and ``Jet Runtime Error ("<name>":<line>:<col>): <reason>`` at run time.
    """

    def __init__(self, reason: str, *, template: str = "template", line: int = 0,
                 column: int = 0, runtime: bool = False):
        self.reason = reason
        self.template = template
        self.line = line
        self.column = column
        self.runtime = runtime
        if runtime:
            text = f'Jet Runtime Error ("{template}":{line}:{column}): {reason}'
        else:
            text = f"template: {template}:{line}:{column}: {reason}"
        super().__init__(text)


class _Missing:
    """An invalid value (Go's zero ``reflect.Value``): a missing map key."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()

_WS = " \t\r\n"


def _go_type(v: Any) -> str:
    return "invalid" if v is MISSING else go_type_name(v)


def _truth(v: Any) -> bool:
    # Go's reflect IsZero: a non-nil empty slice or map is *not* zero.
    if v is None or v is MISSING:
        return False
    if isinstance(v, bool):
        return v
    if is_number(v):
        return v != 0
    if isinstance(v, str):
        return v != ""
    return True


# ---------------------------------------------------------------- lexing

class _Src:
    """The template text plus position helpers for messages."""

    def __init__(self, text: str, name: str):
        self.text = text
        self.name = name

    def where(self, pos: int) -> Tuple[int, int]:
        line = self.text.count("\n", 0, pos) + 1
        return line, pos - (self.text.rfind("\n", 0, pos) + 1) + 1

    def parse_error(self, reason: str, pos: int) -> JetError:
        line, col = self.where(pos)
        return JetError(reason, template=self.name, line=line, column=col)

    def runtime_error(self, reason: str, pos: int) -> JetError:
        line, col = self.where(pos)
        return JetError(reason, template=self.name, line=line, column=col, runtime=True)


# token kinds
_NUM, _STR, _IDENT, _FIELD, _OP = "number", "string", "identifier", "field", "operator"
_OPS2 = (":=", "==", "!=", "<=", ">=", "&&", "||")
_OPS1 = "=<>!+-*/%()[],:?|.;"


class _Tok:
    __slots__ = ("kind", "val", "pos")

    def __init__(self, kind: str, val: Any, pos: int):
        self.kind = kind
        self.val = val
        self.pos = pos

    def is_op(self, op: str) -> bool:
        return self.kind == _OP and self.val == op

    def is_ident(self, name: str) -> bool:
        return self.kind == _IDENT and self.val == name

    def __repr__(self) -> str:
        return f"{self.kind}:{self.val!r}"


def _unquote(src: _Src, body: str, pos: int) -> str:
    """Interpret Go escapes in a double-quoted string body."""
    try:
        return decode_go_escapes(body)
    except EscapeError as exc:
        if exc.sequence:
            raise src.parse_error(f"unknown escape sequence \\{exc.sequence}", pos) from None
        raise src.parse_error("invalid escape sequence in string", pos) from None


def _scan_number(text: str, i: int) -> int:
    n = len(text)
    if text.startswith(("0x", "0X"), i):
        j = i + 2
        while j < n and (text[j] in "0123456789abcdefABCDEF_"):
            j += 1
        return j
    j = i
    while j < n and ((text[j].isascii() and text[j].isdigit()) or text[j] == "_"):
        j += 1
    if j < n and text[j] == "." and j + 1 < n and (text[j + 1].isascii() and text[j + 1].isdigit()):
        j += 1
        while j < n and (text[j].isascii() and text[j].isdigit()):
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and (text[k].isascii() and text[k].isdigit()):
            j = k
            while j < n and (text[j].isascii() and text[j].isdigit()):
                j += 1
    return j


def _tokenize_action(src: _Src, start: int, open_pos: int, right: str) -> Tuple[List[_Tok], int, bool]:
    """Tokens of one action from ``start``; returns (tokens, end, trim_right)."""
    text = src.text
    n = len(text)
    i = start
    toks: List[_Tok] = []
    while True:
        if i >= n:
            raise src.parse_error("unclosed action", open_pos)
        c = text[i]
        if c == " " and text.startswith("-" + right, i + 1):  # Jet's marker is exactly " -"
            return toks, i + 2 + len(right), True
        if text.startswith(right, i):
            return toks, i + len(right), False
        if c in _WS:
            i += 1
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break
                j += 1
            if j >= n or text[j] != '"':
                raise src.parse_error("unterminated quoted string", i)
            toks.append(_Tok(_STR, _unquote(src, text[i + 1:j], i), i))
            i = j + 1
        elif c == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise src.parse_error("unterminated raw quoted string", i)
            toks.append(_Tok(_STR, text[i + 1:j], i))
            i = j + 1
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                if text[j] == "\\":
                    j += 1
                j += 1
            if j >= n:
                raise src.parse_error("unterminated character constant", i)
            body = _unquote(src, text[i + 1:j], i)
            if len(body) != 1:
                raise src.parse_error(f"malformed character constant: {text[i:j + 1]}", i)
            toks.append(_Tok(_NUM, ord(body), i))
            i = j + 1
        elif (c.isascii() and c.isdigit()):
            j = _scan_number(text, i)
            lit = text[i:j].replace("_", "")
            try:
                if lit.lower().startswith("0x"):
                    val: Any = int(lit, 16)
                elif any(ch in lit for ch in ".eE"):
                    val = float(lit)
                elif len(lit) > 1 and lit.startswith("0"):
                    val = int(lit, 8)
                else:
                    val = int(lit)
            except ValueError:
                raise src.parse_error(f"bad number syntax: {text[i:j]!r}", i) from None
            if j < n and (text[j].isalpha() or text[j] == "_"):
                raise src.parse_error(f"bad number syntax: {text[i:j + 1]!r}", i)
            toks.append(_Tok(_NUM, val, i))
            i = j
        elif c.isalpha() or c == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            toks.append(_Tok(_IDENT, text[i:j], i))
            i = j
        elif c == "." and i + 1 < n and (text[i + 1].isalpha() or text[i + 1] == "_"):
            j = i + 2
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            toks.append(_Tok(_FIELD, text[i + 1:j], i))
            i = j
        elif text[i:i + 2] in _OPS2:
            toks.append(_Tok(_OP, text[i:i + 2], i))
            i += 2
        elif c in _OPS1:
            toks.append(_Tok(_OP, c, i))
            i += 1
        else:
            raise src.parse_error(f"unrecognized character in action: {c!r}", i)


def _lex(src: _Src, left: str, right: str) -> List[Tuple[str, Any, int]]:
    """Split the template into ("text", str, pos) and ("action", tokens, pos)."""
    text = src.text
    items: List[Tuple[str, Any, int]] = []
    pos = 0
    while True:
        a = text.find(left, pos)
        c = text.find("{*", pos)
        if a < 0 and c < 0:
            if pos < len(text):
                items.append(("text", text[pos:], pos))
            return items
        if c >= 0 and (a < 0 or c < a):
            if c > pos:
                items.append(("text", text[pos:c], pos))
            end = text.find("*}", c + 2)
            if end < 0:
                raise src.parse_error("unclosed comment", c)
            pos = end + 2
            continue
        body = text[pos:a]
        start = a + len(left)
        if text.startswith("- ", start):  # Jet's marker is exactly "- "
            body = body.rstrip(_WS)
            start += 1
        if body:
            items.append(("text", body, pos))
        toks, pos, trim = _tokenize_action(src, start, a, right)
        # the closing delimiter's position locates "unexpected end of action"
        close = pos - len(right) - (1 if trim else 0)
        items.append(("action", (toks, close), a))
        if trim:
            while pos < len(text) and text[pos] in _WS:
                pos += 1


# ---------------------------------------------------------------- expressions

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
    if isinstance(name, str) and not name.startswith("_") and hasattr(base, name):
        return getattr(base, name)
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
        if isinstance(idx, str) and hasattr(base, idx) and not idx.startswith("_"):
            return getattr(base, idx)
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
        if isinstance(b, str):
            try:
                return a == int(b, 10)
            except ValueError:
                return False
        if is_number(b) or isinstance(b, bool):
            return a == (int(b) if not isinstance(b, bool) else (0 if b else 1))
        return False
    if isinstance(a, float):
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
    if isinstance(a, str):
        return isinstance(b, str) and a == b
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_equal(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(_equal(a[k], b[k]) for k in a))
    return a is b or a == b


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
            x: Any = float(a)
            y: Any = _to_float(rt, b, self.pos)
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


# ---------------------------------------------------------------- statements

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
    def __init__(self, cond: _Node, body: list, orelse: Optional[list], pos: int,
                 setup: Optional[_Assign] = None):
        self.cond, self.body, self.orelse, self.pos, self.setup = cond, body, orelse, pos, setup


class _Range:
    def __init__(self, names: List[_Node], let: bool, expr: _Node, body: list,
                 orelse: Optional[list], pos: int):
        self.names, self.let, self.expr, self.body, self.orelse, self.pos = names, let, expr, body, orelse, pos


class _Try:
    def __init__(self, body: list, err_name: Optional[str], catch: Optional[list]):
        self.body, self.err_name, self.catch = body, err_name, catch


class _Include:
    def __init__(self, name: _Node, ctx: Optional[_Node], pos: int):
        self.name, self.ctx, self.pos = name, ctx, pos


class _Block:
    """A block definition; ``invoke`` when it is defined in the running template."""

    def __init__(self, name: str, params: List[Tuple[str, Optional[_Node]]], ctx: Optional[_Node],
                 body: list, pos: int, invoke: bool):
        self.name, self.params, self.ctx, self.body, self.pos, self.invoke = name, params, ctx, body, pos, invoke


class _Yield:
    def __init__(self, name: str, args: List[Tuple[Optional[str], _Node]], ctx: Optional[_Node], pos: int):
        self.name, self.args, self.ctx, self.pos = name, args, ctx, pos


_KEYWORDS = {"if", "else", "end", "range", "try", "catch", "include", "block", "yield",
             "return", "import", "extends", "content"}


class _ExprParser:
    def __init__(self, src: _Src, toks: List[_Tok], end_pos: int):
        self.src, self.toks, self.i, self.end_pos = src, toks, 0, end_pos

    # token helpers
    def peek(self, k: int = 0) -> Optional[_Tok]:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> _Tok:
        t = self.peek()
        if t is None:
            raise self.src.parse_error("unexpected end of action", self.end_pos)
        self.i += 1
        return t

    def at_op(self, op: str) -> bool:
        t = self.peek()
        return t is not None and t.is_op(op)

    def expect_op(self, op: str, context: str) -> _Tok:
        t = self.peek()
        if t is None or not t.is_op(op):
            self.unexpected(t, context, f"'{op}'")
        return self.next()

    def unexpected(self, t: Optional[_Tok], context: str, expected: str) -> None:
        if t is None:
            raise self.src.parse_error(f"parsing {context}: unexpected end of action (expected {expected})",
                                       self.end_pos)
        raise self.src.parse_error(f"parsing {context}: unexpected token '{t.val}' (expected {expected})", t.pos)

    def done(self) -> bool:
        return self.i >= len(self.toks)

    def expect_done(self, context: str) -> None:
        if not self.done():
            t = self.peek()
            assert t is not None
            raise self.src.parse_error(f"parsing {context}: unexpected token '{t.val}' (expected end of action)",
                                       t.pos)

    # grammar
    def pipeline(self) -> _Node:
        t0 = self.peek()
        pos = t0.pos if t0 else self.end_pos
        first = self.expression()
        if self.at_op(":"):
            self.next()
            first = _Call(first, self.arg_list(), pos)
        cmds: List[Tuple[_Node, Optional[List[_Node]], int]] = []
        while self.at_op("|"):
            bar = self.next()
            callee = self.postfix(allow_call=False)
            args: Optional[List[_Node]] = None
            if self.at_op("("):
                self.next()
                args = self.call_args()
            elif self.at_op(":"):
                self.next()
                args = self.arg_list()
            cmds.append((callee, args, bar.pos))
        return _Pipe(first, cmds, pos) if cmds else first

    def arg_list(self) -> List[_Node]:
        args = [self.argument()]
        while self.at_op(","):
            self.next()
            args.append(self.argument())
        return args

    def call_args(self) -> List[_Node]:
        args: List[_Node] = []
        if self.at_op(")"):
            self.next()
            return args
        while True:
            args.append(self.argument())
            if self.at_op(","):
                self.next()
                continue
            self.expect_op(")", "call expression")
            return args

    def argument(self) -> _Node:
        t = self.peek()
        if t is not None and t.is_ident("_"):
            nxt = self.peek(1)
            if nxt is None or (nxt.kind == _OP and nxt.val in (",", ")", "|")):
                self.next()
                return _Hole(t.pos)
        return self.expression()

    def expression(self) -> _Node:
        cond = self.logical_or()
        if self.at_op("?"):
            q = self.next()
            yes = self.expression()
            self.expect_op(":", "ternary expression")
            no = self.expression()
            return _Ternary(cond, yes, no, q.pos)
        return cond

    def logical_or(self) -> _Node:
        left = self.logical_and()
        while self.at_op("||"):
            t = self.next()
            left = _Binary("||", left, self.logical_and(), t.pos)
        return left

    def logical_and(self) -> _Node:
        left = self.comparison()
        while self.at_op("&&"):
            t = self.next()
            left = _Binary("&&", left, self.comparison(), t.pos)
        return left

    def comparison(self) -> _Node:
        left = self.additive()
        while True:
            t = self.peek()
            if t is not None and t.kind == _OP and t.val in ("==", "!=", "<", ">", "<=", ">="):
                self.next()
                left = _Binary(t.val, left, self.additive(), t.pos)
            else:
                return left

    def additive(self) -> _Node:
        left = self.multiplicative()
        while True:
            t = self.peek()
            if t is not None and t.kind == _OP and t.val in ("+", "-"):
                self.next()
                left = _Binary(t.val, left, self.multiplicative(), t.pos)
            else:
                return left

    def multiplicative(self) -> _Node:
        left = self.unary()
        while True:
            t = self.peek()
            if t is not None and t.kind == _OP and t.val in ("*", "/", "%"):
                self.next()
                left = _Binary(t.val, left, self.unary(), t.pos)
            else:
                return left

    def unary(self) -> _Node:
        t = self.peek()
        if t is not None and t.kind == _OP and t.val in ("!", "-", "+"):
            self.next()
            return _Unary(t.val, self.unary(), t.pos)
        return self.postfix()

    def postfix(self, allow_call: bool = True) -> _Node:
        node = self.primary()
        while True:
            t = self.peek()
            if t is None:
                return node
            if t.kind == _FIELD:
                names = []
                while True:
                    t = self.peek()
                    if t is None or t.kind != _FIELD:
                        break
                    names.append(self.next().val)
                if isinstance(node, _CtxField):
                    node = _CtxField(node.names + names, node.pos)
                elif isinstance(node, _Chain):
                    node = _Chain(node.base, node.names + names, node.pos)
                else:
                    node = _Chain(node, names, node.pos)
            elif t.is_op("["):
                self.next()
                lo: Optional[_Node] = None
                if not self.at_op(":"):
                    lo = self.expression()
                if self.at_op(":"):
                    self.next()
                    hi = None if self.at_op("]") else self.expression()
                    self.expect_op("]", "slice expression")
                    node = _Slice(node, lo, hi, t.pos)
                else:
                    self.expect_op("]", "index expression")
                    assert lo is not None
                    node = _Index(node, lo, t.pos)
            elif t.is_op("(") and allow_call:
                self.next()
                node = _Call(node, self.call_args(), node.pos)
            else:
                return node

    def primary(self) -> _Node:
        t = self.next()
        if t.kind == _NUM or t.kind == _STR:
            return _Lit(t.val, t.pos)
        if t.kind == _FIELD:
            return _CtxField([t.val], t.pos)
        if t.kind == _IDENT:
            if t.val == "true":
                return _Lit(True, t.pos)
            if t.val == "false":
                return _Lit(False, t.pos)
            if t.val == "nil":
                return _Lit(None, t.pos)
            if t.val in _KEYWORDS:
                raise self.src.parse_error(f"unexpected keyword '{t.val}'", t.pos)
            return _Ident(t.val, t.pos)
        if t.is_op("."):
            return _Ctx(t.pos)
        if t.is_op("("):
            inner = self.expression()
            self.expect_op(")", "parenthesized expression")
            return inner
        self.unexpected(t, "expression", "operand")
        raise AssertionError("unreachable")


class _Parser:
    """Turns lexed items into a statement tree."""

    def __init__(self, src: _Src, items: List[Tuple[str, Any, int]]):
        self.src = src
        self.items = items
        self.i = 0
        self.blocks: Dict[str, _Block] = {}

    def parse(self) -> list:
        body, stop = self.parse_list(())
        if stop is not None:
            kw, _, pos = stop
            raise self.src.parse_error(f"unexpected '{kw}'", pos)
        return body

    def parse_list(self, stops: Sequence[str]) -> Tuple[list, Optional[Tuple[str, _ExprParser, int]]]:
        """Statements until an action starting with a keyword in ``stops``."""
        out: list = []
        while self.i < len(self.items):
            kind, val, pos = self.items[self.i]
            self.i += 1
            if kind == "text":
                out.append(_Text(val))
                continue
            toks: List[_Tok] = val[0]
            if not toks:
                raise self.src.parse_error("missing value for command", pos)
            p = _ExprParser(self.src, toks, val[1])
            head = toks[0]
            kw = head.val if head.kind == _IDENT and head.val in _KEYWORDS else None
            if kw in ("end", "else", "catch"):
                p.next()
                if kw not in stops:
                    raise self.src.parse_error(f"unexpected '{kw}'", head.pos)
                return out, (kw, p, head.pos)
            if kw is None:
                out.append(self.simple(p))
                continue
            p.next()
            if kw == "if":
                out.append(self.parse_if(p, head.pos))
            elif kw == "range":
                out.append(self.parse_range(p, head.pos))
            elif kw == "try":
                out.append(self.parse_try(p, head.pos))
            elif kw == "include":
                name = p.expression()
                ctx = None if p.done() else p.expression()
                p.expect_done("include")
                out.append(_Include(name, ctx, head.pos))
            elif kw == "block":
                out.append(self.parse_block(p, head.pos))
            elif kw == "yield":
                out.append(self.parse_yield(p, head.pos))
            elif kw == "return":
                p.pipeline()  # only meaningful for exec(); evaluated for errors, not output
            else:
                raise self.src.parse_error(f"'{kw}' is not supported", head.pos)
        if stops:
            raise self.src.parse_error(f"unexpected EOF (missing '{stops[0]}')", len(self.src.text))
        return out, None

    def simple(self, p: _ExprParser) -> Any:
        assign = self.maybe_assign(p, "assignment")
        if assign is not None:
            p.expect_done("assignment")
            return assign
        expr = p.pipeline()
        p.expect_done("action")
        return _Output(expr)

    def maybe_assign(self, p: _ExprParser, context: str) -> Optional[_Assign]:
        """Parse ``a, b := x, y`` / ``a = x`` if the action is an assignment."""
        depth = 0
        has = False
        for t in p.toks[p.i:]:
            if t.kind == _OP and t.val in ("(", "["):
                depth += 1
            elif t.kind == _OP and t.val in (")", "]"):
                depth -= 1
            elif depth == 0 and t.kind == _OP and t.val in (":=", "="):
                has = True
                break
            elif depth == 0 and t.kind == _OP and t.val in (";", "|", "?"):
                break
        if not has:
            return None
        start = p.peek()
        assert start is not None
        targets = [p.postfix(allow_call=False)]
        while p.at_op(","):
            p.next()
            targets.append(p.postfix(allow_call=False))
        op = p.next()
        let = op.val == ":="
        for t in targets:
            if let and not isinstance(t, _Ident):
                raise self.src.parse_error("unexpected node type in variable declaration", t.pos)
            if not isinstance(t, (_Ident, _Chain, _CtxField)):
                raise self.src.parse_error("unexpected node in assign", t.pos)
        values = [p.expression()]
        while p.at_op(","):
            p.next()
            values.append(p.expression())
        comma_ok = len(targets) == 2 and len(values) == 1 and isinstance(values[0], _Index)
        if not comma_ok and len(targets) != len(values):
            raise self.src.parse_error(f"parsing {context}: unexpected number of operands", op.pos)
        return _Assign(targets, values, let, comma_ok, start.pos)

    def parse_if(self, p: _ExprParser, pos: int) -> _If:
        setup = None
        if any(t.is_op(";") for t in p.toks):
            setup = self.maybe_assign(p, "if")
            p.expect_op(";", "if")
        cond = p.expression()
        p.expect_done("if")
        body, stop = self.parse_list(("end", "else"))
        assert stop is not None
        kw, sp, spos = stop
        orelse: Optional[list] = None
        if kw == "else":
            if not sp.done() and sp.peek().is_ident("if"):  # type: ignore[union-attr]
                sp.next()
                orelse = [self.parse_if(sp, spos)]
            else:
                sp.expect_done("else")
                orelse, stop2 = self.parse_list(("end",))
                assert stop2 is not None
                stop2[1].expect_done("end")
        else:
            sp.expect_done("end")
        return _If(cond, body, orelse, pos, setup)

    def parse_range(self, p: _ExprParser, pos: int) -> _Range:
        names: List[_Node] = []
        let = True
        if any(t.kind == _OP and t.val in (":=", "=") for t in p.toks):
            names.append(p.postfix(allow_call=False))
            if p.at_op(","):
                p.next()
                names.append(p.postfix(allow_call=False))
            op = p.next()
            if not (op.is_op(":=") or op.is_op("=")):
                p.unexpected(op, "range", "':=' or '='")
            let = op.val == ":="
            for n in names:
                if not isinstance(n, (_Ident, _Chain, _CtxField)) or (let and not isinstance(n, _Ident)):
                    raise self.src.parse_error("unexpected node type in range assignment", n.pos)
        expr = p.expression()
        p.expect_done("range")
        body, stop = self.parse_list(("end", "else"))
        assert stop is not None
        orelse: Optional[list] = None
        if stop[0] == "else":
            stop[1].expect_done("else")
            orelse, stop2 = self.parse_list(("end",))
            assert stop2 is not None
            stop2[1].expect_done("end")
        else:
            stop[1].expect_done("end")
        return _Range(names, let, expr, body, orelse, pos)

    def parse_try(self, p: _ExprParser, pos: int) -> _Try:
        p.expect_done("try")
        body, stop = self.parse_list(("end", "catch"))
        assert stop is not None
        err_name = None
        catch: Optional[list] = None
        if stop[0] == "catch":
            sp = stop[1]
            if not sp.done():
                t = sp.next()
                if t.kind != _IDENT:
                    sp.unexpected(t, "catch", "identifier")
                err_name = t.val
            sp.expect_done("catch")
            catch, stop2 = self.parse_list(("end",))
            assert stop2 is not None
            stop2[1].expect_done("end")
        else:
            stop[1].expect_done("end")
        return _Try(body, err_name, catch)

    def parse_block(self, p: _ExprParser, pos: int) -> _Block:
        t = p.next()
        if t.kind != _IDENT:
            p.unexpected(t, "block", "block name")
        params: List[Tuple[str, Optional[_Node]]] = []
        p.expect_op("(", "block")
        while not p.at_op(")"):
            n = p.next()
            if n.kind != _IDENT:
                p.unexpected(n, "block parameters", "identifier")
            default = None
            if p.at_op("="):
                p.next()
                default = p.expression()
            params.append((n.val, default))
            if not p.at_op(")"):
                p.expect_op(",", "block parameters")
        p.next()
        ctx = None if p.done() else p.expression()
        p.expect_done("block")
        body, stop = self.parse_list(("end",))
        assert stop is not None
        stop[1].expect_done("end")
        block = _Block(t.val, params, ctx, body, pos, invoke=True)
        if t.val in self.blocks:
            raise self.src.parse_error(f"block {t.val!r} is already defined", t.pos)
        self.blocks[t.val] = block
        return block

    def parse_yield(self, p: _ExprParser, pos: int) -> _Yield:
        t = p.next()
        if t.kind != _IDENT:
            p.unexpected(t, "yield", "block name")
        args: List[Tuple[Optional[str], _Node]] = []
        p.expect_op("(", "yield")
        while not p.at_op(")"):
            a = p.peek()
            b = p.peek(1)
            name = None
            if a is not None and a.kind == _IDENT and b is not None and b.is_op("="):
                p.next()
                p.next()
                name = a.val
            args.append((name, p.expression()))
            if not p.at_op(")"):
                p.expect_op(",", "yield arguments")
        p.next()
        ctx = None if p.done() else p.expression()
        p.expect_done("yield")
        return _Yield(t.val, args, ctx, pos)


# ---------------------------------------------------------------- builtins

class _Isset:
    """Marker: ``isset`` needs its argument nodes, not their values."""


_ISSET = _Isset()


def _go_json(v: Any) -> str:
    """Go ``json.Marshal`` text: compact, sorted keys, ``<>&`` escaped."""
    from ccm import gojson

    def default(x: Any) -> Any:
        if x is MISSING:
            return None
        raise ValueError(f"json: unsupported type: {_go_type(x)}")
    return gojson.dumps(v, default=default)


def _b_len(v: Any) -> int:
    if v is MISSING:
        raise ValueError("len(): argument is not a valid value")
    if isinstance(v, str):
        return len(v.encode("utf-8"))
    if isinstance(v, (list, tuple, dict)):
        return len(v)
    raise ValueError(f"len(): invalid value type {_go_type(v)}")


def _b_repeat(s: str, n: int) -> str:
    if n < 0:
        raise ValueError("strings: negative Repeat count")
    return s * n


def _b_replace(s: str, old: str, new: str, n: int) -> str:
    return s.replace(old, new) if n < 0 else s.replace(old, new, n)


def _b_split(s: str, sep: str) -> List[str]:
    if sep == "":
        return list(s)
    return s.split(sep)


def _b_html(s: str) -> str:
    return (s.replace("&", "&amp;").replace("'", "&#39;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&#34;"))


def _b_map(*kv: Any) -> Dict[Any, Any]:
    if len(kv) % 2:
        raise ValueError("map(): incomplete key-value pair (even number of arguments required)")
    return {kv[i]: kv[i + 1] for i in range(0, len(kv), 2)}


def _b_ints(lo: int, hi: int) -> List[int]:
    if hi <= lo:
        raise ValueError("ints(): upper limit must be greater than lower limit")
    return list(range(int(lo), int(hi)))


def _identity(v: Any) -> Any:
    return v


_BUILTINS: Dict[str, Any] = {
    "lower": lambda s: _need_str("lower", s).lower(),
    "upper": lambda s: _need_str("upper", s).upper(),
    "hasPrefix": lambda s, p: _need_str("hasPrefix", s).startswith(_need_str("hasPrefix", p)),
    "hasSuffix": lambda s, p: _need_str("hasSuffix", s).endswith(_need_str("hasSuffix", p)),
    "repeat": _b_repeat,
    "replace": _b_replace,
    "split": _b_split,
    "trimSpace": lambda s: _need_str("trimSpace", s).strip(" \t\n\r\v\f\u0085\u00a0"),
    "html": _b_html,
    "url": lambda s: urllib.parse.quote_plus(_need_str("url", s), safe=""),
    "json": _go_json,
    "writeJson": _go_json,
    "map": _b_map,
    "slice": lambda *a: list(a),
    "array": lambda *a: list(a),
    "ints": _b_ints,
    "len": _b_len,
    "isset": _ISSET,
    "raw": _identity,
    "unsafe": _identity,
    "safeHtml": _b_html,
    "safeJs": lambda s: _json.dumps(go_sprint(s))[1:-1],
}


def _need_str(fn: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"{fn}: argument must be a string, not {_go_type(v)}")
    return v


# ---------------------------------------------------------------- runtime

class _JetErrorValue:
    """The value bound by ``catch err``: ``err.Error()`` gives the message."""

    def __init__(self, message: str):
        self.message = message

    def Error(self) -> str:  # noqa: N802 - Jet/Go method name
        return self.message

    def __str__(self) -> str:
        return self.message


def _signature(fn: Callable[..., Any], cache: Dict[Any, Any]) -> Optional[inspect.Signature]:
    """``inspect.signature`` cached per function for one render (None when it has none)."""
    try:
        return cache[fn]
    except (KeyError, TypeError):
        pass
    try:
        sig: Optional[inspect.Signature] = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    try:
        cache[fn] = sig
    except TypeError:  # unhashable callable
        pass
    return sig


_MAX_DEPTH = 200


class _Runtime:
    def __init__(self, src: _Src, globals_: Mapping[str, Any], funcs: Mapping[str, Any],
                 ctx: Any, loader: Optional[Callable[[str], str]], left: str, right: str,
                 blocks: Dict[str, _Block]):
        self.src = src
        self.globals = globals_
        self.funcs = funcs
        self.ctx = ctx
        self.loader = loader
        self.left, self.right = left, right
        self.scopes: List[Dict[str, Any]] = [{}]
        self.out: List[str] = []
        self.blocks = dict(blocks)
        self.cache: Dict[str, Tuple[_Src, list, Dict[str, _Block]]] = {}
        self.depth = 0
        self.signatures: Dict[Any, Any] = {}

    def error(self, reason: str, pos: int) -> JetError:
        return self.src.runtime_error(reason, pos)

    # names
    def resolve(self, name: str, pos: int) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.globals:
            return self.globals[name]
        if name in self.funcs:
            return self.funcs[name]
        if name in _BUILTINS:
            return _BUILTINS[name]
        raise self.error(f"identifier {name!r} not available in current or parent scope, global, "
                         f"or default variables", pos)

    def set_var(self, target: _Node, value: Any, let: bool) -> None:
        if isinstance(target, _Ident):
            if target.name == "_":
                return
            if let:
                self.scopes[-1][target.name] = value
                return
            for scope in reversed(self.scopes):
                if target.name in scope:
                    scope[target.name] = value
                    return
            raise self.error(f"identifier {target.name!r} is not available in the current scope", target.pos)
        if isinstance(target, _Chain):
            owner = _Chain(target.base, target.names[:-1], target.pos).eval(self) if len(target.names) > 1 \
                else target.base.eval(self)
        else:
            assert isinstance(target, _CtxField)
            owner = _CtxField(target.names[:-1], target.pos).eval(self) if len(target.names) > 1 else self.ctx
        key = target.names[-1]
        if isinstance(owner, dict):
            owner[key] = value
        elif owner is not None and owner is not MISSING and hasattr(owner, key):
            setattr(owner, key, value)
        else:
            raise self.error(f"identifier {key!r} is not available in the current scope", target.pos)

    # calls
    def call(self, callee: _Node, arg_nodes: List[_Node], pos: int) -> Any:
        fn = callee.eval(self)
        name = callee.name if isinstance(callee, _Ident) else (
            callee.names[-1] if isinstance(callee, (_Chain, _CtxField)) else "function")
        if fn is _ISSET:
            if not arg_nodes:
                raise self.error("isset: requires at least 1 argument", pos)
            return all(self.isset(a) for a in arg_nodes)
        if not callable(fn):
            raise self.error(f"node {name!r} is not func kind ({_go_type(fn)})", pos)
        args = [a.eval(self) for a in arg_nodes]
        if fn is not _b_len:  # an invalid value reaches other functions as nil
            args = [None if a is MISSING else a for a in args]
        sig = _signature(fn, self.signatures)
        if sig is not None:
            try:
                sig.bind(*args)
            except TypeError:
                raise self.error(f"call expression: wrong number of arguments for {name} "
                                 f"({len(args)} given)", pos) from None
        try:
            result = fn(*args)
        except JetError:
            raise
        except RecursionError:
            raise self.error(f"{name}: recursion too deep", pos) from None
        except Exception as exc:  # a template function failed: abort with its message
            raise self.error(str(exc) or type(exc).__name__, pos) from exc
        # A Python function returning None is a Go function with no result:
        # nothing is printed (write() and friends).
        return MISSING if result is None else result

    def isset(self, node: _Node) -> bool:
        try:
            value = node.eval(self)
        except JetError:
            return False
        return value is not None and value is not MISSING

    # execution
    def run(self, body: list) -> None:
        self.scopes.append({})
        try:
            for stmt in body:
                self.execute(stmt)
        finally:
            self.scopes.pop()

    def execute(self, stmt: Any) -> None:
        if isinstance(stmt, _Text):
            self.out.append(stmt.text)
        elif isinstance(stmt, _Output):
            v = stmt.expr.eval(self)
            if v is not MISSING:
                self.out.append(go_sprint(v))
        elif isinstance(stmt, _Assign):
            self.assign(stmt)
        elif isinstance(stmt, _If):
            self.exec_if(stmt)
        elif isinstance(stmt, _Range):
            self.exec_range(stmt)
        elif isinstance(stmt, _Try):
            self.exec_try(stmt)
        elif isinstance(stmt, _Include):
            self.exec_include(stmt)
        elif isinstance(stmt, _Block):
            if stmt.invoke:
                self.exec_block(self.blocks.get(stmt.name, stmt), [], stmt.ctx, stmt.pos)
        elif isinstance(stmt, _Yield):
            block = self.blocks.get(stmt.name)
            if block is None:
                raise self.error(f"unresolved block {stmt.name!r}!!", stmt.pos)
            self.exec_block(block, stmt.args, stmt.ctx, stmt.pos)
        else:  # pragma: no cover
            raise AssertionError(stmt)

    def assign(self, stmt: _Assign) -> None:
        if stmt.comma_ok:
            value = stmt.values[0].eval(self)
            self.set_var(stmt.targets[0], value, stmt.let)
            self.set_var(stmt.targets[1], value is not MISSING, stmt.let)
            return
        values = [v.eval(self) for v in stmt.values]
        for target, value in zip(stmt.targets, values):
            self.set_var(target, value, stmt.let)

    def exec_if(self, stmt: _If) -> None:
        self.scopes.append({})
        try:
            if stmt.setup is not None:
                self.assign(stmt.setup)
            if _truth(stmt.cond.eval(self)):
                self.run(stmt.body)
            elif stmt.orelse is not None:
                self.run(stmt.orelse)
        finally:
            self.scopes.pop()

    def exec_range(self, stmt: _Range) -> None:
        seq = stmt.expr.eval(self)
        if isinstance(seq, dict):
            pairs: List[Tuple[Any, Any]] = [(k, seq[k]) for k in sorted(seq, key=go_key_order)]
        elif isinstance(seq, (list, tuple)):
            pairs = list(enumerate(seq))
        elif seq is MISSING:
            raise self.error("can't range over invalid value", stmt.pos)
        elif seq is None:
            raise self.error("cannot range over nil pointer/interface (interface {})", stmt.pos)
        else:
            raise self.error(f"value {go_sprint(seq)} (type {_go_type(seq)}) is not rangeable", stmt.pos)
        if not pairs:
            if stmt.orelse is not None:
                self.run(stmt.orelse)
            return
        saved = self.ctx
        self.scopes.append({})
        try:
            for key, value in pairs:
                if len(stmt.names) == 2:
                    self.set_var(stmt.names[0], key, stmt.let)
                    self.set_var(stmt.names[1], value, stmt.let)
                else:
                    if stmt.names:
                        self.set_var(stmt.names[0], key, stmt.let)
                    self.ctx = value
                self.run(stmt.body)
        finally:
            self.ctx = saved
            self.scopes.pop()

    def exec_try(self, stmt: _Try) -> None:
        mark = len(self.out)
        depth = len(self.scopes)
        saved = self.ctx
        try:
            self.run(stmt.body)
        except JetError as exc:
            del self.out[mark:]
            del self.scopes[depth:]
            self.ctx = saved
            if stmt.catch is not None:
                self.scopes.append({})
                try:
                    if stmt.err_name:
                        self.scopes[-1][stmt.err_name] = _JetErrorValue(str(exc))
                    self.run(stmt.catch)
                finally:
                    self.scopes.pop()

    def exec_include(self, stmt: _Include) -> None:
        name = stmt.name.eval(self)
        if not isinstance(name, str):
            raise self.error(f"unexpected expression type {_go_type(name)!r} in template yielding", stmt.pos)
        if self.loader is None:
            raise self.error(f"include: template {name!r} was not found: no template loader", stmt.pos)
        if name not in self.cache:
            try:
                text = self.loader(name)
            except JetError:
                raise
            except Exception as exc:
                raise self.error(f"include: template {name!r} was not found: {exc}", stmt.pos) from exc
            sub = _Src(text, name)
            parser = _Parser(sub, _lex(sub, self.left, self.right))
            self.cache[name] = (sub, parser.parse(), parser.blocks)
        sub, body, blocks = self.cache[name]
        ctx = stmt.ctx.eval(self) if stmt.ctx is not None else self.ctx
        self.enter(stmt.pos)
        saved_src, saved_ctx, saved_blocks = self.src, self.ctx, self.blocks
        self.src, self.ctx = sub, ctx
        self.blocks = dict(self.blocks)
        self.blocks.update(blocks)
        try:
            self.run(body)
        finally:
            self.src, self.ctx, self.blocks = saved_src, saved_ctx, saved_blocks
            self.depth -= 1

    def exec_block(self, block: _Block, args: List[Tuple[Optional[str], _Node]],
                   ctx_node: Optional[_Node], pos: int) -> None:
        scope: Dict[str, Any] = {}
        positional = [n for n, _ in block.params]
        for i, (name, node) in enumerate(args):
            key = name if name is not None else (positional[i] if i < len(positional) else None)
            if key is None:
                raise self.error(f"too many arguments for block {block.name!r}", pos)
            scope[key] = node.eval(self)
        for name, default in block.params:
            if name not in scope:
                scope[name] = default.eval(self) if default is not None else False
        ctx = ctx_node.eval(self) if ctx_node is not None else self.ctx
        self.enter(pos)
        saved = self.ctx
        self.scopes.append(scope)
        self.ctx = ctx
        try:
            self.run(block.body)
        finally:
            self.ctx = saved
            self.scopes.pop()
            self.depth -= 1

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            self.depth -= 1
            raise self.error(f"exceeded maximum template depth ({_MAX_DEPTH})", pos)


# ---------------------------------------------------------------- API

def render_jet(source: str, variables: Mapping[str, Any], *,
               functions: Optional[Mapping[str, Callable[..., Any]]] = None,
               left: str = "[[", right: str = "]]", context: Any = None,
               loader: Optional[Callable[[str], str]] = None,
               name: str = "template") -> str:
    """Render the Jet template ``source``.

    ``variables`` are the global names (callables among them act as functions),
    ``functions`` more callables, ``context`` the value of ``.``, ``loader`` maps
    an ``include`` path to template text. Raises ``JetError``.
    """
    if not left or not right:
        raise JetError("delimiters must not be empty", template=name)
    src = _Src(source, name)
    parser = _Parser(src, _lex(src, left, right))
    body = parser.parse()
    rt = _Runtime(src, variables or {}, functions or {}, context, loader, left, right, parser.blocks)
    rt.run(body)
    return "".join(rt.out)
