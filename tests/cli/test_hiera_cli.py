"""``ccm hiera parse|resolve|facts`` run as real subprocesses (python -m ccm)."""
from __future__ import annotations

import base64
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from tests.kit import bare_env, ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ANNOTATED = os.path.join(ROOT, "tests", "data", "fixtures", "annotated.yaml")

DOC = """\
hierarchy:
  order:
    - role:{{ lookup('facts.role') }}
    - env:${ lookup('facts.env') }
  merge: deep
data:
  # @require
  name: ""
  port: 80
  ratio: 0.5
  tags: [base]
  html: "<b>"
  os: "{{ lookup('facts.host.info.os') }}"
overrides:
  role:web:
    name: web
    tags: [web]
  env:prod:
    port: 443
"""


def hiera_env(cwd, extra_env=None):
    return bare_env(cwd, **{"CCM_TEST_VAR": "one=two", **(extra_env or {})})


@pytest.fixture()
def work(tmp_path):
    (tmp_path / "h.yaml").write_text(DOC)
    return tmp_path


def test_parse_json_sorted(work):
    res = ccm("hiera", "parse", "h.yaml", "role=web", "env:prod", cwd=work, env=hiera_env(work))
    assert res.returncode == 0, res.stderr
    assert res.stdout == (
        '{\n  "html": "\\u003cb\\u003e",\n  "name": "web",\n  "os": "linux",\n  "port": 443,\n'
        '  "ratio": 0.5,\n  "tags": [\n    "base",\n    "web"\n  ]\n}\n'
    )


def test_resolve_alias_yaml_output(work):
    res = ccm("hiera", "resolve", "--yaml", "h.yaml", "role=web", cwd=work, env=hiera_env(work))
    assert res.returncode == 0, res.stderr
    assert yaml.safe_load(res.stdout) == {"html": "<b>", "name": "web", "os": "linux", "port": 80, "ratio": 0.5,
                                          "tags": ["base", "web"]}
    assert res.stdout.index("html:") < res.stdout.index("name:") < res.stdout.index("tags:")


def test_env_output(work):
    res = ccm("hiera", "parse", "h.yaml", "role=web", "--env", cwd=work, env=hiera_env(work))
    assert res.stdout.splitlines() == [
        "HIERA_HTML=<b>", "HIERA_NAME=web", "HIERA_OS=linux", "HIERA_PORT=80", "HIERA_RATIO=0.500000",
        'HIERA_TAGS=["base","web"]',
    ]
    res = ccm("hiera", "parse", "h.yaml", "role=web", "--env", "--env-prefix", "APP", "--query", "tags", cwd=work,
              env=hiera_env(work))
    assert res.stdout == 'APP_VALUE=["base","web"]\n'


def test_query(work):
    res = ccm("hiera", "parse", "h.yaml", "role=web", "--query", "tags.1", cwd=work, env=hiera_env(work))
    assert (res.returncode, res.stdout) == (0, '"web"\n')
    res = ccm("hiera", "parse", "h.yaml", "role=web", "--query", "no.such", cwd=work, env=hiera_env(work))
    assert (res.returncode, res.stdout) == (0, "null\n")
    res = ccm("hiera", "parse", "h.yaml", "role=web", "--query", "no.such", "--env", cwd=work, env=hiera_env(work))
    assert (res.returncode, res.stdout) == (0, "HIERA_VALUE=null\n")


def test_required_annotation_fails_with_one_line(work):
    res = ccm("hiera", "parse", "h.yaml", cwd=work, env=hiera_env(work))
    assert res.returncode == 1
    assert res.stderr == f'ccm: error: {work}/h.yaml: key "name" is required but has no value\n'
    assert res.stdout == ""


def test_data_overrides_apply_before_validation(work):
    (work / "d.json").write_text('{"name": "from-file", "port": 1, "extra": {"a": 1}}')
    res = ccm("hiera", "parse", "h.yaml", "--data-file", "d.json", "-D", "port=8080", "--data", "extra:x", cwd=work,
              env=hiera_env(work))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["name"] == "from-file" and out["port"] == "8080" and out["extra"] == "x"
    res = ccm("hiera", "parse", "h.yaml", "-D", "name=cli", cwd=work, env=hiera_env(work))
    assert json.loads(res.stdout)["name"] == "cli"


def test_facts_sources_precedence(work):
    (work / "f.json").write_text('{"role": "web", "env": "dev"}')
    (work / "f.yaml").write_text("role: web\n")
    res = ccm("hiera", "parse", "h.yaml", "--facts", "f.json", "env=prod", cwd=work, env=hiera_env(work))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["port"] == 443 and out["name"] == "web" and out["os"] == "linux"
    res = ccm("hiera", "parse", "h.yaml", "--facts", "f.yaml", cwd=work, env=hiera_env(work))
    assert json.loads(res.stdout)["os"] == "linux"  # system facts survive a YAML facts file
    res = ccm("hiera", "parse", "h.yaml", "--facts", "missing.json", cwd=work, env=hiera_env(work))
    assert (res.returncode, res.stderr) == (1, "ccm: error: --facts: path 'missing.json' does not exist\n")


