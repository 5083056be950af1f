"""Native goss evaluation against real things: files, a listening socket, an HTTP server on
127.0.0.1, shell commands; service and package go through recording fake providers."""
from __future__ import annotations

import base64
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ccm.healthcheck.goss.evaluate import GossContext, evaluate
from ccm.model.events import ResourceState
from ccm.runner import SubprocessRunner


class _Handler(BaseHTTPRequestHandler):
    seen = []

    def log_message(self, *args):
        pass

    def _answer(self):
        _Handler.seen.append((self.command, self.path, dict(self.headers)))
        length = int(self.headers.get("Content-Length") or 0)
        body_in = self.rfile.read(length).decode() if length else ""
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/ok")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/secret":
            want = "Basic " + base64.b64encode(b"alice:s3cret").decode()
            if self.headers.get("Authorization") != want:
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        status = 500 if self.path == "/broken" else 200
        body = f"method={self.command}\nx-token={self.headers.get('X-Token', '')}\nbody={body_in}\nall good\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("X-App", "demo 1.2")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = _answer


@pytest.fixture(scope="module")
def web():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class FakeProviders:
    """Answers provider status lookups from a table; records (type, name) asked."""

    def __init__(self, table):
        self.table = table
        self.asked = []

    def __call__(self, type_name, name):
        self.asked.append((type_name, name))
        if (type_name, name) not in self.table:
            raise RuntimeError("no suitable provider found")
        ensure, meta = self.table[(type_name, name)]
        return ResourceState(type=type_name, name=name, ensure=ensure, extra={"metadata": meta})


def ctx(providers=None):
    return GossContext(runner=SubprocessRunner(), provider_status=providers)


def lines(report):
    return [r.text for r in report.results]


def failed(report):
    return [r.text for r in report.failed]


def test_file_rules(tmp_path):
    f = tmp_path / "app.conf"
    f.write_text("listen 8080\n# comment\nworkers 4\n")
    os.chmod(f, 0o640)
    rules = {"file": {
        str(f): {"exists": True, "mode": "640", "owner": "root", "group": "root", "filetype": "file",
                 "size": {"gt": 10}, "contents": ["listen 8080", "/^workers [0-9]+$/", "!debug"],
                 "sha256": __import__("hashlib").sha256(f.read_bytes()).hexdigest().upper()},
        str(tmp_path / "gone"): {"exists": False, "mode": "0644"},
    }}
    report = evaluate(rules, ctx())
    assert failed(report) == []
    assert report.count == 10
    assert f"File: {tmp_path}/gone: mode: skipped" in lines(report)
    assert report.summary.startswith("Count: 10, Failed: 0, Duration: ")


def test_file_failures_say_what_was_seen(tmp_path):
    f = tmp_path / "app.conf"
    f.write_text("listen 80\n")
    os.chmod(f, 0o644)
    report = evaluate({"file": {str(f): {"mode": "0600", "contents": ["listen 8080", "!listen 80"]},
                                str(tmp_path / "nope"): {"owner": "root"}}}, ctx())
    assert failed(report) == [
        f'File: {f}: mode: doesn\'t match, expect: "0600" found: "0644"',
        f'File: {f}: contents: doesn\'t match, expect: ["listen 8080","!listen 80"] '
        f'patterns not found: ["listen 8080","!listen 80"]',
        f"File: {tmp_path}/nope: owner: Error: file {tmp_path}/nope does not exist",
    ]
    assert report.output.splitlines()[-1].startswith("Count: 3, Failed: 3, Duration: ")


def test_port_rules_with_a_real_listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        report = evaluate({"port": {f"tcp:{port}": {"listening": True, "ip": ["127.0.0.1"]},
                                    f"tcp6:{port}": {"listening": False},
                                    f"{port}": {"ip": {"consist-of": ["0.0.0.0"]}}}}, ctx())
    finally:
        srv.close()
    assert failed(report) == [f'Port: {port}: ip: doesn\'t match, expect: {{"consist-of":["0.0.0.0"]}} found: ["127.0.0.1"]']


def test_http_rules(web):
    rules = {"http": {
        f"{web}/ok": {"status": 200, "body": ["all good", "/^method=GET$/"],
                      "headers": ["Content-Type: text/plain", "/^X-App: demo/"]},
        f"{web}/post": {"status": 200, "method": "POST", "request-body": "payload",
                        "request-headers": ["X-Token: abc"], "body": ["method=POST", "x-token=abc", "body=payload"]},
        f"{web}/redirect": {"status": 302, "no-follow-redirects": True},
        f"{web}/redirect?follow": {"url": f"{web}/redirect", "status": 200, "body": ["all good"]},
        f"{web}/secret": {"status": 200, "username": "alice", "password": "s3cret"},
    }}
    report = evaluate(rules, ctx())
    assert failed(report) == []
    assert report.count == 9


