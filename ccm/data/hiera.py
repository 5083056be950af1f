"""Hiera resolution: ``data`` + ``hierarchy`` + ``overrides`` -> one data map.

Implements data-and-templates.md §2.2 exactly: the base data and every override are
template-expanded type-preservingly against facts only (an environment whose only
function is ``lookup``); hierarchy entries are rendered in match mode and looked up in
``overrides``; ``merge: first`` stops at the first matching override, ``merge: deep``
accumulates. Annotation rules (§2.4) are returned, not enforced: callers validate the
final data with :func:`validate_rules` once their own overriding layers are merged.
Guarantees: no I/O, inputs never mutated. Not: a source loader (see ``sources``).

Decisions on upstream gaps: ``%{fact}`` placeholders are *not* interpolated (an entry
such as ``env:%{env}`` has no template expression, so it matches and is looked up
verbatim, as upstream does); a non-map ``overrides`` or ``data`` is an error instead of
a crash.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

from ccm.data.annotations import REQUIRE, VALIDATE, Rule, parse_annotations
from ccm.data.merge import deep_merge, shallow_merge
from ccm.model.errors import ValidationError
from ccm.model.resource import is_templated
from ccm.model.value import ValueObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["Rule", "Resolution", "resolve", "validate_rules", "normalize_numbers", "looks_like_json"]

_INT64_MIN = -(2 ** 63)
_INT64_MAX = 2 ** 63 - 1


class Resolution(ValueObject):
    data: Dict[str, Any]
    rules: List[Rule]

    _value_fields = ("data", "rules")

    def __init__(self, data: Dict[str, Any], rules: Optional[List[Rule]] = None) -> None:
        self.data = data
        self.rules = [] if rules is None else rules

    def __repr__(self) -> str:
        return f"{self.__class__.__qualname__}(data={self.data!r}, rules={self.rules!r})"



def looks_like_json(text: str) -> bool:
    stripped = text.lstrip()
    return stripped[:1] in ("{", "[")


def normalize_numbers(value: Any) -> Any:
    """Integral floats (within int64) become ints, recursively; returns a new tree."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and _INT64_MIN <= value <= _INT64_MAX:
            return int(value)
        return value
    if isinstance(value, Mapping):
        return {k: normalize_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize_numbers(v) for v in value]
    return value

class _LazyEnv:
    """Builds the facts-only template environment on first use: literal documents
    (the common case) never import the template engine."""

    def __init__(self, facts: Mapping[str, Any]) -> None:
        self._facts = facts
        self._env: Any = None

    def get(self) -> Any:
        if self._env is None:
            from ccm.templates import hiera_environment

            self._env = hiera_environment(self._facts)
        return self._env


