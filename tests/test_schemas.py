"""The JSON schemas in ``schemas/``: the manifest and the ``ccm ensure api pipe`` request/response.

Each schema must be a valid draft 2020-12 schema; tables of documents that must pass
(every manifest example of the spec, every type with all its properties, the raw
named-list shapes editors see, the resolved shape the engine validates, registration
entries with ``ttl``) and documents that must fail, where the reported error must point at
the offending key.
"""
from __future__ import annotations

import copy
import json
import os
import textwrap

import pytest
import yaml

jsonschema = pytest.importorskip("jsonschema")
from jsonschema import Draft202012Validator  # noqa: E402
from jsonschema.exceptions import best_match  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA_DIR = os.path.join(ROOT, "schemas")
TYPES = ("package", "service", "file", "exec", "archive", "scaffold", "apply")


def _load(name):
    with open(os.path.join(SCHEMA_DIR, name), "r", encoding="utf-8") as fh:
        return json.load(fh)


MANIFEST = _load("manifest.json")
REQUEST = _load("resource_ensure_request.json")
RESPONSE = _load("resource_ensure_response.json")
V_MANIFEST = Draft202012Validator(MANIFEST)
V_REQUEST = Draft202012Validator(REQUEST)
V_RESPONSE = Draft202012Validator(RESPONSE)


def y(text):
    return yaml.safe_load(textwrap.dedent(text))


def errors(validator, doc):
    return list(validator.iter_errors(doc))


def where(err):
    """Path and message of an error: what a user is shown."""
    return "/".join(str(p) for p in err.absolute_path) + ": " + err.message


def assert_valid(validator, doc):
    errs = errors(validator, doc)
    assert not errs, "\n".join(where(e) for e in errs)


def assert_invalid(validator, doc, key, path_prefix=()):
    errs = errors(validator, doc)
    assert errs, f"expected a validation error mentioning {key!r}"
    err = best_match(errs)
    text = where(err)
    assert key in text, f"error does not name {key!r}: {text}"
    assert tuple(err.absolute_path)[:len(path_prefix)] == tuple(path_prefix), text
    # The engine reports the first error by path: it must name the key too.
    first = sorted(errs, key=lambda e: [str(p) for p in e.absolute_path])[0]
    assert key in where(first), where(first)


def resolved(type_name, **props):
    """A manifest as the engine validates it: one resource, one type key, name included."""
    return {"data": {}, "ccm": {"resources": [{type_name: props}]}}


def raw(*items, **top):
    doc = {"ccm": {"resources": list(items)}}
    doc.update(top)
    return doc


# --- the schemas themselves -------------------------------------------------------------

@pytest.mark.parametrize("schema", [MANIFEST, REQUEST, RESPONSE], ids=["manifest", "request", "response"])
def test_schema_is_valid_draft_2020_12(schema):
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert jsonschema.validators.validator_for(schema) is Draft202012Validator
    Draft202012Validator.check_schema(schema)


def test_request_shares_the_manifest_resource_definitions():
    # The request schema must be self-contained (one file, no remote refs), so it carries a copy
    # of the manifest's resource definitions; they must not drift apart.
    shared = [k for k in MANIFEST["$defs"] if k not in ("ccm", "hierarchy", "resourceItem")]
    assert shared
    for key in shared:
        assert REQUEST["$defs"][key] == MANIFEST["$defs"][key], key


# Property names per type, from resources.md / manifest.md (exact sets).
COMMON = {"name", "alias", "ensure", "provider", "health_checks", "require", "control", "register_when_stable"}
EXPECTED_PROPERTIES = {
    "package": COMMON,
    "service": COMMON | {"enable", "subscribe"},
    "file": COMMON | {"content", "source", "owner", "group", "mode", "force"},
    "exec": COMMON | {"command", "cwd", "environment", "path", "returns", "timeout", "creates", "onlyif",
                      "unless", "refreshonly", "subscribe", "logoutput"},
    "archive": COMMON | {"url", "headers", "username", "password", "checksum", "extract_parent", "creates",
                         "cleanup", "owner", "group",
                         # ccm additions (issue 15): per-resource decompression-bomb bounds
                         "max_extract_bytes", "max_extract_entries", "max_extract_ratio"},
    "scaffold": COMMON | {"source", "engine", "left_delimiter", "right_delimiter", "skip_empty", "purge",
                          "data", "post"},
    "apply": COMMON | {"noop", "health_check_only", "allow_apply", "data"},
}


@pytest.mark.parametrize("type_name", TYPES)
def test_property_names_are_exactly_the_spec_ones(type_name):
    props = MANIFEST["$defs"][f"{type_name}Properties"]
    assert set(props["properties"]) == EXPECTED_PROPERTIES[type_name]
    assert props["additionalProperties"] is False


def test_fixed_key_sets():
    d = MANIFEST["$defs"]
    assert set(MANIFEST["properties"]) == {"data", "hierarchy", "overrides", "ccm"}
    assert set(d["ccm"]["properties"]) == {"resources", "resources_jet_file", "fail_on_error", "pre_message",
                                           "post_message"}
    assert set(d["healthCheck"]["properties"]) == {"command", "goss_rules", "name", "format", "tries",
                                                   "try_sleep", "timeout"}
    assert set(d["control"]["properties"]) == {"if", "unless"}
    assert set(d["registrationEntry"]["properties"]) == {"cluster", "service", "protocol", "address", "port",
                                                         "priority", "ttl", "annotations"}
    assert "port" not in d["registrationEntry"]["required"]
    assert set(d["resourceItem"]["properties"]) == set(TYPES)


# --- manifests that must pass -----------------------------------------------------------

