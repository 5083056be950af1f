"""Network observations for goss rules: HTTP requests, TCP reachability, name resolution.

Guarantees: every call has a timeout; failures come back as ``NetworkError`` with a
reason, never as an exception from urllib/socket. Environment proxies are not used, so
a check behaves the same under cron, the agent and a shell.
Not: a DNS client (``server`` is rejected at load; names go through the system resolver).
"""
from __future__ import annotations

import base64
import concurrent.futures
import socket
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple


class NetworkError(Exception):
    pass


@dataclass
class HTTPResponse:
    status: int
    headers: List[Tuple[str, str]] = field(default_factory=list)
    body: str = ""

    @property
    def header_text(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self.headers)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def,unused-ignore]
        return None  # urllib then raises HTTPError carrying the 3xx response


def _ssl_context(opts: Dict[str, Any]) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=opts.get("ca-file") or None)
    if opts.get("allow-insecure"):
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if opts.get("cert-file"):
        ctx.load_cert_chain(opts["cert-file"], opts.get("key-file") or None)
    return ctx


def _split_userinfo(url: str) -> Tuple[str, str, str]:
    """``http://u:p@host/x`` -> (``http://host/x``, u, p): credentials become basic auth
    (as Go's client does) and never appear in messages."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None:
        return url, "", ""
    netloc = parts.netloc.rpartition("@")[2]
    return (urlunsplit(parts._replace(netloc=netloc)), unquote(parts.username),
            unquote(parts.password or ""))


def http_request(url: str, opts: Dict[str, Any]) -> HTTPResponse:
    """One request as goss makes it (``opts`` are the goss http options)."""
    timeout = float(opts.get("timeout") or 5000) / 1000.0
    url, user, password = _split_userinfo(url)
    if user and not opts.get("username"):
        opts = dict(opts, username=user, password=password)
    data = opts.get("request-body")
    body = data.encode() if isinstance(data, str) and data else None
    req = urllib.request.Request(url, data=body, method=(opts.get("method") or "GET").upper())
    for line in opts.get("request-headers") or []:
        name, _, value = str(line).partition(":")
        req.add_header(name.strip(), value.strip())
    if opts.get("username"):
        token = f"{opts['username']}:{opts.get('password') or ''}".encode()
        req.add_header("Authorization", "Basic " + base64.b64encode(token).decode())
    handlers: List[Any] = [urllib.request.ProxyHandler({})]
    if url.lower().startswith("https:"):
        try:
            handlers.append(urllib.request.HTTPSHandler(context=_ssl_context(opts)))
        except (OSError, ssl.SSLError) as exc:
            raise NetworkError(f"TLS set-up failed: {exc}") from None
    if opts.get("no-follow-redirects"):
        handlers.append(_NoRedirect())
    opener = urllib.request.build_opener(*handlers)
    try:
        resp = opener.open(req, timeout=timeout)
    except urllib.error.HTTPError as exc:  # 4xx/5xx (and 3xx without following) are answers
        resp = exc
    except urllib.error.URLError as exc:
        raise NetworkError(f"{req.get_method()} {url}: {exc.reason}") from None
    except (OSError, ValueError, ssl.SSLError) as exc:
        raise NetworkError(f"{req.get_method()} {url}: {exc}") from None
    try:
        raw = resp.read()
    except (OSError, ValueError) as exc:
        raise NetworkError(f"reading the response of {url}: {exc}") from None
    finally:
        resp.close()
    return HTTPResponse(status=resp.getcode() or resp.status, headers=list(resp.headers.items()),
                        body=raw.decode("utf-8", "replace"))


def parse_address(address: str) -> Tuple[str, str, int]:
    """``tcp://host:port`` -> ("tcp", host, port); IPv6 hosts may be bracketed."""
    proto, sep, rest = address.partition("://")
    if not sep:
        proto, rest = "tcp", address
    host, _, port = rest.rpartition(":")
    return proto, host.strip("[]"), int(port)


def reachable(address: str, timeout_ms: Optional[int] = None, local_address: str = "") -> Tuple[bool, str]:
    """Can a connection be made (goss ``addr``)? Returns (ok, reason when not)."""
    proto, host, port = parse_address(address)
    timeout = float(timeout_ms or 500) / 1000.0
    source = (local_address, 0) if local_address else None
    try:
        if proto.startswith("udp"):
            # A UDP "connection" only resolves and binds, as in goss.
            infos = socket.getaddrinfo(host, port, 0, socket.SOCK_DGRAM)
            s = socket.socket(infos[0][0], socket.SOCK_DGRAM)
            try:
                if source:
                    s.bind(source)
                s.connect(infos[0][4])
            finally:
                s.close()
        else:
            socket.create_connection((host, port), timeout=timeout, source_address=source).close()
    except OSError as exc:
        return False, str(exc) or type(exc).__name__
    return True, ""


def resolve(name: str, timeout_ms: Optional[int] = None) -> List[str]:
    """Addresses of ``name`` (``A:``/``AAAA:`` prefixes select the family), sorted."""
    family = socket.AF_UNSPEC
    kind, sep, rest = name.partition(":")
    if sep and kind.upper() in ("A", "AAAA"):
        family = socket.AF_INET if kind.upper() == "A" else socket.AF_INET6
        name = rest
    timeout = float(timeout_ms or 5000) / 1000.0
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        future = pool.submit(socket.getaddrinfo, name, None, family, socket.SOCK_STREAM)
        infos = future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        raise NetworkError(f"resolving {name} timed out after {timeout:g}s") from None
    except socket.gaierror:
        return []
    finally:
        pool.shutdown(wait=False)
    return sorted({str(info[4][0]) for info in infos})
