"""The agent's ``report:`` key against a real nats-server: every apply publishes a report with the
config's labels, ``/status`` says whether the last one was delivered, and a report made before
``ccm report init`` is delivered by the first apply after it."""
from __future__ import annotations

import json
import os
import sys

import pytest
from tests.kit import ROOT, ccm

from ccm.agent.config import ConfigError, parse_config
from ccm.fleet.config import ReportConfig

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

from agent.helpers import GROUP, USER, AgentProcess, free_port, write_yaml  # noqa: E402

pytestmark = pytest.mark.nats


def manifest(path, out, content):
    return write_yaml(str(path), {"ccm": {"resources": [
        {"file": {"name": str(out / "f.txt"), "ensure": "present", "content": content, "owner": USER,
                  "group": GROUP, "mode": "0644"}}]}})


def test_agent_reports_each_apply_and_says_whether_it_was_delivered(tmp_path, env, nats_server, state_dir):
    out = tmp_path / "out"
    out.mkdir()
    m = manifest(tmp_path / "m.yaml", out, "one")
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {
        "interval": "1h", "manifests": [m], "monitor_port": port, "cache_dir": str(tmp_path / "c"),
        "report": {"publisher": "jetstream", "labels": {"role": "agent", "dc": "ams1"}}})
    agent = AgentProcess(cfg, str(tmp_path), port, env=env)
    try:
        st = agent.wait_status(lambda s: s["manifests"] and (s["manifests"][0].get("report") or {}).get("queued") == 1,
                               30)
        report = st["manifests"][0]["report"]
        assert report["delivered"] is False and "ccm report init" in report["error"]
        assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
        manifest(tmp_path / "m.yaml", out, "two")          # a change: the agent applies again
        st = agent.wait_status(lambda s: s["manifests"][0]["report"]["delivered"] is True, 30)
        assert st["manifests"][0]["report"] == {"delivered": True, "queued": 0, "dropped": 0, "error": None}
        assert (out / "f.txt").read_text() == "two"
    finally:
        assert agent.stop() == 0
    history = json.loads(ccm("report", "show", os.uname().nodename, "--history", "5", "--json", env=env,
                             cwd=ROOT).stdout)
    runs = history["reports"]
    assert len(runs) == 2 and all(r["labels"] == {"role": "agent", "dc": "ams1"} for r in runs)
    assert runs[0]["manifest"]["source"] == m and all(r["resources"][0]["outcome"] == "changed" for r in runs)
    fleet = json.loads(ccm("report", "fleet", "--json", "--label", "role=agent", env=env, cwd=ROOT).stdout)
    assert [h["hostname"] for h in fleet["hosts"]] == [os.uname().nodename]


@pytest.mark.parametrize("value,message", [
    ("kafka", "report.publisher: invalid report publisher 'kafka' (expected nats or jetstream)"),
    ({"publisher": "nats", "labels": {"role": "a.b"}}, "report.labels: label 'role': value holds '.'"),
    ({"publisher": "nats", "labels": ["x"]}, "report.labels: must be a mapping"),
    ({"publisher": "nats", "labels": {"k": {"a": 1}}}, "report.labels.k: must be a plain value"),
    ({"publisher": "nats", "stream": "X"}, "report.stream: unknown key"),
    (5, "report: must be nats, jetstream or a mapping"),
])
def test_bad_report_config_is_one_line_naming_the_key(value, message):
    with pytest.raises(ConfigError) as err:
        parse_config({"manifests": ["/m.yaml"], "report": value}, "/etc/ccm.yaml")
    assert str(err.value).startswith("/etc/ccm.yaml: ") and message in str(err.value)


def test_report_config_forms():
    assert parse_config({"manifests": ["/m.yaml"], "report": "jetstream"}).report == ReportConfig("jetstream", {})
    cfg = parse_config({"manifests": ["/m.yaml"], "report": {"publisher": "nats", "labels": {"n": 1, "b": True}}})
    assert cfg.report == ReportConfig("nats", {"n": "1", "b": "true"})
    assert parse_config({"manifests": ["/m.yaml"]}).report is None
