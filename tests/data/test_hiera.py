from __future__ import annotations

import os

import pytest

from ccm.data.annotations import Rule
from ccm.data.hiera import normalize_numbers, resolve, validate_rules
from ccm.data.sources import load_yaml
from ccm.model.errors import ValidationError

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")

SPEC_DOC = """
hierarchy:
  order:
    - env:{{ lookup('facts.env') }}
    - role:${ lookup('facts.role') }
    - default
  merge: %s
data:
  log_level: INFO
  packages: [ca-certificates]
overrides:
  env:prod:
    log_level: WARN
  role:web:
    packages: [nginx]
"""


def test_spec_example_deep():
    doc = load_yaml(SPEC_DOC % "deep")
    out = resolve(doc, {"env": "prod", "role": "web"})
    assert out.data == {"log_level": "WARN", "packages": ["ca-certificates", "nginx"]}
    assert out.rules == []


def test_spec_example_first_stops_at_first_match():
    doc = load_yaml(SPEC_DOC % "first")
    out = resolve(doc, {"env": "prod", "role": "web"})
    assert out.data == {"log_level": "WARN", "packages": ["ca-certificates"]}


def test_merge_mode_is_case_insensitive():
    doc = load_yaml(SPEC_DOC % "Deep")
    assert resolve(doc, {"env": "prod", "role": "web"}).data["packages"] == ["ca-certificates", "nginx"]


def test_entry_with_empty_lookup_does_not_match():
    doc = load_yaml(SPEC_DOC % "deep")
    out = resolve(doc, {"role": "web"})  # no env fact: "env:" does not match
    assert out.data == {"log_level": "INFO", "packages": ["ca-certificates", "nginx"]}


def test_missing_hierarchy_uses_default_and_literal_entries_match_verbatim():
    doc = {"data": {"a": 1}, "overrides": {"default": {"a": 2}}}
    assert resolve(doc, {}).data == {"a": 2}
    doc = {"hierarchy": {"order": ["env:%{env}"]}, "data": {"a": 1}, "overrides": {"env:%{env}": {"a": 3}}}
    assert resolve(doc, {"env": "prod"}).data == {"a": 3}


def test_entry_equal_to_data_key_is_skipped():
    doc = {"hierarchy": {"order": ["data", "x"], "merge": "deep"}, "data": {"a": 1},
           "overrides": {"data": {"a": 9}, "x": {"b": 2}}}
    assert resolve(doc, {}).data == {"a": 1, "b": 2}


def test_typed_expansion_of_data_and_overrides():
    doc = {
        "hierarchy": {"order": ["os:{{ lookup('facts.os') }}"]},
        "data": {"port": "{{ lookup('facts.port') }}", "name": "host-{{ lookup('facts.os') }}",
                 "nested": [{"x": "${ lookup('facts.port') }"}], "plain": "costs $5"},
        "overrides": {"os:linux": {"flag": "{{ lookup('facts.flag') }}"}},
    }
    out = resolve(doc, {"os": "linux", "port": 8080, "flag": True})
    assert out.data == {"port": 8080, "name": "host-linux", "nested": [{"x": 8080}], "plain": "costs $5",
                        "flag": True}


def test_numbers_are_normalised():
    assert normalize_numbers({"a": 1.0, "b": [2.0, 2.5], "c": True, "d": 1e30}) == {
        "a": 1, "b": [2, 2.5], "c": True, "d": 1e30}
    out = resolve({"data": {"port": 80.0}}, {})
    assert out.data == {"port": 80} and isinstance(out.data["port"], int)


def test_non_map_override_candidates_are_skipped():
    doc = {"hierarchy": {"order": ["a", "b"]}, "data": {"x": 1}, "overrides": {"a": "not a map", "b": {"x": 2}}}
    assert resolve(doc, {}).data == {"x": 2}


@pytest.mark.parametrize(
    "doc,message",
    [
        ({"hierarchy": "nope"}, "hierarchy section is required"),
        ({"hierarchy": {"order": "default"}}, "hierarchy.order must be a list"),
        ({"hierarchy": {}}, "hierarchy.order must be a list"),
        ({"hierarchy": {"order": ["a", 1]}}, "hierarchy.order must contain only strings"),
        ({"overrides": ["x"]}, "overrides must be a map"),
        ({"data": [1, 2]}, "data must be a map"),
    ],
)
def test_bad_documents(doc, message):
    with pytest.raises(ValidationError) as err:
        resolve(doc, {}, source_name="/srv/h.yaml")
    assert str(err.value) == f"/srv/h.yaml: {message}"