SPEC_EXAMPLE = """
    data:
      pkg: httpd
      listen: 8080
    hierarchy:
      order:
        - os:{{ lookup('facts.host.info.platformFamily') }}
      merge: first
    overrides:
      os:debian:
        pkg: apache2
    ccm:
      fail_on_error: true
      pre_message: "Configuring {{ Data.pkg }}"
      resources:
        - package:
            - defaults:
                ensure: present
            - "{{ Data.pkg }}": {}
            - vim: {}
        - file:
            name: /etc/motd
            ensure: present
            content: "port {{ Data.listen }}\\n"
            owner: root
            group: root
            mode: "0644"
"""

# What the engine builds from SPEC_EXAMPLE on a Debian host (manifest.md §Schema validation).
SPEC_EXAMPLE_RESOLVED = {
    "hierarchy": {"order": ["os:{{ lookup('facts.host.info.platformFamily') }}"], "merge": "first"},
    "overrides": {"os:debian": {"pkg": "apache2"}},
    "data": {"pkg": "apache2", "listen": 8080},
    "ccm": {
        "fail_on_error": True,
        "pre_message": "Configuring {{ Data.pkg }}",
        "resources": [
            {"package": {"name": "apache2", "ensure": "present"}},
            {"package": {"name": "vim", "ensure": "present"}},
            {"file": {"name": "/etc/motd", "ensure": "present", "content": "ccmplaceholder",
                      "owner": "root", "group": "root", "mode": "0644"}},
        ],
    },
}

RENDER_EXAMPLE = """
    ccm:
      fail_on_error: false
      resources:
        - package:
            name: apache2
            ensure: latest
    data:
      package_name: apache2
"""

HIERA_EXAMPLE = """
    hierarchy:
      order:
        - env:{{ lookup('facts.env') }}
        - role:${ lookup('facts.role') }
        - default
      merge: deep
    data:
      log_level: INFO
      packages: [ca-certificates]
    overrides:
      env:prod:
        log_level: WARN
      role:web:
        packages: [nginx]
    ccm:
      resources_jet_file: resources.jet
"""

HEALTH_CHECK_ALL = {"command": "/usr/lib/nagios/plugins/check_http -H localhost", "name": "http",
                    "format": "nagios", "tries": 3, "try_sleep": "1s", "timeout": "10s"}
GOSS_CHECK = {"goss_rules": {"port": {"tcp:80": {"listening": True}},
                             "http": {"http://localhost": {"status": 200, "body": ["ok"]}}},
              "format": "goss", "name": "web", "tries": 1}
REGISTRATION_ALL = {"cluster": "production", "service": "web", "protocol": "http", "address": "10.0.0.5",
                    "port": 8080, "priority": 10, "ttl": "10m",
                    "annotations": {"prometheus.io/scrape": "true", "team": "ops"}}
COMMON_ALL = {
    "alias": "the-alias",
    "provider": "someprovider",
    "health_checks": [HEALTH_CHECK_ALL, GOSS_CHECK],
    "require": ["package#vim", "file#/etc/motd"],
    "control": {"if": "Facts.host.info.os == 'linux'", "unless": "Data.skip"},
    "register_when_stable": [REGISTRATION_ALL],
}


def _all(type_name, **props):
    out = {"name": props.pop("name")}
    out.update(copy.deepcopy(COMMON_ALL))
    out.update(props)
    return resolved(type_name, **out)


ALL_PROPERTIES = {
    "package": _all("package", name="zsh", ensure="5.9-8+b18"),
    "service": _all("service", name="nginx", ensure="running", enable=True, subscribe=["file#/etc/nginx.conf"]),
    "file": _all("file", name="/etc/app.conf", ensure="present", content="x = 1\n", source="",
                 owner="root", group="0", mode="0644", force=False),
    "exec": _all("exec", name="build", ensure="present", command="/usr/bin/make -C /src", cwd="/src",
                 environment=["HOME=/root", "_X1=a=b"], path="/usr/bin:/bin", returns=[0, 2], timeout="1m30s",
                 creates="/src/out", onlyif="test -d /src", unless="test -f /src/out", refreshonly=True,
                 subscribe=["file#/src/Makefile"], logoutput=True),
    "archive": _all("archive", name="/opt/app.tar.gz", ensure="present", url="https://example.net/app.tar.gz",
                    headers={"X-Token": "abc", "Accept": "*/*"}, username="u", password="p",
                    checksum="a" * 64, extract_parent="/opt/app", creates="/opt/app/bin/app", cleanup=True,
                    owner="root", group="root"),
    "scaffold": _all("scaffold", name="/etc/app", ensure="present", source="templates/app", engine="go",
                     left_delimiter="<<", right_delimiter=">>", skip_empty=True, purge=True,
                     data={"any": {"nested": [1, 2]}, "x": None},
                     post=[{"*.go": "gofmt -w {}"}, {"*.sh": "chmod +x"}]),
    "apply": _all("apply", name="child/manifest.yaml", ensure="present", noop=True, health_check_only=False,
                  allow_apply=False, data={"anything": {"goes": True}}),
}

