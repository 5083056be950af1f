"""Building a validated ``Properties`` from raw YAML/JSON values, and templating it.

One generic walker serves every type, driven by the type's ``Field`` declarations:
unknown keys are rejected, values are type-checked, defaults applied, templates
rendered in the right phase (parse time or deferred), and the type's own rules run.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional

from ccm.model.durations import DurationError, parse_duration
from ccm.model.errors import TemplateError, ValidationError, did_you_mean
from ccm.model.resource import (ANY_MAP, BOOL, CONTROL, CONTROL_KEYS, DEFERRED, HEALTH_CHECK_KEYS, HEALTH_CHECKS,
                                INT, INT_LIST, POST_LIST, REGISTRATIONS, STR, STR_LIST, STR_MAP, Field,
                                Properties, is_templated, parse_ref)

def _templates():
    # The template engine (and the expression compiler behind it) is imported only when a
    # value actually holds a template: plain manifests never pay for it.
    from ccm import templates

    return templates


def _expr():
    from ccm import expr

    return expr


REGISTRATION_KEYS = ("cluster", "service", "protocol", "address", "port", "priority", "ttl", "annotations")
HEALTH_CHECK_TEMPLATED = ("command", "name", "timeout", "try_sleep", "format")


def _type_name(v: Any) -> str:
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


def _scalar_text(v: Any, key: str) -> str:
    if isinstance(v, str):
        return v
    text = getattr(v, "text", None)   # an integer as written in YAML (mode: 0644 -> "0644")
    if isinstance(text, str):
        return text
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    raise ValidationError(f"expected a string, got a {_type_name(v)}", field=key)


def _check_keys(d: Mapping[str, Any], allowed, where: str) -> None:
    for k in d:
        if k not in allowed:
            raise ValidationError(f"unknown property {k!r}{did_you_mean(k, allowed)}", field=where)


def coerce(f: Field, v: Any) -> Any:
    """Type-check one raw value against its field kind; returns the normalised value."""
    key = f.key
    if v is None:
        return None
    kind = f.kind
    if kind == STR:
        return _scalar_text(v, key)
    if kind == BOOL:
        if isinstance(v, bool):
            return v
        if isinstance(v, str) and v.lower() in ("true", "false"):
            return v.lower() == "true"
        raise ValidationError(f"expected a boolean, got a {_type_name(v)}", field=key)
    if kind == INT:
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            return int(v)
        raise ValidationError(f"expected an integer, got a {_type_name(v)}", field=key)
    if kind == STR_LIST:
        if not isinstance(v, list):
            raise ValidationError(f"expected a list of strings, got a {_type_name(v)}", field=key)
        return [_scalar_text(x, key) for x in v]
    if kind == INT_LIST:
        if not isinstance(v, list):
            v = [v]
        out = []
        for x in v:
            if isinstance(x, bool) or not isinstance(x, (int, str)) or (isinstance(x, str) and not x.lstrip("-").isdigit()):
                raise ValidationError(f"expected a list of integers, found {x!r}", field=key)
            out.append(int(x))
        return out
    if kind == STR_MAP:
        if not isinstance(v, dict):
            raise ValidationError(f"expected a map, got a {_type_name(v)}", field=key)
        return {str(k): _scalar_text(x, f"{key}.{k}") for k, x in v.items()}
    if kind == ANY_MAP:
        if not isinstance(v, dict):
            raise ValidationError(f"expected a map, got a {_type_name(v)}", field=key)
        return v
    if kind == POST_LIST:
        if not isinstance(v, list):
            raise ValidationError(f"expected a list of single-key maps, got a {_type_name(v)}", field=key)
        out_list = []
        for i, item in enumerate(v):
            if not isinstance(item, dict) or len(item) != 1:
                raise ValidationError(f"entry {i + 1} must be a map with exactly one key", field=key)
            (k, x), = item.items()
            out_list.append({str(k): _scalar_text(x, f"{key}[{i}]")})
        return out_list
    if kind == HEALTH_CHECKS:
        if not isinstance(v, list):
            raise ValidationError(f"expected a list of health checks, got a {_type_name(v)}", field=key)
        checks = []
        for i, item in enumerate(v):
            where = f"{key}[{i}]"
            if not isinstance(item, dict):
                raise ValidationError(f"expected a map, got a {_type_name(item)}", field=where)
            _check_keys(item, HEALTH_CHECK_KEYS, where)
            check: Dict[str, Any] = {}
            for hk, hv in item.items():
                if hv is None:
                    continue
                if hk == "goss_rules":
                    if not isinstance(hv, (dict, str)):
                        raise ValidationError(f"expected a map, got a {_type_name(hv)}", field=f"{where}.goss_rules")
                    check[hk] = hv
                elif hk == "tries":
                    check[hk] = coerce(Field(f"{where}.tries", INT), hv)
                else:
                    check[hk] = _scalar_text(hv, f"{where}.{hk}")
            checks.append(check)
        return checks
    if kind == CONTROL:
        if not isinstance(v, dict):
            raise ValidationError(f"expected a map with if/unless, got a {_type_name(v)}", field=key)
        _check_keys(v, CONTROL_KEYS, key)
        return {k: _scalar_text(x, f"{key}.{k}") for k, x in v.items() if x is not None}
    if kind == REGISTRATIONS:
        if not isinstance(v, list):
            raise ValidationError(f"expected a list of registration entries, got a {_type_name(v)}", field=key)
        for i, item in enumerate(v):
            if not isinstance(item, dict):
                raise ValidationError(f"expected a map, got a {_type_name(item)}", field=f"{key}[{i}]")
            _check_keys(item, REGISTRATION_KEYS, f"{key}[{i}]")
        return v
    return v


def build(spec: Any, raw: Mapping[str, Any], *, label: Optional[str] = None) -> Properties:
    """Raw mapping -> ``Properties``: unknown keys rejected, kinds checked, defaults set.

    Templates are not rendered here (see ``render_parse_time``) and the type's rules are
    not run (see ``validate``), so callers can template first, as upstream does.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ValidationError(f"properties must be a map, got a {_type_name(raw)}", resource=label)
    fields = spec.all_fields
    fmap = {f.key: f for f in fields}
    values: Dict[str, Any] = {}
    try:
        for k, v in raw.items():
            f = fmap.get(k)
            if f is None:
                raise ValidationError(f"unknown property {k!r}{did_you_mean(k, fmap)}")
            values[k] = coerce(f, v)
    except ValidationError as exc:
        raise exc.with_resource(label or f"{spec.name}#{raw.get('name', '?')}")
    for f in fields:
        if values.get(f.key) is None and f.default is not None:
            values[f.key] = list(f.default) if isinstance(f.default, (list, tuple)) else f.default
    if not values.get("ensure") and spec.default_ensure:
        values["ensure"] = spec.default_ensure
    if spec.prepare is not None:
        spec.prepare(values)
    return Properties(spec.name, values, fields)


