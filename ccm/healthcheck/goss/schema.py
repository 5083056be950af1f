"""What ccm's native goss evaluator understands, and load-time validation of rules.

What: the supported goss resource types and attributes (tests vs options), and
``validate_goss_rules(rules)``, which rejects anything the evaluator would not check, so a
typo or an unsupported goss feature fails the manifest at load instead of passing silently.
Guarantees: pure (no system access); every error names the rule path
(``goss_rules.file[/etc/motd].modee``).
Not: the evaluator (``ccm.healthcheck.goss.evaluate``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ccm.model.errors import ValidationError
from ccm.healthcheck.goss.matchers import (LIST_ARG_MATCHERS, MATCHER_NAMES, NUMERIC_MATCHERS,
                                           STRING_MATCHERS)
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, Mapping, Optional

COMMON = frozenset({"title", "meta", "skip"})


@dataclass(frozen=True)
class GossType:
    key: str                     # top-level goss key
    title: str                   # how goss prints it ("File", "KernelParam")
    ident: str                   # attribute overriding the map key (path, url, exec, ...)
    tests: FrozenSet[str]        # attributes that are tests (counted, matched)
    readers: FrozenSet[str] = frozenset()   # tests matched line by line with goss patterns
    # attribute -> kind ("bool", "int", "str", "str_list", "any")
    options: Mapping[str, str] = field(default_factory=dict)
    unsupported: FrozenSet[str] = frozenset()  # real goss attributes ccm does not evaluate


def _t(key: str, title: str, ident: str, tests: str, readers: str = "", options: Optional[Dict[str, str]] = None,
       unsupported: str = "") -> GossType:
    return GossType(key, title, ident, frozenset(tests.split()), frozenset(readers.split()),
                    dict(options or {}), frozenset(unsupported.split()))


TYPES: Dict[str, GossType] = {t.key: t for t in (
    _t("file", "File", "path",
       "exists mode size owner uid group gid linked-to filetype contains contents md5 sha256 sha512",
       readers="contains contents"),
    _t("port", "Port", "port", "listening ip"),
    _t("service", "Service", "name", "enabled running", unsupported="runlevels"),
    _t("process", "Process", "comm", "running"),
    _t("http", "HTTP", "url", "status body headers", readers="body headers",
       options={"allow-insecure": "bool", "no-follow-redirects": "bool", "timeout": "int",
                "request-headers": "str_list", "request-body": "str", "method": "str",
                "username": "str", "password": "str", "ca-file": "str", "cert-file": "str",
                "key-file": "str"},
       unsupported="proxy"),
    _t("command", "Command", "exec", "exit-status stdout stderr", readers="stdout stderr",
       options={"timeout": "int"}),
    _t("package", "Package", "name", "installed versions"),
    _t("user", "User", "username", "exists uid gid groups home shell"),
    _t("group", "Group", "groupname", "exists gid"),
    _t("addr", "Addr", "address", "reachable", options={"timeout": "int", "local-address": "str"}),
    _t("dns", "DNS", "resolve", "resolvable addrs", options={"timeout": "int"}, unsupported="server"),
    _t("mount", "Mount", "mountpoint", "exists opts vfs-opts source filesystem usage",
       options={"timeout": "int"}),
    _t("kernel-param", "KernelParam", "name", "value"),
    _t("matching", "Matching", "", "matches", options={"content": "any"}),
)}

# Real goss resource types that ccm does not evaluate natively.
UNSUPPORTED_TYPES = ("interface", "gossfile", "registry")

DNS_TYPES = ("A", "AAAA")
_MARKERS = ("{{", "${")


def has_template(value: Any) -> bool:
    return isinstance(value, str) and any(m in value for m in _MARKERS)


def parse_rules(rules: Any) -> Dict[str, Any]:
    """Goss rules as a map (YAML text is parsed); raises ValidationError when not a map."""
    if isinstance(rules, str):
        from ccm import yamlio

        try:
            rules = yamlio.load(rules)
        except Exception as exc:  # yaml errors carry the line and column
            raise ValidationError(f"invalid goss rules YAML: {exc}") from None
    if rules is None:
        return {}
    if not isinstance(rules, dict):
        raise ValidationError(f"goss rules must be a map of resource types, got {type(rules).__name__}")
    return rules


def validate_goss_rules(rules: Any, where: str = "goss_rules") -> None:
    """Reject rules ccm cannot evaluate: unknown or unsupported types, attributes, matchers.

    ``rules`` is the map (or YAML text) of a health check's ``goss_rules``. Text that still
    holds templates is not checked (it is validated when rendered at check time).
    """
    if has_template(rules):
        return
    try:
        parsed = parse_rules(rules)
    except ValidationError as exc:
        raise ValidationError(exc.message, field=where) from None
    if not parsed:
        raise ValidationError("check rules not specified", field=where)
    for type_key, entries in parsed.items():
        if has_template(type_key):
            continue
        spec = TYPES.get(type_key)
        if spec is None:
            if type_key in UNSUPPORTED_TYPES:
                raise ValidationError(f'goss resource type "{type_key}" is not supported by ccm\'s native '
                                      f'goss evaluator (supported: {", ".join(sorted(TYPES))})', field=where)
            raise ValidationError(f'unknown goss resource type "{type_key}" (supported: {", ".join(sorted(TYPES))})',
                                  field=where)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            raise ValidationError(f"expected a map of {type_key} resources, got {type(entries).__name__}",
                                  field=f"{where}.{type_key}")
        for ident, attrs in entries.items():
            _validate_resource(spec, str(ident), attrs, f"{where}.{type_key}[{ident}]")


def _validate_resource(spec: GossType, ident: str, attrs: Any, path: str) -> None:
    if attrs is None:
        return
    if not isinstance(attrs, dict):
        raise ValidationError(f"expected a map of attributes, got {type(attrs).__name__}", field=path)
    _check_ident(spec, ident, attrs, path)
    for attr, value in attrs.items():
        _check_attribute(spec, attr, value, f"{path}.{attr}")


def _check_ident(spec: GossType, ident: str, attrs: Dict[str, Any], path: str) -> None:
    """What a resource's name must be for its type (a port, a DNS record type) and what it requires."""
    if spec.key == "port" and not has_template(ident) and "port" not in attrs:
        _check_port_ident(ident, path)
    if spec.key == "dns" and ":" in ident and not has_template(ident):
        kind = ident.split(":", 1)[0]
        if kind.upper() not in DNS_TYPES:
            raise ValidationError(f'DNS record type "{kind}" is not supported (supported: A, AAAA)', field=path)
    if spec.key == "matching" and "matches" not in attrs:
        raise ValidationError("'matches' is required", field=path)