VALID_MANIFESTS = [
    ("spec-example-raw", y(SPEC_EXAMPLE)),
    ("spec-example-resolved", SPEC_EXAMPLE_RESOLVED),
    ("spec-render-output", y(RENDER_EXAMPLE)),
    ("spec-hiera-document-with-jet-file", y(HIERA_EXAMPLE)),
] + [(f"{t}-all-properties", doc) for t, doc in ALL_PROPERTIES.items()] + [
    # Minimal resolved shapes: the single properties map with a name.
    ("package-minimal", resolved("package", name="vim", ensure="present")),
    ("package-version", resolved("package", name="vim", ensure="2:9.1.1230-2")),
    ("service-no-ensure", resolved("service", name="nginx")),
    ("service-stopped", resolved("service", name="nginx", ensure="stopped", enable=False)),
    ("file-directory", resolved("file", name="/srv", ensure="directory", owner="root", group="root",
                                mode="755")),
    ("file-absent-force", resolved("file", name="/srv/x", ensure="absent", force=True)),
    ("file-content-null", resolved("file", name="/f", ensure="present", content=None, owner="r", group="r",
                                   mode="0600")),
    ("file-content-empty", resolved("file", name="/f", ensure="present", content="", owner="r", group="r",
                                    mode="0600")),
    ("exec-absent", resolved("exec", name="true", ensure="absent")),
    ("exec-always-emitted-command", resolved("exec", name="/bin/true", command="", ensure="present")),
    ("exec-negative-return", resolved("exec", name="x", returns=[-1, 255])),
    ("archive-absent", resolved("archive", name="/a.zip", ensure="absent", url="http://h/a.zip",
                                owner="o", group="g")),
    ("scaffold-jet", resolved("scaffold", name="/t", ensure="absent", source="s", engine="jet")),
    ("apply-minimal", resolved("apply", name="child.yaml")),
    # Placeholders the engine substitutes for still-unresolved (deferred) templates.
    ("placeholders", raw(
        {"file": {"name": "/etc/a", "ensure": "present", "content": "ccmplaceholder", "owner": "root",
                  "group": "root", "mode": "0644"}},
        {"file": {"name": "/etc/b", "ensure": "present", "source": "ccmplaceholder", "owner": "root",
                  "group": "root", "mode": "0644"}},
        {"exec": {"name": "x", "command": "ccmplaceholder", "cwd": "ccmplaceholder",
                  "creates": "ccmplaceholder", "onlyif": "ccmplaceholder", "unless": "ccmplaceholder",
                  "environment": ["PLACEHOLDER=x", "A=b"]}},
    )),
    # Raw shapes, as written in source files (editor use).
    ("raw-named-lists-every-type", raw(
        {"package": [{"defaults": {"ensure": "latest"}}, {"vim": {}}, {"zsh": None}, {"git": {"ensure": "absent"}}]},
        {"service": [{"nginx": {"enable": True}}, {"defaults": {"ensure": "running"}}]},
        {"file": [{"defaults": {"owner": "root", "group": "root", "mode": "0644", "ensure": "present"}},
                  {"/etc/a": {"content": "a"}}, {"/etc/b": {}}]},
        {"exec": [{"/usr/bin/true": None}, {"build": {"command": "make", "returns": [0]}}]},
        {"archive": [{"/opt/a.zip": {"ensure": "present", "url": "https://h/a.zip", "owner": "o", "group": "g"}}]},
        {"scaffold": [{"defaults": {"engine": "jet"}}, {"/etc/app": {"source": "tpl", "ensure": "present"}}]},
        {"apply": [{"child.yaml": None}, {"other.yaml": {"noop": True}}]},
    )),
    ("raw-named-list-element-with-name", raw({"package": [{"vim": {"name": "overridden", "ensure": "present"}}]})),
    ("raw-single-map-every-type", raw(*[{t: p} for t, p in (
        ("package", {"name": "vim", "ensure": "present"}),
        ("service", {"name": "nginx"}),
        ("file", {"name": "/etc/motd", "ensure": "absent"}),
        ("exec", {"name": "/bin/true"}),
        ("archive", {"name": "/a.tgz", "ensure": "absent", "url": "https://h/a.tgz"}),
        ("scaffold", {"name": "/t", "ensure": "present", "source": "tpl"}),
        ("apply", {"name": "child.yaml"}),
    )])),
    ("raw-templates-in-checked-fields", raw(
        {"file": [{"defaults": {"ensure": "{{ Data.ensure }}", "mode": "{{ Data.mode }}", "owner": "root",
                                "group": "root"}},
                  {"{{ Data.path }}": {}}]},
        {"service": {"name": "{{ Data.svc }}", "ensure": "${ Data.state }",
                     "subscribe": ["{{ Data.ref }}", "file#{{ Data.path }}"]}},
        {"exec": {"name": "x", "environment": ["{{ Data.env }}", "HOME={{ Environ.HOME }}"]}},
        {"package": {"name": "nginx", "ensure": "present", "health_checks": [
            {"command": "check_http", "format": "{{ Data.format }}"}]}},
    )),
    ("registration-variants", resolved("service", name="web", register_when_stable=[
        {"cluster": "prod", "service": "web", "protocol": "http", "address": "10.0.0.1", "priority": 1},
        {"cluster": "prod", "service": "web-2", "protocol": "tcp", "address": "::1", "port": 1, "priority": 255,
         "ttl": "never"},
        {"cluster": "{{ Data.cluster }}", "service": "{{ Data.svc }}", "protocol": "h_2",
         "address": "{{ Facts.network.primaryIP }}", "port": "{{ Data.web_port }}", "priority": 5,
         "ttl": 30000000000},
        {"cluster": "c", "service": "s", "protocol": "p", "address": "1.2.3.4", "port": 65535, "priority": 2,
         "ttl": None},
        {"cluster": "c", "service": "s", "protocol": "p", "address": "1.2.3.4", "priority": 2, "ttl": "1h30m"},
        {"cluster": "c", "service": "s", "protocol": "p", "address": "1.2.3.4", "priority": 2, "ttl": "2d"},
        {"cluster": "c", "service": "s", "protocol": "p", "address": "1.2.3.4", "priority": 2, "ttl": "1.5h"},
        {"cluster": "c", "service": "s", "protocol": "p", "address": "1.2.3.4", "priority": 2, "ttl": "0"},
        {"cluster": "c", "service": "s", "protocol": "p", "address": "1.2.3.4", "priority": 2,
         "annotations": {}},
    ])),
    ("health-check-variants", resolved("exec", name="x", health_checks=[
        {"command": "check_disk"},
        {"goss_rules": {}},
        {"goss_rules": {"command": {"true": {"exit-status": 0}}}, "tries": 5, "try_sleep": "2s"},
        {"command": "check_load", "format": "nagios", "tries": 1, "timeout": "5s"},
    ])),
    ("free-form-maps", {
        "data": {"a": {"b": [1, {"c": None}]}, "weird key!": True},
        "overrides": {"os:debian": {"x": {"y": 1}}, "default": {}},
        "hierarchy": {"order": []},
        "ccm": {"resources": []},   # empty list: the engine reports "manifest must contain resources"
    }),
    ("messages-and-flags", {"ccm": {"resources": [], "fail_on_error": False, "pre_message": "hi",
                                    "post_message": "bye"}}),
    ("hierarchy-merge-deep", {"hierarchy": {"order": ["default"], "merge": "deep"},
                              "ccm": {"resources_jet_file": "r.jet"}}),
]


