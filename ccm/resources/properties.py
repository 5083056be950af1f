"""Building a validated ``Properties`` from raw YAML/JSON values, and templating it.

One generic walker serves every type, driven by the type's ``Field`` declarations:
unknown keys are rejected, values are type-checked, defaults applied, templates
rendered in the right phase (parse time or deferred), and the type's own rules run.
"""
from __future__ import annotations

from collections.abc import Mapping

from ccm.model.errors import TemplateError, ValidationError, did_you_mean
from ccm.model.kinds import STR, type_name as _type_name
from ccm.model.resource import DEFERRED, PARSE, REFERENCE_FIELDS, Field, Properties, is_templated, parse_ref
from ccm.tmplcache import ProbedEnvironment, render as render_stored
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, FrozenSet, Iterator, Optional, Tuple, Union


def _templates() -> Any:
    # The template engine (and the expression compiler behind it) is imported only when a
    # value actually holds a template: plain manifests never pay for it.
    from ccm import templates

    return templates


def _expr() -> Any:
    from ccm import expr

    return expr


def coerce(f: Field, v: Any) -> Any:
    """Type-check one raw value against its field kind; returns the normalised value."""
    if v is None:
        return None
    return f.kind.coerce(v, f.key)


# id(fields) -> (the tuple, key -> field, fields with a default, template phase -> its fields)
_INDEX: "Dict[int, Tuple[Tuple[Field, ...], Dict[str, Field], Tuple[Field, ...], Dict[str, Tuple[Field, ...]]]]" = {}


def _index(fields: Tuple[Field, ...]
           ) -> Tuple[Tuple[Field, ...], Dict[str, Field], Tuple[Field, ...], Dict[str, Tuple[Field, ...]]]:
    """(the tuple, key -> field, fields with a default, phase -> its fields) of a field
    tuple, built once per tuple (a type's ``all_fields`` is one shared tuple) instead of
    once per resource."""
    hit = _INDEX.get(id(fields))
    if hit is None or hit[0] is not fields:
        phases: Dict[str, Tuple[Field, ...]] = {}
        for f in fields:
            phases[f.template] = phases.get(f.template, ()) + (f,)
        hit = (fields, {f.key: f for f in fields}, tuple(f for f in fields if f.default is not None), phases)
        if len(_INDEX) > 256:
            _INDEX.clear()
        _INDEX[id(fields)] = hit
    return hit


def _field_index(fields: Tuple[Field, ...]) -> Tuple[Dict[str, Field], Tuple[Field, ...]]:
    """(key -> field, fields with a default) of a field tuple."""
    hit = _index(fields)
    return hit[1], hit[2]


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
    fmap, defaults = _field_index(fields)
    values: Dict[str, Any] = {}
    try:
        for k, v in raw.items():
            f = fmap.get(k)
            if f is None:
                raise ValidationError(f"unknown property {k!r}{did_you_mean(k, fmap)}")
            values[k] = coerce(f, v)
    except ValidationError as exc:
        raise exc.with_resource(label or f"{spec.name}#{raw.get('name', '?')}") from exc
    for f in defaults:
        if values.get(f.key) is None:
            values[f.key] = list(f.default) if isinstance(f.default, (list, tuple)) else f.default
    if not values.get("ensure") and spec.default_ensure:
        values["ensure"] = spec.default_ensure
    if spec.prepare is not None:
        spec.prepare(values)
    return Properties(spec.name, values, fields)


def prepare(spec: Any, raw: Mapping[str, Any], env: Mapping[str, Any], *,
            known_functions: "KnownFunctions" = None) -> Properties:
    """The one property pipeline (manifests, ``ccm ensure``, the pipe API, tests): raw
    values -> ``build`` -> parse-time templates -> ``validate`` -> deferred templates
    and ``control`` expressions compiled (unknown functions rejected).

    Raises ``ValidationError`` naming the resource (and field); nothing has run.
    """
    label = f"{spec.name}#{raw.get('name', '?') if isinstance(raw, Mapping) else '?'}"
    props = build(spec, raw, label=label)
    try:
        render_phase(props, env, PARSE)
    except TemplateError as exc:
        raise ValidationError(str(exc), resource=label) from None
    label = props.resource_id
    validate(spec, props, label=label)
    check_deferred(props, label, known_functions)
    check_control(props, label, known_functions)
    return props


# --- templates ---------------------------------------------------------------------------

def _render_str(text: Any, env: Mapping[str, Any], where: str, typed: bool = False) -> Any:
    if not is_templated(text):
        return text
    if type(env) is ProbedEnvironment:   # ccm.tmplcache: a stored template, its values probed
        rendered = render_stored(text, env, typed)
        if rendered is not None:
            return rendered
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


