"""Go's ``fmt`` for plain data values (None, bool, int, float, str, lists, maps).

``go_sprint`` is ``fmt.Sprint`` (``%v``): the text upstream writes, so a file we render
is byte-for-byte the file upstream renders; ``go_sprintf`` is ``fmt.Sprintf`` with the
verbs templates use and Go's ``%!v(...)`` complaints; ``go_print``/``go_println`` are
``Sprint``/``Sprintln`` of several operands; ``go_float`` is ``%v`` of a float;
``go_key_order`` is Go's map-key order (fmt and ``range``); ``go_type_name`` names a
value's Go type for messages. Not: a general ``%v`` for arbitrary objects (they fall back
to ``str()``). Standard library only.
"""
from __future__ import annotations

import math
from decimal import Decimal

from ccm.gocompat.gotypes import type_name
from ccm.gocompat.strconv import quote, quote_rune
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Optional, Tuple

__all__ = ["go_sprint", "go_sprintf", "go_print", "go_println", "go_float", "go_key_order",
           "go_type_name", "is_number"]


def _shortest(value: float) -> Tuple[bool, str, int]:
    """(negative, significant digits, decimal exponent of the first digit) of a finite non-zero float."""
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(str(d) for d in digit_tuple).rstrip("0") or "0"
    # Decimal(repr) may carry trailing zeros ("100.0" -> 1000e-1), so derive the
    # exponent from the original digit count
    assert isinstance(exponent, int)   # finite: not "n"/"N"/"F"
    return bool(sign), digits, len(digit_tuple) + exponent - 1


def _exponent_form(digits: str, exp10: int, min_exp_digits: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    esign = "-" if exp10 < 0 else "+"
    return f"{mantissa}e{esign}{abs(exp10):0{min_exp_digits}d}"


def _plain_form(digits: str, exp10: int) -> str:
    if exp10 < 0:
        return f"0.{'0' * (-exp10 - 1)}{digits}"
    int_len = exp10 + 1
    if len(digits) <= int_len:
        return digits + "0" * (int_len - len(digits))
    return f"{digits[:int_len]}.{digits[int_len:]}"


def go_float(value: float) -> str:
    """Format a float like Go's ``%v`` (``strconv.FormatFloat(f, 'g', -1, 64)``).

    Shortest round-trip digits; exponent form (at least two exponent digits)
    when the decimal exponent is below -4 or at least 6, as Go's shortest ``%g``.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    negative, digits, exp10 = _shortest(value)
    prefix = "-" if negative else ""
    if exp10 < -4 or exp10 >= 6:
        return prefix + _exponent_form(digits, exp10, 2)
    return prefix + _plain_form(digits, exp10)


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def go_type_name(v: Any) -> str:
    """The Go type upstream would report for a value (``%T``, error messages)."""
    return type_name(v)


def go_key_order(key: Any) -> Tuple[int, Any]:
    """Go's map-key order: keys of one kind by value (strings by bytes); kinds grouped."""
    if isinstance(key, bool):
        return (0, key)
    if isinstance(key, (int, float)):
        return (1, key)
    if isinstance(key, str):
        return (2, key.encode("utf-8"))
    return (3, str(key))


def _write(value: Any, out: List[str]) -> None:
    if value is None:
        out.append("<nil>")
    elif isinstance(value, str):
        out.append(value)
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(go_float(value))
    elif isinstance(value, dict):
        out.append("map[")
        for i, key in enumerate(sorted(value, key=go_key_order)):
            if i:
                out.append(" ")
            _write(key, out)
            out.append(":")
            _write(value[key], out)
        out.append("]")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(" ")
            _write(item, out)
        out.append("]")
    elif isinstance(value, (bytes, bytearray)):
        out.append(value.decode("utf-8", "replace"))
    else:
        out.append(str(value))


def go_sprint(value: Any) -> str:
    """Return ``value`` as Go's ``fmt.Sprint`` would print it."""
    if isinstance(value, str):
        return value
    out: List[str] = []
    _write(value, out)
    return "".join(out)


def _bad(verb: str, v: Any) -> str:
    if v is None:
        return f"%!{verb}(<nil>)"
    return f"%!{verb}({go_type_name(v)}={go_sprint(v)})"


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
        return _pad(quote_rune(v), spec)
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
            body = quote(s, ascii_only=spec.plus)
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
    if v is None:
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
            out.append(_pad(go_type_name(arg), spec))
        elif verb not in "vsdqxXobcUeEfFgGt":
            out.append(_bad(verb, arg))
        else:
            out.append(_fmt_value(arg, verb, spec))
    if argi < len(args):
        extra = ", ".join(
            "<nil>" if a is None else f"{go_type_name(a)}={go_sprint(a)}" for a in args[argi:])
        out.append(f"%!(EXTRA {extra})")
    return "".join(out)


def go_print(*args: Any) -> str:
    """Go's ``fmt.Sprint`` of several operands: a space between two non-strings."""
    out: List[str] = []
    prev_str = True
    for i, a in enumerate(args):
        is_str = isinstance(a, str)
        if i > 0 and not is_str and not prev_str:
            out.append(" ")
        out.append(go_sprint(a))
        prev_str = is_str
    return "".join(out)


def go_println(*args: Any) -> str:
    """Go's ``fmt.Sprintln``."""
    return " ".join(go_sprint(a) for a in args) + "\n"
