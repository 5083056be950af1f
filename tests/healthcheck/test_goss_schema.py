"""Load-time validation of goss rules: everything the evaluator cannot check is rejected,
with the rule path, both directly and through a resource's properties."""
from __future__ import annotations

import pytest

from ccm.healthcheck.goss import validate_goss_rules
from ccm.model.errors import ValidationError


GOOD = {
    "file": {"/etc/passwd": {"exists": True, "mode": "0644", "owner": "root", "filetype": "file",
                             "contents": ["root", "/^root:/", "!nosuchuser"], "sha256": "ab" * 32}},
    "port": {"tcp:22": {"listening": True, "ip": ["0.0.0.0"]}, "udp6:53": {"listening": False}},
    "service": {"sshd": {"enabled": True, "running": True}},
    "process": {"sshd": {"running": True}},
    "http": {"http://127.0.0.1:8080/": {"status": 200, "body": ["ok"], "headers": ["Content-Type: text/plain"],
                                         "allow-insecure": True, "timeout": 1000, "no-follow-redirects": True,
                                         "request-headers": ["X-A: b"], "method": "POST", "username": "u",
                                         "password": "p"}},
    "command": {"echo hi": {"exit-status": 0, "stdout": ["hi"], "stderr": [], "timeout": 2000}},
    "package": {"zsh": {"installed": True, "versions": {"contain-element": {"have-prefix": "5."}}}},
    "user": {"root": {"exists": True, "uid": 0, "groups": ["root"], "home": "/root", "shell": {"have-suffix": "sh"}}},
    "group": {"root": {"exists": True, "gid": 0}},
    "addr": {"tcp://127.0.0.1:22": {"reachable": True, "timeout": 500}},
    "dns": {"localhost": {"resolvable": True, "addrs": {"consist-of": ["127.0.0.1", "::1"]}},
            "A:localhost": {"resolvable": True}},
    "mount": {"/": {"exists": True, "opts": ["rw"], "usage": {"lt": 95}}},
    "kernel-param": {"kernel.ostype": {"value": "Linux"}},
    "matching": {"n": {"content": 42, "matches": {"and": [{"gt": 40}, {"not": 41}]}}},
}


def test_supported_rules_pass():
    validate_goss_rules(GOOD)


def test_yaml_text_rules_are_parsed():
    validate_goss_rules("file:\n  /etc/passwd:\n    exists: true\n")
    with pytest.raises(ValidationError, match=r"goss_rules: invalid goss rules YAML"):
        validate_goss_rules("file: [unclosed")


def test_templated_text_is_left_for_check_time():
    validate_goss_rules("file:\n  {{ Facts.path }}:\n    nonsense: 1\n")


@pytest.mark.parametrize("rules,message", [
    ({"interface": {"eth0": {"exists": True}}},
     r'goss_rules: goss resource type "interface" is not supported'),
    ({"filez": {"/x": {"exists": True}}}, r'goss_rules: unknown goss resource type "filez"'),
    ({"file": {"/etc/motd": {"modee": "0644"}}},
     r'goss_rules\.file\[/etc/motd\]\.modee: unknown goss attribute "modee" for file'),
    ({"service": {"sshd": {"runlevels": ["3"]}}},
     r'goss_rules\.service\[sshd\]\.runlevels: goss attribute "runlevels" of service is not supported'),
    ({"dns": {"x": {"resolvable": True, "server": "8.8.8.8"}}}, r'"server" of dns is not supported'),
    ({"dns": {"MX:example.com": {"resolvable": True}}}, r'DNS record type "MX" is not supported'),
    ({"http": {"http://x/": {"status": 200, "proxy": "http://p"}}}, r'"proxy" of http is not supported'),
    ({"file": {"/x": {"contents": {"semver-constraint": ">1"}}}},
     r'goss_rules\.file\[/x\]\.contents\.semver-constraint: unsupported goss matcher "semver-constraint"'),
    ({"user": {"u": {"groups": {"and": [{"have-prefx": "a"}]}}}},
     r'groups\.and\[0\]\.have-prefx: unsupported goss matcher'),
    ({"user": {"u": {"uid": {"gt": "lots"}}}}, r"uid\.gt: gt takes a number"),
    ({"user": {"u": {"groups": {"and": "x"}}}}, r"and takes a list of matchers"),
    ({"user": {"u": {"home": {"a": 1, "b": 2}}}}, r"exactly one key"),
    ({"file": {"/x": {"contents": ["/([/"]}}}, r"contents\[0\]: invalid regular expression"),
    ({"command": {"x": {"exit-status": 0, "timeout": "soon"}}}, r"timeout: expected an integer"),
    ({"port": {"sctp:22": {"listening": True}}}, r'invalid port "sctp:22"'),
    ({"file": {"/x": "exists"}}, r"expected a map of attributes"),
    ({"matching": {"n": {"content": 1}}}, r"'matches' is required"),
    ({}, r"check rules not specified"),
])
def test_rejections_name_the_rule(rules, message):
    with pytest.raises(ValidationError, match=message):
        validate_goss_rules(rules)


def test_wired_into_resource_validation(tmp_path):
    from ccm.registry import default_registry
    from ccm.resources import properties as P

    spec = default_registry().spec("file")
    raw = {"name": str(tmp_path / "f"), "ensure": "present", "content": "x", "owner": "root", "group": "root", "mode": "0644",
           "health_checks": [{"goss_rules": {"file": {str(tmp_path / "f"): {"exits": True}}}}]}
    props = P.build(spec, raw)
    with pytest.raises(ValidationError) as err:
        P.validate(spec, props)
    text = str(err.value)
    assert text.startswith(f"file#{tmp_path / 'f'}: health_checks[0].goss_rules.file[")
    assert 'unknown goss attribute "exits"' in text

    raw["health_checks"] = [{"goss_rules": {"file": {str(tmp_path / "f"): {"exists": True}}}}]
    P.validate(spec, P.build(spec, raw))
