"""Health-check rules checked when a manifest or ``ccm ensure`` loads, before anything
runs (``ccm.resources.properties.validate`` calls ``validate_checks``); the checks
themselves run in ``ccm.healthcheck``."""
from __future__ import annotations


from ccm.model.durations import DurationError, parse_duration
from ccm.model.errors import ValidationError
from ccm.model.resource import is_templated
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List


def validate_checks(checks: List[Dict[str, Any]]) -> None:
    """The load-time rules of a resource's ``health_checks`` (each entry already has only
    known keys, see ``ccm.model.kinds.HealthChecksKind``): command xor goss rules, a
    format that fits, valid goss rules, durations that parse. Raises ``ValidationError``.
    """
    for i, c in enumerate(checks):
        where = f"health_checks[{i}]"
        has_cmd = bool(c.get("command"))
        has_goss = bool(c.get("goss_rules"))
        fmt = c.get("format", "")
        if has_cmd and has_goss:
            raise ValidationError("'command' or 'goss_rules' are mutually exclusive", field=where)
        if has_goss and fmt not in ("", "goss"):
            raise ValidationError("'format' must be 'goss' when using 'goss_rules'", field=f"{where}.format")
        if has_cmd and fmt not in ("", "nagios"):
            raise ValidationError("'format' must be 'nagios' when using 'command'", field=f"{where}.format")
        if not has_cmd and not has_goss:
            raise ValidationError("'format' flag is required: a health check needs a command or goss_rules",
                                  field=where)
        if has_goss:
            from ccm.healthcheck.goss.schema import validate_goss_rules

            validate_goss_rules(c["goss_rules"], where=f"{where}.goss_rules")
        if fmt and fmt not in ("nagios", "goss") and not is_templated(fmt):
            raise ValidationError(f'unknown health check format "{fmt}"', field=f"{where}.format")
        for dk in ("timeout", "try_sleep"):
            if c.get(dk) and not is_templated(c[dk]):
                try:
                    parse_duration(c[dk])
                except DurationError as exc:
                    raise ValidationError(f'invalid {dk.replace("_", " ")} duration "{c[dk]}": {exc}',
                                          field=f"{where}.{dk}") from exc
