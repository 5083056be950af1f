"""``ccm facts`` run as a real subprocess (python -m ccm)."""
from __future__ import annotations

import json
import os

import yaml
from tests.kit import bare_env, ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _user_facts(tmp_path, text):
    d = tmp_path / "xdg" / "choria" / "ccm"
    d.mkdir(parents=True)
    (d / "facts.yaml").write_text(text)
    return tmp_path / "xdg"


def test_all_facts_json_with_file_facts(tmp_path):
    xdg = _user_facts(tmp_path, "role: web\nzz: {b: 1, a: 2}\n")
    res = ccm("facts", cwd=tmp_path, env=bare_env(tmp_path, xdg=xdg))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert list(out) == ["cpu", "host", "memory", "network", "partition", "role", "zz"]
    assert list(out["zz"]) == ["a", "b"]
    assert list(out["host"]["info"])[:3] == ["hostname", "uptime", "bootTime"]
    assert res.stdout.startswith('{\n  "cpu": {\n    "info": [')
    assert res.stdout.endswith("}\n") and not res.stdout.endswith("\n\n")


def test_query_and_yaml(tmp_path):
    xdg = _user_facts(tmp_path, "role: web\nweb: {port: 80, html: '<b>'}\n")
    res = ccm("facts", "host.info.os", cwd=tmp_path, env=bare_env(tmp_path, xdg=xdg))
    assert (res.returncode, res.stdout) == (0, '"linux"\n')
    res = ccm("facts", "web", cwd=tmp_path, env=bare_env(tmp_path, xdg=xdg))
    assert res.stdout == '{\n  "html": "\\u003cb\\u003e",\n  "port": 80\n}\n'
    res = ccm("facts", "--yaml", "web", cwd=tmp_path, env=bare_env(tmp_path, xdg=xdg))
    assert yaml.safe_load(res.stdout) == {"port": 80, "html": "<b>"}
    res = ccm("facts", "--yaml", cwd=tmp_path, env=bare_env(tmp_path, xdg=xdg))
    assert yaml.safe_load(res.stdout)["role"] == "web"


def test_query_without_match_fails(tmp_path):
    res = ccm("facts", "no.such.fact", cwd=tmp_path, env=bare_env(tmp_path, xdg=tmp_path / "xdg"))
    assert res.returncode == 1
    assert res.stderr == "ccm: error: no fact matches 'no.such.fact': `ccm facts` without a query prints them all\n"
    assert res.stdout == ""
    res = ccm("facts", "hots.info.os", cwd=tmp_path, env=bare_env(tmp_path, xdg=tmp_path / "xdg"))
    assert (res.returncode, res.stdout) == (1, "")
    assert res.stderr == ("ccm: error: no fact matches 'hots.info.os' (did you mean `host`?): `ccm facts` without "
                          "a query prints them all\n")


def test_usage_errors_exit_1(tmp_path):
    res = ccm("facts", "--bogus", cwd=tmp_path, env=bare_env(tmp_path, xdg=tmp_path / "xdg"))
    assert res.returncode == 1
    assert res.stderr.startswith("error: unrecognized arguments: --bogus\n\nusage: ccm facts")
    res = ccm("facts", "a", "b", cwd=tmp_path, env=bare_env(tmp_path, xdg=tmp_path / "xdg"))
    assert res.returncode == 1 and res.stderr.startswith("error: ")


def test_broken_user_facts_file_is_skipped(tmp_path):
    xdg = _user_facts(tmp_path, "role: [unclosed\n")
    res = ccm("facts", "host.info.os", cwd=tmp_path, env=bare_env(tmp_path, xdg=xdg))
    assert res.returncode == 0 and res.stdout == '"linux"\n'
    assert "could not decode facts file" in res.stderr
