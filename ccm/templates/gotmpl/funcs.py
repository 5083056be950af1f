"""text/template's builtins (``and or not eq ... call``), ``printf`` and the Sprig helpers."""
from __future__ import annotations

import base64
import math
import urllib.parse
from typing import Any, Callable, Dict, List, Optional, Tuple

from ccm.templates.gofmt import go_float, go_key_order, go_sprint, is_number
from ccm.templates.gotmpl.values import MISSING, _go_type, truth


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
            while i < n and fmt[i].isdigit():
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
                while i < n and fmt[i].isdigit():
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
