"""JSON-schema validation of a resolved manifest against ``schemas/manifest.json``.

Runs on the document the engine built (resolved data, flattened typed resources), with
still-unresolved template strings replaced by placeholders, as upstream does. jsonschema
is imported here only: it is the slowest import ccm has.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache

from ccm.model.errors import ManifestError
from ccm.model.resource import is_templated
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Tuple

PLACEHOLDER = "ccmplaceholder"
ENV_PLACEHOLDER = "PLACEHOLDER=x"
_NOT_TEMPLATED = {"control", "register_when_stable"}


def schema_path(name: str) -> str:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for candidate in (os.path.join(here, "schemas", name), os.path.join(os.path.dirname(here), "schemas", name)):
        if os.path.exists(candidate):
            return candidate
    raise ManifestError(f"schema {name} is missing from this build")


@lru_cache(maxsize=None)
def _validator(name: str) -> Any:
    import jsonschema

    with open(schema_path(name), "r", encoding="utf-8") as fh:
        schema = json.load(fh)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@lru_cache(maxsize=None)
def _free_fields(type_name: str) -> FrozenSet[str]:
    """Properties the schema constrains only as "a string" (or null): their values never
    change the schema's verdict, since our own property parser already made them strings."""
    with open(schema_path("manifest.json"), "r", encoding="utf-8") as fh:
        defs = json.load(fh).get("$defs", {})
    props = defs.get(f"{type_name}Properties", {}).get("properties", {})
    free = set()
    for key, sub in props.items():
        if set(sub) <= {"type", "description"} and sub.get("type") in ("string", ["string", "null"]):
            free.add(key)
    return frozenset(free)


_ITEM_KEYS = {"type", "description", "pattern", "if", "then", "else"}


def _patterns(node: Any, out: List[str]) -> bool:
    """Collect the ``pattern``s of a string schema built only of type/pattern/if/then/else;
    False when it constrains strings any other way."""
    if not isinstance(node, dict) or not set(node) <= _ITEM_KEYS:
        return False
    if node.get("type", "string") != "string":
        return False
    if "pattern" in node:
        out.append(node["pattern"])
    return all(_patterns(node[k], out) for k in ("if", "then", "else") if k in node)


@lru_cache(maxsize=None)
def _pattern_lists(type_name: str) -> Dict[str, Any]:
    """Array-of-strings properties whose items the schema constrains by patterns only
    (``require``, ``subscribe``): key -> the compiled patterns. Such a list's verdict
    depends on its length and on which patterns each item matches (``re.search``, as
    jsonschema checks a pattern), not on the rest of its text."""
    import re

    with open(schema_path("manifest.json"), "r", encoding="utf-8") as fh:
        defs = json.load(fh).get("$defs", {})
    out: Dict[str, Any] = {}
    for key, sub in defs.get(f"{type_name}Properties", {}).get("properties", {}).items():
        if set(sub) == {"$ref"} and sub["$ref"].startswith("#/$defs/"):
            sub = defs.get(sub["$ref"][len("#/$defs/"):], {})
        if not isinstance(sub, dict) or not set(sub) <= {"type", "description", "items"} \
                or sub.get("type") != "array":
            continue
        found: List[str] = []
        if _patterns(sub.get("items", {}), found) and found:
            out[key] = [re.compile(p) for p in found]
    return out


