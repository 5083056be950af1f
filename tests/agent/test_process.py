"""A real ``ccm agent`` subprocess: signals, /status, /metrics, lazy imports."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.kit import ccm

from .helpers import (FAST, GROUP, ROOT, USER, AgentProcess, CondServer, bundle, file_manifest, free_port, wait_for,
                      write_yaml)

AGENT_METRICS = (
    "choria_ccm_agent_apply_duration_seconds", "choria_ccm_agent_healthcheck_duration_seconds",
    "choria_ccm_agent_healthcheck_remediations_count", "choria_ccm_agent_data_resolve_duration_seconds",
    "choria_ccm_agent_data_resolve_error_count", "choria_ccm_agent_facts_resolve_duration_seconds",
    "choria_ccm_agent_facts_resolve_error_count", "choria_ccm_agent_manifest_fetch_count",
    "choria_ccm_agent_manifest_fetch_error_count",
)


def sh(command):
    return {"exec": {"name": f"/bin/sh -c '{command}'"}}


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:   # a zombie is gone for our purposes
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stop_signal_stops_the_running_command_and_exits_0(tmp_path, sig):
    """As ``ccm apply`` on a signal: the running command's process group gets TERM (KILL
    after a grace period), its resource is recorded as interrupted, no later one starts,
    and nothing keeps running without the agent (it used to wait ~13 s and orphan it)."""
    trace = tmp_path / "trace"
    pids = tmp_path / "pids"
    m = write_yaml(str(tmp_path / "m.yaml"), {"ccm": {"resources": [
        sh(f"echo started >> {trace}; sleep 60 & echo $! >> {pids}; echo $$ >> {pids}; wait; echo finished >> {trace}"),
        sh(f"echo second >> {trace}")]}})
    cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "1h", "manifests": [m],
                                                     "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path))
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2, 20, what="first resource running")
    children = [int(p) for p in pids.read_text().split()]
    try:
        started = time.monotonic()
        rc = agent.stop(sig)
        elapsed = time.monotonic() - started
        out = agent.output()
        assert rc == 0 and elapsed < 6, (rc, elapsed, out)
        assert trace.read_text().split() == ["started"]   # stopped mid-command; the next one never started
        wait_for(lambda: not any(_alive(p) for p in children), 5, what="the command's process group gone")
        assert f"interrupted by {signal.Signals(sig).name}" in out, out
        assert "Exiting while a resource is still running" not in out and "Runner stopped" in out
    finally:
        for p in children:   # an orphan of a failed run must not outlive the test
            if _alive(p):
                os.kill(p, signal.SIGKILL)


def test_sighup_reloads_the_manifest_set_now(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    a = write_yaml(str(tmp_path / "a.yaml"), file_manifest(str(out), prefix="a"))
    b = write_yaml(str(tmp_path / "b.yaml"), file_manifest(str(out), prefix="b"))
    set_file = str(tmp_path / "set.yaml")
    write_yaml(set_file, {"manifests": [{"name": "a", "source": a}]})
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {
        "interval": "1h", "manifest_set": {"source": set_file, "interval": "1h"}, "monitor_port": port,
        "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path), port)
    try:
        wait_for(lambda: (out / "a0.txt").exists(), 20, what="a applied")
        write_yaml(set_file, {"manifests": [{"name": "a", "source": a}, {"name": "b", "source": b}]})
        time.sleep(0.5)
        assert not (out / "b0.txt").exists()   # the set interval is an hour
        agent.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: (out / "b0.txt").exists(), 10, what="b applied after SIGHUP")
        st = agent.wait_status(lambda s: len(s["manifests"]) == 2)
        assert [m["name"] for m in st["manifests"]] == ["a", "b"]
        assert agent.proc.poll() is None
    finally:
        assert agent.stop() == 0


def test_status_and_metrics_endpoints(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    target = out / "needed"
    local = write_yaml(str(tmp_path / "local.yaml"), {"ccm": {"resources": [{"file": {
        "name": str(target), "ensure": "present", "content": "{{ Data.word }}", "owner": USER, "group": GROUP,
        "mode": "0644", "health_checks": [{"command": f"/bin/sh -c 'test -e {target} || exit 2'",
                                           "name": "needed"}]}}]}, "data": {"word": "default"}})
    srv = CondServer("etag")
    srv.set("/web.tar.gz", bundle({"app/manifest.yaml": open(write_yaml(
        str(tmp_path / "web.yaml"), file_manifest(str(out), prefix="web"))).read()}))
    web, dead = srv.url("/web.tar.gz"), srv.url("/missing.tar.gz")
    data = write_yaml(str(tmp_path / "data.yaml"), {"data": {"word": "external"}})
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {
        "interval": "1h", "health_check_interval": "0.4s", "manifests": [local, web, dead],
        "external_data_url": data, "monitor_port": port, "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path), port)
    try:
        wait_for(lambda: target.exists() and (out / "web0.txt").exists(), 20, what="applies")
        assert target.read_text() == "external"
        target.unlink()
        agent.wait_log("Healthcheck reported critical")
        wait_for(lambda: target.exists(), 10, what="remediation")
        with open(data, "w") as fh:
            fh.write("data: [broken\n")
        agent.proc.send_signal(signal.SIGHUP)    # data re-resolved now: fails, the last good value stays
        agent.wait_log("Using previously resolved external data")
        st = agent.wait_status(lambda s: all(m["last_apply"] for m in s["manifests"][:2]))
        assert st["manifest_set"] == {"mode": "static", "source": cfg, "revision": None,
                                      "last_load": st["manifest_set"]["last_load"], "last_error": None,
                                      "members": 0}
        by_source = {m["source"]: m for m in st["manifests"]}
        assert list(by_source) == [local, web, dead]
        entry = by_source[web]
        assert entry["name"] is None and entry["static"] is True and entry["outcome"] in ("changed", "stable")
        assert entry["summary"]["total_resources"] == 1 and entry["last_error"] is None
        assert entry["manifest"].endswith("/app/manifest.yaml") and entry["revision"].startswith('"')
        assert by_source[dead]["last_apply"] is None and "404" in by_source[dead]["last_error"]
        text = agent.get("/metrics")
        types = {line.split()[2]: line.split()[3] for line in text.splitlines() if line.startswith("# TYPE")}
        for name in AGENT_METRICS:
            assert name in types, (name, text)
        assert types["choria_ccm_agent_healthcheck_remediations_count"] == "counter"
        assert types["choria_ccm_agent_apply_duration_seconds"] == "summary"
        assert "choria_ccm_resource_state_total_count" in types and "choria_ccm_healthcheck_status_count" in types
        assert "_total{" not in text and "_created" not in text
        assert f'choria_ccm_agent_manifest_fetch_count{{manifest="{web}"}} 1' in text
        assert f'choria_ccm_agent_data_resolve_error_count{{url="{data}"}} 10' in text
        from prometheus_client.parser import text_string_to_metric_families

        names = {f.name for f in text_string_to_metric_families(text)}
        assert "choria_ccm_agent_apply_duration_seconds" in names
        with pytest.raises(Exception):
            agent.get("/nope")
    finally:
        srv.close()
        assert agent.stop() == 0


def test_no_monitor_port_imports_neither_metrics_nor_nats(tmp_path):
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "1h", "manifests": [m],
                                                     "cache_dir": str(tmp_path / "cache")})
    code = ("import io, sys, time\n"
            "from ccm.agent.agent import Agent\nfrom ccm.agent.config import load_config\n"
            "from ccm.agent.log import LogfmtLogger\n"
            f"a = Agent(load_config({cfg!r}), LogfmtLogger(stream=io.StringIO()))\n"
            "a.start()\n"
            "while not a.static[list(a.static)[0]].status.last_apply: time.sleep(0.05)\n"
            "a.shutdown()\n"
            "print(sorted(m for m in ('prometheus_client', 'nats', 'ccm.metrics', 'jsonschema_x') if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=ROOT, **FAST))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().replace("'", '"')) == []
    assert (tmp_path / "f0.txt").exists()


def test_busy_monitor_port_is_one_clear_line(tmp_path):
    import socket

    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "1h", "manifests": [m], "monitor_port": port,
                                                         "cache_dir": str(tmp_path / "cache")})
        r = ccm("agent", "--config", cfg, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT, **FAST), timeout=30)
    assert r.returncode == 1
    assert f"ccm: error: cannot serve monitor_port {port} on 127.0.0.1: Address already in use" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_broken_local_manifest_keeps_the_last_good_one_enforced(tmp_path):
    """Validate before swap for local files too: broken YAML is an error in /status and a
    counted load error, and the last version that loaded keeps being applied (issue 25)."""
    out = tmp_path / "out"
    out.mkdir()
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(out), content="one"))
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "0.5s", "manifests": [m], "monitor_port": port,
                                                     "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path), port)
    try:
        target = out / "f0.txt"
        wait_for(lambda: target.exists() and target.read_text() == "one", 20, what="first apply")
        tmp = tmp_path / "m.yaml.tmp"
        tmp.write_text("ccm:\n  resources: [broken\n")
        os.replace(tmp, m)
        agent.wait_log("Could not load manifest, applying the last good version")
        target.unlink()
        wait_for(lambda: target.exists() and target.read_text() == "one", 10, what="the last good version enforced")
        st = agent.wait_status(lambda s: s["manifests"][0]["last_error"])
        assert "applying the last good version" in st["manifests"][0]["last_error"]
        assert st["manifests"][0]["outcome"] in ("changed", "stable")
        metrics = agent.get("/metrics")
        line = next(ln for ln in metrics.splitlines()
                    if ln.startswith(f'choria_ccm_agent_manifest_load_error_count{{manifest="{m}"}}'))
        assert float(line.split()[-1]) >= 1
        assert "# TYPE choria_ccm_agent_manifest_load_error_count counter" in metrics
        write_yaml(m, file_manifest(str(out), content="two"))
        wait_for(lambda: target.read_text() == "two", 10, what="the fixed manifest applied")
        agent.wait_status(lambda s: s["manifests"][0]["last_error"] is None)
    finally:
        assert agent.stop() == 0
