"""The agent's monitor endpoint: ``GET /status`` (JSON) and ``GET /metrics`` (Prometheus).

Standard library ``http.server`` in a daemon thread, bound to ``monitor_address``
(127.0.0.1 unless configured) and ``monitor_port``. Metrics use ``ccm.metrics``' own
exposition, so counters keep upstream's names (no ``_total``) and ``prometheus_client``
is never imported. Only GET, only these two paths; requests are not logged above debug.
"""
from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from ccm.log import internal

if TYPE_CHECKING:
    from ccm.agent.agent import Agent

log = internal("ccm.agent.monitor")


def serve(agent: "Agent", port: int, address: str = "127.0.0.1") -> Any:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from ccm.metrics import CONTENT_TYPE

    class Handler(BaseHTTPRequestHandler):
        server_version = "ccm-agent"

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, agent.metrics.exposition().encode(), CONTENT_TYPE)
            elif path == "/status":
                body = json.dumps(agent.status(), indent=2, sort_keys=False).encode() + b"\n"
                self._send(200, body, "application/json")
            else:
                self._send(404, b"not found: try /status or /metrics\n", "text/plain; charset=utf-8")

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            log.debug("monitor request", extra={"kv": {"request": format % args}})

    server = ThreadingHTTPServer((address, int(port)), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="ccm-monitor", daemon=True)
    thread.start()
    return server
