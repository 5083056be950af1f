"""Property kinds: what one field's raw value may be, how it is normalised (``coerce``)
and which parts of it are templates (``render``).

A ``Field`` (``ccm.model.resource``) names its kind; ``ccm.resources.properties`` calls
``kind.coerce`` while building a property set and ``kind.render`` in the field's
template phase, handing in a ``TextRenderer`` (the template engine stays out of the
contracts). Adding a kind is one class here; nothing else switches on kinds.
"""
from __future__ import annotations

from ccm.model.errors import ValidationError, did_you_mean
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence

HEALTH_CHECK_KEYS = ("command", "goss_rules", "name", "format", "tries", "try_sleep", "timeout")
HEALTH_CHECK_TEMPLATED = ("command", "name", "timeout", "try_sleep", "format")
CONTROL_KEYS = ("if", "unless")
REGISTRATION_KEYS = ("cluster", "service", "protocol", "address", "port", "priority", "ttl", "annotations")


class TextRenderer(Protocol):
    """Renders templates inside values (implemented by ``ccm.resources.properties``)."""

    def text(self, value: Any, where: str, typed: bool = False) -> Any: ...

    def tree(self, value: Any, where: str, typed_keys: bool = False) -> Any: ...


def type_name(v: Any) -> str:
    """How an error message names a YAML/JSON value's type."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    return type(v).__name__


def scalar_text(v: Any, key: str) -> str:
    """A scalar as the text the user wrote (``mode: 0644`` stays ``"0644"``)."""
    if isinstance(v, str):
        return v
    from ccm.model.textint import TextInt

    if isinstance(v, TextInt):   # an integer as written in YAML (mode: 0644 -> "0644")
        return v.text
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    raise ValidationError(f"expected a string, got a {type_name(v)}", field=key)


def check_keys(d: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    for k in d:
        if k not in allowed:
            raise ValidationError(f"unknown property {k!r}{did_you_mean(k, allowed)}", field=where)


class Kind:
    """A field kind. ``coerce`` type-checks and normalises a raw (non-None) value;
    ``render`` renders the templated parts of a coerced value (default: none)."""

    name = "any"

    def coerce(self, value: Any, key: str) -> Any:
        return value

    def render(self, value: Any, key: str, r: TextRenderer, typed_keys: bool = False) -> Any:
        return value

    def __repr__(self) -> str:
        return self.name


class StrKind(Kind):
    name = "str"

    def coerce(self, value: Any, key: str) -> Any:
        return scalar_text(value, key)

    def render(self, value: Any, key: str, r: TextRenderer, typed_keys: bool = False) -> Any:
        return r.text(value, key)


class BoolKind(Kind):
    name = "bool"

    def coerce(self, value: Any, key: str) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ValidationError(f"expected a boolean, got a {type_name(value)}", field=key)


class IntKind(Kind):
    name = "int"

    def coerce(self, value: Any, key: str) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and (value.strip().lstrip("-").isascii() and value.strip().lstrip("-").isdigit()):
            return _to_int(value, key, "expected an integer")
        raise ValidationError(f"expected an integer, got a {type_name(value)}", field=key)


def _to_int(text: str, key: str, expected: str) -> int:
    """``int(text)`` for a string of digits; one more than Python converts (4300 by
    default) is a validation error naming the field, not a ValueError."""
    try:
        return int(text)
    except ValueError:
        raise ValidationError(f"{expected}, found a number of {len(text.strip().lstrip('-'))} digits "
                              f"(too long)", field=key) from None


class StrListKind(Kind):
    name = "str_list"

    def coerce(self, value: Any, key: str) -> Any:
        if not isinstance(value, list):
            raise ValidationError(f"expected a list of strings, got a {type_name(value)}", field=key)
        return [scalar_text(x, key) for x in value]

    def render(self, value: Any, key: str, r: TextRenderer, typed_keys: bool = False) -> Any:
        return [r.text(v, f"{key}[{i}]") for i, v in enumerate(value)]


class IntListKind(Kind):
    name = "int_list"

    def coerce(self, value: Any, key: str) -> Any:
        items = value if isinstance(value, list) else [value]
        out: List[int] = []
        for x in items:
            if isinstance(x, bool) or not isinstance(x, (int, str)) or (
                    isinstance(x, str) and not (x.lstrip("-").isascii() and x.lstrip("-").isdigit())):
                raise ValidationError(f"expected a list of integers, found {x!r}", field=key)
            out.append(int(x) if isinstance(x, int) else _to_int(x, key, "expected a list of integers"))
        return out


class StrMapKind(Kind):
    """string -> string; values templated in string mode."""

    name = "str_map"

    def coerce(self, value: Any, key: str) -> Any:
        if not isinstance(value, dict):
            raise ValidationError(f"expected a map, got a {type_name(value)}", field=key)
        return {str(k): scalar_text(x, f"{key}.{k}") for k, x in value.items()}

    def render(self, value: Any, key: str, r: TextRenderer, typed_keys: bool = False) -> Any:
        return {k: r.text(v, f"{key}[{k}]") for k, v in value.items()}


class AnyMapKind(Kind):
    """A free-form map; values templated in typed mode (keys too with ``typed_keys``)."""

    name = "any_map"

    def coerce(self, value: Any, key: str) -> Any:
        if not isinstance(value, dict):
            raise ValidationError(f"expected a map, got a {type_name(value)}", field=key)
        return value

    def render(self, value: Any, key: str, r: TextRenderer, typed_keys: bool = False) -> Any:
        return r.tree(value, key, typed_keys)


class PostListKind(Kind):
    """A list of single-key maps glob -> command."""

    name = "post_list"

    def coerce(self, value: Any, key: str) -> Any:
        if not isinstance(value, list):
            raise ValidationError(f"expected a list of single-key maps, got a {type_name(value)}", field=key)
        out: List[Dict[str, str]] = []
        for i, item in enumerate(value):
            if not isinstance(item, dict) or len(item) != 1:
                raise ValidationError(f"entry {i + 1} must be a map with exactly one key", field=key)
            (k, x), = item.items()
            out.append({str(k): scalar_text(x, f"{key}[{i}]")})
        return out

    def render(self, value: Any, key: str, r: TextRenderer, typed_keys: bool = False) -> Any:
        return [{k: r.text(v, f"{key}[{i}][{k}]") for k, v in item.items()} for i, item in enumerate(value)]


class HealthChecksKind(Kind):
    """``health_checks``: a list of check maps (their rules: ``ccm.healthcheck.rules``)."""

    name = "health_checks"

    def coerce(self, value: Any, key: str) -> Any:
        if not isinstance(value, list):
            raise ValidationError(f"expected a list of health checks, got a {type_name(value)}", field=key)
        checks: List[Dict[str, Any]] = []
        for i, item in enumerate(value):
            where = f"{key}[{i}]"
            if not isinstance(item, dict):
                raise ValidationError(f"expected a map, got a {type_name(item)}", field=where)
            check_keys(item, HEALTH_CHECK_KEYS, where)
            check: Dict[str, Any] = {}
            for hk, hv in item.items():
                if hv is None:
                    continue
                if hk == "goss_rules":
                    if not isinstance(hv, (dict, str)):
                        raise ValidationError(f"expected a map, got a {type_name(hv)}", field=f"{where}.goss_rules")
                    check[hk] = hv
                elif hk == "tries":
                    check[hk] = INT.coerce(hv, f"{where}.tries")
                else:
                    check[hk] = scalar_text(hv, f"{where}.{hk}")
            checks.append(check)
        return checks

    def render(self, value: Any, key: str, r: TextRenderer, typed_keys: bool = False) -> Any:
        out = []
        for i, check in enumerate(value):
            c = dict(check)
            for hk in HEALTH_CHECK_TEMPLATED:
                if hk in c:
                    c[hk] = r.text(c[hk], f"{key}[{i}].{hk}")
            out.append(c)
        return out


class ControlKind(Kind):
    """``control``: ``if``/``unless`` expressions (never templated)."""

    name = "control"

    def coerce(self, value: Any, key: str) -> Any:
        if not isinstance(value, dict):
            raise ValidationError(f"expected a map with if/unless, got a {type_name(value)}", field=key)
        check_keys(value, CONTROL_KEYS, key)
        return {k: scalar_text(x, f"{key}.{k}") for k, x in value.items() if x is not None}


class RegistrationsKind(Kind):
    """``register_when_stable``: registration entries."""

    name = "registrations"

    def coerce(self, value: Any, key: str) -> Any:
        if not isinstance(value, list):
            raise ValidationError(f"expected a list of registration entries, got a {type_name(value)}", field=key)
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise ValidationError(f"expected a map, got a {type_name(item)}", field=f"{key}[{i}]")
            check_keys(item, REGISTRATION_KEYS, f"{key}[{i}]")
        return value

    def render(self, value: Any, key: str, r: TextRenderer, typed_keys: bool = False) -> Any:
        out = []
        for i, entry in enumerate(value):
            e = dict(entry)
            for rk in ("cluster", "service", "protocol", "address"):
                if rk in e:
                    e[rk] = r.text(e[rk], f"{key}[{i}].{rk}")
            if "port" in e:
                e["port"] = r.text(e["port"], f"{key}[{i}].port", typed=True)
            if isinstance(e.get("annotations"), dict):
                e["annotations"] = {k: r.text(v, f"{key}[{i}].annotations[{k}]")
                                    for k, v in e["annotations"].items()}
            out.append(e)
        return out


STR = StrKind()
BOOL = BoolKind()
INT = IntKind()
STR_LIST = StrListKind()
INT_LIST = IntListKind()
STR_MAP = StrMapKind()
ANY_MAP = AnyMapKind()
POST_LIST = PostListKind()
HEALTH_CHECKS = HealthChecksKind()
CONTROL = ControlKind()
REGISTRATIONS = RegistrationsKind()
ANY = Kind()

KINDS: Dict[str, Kind] = {k.name: k for k in (STR, BOOL, INT, STR_LIST, INT_LIST, STR_MAP, ANY_MAP, POST_LIST,
                                              HEALTH_CHECKS, CONTROL, REGISTRATIONS, ANY)}


def kind_named(kind: Any) -> Kind:
    """A ``Kind`` from itself or its name (``Field("x", "str_list")``)."""
    if isinstance(kind, Kind):
        return kind
    found: Optional[Kind] = KINDS.get(str(kind))
    if found is None:
        raise ValueError(f"unknown field kind {kind!r}")
    return found