_SCALARS = (str, int, float, bool, type(None))


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a JSON value: equal only when the JSON texts would be.

    Each scalar carries its type (``True``, ``1`` and ``1.0`` stay apart, as in JSON);
    lists and tuples are both arrays; anything else is left to ``json.dumps``.
    """
    kind = type(value)
    if kind in _SCALARS:
        return kind, value
    if kind is list or kind is tuple:
        return list, tuple(map(_frozen, value))
    if kind is dict and all(type(k) is str for k in value):
        return dict, tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return json, json.dumps(value, sort_keys=True, default=str)


def _shape_key(type_name: str, doc: Mapping[str, Any]) -> Any:
    """Resources with equal keys get the same schema verdict (free strings masked)."""
    free = _free_fields(type_name)
    lists = _pattern_lists(type_name)
    items: List[Tuple[str, Any]] = []
    for k, v in doc.items():
        if k in free and (v is None or isinstance(v, str)):
            items.append((k, v is None))  # masked: only "a string" or "null" matters
        elif k in lists and type(v) is list and all(type(x) is str for x in v):
            pats = lists[k]   # masked: only which patterns each item matches
            items.append((k, (list, tuple(tuple(p.search(x) is not None for p in pats) for x in v))))
        else:
            items.append((k, _frozen(v)))
    items.sort()  # keys are unique: only they are compared
    return type_name, tuple(items)


def _placeholders(value: Any, env_entries: bool = False) -> Any:
    if isinstance(value, str):
        if is_templated(value):
            return ENV_PLACEHOLDER if env_entries else PLACEHOLDER
        return value
    if isinstance(value, list):
        return [_placeholders(v, env_entries) for v in value]
    if isinstance(value, dict):
        return {k: _placeholders(v) for k, v in value.items()}
    return value


def _resource_doc(spec: Any, props: Mapping[str, Any]) -> Dict[str, Any]:
    """A resource as the schema sees it: still-templated strings become placeholders,
    except where the type's ``deferred_placeholders`` says otherwise ("keep": the value
    as written; "env": ``K=V`` entries)."""
    out: Dict[str, Any] = {}
    for k, v in props.items():
        mode = spec.deferred_placeholders.get(k, "")
        if k in _NOT_TEMPLATED or mode == "keep":
            out[k] = v
        else:
            out[k] = _placeholders(v, env_entries=mode == "env")
    return out


def validate_manifest(doc: Mapping[str, Any], data: Mapping[str, Any], entries: List[Any],
                      ccm_block: Mapping[str, Any], path: str) -> None:
    synthetic: Dict[str, Any] = {}
    for k in ("hierarchy", "overrides"):
        if k in doc:
            synthetic[k] = doc[k]
    synthetic["data"] = dict(data)
    ccm_doc: Dict[str, Any] = {k: v for k, v in ccm_block.items() if k not in ("resources",)}
    checked: List[Any] = entries
    if entries:
        # Validate one representative per distinct shape: resources that differ only in
        # unconstrained string fields (names, content, ...) get the same verdict, and
        # jsonschema is the slowest step of loading a large manifest.
        seen: Dict[Any, Any] = {}
        docs = []
        for e in entries:
            doc = _resource_doc(e.spec, e.props.to_dict())
            key = _shape_key(e.props.type_name, doc)
            if key not in seen:
                seen[key] = e
                docs.append({e.props.type_name: doc})
        checked = list(seen.values())
        ccm_doc["resources"] = docs
        ccm_doc.pop("resources_jet_file", None)
    else:
        ccm_doc["resources"] = ccm_block.get("resources")
    synthetic["ccm"] = ccm_doc
    verdict = _verdict_key(synthetic)
    if verdict is not None and verdict in _known_valid():
        return
    validator = _validator("manifest.json")
    errors = sorted(validator.iter_errors(synthetic), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = _describe(list(err.absolute_path), checked)
        raise ManifestError(f"{path}: schema validation failed at {where}: {err.message}")
    if verdict is not None:
        _remember_valid(verdict)


# --- verdict cache -------------------------------------------------------------------------
# Importing jsonschema is a fifth of a cron run's time. A document that validated once
# validates again, so valid verdicts are remembered (keyed by the schema's and the
# document's hashes) in ccm's private cache; any doubt means validating again.

_MAX_VERDICTS = 256
_VERDICTS = "schema-verdicts.json"


@lru_cache(maxsize=None)
def _schema_digest() -> str:
    from ccm.digest import sha256_hex

    with open(schema_path("manifest.json"), "rb") as fh:
        return sha256_hex(fh.read())


def _verdict_key(document: Mapping[str, Any]) -> Optional[str]:
    try:
        text = json.dumps(document, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return None
    from ccm.digest import sha256_hex

    return sha256_hex((_schema_digest() + text).encode("utf-8"))


def _known_valid() -> List[str]:
    from ccm import cache

    raw = cache.read(_VERDICTS)
    try:
        doc = json.loads(raw) if raw else {}
    except ValueError:
        return []
    return list(doc.get("valid", [])) if isinstance(doc, dict) else []


def _remember_valid(key: str) -> None:
    from ccm import cache

    known = [k for k in _known_valid() if k != key][-(_MAX_VERDICTS - 1):] + [key]
    cache.write(_VERDICTS, json.dumps({"valid": known}).encode("utf-8"))


def _describe(path: List[Any], entries: List[Any]) -> str:
    if len(path) >= 3 and path[0] == "ccm" and path[1] == "resources" and isinstance(path[2], int):
        idx = path[2]
        if idx < len(entries):
            e = entries[idx]
            rest = ".".join(str(p) for p in path[4:])
            return f"resource {e.index} ({e.props.resource_id})" + (f" field {rest}" if rest else "")
    return ".".join(str(p) for p in path) or "document root"


def validate_document(name: str, document: Any) -> List[str]:
    """Validate any document against a named schema; returns error messages."""
    validator = _validator(name)
    return [f"{'.'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
            for e in validator.iter_errors(document)]
