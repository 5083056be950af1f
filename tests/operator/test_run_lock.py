"""Concurrent runs are serialised by one host-wide run lock (real processes)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from tests.kit import ccm, spawn
from tests.operator.helpers import ccm_env, wait_for


def _slow_manifest(tmp_path, started, seconds=30):
    path = tmp_path / "slow.yaml"
    path.write_text(f"""\
ccm:
  resources:
    - exec:
        name: slow
        command: "/bin/sh -c 'touch {started}; sleep {seconds}'"
""")
    return path


def _quick_manifest(tmp_path):
    path = tmp_path / "quick.yaml"
    path.write_text(f"""\
ccm:
  resources:
    - file:
        name: {tmp_path}/quick.txt
        ensure: present
        content: "quick\\n"
        owner: root
        group: root
        mode: "0644"
""")
    return path


def test_second_run_exits_8_naming_the_holder_and_changes_nothing(tmp_path):
    started = tmp_path / "started"
    holder = spawn("apply", str(_slow_manifest(tmp_path, started)), cwd=tmp_path, env=ccm_env(tmp_path))
    try:
        assert wait_for(started.exists)
        t0 = time.monotonic()
        r = ccm("apply", str(_quick_manifest(tmp_path)), cwd=tmp_path, env=ccm_env(tmp_path))
        assert time.monotonic() - t0 < 15
        assert r.returncode == 8, r.stdout + r.stderr
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, r.stderr
        assert f"pid {holder.pid}" in lines[0] and str(tmp_path / "slow.yaml") in lines[0]
        assert re.search(r"since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", lines[0])
        assert not (tmp_path / "quick.txt").exists()
        lock_file = tmp_path / "locks" / "ccm-run.lock"
        assert lock_file.stat().st_mode & 0o777 == 0o600
        # --wait-lock too short: still 8; with --detailed-exit-codes too (8 is no changed/failed bit)
        r = ccm("apply", "--wait-lock", "0.5s", str(_quick_manifest(tmp_path)), cwd=tmp_path, env=ccm_env(tmp_path))
        assert r.returncode == 8 and "waited 0.5s" in r.stderr
        r = ccm("apply", "--detailed-exit-codes", str(_quick_manifest(tmp_path)), cwd=tmp_path, env=ccm_env(tmp_path))
        assert r.returncode == 8 and r.returncode & 2 == 0 and r.returncode & 4 == 0, r.stderr
        assert not (tmp_path / "quick.txt").exists()
    finally:
        holder.kill()
        holder.wait()
    # the holder died (kill -9): its stale lock never blocks
    r = ccm("apply", str(_quick_manifest(tmp_path)), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "quick.txt").read_text() == "quick\n"


def test_wait_lock_waits_for_the_holder(tmp_path):
    started = tmp_path / "started"
    holder = spawn("apply", str(_slow_manifest(tmp_path, started, seconds=2)), cwd=tmp_path, env=ccm_env(tmp_path))
    try:
        assert wait_for(started.exists)
        r = ccm("apply", "--wait-lock", "1m", str(_quick_manifest(tmp_path)), cwd=tmp_path, env=ccm_env(tmp_path))
        assert r.returncode == 0, r.stderr
        assert holder.wait(30) == 0
        assert (tmp_path / "quick.txt").exists()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_bad_wait_lock_is_a_usage_error(tmp_path):
    r = ccm("apply", "--wait-lock", "soon", str(_quick_manifest(tmp_path)), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and "--wait-lock" in r.stderr


def test_lock_exit_code_is_clear_of_the_detailed_bits_and_documented(tmp_path):
    from ccm.locks import EXIT_LOCKED

    assert EXIT_LOCKED not in (0, 1) and EXIT_LOCKED & 2 == 0 and EXIT_LOCKED & 4 == 0 and EXIT_LOCKED < 128
    r = ccm("apply", "--help", cwd=tmp_path, env=ccm_env(tmp_path))
    assert re.search(rf"^\s+{EXIT_LOCKED}\s+skipped: another ccm run holds the host-wide run lock", r.stdout,
                     re.M), r.stdout
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    assert f"| {EXIT_LOCKED} | skipped: another ccm run holds the host-wide run lock" in readme
    assert "neither waits for nor takes the run lock" in readme


def test_render_does_not_need_the_lock(tmp_path):
    started = tmp_path / "started"
    holder = spawn("apply", str(_slow_manifest(tmp_path, started)), cwd=tmp_path, env=ccm_env(tmp_path))
    try:
        assert wait_for(started.exists)
        r = ccm("apply", "--render", str(_quick_manifest(tmp_path)), cwd=tmp_path, env=ccm_env(tmp_path))
        assert r.returncode == 0 and "quick.txt" in r.stdout
    finally:
        holder.kill()
        holder.wait()


# --- lost refresh with a shared session store (issue 15) ----------------------------------

PAIR_SCRIPT = r"""
import subprocess, sys
procs = [subprocess.Popen([sys.executable, "-m", "ccm", "apply", sys.argv[1], "--wait-lock", "2m"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
codes = [p.wait() for p in procs]
errs = [p.stderr.read().decode() for p in procs]
sys.exit(0 if codes == [0, 0] else ("codes %s: %s" % (codes, errs)))
"""


def _pair_manifest(d):
    path = d / "m.yaml"
    path.write_text(f"""\
ccm:
  resources:
    - file:
        name: {d}/app.conf
        ensure: present
        content: "v=2\\n"
        owner: root
        group: root
        mode: "0644"
    - exec:
        name: reload
        command: "/bin/sh -c 'echo x >> {d}/reloads'"
        refreshonly: true
        subscribe: ["file#{d}/app.conf"]
    - exec:
        name: init
        command: "/bin/sh -c 'echo x >> {d}/inits; touch {d}/initialised'"
        creates: {d}/initialised
""")
    return path


def _concurrent_pairs(tmp_path, pairs):
    lost_refresh = double_run = 0
    for i in range(pairs):
        d = tmp_path / f"pair{i}"
        d.mkdir()
        (d / "app.conf").write_text("v=1\n")
        manifest = _pair_manifest(d)
        env = ccm_env(tmp_path, CCM_SESSION_STORE=str(tmp_path / "shared-store"))
        r = subprocess.run([sys.executable, "-c", PAIR_SCRIPT, str(manifest)], env=env, cwd=str(d),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        reloads = (d / "reloads").read_text().count("x") if (d / "reloads").exists() else 0
        inits = (d / "inits").read_text().count("x")
        lost_refresh += reloads != 1
        double_run += inits != 1
    return lost_refresh, double_run


def test_concurrent_pairs_on_a_shared_store_lose_no_refresh(tmp_path):
    assert _concurrent_pairs(tmp_path, 3) == (0, 0)


@pytest.mark.reliability
def test_many_concurrent_pairs_on_a_shared_store(tmp_path):
    pairs = int(os.environ.get("CCM_CONCURRENT_PAIRS", "30"))
    assert _concurrent_pairs(tmp_path, pairs) == (0, 0)


def test_noop_neither_blocks_on_nor_takes_the_run_lock(tmp_path):
    """A noop changes nothing: next to a cron run it reports, exit 0, and leaves the lock alone."""
    started = tmp_path / "started"
    holder = spawn("apply", str(_slow_manifest(tmp_path, started)), cwd=tmp_path, env=ccm_env(tmp_path))
    try:
        assert wait_for(started.exists)
        t0 = time.monotonic()
        r = ccm("apply", "--noop", str(_quick_manifest(tmp_path)), cwd=tmp_path, env=ccm_env(tmp_path))
        assert time.monotonic() - t0 < 15
        assert r.returncode == 0, r.stdout + r.stderr
        assert "would create" in r.stdout + r.stderr
        assert not (tmp_path / "quick.txt").exists()
    finally:
        holder.kill()
        holder.wait()
    fresh = tmp_path / "fresh-locks"
    r = ccm("apply", "--noop", str(_quick_manifest(tmp_path)), cwd=tmp_path,
            env=ccm_env(tmp_path, CCM_LOCK_DIR=str(fresh)))
    assert r.returncode == 0, r.stderr
    assert not (fresh / "ccm-run.lock").exists()
