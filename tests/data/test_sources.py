from __future__ import annotations

import base64
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ccm.data.sources import (
    SourceNotFound, load_document, load_yaml, parse_text, redact_url, resolve_source,
)
from ccm.model.errors import ValidationError

YAML_DOC = """\
hierarchy:
  order: [default]
data:
  # @require
  name: ""
  port: 80
overrides:
  default:
    name: from-default
"""


class _Handler(BaseHTTPRequestHandler):
    routes = {}
    seen = []

    def do_GET(self):  # noqa: N802
        type(self).seen.append((self.path, self.headers.get("Authorization")))
        expected = "Basic " + base64.b64encode(b"alice:s3cr:et").decode()
        if self.path.startswith("/private") and self.headers.get("Authorization") != expected:
            self.send_response(401, "Unauthorized")
            self.end_headers()
            return
        status, body = self.routes.get(self.path.split("?")[0], (404, b""))
        if status in (301, 302):
            self.send_response(status)
            self.send_header("Location", body.decode())
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def http_server():
    _Handler.routes = {
        "/data.yaml": (200, YAML_DOC.encode()),
        "/private/data.json": (200, json.dumps({"data": {"secret": "yes"}}).encode()),
        "/empty": (200, b""),
        "/broken": (500, b"oops"),
    }
    _Handler.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_yaml_scalars_follow_yaml_1_2():
    assert load_yaml("a: yes\nb: on\nc: 2024-01-01\nd: 1:30\ne: 0x1F\nf: 0o17\ng: true\nh: 1_000\ni: .5\n") == {
        "a": "yes", "b": "on", "c": "2024-01-01", "d": "1:30", "e": 31, "f": 15, "g": True, "h": 1000, "i": 0.5}


def test_parse_text_detects_json_and_reports_errors():
    assert parse_text('  {"a": 1}', "x") == {"a": 1}
    with pytest.raises(ValidationError) as err:
        parse_text("{bad json", "/tmp/x.json")
    assert str(err.value).startswith("failed to parse /tmp/x.json:1:2")
    with pytest.raises(ValidationError) as err:
        parse_text("a: [1, 2\nb: 3\n", "/tmp/x.yaml")
    assert str(err.value).startswith("failed to parse /tmp/x.yaml:")
    assert "\n" not in str(err.value)


def test_file_source_relative_to_cwd_with_rules(tmp_path):
    (tmp_path / "h.yaml").write_text(YAML_DOC)
    doc, text = load_document("h.yaml", cwd=str(tmp_path))
    assert doc["data"]["port"] == 80 and text == YAML_DOC
    out = resolve_source("h.yaml", {}, cwd=str(tmp_path))
    assert out.data == {"name": "from-default", "port": 80}
    assert [r.key for r in out.rules] == ["name"]
    out = resolve_source(f"file://{tmp_path}/h.yaml", {})
    assert out.data["name"] == "from-default"


def test_file_source_validation_failure_names_file(tmp_path):
    (tmp_path / "h.yaml").write_text(YAML_DOC.replace("    name: from-default\n", "    other: 1\n"))
    with pytest.raises(ValidationError) as err:
        resolve_source("h.yaml", {}, cwd=str(tmp_path))
    assert str(err.value) == f'{tmp_path}/h.yaml: key "name" is required but has no value'
    out = resolve_source("h.yaml", {}, cwd=str(tmp_path), validate=False)
    assert out.data["name"] == ""
    out = resolve_source("h.yaml", {}, cwd=str(tmp_path), data_overrides={"name": "cli"})
    assert out.data["name"] == "cli"


def test_missing_file(tmp_path):
    with pytest.raises(SourceNotFound) as err:
        load_document("nope.yaml", cwd=str(tmp_path))
    assert str(err.value) == f"file not found: {tmp_path}/nope.yaml"
    assert resolve_source("nope.yaml", {}, cwd=str(tmp_path), missing_ok=True).data == {}


def test_non_map_and_empty_documents(tmp_path):
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ValidationError, match="list.yaml: hiera data must be a map"):
        load_document(str(tmp_path / "list.yaml"))
    (tmp_path / "empty.yaml").write_text("\n")
    assert load_document(str(tmp_path / "empty.yaml"))[0] == {}