@pytest.mark.parametrize("doc", [d for _, d in VALID_MANIFESTS], ids=[i for i, _ in VALID_MANIFESTS])
def test_valid_manifest(doc):
    assert_valid(V_MANIFEST, doc)


def test_demo_manifest_is_valid():
    path = os.path.join(ROOT, "demo", "manifest.yaml")
    if not os.path.exists(path):
        pytest.skip("no demo manifest")
    with open(path, "r", encoding="utf-8") as fh:
        assert_valid(V_MANIFEST, yaml.safe_load(fh))


@pytest.mark.parametrize("type_name", TYPES)
def test_named_list_with_all_properties_in_defaults(type_name):
    # The same properties are accepted in a named-list element and in its defaults.
    props = dict(ALL_PROPERTIES[type_name]["ccm"]["resources"][0][type_name])
    name = props.pop("name")
    assert_valid(V_MANIFEST, raw({type_name: [{"defaults": props}, {name: {}}]}))
    assert_valid(V_MANIFEST, raw({type_name: [{name: props}]}))


# --- manifests that must fail -----------------------------------------------------------

R0 = ("ccm", "resources", 0)


def _with(type_name, base=None, **props):
    minimal = {
        "package": {"name": "vim", "ensure": "present"},
        "service": {"name": "nginx"},
        "file": {"name": "/etc/motd", "ensure": "present", "owner": "root", "group": "root", "mode": "0644"},
        "exec": {"name": "/bin/true"},
        "archive": {"name": "/a.zip", "ensure": "present", "url": "https://h/a.zip", "owner": "o", "group": "g"},
        "scaffold": {"name": "/t", "ensure": "present", "source": "tpl"},
        "apply": {"name": "child.yaml"},
    }[type_name]
    out = dict(minimal)
    out.update(props)
    for k in [k for k, v in out.items() if v is _DROP]:
        del out[k]
    return resolved(type_name, **out)


_DROP = object()


def _reg(**kw):
    entry = {"cluster": "prod", "service": "web", "protocol": "http", "address": "10.0.0.1", "port": 80,
             "priority": 1}
    entry.update(kw)
    for k in [k for k, v in entry.items() if v is _DROP]:
        del entry[k]
    return _with("service", register_when_stable=[entry])


def _check(**kw):
    return _with("file", health_checks=[kw])


REG = R0 + ("service", "register_when_stable", 0)
HC = R0 + ("file", "health_checks", 0)

