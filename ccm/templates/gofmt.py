"""Go's rules for plain data values, shared by the expression language and both template
engines (Jet, Go text/template).

What: ``go_sprint`` turns the values expressions produce (None, bool, int, float, str,
lists, maps) into exactly the text upstream's ``fmt.Sprint`` writes, so a file we render
is byte-for-byte the file upstream renders; ``go_key_order`` is Go's map-key order (fmt
and ``range``); ``go_type_name`` names a value's Go type for error messages;
``decode_go_escapes`` reads Go string-literal escapes. Not: a general ``%v`` for
arbitrary objects; anything else falls back to ``str()``.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, List

__all__ = ["go_sprint", "go_float", "go_key_order", "go_type_name", "is_number", "decode_go_escapes",
           "EscapeError"]


def _shortest(value: float) -> tuple:
    """(negative, significant digits, decimal exponent of the first digit) of a finite non-zero float."""
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(str(d) for d in digit_tuple).rstrip("0") or "0"
    # Decimal(repr) may carry trailing zeros ("100.0" -> 1000e-1), so derive the
    # exponent from the original digit count
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
    """The Go type upstream would report for a plain value (error messages)."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "[]interface {}"
    if isinstance(v, dict):
        return "map[string]interface {}"
    if callable(v):
        return "func"
    return type(v).__name__


class EscapeError(ValueError):
    """A bad escape in a Go string literal; ``sequence`` is set for an unknown escape."""

    def __init__(self, sequence: str = ""):
        self.sequence = sequence
        super().__init__(f"unknown escape \\{sequence}" if sequence else "invalid escape")


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'",
                   "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def decode_go_escapes(body: str) -> str:
    """The text of a double-quoted Go string literal's body (``\\n``, ``\\x41``, ``\\101``...)."""
    if "\\" not in body:
        return body
    out: List[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = body[i + 1:i + 2]
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            i += 2
            continue
        if e in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits, start, base = body[i + 2:i + 2 + width], i + 2, 16
        elif (e.isascii() and e.isdigit()):
            width, digits, start, base = 3, body[i + 1:i + 4], i + 1, 8
        else:
            raise EscapeError(e)
        try:
            if len(digits) != width:
                raise ValueError
            out.append(chr(int(digits, base)))
        except ValueError:
            raise EscapeError() from None
        i = start + width
    return "".join(out)


def go_key_order(key: Any) -> tuple:
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
