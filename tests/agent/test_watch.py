"""The drift watch (issue 29) with a real agent process and real inotify."""
from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from tests import twins
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
    agent = AgentProcess(path, str(tmp_path), port, env=env, preexec_fn=preexec, wrap=wrap)
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


def test_watch_is_off_by_default(tmp_path, out):
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


def test_a_repair_refreshes_its_subscribers(tmp_path, out):
    conf, marker = out / "svc.conf", out / "restarts"
    agent = _start(tmp_path, [_file(conf), _file(out / "other.conf"), {"exec": {
        "name": "restart", "command": f"/bin/sh -c 'echo r >> {marker}'", "refreshonly": True,
        "subscribe": [f"file#{conf}"]}}])
    try:
        _armed(agent, 2)
        first = marker.read_text().count("r") if marker.exists() else 0
        conf.write_text("edited\n")
        _repaired(agent)
        wait_for(lambda: marker.exists() and marker.read_text().count("r") == first + 1, 5, what="refresh ran")
        st = agent.wait_status(lambda s: s["manifests"][0]["watch"]["last_drift"] is not None)
        assert st["manifests"][0]["summary"]["total_resources"] == 2   # the file and its subscriber
    finally:
        agent.stop()


def test_monitor_only_child_manifest_reports_drift_and_repairs_nothing(tmp_path, out):
    watched = out / "watched.conf"
    watched.write_text("managed\n")
    os.chmod(watched, 0o644)
    child = write_yaml(str(tmp_path / "child.yaml"), {"ccm": {"resources": [_file(watched)]}})
    agent = _start(tmp_path, [{"apply": {"name": child, "noop": True}}])
    try:
        _armed(agent)
        watched.write_text("hand edited\n")
        line = agent.wait_log("Drift detected, not repaired (noop)")
        assert str(watched) in line
        time.sleep(0.5)
        assert watched.read_text() == "hand edited\n"
        st = agent.status()["manifests"][0]
        assert st["watch"]["last_drift"]["repaired"] is False
        assert st["watch"]["last_drift"]["path"] == str(watched)
        assert 'choria_ccm_agent_drift_total{manifest="%s",type="apply"} 1' % st["source"] in agent.get("/metrics")
    finally:
        agent.stop()


def test_a_resource_fought_over_backs_off_and_says_so_once_per_step(tmp_path, out):
    target = out / "fought.conf"
    agent = _start(tmp_path, [_file(target)])
    try:
        _armed(agent)
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:     # another process rewriting it again and again
            target.write_text("theirs\n")
            time.sleep(0.05)
        text = agent.wait_log("Drift repairs backed off")
        assert text.count("Drift repairs backed off") <= 2 and "step=1" in text
        assert text.count("Drift repaired") <= 7          # 5 a minute, then one per back-off step
        wait_for(lambda: target.read_text() == "managed\n", 10, what="repaired after the back-off")
    finally:
        agent.stop()


def test_a_package_database_change_rechecks_package_resources(tmp_path, out):
    db = tmp_path / "dpkg"
    db.mkdir()
    (db / "status").write_text("Package: x\n")
    agent = _start(tmp_path, [_file(out / "a.conf"), {"package": {"name": "ccm-watch-no-such-package",
                                                                   "ensure": "absent"}}],
                   env={"CCM_WATCH_PACKAGE_DB": str(db / "status")})
    try:
        st = _armed(agent)
        applies = st["manifests"][0]["applies"]
        tmp = db / "status-new"
        tmp.write_text("Package: y\n")
        os.rename(tmp, db / "status")          # how dpkg replaces it
        st = agent.wait_status(lambda s: s["manifests"][0]["applies"] == applies + 1)
        assert st["manifests"][0]["summary"]["total_resources"] == 1    # the package only
    finally:
        agent.stop()


def _userns_ok():
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-Ur", "sh", "-c", "echo 5 > /proc/sys/user/max_inotify_watches"],
                           capture_output=True)
    return probe.returncode == 0