def _check_attribute(spec: GossType, attr: str, value: Any, where: str) -> None:
    if attr in COMMON:
        if attr == "skip" and not isinstance(value, bool) and not has_template(value):
            raise ValidationError(f"expected a boolean, got {value!r}", field=where)
        return
    if attr == spec.ident and spec.ident:
        if not isinstance(value, str):
            raise ValidationError(f"expected a string, got {value!r}", field=where)
        return
    if attr in spec.unsupported:
        raise ValidationError(f'goss attribute "{attr}" of {spec.key} is not supported by ccm\'s native goss '
                              f'evaluator', field=where)
    if attr in spec.options:
        _check_option(spec.options[attr], value, where)
        return
    if attr not in spec.tests:
        known = sorted(spec.tests | set(spec.options) | COMMON | ({spec.ident} if spec.ident else set()))
        raise ValidationError(f'unknown goss attribute "{attr}" for {spec.key} (known: {", ".join(known)})',
                              field=where)
    if attr in spec.readers and isinstance(value, (list, tuple)):
        for i, pattern in enumerate(value):
            _check_pattern(pattern, f"{where}[{i}]")
        return
    validate_matcher(value, where)


def _check_port_ident(ident: str, path: str) -> None:
    proto, _, port = ident.rpartition(":")
    if proto and proto not in ("tcp", "tcp6", "udp", "udp6"):
        raise ValidationError(f'invalid port "{ident}": protocol must be tcp, tcp6, udp or udp6', field=path)
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise ValidationError(f'invalid port "{ident}": expected [tcp|tcp6|udp|udp6:]<1-65535>', field=path)


