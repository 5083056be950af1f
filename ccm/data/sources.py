"""Hiera data sources: local files, ``http(s)://`` and ``kv://BUCKET/KEY`` (spec §2.3).

What: fetch a source's text, decode it (JSON when the trimmed text starts with ``{`` or
``[``, else YAML with YAML 1.2-style scalars), and resolve it with ``hiera.resolve``.
Guarantees: URL credentials are sent as basic auth and never appear in errors or logs
(``https://REDACTED@host/...``); every failure is a ValidationError naming the source.
Not: a NATS client. ``kv://`` needs a ``kv_loader(bucket, key) -> str|bytes`` from the
caller; without one it fails cleanly.
"""
from __future__ import annotations

import json
import os
import re

import yaml

from ccm.data.hiera import Resolution, looks_like_json, resolve, validate_rules
from ccm.log import internal
from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

    KVLoader = Callable[[str, str], Union[str, bytes, None]]

log = internal("ccm.data.sources")

HTTP_TIMEOUT = 60.0
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class SourceNotFound(ValidationError):
    """A plain-path source does not exist (callers may treat it as "skip")."""


def load_yaml(text: str, source: str = "") -> Any:
    """Decode one YAML document with upstream's (yaml.v3) scalar rules."""
    from ccm import yamlio

    return yamlio.load(text, source=source)


