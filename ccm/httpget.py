"""One HTTP(S) GET into a file object, for archive downloads and remote manifest bundles.

Guarantees: ``urllib`` only; TLS certificates verified (default SSL context); basic
auth from explicit credentials, else from the URL's user info (which is never sent as
part of the URL); an explicit ``Authorization`` header wins over basic auth; redirects
followed (http/https only) and credentials dropped when a redirect leaves the original
host; an overall deadline, not just a per-read timeout; status must be 200. Error
messages and ``redact_url`` never contain the user info.

Not: a retrying or resuming client; proxies follow urllib's environment defaults.
"""
from __future__ import annotations

import base64
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Mapping, Optional, Protocol, Tuple

from ccm.model.errors import CCMError

DEFAULT_TIMEOUT = 60.0
_CHUNK = 1 << 16


class HTTPGetError(CCMError):
    """The GET failed: connection, TLS, timeout or a status other than 200."""


def redact_url(url: str) -> str:
    """``https://user:pass@host/p`` -> ``https://REDACTED@host/p``; others unchanged."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url if "@" not in url else "REDACTED"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit((parts.scheme, f"REDACTED@{host}", parts.path, parts.query, parts.fragment))


def split_credentials(url: str) -> Tuple[str, str, str]:
    """Return ``(url without user info, username, password)`` (both unquoted)."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, "", ""
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    clean = urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return clean, urllib.parse.unquote(user), urllib.parse.unquote(password)


def basic_auth(username: str, password: str) -> str:
    token = base64.b64encode(f"{username}:{password}".encode("utf-8")).decode("ascii")
    return f"Basic {token}"


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects to http/https only; never carry credentials to another host."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D401 - urllib hook
        new = urllib.parse.urlsplit(newurl)
        if new.scheme not in ("http", "https"):
            raise HTTPGetError(f"refusing redirect to a {new.scheme or 'relative'} URL")
        result = super().redirect_request(req, fp, code, msg, headers, newurl)
        if result is not None:
            old = urllib.parse.urlsplit(req.full_url)
            if (old.scheme, old.hostname, old.port) != (new.scheme, new.hostname, new.port) and \
                    not (old.hostname == new.hostname and old.scheme == "http" and new.scheme == "https"):
                for key in list(result.headers):
                    if key.lower() in ("authorization", "cookie", "proxy-authorization"):
                        del result.headers[key]
        return result


class Sink(Protocol):
    """Where a body is streamed: anything with ``write(bytes)``."""

    def write(self, data: bytes) -> int: ...


def get(url: str, out: Sink, *, username: str = "", password: str = "",
        headers: Optional[Mapping[str, str]] = None, timeout: float = DEFAULT_TIMEOUT) -> int:
    """GET ``url`` and stream the body into ``out``; returns the number of bytes written."""
    shown = redact_url(url)
    try:
        clean, url_user, url_pass = split_credentials(url)
        scheme = urllib.parse.urlsplit(clean).scheme
    except ValueError as exc:
        raise HTTPGetError(f"invalid url {shown}: {exc}") from None
    if scheme not in ("http", "https"):
        raise HTTPGetError(f"unsupported url scheme {scheme!r} in {shown}")
    request = urllib.request.Request(clean, method="GET")
    explicit = dict(headers or {})
    if not any(k.lower() == "authorization" for k in explicit):
        if username and password:
            request.add_header("Authorization", basic_auth(username, password))
        elif url_user:
            request.add_header("Authorization", basic_auth(url_user, url_pass))
    for key, value in explicit.items():
        request.add_header(key, value)
    opener = urllib.request.build_opener(
        urllib.request.HTTPSHandler(context=ssl.create_default_context()), _Redirects())
    deadline = time.monotonic() + timeout
    total = 0
    try:
        with opener.open(request, timeout=timeout) as resp:
            status = resp.getcode()
            if status != 200:
                raise HTTPGetError(f"HTTP request failed with status {status}: {resp.reason}")
            sock = _socket_of(resp)
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise HTTPGetError(f"GET {shown}: timed out after {timeout:g}s")
                if sock is not None and not resp.isclosed():
                    try:
                        sock.settimeout(remaining)
                    except OSError:
                        sock = None
                chunk = resp.read1(_CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                total += len(chunk)
    except HTTPGetError:
        raise
    except urllib.error.HTTPError as exc:
        raise HTTPGetError(f"HTTP request failed with status {exc.code}: {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, socket.timeout):
            raise HTTPGetError(f"GET {shown}: timed out after {timeout:g}s") from None
        raise HTTPGetError(f"GET {shown}: {reason}") from None
    except socket.timeout:
        raise HTTPGetError(f"GET {shown}: timed out after {timeout:g}s") from None
    except (OSError, ValueError) as exc:
        raise HTTPGetError(f"GET {shown}: {exc}") from None
    return total


def _socket_of(resp) -> Optional[socket.socket]:
    try:
        return resp.fp.raw._sock  # http.client response -> SocketIO -> socket
    except AttributeError:
        return None
