"""JSON text exactly as Go's ``encoding/json`` writes it.

Upstream prints JSON with Go's encoder (``ccm facts``, ``hiera parse``, ``toJSON()``,
Jet's and Go templates' ``json``/``toJson``), and users diff that output, so ours
matches: ``<``, ``>``, ``&``, U+2028 and U+2029 escaped; floats in Go's form (``2400``
for 2400.0, ``1e-7``, ``1e+21``); map keys sorted by their bytes unless the caller keeps
insertion order; ``json.MarshalIndent`` layout when indented. Standard library only.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional

from ccm.gocompat.gotypes import GoValue, type_name


def json_float(value: float) -> str:
    """A float as Go's encoding/json writes it (exponent only outside [1e-6, 1e21))."""
    if math.isnan(value) or math.isinf(value):
        shown = 'NaN' if math.isnan(value) else ('+Inf' if value > 0 else '-Inf')
        raise ValueError(f"json: unsupported value: {shown}")
    if value == 0:
        return "0" if math.copysign(1.0, value) > 0 else "-0"
    if 1e-6 <= abs(value) < 1e21:
        text = format(Decimal(repr(value)), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    mantissa, _, exp = repr(value).partition("e")
    if mantissa.endswith(".0"):
        mantissa = mantissa[:-2]
    sign = "-" if exp.startswith("-") else "+"
    return f"{mantissa}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"


def string(text: str, escape_html: bool = True) -> str:
    """A JSON string literal as Go writes it (``SetEscapeHTML(false)``: ``<>&`` kept)."""
    out = json.dumps(text, ensure_ascii=False)
    if escape_html:
        out = out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return out.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def go_default(value: Any) -> Any:
    """A ``default`` for ``dumps``: Go values (times, durations ...) as Go encodes them, sets
    as lists; anything else is Go's ``json: unsupported type`` error."""
    if isinstance(value, GoValue):
        return value.json_value()
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise ValueError(f"json: unsupported type: {type_name(value)}")


def dumps(value: Any, *, indent: Optional[int] = None, sort_keys: bool = True,
          key: Callable[[Any], str] = str, default: Optional[Callable[[Any], Any]] = None,
          escape_html: bool = True) -> str:
    """Encode ``value``. ``indent`` spaces per level (None: compact ``json.Marshal``).

    ``key`` turns map keys into strings; ``default`` converts values of other types into
    something encodable (raise to refuse them); ``escape_html=False`` is an encoder with
    ``SetEscapeHTML(false)``. Unsupported values raise ``ValueError``.
    """
    out: List[str] = []
    _encode(value, out, 0, indent, sort_keys, key, default, escape_html)
    return "".join(out)


def _encode(value: Any, out: List[str], level: int, indent: Optional[int], sort_keys: bool,
            key: Callable[[Any], str], default: Optional[Callable[[Any], Any]], html: bool = True) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append(json_float(value))
    elif isinstance(value, str):
        out.append(string(value, html))
    elif isinstance(value, Mapping):
        items = [(key(k), v) for k, v in value.items()]
        if sort_keys:
            items.sort(key=lambda kv: kv[0].encode("utf-8"))
        _container("{", "}", items, out, level, indent, sort_keys, key, default, html)
    elif isinstance(value, (list, tuple)):
        _container("[", "]", [(None, v) for v in value], out, level, indent, sort_keys, key, default, html)
    elif default is not None:
        converted = default(value)
        if type(converted) is type(value):
            raise ValueError(f"json: unsupported type: {type(value).__name__}")
        _encode(converted, out, level, indent, sort_keys, key, default, html)
    else:
        raise ValueError(f"json: unsupported type: {type(value).__name__}")


def _container(open_: str, close: str, items: List[Any], out: List[str], level: int,
               indent: Optional[int], sort_keys: bool, key: Callable[[Any], str],
               default: Optional[Callable[[Any], Any]], html: bool) -> None:
    if not items:
        out.append(open_ + close)
        return
    out.append(open_)
    pad = None if indent is None else "\n" + " " * (indent * (level + 1))
    for i, (k, v) in enumerate(items):
        if i:
            out.append(",")
        if pad is not None:
            out.append(pad)
        if k is not None:
            out.append(string(k, html) + (": " if indent is not None else ":"))
        _encode(v, out, level + 1, indent, sort_keys, key, default, html)
    if indent is not None:
        out.append("\n" + " " * (indent * level))
    out.append(close)


def _reject_constant(name: str) -> Any:
    raise json.JSONDecodeError("Expecting value", name, 0)


_CONTEXT = {"Expecting value": "looking for beginning of value",
            "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
            "Expecting ':' delimiter": "after object key",
            "Extra data": "after top-level value"}


def _innermost(doc: str, pos: int) -> str:
    """The bracket open at ``pos`` (``{`` or ``[``), skipping strings."""
    stack: List[str] = []
    in_string = escaped = False
    for ch in doc[:pos]:
        if in_string:
            escaped = not escaped and ch == "\\"
            in_string = escaped or ch != '"'
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append(ch)
        elif ch in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _go_decode_error(err: "json.JSONDecodeError") -> str:
    doc, pos = err.doc, err.pos
    if pos >= len(doc.rstrip()) and err.msg != "Extra data":
        return "unexpected end of JSON input"
    ch = doc[pos] if pos < len(doc) else ""
    if err.msg.startswith("Invalid control character"):
        return f"invalid character {_rune(ch)} in string literal"
    if err.msg.startswith("Invalid \\escape") or err.msg.startswith("Invalid \\u"):
        return f"invalid character {_rune(doc[pos + 1] if pos + 1 < len(doc) else ch)} in string escape code"
    if err.msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    context = _CONTEXT.get(err.msg)
    if context is None:   # "Expecting ',' delimiter"
        context = "after array element" if _innermost(doc, pos) == "[" else "after object key:value pair"
    return f"invalid character {_rune(ch)} {context}"


def _rune(ch: str) -> str:
    from ccm.gocompat.strconv import quote_rune
    return quote_rune(ord(ch)) if ch else "''"


def loads(text: str) -> Any:
    """Decode like Go's ``json.Unmarshal`` into ``interface{}``: numbers become floats,
    ``NaN``/``Infinity`` are refused; errors carry Go's messages (``ValueError``)."""
    try:
        return json.loads(text, parse_int=float, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise ValueError(_go_decode_error(err)) from None
    except RecursionError:
        raise ValueError("exceeded max depth") from None
