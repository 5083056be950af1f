"""``ccm doc`` and the man page's reference sections come from what the validator uses."""
from __future__ import annotations

import os

import pytest

from ccm.cli import reference
from ccm.cli.reference_functions import CCM_DOCS, ccm_function_names, expr_names, go_template_names, jet_names
from ccm.model import kinds
from ccm.registry import default_registry
from tests.kit import bare_env, ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TYPES = default_registry().types_in_order()


@pytest.fixture(scope="module")
def docs():
    return {t: ccm("doc", t, env=bare_env()).stdout for t in TYPES}


@pytest.mark.parametrize("type_name", TYPES)
def test_every_declared_field_appears_with_its_type_and_an_example(docs, type_name):
    text = docs[type_name]
    spec = default_registry().spec(type_name)
    for field in spec.all_fields:
        block = text.split(f"\n  {field.key}  (", 1)
        assert len(block) == 2, f"{type_name}: {field.key} missing"
        body = block[1].split("\n\n", 1)[0]
        assert body.startswith(reference.KIND_NAMES[field.kind.name]), (field.key, body)
        assert f"\n      example:\n        {field.key}:" in body, (type_name, field.key)
        assert reference.TEMPLATE_PHASE[field.template] in body


@pytest.mark.parametrize("type_name", TYPES)
def test_the_schema_examples_are_valid_properties(type_name):
    import jsonschema

    doc = reference.schema()
    example = doc["$defs"][f"{type_name}Properties"]["examples"][0]
    assert set(example) == {f.key for f in default_registry().spec(type_name).all_fields}
    resolver_doc = dict(doc, **{"$ref": f"#/$defs/{type_name}Properties"})
    resolver_doc.pop("required", None)
    resolver_doc.pop("properties", None)
    resolver_doc.pop("additionalProperties", None)
    jsonschema.Draft202012Validator(resolver_doc).validate(example)


def test_defaults_come_from_the_fields():
    entries = {e.name: e for e in reference.type_section("exec")[0].entries}
    assert entries["returns"].default == "[0]"           # Field("returns", default=(0,))
    assert entries["ensure"].default == "present"        # TypeSpec.default_ensure
    assert entries["timeout"].default == ""
    scaffold = {e.name: e for e in reference.type_section("scaffold")[0].entries}
    assert scaffold["engine"].default == "jet"           # the schema's "(default jet)"


def test_nested_keys_and_the_required_priority(docs):
    text = docs["file"]
    for title, keys in (("health_checks: each entry of health_checks", kinds.HEALTH_CHECK_KEYS),
                        ("control: control", kinds.CONTROL_KEYS),
                        ("register_when_stable: each entry of register_when_stable", kinds.REGISTRATION_KEYS)):
        section = text.split(title + "\n", 1)[1]
        for key in keys:
            assert f"\n  {key}  (" in section, (title, key)
    registration = text.split("register_when_stable: each entry of register_when_stable\n", 1)[1]
    assert "\n  priority  (integer; required)\n" in registration
    assert "\n  port  (integer/string)\n" in registration


def test_hiera_annotations_and_keys():
    text = ccm("doc", "hiera", env=bare_env()).stdout
    for word in ("@require", "@validate EXPRESSION", "@sensitive", "order", "merge", "overrides",
                 "kv://BUCKET/KEY", "one of first, deep"):
        assert word in text, word


def test_every_template_function_appears():
    text = ccm("doc", "functions", env=bare_env()).stdout
    assert set(ccm_function_names()) == set(CCM_DOCS)
    for name in ccm_function_names():
        assert f"\n  {CCM_DOCS[name][0]}  (function)\n" in text
    words = set(text.split())
    for name in expr_names() + go_template_names() + jet_names():
        assert name in words, name


def test_topics_and_an_unknown_topic():
    r = ccm("doc", env=bare_env())
    assert r.returncode == 0 and r.stdout.startswith("Topics (ccm doc TOPIC):\n\n")
    for topic, _text in reference.topics():
        assert f"\n  {topic} " in r.stdout
    bad = ccm("doc", "fiel", env=bare_env())
    assert bad.returncode == 1
    assert bad.stderr.startswith("ccm: error: no reference for 'fiel' (did you mean `file`?): one of package,")


def test_the_man_page_has_the_same_sections():
    man = ccm("--help-man", env=bare_env()).stdout
    for head in (".SH RESOURCE TYPES", ".SH MANIFEST", ".SH TEMPLATE FUNCTIONS", ".SH HIERA"):
        assert f"\n{head}\n" in man
    for type_name in TYPES:
        assert f"\n.SS {type_name}\n" in man
        for field in default_registry().spec(type_name).all_fields:
            assert f"\\fB{field.key.replace('-', chr(92) + '-')}\\fR (" in man
    assert "\\fBpriority\\fR (integer; required)" in man