class _EnvRenderer:
    """``ccm.model.kinds.TextRenderer`` over one template environment."""

    def __init__(self, env: Mapping[str, Any]) -> None:
        self.env = env

    def text(self, value: Any, where: str, typed: bool = False) -> Any:
        return _render_str(value, self.env, where, typed=typed)

    def tree(self, value: Any, where: str, typed_keys: bool = False) -> Any:
        return _render_any(value, self.env, where, typed_keys)


if TYPE_CHECKING:
    EnvSource = Union[Mapping[str, Any], Callable[[], Mapping[str, Any]]]


def render_field(f: Field, value: Any, env: Mapping[str, Any]) -> Any:
    if value is None:
        return None
    return f.kind.render(value, f.key, _EnvRenderer(env), f.typed_keys)


def render_phase(props: Properties, env: EnvSource, phase: str) -> None:
    """Render every field of ``phase`` (PARSE or DEFERRED) in place. ``env``: the template
    environment, or a function giving it, called only if a field holds a template (most
    resources have none: the flow then makes no environment, not even a lazy one)."""
    values, fields = props.values, props.fields
    hit = _INDEX.get(id(fields))   # _index, inlined: the flow renders every resource
    if hit is None or hit[0] is not fields:
        hit = _index(fields)
    for f in hit[3].get(phase, ()):
        v = values.get(f.key)
        if v is None or (type(v) is str and "{{" not in v and "${" not in v):
            continue   # a plain string renders as itself (``_render_str``)
        if callable(env):   # a Mapping is not
            env = env()
        if type(env) is ProbedEnvironment and f.kind is STR and type(v) is str:   # what render_field does,
            rendered = render_stored(v, env)                                     # for a stored template
            if rendered is not None:
                values[f.key] = rendered
                continue
        values[f.key] = render_field(f, v, env)


def _strings_of(value: Any) -> Iterator[str]:
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


if TYPE_CHECKING:
    KnownFunctions = Optional[Callable[[], FrozenSet[str]]]


def _check_functions(names: FrozenSet[str], known: KnownFunctions, field: str, label: str) -> None:
    if known is None or not names:
        return
    allowed = known()
    unknown = sorted(n for n in names if n not in allowed and n not in _expr().BUILTIN_FUNCTIONS)
    if unknown:
        choices = set(allowed) | set(_expr().SUGGESTED_FUNCTIONS)
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

def _has_nul(value: Any, depth: int = 0) -> bool:
    """True when a string in ``value`` (nested lists and maps too) holds a NUL byte."""
    if isinstance(value, str):
        return "\x00" in value
    if depth > 50:
        return False
    if isinstance(value, dict):
        return any(_has_nul(k, depth + 1) or _has_nul(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_nul(v, depth + 1) for v in value)
    return False


def check_reference_fields(props: Properties) -> None:
    """The one reference check, for every type: each ``require``/``subscribe`` entry is
    ``type#name`` with exactly one ``#`` (named by its own field), and an ``alias`` holds no
    ``#`` (no reference could name it)."""
    alias = props.values.get("alias")
    if isinstance(alias, str) and "#" in alias and not is_templated(alias):
        raise ValidationError(f"{alias!r} must not contain '#': a reference (type#alias) could not name it",
                              field="alias")
    for f in props.fields:
        if f.key in REFERENCE_FIELDS:
            for ref in props.values.get(f.key) or []:
                parse_ref(ref, what=f.key)


def validate(spec: Any, props: Properties, *, label: Optional[str] = None) -> None:
    """Common rules, fixed-choice fields, health-check rules, then the type's own rules."""
    label = label or props.resource_id
    try:
        if not props.name:
            raise ValidationError("name is required", field="name")
        if not props.ensure:
            raise ValidationError("ensure is required", field="ensure")
        check_reference_fields(props)
        for key, value in props.values.items():
            if _has_nul(value):
                raise ValidationError("must not contain NUL bytes", field=key)
        for f in props.fields:
            v = props.values.get(f.key)
            if f.choices and v is not None and not is_templated(v) and v not in f.choices:
                choices = ", ".join(f'"{c}"' for c in f.choices)
                raise ValidationError(f"invalid value {v!r}: must be one of {choices}", field=f.key)
        checks = props.get("health_checks")
        if checks:  # ccm.healthcheck (the package) is imported only for resources that have checks
            from ccm.healthcheck.rules import validate_checks

            validate_checks(checks)
        if props.get("register_when_stable"):
            from ccm.registration.entry import validate_manifest_entries

            validate_manifest_entries(props.get("register_when_stable"), "register_when_stable")
        if spec.validate is not None:
            spec.validate(props)
    except ValidationError as exc:
        if exc.resource:
            raise
        raise exc.with_resource(label) from None
