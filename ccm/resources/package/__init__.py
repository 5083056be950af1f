"""The package type: a system package present, absent, at the latest or at a given version.

Providers: ``apt`` (Debian family) and ``dnf`` (Red Hat family), chosen by the tools on
PATH, with the host's ``platformFamily`` fact breaking the tie on a host with both.
"""
from __future__ import annotations

from ccm.model.errors import ValidationError
from ccm.model.resource import Properties, is_templated
from ccm.registry import TypeSpec

KEYWORDS = ("present", "absent", "latest")

DANGEROUS = set(";&|$`()[]{}<>*?'\"\\!\n\t\r")
# what ^[a-zA-Z0-9._+:~-]+$ allows, checked without loading re (a steady run checks every name)
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+:~-"




def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` (imported only for an error message)."""
    from ccm.gocompat.strconv import quote

    return quote(text)


def check_name(name: str) -> None:
    if any(c in DANGEROUS for c in name):
        raise ValidationError(f"package name contains dangerous characters: {go_quote(name)}", field="name")
    if not name or name.strip(NAME_CHARS):
        raise ValidationError(f"package name contains invalid characters: {go_quote(name)} "
                              f"(allowed: alphanumeric, ._+:~-)", field="name")


def check_ensure(ensure: str) -> None:
    if ensure in KEYWORDS:
        return
    if any(c in DANGEROUS for c in ensure):
        raise ValidationError(f"package version/ensure contains dangerous characters: {go_quote(ensure)}",
                              field="ensure")


def validate(props: Properties) -> None:
    # Values still holding a template are checked again after rendering (logic.status).
    if not is_templated(props.name):
        check_name(props.name)
    if not is_templated(props.ensure):
        check_ensure(props.ensure)


TYPE = TypeSpec(
    name="package",
    fields=(),
    logic="ccm.resources.package.logic:PackageLogic",
    providers={
        "apt": "ccm.resources.package.apt:AptFactory",
        "dnf": "ccm.resources.package.dnf:DnfFactory",
    },
    validate=validate,
    cli_help="Manage a package",
    cli_aliases=("pkg",),
    cli_flags="ccm.cli.ensure_cmd:PACKAGE",
)