def parse_text(text: str, name: str) -> Any:
    """JSON when the trimmed text starts with ``{`` or ``[``, else YAML."""
    try:
        if looks_like_json(text):
            from ccm import yamlio

            return yamlio.check_depth(json.loads(text), name)
        return load_yaml(text, name)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"failed to parse {name}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
    except yaml.YAMLError as exc:
        raise ValidationError(f"failed to parse {exc}") from None
    except RecursionError:
        from ccm.yamlio import MAX_DEPTH

        raise ValidationError(f"failed to parse {name}: nesting deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:   # e.g. a number with thousands of digits
        raise ValidationError(f"failed to parse {name}: {str(exc).split(';')[0]}") from None


def redact_url(url: str) -> str:
    """``https://user:pass@host/p`` -> ``https://REDACTED@host/p`` (``ccm.redact``)."""
    from ccm.redact import redact_url as _redact

    return _redact(url)


def _fetch_http(source: str) -> str:
    """GET a Hiera document through ``ccm.httpget`` (the one HTTP client): credentials
    dropped across origins, no https->http downgrade, the document size cap and one
    overall deadline."""
    import io

    from ccm import httpget
    from ccm.readfile import document_limit

    shown = redact_url(source)
    log.debug("fetching hiera data from %s", shown)
    body = io.BytesIO()
    try:
        httpget.get(source, body, headers={"User-Agent": "ccm"}, timeout=HTTP_TIMEOUT,
                    max_bytes=document_limit())
    except httpget.HTTPGetError as exc:
        reason = str(exc)
        status = "HTTP request failed with status "
        if reason.startswith(status):
            raise ValidationError(f"HTTP request to {shown} failed with status {reason[len(status):]}") from None
        raise ValidationError(f"failed to fetch hiera data from {shown}: {httpget.reason_of(exc, shown)}") from None
    data = body.getvalue()
    if not data:
        raise ValidationError(f"HTTP request to {shown} returned an empty body")
    from ccm.readfile import decode

    return decode(data, "hiera data from", shown)


def _fetch_kv(source: str, kv_loader: Optional[KVLoader]) -> str:
    rest = source[len("kv://"):]
    bucket, _, key = rest.partition("/")
    if not bucket or not key:
        raise ValidationError(f"invalid kv source {source}: expected kv://BUCKET/KEY")
    if kv_loader is None:
        raise ValidationError(f"kv:// sources need NATS: cannot load {source}")
    value = kv_loader(bucket, key)
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if not value:
        raise ValidationError(f"kv {bucket}#{key} is empty")
    return value


def _read_file(path: str) -> str:
    from ccm.readfile import read_text

    if not os.path.exists(path):
        raise SourceNotFound(f"file not found: {path}")
    return read_text(path, "hiera data")


def source_name(source: str, cwd: Optional[str] = None) -> str:
    """How a source is named in messages: absolute path, redacted URL, or kv://..."""
    if _SCHEME.match(source) and not source.startswith("file://"):
        return redact_url(source)
    path = source[len("file://"):] if source.startswith("file://") else source
    return os.path.normpath(os.path.join(cwd or os.getcwd(), path))


def fetch_text(source: str, *, cwd: Optional[str] = None, kv_loader: Optional[KVLoader] = None) -> Tuple[str, str]:
    """(text, display name) of a source, without decoding it."""
    match = _SCHEME.match(source)
    scheme = match.group(1).lower() if match else ""
    if scheme in ("http", "https"):
        return _fetch_http(source), redact_url(source)
    if scheme == "kv":
        return _fetch_kv(source, kv_loader), source
    if scheme and scheme != "file":
        raise ValidationError(f"unsupported hiera data source: {redact_url(source)}")
    path = source_name(source, cwd)
    return _read_file(path), path


def load_document(
    source: str, *, cwd: Optional[str] = None, kv_loader: Optional[KVLoader] = None
) -> Tuple[Dict[str, Any], str]:
    """(document, source_text) of a Hiera source; an empty file is an empty document."""
    text, name = fetch_text(source, cwd=cwd, kv_loader=kv_loader)
    document = parse_text(text, name) if text.strip() else {}
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise ValidationError(f"{name}: hiera data must be a map, got {type(document).__name__}")
    return document, text


_HIERA_KEYS = ("data", "hierarchy", "overrides")


def _warn_without_data(document: Mapping[str, Any], name: str) -> None:
    """A source whose top-level keys are data (``x: 1``) without a ``data:`` key above them
    resolves to nothing: only ``data``, ``hierarchy`` and ``overrides`` are read. Said in
    one line naming the source (a file, ``kv://`` or ``http(s)://`` value alike)."""
    if "data" in document:
        return
    stray = [str(k) for k in document if k not in _HIERA_KEYS]
    if stray:
        shown = ", ".join(stray[:5]) + (f" and {len(stray) - 5} more" if len(stray) > 5 else "")
        log.warning(f"hiera source has no top-level data key, so its keys ({shown}) are ignored: "
                    "put them under data:", extra={"kv": {"source": name}})


def resolve_source(
    source: str,
    facts: Mapping[str, Any],
    *,
    cwd: Optional[str] = None,
    kv_loader: Optional[KVLoader] = None,
    missing_ok: bool = False,
    data_overrides: Optional[Mapping[str, Any]] = None,
    validate: bool = True,
) -> Resolution:
    """Load, resolve and (unless ``validate=False``) validate one source.

    ``data_overrides`` are deep-merged over the resolved data before validation. With
    ``missing_ok`` a plain file that does not exist resolves to empty data.
    """
    try:
        document, text = load_document(source, cwd=cwd, kv_loader=kv_loader)
    except SourceNotFound:
        if missing_ok:
            log.debug("hiera source %s not found, skipping", source)
            return Resolution(data={}, rules=[])
        raise
    name = source_name(source, cwd)
    _warn_without_data(document, redact_url(name))
    result = resolve(document, facts, source_text=text, source_name=name, data_overrides=data_overrides)
    if validate:
        validate_rules(result.rules, result.data, source_name=name)
    return result


def hiera_flag(source: str) -> str:
    """How an error names where a Hiera overlay (``--hiera``) came from: the flag, or
    ``CCM_HIERA_DATA`` when the source is that variable's value."""
    return "--hiera (CCM_HIERA_DATA)" if os.environ.get("CCM_HIERA_DATA") == source else "--hiera"
