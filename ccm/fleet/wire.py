"""A small synchronous NATS client for publishing reports: the fast path of ``ccm.fleet.publish``.

What: ``WireClient(context)`` speaks the NATS client protocol over one socket (INFO,
CONNECT, PING/PONG, SUB, HPUB, MSG/HMSG): ``publish`` (core, flushed by a PING) and
``request`` (a JetStream publish: the reply is its acknowledgement). Why: importing
nats-py and asyncio costs a cron run ~100-200 ms, ten times the budget of a report; this
costs ``_socket`` and ``_json`` (``ccm.jsonc``; and ``ssl`` for TLS contexts).
Guarantees: every call ends by its deadline; servers are tried in random order, each
with a connect timeout; TLS (``tls://``, ``ca``, ``cert``/``key``, ``tls_first``, or a
server that requires it), user/password, token and ``inbox_prefix`` are honoured; a
server's ``-ERR`` and a permissions violation raise ``Refused``, lost connections and
timeouts ``Transient``; no credential appears in an error. Server PINGs are answered.
Not: nkey/creds logins, websockets, SOCKS (``supports`` says no; the reference path,
``ccm.nats.connection``, serves those), subscriptions beyond the reply inbox.
"""
from __future__ import annotations

import _socket
import os
import time

from ccm import jsonc
from ccm.nats.context import NatsContext, redact_url
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Tuple

CRLF = b"\r\n"
MAX_LINE = 64 * 1024
MAX_MESSAGE = 8 << 20


class WireError(Exception):
    """A publish that did not succeed; one line, credential-free."""


class Transient(WireError):
    """Worth another try (connection lost, timeout, JetStream answered 503)."""


class Refused(WireError):
    """The server refused this message (permissions, limits, a JetStream error): do not retry it."""


class NoResponders(Transient):
    """Nobody listens on the subject (no stream, or none with a leader yet)."""


def supports(ctx: NatsContext) -> bool:
    """Whether this client can serve ``ctx`` (else the reference path does)."""
    if ctx.creds or ctx.nkey or ctx.socks_proxy:
        return False
    return all(_scheme(url) in ("nats", "tls") for url in ctx.servers)


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else "nats"


def parse_url(url: str) -> Tuple[str, str, int, str, str]:
    """(scheme, host, port, user, password) of ``nats://[user[:pass]@]host[:port]``."""
    scheme = _scheme(url)
    rest = url.split("://", 1)[1] if "://" in url else url
    rest = rest.split("/", 1)[0]
    user = password = ""
    if "@" in rest:
        info, rest = rest.rsplit("@", 1)
        user, _, password = info.partition(":")
    port = 4222
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        if tail.startswith(":") and tail[1:].isdigit():
            port = int(tail[1:])
    else:
        host, sep, tail = rest.rpartition(":")
        if not sep or not tail.isdigit():
            host = rest
        else:
            port = int(tail)
    return scheme, host or "127.0.0.1", port, user, password


