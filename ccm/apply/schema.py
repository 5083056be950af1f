"""JSON-schema validation of a resolved manifest against ``schemas/manifest.json``.

Runs on the document the engine built (resolved data, flattened typed resources), with
still-unresolved template strings replaced by placeholders, as upstream does. jsonschema
is imported here only: it is the slowest import ccm has.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any, Dict, List, Mapping

from ccm.model.errors import ManifestError

PLACEHOLDER = "ccmplaceholder"
ENV_PLACEHOLDER = "PLACEHOLDER=x"
_NOT_TEMPLATED = {"require", "control", "register_when_stable"}


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


def _has_template(s: str) -> bool:
    return "{{" in s or "${" in s


def _placeholders(value: Any, env_entries: bool = False) -> Any:
    if isinstance(value, str):
        if _has_template(value):
            return ENV_PLACEHOLDER if env_entries else PLACEHOLDER
        return value
    if isinstance(value, list):
        return [_placeholders(v, env_entries) for v in value]
    if isinstance(value, dict):
        return {k: _placeholders(v) for k, v in value.items()}
    return value


def _resource_doc(type_name: str, props: Mapping[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in props.items():
        if k in _NOT_TEMPLATED or (type_name == "scaffold" and k == "data"):
            out[k] = v
        else:
            out[k] = _placeholders(v, env_entries=(type_name == "exec" and k == "environment"))
    return out


def validate_manifest(doc: Mapping[str, Any], data: Mapping[str, Any], entries: List[Any],
                      ccm_block: Mapping[str, Any], path: str) -> None:
    synthetic: Dict[str, Any] = {}
    for k in ("hierarchy", "overrides"):
        if k in doc:
            synthetic[k] = doc[k]
    synthetic["data"] = dict(data)
    ccm_doc: Dict[str, Any] = {k: v for k, v in ccm_block.items() if k not in ("resources",)}
    if entries:
        ccm_doc["resources"] = [{e.props.type_name: _resource_doc(e.props.type_name, e.props.to_dict())}
                                for e in entries]
        ccm_doc.pop("resources_jet_file", None)
    else:
        ccm_doc["resources"] = ccm_block.get("resources")
    synthetic["ccm"] = ccm_doc
    validator = _validator("manifest.json")
    errors = sorted(validator.iter_errors(synthetic), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = _describe(list(err.absolute_path), entries)
        raise ManifestError(f"{path}: schema validation failed at {where}: {err.message}")


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