def test_env_facts(work):
    (work / "e.yaml").write_text("data:\n  v: \"{{ lookup('facts.CCM_TEST_VAR') }}\"\n")
    res = ccm("hiera", "parse", "e.yaml", "-E", cwd=work, env=hiera_env(work))
    assert json.loads(res.stdout) == {"v": "one"}
    res = ccm("hiera", "parse", "e.yaml", cwd=work, env=hiera_env(work))
    assert json.loads(res.stdout) == {"v": ""}


def test_hiera_input_env(work):
    res = ccm("hiera", "parse", "--query", "port", cwd=work, env=hiera_env(work, {"HIERA_INPUT": "h.yaml"}))
    assert res.returncode == 1 and "is required" in res.stderr  # no facts: name stays empty
    res = ccm("hiera", "parse", "role=web", cwd=work, env=hiera_env(work, {"HIERA_INPUT": "h.yaml"}))
    assert (res.returncode, res.stderr) == (1, f"ccm: error: file not found: {work}/role=web\n")


def test_bad_inputs_exit_1_without_traceback(work):
    (work / "bad.yaml").write_text("data:\n  a: [1, 2\n  b: 3\n")
    (work / "badh.yaml").write_text("hierarchy:\n  order: default\n")
    cases = [
        (["hiera", "parse", "nope.yaml"], f"ccm: error: file not found: {work}/nope.yaml\n"),
        (["hiera", "parse", "h.yaml", "k"], "ccm: error: expected KEY=VALUE got 'k'\n"),
        (["hiera", "parse", "badh.yaml"], f"ccm: error: {work}/badh.yaml: hierarchy.order must be a list\n"),
        (["hiera", "parse", "kv://B/K"],
         f'ccm: error: kv://B/K: unknown context "CCM" (looked for {work}/xdg/nats/context/CCM.json)\n'),
    ]
    for args, stderr in cases:
        res = ccm(*args, cwd=work, env=hiera_env(work))
        assert (res.returncode, res.stderr) == (1, stderr), args
    res = ccm("hiera", "parse", "bad.yaml", cwd=work, env=hiera_env(work))
    assert res.returncode == 1 and res.stderr.startswith(f"ccm: error: failed to parse {work}/bad.yaml:")
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1


def test_usage_errors(work):
    res = ccm("hiera", "parse", cwd=work, env=hiera_env(work))
    assert res.returncode == 1 and res.stderr.startswith("error: required argument 'input' not provided\n\nusage:")
    res = ccm("hiera", cwd=work, env=hiera_env(work))
    assert res.returncode == 1 and res.stderr.startswith("error: a subcommand from the list below is required")
    res = ccm("hiera", "parse", "h.yaml", "--nope", cwd=work, env=hiera_env(work))
    assert res.returncode == 1 and res.stderr.startswith("error: unrecognized arguments: --nope")
    res = ccm("hiera", "parse", "h.yaml", "role=web", "--context", "other", cwd=work, env=hiera_env(work))
    assert res.returncode == 0, res.stderr


def test_annotated_fixture_via_cli(work):
    res = ccm("hiera", "parse", ANNOTATED, "env=prod", cwd=work, env=hiera_env(work))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["listen_address"] == "10.0.0.1" and out["log_level"] == "WARN"
    res = ccm("hiera", "parse", ANNOTATED, "-D", "listen_address=::1", cwd=work, env=hiera_env(work))
    assert res.returncode == 1
    warning, error = res.stderr.splitlines()
    assert error == f'ccm: error: {ANNOTATED}: key "listen_address" failed validation "isIPv4(value)"'
    assert ' level=WARN msg="Unrecognized annotation in hiera data" key=log_level annotation="@loud ' in warning


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        if self.headers.get("Authorization") != "Basic " + base64.b64encode(b"u:pw").decode():
            self.send_response(403, "Forbidden")
            self.end_headers()
            return
        body = DOC.replace('name: ""', "name: remote").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_http_source_with_basic_auth(work):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        res = ccm("hiera", "parse", f"http://u:pw@127.0.0.1:{port}/h.yaml", "--query", "name", cwd=work,
                  env=hiera_env(work))
        assert (res.returncode, res.stdout) == (0, '"remote"\n'), res.stderr
        res = ccm("hiera", "parse", f"http://u:wrong@127.0.0.1:{port}/h.yaml", cwd=work, env=hiera_env(work))
        assert res.returncode == 1
        assert res.stderr == (f"ccm: error: HTTP request to http://REDACTED@127.0.0.1:{port}/h.yaml "
                              "failed with status 403: Forbidden\n")
    finally:
        server.shutdown()
        server.server_close()