INVALID_MANIFESTS = [
    # (id, document, key the error must name, path prefix the error must sit under)
    ("unknown-top-level-key", {"facts": {}, "ccm": {"resources": []}}, "facts", ()),
    ("top-level-resources", {"resources": [], "ccm": {"resources": []}}, "resources", ()),
    ("unknown-ccm-key", {"ccm": {"resources": [], "fail_on_errors": True}}, "fail_on_errors", ("ccm",)),
    ("missing-ccm", {"data": {}}, "ccm", ()),
    ("ccm-without-resources", {"ccm": {"fail_on_error": True}}, "resources", ("ccm",)),
    ("resources-and-jet-file", {"ccm": {"resources": [], "resources_jet_file": "x.jet"}}, "resources_jet_file",
     ("ccm",)),
    ("resources-null", {"ccm": {"resources": None}}, "resources", ("ccm", "resources")),
    ("fail-on-error-string", {"ccm": {"resources": [], "fail_on_error": "yes"}}, "fail_on_error",
     ("ccm", "fail_on_error")),
    ("pre-message-map", {"ccm": {"resources": [], "pre_message": {"a": 1}}}, "pre_message",
     ("ccm", "pre_message")),
    ("data-not-a-map", {"data": [1], "ccm": {"resources": []}}, "data", ("data",)),
    ("override-not-a-map", {"overrides": {"default": "x"}, "ccm": {"resources": []}}, "default",
     ("overrides", "default")),
    ("bad-merge", {"hierarchy": {"order": ["default"], "merge": "Deep"}, "ccm": {"resources": []}}, "merge",
     ("hierarchy", "merge")),
    ("hierarchy-unknown-key", {"hierarchy": {"order": [], "mode": "deep"}, "ccm": {"resources": []}}, "mode",
     ("hierarchy",)),
    ("hierarchy-without-order", {"hierarchy": {"merge": "deep"}, "ccm": {"resources": []}}, "order",
     ("hierarchy",)),
    ("hierarchy-order-not-strings", {"hierarchy": {"order": [1]}, "ccm": {"resources": []}}, "order",
     ("hierarchy", "order")),
    ("unknown-resource-type", raw({"pkg": {"name": "vim"}}), "pkg", R0),
    ("two-types-in-one-item", raw({"package": {"name": "vim", "ensure": "present"},
                                   "service": {"name": "x"}}), "service", R0),
    ("empty-item", raw({}), "{}", R0),
    ("item-not-a-map", raw("package"), "package", R0),
    # Unknown properties, per type (resolved shape).
    ("package-unknown-property", _with("package", version="1.0"), "version", R0 + ("package",)),
    ("service-unknown-property", _with("service", enabled=True), "enabled", R0 + ("service",)),
    ("file-unknown-property", _with("file", perms="0644"), "perms", R0 + ("file",)),
    ("exec-refresh_only", _with("exec", refresh_only=True), "refresh_only", R0 + ("exec",)),
    ("archive-unknown-property", _with("archive", extract_to="/x"), "extract_to", R0 + ("archive",)),
    ("scaffold-unknown-property", _with("scaffold", target="/x"), "target", R0 + ("scaffold",)),
    ("apply-unknown-property", _with("apply", manifest="x.yaml"), "manifest", R0 + ("apply",)),
    ("type-property-on-other-type", _with("package", enable=True), "enable", R0 + ("package",)),
    # Unknown properties in the raw named-list shapes, also inside defaults.
    ("named-list-unknown-property", raw({"exec": [{"reload": {"refresh_only": True}}]}), "refresh_only",
     R0 + ("exec", 0, "reload")),
    ("defaults-unknown-property", raw({"package": [{"defaults": {"ensur": "present"}}, {"vim": {}}]}),
     "ensur", R0 + ("package", 0, "defaults")),
    ("named-list-element-two-names", raw({"package": [{"vim": {}, "zsh": {}}]}), "zsh", R0 + ("package", 0)),
    # jsonschema's maxContains message does not quote the element; the path names the block.
    ("named-list-two-defaults", raw({"package": [{"defaults": {}}, {"vim": {}}, {"defaults": {}}]}),
     "package", R0 + ("package",)),
    ("named-list-empty", raw({"package": []}), "package", R0 + ("package",)),
    ("named-list-element-not-a-map", raw({"package": ["vim"]}), "vim", R0 + ("package", 0)),
    ("named-list-properties-not-a-map", raw({"package": [{"vim": "present"}]}), "vim",
     R0 + ("package", 0, "vim")),
    # Required properties of the single properties map.
    ("single-map-without-name", raw({"service": {"ensure": "running"}}), "name", R0 + ("service",)),
    ("file-without-ensure", raw({"file": {"name": "/etc/motd"}}), "ensure", R0 + ("file",)),
    ("scaffold-without-source", _with("scaffold", source=_DROP), "source", R0 + ("scaffold",)),
    ("archive-without-url", _with("archive", url=_DROP), "url", R0 + ("archive",)),
    # Bad ensure, per type.
    ("service-bad-ensure", _with("service", ensure="started"), "ensure", R0 + ("service", "ensure")),
    ("file-bad-ensure", _with("file", ensure="file"), "ensure", R0 + ("file", "ensure")),
    ("exec-bad-ensure", _with("exec", ensure="running"), "ensure", R0 + ("exec", "ensure")),
    ("archive-bad-ensure", _with("archive", ensure="directory"), "ensure", R0 + ("archive", "ensure")),
    ("scaffold-bad-ensure", _with("scaffold", ensure="latest"), "ensure", R0 + ("scaffold", "ensure")),
    ("apply-bad-ensure", _with("apply", ensure="absent"), "ensure", R0 + ("apply", "ensure")),
    ("package-ensure-not-a-string", _with("package", ensure=1.2), "ensure", R0 + ("package", "ensure")),
    # Field patterns and types.
    ("file-bad-mode-letters", _with("file", mode="rw-r--r--"), "mode", R0 + ("file", "mode")),
    ("file-bad-mode-0o", _with("file", mode="0o644"), "mode", R0 + ("file", "mode")),
    ("file-bad-mode-8", _with("file", mode="0648"), "mode", R0 + ("file", "mode")),
    ("file-bad-mode-short", _with("file", mode="64"), "mode", R0 + ("file", "mode")),
    ("file-bad-mode-long", _with("file", mode="00644"), "mode", R0 + ("file", "mode")),
    ("file-mode-integer", _with("file", mode=644), "mode", R0 + ("file", "mode")),
    ("file-force-string", _with("file", force="yes"), "force", R0 + ("file", "force")),
    ("file-content-number", _with("file", content=3), "content", R0 + ("file", "content")),
    ("exec-env-without-equals", _with("exec", environment=["HOME"]), "environment",
     R0 + ("exec", "environment", 0)),
    ("exec-env-empty-value", _with("exec", environment=["HOME="]), "environment",
     R0 + ("exec", "environment", 0)),
    ("exec-env-bad-key", _with("exec", environment=["1X=y"]), "environment", R0 + ("exec", "environment", 0)),
    ("exec-env-not-a-list", _with("exec", environment="A=b"), "environment", R0 + ("exec", "environment")),
    ("exec-returns-strings", _with("exec", returns=["0"]), "returns", R0 + ("exec", "returns", 0)),
    ("exec-returns-scalar", _with("exec", returns=0), "returns", R0 + ("exec", "returns")),
    ("exec-timeout-number", _with("exec", timeout=10), "timeout", R0 + ("exec", "timeout")),
    ("exec-refreshonly-string", _with("exec", refreshonly="true"), "refreshonly", R0 + ("exec", "refreshonly")),
    ("exec-subscribe-without-hash", _with("exec", subscribe=["file"]), "subscribe",
     R0 + ("exec", "subscribe", 0)),
    ("service-subscribe-without-hash", _with("service", subscribe=["nginx.conf"]), "subscribe",
     R0 + ("service", "subscribe", 0)),
    ("service-enable-string", _with("service", enable="true"), "enable", R0 + ("service", "enable")),
    ("require-without-hash", _with("package", require=["vim"]), "require", R0 + ("package", "require", 0)),
    ("require-upper-case-type", _with("package", require=["File#/etc/motd"]), "require",
     R0 + ("package", "require", 0)),
    ("require-not-a-list", _with("package", require="file#/x"), "require", R0 + ("package", "require")),
    ("scaffold-bad-engine", _with("scaffold", engine="erb"), "engine", R0 + ("scaffold", "engine")),
    ("scaffold-post-two-keys", _with("scaffold", post=[{"*.go": "gofmt", "*.sh": "chmod +x"}]), "post",
     R0 + ("scaffold", "post", 0)),
    ("scaffold-post-empty-command", _with("scaffold", post=[{"*.go": ""}]), "post",
     R0 + ("scaffold", "post", 0)),
    ("scaffold-post-not-a-list", _with("scaffold", post={"*.go": "gofmt"}), "post", R0 + ("scaffold", "post")),
    ("scaffold-data-not-a-map", _with("scaffold", data=["x"]), "data", R0 + ("scaffold", "data")),
    ("archive-header-not-a-string", _with("archive", headers={"X-N": 1}), "headers",
     R0 + ("archive", "headers")),
    ("archive-cleanup-string", _with("archive", cleanup="yes"), "cleanup", R0 + ("archive", "cleanup")),
    ("apply-noop-string", _with("apply", noop="yes"), "noop", R0 + ("apply", "noop")),
    ("apply-data-not-a-map", _with("apply", data="x"), "data", R0 + ("apply", "data")),
    # control
    ("control-unknown-key", _with("package", control={"when": "true"}), "when", R0 + ("package", "control")),
    ("control-if-not-a-string", _with("package", control={"if": ["x"]}), "if",
     R0 + ("package", "control", "if")),
    ("control-not-a-map", _with("package", control="true"), "control", R0 + ("package", "control")),
    # health checks
    ("health-check-command-and-goss", _check(command="check_x", goss_rules={"file": {}}), "goss_rules", HC),
    ("health-check-neither", _check(name="x"), "command", HC),
    ("health-check-tries-0", _check(command="check_x", tries=0), "tries", HC + ("tries",)),
    ("health-check-tries-string", _check(command="check_x", tries="3"), "tries", HC + ("tries",)),
    ("health-check-bad-format", _check(command="check_x", format="json"), "format", HC + ("format",)),
    ("health-check-unknown-key", _check(command="check_x", check="exec"), "check", HC),
    ("health-check-timeout-number", _check(command="check_x", timeout=5), "timeout", HC + ("timeout",)),
    ("health-check-goss-rules-string", _check(goss_rules="file: {}"), "goss_rules", HC + ("goss_rules",)),
    ("health-checks-not-a-list", _with("file", health_checks={"command": "x"}), "health_checks",
     R0 + ("file", "health_checks")),
    # registration entries
    ("registration-unknown-key", _reg(weight=5), "weight", REG),
    ("registration-port-70000", _reg(port=70000), "port", REG + ("port",)),
    ("registration-port-0", _reg(port=0), "port", REG + ("port",)),
    ("registration-port-plain-string", _reg(port="8080"), "port", REG + ("port",)),
    ("registration-port-float", _reg(port=80.5), "port", REG + ("port",)),
    ("registration-priority-0", _reg(priority=0), "priority", REG + ("priority",)),
    ("registration-priority-256", _reg(priority=256), "priority", REG + ("priority",)),
    ("registration-priority-string", _reg(priority="1"), "priority", REG + ("priority",)),
    ("registration-missing-cluster", _reg(cluster=_DROP), "cluster", REG),
    ("registration-missing-priority", _reg(priority=_DROP), "priority", REG),
    ("registration-bad-service", _reg(service="1web"), "service", REG + ("service",)),
    ("registration-bad-service-dot", _reg(service="web.app"), "service", REG + ("service",)),
    ("registration-bad-cluster", _reg(cluster="prod cluster"), "cluster", REG + ("cluster",)),
    ("registration-ttl-bad-unit", _reg(ttl="10min"), "ttl", REG + ("ttl",)),
    ("registration-ttl-no-unit", _reg(ttl="10"), "ttl", REG + ("ttl",)),
    ("registration-ttl-forever", _reg(ttl="forever"), "ttl", REG + ("ttl",)),
    ("registration-ttl-negative-int", _reg(ttl=-1), "ttl", REG + ("ttl",)),
    ("registration-ttl-bool", _reg(ttl=True), "ttl", REG + ("ttl",)),
    ("registration-annotation-not-a-string", _reg(annotations={"a": 1}), "annotations", REG + ("annotations",)),
    ("registration-not-a-list", _with("service", register_when_stable={"cluster": "x"}),
     "register_when_stable", R0 + ("service", "register_when_stable")),
]


