"""Go ``text/template`` renderer (the subset the scaffold ``go`` engine needs).

What: ``render_go(source, dot, ...)`` renders a Go text/template to text.

Guarantees: Go's semantics where they decide output: truthiness, ``eq``/``lt``
typing rules, ``and``/``or`` returning an operand (short-circuit), pipelines
passing the value as the *last* argument, ``range`` over lists, maps (sorted
keys) and integers, ``<no value>`` for a missing map key or nil, values printed
as ``fmt.Sprint`` (``go_sprint``), ``printf`` verbs with Go's ``%!v(...)``
complaints. Field access works on plain dicts (upstream's reflection-wrapped
maps cannot be traversed; ours can, as the spec asks) and on object attributes.

Supported: text, comments ``{{/* */}}``, trim markers ``{{- `` / `` -}}``,
custom delimiters, ``.``, ``.a.b``, ``$``, ``$x.a``, ``(pipe).a``, literals,
``$x :=`` / ``$x =`` / ``range $i, $v :=``, ``if``/``else if``/``else``,
``with``/``else with``/``else``, ``range``/``else``/``break``/``continue``,
``define``/``template``/``block``, builtins ``and or not eq ne lt le gt ge len
index slice print printf println html js urlquery call``, and a few Sprig
helpers (``default empty coalesce ternary upper lower title trim trimPrefix
trimSuffix trimAll quote squote join splitList contains hasPrefix hasSuffix
replace repeat indent nindent toJson toPrettyJson toString list dict add sub
mul div mod add1 keys sortAlpha first last b64enc b64dec``).

Not: complex numbers, ``%#v``/``%T`` on arbitrary objects, Sprig's date and
crypto families, ``missingkey`` options, HTML escaping (html/template).
"""
from __future__ import annotations

import base64
import inspect
import math
import urllib.parse
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ccm.model.errors import TemplateError
from ccm.templates.gofmt import (EscapeError, decode_go_escapes, go_float, go_key_order, go_sprint,
                                  go_type_name, is_number)

__all__ = ["GoTemplateError", "render_go", "go_sprintf"]


class GoTemplateError(TemplateError):
    """A Go template could not be parsed or executed.

    ``str()`` is ``template: <name>:<line>:<col>: <reason>`` for parse errors and
    ``template: <name>:<line>:<col>: executing "<name>" at <<node>>: <reason>``
    at run time, like Go's messages with the column added.
    """

    def __init__(self, reason: str, *, template: str = "template", line: int = 0, column: int = 0,
                 node: Optional[str] = None, executing: Optional[str] = None):
        self.reason = reason
        self.template = template
        self.line = line
        self.column = column
        self.node = node
        if executing is not None:
            text = f'template: {template}:{line}:{column}: executing "{executing}" at <{node}>: {reason}'
        else:
            text = f"template: {template}:{line}:{column}: {reason}"
        super().__init__(text)