def test_hiera_facts(work):
    res = ccm("hiera", "facts", "role=web", "--query", "role", cwd=work, env=hiera_env(work))
    assert (res.returncode, res.stdout) == (0, "web\n")
    res = ccm("hiera", "facts", "--query", "host.info.os", "-E", cwd=work, env=hiera_env(work))
    assert res.stdout == "linux\n"
    res = ccm("hiera", "facts", "-E", "--query", "CCM_TEST_VAR", cwd=work, env=hiera_env(work))
    assert res.stdout == "one\n"
    res = ccm("hiera", "facts", "x=1", cwd=work, env=hiera_env(work))
    out = json.loads(res.stdout)
    assert out["x"] == "1" and list(out)[:2] == ["cpu", "host"]
    res = ccm("hiera", "facts", "--query", "nothing", cwd=work, env=hiera_env(work))
    assert (res.returncode, res.stdout) == (0, "\n")


def test_bad_data_and_facts_files(work):
    (work / "bad.json").write_text('{"a": ')
    (work / "bad.yaml").write_text("a: [\n")
    (work / "list.yaml").write_text("- a\n")
    res = ccm("hiera", "parse", "h.yaml", "--data-file", "bad.json", cwd=work, env=hiera_env(work))
    assert (res.returncode, res.stderr) == (
        1, "ccm: error: failed to parse --data-file bad.json:1:7: Expecting value\n")
    res = ccm("hiera", "parse", "h.yaml", "--facts", "bad.yaml", cwd=work, env=hiera_env(work))
    assert res.returncode == 1 and res.stderr.startswith("ccm: error: failed to parse --facts file bad.yaml:2")
    res = ccm("hiera", "parse", "h.yaml", "--data-file", "list.yaml", cwd=work, env=hiera_env(work))
    assert (res.returncode, res.stderr) == (1, "ccm: error: --data-file list.yaml must contain a map, got list\n")
    res = ccm("hiera", "parse", "h.yaml", "--data-file", "nope.yaml", cwd=work, env=hiera_env(work))
    assert (res.returncode, res.stderr) == (1, "ccm: error: --data-file: path 'nope.yaml' does not exist\n")


# --- in-process checks of the shared CLI helpers -------------------------------------

from ccm.cli.common import parse_map, parse_map_item, to_json  # noqa: E402
from ccm.cli.hiera_cmd import env_lines  # noqa: E402
from ccm.gocompat.json import json_float as go_float  # noqa: E402
from ccm.model.errors import ValidationError  # noqa: E402


@pytest.mark.parametrize("text,expected", [
    ("a=b", ("a", "b")), ("a:b", ("a", "b")), ("a:b=c", ("a", "b=c")), ("a=b:c", ("a", "b:c")),
    ("a=", ("a", "")), ("=v", ("", "v")),
])
def test_parse_map_item(text, expected):
    assert parse_map_item(text) == expected


def test_parse_map_errors_and_later_wins():
    assert parse_map(["a=1", "a:2"]) == {"a": "2"}
    with pytest.raises(ValidationError, match="^expected KEY=VALUE got 'novalue'$"):
        parse_map(["novalue"])


@pytest.mark.parametrize("value,text", [
    (2400.0, "2400"), (0.5, "0.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"), (1e-7, "1e-7"),
    (0.000001, "0.000001"), (-3.25, "-3.25"), (0.0, "0"), (123456789.125, "123456789.125"),
])
def test_go_float(value, text):
    assert go_float(value) == text


def test_to_json_go_style():
    value = {"b": [1, 2.0, True, None], "a": {"z": "<&>", "y": {}}, "c": []}
    assert to_json(value, sort_keys=True) == (
        '{\n  "a": {\n    "y": {},\n    "z": "\\u003c\\u0026\\u003e"\n  },\n  "b": [\n    1,\n    2,\n    true,\n'
        '    null\n  ],\n  "c": []\n}')
    assert to_json(value, indent=None) == '{"b":[1,2,true,null],"a":{"z":"\\u003c\\u0026\\u003e","y":{}},"c":[]}'
    assert to_json("é") == '"é"'


def test_env_lines():
    assert env_lines({"b": 1.5, "a": "x y", "c": None, "d": False, "e": {"k": 1}}, "P") == (
        'P_A=x y\nP_B=1.500000\nP_C=null\nP_D=false\nP_E={"k":1}')
    assert env_lines([1, "a"], "P") == 'P_VALUE=[1,"a"]'
    assert env_lines("s", "P") == 'P_VALUE="s"'