@pytest.mark.parametrize("doc,key,path", [(d, k, p) for _, d, k, p in INVALID_MANIFESTS],
                         ids=[i for i, *_ in INVALID_MANIFESTS])
def test_invalid_manifest(doc, key, path):
    assert_invalid(V_MANIFEST, doc, key, path)


def test_invalid_documents_are_minimal_edits_of_valid_ones():
    # Guard against the invalid table passing for the wrong reason: removing the bad bit
    # from a few representative cases makes them valid again.
    ok = _with("exec")
    assert_valid(V_MANIFEST, ok)
    assert_valid(V_MANIFEST, _reg())
    assert_valid(V_MANIFEST, _reg(port=_DROP, ttl="10m"))
    assert_valid(V_MANIFEST, _check(command="check_x", tries=1))
    assert_valid(V_MANIFEST, _with("file", mode="644"))
    for t in TYPES:
        assert_valid(V_MANIFEST, _with(t))


def test_raw_and_resolved_shapes_agree_on_errors():
    # The same bad property is reported in both shapes.
    for doc in (raw({"file": {"name": "/x", "ensure": "present", "mode": "999"}}),
                raw({"file": [{"/x": {"ensure": "present", "mode": "999"}}]}),
                raw({"file": [{"defaults": {"mode": "999"}}, {"/x": {}}]})):
        err = best_match(errors(V_MANIFEST, doc))
        assert err.absolute_path[-1] == "mode", where(err)
        assert "999" in err.message


