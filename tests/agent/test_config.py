"""The bootstrap config: defaults, and one clear line naming the key for every bad value."""
from __future__ import annotations

import os
import time

import pytest

from ccm.agent.config import ConfigError, load_config, parse_config

from .helpers import ROOT
from tests.kit import ccm


def test_defaults(tmp_path):
    cfg = parse_config({"manifests": ["/srv/m.yaml", "/srv/m.yaml", "https://h/x.tar.gz"]}, "c.yaml")
    assert cfg.interval == 300 and cfg.health_check_interval is None
    assert cfg.manifests == ("/srv/m.yaml", "https://h/x.tar.gz")   # one worker per distinct source
    assert cfg.cache_dir == "/etc/choria/ccm/source" and cfg.monitor_port == 0
    assert cfg.log_level == "info" and cfg.nats_context == "CCM" and cfg.registration == ""
    assert cfg.manifest_set is None


def test_full_config_honoured(tmp_path):
    doc = {"interval": "10m", "health_check_interval": "45s", "manifests": ["obj://b/k.tgz"],
           "manifest_set": {"source": "git+file:///srv/r.git?ref=prod", "path": "sets/web.yaml", "interval": "1m"},
           "external_data_url": "kv://data/common", "cache_dir": "/var/cache/ccm/", "monitor_port": 9100,
           "log_level": "warn", "nats_context": "AGENT", "registration": "jetstream"}
    cfg = parse_config(doc, "c.yaml")
    assert cfg.interval == 600 and cfg.health_check_interval == 45
    assert cfg.manifest_set.mode == "git" and cfg.manifest_set.interval == 60 and cfg.manifest_set.path == "sets/web.yaml"
    assert cfg.cache_dir == "/var/cache/ccm" and cfg.monitor_port == 9100 and cfg.nats_context == "AGENT"
    assert parse_config({"manifest_set": {"source": "/srv/set.yaml"}}).manifest_set.interval == 180


@pytest.mark.parametrize("doc, key, reason", [
    ({"interval": "10s", "manifests": ["/m"]}, "interval", "at least 30s"),
    ({"interval": "soon", "manifests": ["/m"]}, "interval", "duration"),
    ({"interval": 0, "manifests": ["/m"]}, "interval", "greater than zero"),
    ({"health_check_interval": [1], "manifests": ["/m"]}, "health_check_interval", "duration"),
    ({"manifests": "/m"}, "manifests", "list"),
    ({"manifests": ["relative.yaml"]}, "manifests[0]", "absolute"),
    ({"manifests": ["/m", "ftp://h/x"]}, "manifests[1]", "unsupported manifest source"),
    ({"manifests": ["obj://bucket"]}, "manifests[0]", "obj://BUCKET/KEY"),
    ({"manifests": [3]}, "manifests[0]", "string"),
    ({"manifests": ["/m"], "monitor_port": 70000}, "monitor_port", "1..65535"),
    ({"manifests": ["/m"], "monitor_port": "9100"}, "monitor_port", "1..65535"),
    ({"manifests": ["/m"], "monitor_port": True}, "monitor_port", "1..65535"),
    ({"manifests": ["/m"], "log_level": "verbose"}, "log_level", "debug, info, warn, error"),
    ({"manifests": ["/m"], "registration": "kafka"}, "registration", "invalid registration destination"),
    ({"manifests": ["/m"], "cache_dir": ""}, "cache_dir", "empty"),
    ({"manifests": ["/m"], "cache_dir": "rel"}, "cache_dir", "absolute"),
    ({"manifests": ["/m"], "external_data_url": "obj://x/y"}, "external_data_url", "unsupported data source"),
    ({"manifests": ["/m"], "nats_context": ""}, "nats_context", "empty"),
    ({"manifests": ["/m"], "intervall": "5m"}, "intervall", "unknown key"),
    ({"manifest_set": {"source": "/s", "interva": "1m"}}, "manifest_set.interva", "unknown key"),
    ({"manifest_set": {"interval": "1m"}}, "manifest_set.source", "required"),
    ({"manifest_set": {"source": "/s", "interval": "x"}}, "manifest_set.interval", "duration"),
    ({"manifest_set": {"source": "/s", "ref": "main"}}, "manifest_set.ref", "git"),
    ({"manifest_set": {"source": "rel/set.yaml"}}, "manifest_set.source", "absolute"),
    ({"manifest_set": {"source": "svn://h/r"}}, "manifest_set.source", "unsupported"),
    ({"manifest_set": {"source": "git+file:///r?ref=a", "ref": "b"}}, "manifest_set.source", "ref given twice"),
    ({"manifest_set": {"source": "git+file:///r?path=../x"}}, "manifest_set.source", "relative path inside"),
    ({"manifest_set": "/s"}, "manifest_set", "mapping"),
])
def test_bad_values_name_the_key(doc, key, reason):
    with pytest.raises(ConfigError) as err:
        parse_config(doc, "/etc/c.yaml")
    msg = str(err.value)
    assert msg.startswith(f"/etc/c.yaml: {key}: "), msg
    assert reason in msg and "\n" not in msg