def test_http_failures(web):
    report = evaluate({"http": {f"{web}/broken": {"status": 200, "body": ["nothing like this"]},
                                f"{web}/secret": {"status": 200},
                                "http://127.0.0.1:9/": {"status": 200, "timeout": 500}}}, ctx())
    texts = failed(report)
    assert texts[0] == f"HTTP: {web}/broken: status: doesn't match, expect: 200 found: 500"
    assert texts[1].startswith(f"HTTP: {web}/broken: body: doesn't match") and "nothing like this" in texts[1]
    assert texts[2] == f"HTTP: {web}/secret: status: doesn't match, expect: 200 found: 401"
    assert texts[3].startswith("HTTP: http://127.0.0.1:9/: status: Error: GET http://127.0.0.1:9/:")
    assert "refused" in texts[3].lower()


def test_command_rules():
    rules = {"command": {
        "echo hello; echo oops >&2; exit 3": {"exit-status": 3, "stdout": ["hello"], "stderr": ["/^oops$/"]},
        "printf 'a\\nb\\n'": {"exit-status": {"lt": 1}, "stdout": {"consist-of": ["a", "b"]}},
        "check-path": {"exec": "echo $PATH", "stdout": ["/usr/bin"]},
        "sleep 5": {"exit-status": 0, "timeout": 200},
    }}
    report = evaluate(rules, ctx())
    assert failed(report) == ["Command: sleep 5: exit-status: Error: command execution timed out after 0.2s"]
    assert report.duration_s < 4


def test_service_and_package_through_providers():
    providers = FakeProviders({
        ("service", "nginx"): ("running", {"name": "nginx", "running": True, "enabled": False}),
        ("package", "zsh"): ("5.9-8+b18", {"name": "zsh", "version": "5.9-8+b18"}),
        ("package", "vim"): ("absent", {"name": "vim", "version": "absent"}),
    })
    report = evaluate({
        "service": {"nginx": {"running": True, "enabled": True}, "ghost": {"running": True}},
        "package": {"zsh": {"installed": True, "versions": {"contain-element": {"have-prefix": "5.9"}}},
                    "vim": {"installed": False}},
    }, ctx(providers))
    assert failed(report) == [
        "Service: nginx: enabled: doesn't match, expect: true found: false",
        "Service: ghost: running: Error: could not get service status: no suitable provider found",
    ]
    assert providers.asked == [("service", "nginx"), ("service", "ghost"), ("package", "zsh"), ("package", "vim")]


def test_process_user_group_addr_dns_mount_kernel_matching():
    with open("/proc/self/comm") as fh:
        comm = fh.read().strip()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        report = evaluate({
            "process": {comm: {"running": True}, "no-such-daemon": {"running": False}},
            "user": {"root": {"exists": True, "uid": 0, "groups": ["root"], "home": {"have-prefix": "/"}},
                     "nobody-x": {"exists": False}},
            "group": {"root": {"exists": True, "gid": 0}},
            "addr": {f"tcp://127.0.0.1:{port}": {"reachable": True}},
            "dns": {"localhost": {"resolvable": True, "addrs": {"contain-element": "127.0.0.1"}},
                    "no-such-host.invalid": {"resolvable": False}},
            "mount": {"/": {"exists": True, "usage": {"le": 100}}, "/not/mounted": {"exists": False}},
            "kernel-param": {"kernel.ostype": {"value": "Linux"}},
            "matching": {"answer": {"content": "42", "matches": {"and": [42, {"gt": 40}]}}},
        }, ctx())
    finally:
        srv.close()
    assert failed(report) == []
    assert report.count == 18

    report = evaluate({"addr": {f"tcp://127.0.0.1:{port}": {"reachable": True, "timeout": 300}}}, ctx())
    assert len(report.failed) == 1 and "refused" in report.failed[0].text.lower()


def test_skip_and_runtime_unknowns_never_pass(tmp_path):
    report = evaluate({"file": {"/x": {"exists": True, "skip": True}},
                       "interface": {"eth0": {"exists": True}},
                       "user": {"root": {"exists": True, "shoe-size": 9}}}, ctx())
    assert [r.outcome for r in report.results] == ["skip", "fail", "fail"]
    assert 'unsupported goss resource type "interface"' in report.results[1].text
    assert "unsupported attribute(s) shoe-size" in report.results[2].text


def test_http_credentials_in_urls_become_basic_auth_and_are_masked(web):
    url = web.replace("http://", "http://alice:s3cret@")
    report = evaluate({"http": {url + "/secret": {"status": 200}, url + "/broken": {"status": 200}}}, ctx())
    [r] = report.failed
    assert "s3cret" not in r.text and r.text.startswith("HTTP: http://alice:******@127.0.0.1:")
    assert r.text.endswith("/broken: status: doesn't match, expect: 200 found: 500")