def test_watch_exhaustion_is_said_once_and_never_fails_the_apply(tmp_path, out):
    if not _userns_ok():
        pytest.fail("needs unshare -Ur and a writable /proc/sys/user/max_inotify_watches in a user namespace")
    dirs = [out / f"d{i}" for i in range(8)]
    for d in dirs:
        d.mkdir()
    wrap = ["unshare", "-Ur", "sh", "-c", 'echo 4 > /proc/sys/user/max_inotify_watches && exec "$@"', "sh"]
    agent = _start(tmp_path, [_file(d / "f.conf") for d in dirs], wrap=wrap)
    try:
        st = agent.wait_status(lambda s: s["manifests"] and s["manifests"][0]["applies"] >= 1
                               and s["manifests"][0]["watch"].get("exhausted"))
        m = st["manifests"][0]
        assert m["outcome"] == "changed" and m["summary"]["failed_resources"] == 0
        assert all((d / "f.conf").exists() for d in dirs)
        line = agent.wait_log("Out of inotify watches")
        assert "fs.inotify.max_user_watches" in line and "watched=" in line
        assert 0 < m["watch"]["paths_watched"] < 8
        (dirs[0] / "f.conf").write_text("edited\n")        # what is watched is still repaired
        _repaired(agent)
        write_yaml(str(tmp_path / "manifest.yaml"),          # a new manifest: a full apply, watches re-armed
                   {"ccm": {"resources": [_file(d / "f.conf", content="v2\n") for d in dirs]}})
        wait_for(lambda: (dirs[-1] / "f.conf").read_text() == "v2\n", 10, what="second full apply")
        agent.wait_status(lambda s: s["manifests"][0]["applies"] >= m["applies"] + 2)
        assert agent.output().count("Out of inotify watches") == 1
    finally:
        agent.stop()


def test_config_validation_of_watch_keys(tmp_path):
    from ccm.agent.config import ConfigError, parse_config
    from ccm.agent.manifest_set import SetError, parse_set

    cfg = parse_config({"manifests": ["/m.yaml"], "watch": True, "service_poll": "3s"}, "c.yaml")
    assert cfg.watch is True and cfg.service_poll == 3.0
    assert parse_config({"manifests": ["/m.yaml"]}, "c.yaml").watch is False
    with pytest.raises(ConfigError, match=r"c.yaml: watch: must be true or false, got 'yes'"):
        parse_config({"manifests": ["/m.yaml"], "watch": "yes"}, "c.yaml")
    with pytest.raises(ConfigError, match=r"c.yaml: service_poll: must be a duration"):
        parse_config({"manifests": ["/m.yaml"], "service_poll": "often"}, "c.yaml")
    members = parse_set(b"manifests: [{name: a, source: /a.yaml, watch: false}, {name: b, source: /b.yaml}]", "s")
    assert [m.watch for m in members] == [False, None]
    with pytest.raises(SetError, match=r"manifests\[0\].watch: must be true or false"):
        parse_set(b"manifests: [{name: a, source: /a.yaml, watch: 1}]", "s")


def test_exec_creates_and_scaffold_targets_are_watched(tmp_path, out):
    created, src, target = out / "built", tmp_path / "tpl", out / "site"
    src.mkdir()
    (src / "index.html").write_text("hello\n")
    agent = _start(tmp_path, [
        {"exec": {"name": "build", "command": f"/bin/sh -c 'echo b > {created}'", "creates": str(created)}},
        {"scaffold": {"name": str(target), "ensure": "present", "source": str(src), "engine": "go"}}])
    try:
        _armed(agent, 3)
        created.unlink()
        wait_for(lambda: created.exists(), 5, what="exec re-ran for its creates path")
        (target / "index.html").write_text("defaced\n")
        wait_for(lambda: (target / "index.html").read_text() == "hello\n", 5, what="scaffold re-rendered")
        assert agent.output().count("Drift repaired") >= 2
    finally:
        agent.stop()


def test_health_check_only_child_reports_drift_and_repairs_nothing(tmp_path, out):
    watched = out / "watched.conf"
    watched.write_text("managed\n")
    child = write_yaml(str(tmp_path / "child.yaml"), {"ccm": {"resources": [_file(watched)]}})
    agent = _start(tmp_path, [{"apply": {"name": child, "health_check_only": True}}])
    try:
        _armed(agent)
        watched.write_text("hand edited\n")
        line = agent.wait_log("Drift detected, not repaired (health-check only)")
        assert str(watched) in line
        time.sleep(0.3)
        assert watched.read_text() == "hand edited\n"
    finally:
        agent.stop()


def test_services_are_rechecked_every_service_poll_in_their_own_run(tmp_path, out):
    agent = _start(tmp_path, [_file(out / "a.conf"), {"service": {"name": "ccm-watch-no-such-service",
                                                                   "ensure": "stopped"}}],
                   extra_cfg={"service_poll": "1s"})
    try:
        _armed(agent)
        time.sleep(2.6)
        text = agent.output()
        # a service that cannot be checked here fails every poll: each poll's summary is said (a stable one
        # would say nothing), and a poll runs the service alone
        polls = text.count("Session: resources=1,")
        assert 2 <= polls <= 4, text
    finally:
        agent.stop()


