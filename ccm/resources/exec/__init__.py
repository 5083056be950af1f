"""The exec type: run a command, guarded by creates/onlyif/unless, refreshable."""
from __future__ import annotations

import os
import shlex

from ccm.model.durations import DurationError, parse_duration
from ccm.model.errors import ValidationError
from ccm.model.resource import BOOL, DEFERRED, INT_LIST, NEVER, STR_LIST, Field, Properties, is_templated
from ccm.registry import TypeSpec
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List

FIELDS = (
    Field("command", template=DEFERRED, always_emit=True),
    Field("cwd", template=DEFERRED),
    Field("environment", STR_LIST, template=DEFERRED),
    Field("path"),
    Field("returns", INT_LIST, template=NEVER, default=(0,)),
    Field("timeout"),
    Field("creates", template=DEFERRED),
    Field("onlyif", template=DEFERRED),
    Field("unless", template=DEFERRED),
    Field("refreshonly", BOOL, template=NEVER),
    Field("subscribe", STR_LIST),
    Field("logoutput", BOOL, template=NEVER),
)


def split_command(line: str) -> List[str]:
    """POSIX shell word splitting (quotes, backslashes, no expansion)."""
    try:
        return shlex.split(line, comments=False, posix=True)
    except ValueError as exc:
        text = str(exc)
        if "quotation" in text:
            text = "Unterminated quoted string"
        elif "escape" in text:
            text = "Unterminated backslash-escape"
        raise ValidationError(text, field="command") from None



def validate(props: Properties) -> None:
    if props.ensure not in ("present", "absent") and not is_templated(props.ensure):
        raise ValidationError('invalid ensure value: must be "present" or "absent"', field="ensure")
    if props.get("timeout"):
        try:
            parse_duration(props.get("timeout"))
        except DurationError as exc:
            raise ValidationError(str(exc), field="timeout") from None
    if not is_templated(props.name) and not split_command(props.name):
        raise ValidationError("invalid command", field="name")
    command = props.get("command")
    if command and not is_templated(command) and not split_command(command):
        raise ValidationError("invalid command", field="command")
    if props.get("path"):
        _check_path(props.get("path"))
    for entry in props.get("environment") or []:
        if not is_templated(entry):
            _check_environment_entry(entry)


def _check_path(path: str) -> None:
    for d in path.split(":"):
        if not d:
            raise ValidationError("invalid path: empty directory in path", field="path")
        if not os.path.isabs(d):
            raise ValidationError(f'invalid path: "{d}" is not an absolute path', field="path")


def _check_environment_entry(entry: str) -> None:
    if "=" not in entry:
        raise ValidationError(f"invalid environment variable \"{entry}\": missing '='", field="environment")
    key, value = entry.split("=", 1)
    if not key:
        raise ValidationError(f'invalid environment variable "{entry}": empty key', field="environment")
    if not value:
        raise ValidationError(f'invalid environment variable "{entry}": empty value', field="environment")


TYPE = TypeSpec(
    name="exec",
    fields=FIELDS,
    logic="ccm.resources.exec.logic:ExecLogic",
    providers={"posix": "ccm.resources.exec.providers:PosixFactory",
               "shell": "ccm.resources.exec.providers:ShellFactory"},
    validate=validate,
    default_ensure="present",
    supports_status=False,
    deferred_placeholders={"environment": "env"},
    status_unsupported_message=(
        "Status for 'exec' and 'archive' resources is not supported yet due to them relying heavily on "
        "specific properties and may require additional context for accurate status determination."),
    cli_help="Run a command",
    cli_flags="ccm.cli.ensure_cmd:EXEC",
)
