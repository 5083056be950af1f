"""The apply type: run another manifest (a child) inside the current run's session."""
from __future__ import annotations

import urllib.parse

from ccm.model.errors import ValidationError
from ccm.model.resource import ANY_MAP, BOOL, NEVER, Field, Properties
from ccm.registry import TypeSpec

FIELDS = (
    Field("noop", BOOL, template=NEVER),
    Field("health_check_only", BOOL, template=NEVER),
    Field("allow_apply", BOOL, template=NEVER, default=True),
    Field("data", ANY_MAP),
)


def validate(props: Properties) -> None:
    name = props.name
    try:
        scheme = urllib.parse.urlsplit(name).scheme
    except ValueError:
        scheme = ""
    if scheme:
        raise ValidationError("name must be a file path, not a URL", field="name")
    if props.ensure != "present":
        raise ValidationError('invalid ensure value: must be "present"', field="ensure")


TYPE = TypeSpec(
    name="apply",
    fields=FIELDS,
    logic="ccm.resources.apply.logic:ApplyLogic",
    providers={"ccmmanifest": "ccm.resources.apply.ccmmanifest:ManifestFactory"},
    validate=validate,
    default_ensure="present",
    supports_status=False,   # "apply resources do not support info queries"
)
