"""The agent's monitor endpoint: ``GET /status`` (JSON) and ``GET /metrics`` (Prometheus).

What: ``serve(agent, port, address)`` serves both from a daemon thread, bound to
``monitor_address`` (127.0.0.1 unless configured); ``serve_routes`` is the GET-only
server under it (also ``ccm.metrics.serve``). Metrics use ``ccm.metrics``' own
exposition, so counters keep upstream's names (no ``_total``) and ``prometheus_client``
is never imported. Only GET, only these two paths; requests are logged at debug only.

Guarantees: any local user can connect, so a client costs the agent little and never
for long. At most ``MAX_CONNECTIONS`` connections are open at once (one thread each),
far below the descriptor limit the applies need (1,024 by default); every socket
operation times out after ``READ_TIMEOUT`` seconds. When every slot is taken, a new
connection evicts the oldest one that has not yet sent a complete request (idle and
slow-header clients), so a flood of half-open connections never locks out a prompt
``GET /status``. A client that hangs up early is one debug line, never a traceback.
``/status`` has URL user info redacted in every string (``ccm.redact``).
"""
from __future__ import annotations

import json
import socket
import threading
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ccm.log import internal
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Tuple

    from ccm.agent.agent import Agent

    Route = Callable[[], Tuple[bytes, str]]

log = internal("ccm.monitor")

MAX_CONNECTIONS = 64     # open monitor connections (threads, descriptors) at once
READ_TIMEOUT = 5.0       # seconds any one read or write of a connection may take
LISTEN_BACKLOG = 128     # waiting connections the kernel holds (no descriptor of ours)


def redacted(value: Any) -> Any:
    """``value`` with URL user info redacted in every string, containers included."""
    from ccm.redact import redact_url

    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v) for v in value]
    return value


def serve(agent: "Agent", port: int, address: str = "127.0.0.1") -> Any:
    from ccm.metrics import CONTENT_TYPE

    def status() -> Tuple[bytes, str]:
        doc = redacted(agent.status())
        return json.dumps(doc, indent=2, sort_keys=False).encode() + b"\n", "application/json"

    return serve_routes({"/metrics": lambda: (agent.metrics.exposition().encode(), CONTENT_TYPE),
                         "/status": status},
                        port, address, name="ccm-monitor", server_version="ccm-agent",
                        not_found=b"not found: try /status or /metrics\n")


class BoundedServer(ThreadingHTTPServer):
    """A thread per connection, at most ``cap`` connections, idle ones evicted first."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: Tuple[str, int], handler: Any, *, name: str, cap: int = MAX_CONNECTIONS):
        self.name = name
        self.cap = cap
        self._slots = threading.Lock()
        self._open: "OrderedDict[socket.socket, bool]" = OrderedDict()   # connection -> request read
        super().__init__(address, handler)

    @property
    def open_connections(self) -> int:
        return len(self._open)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._slots:
            if len(self._open) >= self.cap and not self._evict_one():
                self.shutdown_request(request)   # every slot is sending a response: try again later
                return
            self._open[request] = False
        super().process_request(request, client_address)

    def _evict_one(self) -> bool:
        """Drop the oldest connection still reading its request (its thread sees EOF and ends)."""
        victim = next((conn for conn, serving in self._open.items() if not serving), None)
        if victim is None:
            return False
        del self._open[victim]
        try:
            victim.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return True

    def request_read(self, request: Any) -> None:
        """The request line and headers arrived: this connection is no longer evictable."""
        with self._slots:
            if request in self._open:
                self._open[request] = True

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._slots:
                self._open.pop(request, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):   # hung up early, reset, timed out: the client's business
            log.debug("monitor client went away", extra={"kv": {"server": self.name, "error": str(exc)}})
        else:
            log.error("monitor request failed", extra={"kv": {"server": self.name,
                                                              "error": f"{type(exc).__name__}: {exc}"}})


def serve_routes(routes: Dict[str, "Route"], port: int, host: str = "127.0.0.1", *, name: str,
                 not_found: Optional[bytes] = None, server_version: str = "",
                 cap: int = MAX_CONNECTIONS) -> BoundedServer:
    """GET-only HTTP on ``host:port`` from a daemon thread: ``routes`` maps a path (query
    ignored) to a function returning (body, content type); any other path is a 404 with
    ``not_found`` as its text body (the standard error page when None). Returns the
    server; ``server_address`` has the bound port (pass 0 to pick one), ``shutdown()``
    and ``server_close()`` stop it."""

    class Handler(BaseHTTPRequestHandler):
        timeout = READ_TIMEOUT
        server: BoundedServer

        def parse_request(self) -> bool:
            ok = super().parse_request()
            self.server.request_read(self.request)
            return ok

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            route = routes.get(self.path.split("?", 1)[0])
            if route is not None:
                try:
                    body, ctype = route()
                except Exception as exc:   # a bug behind a route is a 500, never a dead monitor
                    log.error("monitor route failed", extra={"kv": {"server": name, "path": self.path,
                                                                     "error": f"{type(exc).__name__}: {exc}"}})
                    self._send(500, b"internal error\n", "text/plain; charset=utf-8")
                    return
                self._send(200, body, ctype)
            elif not_found is None:
                self.send_error(404, "not found")
            else:
                self._send(404, not_found, "text/plain; charset=utf-8")

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            log.debug("http request", extra={"kv": {"server": name, "request": format % args}})

    if server_version:
        Handler.server_version = server_version
    server = BoundedServer((host, int(port)), Handler, name=name, cap=cap)
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    return server
