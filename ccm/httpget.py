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
import http.client
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Dict, IO, List, Mapping, Optional, Tuple

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_BYTES = 4 << 30          # archives and bundles; $CCM_MAX_DOWNLOAD_BYTES overrides
ENV_MAX_BYTES = "CCM_MAX_DOWNLOAD_BYTES"
_CHUNK = 1 << 16


def download_limit() -> int:
    from ccm.readfile import env_limit

    return env_limit(ENV_MAX_BYTES, DEFAULT_MAX_BYTES)


class HTTPGetError(CCMError):
    """The GET failed: connection, TLS, timeout or a status other than 200."""


class NotModified(HTTPGetError):
    """A conditional GET answered 304: nothing was downloaded."""


def redact_url(url: str) -> str:
    """``https://user:pass@host/p`` -> ``https://REDACTED@host/p``, from the raw text."""
    from ccm.redact import redact_url as _redact

    return _redact(url)


def split_credentials(url: str) -> Tuple[str, str, str]:
    """Return ``(url without user info, username, password)`` (both unquoted).

    The user info is found in the raw text (``ccm.redact.split_userinfo``), so an
    unencoded ``#``, ``/`` or ``?`` in a password neither splits the URL nor leaks.
    """
    from ccm.redact import split_userinfo

    clean, user, password = split_userinfo(url)
    return clean, urllib.parse.unquote(user), urllib.parse.unquote(password)


def basic_auth(username: str, password: str) -> str:
    token = base64.b64encode(f"{username}:{password}".encode("utf-8")).decode("ascii")
    return f"Basic {token}"


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects to http/https only; never carry credentials to another host."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,  # urllib hook
                         headers: http.client.HTTPMessage, newurl: str) -> Optional[urllib.request.Request]:
        new = urllib.parse.urlsplit(newurl)
        if new.scheme not in ("http", "https"):
            raise HTTPGetError(f"refusing redirect to a {new.scheme or 'relative'} URL")
        if urllib.parse.urlsplit(req.full_url).scheme == "https" and new.scheme == "http":
            raise HTTPGetError(f"refusing redirect from https to http ({redact_url(newurl)})")
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
        headers: Optional[Mapping[str, str]] = None, timeout: float = DEFAULT_TIMEOUT,
        max_bytes: Optional[int] = None, response_headers: Optional[Dict[str, str]] = None) -> int:
    """GET ``url`` and stream the body into ``out``; returns the number of bytes written.

    ``timeout`` is one deadline for the whole request (connect, headers, body), not per
    read; more than ``max_bytes`` (default ``download_limit()``) or a body shorter or
    longer than its ``Content-Length`` is an error. ``response_headers``, when given,
    receives the 200 response's headers (lower-case names); a 304 answer to a
    conditional request raises ``NotModified``.
    """
    limit = download_limit() if max_bytes is None else max_bytes
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
    watchdog = _Watchdog(timeout)
    opener = urllib.request.build_opener(_WatchedHTTP(watchdog),
                                         _WatchedHTTPS(watchdog, ssl.create_default_context()), _Redirects())
    deadline = time.monotonic() + timeout
    total = 0
    try:
        with watchdog, opener.open(request, timeout=timeout) as resp:
            status = resp.getcode()
            if status != 200:
                raise HTTPGetError(f"HTTP request failed with status {status}: {resp.reason}")
            if response_headers is not None:
                response_headers.update({k.lower(): v for k, v in resp.headers.items()})
            sock = _socket_of(resp)
            declared = resp.headers.get("Content-Length")
            expected = int(declared) if declared and (declared.strip().isascii() and declared.strip().isdigit()) else None
            if expected is not None and expected > limit:
                raise HTTPGetError(f"GET {shown}: Content-Length {expected} exceeds the limit of {limit} bytes")
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
                if watchdog.fired:   # the deadline shut the socket: an EOF that is not the end
                    raise HTTPGetError(f"GET {shown}: timed out after {timeout:g}s")
                if not chunk:
                    break
                total += len(chunk)
                if total > limit:
                    raise HTTPGetError(f"GET {shown}: body exceeds the limit of {limit} bytes")
                out.write(chunk)
            if expected is not None and total != expected:
                raise HTTPGetError(f"GET {shown}: body of {total} bytes does not match Content-Length {expected}")
    except HTTPGetError:
        raise
    except (OSError, urllib.error.URLError, http.client.HTTPException) if watchdog.fired else ():
        raise HTTPGetError(f"GET {shown}: timed out after {timeout:g}s") from None
    except urllib.error.HTTPError as exc:
        if exc.code == 304:
            raise NotModified("not modified") from None
        raise HTTPGetError(f"HTTP request failed with status {exc.code}: {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, socket.timeout):
            raise HTTPGetError(f"GET {shown}: timed out after {timeout:g}s") from None
        raise HTTPGetError(f"GET {shown}: {_in_words(reason)}") from None
    except socket.timeout:
        raise HTTPGetError(f"GET {shown}: timed out after {timeout:g}s") from None
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise HTTPGetError(f"GET {shown}: {redact_url(_in_words(exc)) or type(exc).__name__}") from None
    return total


def _in_words(reason: object) -> str:
    """An OS error as words (``connection refused``), without Python's ``[Errno 111]``."""
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror[:1].lower() + reason.strerror[1:]
    return str(reason)


def reason_of(exc: HTTPGetError, shown: str) -> str:
    """The reason of a failed GET of ``shown`` without the ``GET <url>: `` its text starts
    with, for messages that name the URL themselves."""
    text = str(exc)
    prefix = f"GET {shown}: "
    return text[len(prefix):] if text.startswith(prefix) else text


class _Watchdog:
    """One deadline for connect, headers and body: when it passes, every socket the request
    opened (redirects included) is shut down, so a server dripping its headers cannot hold
    the request open with per-read timeouts."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.sockets: List[socket.socket] = []
        self.fired = False
        self._timer: Optional[threading.Timer] = None

    def watch(self, sock: Optional[socket.socket]) -> None:
        if sock is not None:
            self.sockets.append(sock)

    def _fire(self) -> None:
        self.fired = True
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> "_Watchdog":
        self._timer = threading.Timer(self.timeout, self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()


class _WatchedHTTP(urllib.request.HTTPHandler):
    def __init__(self, watchdog: _Watchdog):
        super().__init__()
        self.watchdog = watchdog

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        dog = self.watchdog

        class Conn(http.client.HTTPConnection):
            def connect(self) -> None:
                super().connect()
                dog.watch(self.sock)

        return self.do_open(Conn, req)


class _WatchedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, watchdog: _Watchdog, context: ssl.SSLContext):
        super().__init__(context=context)
        self.watchdog = watchdog
        self.context = context

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        dog = self.watchdog

        class Conn(http.client.HTTPSConnection):
            def connect(self) -> None:
                super().connect()
                dog.watch(self.sock)

        return self.do_open(Conn, req, context=self.context)


def _socket_of(resp: Any) -> Optional[socket.socket]:
    try:
        sock: Optional[socket.socket] = resp.fp.raw._sock
        return sock  # http.client response -> SocketIO -> socket
    except AttributeError:
        return None