def header_block(headers: Mapping[str, str]) -> bytes:
    lines = ["NATS/1.0"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


def parse_headers(block: bytes) -> Tuple[str, Dict[str, str]]:
    """(status, headers) of an HMSG header block (``NATS/1.0 503`` has status ``503``)."""
    lines = block.decode("utf-8", "replace").split("\r\n")
    first = lines[0].split(None, 2) if lines else []
    status = first[1] if len(first) > 1 else ""
    out: Dict[str, str] = {}
    for line in lines[1:]:
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return status, out


class WireClient:
    """One connection, opened on first use and reopened after a failure."""

    def __init__(self, ctx: NatsContext, connect_timeout: float = 2.0):
        self.ctx = ctx
        self.connect_timeout = connect_timeout
        self._sock: Any = None
        self._buf = bytearray()
        self._info: Dict[str, Any] = {}
        self._inbox = ""
        self._next = 0

    # --- connecting ---------------------------------------------------------------------

    def _tls_context(self) -> Any:
        import ssl

        ctx = self.ctx
        try:
            tls = ssl.create_default_context(cafile=ctx.ca or None)
            if ctx.cert:
                tls.load_cert_chain(ctx.cert, ctx.key)
        except (ssl.SSLError, OSError) as exc:
            raise Refused(f"TLS setup failed: {exc.strerror or exc}") from None
        return tls

    def _connect_one(self, url: str, deadline: float) -> None:
        scheme, host, port, url_user, url_password = parse_url(url)
        ctx = self.ctx
        tls = scheme == "tls" or bool(ctx.ca or ctx.cert or ctx.tls_first)
        sock = _dial(host, port, max(0.05, min(self.connect_timeout, deadline - time.monotonic())))
        self._sock, self._buf = sock, bytearray()
        if ctx.tls_first:
            self._sock = self._tls_context().wrap_socket(sock, server_hostname=host)
        line = self._line(deadline)
        if not line.startswith(b"INFO "):
            raise Transient(f"unexpected greeting from {redact_url(url)}")
        self._info = jsonc.loads(line[5:].decode("utf-8", "replace"))
        tls = tls or bool(self._info.get("tls_required"))
        if tls and not ctx.tls_first:
            self._sock = self._tls_context().wrap_socket(sock, server_hostname=host)
        opts: Dict[str, Any] = {"verbose": False, "pedantic": False, "tls_required": tls,
                                "name": "choria-ccm", "lang": "python3", "version": "ccm-report", "protocol": 1,
                                "headers": True, "no_responders": True}
        user, password = (ctx.user, ctx.password) if ctx.user else (url_user, url_password)
        if user and (password or ctx.user):
            opts["user"], opts["pass"] = user, password
        elif user:
            opts["auth_token"] = user
        if ctx.token:
            opts["auth_token"] = ctx.token
        self._send(b"CONNECT " + jsonc.dumps(opts).encode("utf-8") + CRLF + b"PING" + CRLF)
        while True:
            op = self._line(deadline)
            if op == b"PONG":
                break
            if op.startswith(b"-ERR"):
                raise Refused(f"the server refused the connection: {_err_text(op)}")
            if op == b"PING":
                self._send(b"PONG" + CRLF)
        prefix = ctx.inbox_prefix or "_INBOX"
        self._inbox = f"{prefix}.{os.urandom(8).hex()}"
        self._send(f"SUB {self._inbox}.* 1".encode() + CRLF)

    def connect(self, deadline: float) -> None:
        if self._sock is not None:
            return
        urls = list(self.ctx.servers)
        first = int.from_bytes(os.urandom(2), "big") % len(urls)   # spread hosts over the servers
        urls = urls[first:] + urls[:first]
        last = ""
        for url in urls:
            if time.monotonic() >= deadline:
                break
            try:
                self._connect_one(url, deadline)
                return
            except (OSError, ValueError, WireError) as exc:   # a refused login too: queued, not lost
                self.close()
                last = _os_text(exc)
        raise Transient(f"could not connect to {self.ctx.display_servers()} (context {self.ctx.name!r}): "
                        f"{last or 'no time left'}")

    # --- the socket -----------------------------------------------------------------------

    def _send(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as exc:
            self.close()
            raise Transient(f"connection lost: {_os_text(exc)}") from None

    def _fill(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Transient("timeout")
        try:
            self._sock.settimeout(left)
            data = self._sock.recv(65536)
        except _socket.timeout:
            raise Transient("timeout") from None
        except OSError as exc:
            self.close()
            raise Transient(f"connection lost: {_os_text(exc)}") from None
        if not data:
            self.close()
            raise Transient("connection closed by the server")
        self._buf += data

    def _line(self, deadline: float) -> bytes:
        while True:
            end = self._buf.find(CRLF)
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[:end + 2]
                return line
            if len(self._buf) > MAX_LINE:
                self.close()
                raise Transient("protocol line too long")
            self._fill(deadline)

    def _take(self, size: int, deadline: float) -> bytes:
        while len(self._buf) < size + 2:
            self._fill(deadline)
        data = bytes(self._buf[:size])
        del self._buf[:size + 2]
        return data

    def _message(self, line: bytes, deadline: float) -> Tuple[str, str, str, Optional[bytes], bytes]:
        """(subject, sid, reply, header block or None, payload) of a MSG/HMSG line and what follows."""
        parts = line.split()
        headed = parts[0] == b"HMSG"
        sizes = [int(p) for p in parts[-2:]] if headed else [0, int(parts[-1])]
        if sizes[1] > MAX_MESSAGE or sizes[0] > sizes[1]:
            self.close()
            raise Transient("message too large")
        data = self._take(sizes[1], deadline)
        reply = parts[3].decode("utf-8", "replace") if len(parts) == (6 if headed else 5) else ""
        return (parts[1].decode("utf-8", "replace"), parts[2].decode("ascii", "replace"), reply,
                data[:sizes[0]] if headed else None, data[sizes[0]:])

    def _next_op(self, deadline: float) -> Tuple[bytes, Any]:
        while True:
            line = self._line(deadline)
            if line == b"PING":
                self._send(b"PONG" + CRLF)
                continue
            if line in (b"PONG", b"+OK") or line.startswith(b"INFO "):
                return line.split()[0], None
            if line.startswith(b"-ERR"):
                return b"-ERR", _err_text(line)
            if line.startswith((b"MSG ", b"HMSG ")):
                return b"MSG", self._message(line, deadline)
            self.close()
            raise Transient("unexpected protocol line from the server")

    # --- publishing -----------------------------------------------------------------------

    def _hpub(self, subject: str, reply: str, headers: Mapping[str, str], body: bytes) -> None:
        max_payload = int(self._info.get("max_payload") or 1 << 20)
        head = header_block(headers)
        if len(head) + len(body) > max_payload:
            raise Refused(f"report of {len(body)} bytes exceeds the server's max_payload of {max_payload}")
        line = f"HPUB {subject} {reply + ' ' if reply else ''}{len(head)} {len(head) + len(body)}"
        self._send(line.encode("utf-8") + CRLF + head + body + CRLF)

    def publish(self, subject: str, body: bytes, headers: Mapping[str, str], deadline: float) -> None:
        """A core publish, flushed: returns once the server answered the PING after it."""
        self.connect(deadline)
        self._hpub(subject, "", headers, body)
        self._send(b"PING" + CRLF)
        while True:
            kind, value = self._next_op(deadline)
            if kind == b"PONG":
                return
            if kind == b"-ERR":
                raise Refused(f"the server refused the report: {value}")

    def request(self, subject: str, body: bytes, headers: Mapping[str, str], deadline: float) -> bytes:
        """Publish with a reply inbox and return the reply's payload (a JetStream ack)."""
        self.connect(deadline)
        self._next += 1
        reply = f"{self._inbox}.{self._next}"
        self._hpub(subject, reply, headers, body)
        while True:
            kind, value = self._next_op(deadline)
            if kind == b"-ERR":
                raise Refused(f"the server refused the report: {value}")
            if kind != b"MSG" or value[0] != reply:
                continue   # a late reply to an earlier request that timed out
            head, payload = value[3], value[4]
            if head is not None:
                status, _ = parse_headers(head)
                if status == "503":
                    raise NoResponders("no responders (no stream for the subject, or none with a leader)")
                if status and status != "200" and not payload:
                    raise Transient(f"status {status}")
            return bytes(payload)

    # --- reading (ccm.fleet.fastread) -----------------------------------------------------

    def subscribe(self, subject: str) -> str:
        self._next += 1
        sid = f"r{self._next}"
        self._send(f"SUB {subject} {sid}".encode("utf-8") + CRLF)
        return sid

    def unsubscribe(self, sid: str) -> None:
        self._send(f"UNSUB {sid}".encode("ascii") + CRLF)

    def pub(self, subject: str, reply: str, body: bytes) -> None:
        line = f"PUB {subject} {reply + ' ' if reply else ''}{len(body)}"
        self._send(line.encode("utf-8") + CRLF + body + CRLF)

    def next_message(self, deadline: float) -> Tuple[str, str, str, Optional[bytes], bytes]:
        """The next MSG/HMSG: (subject, sid, reply, header block or None, payload). A fleet
        read takes 30,000: one whole HMSG already in the buffer is cut out in one step."""
        buf = self._buf
        end = buf.find(CRLF)
        if end > 0 and buf.startswith(b"HMSG "):
            parts = bytes(buf[5:end]).split()
            if len(parts) == 5 and parts[4].isdigit() and parts[3].isdigit():
                head, total = int(parts[3]), int(parts[4])
                start = end + 2
                if head <= total <= MAX_MESSAGE and len(buf) >= start + total + 2:
                    data = bytes(buf[start:start + total])
                    del buf[:start + total + 2]
                    return (parts[0].decode("utf-8", "replace"), parts[1].decode("ascii", "replace"),
                            parts[2].decode("utf-8", "replace"), data[:head], data[head:])
        while True:
            kind, value = self._next_op(deadline)
            if kind == b"MSG":
                msg: Tuple[str, str, str, Optional[bytes], bytes] = value
                return msg
            if kind == b"-ERR":
                raise Refused(f"the server refused: {value}")

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass


def _dial(host: str, port: int, timeout: float) -> Any:
    """A connected TCP socket made with ``_socket`` itself (``ssl`` wraps it as well): the
    ``socket`` module's import (its enums, selectors) costs a cron run a few ms, and a text
    host costs ``getaddrinfo`` the idna codec's (unicodedata, stringprep)."""
    try:
        name: Any = host.encode("ascii")
    except UnicodeEncodeError:
        name = host
    error: Optional[OSError] = None
    for family, kind, proto, _canon, address in _socket.getaddrinfo(name, port, 0, _socket.SOCK_STREAM):
        sock = _socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(address)
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
    raise error or OSError(f"cannot resolve {host}")


def _err_text(line: bytes) -> str:
    text = line.decode("utf-8", "replace")[4:].strip().strip("'")
    return text[:200] or "error"


def _os_text(exc: BaseException) -> str:
    if isinstance(exc, _socket.timeout):
        return "timeout"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).split("\n")[0][:200] or type(exc).__name__


def ack_of(payload: bytes) -> Dict[str, Any]:
    """A JetStream publish acknowledgement: ``{"stream": .., "seq": ..}``, or ``Refused``/
    ``Transient`` for its error (503 and leader errors are transient)."""
    try:
        doc = jsonc.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Transient("malformed acknowledgement") from None
    if not isinstance(doc, dict):
        raise Transient("malformed acknowledgement")
    error = doc.get("error")
    if isinstance(error, dict):
        code, err_code = error.get("code"), error.get("err_code")
        text = str(error.get("description") or f"JetStream error {code}")
        if code == 503 or err_code in (10008, 10076, 10077):
            raise Transient(text)
        raise Refused(text)
    if not doc.get("stream"):
        raise Transient("malformed acknowledgement")
    return doc


def stream_missing(client: WireClient, api_prefix: str, stream: str, deadline: float) -> bool:
    """Whether JetStream says ``stream`` does not exist (False when it exists or cannot say)."""
    try:
        payload = client.request(f"{api_prefix}.STREAM.INFO.{stream}", b"", {}, deadline)
        doc = jsonc.loads(payload.decode("utf-8"))
    except (WireError, UnicodeDecodeError, ValueError):
        return False
    error = doc.get("error") if isinstance(doc, dict) else None
    return isinstance(error, dict) and (error.get("err_code") == 10059 or error.get("code") == 404)


__all__ = ["NoResponders", "Refused", "Transient", "WireClient", "WireError", "ack_of", "stream_missing",
           "supports"]