def test_no_manifests_at_all():
    with pytest.raises(ConfigError, match="no manifests configured"):
        parse_config({"interval": "5m"})


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match=f"agent configuration {tmp_path}/nope.yaml does not exist"):
        load_config(str(tmp_path / "nope.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("interval: [5m\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(str(bad))


def test_secrets_in_urls_never_reach_errors():
    with pytest.raises(ConfigError) as err:
        parse_config({"manifests": ["ftp://user:s3cret@h/x"]})
    assert "s3cret" not in str(err.value)


@pytest.mark.parametrize("content, needle", [
    ("manifests: [/m]\nmanifest_set: {source: /s, bogus: 1}\n", "manifest_set.bogus: unknown key"),
    (None, "does not exist"),
])
def test_cli_rejects_within_a_second_with_one_line(tmp_path, content, needle):
    cfg = tmp_path / "config.yaml"
    if content is not None:
        cfg.write_text(content)
    started = time.monotonic()
    r = ccm("agent", "--config", cfg, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), timeout=30)
    elapsed = time.monotonic() - started
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and str(cfg) in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert elapsed < 3.0   # the whole interpreter start included; the check itself is milliseconds


def test_default_config_path_is_named(tmp_path):
    r = ccm("agent", cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), timeout=30)
    if os.path.exists("/etc/choria/ccm/config.yaml"):
        pytest.skip("this host has a real agent configuration")
    assert r.returncode == 1
    assert r.stderr.strip() == "ccm: error: agent configuration /etc/choria/ccm/config.yaml does not exist"


def test_test_timescale_lowers_the_floor(monkeypatch):
    monkeypatch.setenv("CCM_AGENT_TEST_TIMESCALE", "0.01")
    assert parse_config({"interval": "1s", "manifests": ["/m"]}).interval == 1
    with pytest.raises(ConfigError, match="at least 300ms"):
        parse_config({"interval": "0.1s", "manifests": ["/m"]})


def test_nats_context_from_the_file_is_honoured_unless_the_flag_is_given(monkeypatch):
    import io

    from ccm.agent.agent import Agent
    from ccm.agent.log import LogfmtLogger
    from ccm.cli.agent_cmd import parser

    monkeypatch.delenv("NATS_CONTEXT", raising=False)
    cfg = parse_config({"manifests": ["/m"], "nats_context": "FROMFILE"})
    log = LogfmtLogger(stream=io.StringIO())
    assert parser().parse_args([]).context is None
    assert Agent(cfg, log, nats_context=parser().parse_args([]).context).nats_context == "FROMFILE"
    assert Agent(cfg, log, nats_context=parser().parse_args(["--context", "FLAG"]).context).nats_context == "FLAG"
    monkeypatch.setenv("NATS_CONTEXT", "ENV")
    assert Agent(cfg, log, nats_context=parser().parse_args([]).context).nats_context == "ENV"


def test_check_flag_validates_and_exits(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("manifests: [/srv/m.yaml]\n")
    r = ccm("agent", "--config", cfg, "--check", cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), timeout=30)
    assert r.returncode == 0 and r.stdout == f"{cfg}: configuration ok\n"
    cfg.write_text("manifests: [/srv/m.yaml]\nmonitor_port: -1\n")
    r = ccm("agent", "--config", cfg, "--check", cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), timeout=30)
    assert r.returncode == 1 and "monitor_port: must be a port number" in r.stderr
