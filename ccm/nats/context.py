"""NATS contexts, exactly as the ``nats`` CLI stores them (spec nats.md).

``load(name)`` resolves a context name (or an absolute path) to a ``NatsContext``:
``$XDG_CONFIG_HOME/nats/context/NAME.json`` (else ``~/.config/...``). Every failure is
one ``NatsError`` naming the context, never its secrets.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from ccm.nats import NatsError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional

DEFAULT_URL = "nats://127.0.0.1:4222"
MAX_CONTEXT_BYTES = 1 << 20
_PATH_KEYS = ("creds", "nkey", "cert", "key", "ca")
_STRING_KEYS = ("url", "user", "password", "creds", "nkey", "token", "cert", "key", "ca", "socks_proxy",
                "inbox_prefix", "jetstream_domain", "jetstream_api_prefix", "jetstream_event_prefix",
                "name", "description", "color_scheme", "user_jwt", "nsc", "windows_cert_store",
                "windows_cert_match", "windows_cert_match_by", "windows_ca_certs_match")
_UNSUPPORTED = ("windows_cert_store", "windows_cert_match", "windows_ca_certs_match")
_ENV = re.compile(r"\$(\w+)|\$\{(\w+)\}")


@dataclass(frozen=True)
class NatsContext:
    name: str                 # as given (a name or an absolute path)
    path: str
    servers: List[str] = field(default_factory=lambda: [DEFAULT_URL])
    user: str = ""
    password: str = field(default="", repr=False)
    token: str = field(default="", repr=False)
    creds: str = ""
    nkey: str = ""
    cert: str = ""
    key: str = ""
    ca: str = ""
    tls_first: bool = False
    inbox_prefix: str = ""
    jetstream_domain: str = ""
    jetstream_api_prefix: str = ""
    socks_proxy: str = ""

    @property
    def api_prefix(self) -> str:
        """The JetStream API prefix: the domain's, the explicit one, or ``$JS.API``."""
        if self.jetstream_domain:
            return f"$JS.{self.jetstream_domain}.API"
        if self.jetstream_api_prefix:
            return self.jetstream_api_prefix.rstrip(".")
        return "$JS.API"

    @property
    def uses_tls(self) -> bool:
        return bool(self.cert or self.ca or self.tls_first) or any(s.startswith("tls://") for s in self.servers)

    def display_servers(self) -> str:
        return ",".join(redact_url(s) for s in self.servers)


def redact_url(url: str) -> str:
    """``nats://user:pass@host:4222`` -> ``nats://REDACTED@host:4222``."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@", r"\1REDACTED@", url.strip())


def config_dir(environ: Mapping[str, str]) -> str:
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg:
        return xdg
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".config")


def context_path(name: str, environ: Optional[Mapping[str, str]] = None) -> str:
    env = os.environ if environ is None else environ
    if not name:
        raise NatsError("nats context not set")
    if os.path.isabs(name):
        return name
    if ".." in name or "/" in name or os.sep in name:
        raise NatsError(f"invalid context name {name}")
    return os.path.join(config_dir(env), "nats", "context", f"{name}.json")


def _expand_env(text: str, environ: Mapping[str, str]) -> str:
    return _ENV.sub(lambda m: environ.get(m.group(1) or m.group(2), ""), text)


def _expand_home(text: str) -> str:
    return os.path.expanduser(text) if text.startswith("~") else text


def load(name: str, environ: Optional[Mapping[str, str]] = None) -> NatsContext:
    """Read and check the context ``name``; raise one clear NatsError otherwise."""
    env = os.environ if environ is None else environ
    path = context_path(name, env)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise NatsError(f'unknown context "{name}"') from None
    except OSError as exc:
        raise NatsError(f'cannot read nats context "{name}" ({path}): {exc.strerror or exc}') from None
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_CONTEXT_BYTES + 1)
    except OSError as exc:
        raise NatsError(f'cannot read nats context "{name}" ({path}): {exc.strerror or exc}') from None
    if len(raw) > MAX_CONTEXT_BYTES:
        raise NatsError(f'invalid nats context "{name}" ({path}): larger than {MAX_CONTEXT_BYTES} bytes')
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise NatsError(f'invalid nats context "{name}" ({path}): not valid JSON: {exc}') from None
    if not isinstance(doc, dict):
        raise NatsError(f'invalid nats context "{name}" ({path}): expected a JSON object')
    return from_document(name, path, doc, env)


def from_document(name: str, path: str, doc: Dict[str, Any], environ: Mapping[str, str]) -> NatsContext:
    where = f'invalid nats context "{name}" ({path})'
    values: Dict[str, str] = {}
    for key in _STRING_KEYS:
        value = doc.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise NatsError(f"{where}: {key} must be a string")
        values[key] = value
    tls_first = doc.get("tls_first", False)
    if tls_first is None:
        tls_first = False
    if not isinstance(tls_first, bool):
        raise NatsError(f"{where}: tls_first must be a boolean")
    for key in _UNSUPPORTED:
        if values.get(key):
            raise NatsError(f"{where}: {key} is not supported")
    if values.get("creds"):
        values["creds"] = _expand_env(values["creds"], environ)
    for key in _PATH_KEYS:
        if values.get(key):
            values[key] = _expand_home(values[key])
    if bool(values.get("cert")) != bool(values.get("key")):
        raise NatsError(f"{where}: cert and key must be given together")
    servers = [s.strip() for s in values.get("url", "").split(",") if s.strip()] or [DEFAULT_URL]
    for s in servers:
        if "://" not in s:
            continue
        scheme = s.split("://", 1)[0].lower()
        if scheme not in ("nats", "tls", "ws", "wss"):
            raise NatsError(f"{where}: unsupported server URL scheme in {redact_url(s)}")
    return NatsContext(
        name=name, path=path, servers=servers, user=values.get("user", ""), password=values.get("password", ""),
        token=values.get("token", ""), creds=values.get("creds", ""), nkey=values.get("nkey", ""),
        cert=values.get("cert", ""), key=values.get("key", ""), ca=values.get("ca", ""), tls_first=tls_first,
        inbox_prefix=values.get("inbox_prefix", ""), jetstream_domain=values.get("jetstream_domain", ""),
        jetstream_api_prefix=values.get("jetstream_api_prefix", ""), socks_proxy=values.get("socks_proxy", ""))