class _Missing:
    """Go's invalid ``reflect.Value``: a missing map key; prints ``<no value>``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no value>"


MISSING = _Missing()
_NO_FINAL = object()
_WS = " \t\r\n"


def _go_type(v: Any) -> str:
    return "<nil>" if v is MISSING else go_type_name(v)


def truth(v: Any) -> bool:
    """Go template truthiness: zero values and empty collections are false."""
    if v is None or v is MISSING:
        return False
    if isinstance(v, bool):
        return v
    if is_number(v):
        return v != 0
    if isinstance(v, (str, list, tuple, dict, bytes)):
        return len(v) > 0
    return True


def _arg(v: Any) -> Any:
    """A value as a function argument: an invalid value becomes nil."""
    return None if v is MISSING else v


# ---------------------------------------------------------------- printf

def _quote(s: str, ascii_only: bool = False) -> str:
    out = ['"']
    esc = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
           "\v": "\\v", "\\": "\\\\", '"': '\\"'}
    for ch in s:
        if ch in esc:
            out.append(esc[ch])
        elif ch == " " or (ch.isprintable() and not (ascii_only and ord(ch) > 0x7E)):
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _quote_rune(r: int) -> str:
    ch = chr(r)
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + _quote(ch)[1:-1] + "'"


def _bad(verb: str, v: Any) -> str:
    if v is None or v is MISSING:
        return f"%!{verb}(<nil>)"
    return f"%!{verb}({_go_type(v)}={go_sprint(v)})"


class _Spec:
    __slots__ = ("minus", "plus", "sharp", "zero", "space", "width", "prec")

    def __init__(self) -> None:
        self.minus = self.plus = self.sharp = self.zero = self.space = False
        self.width: Optional[int] = None
        self.prec: Optional[int] = None


def _pad(s: str, spec: _Spec, numeric: bool = False) -> str:
    if spec.width is None or len(s) >= spec.width:
        return s
    fill = spec.width - len(s)
    if spec.minus:
        return s + " " * fill
    if spec.zero and numeric:
        sign = s[0] if s[:1] in ("+", "-", " ") else ""
        body = s[len(sign):]
        return sign + "0" * fill + body
    return " " * fill + s


def _sign(s: str, negative: bool, spec: _Spec) -> str:
    if negative:
        return "-" + s
    if spec.plus:
        return "+" + s
    if spec.space:
        return " " + s
    return s


def _fmt_int(v: int, verb: str, spec: _Spec) -> str:
    n = abs(v)
    if verb == "d":
        body = str(n)
    elif verb in ("x", "X"):
        body = format(n, "x" if verb == "x" else "X")
        if spec.sharp:
            body = ("0x" if verb == "x" else "0X") + body
    elif verb == "o":
        body = format(n, "o")
        if spec.sharp:
            body = "0" + body
    elif verb == "O":
        body = "0o" + format(n, "o")
    elif verb == "b":
        body = format(n, "b")
    elif verb == "c":
        return _pad(chr(v), spec)
    elif verb == "q":
        return _pad(_quote_rune(v), spec)
    elif verb == "U":
        body = f"U+{n:04X}"
        if spec.sharp:
            body += f" '{chr(v)}'"
        return _pad(body, spec)
    else:
        return _bad(verb, v)
    if spec.prec is not None and len(body) < spec.prec:
        body = "0" * (spec.prec - len(body)) + body
    return _pad(_sign(body, v < 0, spec), spec, numeric=spec.prec is None)


def _fmt_float(v: float, verb: str, spec: _Spec) -> str:
    if math.isnan(v) or math.isinf(v):
        # Go keeps the sign of an infinity and drops NaN's unless asked for
        body = ("+NaN" if spec.plus else " NaN" if spec.space else "NaN") if math.isnan(v) \
            else ("+Inf" if v > 0 else "-Inf")
        return _pad(body, spec)
    neg = v < 0 or (v == 0 and math.copysign(1, v) < 0)
    a = abs(v)
    if verb in ("v", "g", "G") and spec.prec is None:
        body = go_float(a)
        if verb == "G":
            body = body.upper()
    elif verb in ("f", "F"):
        body = f"{a:.{6 if spec.prec is None else spec.prec}f}"
    elif verb in ("e", "E"):
        body = f"{a:.{6 if spec.prec is None else spec.prec}e}"
        if verb == "E":
            body = body.upper()
    elif verb in ("g", "G"):
        body = f"{a:.{spec.prec or 1}{verb}}"
        if "e" in body or "E" in body:
            mant, exp = body.split("e" if verb == "g" else "E")
            body = mant + ("e" if verb == "g" else "E") + exp[0] + exp[1:].rjust(2, "0")
    else:
        return _bad(verb, v)
    return _pad(_sign(body, neg, spec), spec, numeric=True)


def _fmt_str(s: str, verb: str, spec: _Spec) -> str:
    if verb in ("s", "v"):
        body = s if spec.prec is None else s[:spec.prec]
    elif verb == "q":
        if spec.sharp and "`" not in s and all(c.isprintable() or c == "\t" for c in s):
            body = "`" + s + "`"
        else:
            body = _quote(s, ascii_only=spec.plus)
    elif verb in ("x", "X"):
        data = s.encode("utf-8")
        if spec.prec is not None:
            data = data[:spec.prec]
        body = data.hex()
        if verb == "X":
            body = body.upper()
        if spec.sharp:
            body = ("0x" if verb == "x" else "0X") + body
    else:
        return _bad(verb, s)
    return _pad(body, spec)


def _fmt_value(v: Any, verb: str, spec: _Spec, depth: int = 0) -> str:
    if v is None or v is MISSING:
        # a nil element inside a list or map prints <nil> whatever the verb
        return _pad("<nil>", spec) if verb == "v" or depth > 0 else _bad(verb, None)
    if isinstance(v, bool):
        if verb in ("t", "v"):
            return _pad("true" if v else "false", spec)
        return _bad(verb, v)
    if isinstance(v, int):
        if verb == "v":
            return _fmt_int(v, "d", spec)
        return _fmt_int(v, verb, spec)
    if isinstance(v, float):
        return _fmt_float(v, verb, spec)
    if isinstance(v, str):
        return _fmt_str(v, verb, spec)
    if isinstance(v, (list, tuple)):
        inner = _Spec()
        inner.plus, inner.sharp, inner.prec = spec.plus, spec.sharp, spec.prec
        body = "[" + " ".join(_fmt_value(x, verb, inner, depth + 1) for x in v) + "]"
        return _pad(body, spec)
    if isinstance(v, dict):
        inner = _Spec()
        inner.plus, inner.sharp, inner.prec = spec.plus, spec.sharp, spec.prec
        parts = [f"{_fmt_value(k, verb, inner, depth + 1)}:{_fmt_value(v[k], verb, inner, depth + 1)}"
                 for k in sorted(v, key=go_key_order)]
        return _pad("map[" + " ".join(parts) + "]", spec)
    if verb in ("v", "s"):
        return _pad(go_sprint(v), spec)
    return _bad(verb, v)


def go_sprintf(fmt: str, *args: Any) -> str:
    """Go's ``fmt.Sprintf`` for plain data values (the verbs templates use)."""
    out: List[str] = []
    i = 0
    n = len(fmt)
    argi = 0
    while i < n:
        j = fmt.find("%", i)
        if j < 0:
            out.append(fmt[i:])
            break
        out.append(fmt[i:j])
        i = j + 1
        spec = _Spec()
        while i < n and fmt[i] in "+-# 0":
            c = fmt[i]
            if c == "+":
                spec.plus = True
            elif c == "-":
                spec.minus = True
            elif c == "#":
                spec.sharp = True
            elif c == "0":
                spec.zero = True
            else:
                spec.space = True
            i += 1
        if i < n and fmt[i] == "*":
            i += 1
            if argi < len(args) and isinstance(args[argi], int) and not isinstance(args[argi], bool):
                spec.width = args[argi]
                if spec.width < 0:
                    spec.minus, spec.width = True, -spec.width
            else:
                out.append("%!(BADWIDTH)")
            argi += 1
        else:
            k = i
            while i < n and (fmt[i].isascii() and fmt[i].isdigit()):
                i += 1
            if i > k:
                spec.width = int(fmt[k:i])
        if i < n and fmt[i] == ".":
            i += 1
            if i < n and fmt[i] == "*":
                i += 1
                if argi < len(args) and isinstance(args[argi], int) and not isinstance(args[argi], bool):
                    spec.prec = max(args[argi], 0)
                else:
                    out.append("%!(BADPREC)")
                argi += 1
            else:
                k = i
                while i < n and (fmt[i].isascii() and fmt[i].isdigit()):
                    i += 1
                spec.prec = int(fmt[k:i]) if i > k else 0
        if i >= n:
            out.append("%!(NOVERB)")
            break
        verb = fmt[i]
        i += 1
        if verb == "%":
            out.append("%")
            continue
        if argi >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        arg = args[argi]
        argi += 1
        if verb == "T":
            out.append(_pad(_go_type(arg), spec))
        elif verb not in "vsdqxXobcUeEfFgGt":
            out.append(_bad(verb, arg))
        else:
            out.append(_fmt_value(arg, verb, spec))
    if argi < len(args):
        extra = ", ".join(
            "<nil>" if a is None else f"{_go_type(a)}={go_sprint(a)}" for a in args[argi:])
        out.append(f"%!(EXTRA {extra})")
    return "".join(out)


