"""The service type: a system service running or stopped, enabled at boot or not, and
restarted when a subscribed resource changed.

Providers: ``systemd`` (only where systemd is PID 1) and ``sysv`` (LSB init scripts under
``/etc/init.d`` with ``update-rc.d`` or ``chkconfig``, for containers, chroots and hosts
without systemd).
"""
from __future__ import annotations

import re

from ccm.gocompat.strconv import quote as go_quote
from ccm.model.errors import ValidationError
from ccm.model.resource import BOOL, NEVER, STR_LIST, Field, Properties, is_templated
from ccm.registry import TypeSpec

ENSURES = ("running", "stopped")
DANGEROUS = set(";&|$`()[]{}<>*?'\"\\!\n\t\r")
# The spec's pattern plus '@' for systemd template instances (getty@tty1): an upstream gap.
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9._+:~@-]+$")

FIELDS = (
    Field("enable", BOOL, template=NEVER),
    Field("subscribe", STR_LIST),
)




def check_ensure(ensure: str) -> None:
    if ensure not in ENSURES:
        raise ValidationError(f'invalid ensure value: invalid ensure property "{ensure}" '
                              'expects "running" or "stopped"',
                              field="ensure")


def check_name(name: str) -> None:
    if any(c in DANGEROUS for c in name):
        raise ValidationError(f"service name contains dangerous characters: {go_quote(name)}", field="name")
    if not NAME_PATTERN.match(name):
        raise ValidationError(f"service name contains invalid characters: {go_quote(name)} "
                              f"(allowed: alphanumeric, ._+:~@-)", field="name")


def validate(props: Properties) -> None:
    if not is_templated(props.ensure):
        check_ensure(props.ensure)
    if not is_templated(props.name):
        check_name(props.name)
    # ``subscribe`` entries: the common reference check (ccm.resources.properties)


TYPE = TypeSpec(
    name="service",
    fields=FIELDS,
    logic="ccm.resources.service.logic:ServiceLogic",
    providers={
        "systemd": "ccm.resources.service.systemd:SystemdFactory",
        "sysv": "ccm.resources.service.sysv:SysvFactory",
    },
    validate=validate,
    default_ensure="running",
    cli_help="Manage a service",
    cli_aliases=("svc",),
    cli_flags="ccm.cli.ensure_cmd:SERVICE",
)
