"""``ccm facts`` run as a real subprocess (python -m ccm)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ccm(args, cwd, xdg, extra_env=None):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT, "HOME": str(cwd),
           "XDG_CONFIG_HOME": str(xdg)}
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "ccm", *args], cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=60)


def _user_facts(tmp_path, text):
    d = tmp_path / "xdg" / "choria" / "ccm"
    d.mkdir(parents=True)
    (d / "facts.yaml").write_text(text)
    return tmp_path / "xdg"


def test_all_facts_json_with_file_facts(tmp_path):
    xdg = _user_facts(tmp_path, "role: web\nzz: {b: 1, a: 2}\n")
    res = ccm(["facts"], tmp_path, xdg)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert list(out) == ["cpu", "host", "memory", "network", "partition", "role", "zz"]
    assert list(out["zz"]) == ["a", "b"]
    assert list(out["host"]["info"])[:3] == ["hostname", "uptime", "bootTime"]
    assert res.stdout.startswith('{\n  "cpu": {\n    "info": [')
    assert res.stdout.endswith("}\n") and not res.stdout.endswith("\n\n")


def test_query_and_yaml(tmp_path):
    xdg = _user_facts(tmp_path, "role: web\nweb: {port: 80, html: '<b>'}\n")
    res = ccm(["facts", "host.info.os"], tmp_path, xdg)
    assert (res.returncode, res.stdout) == (0, '"linux"\n')
    res = ccm(["facts", "web"], tmp_path, xdg)
    assert res.stdout == '{\n  "html": "\\u003cb\\u003e",\n  "port": 80\n}\n'
    res = ccm(["facts", "--yaml", "web"], tmp_path, xdg)
    assert yaml.safe_load(res.stdout) == {"port": 80, "html": "<b>"}
    res = ccm(["facts", "--yaml"], tmp_path, xdg)
    assert yaml.safe_load(res.stdout)["role"] == "web"


def test_query_without_match_fails(tmp_path):
    res = ccm(["facts", "no.such.fact"], tmp_path, tmp_path / "xdg")
    assert res.returncode == 1
    assert res.stderr == "ccm: error: no fact matches 'no.such.fact': `ccm facts` without a query prints them all\n"
    assert res.stdout == ""
    res = ccm(["facts", "hots.info.os"], tmp_path, tmp_path / "xdg")
    assert (res.returncode, res.stdout) == (1, "")
    assert res.stderr == ("ccm: error: no fact matches 'hots.info.os' (did you mean `host`?): `ccm facts` without "
                          "a query prints them all\n")


def test_usage_errors_exit_1(tmp_path):
    res = ccm(["facts", "--bogus"], tmp_path, tmp_path / "xdg")
    assert res.returncode == 1
    assert res.stderr.startswith("error: unrecognized arguments: --bogus\n\nusage: ccm facts")
    res = ccm(["facts", "a", "b"], tmp_path, tmp_path / "xdg")
    assert res.returncode == 1 and res.stderr.startswith("error: ")


def test_broken_user_facts_file_is_skipped(tmp_path):
    xdg = _user_facts(tmp_path, "role: [unclosed\n")
    res = ccm(["facts", "host.info.os"], tmp_path, xdg)
    assert res.returncode == 0 and res.stdout == '"linux"\n'
    assert "could not decode facts file" in res.stderr
