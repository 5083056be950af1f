"""The shipped service files: the LSB init script driven for real (as this user, with
paths overridden through its defaults file), and the systemd unit's essentials."""
from __future__ import annotations

import os
import subprocess
import sys

from .helpers import FAST, ROOT, file_manifest, wait_for, write_yaml

INIT = os.path.join(ROOT, "contrib", "ccm-agent.init")
UNIT = os.path.join(ROOT, "contrib", "ccm-agent.service")


def _init_script(tmp_path, manifest, log):
    """``init(*args)``: the init script run against an agent of ``manifest``, logging to ``log``."""
    m = write_yaml(str(tmp_path / "m.yaml"), manifest)
    cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "1h", "manifests": [m],
                                                     "cache_dir": str(tmp_path / "cache")})
    wrapper = tmp_path / "ccm"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m ccm \"$@\"\n")
    wrapper.chmod(0o755)
    defaults = tmp_path / "defaults"
    defaults.write_text(f"CCM={wrapper}\nCONFIG={cfg}\nPIDFILE={tmp_path}/agent.pid\nLOGFILE={log}\n")
    env = dict(os.environ, CCM_AGENT_DEFAULTS=str(defaults), **FAST)

    def init(*args):
        return subprocess.run(["sh", INIT, *args], env=env, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    return init


def test_lsb_init_script_start_status_reload_stop(tmp_path):
    log = tmp_path / "agent.log"
    init = _init_script(tmp_path, file_manifest(str(tmp_path)), log)
    assert init("status").returncode == 3
    r = init("start")
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
    try:
        assert init("status").returncode == 0
        wait_for(lambda: (tmp_path / "f0.txt").exists(), 20, what="agent applied")
        assert init("start").stdout.startswith("ccm-agent is already running")
        assert init("reload").returncode == 0
        wait_for(lambda: "SIGHUP" in log.read_text(), 10, what="reload logged")
    finally:
        r = init("stop")
    assert r.returncode == 0 and init("status").returncode == 3
    assert "Runner stopped" in log.read_text()


def test_lsb_init_script_stop_leaves_no_command_running(tmp_path):
    """``stop`` while a command runs: it is stopped with the agent, its resource recorded as
    interrupted, well within STOP_TIMEOUT (it used to outlive the agent with PPID 1)."""
    import signal
    import time

    from .test_process import _alive

    pids = tmp_path / "pids"
    log = tmp_path / "agent.log"
    init = _init_script(tmp_path, {"ccm": {"resources": [{"exec": {
        "name": f"/bin/sh -c 'sleep 120 & echo $! >> {pids}; echo $$ >> {pids}; wait'"}}]}}, log)
    assert init("start").returncode == 0
    children = []
    try:
        wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2, 20, what="the command running")
        children = [int(p) for p in pids.read_text().split()]
        agent_pid = int((tmp_path / "agent.pid").read_text())
        assert os.getpgid(agent_pid) == agent_pid   # its own process group, which stop can end
        started = time.monotonic()
        r = init("stop")
        assert r.returncode == 0 and time.monotonic() - started < 8, r.stdout + r.stderr
        wait_for(lambda: not any(_alive(p) for p in children), 5, what="the command gone with the agent")
        assert "interrupted by SIGTERM" in log.read_text() and "Runner stopped" in log.read_text()
    finally:
        init("stop")
        for p in children:
            if _alive(p):
                os.kill(p, signal.SIGKILL)


def test_lsb_init_script_reports_a_bad_config(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("intervall: 5m\n")
    defaults = tmp_path / "defaults"
    wrapper = tmp_path / "ccm"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m ccm \"$@\"\n")
    wrapper.chmod(0o755)
    defaults.write_text(f"CCM={wrapper}\nCONFIG={cfg}\nPIDFILE={tmp_path}/agent.pid\nLOGFILE={tmp_path}/log\n")
    r = subprocess.run(["sh", INIT, "start"], env=dict(os.environ, CCM_AGENT_DEFAULTS=str(defaults)),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "invalid configuration" in r.stdout
    assert "intervall: unknown key" in (tmp_path / "log").read_text()


def test_systemd_unit_stops_with_sigterm_and_reloads_with_sighup():
    text = open(UNIT).read()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    assert "ExecStart=/usr/local/bin/ccm agent --config /etc/choria/ccm/config.yaml" in lines
    assert "ExecStartPre=/usr/local/bin/ccm agent --config /etc/choria/ccm/config.yaml --check" in lines
    assert "ExecReload=/bin/kill -HUP $MAINPID" in lines and "KillSignal=SIGTERM" in lines
    assert "TimeoutStopSec=20" in lines and "[Install]" in lines
    assert "LimitNOFILE=65536" in lines   # not the 1,024 a unit gets by default (issue 24)
    # SIGTERM to the agent (which stops its command's group), SIGKILL to whatever is left
    assert "KillMode=mixed" in lines
