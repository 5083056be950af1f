"""A real HTTP server on 127.0.0.1 for download tests (archive, remote manifests).

``Server.route(path, body=..., status=..., auth=(user, pw), redirect=url, delay=s,
trickle=s)`` declares what a path answers; ``server.requests`` records every request
(path and headers) so tests can assert what was (not) sent.
"""
from __future__ import annotations

import base64
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple


class Server:
    def __init__(self) -> None:
        self.routes: Dict[str, Dict[str, Any]] = {}
        self.requests: List[Tuple[str, Dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server hook
                outer.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                spec = outer.routes.get(self.path.split("?")[0])
                if spec is None:
                    self.send_error(404, "Not Found")
                    return
                if spec.get("delay"):
                    time.sleep(spec["delay"])
                auth = spec.get("auth")
                if auth is not None:
                    want = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
                    if self.headers.get("Authorization") != want:
                        self.send_response(401, "Unauthorized")
                        self.send_header("WWW-Authenticate", 'Basic realm="t"')
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                header = spec.get("header")
                if header is not None and self.headers.get(header[0]) != header[1]:
                    self.send_error(403, "Forbidden")
                    return
                if spec.get("redirect"):
                    self.send_response(302, "Found")
                    self.send_header("Location", spec["redirect"])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body: bytes = spec.get("body", b"")
                self.send_response(spec.get("status", 200))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if spec.get("trickle"):
                    for i in range(0, len(body), 16):
                        self.wfile.write(body[i:i + 16])
                        self.wfile.flush()
                        time.sleep(spec["trickle"])
                else:
                    self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, path: str, userinfo: Optional[str] = None) -> str:
        host = f"127.0.0.1:{self.httpd.server_address[1]}"
        return f"http://{userinfo + '@' if userinfo else ''}{host}{path}"

    def route(self, path: str, **spec: Any) -> None:
        self.routes[path] = spec

    def __enter__(self) -> "Server":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