def test_unsupported_merge_mode_only_when_an_override_applies():
    doc = {"hierarchy": {"order": ["x"], "merge": "weird"}, "data": {"a": 1}, "overrides": {}}
    assert resolve(doc, {}).data == {"a": 1}
    doc["overrides"] = {"x": {"a": 2}}
    with pytest.raises(ValidationError, match="unsupported merge mode: weird"):
        resolve(doc, {})
    doc["hierarchy"]["merge"] = 5  # non-string counts as unset -> first
    assert resolve(doc, {}).data == {"a": 2}


def test_data_overrides_deep_merged_last():
    doc = {"data": {"a": {"x": 1}, "l": [1]}}
    out = resolve(doc, {}, data_overrides={"a": {"y": "2"}, "l": [2]})
    assert out.data == {"a": {"x": 1, "y": "2"}, "l": [1, 2]}


def test_template_error_names_the_key():
    doc = {"data": {"bad": "{{ lookup( }}"}}
    with pytest.raises(ValidationError) as err:
        resolve(doc, {}, source_name="x.yaml")
    assert str(err.value).startswith("x.yaml: resolving data.bad: ")
    assert "\n" not in str(err.value)


def test_inputs_not_mutated():
    doc = load_yaml(SPEC_DOC % "deep")
    before = repr(doc)
    resolve(doc, {"env": "prod", "role": "web"})
    assert repr(doc) == before


def test_annotated_fixture_resolves_and_validates():
    with open(os.path.join(FIXTURES, "annotated.yaml")) as fh:
        text = fh.read()
    out = resolve(load_yaml(text), {"host": {"info": {"os": "linux"}}, "env": "prod"}, source_text=text)
    assert out.data["packages"] == [{"name": "curl"}, {"name": "procps"}]
    assert out.data["listen_address"] == "10.0.0.1"
    assert out.data["admin_email"] == "ops@example.net"
    assert {r.key for r in out.rules} == {"service_name", "listen_address", "web.listen_port", "admin_email"}
    validate_rules(out.rules, out.data)


def test_json_source_text_has_no_rules():
    out = resolve({"data": {"a": 1}}, {}, source_text='{"data": {"a": 1}} # @require')
    assert out.rules == []


def test_required_failures_collected_and_sorted():
    rules = [Rule("z", "require"), Rule("a.b", "require"), Rule("m", "require"), Rule("ok", "require"),
             Rule("zero", "require"), Rule("f", "require")]
    data = {"a": {"b": None}, "m": "", "ok": "x", "zero": 0, "f": False}
    with pytest.raises(ValidationError) as err:
        validate_rules(rules, data)
    assert str(err.value) == (
        'key "a.b" is required but has no value\n'
        'key "m" is required but has no value\n'
        'key "z" is required but has no value'
    )


def test_validate_rules_with_validators():
    rules = [
        Rule("ip", "validate", "isIPv4(value)"),
        Rule("bad_ip", "validate", "isIPv4(value)"),
        Rule("port", "validate", "isInt(value)"),
        Rule("ratio", "validate", "isFloat(Value)"),
        Rule("flag", "validate", "value == 'true'"),
        Rule("skipped_map", "validate", "isInt(value)"),
        Rule("missing", "validate", "isInt(value)"),
        Rule("v6", "validate", "isIPv4(value) || isIPv6(value)"),
    ]
    data = {"ip": "10.1.1.1", "bad_ip": "::1", "port": 8080, "ratio": 0.5, "flag": True,
            "skipped_map": {"a": 1}, "v6": "::1"}
    with pytest.raises(ValidationError) as err:
        validate_rules(rules, data)
    assert str(err.value) == 'key "bad_ip" failed validation "isIPv4(value)"'


def test_required_and_validate_on_empty_string():
    rules = [Rule("a", "require"), Rule("a", "validate", "isInt(value)")]
    with pytest.raises(ValidationError) as err:
        validate_rules(rules, {"a": ""})
    assert str(err.value) == 'key "a" is required but has no value\nkey "a" failed validation "isInt(value)"'
    with pytest.raises(ValidationError) as err:
        validate_rules(rules, {})
    assert str(err.value) == 'key "a" is required but has no value'


def test_validation_errors_are_reported_per_key():
    rules = [Rule("a", "validate", "nosuchfunction(value)"), Rule("b", "validate", "'not a bool'")]
    with pytest.raises(ValidationError) as err:
        validate_rules(rules, {"a": "1", "b": "2"}, source_name="/d/h.yaml")
    lines = str(err.value).splitlines()
    assert lines[0].startswith('/d/h.yaml: key "a" validation "nosuchfunction(value)" failed: ')
    assert lines[1].startswith('key "b" validation "\'not a bool\'" failed: ')
    assert len(lines) == 2