def _go_print(*args: Any) -> str:
    out: List[str] = []
    prev_str = True
    for i, a in enumerate(args):
        is_str = isinstance(a, str)
        if i > 0 and not is_str and not prev_str:
            out.append(" ")
        out.append(go_sprint(a))
        prev_str = is_str
    return "".join(out)


def _go_println(*args: Any) -> str:
    return " ".join(go_sprint(a) for a in args) + "\n"


# ---------------------------------------------------------------- builtins

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
    return _go_print(*args)


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
    from ccm import gojson

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
    "quote": lambda *a: " ".join(_quote(_strval(x)) for x in a if x is not None),
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
    "print": _go_print, "printf": go_sprintf, "println": _go_println,
    "html": _html_escape, "js": _js_escape, "urlquery": _urlquery, "call": _call,
}


# ---------------------------------------------------------------- lexing

_T_TEXT, _T_ACTION = "text", "action"


class _Tok:
    __slots__ = ("kind", "val", "pos", "end", "spaced")

    def __init__(self, kind: str, val: Any, pos: int, end: int, spaced: bool):
        self.kind, self.val, self.pos, self.end, self.spaced = kind, val, pos, end, spaced

    def __repr__(self) -> str:
        return f"{self.kind}:{self.val!r}"


class _Src:
    def __init__(self, text: str, name: str):
        self.text, self.name = text, name

    def where(self, pos: int) -> Tuple[int, int]:
        line = self.text.count("\n", 0, pos) + 1
        return line, pos - (self.text.rfind("\n", 0, pos) + 1) + 1

    def error(self, reason: str, pos: int) -> GoTemplateError:
        line, col = self.where(pos)
        return GoTemplateError(reason, template=self.name, line=line, column=col)


def _unquote(src: _Src, body: str, pos: int) -> str:
    try:
        return decode_go_escapes(body)
    except EscapeError as exc:
        if exc.sequence:
            raise src.error(f"invalid syntax in quoted string: unknown escape \\{exc.sequence}", pos) from None
        raise src.error("invalid syntax in quoted string", pos) from None


_KEYWORDS = {"if", "else", "end", "range", "with", "define", "template", "block",
             "break", "continue", "nil", "true", "false"}


def _lex_action(src: _Src, start: int, open_pos: int, right: str) -> Tuple[List[_Tok], int, bool]:
    text = src.text
    n = len(text)
    i = start
    toks: List[_Tok] = []
    spaced = True
    while True:
        if i >= n:
            raise src.error("unclosed action", open_pos)
        c = text[i]
        if c in _WS and text.startswith("-" + right, i + 1):
            return toks, i + 2 + len(right), True
        if text.startswith(right, i):
            return toks, i + len(right), False
        if c in _WS:
            spaced = True
            i += 1
            continue
        begin = i
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break
                j += 1
            if j >= n or text[j] != '"':
                raise src.error("unterminated quoted string", i)
            tok = _Tok("string", _unquote(src, text[i + 1:j], i), i, j + 1, spaced)
            i = j + 1
        elif c == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise src.error("unterminated raw quoted string", i)
            tok = _Tok("string", text[i + 1:j], i, j + 1, spaced)
            i = j + 1
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                if text[j] == "\\":
                    j += 1
                j += 1
            if j >= n:
                raise src.error("unterminated character constant", i)
            body = _unquote(src, text[i + 1:j], i)
            if len(body) != 1:
                raise src.error(f"malformed character constant: {text[i:j + 1]}", i)
            tok = _Tok("number", ord(body), i, j + 1, spaced)
            i = j + 1
        elif (c.isascii() and c.isdigit()) or (c in "+-." and i + 1 < n and (text[i + 1].isascii() and text[i + 1].isdigit())):
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "._" or
                             (text[j] in "+-" and text[j - 1] in "eEpP" and not text[i:j].lower().startswith(("0x", "-0x", "+0x")))):
                j += 1
            lit = text[i:j]
            tok = _Tok("number", _parse_number(src, lit, i), i, j, spaced)
            i = j
        elif c == "$":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tok = _Tok("variable", text[i:j], i, j, spaced)
            i = j
        elif c == "." and i + 1 < n and (text[i + 1].isalpha() or text[i + 1] == "_"):
            j = i + 2
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tok = _Tok("field", text[i + 1:j], i, j, spaced)
            i = j
        elif c.isalpha() or c == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            tok = _Tok("keyword" if word in _KEYWORDS else "identifier", word, i, j, spaced)
            i = j
        elif text.startswith(":=", i):
            tok = _Tok("op", ":=", i, i + 2, spaced)
            i += 2
        elif c in "|()=,.":
            tok = _Tok("op", c, i, i + 1, spaced)
            i += 1
        else:
            raise src.error(f"unrecognized character in action: {c!r}", begin)
        toks.append(tok)
        spaced = False