# --- pipe API request -------------------------------------------------------------------

REQ = "io.choria.ccm.v1.resource.ensure.request"


def req(type_name, properties, **kw):
    out = {"protocol": REQ, "type": type_name, "properties": properties}
    out.update(kw)
    return out


VALID_REQUESTS = [
    ("spec-example", json.loads('{"protocol": "io.choria.ccm.v1.resource.ensure.request", "type": "package",'
                                ' "properties": {"name": "nginx", "ensure": "present"}}')),
    ("named-list", req("package", [{"nginx": {"ensure": "present"}}])),
    ("named-list-with-defaults", req("file", [{"defaults": {"ensure": "absent"}}, {"/tmp/x": {}}])),
    ("named-list-null-element", req("exec", [{"/bin/true": None}])),
    ("templated", req("file", {"name": "/tmp/{{ Data.x }}", "ensure": "present", "owner": "root",
                               "group": "root", "mode": "0644", "content": "{{ Data.y }}"})),
] + [(f"{t}-all-properties", req(t, ALL_PROPERTIES[t]["ccm"]["resources"][0][t])) for t in TYPES]

INVALID_REQUESTS = [
    ("bad-protocol", req("package", {"name": "x", "ensure": "present"}, protocol="x"), "protocol", ("protocol",)),
    ("missing-protocol", {"type": "package", "properties": {"name": "x"}}, "protocol", ()),
    ("missing-type", {"protocol": REQ, "properties": {"name": "x"}}, "type", ()),
    ("unknown-type", req("user", {"name": "x"}), "type", ("type",)),
    ("missing-properties", {"protocol": REQ, "type": "package"}, "properties", ()),
    ("empty-properties", req("package", {}), "properties", ("properties",)),
    ("empty-list", req("package", []), "properties", ("properties",)),
    ("two-resources", req("package", [{"vim": {}}, {"zsh": {}}]), "properties", ("properties",)),
    ("only-defaults", req("package", [{"defaults": {"ensure": "present"}}]), "properties", ("properties",)),
    ("property-of-another-type", req("file", {"name": "/x", "ensure": "present", "enable": True}), "enable",
     ("properties",)),
    ("exec-refresh_only", req("exec", {"name": "x", "refresh_only": True}), "refresh_only", ("properties",)),
    ("bad-ensure", req("service", {"name": "x", "ensure": "started"}), "ensure", ("properties", "ensure")),
    ("extra-top-level-key", req("package", {"name": "x", "ensure": "present"}, noop=True), "noop", ()),
]


@pytest.mark.parametrize("doc", [d for _, d in VALID_REQUESTS], ids=[i for i, _ in VALID_REQUESTS])
def test_valid_request(doc):
    assert_valid(V_REQUEST, doc)


@pytest.mark.parametrize("doc,key,path", [(d, k, p) for _, d, k, p in INVALID_REQUESTS],
                         ids=[i for i, *_ in INVALID_REQUESTS])
def test_invalid_request(doc, key, path):
    assert_invalid(V_REQUEST, doc, key, path)


# --- pipe API response ------------------------------------------------------------------

RESP = "io.choria.ccm.v1.resource.ensure.response"


def event(**kw):
    out = {
        "protocol": "io.choria.ccm.v1.transaction.event",
        "event_id": "2qDKyFEZqtA7Zh1ZqSgQ6YqWzZ9",
        "timestamp": "2025-01-02T03:04:05.12Z",
        "type": "package",
        "provider": "apt",
        "name": "zsh",
        "requested_ensure": "present",
        "final_ensure": "5.9-8+b18",
        "duration": 1234567,
        "properties": {"name": "zsh", "ensure": "present"},
        "status": {
            "timestamp": "2025-01-02T03:04:05Z",
            "protocol": "io.choria.ccm.v1.resource.package.state",
            "type": "package", "name": "zsh", "ensure": "5.9-8+b18",
            "changed": True, "refreshed": False, "stable": False, "noop": False,
            "metadata": {"name": "zsh", "version": "5.9-8+b18", "arch": "amd64", "provider": "apt",
                         "extended": {"status": "installed"}},
        },
        "error": [],
        "changed": True,
        "refreshed": False,
        "failed": False,
        "skipped": False,
        "noop": False,
        "unmet_requirements": [],
    }
    for k, v in kw.items():
        if v is _DROP:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def state(**kw):
    return {"protocol": RESP, "state": event(**kw)}


EXEC_STATUS = {"timestamp": "2025-01-02T03:04:05.000000001Z", "protocol": "io.choria.ccm.v1.resource.exec.state",
               "type": "exec", "name": "build", "ensure": "present", "changed": True, "refreshed": True,
               "stable": True, "noop": False, "exitcode": 0, "creates_satisfied": True}
