"""The JSON schemas and the types' declared fields name the same properties, so the two
can never drift: a field added to a TypeSpec without its schema entry (or the reverse)
fails here. Both copies of the schemas (``schemas/`` for users, ``ccm/schemas/`` shipped
in the zipapp) are checked and must be identical."""
from __future__ import annotations

import json
import os

import pytest

from ccm.registry import default_registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COPIES = [os.path.join(ROOT, "schemas"), os.path.join(ROOT, "ccm", "schemas")]


def _load(directory: str, name: str) -> dict:
    with open(os.path.join(directory, name), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.parametrize("name", sorted(os.listdir(COPIES[0])))
def test_schema_copies_are_identical(name):
    assert _load(COPIES[0], name) == _load(COPIES[1], name)


@pytest.mark.parametrize("type_name", default_registry().type_names())
def test_manifest_schema_properties_are_the_declared_fields(type_name):
    defs = _load(COPIES[0], "manifest.json")["$defs"]
    schema_props = set(defs[f"{type_name}Properties"]["properties"])
    declared = {f.key for f in default_registry().spec(type_name).all_fields}
    assert schema_props - declared == set(), f"{type_name}: in the schema, not declared"
    assert declared - schema_props == set(), f"{type_name}: declared, not in the schema"


def test_every_type_is_in_the_schemas_and_nothing_else():
    types = set(default_registry().type_names())
    defs = _load(COPIES[0], "manifest.json")["$defs"]
    assert {k[:-len("Properties")] for k in defs if k.endswith("Properties")} == types
    request = _load(COPIES[0], "resource_ensure_request.json")
    assert set(request["properties"]["type"]["enum"]) == types


@pytest.mark.parametrize("definition, keys", [
    ("healthCheck", "HEALTH_CHECK_KEYS"), ("control", "CONTROL_KEYS"), ("registrationEntry", "REGISTRATION_KEYS"),
])
def test_nested_maps_match_the_kinds(definition, keys):
    from ccm.model import kinds

    defs = _load(COPIES[0], "manifest.json")["$defs"]
    assert set(defs[definition]["properties"]) == set(getattr(kinds, keys))