def _parse_number(src: _Src, lit: str, pos: int) -> Any:
    s = lit.replace("_", "")
    try:
        low = s.lower().lstrip("+-")
        sign = -1 if s.startswith("-") else 1
        if low.startswith("0x"):
            if "p" in low:
                return sign * float.fromhex(low)
            return sign * int(low, 16)
        if low.startswith("0o"):
            return sign * int(low[2:], 8)
        if low.startswith("0b"):
            return sign * int(low[2:], 2)
        if any(ch in low for ch in ".e") or low in ("inf", "nan"):
            return float(s)
        if len(low) > 1 and low.startswith("0"):
            return sign * int(low, 8)
        return sign * int(low, 10)
    except ValueError:
        raise src.error(f"bad number syntax: {lit!r}", pos) from None


def _lex(src: _Src, left: str, right: str) -> List[Tuple[str, Any, int]]:
    text = src.text
    items: List[Tuple[str, Any, int]] = []
    pos = 0
    while True:
        a = text.find(left, pos)
        if a < 0:
            if pos < len(text):
                items.append((_T_TEXT, text[pos:], pos))
            return items
        body = text[pos:a]
        start = a + len(left)
        if text.startswith("-", start) and start + 1 < len(text) and text[start + 1] in _WS:
            body = body.rstrip(_WS)
            start += 2
        if body:
            items.append((_T_TEXT, body, pos))
        if text.startswith("/*", start):
            end = text.find("*/", start + 2)
            if end < 0:
                raise src.error("unclosed comment", a)
            k = end + 2
            trim = False
            if k < len(text) and text[k] in _WS and text.startswith("-" + right, k + 1):
                trim = True
                k += 2
            if not text.startswith(right, k):
                raise src.error("comment ends before closing delimiter", a)
            pos = k + len(right)
        else:
            toks, pos, trim = _lex_action(src, start, a, right)
            items.append((_T_ACTION, toks, a))
        if trim:
            while pos < len(text) and text[pos] in _WS:
                pos += 1


# ---------------------------------------------------------------- tree

class _Operand:
    """One argument: a term plus a field chain (``.a.b``, ``$x.a``, ``(p).a``)."""

    __slots__ = ("kind", "val", "fields", "pos", "text")

    def __init__(self, kind: str, val: Any, fields: List[str], pos: int, text: str):
        self.kind, self.val, self.fields, self.pos, self.text = kind, val, fields, pos, text


class _Command:
    __slots__ = ("args", "pos", "text")

    def __init__(self, args: List[_Operand], pos: int, text: str):
        self.args, self.pos, self.text = args, pos, text


class _Pipeline:
    __slots__ = ("decl", "is_assign", "cmds", "pos", "text")

    def __init__(self, decl: List[str], is_assign: bool, cmds: List[_Command], pos: int, text: str):
        self.decl, self.is_assign, self.cmds, self.pos, self.text = decl, is_assign, cmds, pos, text


class _Action:
    def __init__(self, pipe: _Pipeline):
        self.pipe = pipe


class _Branch:
    """if / with / range."""

    def __init__(self, kind: str, pipe: _Pipeline, body: list, orelse: Optional[list], pos: int):
        self.kind, self.pipe, self.body, self.orelse, self.pos = kind, pipe, body, orelse, pos


class _TemplateCall:
    def __init__(self, name: str, pipe: Optional[_Pipeline], pos: int):
        self.name, self.pipe, self.pos = name, pipe, pos


class _LoopControl:
    def __init__(self, kind: str, pos: int):
        self.kind, self.pos = kind, pos


def _is_empty(body: list) -> bool:
    return all(isinstance(n, str) and not n.strip() for n in body)