# --- templates ---------------------------------------------------------------------------

def _render_str(text: Any, env: Mapping[str, Any], where: str, typed: bool = False) -> Any:
    if not is_templated(text):
        return text
    templates = _templates()
    if not templates.has_expressions(text):
        return text
    try:
        return templates.render_typed(text, env) if typed else templates.render_string(text, env)
    except TemplateError as exc:
        raise TemplateError(f"resolving field {where}: {exc}") from exc


def _render_any(value: Any, env: Mapping[str, Any], where: str, typed_keys: bool = False) -> Any:
    if isinstance(value, str):
        return _render_str(value, env, where, typed=True)
    if isinstance(value, list):
        return [_render_any(v, env, f"{where}[{i}]", typed_keys) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            nk = _render_str(k, env, f"{where}[{k}]") if typed_keys else k
            out[nk] = _render_any(v, env, f"{where}[{k}]", typed_keys)
        return out
    return value


def render_field(f: Field, value: Any, env: Mapping[str, Any]) -> Any:
    key = f.key
    if value is None:
        return None
    kind = f.kind
    if kind == STR:
        return _render_str(value, env, key)
    if kind == STR_LIST:
        return [_render_str(v, env, f"{key}[{i}]") for i, v in enumerate(value)]
    if kind == STR_MAP:
        return {k: _render_str(v, env, f"{key}[{k}]") for k, v in value.items()}
    if kind == POST_LIST:
        return [{k: _render_str(v, env, f"{key}[{i}][{k}]") for k, v in item.items()} for i, item in enumerate(value)]
    if kind == ANY_MAP:
        return _render_any(value, env, key, f.typed_keys)
    if kind == HEALTH_CHECKS:
        out = []
        for i, check in enumerate(value):
            c = dict(check)
            for hk in HEALTH_CHECK_TEMPLATED:
                if hk in c:
                    c[hk] = _render_str(c[hk], env, f"{key}[{i}].{hk}")
            out.append(c)
        return out
    if kind == REGISTRATIONS:
        out = []
        for i, entry in enumerate(value):
            e = dict(entry)
            for rk in ("cluster", "service", "protocol", "address"):
                if rk in e:
                    e[rk] = _render_str(e[rk], env, f"{key}[{i}].{rk}")
            if "port" in e:
                e["port"] = _render_str(e["port"], env, f"{key}[{i}].port", typed=True)
            if isinstance(e.get("annotations"), dict):
                e["annotations"] = {k: _render_str(v, env, f"{key}[{i}].annotations[{k}]") for k, v in e["annotations"].items()}
            out.append(e)
        return out
    return value


def render_phase(props: Properties, env: Mapping[str, Any], phase: str) -> None:
    """Render every field of ``phase`` (PARSE or DEFERRED) in place."""
    for f in props.fields:
        if f.template != phase:
            continue
        v = props.values.get(f.key)
        if v is not None:
            props.values[f.key] = render_field(f, v, env)


def _strings_of(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings_of(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                yield k
            yield from _strings_of(v)


KnownFunctions = Optional[Callable[[], frozenset]]


def _check_functions(names: frozenset, known: KnownFunctions, field: str, label: str) -> None:
    if known is None or not names:
        return
    allowed = known()
    unknown = sorted(n for n in names if n not in allowed and n not in _expr().BUILTIN_FUNCTIONS)
    if unknown:
        choices = set(allowed) | set(_expr().BUILTIN_FUNCTIONS)
        raise ValidationError(f"unknown function {unknown[0]}{did_you_mean(unknown[0], choices)}", field=field,
                              resource=label)


def check_deferred(props: Properties, label: str, known_functions: KnownFunctions = None) -> None:
    """Compile (without evaluating) every deferred template, so syntax errors and calls of
    unknown functions reject the manifest before anything runs."""
    for f in props.fields:
        if f.template != DEFERRED:
            continue
        for s in _strings_of(props.values.get(f.key)):
            if not is_templated(s):
                continue
            try:
                templates = _templates()
                templates.check_template(s)
                names = templates.functions_called(s)
            except TemplateError as exc:
                raise ValidationError(str(exc), field=f.key, resource=label) from exc
            _check_functions(names, known_functions, f.key, label)


def check_control(props: Properties, label: str, known_functions: KnownFunctions = None) -> None:
    for k, source in (props.get("control") or {}).items():
        if not source.strip():
            continue
        try:
            program = _expr().compile_expr(source)
        except TemplateError as exc:
            raise ValidationError(str(exc), field=f"control.{k}", resource=label) from exc
        _check_functions(program.function_names, known_functions, f"control.{k}", label)


# --- validation ----------------------------------------------------------------------------

def validate(spec: Any, props: Properties, *, label: Optional[str] = None) -> None:
    """Common rules, fixed-choice fields, then the type's own rules."""
    label = label or props.resource_id
    try:
        if not props.name:
            raise ValidationError("name is required", field="name")
        if not props.ensure:
            raise ValidationError("ensure is required", field="ensure")
        for ref in props.get("require") or []:
            parse_ref(ref, what="require")
        for f in props.fields:
            v = props.values.get(f.key)
            if f.choices and v is not None and not is_templated(v) and v not in f.choices:
                choices = ", ".join(f'"{c}"' for c in f.choices)
                raise ValidationError(f"invalid value {v!r}: must be one of {choices}", field=f.key)
        _validate_health_checks(props.get("health_checks") or [])
        if spec.validate is not None:
            spec.validate(props)
    except ValidationError as exc:
        if exc.resource:
            raise
        raise exc.with_resource(label) from None


def go_quote(text: str) -> str:
    """Go ``%q`` for the texts error messages quote: double quotes, backslash escapes."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _validate_health_checks(checks: List[Dict[str, Any]]) -> None:
    for i, c in enumerate(checks):
        where = f"health_checks[{i}]"
        has_cmd = bool(c.get("command"))
        has_goss = bool(c.get("goss_rules"))
        fmt = c.get("format", "")
        if has_cmd and has_goss:
            raise ValidationError("'command' or 'goss_rules' are mutually exclusive", field=where)
        if has_goss and fmt not in ("", "goss"):
            raise ValidationError("'format' must be 'goss' when using 'goss_rules'", field=f"{where}.format")
        if has_cmd and fmt not in ("", "nagios"):
            raise ValidationError("'format' must be 'nagios' when using 'command'", field=f"{where}.format")
        if not has_cmd and not has_goss:
            raise ValidationError("'command' or 'goss_rules' is required", field=where)
        if has_goss:
            from ccm.healthcheck.goss.schema import validate_goss_rules

            validate_goss_rules(c["goss_rules"], where=f"{where}.goss_rules")
        if fmt and fmt not in ("nagios", "goss") and not is_templated(fmt):
            raise ValidationError(f'unknown health check format "{fmt}"', field=f"{where}.format")
        for dk in ("timeout", "try_sleep"):
            if c.get(dk) and not is_templated(c[dk]):
                try:
                    parse_duration(c[dk])
                except DurationError as exc:
                    raise ValidationError(f'invalid {dk.replace("_", " ")} duration "{c[dk]}": {exc}', field=f"{where}.{dk}")