APPLY_STATUS = {"timestamp": "2025-01-02T03:04:05Z", "protocol": "io.choria.ccm.v1.resource.apply.state",
                "type": "apply", "name": "child.yaml", "ensure": "present", "changed": False,
                "refreshed": False, "stable": True, "noop": False, "resource_count": 3, "changed_count": 0,
                "failed_count": 0}

VALID_RESPONSES = [
    ("state", state()),
    ("error", json.loads('{"protocol": "io.choria.ccm.v1.resource.ensure.response", '
                         '"error": "invalid protocol \\"x\\""}')),
    ("failed-with-health-checks", state(failed=True, error=['health check status "CRITICAL"'], health_check=[
        {"status": 0, "tries": 1, "Output": "OK - fine"},
        {"status": 2, "tries": 3, "Output": "CRITICAL - down"},
        {"status": 3, "tries": 1, "Output": "signal: killed"},
    ])),
    ("skipped-null-status", state(status=None, final_ensure="", skipped=True,
                                  unmet_requirements=["file#/etc/motd"], alias="shell")),
    ("noop", state(noop=True, noop_message="Would have installed version present")),
    ("health-check-only", state(status=None, final_ensure="", health_check_only=True,
                                health_check=[{"status": 1, "tries": 2, "Output": ""}])),
    ("provider-failure-as-state", state(provider="", status=None, final_ensure="", failed=True,
                                        error=["no suitable provider found"])),
    ("exec-state", state(type="exec", name="build", provider="posix", status=EXEC_STATUS)),
    ("apply-state", state(type="apply", name="child.yaml", provider="ccmmanifest", status=APPLY_STATUS)),
]

INVALID_RESPONSES = [
    ("error-and-state", dict(state(), error="boom"), "error", ()),
    ("neither", {"protocol": RESP}, "state", ()),
    ("bad-protocol", dict(state(), protocol="io.choria.ccm.v1.resource.ensure.request"), "protocol",
     ("protocol",)),
    ("empty-error", {"protocol": RESP, "error": ""}, "error", ("error",)),
    ("error-as-list", {"protocol": RESP, "error": ["x"]}, "error", ("error",)),
    ("status-as-string", state(health_check=[{"status": "ok", "tries": 1, "Output": ""}]), "status",
     ("state", "health_check", 0, "status")),
    ("status-out-of-range", state(health_check=[{"status": 4, "tries": 1, "Output": ""}]), "status",
     ("state", "health_check", 0, "status")),
    ("lower-case-output", state(health_check=[{"status": 0, "tries": 1, "output": ""}]), "Output",
     ("state", "health_check", 0)),
    ("null-health-check", state(health_check=[None]), "health_check", ("state", "health_check", 0)),
    ("missing-error-list", state(error=_DROP), "error", ("state",)),
    ("error-list-null", state(error=None), "error", ("state", "error")),
    ("missing-unmet", state(unmet_requirements=_DROP), "unmet_requirements", ("state",)),
    ("duration-string", state(duration="1.5s"), "duration", ("state", "duration")),
    ("timestamp-not-utc", state(timestamp="2025-01-02T03:04:05+02:00"), "timestamp", ("state", "timestamp")),
    ("short-event-id", state(event_id="abc"), "event_id", ("state", "event_id")),
    ("unknown-event-field", state(status_code=1), "status_code", ("state",)),
    ("unknown-type", state(type="user"), "type", ("state", "type")),
    # upstream's YAML quirk (common state fields nested) is not the JSON form
    ("status-nested-common-state", state(status={"commonresourcestate": {}, "metadata": {}}),
     "timestamp", ("state", "status")),
    ("status-bad-protocol", state(status=dict(EXEC_STATUS, protocol="io.choria.ccm.v1.resource.user.state")),
     "protocol", ("state", "status", "protocol")),
]


@pytest.mark.parametrize("doc", [d for _, d in VALID_RESPONSES], ids=[i for i, _ in VALID_RESPONSES])
def test_valid_response(doc):
    assert_valid(V_RESPONSE, doc)


@pytest.mark.parametrize("doc,key,path", [(d, k, p) for _, d, k, p in INVALID_RESPONSES],
                         ids=[i for i, *_ in INVALID_RESPONSES])
def test_invalid_response(doc, key, path):
    assert_invalid(V_RESPONSE, doc, key, path)


def test_events_built_by_the_model_match_the_response_schema():
    # The serialiser the pipe uses must produce documents this schema accepts.
    events = pytest.importorskip("ccm.model.events")
    from ccm.clock import new_ksuid, now_ns   # what stamps a new event and state (their makers use it)

    st = events.ResourceState(type="file", name="/etc/motd", ensure="present", changed=True, timestamp_ns=now_ns(),
                              extra={"metadata": {"name": "/etc/motd", "owner": "root", "group": "root",
                                                  "mode": "0644", "provider": "posix", "extended": {}}})
    ev = events.TransactionEvent(type="file", name="/etc/motd", provider="posix", requested_ensure="present",
                                 final_ensure="present", duration_ns=42, properties={"name": "/etc/motd"},
                                 status=st, changed=True, event_id=new_ksuid(), timestamp_ns=now_ns(),
                                 health_checks=[events.HealthCheckResult(status=2, tries=2, output="down")])
    ev.fail('health check status "CRITICAL"')
    doc = {"protocol": RESP, "state": ev.to_dict()}
    assert_valid(V_RESPONSE, json.loads(json.dumps(doc)))
    skipped = events.TransactionEvent(type="exec", name="x", skipped=True, unmet_requirements=["file#/y"],
                                      event_id=new_ksuid(), timestamp_ns=now_ns())
    assert_valid(V_RESPONSE, {"protocol": RESP, "state": json.loads(json.dumps(skipped.to_dict()))})
