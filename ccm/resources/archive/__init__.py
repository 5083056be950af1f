"""The archive type: download an archive over HTTP(S), verify it, extract it."""
from __future__ import annotations

import os
import re
import urllib.parse

from ccm.model.errors import ValidationError
from ccm.model.resource import BOOL, INT, NEVER, STR_MAP, Field, Properties, is_templated
from ccm.registry import TypeSpec
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict

ENSURES = ("present", "absent")
EXTENSIONS_TEXT = ".zip, .tar.gz, .tgz, or .tar"
_SENSITIVE_HEADER = re.compile(r"auth|token|key|secret|cookie|passw|session|signature", re.I)


def redact_url(url: Any) -> Any:
    from ccm.httpget import redact_url as _redact

    return _redact(url) if isinstance(url, str) else url


def redact_headers(headers: Any) -> Any:
    if not isinstance(headers, dict):
        return headers
    return {k: ("REDACTED" if _SENSITIVE_HEADER.search(str(k)) else v) for k, v in headers.items()}


FIELDS = (
    Field("url", always_emit=True, redact=redact_url),
    Field("headers", STR_MAP, redact=redact_headers),
    Field("username"),
    Field("password", redact=lambda _v: "REDACTED"),
    Field("checksum"),
    Field("extract_parent"),
    Field("creates"),
    Field("cleanup", BOOL, template=NEVER),
    Field("owner"),
    Field("group"),
    # Decompression-bomb bounds (ccm.safe_extract.Limits); unset means the defaults.
    Field("max_extract_bytes", INT, template=NEVER),
    Field("max_extract_entries", INT, template=NEVER),
    Field("max_extract_ratio", INT, template=NEVER),
)
LIMIT_FIELDS = {"max_extract_bytes": "max_bytes", "max_extract_entries": "max_entries",
                "max_extract_ratio": "max_ratio"}


def archive_type(path: str) -> str:
    """``tar.gz`` (.tar.gz/.tgz), ``tar`` or ``zip``, case-insensitive; ``""`` otherwise."""
    lower = path.lower()
    if lower.endswith(".tar.gz") or lower.endswith(".tgz"):
        return "tar.gz"
    if lower.endswith(".tar"):
        return "tar"
    if lower.endswith(".zip"):
        return "zip"
    return ""


def _canonical_abs(path: str) -> bool:
    return os.path.isabs(path) and os.path.normpath(path) == path and not path.startswith("//")



def validate(props: Properties) -> None:
    name, ensure = props.name, props.ensure
    url = props.get("url") or ""
    if ensure not in ENSURES and not is_templated(ensure):
        raise ValidationError('invalid ensure value: must be one of "present" or "absent"', field="ensure")
    if not url:
        raise ValidationError("url cannot be empty", field="url")
    url_type = "" if is_templated(url) else _url_type(url)
    if not is_templated(name):
        _check_name(name, url_type)
    _check_paths(props)
    checksum = props.get("checksum")
    if checksum and not is_templated(checksum) and not re.fullmatch(r"[0-9a-fA-F]{64}", checksum):
        raise ValidationError("checksum must be a hex encoded sha256 digest (64 characters)", field="checksum")
    for key in ("owner", "group"):
        if not props.get(key):
            raise ValidationError(f"{key} cannot be empty", field=key)
    for key in LIMIT_FIELDS:
        value = props.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise ValidationError("must be a positive integer", field=key)


def _url_type(url: str) -> str:
    """The archive type a literal ``url`` names by its file name, or ValidationError."""
    from ccm.httpget import redact_url as _redact
    from ccm.redact import split_userinfo

    try:
        parsed = urllib.parse.urlsplit(split_userinfo(url)[0])   # credentials never parsed
        parsed.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise ValidationError(f"invalid url: {exc}", field="url") from None
    if not parsed.scheme or not parsed.netloc:
        raise ValidationError("url must be absolute (include scheme like http:// or https://)", field="url")
    if parsed.scheme.lower() not in ("http", "https"):
        raise ValidationError(f"url scheme must be http or https, got {parsed.scheme!r} in {_redact(url)}",
                              field="url")
    base = os.path.basename(parsed.path)
    if not base:
        raise ValidationError("url must have a filename in the path", field="url")
    url_type = archive_type(base)
    if not url_type:
        raise ValidationError(f"url filename must end in {EXTENSIONS_TEXT}", field="url")
    return url_type


def _check_name(name: str, url_type: str) -> None:
    name_type = archive_type(name)
    if not name_type:
        raise ValidationError(f"name must end in {EXTENSIONS_TEXT}", field="name")
    if url_type and url_type != name_type:
        raise ValidationError(
            f"url and name must have the same archive type: url is {url_type}, name is {name_type}", field="name")
    if not _canonical_abs(name):
        raise ValidationError("file path must be absolute", field="name")


def _check_paths(props: Properties) -> None:
    """``cleanup``'s two requirements, then ``creates`` and ``extract_parent`` absolute."""
    if props.get("cleanup"):
        if not props.get("extract_parent"):
            raise ValidationError("cleanup requires extract_parent to be set", field="cleanup")
        if not props.get("creates"):
            raise ValidationError("cleanup requires creates to be set", field="cleanup")
    for key in ("creates", "extract_parent"):
        value = props.get(key)
        if value and not is_templated(value) and not _canonical_abs(value):
            raise ValidationError(f"{key} path must be absolute", field=key)


def prepare(values: Dict[str, Any]) -> None:
    # Upstream compares with the lower-case hex digest, so an upper-case checksum never
    # converges there; normalise instead.
    checksum = values.get("checksum")
    if isinstance(checksum, str) and not is_templated(checksum):
        values["checksum"] = checksum.strip().lower()


TYPE = TypeSpec(
    name="archive",
    fields=FIELDS,
    logic="ccm.resources.archive.logic:ArchiveLogic",
    providers={"http": "ccm.resources.archive.http:HttpFactory"},
    validate=validate,
    prepare=prepare,
    supports_status=False,
    status_unsupported_message=(
        "Status for 'exec' and 'archive' resources is not supported yet due to them relying heavily on "
        "specific properties and may require additional context for accurate status determination."),
    cli_help="Download and extract an archive",
    cli_flags="ccm.cli.ensure_extra:ARCHIVE",
)