def test_http_source_yaml(http_server):
    out = resolve_source(f"http://{http_server}/data.yaml", {})
    assert out.data == {"name": "from-default", "port": 80}
    assert [r.key for r in out.rules] == ["name"]


def test_http_basic_auth_from_url_credentials(http_server, caplog):
    url = f"http://alice:s3cr%3Aet@{http_server}/private/data.json"
    with caplog.at_level(logging.DEBUG, logger="ccm.data.sources"):
        doc, _ = load_document(url)
    assert doc == {"data": {"secret": "yes"}}
    assert _Handler.seen[-1][1] == "Basic " + base64.b64encode(b"alice:s3cr:et").decode()
    assert "s3cr" not in caplog.text and "alice" not in caplog.text
    assert f"http://REDACTED@{http_server}/private/data.json" in caplog.text


def test_http_errors_are_redacted(http_server):
    with pytest.raises(ValidationError) as err:
        load_document(f"http://bob:wrong@{http_server}/private/data.json")
    assert str(err.value) == (
        f"HTTP request to http://REDACTED@{http_server}/private/data.json failed with status 401: Unauthorized")
    with pytest.raises(ValidationError, match="failed with status 500"):
        load_document(f"http://{http_server}/broken")
    with pytest.raises(ValidationError, match="empty body"):
        load_document(f"http://{http_server}/empty")


def test_http_connection_refused_is_one_line(http_server):
    server_port = int(http_server.rsplit(":", 1)[1])
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free_port = s.getsockname()[1]
    assert free_port != server_port
    with pytest.raises(ValidationError) as err:
        load_document(f"https://u:topsecret@127.0.0.1:{free_port}/x.yaml")
    assert "topsecret" not in str(err.value)
    assert str(err.value) == f"failed to fetch hiera data from https://REDACTED@127.0.0.1:{free_port}/x.yaml: connection refused"


def test_kv_sources():
    with pytest.raises(ValidationError, match="kv:// sources need NATS"):
        load_document("kv://B/K")
    calls = []

    def loader(bucket, key):
        calls.append((bucket, key))
        return b"data:\n  a: 1\n" if key == "K" else b""

    assert load_document("kv://B/K", kv_loader=loader)[0] == {"data": {"a": 1}}
    assert calls == [("B", "K")]
    with pytest.raises(ValidationError, match="kv B#E is empty"):
        load_document("kv://B/E", kv_loader=loader)


def test_unsupported_scheme_redacted():
    with pytest.raises(ValidationError) as err:
        load_document("ftp://u:pw@host/x")
    assert str(err.value) == "unsupported hiera data source: ftp://REDACTED@host/x"


def test_redact_url():
    assert redact_url("https://u:p@h:1/a?b=c") == "https://REDACTED@h:1/a?b=c"
    assert redact_url("https://h/a") == "https://h/a"


def test_demo_document_resolves_and_validates():
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    facts = {"host": {"info": {"os": "linux", "platformFamily": "debian", "kernelVersion": "6.1.0"}},
             "env": "prod"}
    out = resolve_source("demo/data.yaml", facts, cwd=root)
    assert out.data == {
        "log_level": "WARN", "max_connections": 200, "listen_address": "0.0.0.0", "kernel": "6.1.0",
        "package_manager": "apt", "banner": "managed by ccm",
    }
    assert sorted((r.key, r.kind) for r in out.rules) == [
        ("listen_address", "validate"), ("log_level", "require"), ("max_connections", "validate")]
    with pytest.raises(ValidationError, match='key "listen_address" failed validation "isIP'):
        resolve_source("demo/data.yaml", facts, cwd=root, data_overrides={"listen_address": "nope"})


def test_redirects_keep_auth_on_same_host_only(http_server):
    port = http_server.rsplit(":", 1)[1]
    _Handler.routes["/same"] = (302, f"http://127.0.0.1:{port}/private/data.json".encode())
    _Handler.routes["/other"] = (302, f"http://localhost:{port}/private/data.json".encode())
    assert load_document(f"http://alice:s3cr%3Aet@{http_server}/same")[0] == {"data": {"secret": "yes"}}
    with pytest.raises(ValidationError, match="failed with status 401"):
        load_document(f"http://alice:s3cr%3Aet@{http_server}/other")
    assert _Handler.seen[-1][0] == "/private/data.json" and _Handler.seen[-1][1] is None