def test_a_manifest_set_member_overrides_the_global_watch(tmp_path, out):
    watched, plain = out / "watched.conf", out / "plain.conf"
    m1 = write_yaml(str(tmp_path / "m1.yaml"), {"ccm": {"resources": [_file(watched)]}})
    m2 = write_yaml(str(tmp_path / "m2.yaml"), {"ccm": {"resources": [_file(plain)]}})
    mset = write_yaml(str(tmp_path / "set.yaml"), {"manifests": [{"name": "on", "source": m1},
                                                               {"name": "off", "source": m2, "watch": False}]})
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {
        "interval": "1h", "watch": True, "manifest_set": {"source": mset, "interval": "1h"},
        "monitor_port": port, "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path), port)
    try:
        st = agent.wait_status(lambda s: len(s["manifests"]) == 2 and all(m["applies"] for m in s["manifests"])
                               and any(m["watch"].get("paths_watched") for m in s["manifests"]))
        by_name = {m["name"]: m["watch"] for m in st["manifests"]}
        assert by_name["on"]["watching"] is True and by_name["off"] == {"watching": False}
        plain.write_text("edited\n")
        watched.write_text("edited\n")
        wait_for(lambda: watched.read_text() == "managed\n", 5, what="the watched member repaired")
        time.sleep(0.5)
        assert plain.read_text() == "edited\n"
    finally:
        agent.stop()


def _drift_twin(tmp_path, subset):
    out = tmp_path / "out"
    out.mkdir()
    conf, other, marker = out / "app.conf", out / "other.conf", out / "restarts"
    agent = _start(tmp_path, [_file(conf), _file(other, mode="0600"), {"exec": {
        "name": "restart", "command": f"/bin/sh -c 'echo r >> {marker}'", "refreshonly": True,
        "subscribe": [f"file#{conf}"]}}], env={"CCM_WATCH_SUBSET": subset})
    try:
        _armed(agent, 2)
        conf.write_text("edited\n")
        os.chmod(conf, 0o666)
        _repaired(agent)
        wait_for(lambda: marker.exists(), 5, what="refresh")
        time.sleep(0.4)
        st = agent.status()["manifests"][0]
    finally:
        agent.stop()
    return twins.tree_state(out), st["summary"]["total_resources"], st["watch"]["last_drift"]["resource"].replace(str(out), "OUT")


def test_a_subset_repair_leaves_the_host_as_a_whole_manifest_re_apply_does(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fast, fast_total, fast_ref = _drift_twin(tmp_path / "a", "1")
    plain, plain_total, plain_ref = _drift_twin(tmp_path / "b", "0")
    assert fast == plain and fast["restarts"][0] == "r\nr\n"   # the first apply and the repair each refreshed
    assert fast_ref == plain_ref
    assert (fast_total, plain_total) == (2, 3)                 # the subset: the file and its subscriber


def _steady_runs_then_drift(tmp_path, keep):
    out = tmp_path / "out"
    out.mkdir()
    conf, marker = out / "app.conf", out / "restarts"
    agent = _start(tmp_path, [_file(conf), {"exec": {
        "name": "restart", "command": f"/bin/sh -c 'echo r >> {marker}'", "refreshonly": True,
        "subscribe": [f"file#{conf}"]}}], env={"CCM_WATCH_KEEP": keep}, extra_cfg={"interval": "1s"})
    try:   # a scheduled apply every second (the floor is scaled for tests): watches kept from the second on
        agent.wait_status(lambda s: s["manifests"] and s["manifests"][0]["applies"] >= 4
                          and s["manifests"][0]["watch"].get("paths_watched", 0) >= 1)
        conf.write_text("edited\n")
        _repaired(agent)
        wait_for(lambda: marker.exists() and marker.read_text() == "r\nr\n", 5, what="the refresh of the repair")
        st = agent.status()["manifests"][0]["watch"]
    finally:
        agent.stop()
    return twins.tree_state(out), st["paths_watched"], st["last_drift"]["repaired"]


def test_kept_watches_repair_as_watches_placed_after_every_run(tmp_path):
    """Steady scheduled applies keep the placed watches (CCM_WATCH_KEEP, default) instead of
    planning and placing them again (``CCM_WATCH_KEEP=0``, the plain twin): a drift after
    them is repaired, and refreshed, the same way."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert _steady_runs_then_drift(tmp_path / "a", "1") == _steady_runs_then_drift(tmp_path / "b", "0")
