"""Validator functions for ``@validate`` annotations (spec data-and-templates §2.5).

Product decision: every validator returns a boolean (upstream raises for some,
which breaks ``isIPv4(value) || isIPv6(value)``). Only ``isRegex`` with an
invalid pattern raises. Non-string scalars are validated in their ``%v`` text.
"""
from __future__ import annotations

import re

from ccm.expr.errors import ExprError
from ccm.model.durations import parse_duration
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    import ipaddress
    from typing import Any, Callable, Dict, Optional, Union

_INT = re.compile(r"[+-]?[0-9]+\Z")
_DEC_FLOAT = re.compile(r"[+-]?(?:[0-9](?:_?[0-9])*\.?(?:[0-9](?:_?[0-9])*)?|\.[0-9](?:_?[0-9])*)"
                        r"(?:[eE][+-]?[0-9]+)?\Z")
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?[0-9]+\Z")
_SPECIAL_FLOAT = re.compile(r"[+-]?(?:inf|infinity|nan)\Z", re.IGNORECASE)
_DURATION_PART = re.compile(r"[0-9.]+[a-zA-Z]+")
_SHELL_UNSAFE = frozenset("`$;|&><()\n")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\Z")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    from ccm.gocompat.fmt import go_sprint
    return go_sprint(value)


def _ip(value: Any) -> Optional[Union["ipaddress.IPv4Address", "ipaddress.IPv6Address"]]:
    import ipaddress  # only validators need it; keep it off the import path
    text = _text(value)
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def is_ip(value: Any) -> bool:
    return _ip(value) is not None


def is_ipv4(value: Any) -> bool:
    addr = _ip(value)
    if addr is None:
        return False
    return addr.version == 4 or addr.ipv4_mapped is not None


def is_ipv6(value: Any) -> bool:
    addr = _ip(value)
    return addr is not None and addr.version == 6 and addr.ipv4_mapped is None


def is_int(value: Any) -> bool:
    return bool(_INT.match(_text(value)))


def is_float(value: Any) -> bool:
    text = _text(value)
    if _SPECIAL_FLOAT.match(text):
        return True
    if _HEX_FLOAT.match(text):
        return True
    # Go accepts underscores only in base-prefixed literals, so none here
    return "_" not in text and bool(_DEC_FLOAT.match(text)) and any((c.isascii() and c.isdigit()) for c in text)


def is_duration(value: Any) -> bool:
    text = _text(value)
    # fisk needs a unit on every component: a bare "10" is invalid, "0" is not
    if text != "0" and not _DURATION_PART.search(text):
        return False
    try:
        parse_duration(text)
    except (ValueError, TypeError):
        return False
    return True


def is_regex(value: Any, pattern: Any) -> bool:
    if not isinstance(pattern, str):
        pattern = _text(pattern)
    try:
        compiled = re.compile(pattern)
    except re.error as err:
        raise ExprError(f"invalid regex \"{pattern}\": {err}") from None
    return compiled.search(_text(value)) is not None


def is_shell_safe(value: Any) -> bool:
    text = _text(value).strip()
    return not any(ch in _SHELL_UNSAFE for ch in text)


def is_hostname(value: Any) -> bool:
    """RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens."""
    text = _text(value)
    if text.endswith("."):
        text = text[:-1]
    if not text or len(text) > 253:
        return False
    return all(_LABEL.match(label) for label in text.split("."))


def is_fqdn(value: Any) -> bool:
    """A host name with at least two labels and a non-numeric top-level label."""
    text = _text(value)
    if not is_hostname(text):
        return False
    labels = text.rstrip(".").split(".")
    return len(labels) >= 2 and not (labels[-1].isascii() and labels[-1].isdigit())


VALIDATORS: Dict[str, Callable[..., bool]] = {}
for _names, _fn in (
    (("isIP", "is_ip"), is_ip),
    (("isIPv4", "is_ipv4"), is_ipv4),
    (("isIPv6", "is_ipv6"), is_ipv6),
    (("isInt", "is_int"), is_int),
    (("isFloat", "is_float"), is_float),
    (("isDuration", "is_duration"), is_duration),
    (("isRegex", "is_regex"), is_regex),
    (("isShellSafe", "is_shellsafe"), is_shell_safe),
    (("isHostname", "is_hostname"), is_hostname),
    (("isFQDN", "is_fqdn"), is_fqdn),
):
    for _name in _names:
        VALIDATORS[_name] = _fn
