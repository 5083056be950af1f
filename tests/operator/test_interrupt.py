"""Interrupted runs stay safe: a real signal during a long exec, for apply and ensure."""
from __future__ import annotations

import json
import signal

import pytest

from tests.kit import ccm, spawn
from tests.operator.helpers import ccm_env, processes_with_pgid, wait_for

EXPECTED = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def _manifest(tmp_path, pidfile):
    # the long command starts a background grandchild too: the whole group must die
    path = tmp_path / "m.yaml"
    path.write_text(f"""\
ccm:
  resources:
    - file:
        name: {tmp_path}/before.txt
        ensure: present
        content: "before\\n"
        owner: root
        group: root
        mode: "0644"
    - exec:
        name: long
        command: "/bin/sh -c 'sleep 300 & echo $$ > {pidfile}; wait'"
    - file:
        name: {tmp_path}/after.txt
        ensure: present
        content: "after\\n"
        owner: root
        group: root
        mode: "0644"
""")
    return path


def _pgid_from(pidfile):
    text = pidfile.read_text().strip() if pidfile.exists() else ""
    return int(text) if text.isdigit() else None


def _interrupt(tmp_path, pidfile, sig, *args, **env):
    """Start ``ccm *args``, wait for its long command to write its pgid, send ``sig``.
    -> (exit code, stdout, stderr, pgid)."""
    proc = spawn(*args, cwd=tmp_path, env=ccm_env(tmp_path, **env))
    try:
        assert wait_for(lambda: _pgid_from(pidfile) is not None), "the long command never started"
        pgid = _pgid_from(pidfile)
        assert processes_with_pgid(pgid), "the command's group is not running"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err, pgid


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_apply_interrupted_during_long_exec(tmp_path, sig):
    pidfile = tmp_path / "pid"
    store = tmp_path / "store"
    manifest = _manifest(tmp_path, pidfile)
    code, out, err, pgid = _interrupt(tmp_path, pidfile, sig, "apply", str(manifest), CCM_SESSION_STORE=str(store))
    assert code == EXPECTED[sig], out + err
    assert f"interrupted by {sig.name}" in err
    assert wait_for(lambda: processes_with_pgid(pgid) == [], timeout=5), "a process of the group survived"
    assert (tmp_path / "before.txt").read_text() == "before\n"
    assert not (tmp_path / "after.txt").exists(), "no later resource may start"
    # the partial summary is printed
    assert "Total Resources: 2" in out and "Failed Resources: 1" in out, out
    # the session store is readable and records the interrupted resource as failed
    events = [json.loads(p.read_text()) for p in sorted(store.iterdir()) if p.suffix == ".event"]
    failed = [e for e in events if e.get("failed")]
    assert len(failed) == 1 and failed[0]["name"] == "long"
    assert any(f"interrupted by {sig.name}" in e for e in failed[0]["error"])
    leftovers = [p.name for p in tmp_path.rglob("*") if ".tmp" in p.name or p.name.startswith(".ccm")]
    assert leftovers == []
    report = ccm("session", "report", "--json", cwd=tmp_path, env=ccm_env(tmp_path, CCM_SESSION_STORE=str(store)))
    summary = json.loads(report.stdout)["summary"]
    assert summary["failed_resources"] == 1 and summary["total_resources"] == 2


def test_apply_interrupted_json_reports_partial_run(tmp_path):
    pidfile = tmp_path / "pid"
    manifest = _manifest(tmp_path, pidfile)
    code, out, err, _pgid = _interrupt(tmp_path, pidfile, signal.SIGTERM, "apply", "--json", str(manifest))
    assert code == 143
    doc = json.loads(out)
    assert doc["summary"]["total_resources"] == 2 and doc["summary"]["failed_resources"] == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_ensure_interrupted_during_long_exec(tmp_path, sig):
    pidfile = tmp_path / "pid"
    code, out, err, pgid = _interrupt(tmp_path, pidfile, sig, "ensure", "exec",
                                      f"/bin/sh -c 'sleep 300 & echo $$ > {pidfile}; wait'")
    assert code == EXPECTED[sig], out + err
    assert f"interrupted by {sig.name}" in err
    assert wait_for(lambda: processes_with_pgid(pgid) == [], timeout=5)


def test_command_ignoring_sigterm_is_killed(tmp_path):
    pidfile = tmp_path / "pid"
    code, out, err, pgid = _interrupt(tmp_path, pidfile, signal.SIGTERM, "ensure", "exec",
                                      f"/bin/sh -c 'trap \"\" TERM; echo $$ > {pidfile}; while :; do sleep 1; done'")
    assert code == 143
    assert wait_for(lambda: processes_with_pgid(pgid) == [], timeout=5)