def _check_option(kind: str, value: Any, where: str) -> None:
    if has_template(value) or kind == "any":
        return
    ok = {
        "bool": isinstance(value, bool),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "str": isinstance(value, (str, int, float)) and not isinstance(value, bool),
        "str_list": isinstance(value, list) and all(isinstance(v, str) for v in value),
    }[kind]
    if not ok:
        wanted = {"bool": "a boolean", "int": "an integer", "str": "a string", "str_list": "a list of strings"}[kind]
        raise ValidationError(f"expected {wanted}, got {value!r}", field=where)


def _check_pattern(pattern: Any, where: str) -> None:
    if isinstance(pattern, (dict, list)):
        raise ValidationError(f"a pattern must be a string, got {type(pattern).__name__}", field=where)
    text = str(pattern)
    body = text[1:] if text.startswith("!") else text
    if len(body) >= 2 and body.startswith("/") and body.endswith("/") and not has_template(body):
        _check_regexp(body[1:-1], where)


def _check_regexp(pattern: str, where: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValidationError(f"invalid regular expression {pattern!r}: {exc}", field=where) from None


def validate_matcher(value: Any, where: str) -> None:
    """A plain value, a list of matchers, or a one-key map naming a supported matcher."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            validate_matcher(item, f"{where}[{i}]")
        return
    if not isinstance(value, dict):
        return
    if len(value) != 1:
        raise ValidationError(f"a matcher must be a map with exactly one key, got {sorted(value)}", field=where)
    (name, arg), = value.items()
    where = f"{where}.{name}"
    if name not in MATCHER_NAMES:
        raise ValidationError(f'unsupported goss matcher "{name}" (supported: {", ".join(sorted(MATCHER_NAMES))})',
                              field=where)
    if has_template(arg):
        return
    if name in LIST_ARG_MATCHERS:
        if not isinstance(arg, list):
            raise ValidationError(f"{name} takes a list of matchers, got {type(arg).__name__}", field=where)
        for i, item in enumerate(arg):
            validate_matcher(item, f"{where}[{i}]")
    elif name in ("not", "contain-element", "equal", "have-key"):
        validate_matcher(arg, where)
    elif name in NUMERIC_MATCHERS:
        _check_number_arg(name, arg, where)
    elif name in STRING_MATCHERS:
        _check_string_arg(name, arg, where)
    else:
        _check_shaped_arg(name, arg, where)


def _check_number_arg(name: str, arg: Any, where: str) -> None:
    if isinstance(arg, bool) or not isinstance(arg, (int, float)):
        try:
            float(str(arg))
        except ValueError:
            raise ValidationError(f"{name} takes a number, got {arg!r}", field=where) from None


def _check_string_arg(name: str, arg: Any, where: str) -> None:
    if isinstance(arg, (dict, list)):
        raise ValidationError(f"{name} takes a string, got {type(arg).__name__}", field=where)
    if name == "match-regexp":
        _check_regexp(str(arg), where)


def _check_shaped_arg(name: str, arg: Any, where: str) -> None:
    """``have-len`` (an integer) and ``have-key-with-value`` (a map of matchers)."""
    if name == "have-len":
        if isinstance(arg, bool) or not isinstance(arg, int):
            raise ValidationError(f"have-len takes an integer, got {arg!r}", field=where)
    elif name == "have-key-with-value":
        if not isinstance(arg, dict):
            raise ValidationError(f"have-key-with-value takes a map, got {type(arg).__name__}", field=where)
        for k, v in arg.items():
            validate_matcher(v, f"{where}[{k}]")