class _Parser:
    def __init__(self, src: _Src, items: List[Tuple[str, Any, int]], funcs: Mapping[str, Any],
                 templates: Dict[str, list]):
        self.src = src
        self.items = items
        self.i = 0
        self.funcs = funcs
        self.templates = templates
        self.vars: List[str] = ["$"]
        self.range_depth = 0
        # per-action token cursor
        self.toks: List[_Tok] = []
        self.t = 0
        self.action_pos = 0

    # -- token cursor
    def peek(self) -> Optional[_Tok]:
        return self.toks[self.t] if self.t < len(self.toks) else None

    def next(self) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise self.src.error("unexpected end of action", self.action_pos)
        self.t += 1
        return tok

    def at(self, kind: str, val: Any = None) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == kind and (val is None or tok.val == val)

    def expect_end(self, context: str) -> None:
        tok = self.peek()
        if tok is not None:
            raise self.src.error(f"unexpected {tok.val!r} in {context}", tok.pos)

    # -- lists
    def parse(self) -> list:
        body, stop = self.parse_list(())
        return body

    def parse_list(self, stops: Tuple[str, ...]) -> Tuple[list, Optional[Tuple[str, int]]]:
        out: list = []
        while self.i < len(self.items):
            kind, val, pos = self.items[self.i]
            self.i += 1
            if kind == _T_TEXT:
                out.append(val)
                continue
            self.toks, self.t, self.action_pos = val, 0, pos
            head = self.peek()
            if head is None:
                raise self.src.error("missing value for command", pos)
            if head.kind == "keyword" and head.val in ("end", "else"):
                if head.val not in stops:
                    raise self.src.error(f"unexpected {{{{{head.val}}}}}", head.pos)
                self.next()
                return out, (head.val, head.pos)
            if head.kind == "keyword" and head.val in ("if", "with", "range"):
                self.next()
                out.append(self.parse_branch(head.val, head.pos))
            elif head.kind == "keyword" and head.val in ("template", "block"):
                self.next()
                out.append(self.parse_template(head.val, head.pos))
            elif head.kind == "keyword" and head.val == "define":
                self.next()
                self.parse_define(head.pos)
            elif head.kind == "keyword" and head.val in ("break", "continue"):
                self.next()
                if self.range_depth == 0:
                    raise self.src.error(f"{{{{{head.val}}}}} outside {{{{range}}}}", head.pos)
                self.expect_end(head.val)
                out.append(_LoopControl(head.val, head.pos))
            else:
                out.append(_Action(self.pipeline("command", allow_decl=True)))
        if stops:
            raise self.src.error("unexpected EOF", len(self.src.text))
        return out, None

    def parse_branch(self, kind: str, pos: int) -> _Branch:
        mark = len(self.vars)
        if kind == "range":
            self.range_depth += 1
        try:
            pipe = self.pipeline(kind, allow_decl=True)
            body, stop = self.parse_list(("end", "else"))
            assert stop is not None
            orelse: Optional[list] = None
            if kind == "range":
                self.range_depth -= 1
            if stop[0] == "else":
                nxt = self.peek()
                if nxt is not None and nxt.kind == "keyword" and nxt.val in ("if", "with") and kind != "range":
                    # "else if"/"else with": a nested branch that shares our {{end}}
                    self.next()
                    orelse = [self.parse_branch(nxt.val, nxt.pos)]
                else:
                    self.expect_end("else")
                    orelse, stop2 = self.parse_list(("end",))
                    self.expect_end("end")
            else:
                self.expect_end("end")
            return _Branch(kind, pipe, body, orelse, pos)
        finally:
            del self.vars[mark:]

    def parse_template(self, kw: str, pos: int) -> _TemplateCall:
        tok = self.next()
        if tok.kind != "string":
            raise self.src.error(f"unexpected {tok.val!r} in {kw} clause", tok.pos)
        name = tok.val
        pipe = None if self.peek() is None else self.pipeline(kw, allow_decl=False)
        if kw == "block":
            saved_vars, saved_depth = self.vars, self.range_depth
            self.vars, self.range_depth = ["$"], 0
            body, _ = self.parse_list(("end",))
            self.expect_end("end")
            self.vars, self.range_depth = saved_vars, saved_depth
            self.add_template(name, body, tok.pos)
        return _TemplateCall(name, pipe, pos)

    def add_template(self, name: str, body: list, pos: int) -> None:
        old = self.templates.get(name)
        if old is not None and not _is_empty(old) and not _is_empty(body):
            raise self.src.error(f'template: multiple definition of template "{name}"', pos)
        if old is None or _is_empty(old):
            self.templates[name] = body

    def parse_define(self, pos: int) -> None:
        tok = self.next()
        if tok.kind != "string":
            raise self.src.error(f"unexpected {tok.val!r} in define clause", tok.pos)
        self.expect_end("define clause")
        saved_vars, saved_depth = self.vars, self.range_depth
        self.vars, self.range_depth = ["$"], 0
        body, _ = self.parse_list(("end",))
        self.expect_end("end")
        self.vars, self.range_depth = saved_vars, saved_depth
        self.add_template(tok.val, body, tok.pos)

    # -- pipelines
    def pipeline(self, context: str, allow_decl: bool, in_paren: bool = False) -> _Pipeline:
        start_tok = self.peek()
        start = start_tok.pos if start_tok else self.action_pos
        decl: List[str] = []
        is_assign = False
        if allow_decl and self.at("variable"):
            # look ahead for "$x :=", "$x =", "$i, $v :="
            save = self.t
            names = [self.next().val]
            while self.at("op", ",") and len(self.toks) > self.t + 1 and self.toks[self.t + 1].kind == "variable":
                self.next()
                names.append(self.next().val)
            if self.at("op", ":=") or self.at("op", "="):
                op = self.next().val
                if len(names) > (2 if context == "range" else 1):
                    raise self.src.error(f"too many declarations in {context}", start)
                decl = names
                is_assign = op == "="
                for v in names:
                    if is_assign and v not in self.vars:
                        raise self.src.error(f"undefined variable {v!r}".replace("'", '"'), start)
            else:
                self.t = save
        cmds: List[_Command] = []
        while True:
            tok = self.peek()
            if tok is None or (in_paren and tok.kind == "op" and tok.val == ")"):
                break
            cmds.append(self.command(context, in_paren))
            if self.at("op", "|"):
                self.next()
                if self.peek() is None or (in_paren and self.at("op", ")")):
                    raise self.src.error("missing command after pipe", self.action_pos)
                continue
            break
        if not in_paren:
            self.expect_end(context)
        if not cmds:
            raise self.src.error(f"missing value for {context}", start)
        for later in cmds[1:]:
            first = later.args[0]
            if first.kind in ("string", "number", "bool", "nil", "dot") and not first.fields:
                raise self.src.error(f"non executable command in pipeline stage {cmds.index(later) + 1}",
                                     first.pos)
        if not is_assign:
            self.vars.extend(decl)
        end = self.toks[self.t - 1].end if self.t else start
        return _Pipeline(decl, is_assign, cmds, start, self.src.text[start:end])

    def command(self, context: str, in_paren: bool) -> _Command:
        args: List[_Operand] = []
        head = self.peek()
        start = head.pos if head is not None else self.action_pos
        while True:
            tok = self.peek()
            if tok is None or (tok.kind == "op" and tok.val in ("|", ")")):
                break
            if args and not tok.spaced and tok.kind != "op":
                raise self.src.error(f"missing space before {tok.val!r}", tok.pos)
            args.append(self.operand())
        if not args:
            tok = self.peek()
            if tok is None:
                raise self.src.error("missing value for command", self.action_pos)
            raise self.src.error(f"unexpected {tok.val!r} in operand", tok.pos)
        first = args[0]
        if first.kind == "nil" and not first.fields:
            raise self.src.error("nil is not a command", first.pos)
        end = self.toks[self.t - 1].end
        return _Command(args, start, self.src.text[start:end])

    def operand(self) -> _Operand:
        tok = self.next()
        pos = tok.pos
        fields: List[str] = []
        if tok.kind == "field":
            kind, val = "field", None
            fields.append(tok.val)
        elif tok.kind == "variable":
            if tok.val not in self.vars:
                raise self.src.error(f'undefined variable "{tok.val}"', tok.pos)
            kind, val = "variable", tok.val
        elif tok.kind == "op" and tok.val == ".":
            kind, val = "dot", None
        elif tok.kind == "identifier":
            if tok.val not in self.funcs:
                raise self.src.error(f'function "{tok.val}" not defined', tok.pos)
            kind, val = "func", tok.val
        elif tok.kind == "keyword" and tok.val in ("true", "false"):
            kind, val = "bool", tok.val == "true"
        elif tok.kind == "keyword" and tok.val == "nil":
            kind, val = "nil", None
        elif tok.kind in ("string", "number"):
            kind, val = tok.kind, tok.val
        elif tok.kind == "op" and tok.val == "(":
            kind, val = "pipe", self.pipeline("parenthesized pipeline", allow_decl=True, in_paren=True)
            if not self.at("op", ")"):
                raise self.src.error("unclosed left paren", tok.pos)
            self.next()
        else:
            raise self.src.error(f"unexpected {tok.val!r} in operand", tok.pos)
        while True:
            nxt = self.peek()
            if nxt is None or nxt.kind != "field" or nxt.spaced:
                break
            if kind in ("string", "number", "bool", "nil"):
                raise self.src.error(f"unexpected . after term {tok.val!r}", nxt.pos)
            fields.append(self.next().val)
        end = self.toks[self.t - 1].end
        return _Operand(kind, val, fields, pos, self.src.text[pos:end])


