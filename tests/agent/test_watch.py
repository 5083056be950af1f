"""The drift watch (issue 29) with a real agent process and real inotify."""
from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from tests.agent.helpers import GROUP, USER, AgentProcess, free_port, wait_for, write_yaml


def _file(path, content="managed\n", mode="0644", **extra):
    return {"file": {"name": str(path), "ensure": "present", "content": content, "owner": USER, "group": GROUP,
                     "mode": mode, **extra}}


def _start(tmp_path, resources, *, watch=True, env=None, extra_cfg=None, preexec=None, wrap=None):
    manifest = write_yaml(str(tmp_path / "manifest.yaml"), {"ccm": {"resources": resources}})
    port = free_port()
    cfg = {"interval": "1h", "manifests": [manifest], "monitor_port": port, "cache_dir": str(tmp_path / "cache"),
           **({"watch": True} if watch else {}), **(extra_cfg or {})}
    path = write_yaml(str(tmp_path / "config.yaml"), cfg)
    agent = AgentProcess(path, str(tmp_path), port, env=env, preexec_fn=preexec)
    return agent


def _armed(agent, paths=1):
    return agent.wait_status(lambda s: s["manifests"] and s["manifests"][0]["applies"] >= 1
                             and s["manifests"][0]["watch"].get("paths_watched", 0) >= paths)


def _repaired(agent, count=1, timeout=10.0):
    return agent.wait_log("Drift repaired", timeout=timeout, count=count)


@pytest.fixture
def out(tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    return d


def test_an_edited_file_is_repaired_within_a_second_and_only_it_runs(tmp_path, out):
    a, b = out / "a.conf", out / "b.conf"
    agent = _start(tmp_path, [_file(a), _file(b)])
    try:
        _armed(agent, 2)
        applies = agent.status()["manifests"][0]["applies"]
        started = time.monotonic()
        a.write_text("hand edited\n")
        _repaired(agent)
        wait_for(lambda: a.read_text() == "managed\n", 5, what="repair")
        assert time.monotonic() - started < 1.5
        st = agent.wait_status(lambda s: s["manifests"][0]["watch"]["last_drift"] is not None)
        m = st["manifests"][0]
        assert m["applies"] == applies + 1
        assert m["summary"]["total_resources"] == 1          # b was not re-run
        drift = m["watch"]["last_drift"]
        assert drift["path"] == str(a) and drift["resource"] == f"file#{a}" and drift["repaired"] is True
        assert m["watch"]["watching"] is True and m["watch"]["paths_watched"] == 2
        text = agent.get("/metrics")
        assert 'choria_ccm_agent_drift_total{manifest="%s",type="file"} 1' % m["source"] in text
        assert 'choria_ccm_agent_watched_paths{manifest="%s"} 2' % m["source"] in text
        # its own write did not trigger it again
        time.sleep(0.6)
        assert agent.output().count("Drift repaired") == 1
        assert agent.status()["manifests"][0]["applies"] == applies + 1
    finally:
        agent.stop()


def test_chmod_chown_delete_and_rename_over_are_repaired(tmp_path, out):
    target = out / "app.conf"
    agent = _start(tmp_path, [_file(target)])
    try:
        _armed(agent)
        os.chmod(target, 0o600)
        _repaired(agent, 1)
        wait_for(lambda: (os.stat(target).st_mode & 0o777) == 0o644, 5, what="mode put back")
        os.chown(target, 65534, 65534)
        _repaired(agent, 2)
        wait_for(lambda: os.stat(target).st_uid == os.getuid(), 5, what="owner put back")
        target.unlink()
        _repaired(agent, 3)
        wait_for(lambda: target.exists() and target.read_text() == "managed\n", 5, what="recreated")
        tmp = out / ".app.conf.swp"
        tmp.write_text("editor save\n")
        os.rename(tmp, target)                   # how editors save
        _repaired(agent, 4)
        wait_for(lambda: target.read_text() == "managed\n", 5, what="rename-over repaired")
    finally:
        agent.stop()


def test_a_removed_directory_tree_is_recreated(tmp_path, out):
    tree = out / "tree"
    files = [tree / f"f{i}.txt" for i in range(20)]
    agent = _start(tmp_path, [{"file": {"name": str(tree), "ensure": "directory", "owner": USER, "group": GROUP,
                                        "mode": "0755"}}] + [_file(f) for f in files])
    try:
        _armed(agent, 21)
        shutil.rmtree(tree)
        wait_for(lambda: all(f.exists() for f in files), 5, what="tree recreated")
        assert agent.wait_log("Drift repaired")
    finally:
        agent.stop()


def test_an_absent_path_that_reappears_is_removed(tmp_path, out):
    gone = out / "sub" / "must-not-exist"
    agent = _start(tmp_path, [{"file": {"name": str(gone), "ensure": "absent"}}])
    try:
        _armed(agent)
        gone.parent.mkdir()
        gone.write_text("x")
        wait_for(lambda: not gone.exists(), 5, what="removed again")
    finally:
        agent.stop()


def test_watch_off_by_default_and_per_member_override(tmp_path, out):
    target = out / "app.conf"
    agent = _start(tmp_path, [_file(target)], watch=False)
    try:
        st = agent.wait_status(lambda s: s["manifests"] and s["manifests"][0]["applies"] >= 1)
        assert st["manifests"][0]["watch"] == {"watching": False}
        target.write_text("edited\n")
        time.sleep(0.8)
        assert target.read_text() == "edited\n"
        assert "Drift" not in agent.output()
    finally:
        agent.stop()
