"""Any local user can reach the agent's monitor port: it must neither take the agent down
nor leak a credential (issue 24).

A real ``ccm agent`` with the descriptor limit the shipped unit used to get (1,024):
~1,100 half-open connections to its monitor (idle, or a request line and no more) while
it applies every 0.5 s. Before the fix each connection held a thread and a descriptor
until the client left, every apply failed with ``Too many open files`` and ``/status``
hung. Now applies go on, ``/status`` answers, and nothing is printed but debug lines.
"""
from __future__ import annotations

import os
import resource
import socket
import time
import urllib.request

import pytest

from tests.agent.helpers import AgentProcess, CondServer, bundle, file_manifest, free_port, wait_for, write_yaml

pytestmark = pytest.mark.reliability

FLOOD = 1100
PASSWORD = "Canary-Pw-77"


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def _flood(port: int, count: int):
    socks = []
    for i in range(count):
        s = socket.socket()
        s.settimeout(3)
        try:
            s.connect(("127.0.0.1", port))
            if i % 2:
                s.sendall(b"GET /status HTTP/1.1\r\n")   # a request line, then silence
        except OSError:
            s.close()
            continue
        socks.append(s)
    return socks


def _status_ok(port: int, timeout: float = 3.0) -> bool:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=timeout) as resp:
        return resp.status == 200 and b'"manifests"' in resp.read()


def test_a_flood_of_half_open_connections_neither_stops_applies_nor_status(tmp_path):
    trace = tmp_path / "trace"
    m = write_yaml(str(tmp_path / "m.yaml"), {"ccm": {"resources": [
        {"exec": {"name": f"/bin/sh -c 'echo run >> {trace}'"}}]}})
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "0.5s", "manifests": [m], "monitor_port": port,
                                                     "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path), port, preexec_fn=_limit_descriptors)
    socks = []
    try:
        wait_for(lambda: trace.exists() and len(trace.read_text().split()) >= 2, 20, what="applies")
        assert _status_ok(port)
        socks = _flood(port, FLOOD)
        assert len(socks) >= FLOOD * 0.9, len(socks)
        before = len(trace.read_text().split())
        started = time.monotonic()
        assert _status_ok(port)                      # answers at once, flood or not
        answered = time.monotonic() - started
        time.sleep(2.0)
        assert _status_ok(port)
        after = len(trace.read_text().split())
        assert after - before >= 2, (before, after, agent.output()[-3000:])
        assert answered < 3.0
        # the agent holds a bounded number of descriptors whatever the client count
        held = len(os.listdir(f"/proc/{agent.proc.pid}/fd"))
        assert held < 200, held
    finally:
        for s in socks:
            s.close()
        rc = agent.stop()
    out = agent.output()
    assert rc == 0
    assert "Too many open files" not in out, out[-3000:]
    assert "Traceback" not in out and "BrokenPipe" not in out, out[-3000:]


def test_clients_that_hang_up_early_print_no_traceback(tmp_path):
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "1h", "manifests": [m], "monitor_port": port,
                                                     "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path), port)
    try:
        agent.wait_status(lambda s: s["manifests"] and s["manifests"][0]["last_apply"])
        for _ in range(40):   # ask for the larger body and reset the connection before reading it
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            s.close()
        assert _status_ok(port)
    finally:
        rc = agent.stop()
    out = agent.output()
    assert rc == 0 and "Traceback" not in out and "BrokenPipe" not in out and "Exception" not in out, out


def test_no_credential_in_metrics_status_or_log(tmp_path):
    """Sources with URL user info: ``/metrics`` labels, ``/status`` and every log line carry
    the redacted form (the series used to be labelled with the raw URL)."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    srv = CondServer("etag")
    srv.set("/web.tar.gz", bundle({"manifest.yaml": open(write_yaml(
        str(tmp_path / "web.yaml"), file_manifest(str(out_dir), prefix="web"))).read()}))
    base = f"http://svcuser:{PASSWORD}@127.0.0.1:{srv.httpd.server_address[1]}"
    web, dead = f"{base}/web.tar.gz", f"{base}/missing.tar.gz"
    srv.set("/data.yaml", b"data: [broken\n")
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {
        "interval": "1h", "manifests": [web, dead], "external_data_url": f"{base}/data.yaml",
        "monitor_port": port, "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path), port, env={"CCM_AGENT_TEST_TIMESCALE": "0.001"})
    try:
        agent.wait_log("Could not fetch manifest")
        agent.wait_log("Could not resolve external data", count=3)
        metrics = agent.get("/metrics")
        status = agent.get("/status")
        assert 'manifest="http://REDACTED@127.0.0.1' in metrics
        assert "choria_ccm_agent_manifest_fetch_error_count" in metrics
    finally:
        srv.close()
        rc = agent.stop()
    log = agent.output()
    assert rc == 0
    for name, text in (("metrics", metrics), ("status", status), ("log", log)):
        assert PASSWORD not in text and "svcuser" not in text, (name, text)
