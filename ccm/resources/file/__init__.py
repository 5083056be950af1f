"""The file type: regular files and directories, their content and attributes."""
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
            raise ValidationError(f"'force: true' is only valid with 'ensure: absent', got 'ensure: {ensure}'", field="force")
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


# --- what a file provider observed, in the terms the file logic decides from (issue 16) --
#
# ``PosixFileProvider.status`` keeps its raw observation in ``ResourceState.raw`` and
# builds the metadata (names, mode text, RFC 3339 mtime, checksum) only when something
# reads ``extra``; ``FileLogic.is_desired`` decides a file in its desired state from the
# raw facts directly (integers and remembered names, no texts formatted).
#
# ``raw`` is the tuple ``(st, found, desired, owner, group)``:
#
# - ``st``: the ``os.stat_result`` of the file (of the staged file during a write batch);
# - ``found``: the sha256 hex digest of a regular file's bytes, ``SAME`` when they are
#   exactly ``desired`` (their digest is made only when read), None for anything else;
# - ``desired``: what ``status`` was asked to compare the file with: the desired sha256 when
#   it was given one (a ``source``), else the desired bytes; None: content not managed;
# - ``owner``, ``group``: the names of ``st_uid`` and ``st_gid`` (the number as text when
#   it has none), looked up when the state was made, as the metadata shows them.


class _Same:
    """``found`` of a file holding exactly the desired bytes (one object: compared by
    identity, and copied or pickled as itself)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SAME"

    def __reduce__(self) -> str:
        return "SAME"


SAME = _Same()


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
