"""The scaffold type: render a directory of templates (Jet or Go) into a target directory."""
from __future__ import annotations

import os

from ccm.model.errors import ValidationError
from ccm.model.resource import ANY_MAP, BOOL, NEVER, POST_LIST, Field, Properties, is_templated
from ccm.registry import TypeSpec
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Tuple

ENSURES = ("present", "absent")
ENGINES = ("go", "jet")
DEFAULT_DELIMITERS = {"jet": ("[[", "]]"), "go": ("{{", "}}")}

FIELDS = (
    Field("source", always_emit=True),
    Field("engine", template=NEVER),
    Field("left_delimiter", template=NEVER),
    Field("right_delimiter", template=NEVER),
    Field("skip_empty", BOOL, template=NEVER),
    Field("purge", BOOL, template=NEVER),
    Field("data", ANY_MAP, typed_keys=True),
    Field("post", POST_LIST),
)



def prepare(values: Dict[str, Any]) -> None:
    # Upstream validates before applying the documented default, so an omitted engine
    # fails outside the CLI; ours applies the default first, everywhere.
    if not values.get("engine"):
        values["engine"] = "jet"


def delimiters(props: Properties) -> Tuple[str, str]:
    left, right = DEFAULT_DELIMITERS.get(props.get("engine") or "jet", ("[[", "]]"))
    return props.get("left_delimiter") or left, props.get("right_delimiter") or right


def validate(props: Properties) -> None:
    name, ensure = props.name, props.ensure
    if ensure not in ENSURES and not is_templated(ensure):
        raise ValidationError('invalid ensure value: must be one of "present" or "absent"', field="ensure")
    if not is_templated(name):
        if not os.path.isabs(name):
            raise ValidationError("name must be an absolute path", field="name")
        if os.path.normpath(name) != name or name.startswith("//"):
            raise ValidationError("name must be a canonical path", field="name")
        if name == "/":
            raise ValidationError("name cannot be the filesystem root", field="name")
    if not props.get("source"):
        raise ValidationError("source cannot be empty", field="source")
    if props.get("engine") not in ENGINES:
        raise ValidationError('engine must be one of "go" or "jet"', field="engine")
    for entry in props.get("post") or []:
        for key, value in entry.items():
            if not key:
                raise ValidationError("post keys cannot be empty", field="post")
            if not value:
                raise ValidationError(f'post value for key "{key}" cannot be empty', field="post")


TYPE = TypeSpec(
    name="scaffold",
    fields=FIELDS,
    logic="ccm.resources.scaffold.logic:ScaffoldLogic",
    providers={"choria": "ccm.resources.scaffold.choria:ChoriaFactory"},
    validate=validate,
    prepare=prepare,
    supports_status=False,   # `ccm status scaffold` -> "unsupported resource type"
    deferred_placeholders={"data": "keep"},
    cli_help="Render a template directory",
    cli_flags="ccm.cli.ensure_extra:SCAFFOLD",
)
