"""The file type: regular files and directories, their content and attributes.

Modules: ``logic`` (the pure decision), ``posix`` (the provider: every read and write),
``observation`` (what ``status`` saw, the contract between them) and ``steady`` (the
state whose metadata is made when read, behind ``CCM_FILE_STEADY``).
"""
from __future__ import annotations

import os

from ccm.model.errors import ValidationError
from ccm.model.resource import BOOL, DEFERRED, NEVER, Field, Properties, is_templated
from ccm.registry import TypeSpec

ENSURES = ("present", "absent", "directory")

FIELDS = (
    Field("content", template=DEFERRED),
    Field("source", template=DEFERRED),
    Field("owner"),
    Field("group"),
    Field("mode"),
    Field("force", BOOL, template=NEVER),
)


def validate(props: Properties) -> None:
    from ccm.resources.ownership import parse_mode

    name, ensure = props.name, props.ensure
    if ensure not in ENSURES and not is_templated(ensure):
        raise ValidationError('invalid ensure value: must be one of "present", "absent" or "directory"', field="ensure")
    if not os.path.isabs(name):
        raise ValidationError("file path must be absolute", field="name")
    if os.path.normpath(name) != name or name.startswith("//"):
        raise ValidationError("file path must be canonical", field="name")
    if props.get("force"):
        if ensure != "absent":
            raise ValidationError(f"'force: true' is only valid with 'ensure: absent', got 'ensure: {ensure}'",
                                  field="force")
        if name == "/":
            raise ValidationError("'force: true' cannot be used with the filesystem root", field="force")
    if props["content"] is not None and props.get("source"):
        raise ValidationError("'content' and 'source' are mutually exclusive", field="content")
    if ensure != "absent":
        for key in ("owner", "group", "mode"):
            if not props.get(key):
                raise ValidationError(f"{key} cannot be empty", field=key)
        mode = props.get("mode")
        if not is_templated(mode):
            parse_mode(mode)


TYPE = TypeSpec(
    name="file",
    fields=FIELDS,
    logic="ccm.resources.file.logic:FileLogic",
    providers={"posix": "ccm.resources.file.posix:PosixFactory"},
    validate=validate,
    status_name=os.path.abspath,
    cli_help="Manage a file or directory",
    cli_flags="ccm.cli.ensure_cmd:FILE",
)