# ---------------------------------------------------------------- execution

class _Break(Exception):
    pass


class _Continue(Exception):
    pass


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


_MAX_DEPTH = 64


class _State:
    def __init__(self, src: _Src, name: str, funcs: Mapping[str, Any], templates: Dict[str, list]):
        self.src = src
        self.name = name
        self.funcs = funcs
        self.templates = templates
        self.vars: List[List[Any]] = []
        self.out: List[str] = []
        self.depth = 0
        self.node_text = ""
        self.node_pos = 0
        self.signatures: Dict[Any, Any] = {}

    def error(self, reason: str, pos: Optional[int] = None, node: Optional[str] = None) -> GoTemplateError:
        pos = self.node_pos if pos is None else pos
        line, col = self.src.where(pos)
        return GoTemplateError(reason, template=self.src.name, line=line, column=col,
                               node=self.node_text if node is None else node, executing=self.name)

    # -- variables
    def push(self, name: str, value: Any) -> None:
        self.vars.append([name, value])

    def set_var(self, name: str, value: Any) -> None:
        for entry in reversed(self.vars):
            if entry[0] == name:
                entry[1] = value
                return
        raise self.error(f"undefined variable: {name}")

    def var(self, name: str) -> Any:
        for entry in reversed(self.vars):
            if entry[0] == name:
                return entry[1]
        raise self.error(f"undefined variable: {name}")

    # -- walking
    def walk(self, dot: Any, body: list) -> None:
        for node in body:
            if isinstance(node, str):
                self.out.append(node)
            elif isinstance(node, _Action):
                value = self.eval_pipeline(dot, node.pipe)
                if not node.pipe.decl:
                    self.out.append(self.printable(value, node.pipe))
            elif isinstance(node, _Branch):
                self.walk_branch(dot, node)
            elif isinstance(node, _TemplateCall):
                self.walk_template(dot, node)
            elif isinstance(node, _LoopControl):
                raise _Break() if node.kind == "break" else _Continue()
            else:  # pragma: no cover
                raise AssertionError(node)

    def printable(self, value: Any, pipe: _Pipeline) -> str:
        if value is MISSING or value is None:
            return "<no value>"
        if callable(value) and not isinstance(value, (dict, list)):
            self.node_text, self.node_pos = pipe.text, pipe.pos
            raise self.error(f"can't print {pipe.text} of type {_go_type(value)}")
        return go_sprint(value)

    def walk_branch(self, dot: Any, node: _Branch) -> None:
        mark = len(self.vars)
        try:
            if node.kind == "range":
                self.walk_range(dot, node)
                return
            value = self.eval_pipeline(dot, node.pipe)
            if truth(value):
                self.walk(value if node.kind == "with" else dot, node.body)
            elif node.orelse is not None:
                self.walk(dot, node.orelse)
        finally:
            del self.vars[mark:]

    def walk_range(self, dot: Any, node: _Branch) -> None:
        pipe = node.pipe
        decl = pipe.decl
        # the range pipeline's variables take the elements, not the whole value
        value = self.eval_pipeline(dot, _Pipeline([], False, pipe.cmds, pipe.pos, pipe.text))
        where = pipe.cmds[0]
        if value is MISSING or value is None:
            pairs: List[Tuple[Any, Any]] = []
        elif isinstance(value, dict):
            pairs = [(k, value[k]) for k in sorted(value, key=go_key_order)]
        elif isinstance(value, (list, tuple)):
            pairs = list(enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            if len(decl) > 1:
                self.node_text, self.node_pos = where.text, where.pos
                raise self.error(f"can't use {value} to iterate over more than one variable")
            pairs = [(i, i) for i in range(value)]
        else:
            self.node_text, self.node_pos = where.text, where.pos
            raise self.error(f"range can't iterate over {go_sprint(value)}")
        if not pairs:
            if node.orelse is not None:
                self.walk(dot, node.orelse)
            return
        if not pipe.is_assign:
            for name in decl:
                self.push(name, None)
        mark = len(self.vars)
        for key, elem in pairs:
            if len(decl) == 1:
                self.set_var(decl[0], elem)
            elif len(decl) == 2:
                self.set_var(decl[0], key)
                self.set_var(decl[1], elem)
            try:
                self.walk(elem, node.body)
            except _Break:
                del self.vars[mark:]
                break
            except _Continue:
                pass
            del self.vars[mark:]

    def walk_template(self, dot: Any, node: _TemplateCall) -> None:
        body = self.templates.get(node.name)
        if body is None:
            self.node_text, self.node_pos = f'{{{{template "{node.name}"}}}}', node.pos
            raise self.error(f'no such template "{node.name}"')
        new_dot = self.eval_pipeline(dot, node.pipe) if node.pipe is not None else None
        if new_dot is MISSING:
            new_dot = None
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            self.node_text, self.node_pos = f'{{{{template "{node.name}"}}}}', node.pos
            raise self.error(f"exceeded maximum template depth ({_MAX_DEPTH})")
        saved_vars, saved_name = self.vars, self.name
        self.vars, self.name = [["$", new_dot]], node.name
        try:
            self.walk(new_dot, body)
        finally:
            self.vars, self.name = saved_vars, saved_name
            self.depth -= 1

    # -- evaluation
    def eval_pipeline(self, dot: Any, pipe: _Pipeline) -> Any:
        value: Any = _NO_FINAL
        for cmd in pipe.cmds:
            value = self.eval_command(dot, cmd, value)
        if pipe.decl:
            if pipe.is_assign:
                self.set_var(pipe.decl[0], value)
            else:
                self.push(pipe.decl[0], value)
        return value

    def eval_command(self, dot: Any, cmd: _Command, final: Any) -> Any:
        first = cmd.args[0]
        self.node_text, self.node_pos = first.text, first.pos
        if first.kind == "func":
            return self.eval_function(dot, first, cmd, final)
        if first.kind == "field":
            return self.eval_fields(dot, dot, first, cmd.args[1:], final)
        if first.kind == "variable":
            base = self.var(first.val)
            if not first.fields:
                self.not_a_function(cmd, final)
                return base
            return self.eval_fields(dot, base, first, cmd.args[1:], final)
        if first.kind == "pipe":
            base = self.eval_pipeline(dot, first.val)
            if first.fields:
                return self.eval_fields(dot, base, first, cmd.args[1:], final)
            self.not_a_function(cmd, final)
            return base
        self.not_a_function(cmd, final)
        if first.kind == "dot":
            return dot
        return first.val

    def not_a_function(self, cmd: _Command, final: Any) -> None:
        if len(cmd.args) > 1 or final is not _NO_FINAL:
            first = cmd.args[0]
            raise self.error(f"can't give argument to non-function {first.text}")

    def eval_arg(self, dot: Any, op: _Operand) -> Any:
        self.node_text, self.node_pos = op.text, op.pos
        if op.kind == "dot":
            return dot
        if op.kind in ("string", "number", "bool", "nil"):
            return op.val
        if op.kind == "variable":
            base = self.var(op.val)
            return self.eval_fields(dot, base, op, [], _NO_FINAL) if op.fields else base
        if op.kind == "field":
            return self.eval_fields(dot, dot, op, [], _NO_FINAL)
        if op.kind == "pipe":
            base = self.eval_pipeline(dot, op.val)
            return self.eval_fields(dot, base, op, [], _NO_FINAL) if op.fields else base
        if op.kind == "func":
            return self.call(op.val, self.funcs[op.val], [], dot, op)
        raise AssertionError(op.kind)  # pragma: no cover

    def eval_fields(self, dot: Any, receiver: Any, op: _Operand, args: List[_Operand], final: Any) -> Any:
        names = op.fields
        for i, name in enumerate(names):
            last = i == len(names) - 1
            receiver = self.eval_field(dot, name, op, args if last else [], final if last else _NO_FINAL,
                                       receiver)
        return receiver

    def eval_field(self, dot: Any, name: str, op: _Operand, args: List[_Operand], final: Any,
                   receiver: Any) -> Any:
        has_args = bool(args) or final is not _NO_FINAL
        if receiver is MISSING:
            return MISSING
        if isinstance(receiver, Mapping):
            if has_args:
                raise self.error(f"{name} is not a method but has arguments")
            return receiver[name] if name in receiver else MISSING
        if receiver is None:
            raise self.error(f"nil pointer evaluating interface {{}}.{name}")
        attr = getattr(receiver, name, MISSING) if not name.startswith("_") else MISSING
        if attr is MISSING:
            raise self.error(f"can't evaluate field {name} in type {_go_type(receiver)}")
        if inspect.ismethod(attr) or inspect.isbuiltin(attr):
            values = [_arg(self.eval_arg(dot, a)) for a in args]
            if final is not _NO_FINAL:
                values.append(_arg(final))
            return self.invoke(name, attr, values)
        if has_args:
            raise self.error(f"{name} has arguments but cannot be invoked as function")
        return attr

    def eval_function(self, dot: Any, first: _Operand, cmd: _Command, final: Any) -> Any:
        name = first.val
        fn = self.funcs[name]
        result = self.call(name, fn, cmd.args[1:], dot, first, final)
        if first.fields:
            return self.eval_fields(dot, result, _Operand("field", None, first.fields, first.pos, first.text),
                                    [], _NO_FINAL)
        return result

    def call(self, name: str, fn: Any, arg_ops: List[_Operand], dot: Any, op: _Operand,
             final: Any = _NO_FINAL) -> Any:
        if name in ("and", "or") and fn is _BUILTINS[name]:
            ops: List[Any] = list(arg_ops)
            if final is not _NO_FINAL:
                ops.append(("final", final))
            if not ops:
                self.node_text, self.node_pos = op.text, op.pos
                raise self.error(f"wrong number of args for {name}: want at least 1 got 0")
            value: Any = None
            for item in ops:
                value = item[1] if isinstance(item, tuple) else self.eval_arg(dot, item)
                if truth(value) == (name == "or"):
                    return value
            return value
        values = [_arg(self.eval_arg(dot, a)) for a in arg_ops]
        if final is not _NO_FINAL:
            values.append(_arg(final))
        self.node_text, self.node_pos = op.text, op.pos
        return self.invoke(name, fn, values)

    def invoke(self, name: str, fn: Callable[..., Any], values: List[Any]) -> Any:
        sig = _signature(fn, self.signatures)
        if sig is not None:
            try:
                sig.bind(*values)
            except TypeError:
                params = list(sig.parameters.values())
                want = len([p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
                variadic = any(p.kind == p.VAR_POSITIONAL for p in params)
                if variadic:
                    raise self.error(f"wrong number of args for {name}: want at least {want} "
                                     f"got {len(values)}") from None
                raise self.error(f"wrong number of args for {name}: want {want} got {len(values)}") from None
        try:
            result = fn(*values)
        except _FuncError as exc:
            raise self.error(f"error calling {name}: {exc}") from None
        except GoTemplateError:
            raise
        except RecursionError:
            raise self.error(f"error calling {name}: recursion too deep") from None
        except Exception as exc:
            raise self.error(f"error calling {name}: {exc}") from exc
        return result


# ---------------------------------------------------------------- API

def render_go(source: str, dot: Any, *, functions: Optional[Mapping[str, Callable[..., Any]]] = None,
              left: str = "{{", right: str = "}}", name: str = "template") -> str:
    """Render the Go text/template ``source`` with ``dot`` as ``.`` and ``$``.

    ``functions`` are added to (and override) the builtins and Sprig helpers.
    Raises ``GoTemplateError``.
    """
    if not left:
        left = "{{"
    if not right:
        right = "}}"
    funcs: Dict[str, Any] = dict(_SPRIG)
    funcs.update(_BUILTINS)
    if functions:
        funcs.update(functions)
    src = _Src(source, name)
    templates: Dict[str, list] = {}
    parser = _Parser(src, _lex(src, left, right), funcs, templates)
    body = parser.parse()
    templates.setdefault(name, body)
    state = _State(src, name, funcs, templates)
    state.push("$", dot)
    state.walk(dot, body)
    return "".join(state.out)
