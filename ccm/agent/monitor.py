"""The agent's monitor endpoint: ``GET /status`` (JSON) and ``GET /metrics`` (Prometheus).

Standard library ``http.server`` in a daemon thread, bound to ``monitor_address``
(127.0.0.1 unless configured) and ``monitor_port``. Metrics use ``ccm.metrics``' own
exposition, so counters keep upstream's names (no ``_total``) and ``prometheus_client``
is never imported. Only GET, only these two paths; requests are not logged above debug.
"""
from __future__ import annotations

import json

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Tuple

    from ccm.agent.agent import Agent


def serve(agent: "Agent", port: int, address: str = "127.0.0.1") -> Any:
    from ccm.metrics import CONTENT_TYPE, serve_routes

    def status() -> Tuple[bytes, str]:
        return json.dumps(agent.status(), indent=2, sort_keys=False).encode() + b"\n", "application/json"

    return serve_routes({"/metrics": lambda: (agent.metrics.exposition().encode(), CONTENT_TYPE),
                         "/status": status},
                        port, address, name="ccm-monitor", server_version="ccm-agent",
                        not_found=b"not found: try /status or /metrics\n")
