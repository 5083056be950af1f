"""Sprig's defaults, JSON, flow control and reflection (docs/defaults.md, flow_control.md,
reflection.md), plus Helm's ``required``.

``toJson``/``toPrettyJson`` are ``encoding/json`` (map keys sorted, ``<>&`` escaped; a
time as RFC 3339, a duration as nanoseconds); ``toRawJson`` keeps ``<>&``; ``fromJson``
numbers are float64. The plain variants return ``""`` (``fromJson``: nil) where the ``must``
variants fail. ``typeOf`` is Go's ``%T`` of the value's Go type (``int``, ``float64``,
``[]interface {}``, ``map[string]interface {}``, ``[]string`` from ``splitList``, ``int64``
from ``add``, ``time.Time`` ...).
"""
from __future__ import annotations


from ccm.gocompat import json as gojson
from ccm.gocompat.gotypes import kind_name, type_name
from ccm.templates.gotmpl.gofunc import Row, returns
from ccm.templates.gotmpl.sprig_lists import deep_equal, empty
from ccm.templates.gotmpl.values import FuncError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


def _json_key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bool) or not isinstance(k, int):
        raise ValueError(f"json: unsupported type: map[{type_name(k)}]interface {{}}")
    return str(int(k))


def _to_json(indent: Any = None, escape: bool = True) -> Any:
    def encode(v: Any) -> str:
        try:
            return gojson.dumps(v, indent=indent, key=_json_key, default=gojson.go_default, escape_html=escape)
        except ValueError as err:
            raise FuncError(str(err)) from None
        except RecursionError:
            raise FuncError("json: unsupported value: encountered a cycle") from None
    return encode


def _from_json(text: str) -> Any:
    try:
        return gojson.loads(text)
    except ValueError as err:
        raise FuncError(str(err)) from None


def _default(d: Any, *given: Any) -> Any:
    if not given or empty(given[0]):
        return d
    return given[0]


def _coalesce(*values: Any) -> Any:
    return next((v for v in values if not empty(v)), None)


def _fail(message: str) -> str:
    raise FuncError(message)


def _required(message: str, value: Any) -> Any:
    """Helm's ``required``: fail with ``message`` when ``value`` is nil or ``""``."""
    if value is None or value == "":
        raise FuncError(message)
    return value


def _type_is_like(target: str, v: Any) -> bool:
    t = type_name(v)
    return target == t or "*" + target == t


ROWS = [
    # defaults.md
    Row("default", _default, "a*a"),
    Row("empty", empty, "a"),
    Row("coalesce", _coalesce, "*a"),
    Row("all", lambda *a: all(not empty(v) for v in a), "*a"),
    Row("any", lambda *a: any(not empty(v) for v in a), "*a"),
    Row("fromJson", _from_json, "s", must="mustFromJson", lenient=returns(None)),
    Row("toJson", _to_json(), "a", must="mustToJson", lenient=returns("")),
    Row("toPrettyJson", _to_json(2), "a", must="mustToPrettyJson", lenient=returns("")),
    Row("toRawJson", _to_json(None, escape=False), "a", must="mustToRawJson"),
    Row("ternary", lambda vt, vf, v: vt if v else vf, "aab"),
    # flow_control.md, and Helm's required
    Row("fail", _fail, "s"),
    Row("required", _required, "sa"),
    # reflection.md
    Row("typeOf", type_name, "a"),
    Row("typeIs", lambda target, v: target == type_name(v), "sa"),
    Row("typeIsLike", _type_is_like, "sa"),
    Row("kindOf", kind_name, "a"),
    Row("kindIs", lambda target, v: target == kind_name(v), "sa"),
    Row("deepEqual", deep_equal, "aa"),
]