def _expand(value: Any, env: _LazyEnv, where: str) -> Any:
    """Type-preserving expansion of every string value (keys are left alone)."""
    if isinstance(value, str):
        if not is_templated(value):
            return value
        from ccm.templates import render_typed

        try:
            return render_typed(value, env.get())
        except Exception as exc:  # template errors of any kind name the key
            raise ValidationError(f"resolving {where}: {exc}") from exc
    if isinstance(value, Mapping):
        return {k: _expand(v, env, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, env, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def _render_entry(entry: str, env: _LazyEnv) -> "tuple[str, bool]":
    if not is_templated(entry):
        return entry, entry != ""
    from ccm.templates import render_match

    try:
        text, matched = render_match(entry, env.get())
    except Exception as exc:  # template errors of any kind name the entry
        raise ValidationError(f"resolving hierarchy entry {entry!r}: {exc}") from exc
    return text, bool(matched)


def resolve(
    document: Mapping[str, Any],
    facts: Mapping[str, Any],
    *,
    source_text: Optional[str] = None,
    source_name: Optional[str] = None,
    data_key: str = "data",
    data_overrides: Optional[Mapping[str, Any]] = None,
) -> Resolution:
    """Resolve a Hiera document against ``facts`` (spec §2.2).

    ``source_text`` is the YAML text the document came from: annotations are read from
    it (JSON text has none). Errors are ValidationError naming ``source_name``.
    """

    def fail(message: str) -> ValidationError:
        return ValidationError(f"{source_name}: {message}" if source_name else message)

    if not isinstance(document, Mapping):
        raise fail("hiera data must be a map")
    doc = normalize_numbers(document)
    hierarchy, order, overrides = _hierarchy_sections(doc, fail)
    raw_data = doc.get(data_key)
    has_data_map = isinstance(raw_data, Mapping)
    if raw_data is None:
        raw_data = {}
    elif not has_data_map:
        raise fail(f"{data_key} must be a map")

    env = _LazyEnv(facts)
    try:
        base = _expand(raw_data, env, data_key)
        # with a data map, an entry rendering to ``data_key`` names the data itself: no override
        skip = data_key if has_data_map else None
        base = _apply_overrides(base, order, overrides, hierarchy.get("merge"), env, skip)
    except ValidationError as exc:
        if source_name:
            raise fail(str(exc)) from exc
        raise
    if data_overrides:
        base = deep_merge(base, data_overrides)
    rules: List[Rule] = []
    # annotations sit on keys below a top-level ``data_key``: a document without one has
    # none, and its text (a whole manifest, say) need not be scanned line by line
    if source_text is not None and data_key in document and not looks_like_json(source_text):
        rules = parse_annotations(source_text, data_key)
    _register_sensitive(base, rules)
    return Resolution(data=base, rules=rules)


def _hierarchy_sections(doc: Mapping[str, Any], fail: Callable[[str], ValidationError]
                        ) -> Tuple[Mapping[str, Any], List[str], Mapping[str, Any]]:
    """(hierarchy, its order, overrides) of a document, each checked for its shape."""
    hierarchy = doc["hierarchy"] if "hierarchy" in doc else {"order": ["default"]}
    if not isinstance(hierarchy, Mapping):
        raise fail("hierarchy section is required")
    order = hierarchy.get("order")
    if not isinstance(order, list):
        raise fail("hierarchy.order must be a list")
    if not all(isinstance(e, str) for e in order):
        raise fail("hierarchy.order must contain only strings")
    overrides = doc.get("overrides")
    if overrides is None:
        overrides = {}
    if not isinstance(overrides, Mapping):
        raise fail("overrides must be a map")
    return hierarchy, order, overrides


def _apply_overrides(base: Any, order: List[str], overrides: Mapping[str, Any], merge: Any, env: _LazyEnv,
                     skip: Optional[str]) -> Any:
    """``base`` with the override of every matching hierarchy entry merged in, in order:
    the first one only (``merge: first``) or all of them, deeply (``merge: deep``)."""
    mode = merge.lower() if isinstance(merge, str) else "first"
    for entry in order:
        text, matched = _render_entry(entry, env)
        if not matched:
            continue
        if text == skip:
            continue
        candidate = overrides.get(text)
        if not isinstance(candidate, Mapping):
            continue
        if mode not in ("first", "deep"):
            raise ValidationError(f"unsupported merge mode: {merge}")
        candidate = _expand(candidate, env, f"overrides.{text}")
        if mode == "deep":
            base = deep_merge(base, candidate)
            continue
        base = shallow_merge(base, candidate)
        break
    return base


def _register_sensitive(data: Mapping[str, Any], rules: List[Rule]) -> None:
    """Values under ``# @sensitive`` keys are redacted from every output (``ccm.redact``)."""
    from ccm import redact
    from ccm.data.annotations import SENSITIVE

    for rule in rules:
        if rule.kind == SENSITIVE:
            value = _dig(data, rule.key)
            if value is not _MISSING:
                redact.register(value)


_MISSING = object()


def _dig(data: Any, key: str) -> Any:
    current = data
    for part in key.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return _MISSING
        current = current[part]
    return current


def _go_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = repr(value)
    if text.endswith(".0"):
        text = text[:-2]
    return text


def value_text(value: Any) -> str:
    """The string a validator sees: strings as is, bools true/false, numbers shortest."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def validate_rules(rules: List[Rule], data: Mapping[str, Any], *, source_name: Optional[str] = None) -> None:
    """Check ``rules`` against the final data; every failure is reported, sorted by key.

    Raises ValidationError whose message lists one failure per line.
    """
    if not rules:
        return
    required = {r.key for r in rules if r.kind == REQUIRE}
    validators: Dict[str, Rule] = {}
    for r in rules:
        if r.kind == VALIDATE and r.expression:
            validators[r.key] = r  # last one wins
    failures: List[Tuple[Any, ...]] = []
    for key in sorted(required | set(validators)):
        value = _dig(data, key)
        missing = value is _MISSING or value is None
        if key in required and (missing or value == ""):
            failures.append((key, f'key "{key}" is required but has no value'))
            if missing:
                continue
        rule = validators.get(key)
        if rule is None or missing or isinstance(value, (Mapping, list)):
            continue
        text = value_text(value)
        try:
            from ccm.expr import evaluate

            result = evaluate(rule.expression or "", {"value": text, "Value": text})
        except Exception as exc:  # any evaluation failure is reported against the key
            failures.append((key, f'key "{key}" validation "{rule.expression}" failed: {exc}'))
            continue
        if not isinstance(result, bool):
            failures.append(
                (key, f'key "{key}" validation "{rule.expression}" failed: expected a boolean result, '
                      f'got {value_text(result)}')
            )
        elif not result:
            failures.append((key, f'key "{key}" failed validation "{rule.expression}"'))
    if failures:
        message = "\n".join(msg for _, msg in failures)
        raise ValidationError(f"{source_name}: {message}" if source_name else message)
