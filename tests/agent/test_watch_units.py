"""The drift watch's pure parts and its watcher thread on real inotify (no agent)."""
from __future__ import annotations

import os
import threading
import time

from ccm.agent.watch import inotify, targets
from ccm.agent.watch.backoff import Backoff
from ccm.agent.watch.watcher import ManifestWatch


class Log:
    def __init__(self):
        self.lines = []

    def _add(self, level, message, **kv):
        self.lines.append((level, message, kv))

    def debug(self, m, **kv):
        self._add("debug", m, **kv)

    def info(self, m, **kv):
        self._add("info", m, **kv)

    def warn(self, m, **kv):
        self._add("warn", m, **kv)

    def error(self, m, **kv):
        self._add("error", m, **kv)


def _repair(b, ref, now):
    ok = b.admit(ref, now)[0]
    if ok:
        b.record(ref, now)
    return ok


def test_backoff_five_a_minute_then_doubling_waits_each_step_once():
    b = Backoff(limit=5, base=2.0)
    assert [b.admit("poll", t)[0] for t in range(20)] == [True] * 20   # re-applies that repaired nothing
    assert [_repair(b, "r", t) for t in (0, 1, 2, 3, 4)] == [True] * 5
    ok, not_before, step = b.admit("r", 5)
    assert (ok, not_before, step) == (False, 7.0, 1)
    assert b.admit("r", 6) == (False, 7.0, None)          # reported once per step
    assert _repair(b, "r", 7) is True                      # the repair after the wait
    assert b.admit("r", 8) == (False, 12.0, 2)             # drifting again: twice the wait
    assert _repair(b, "r", 12) is True
    assert _repair(b, "other", 12) is True                 # per resource
    assert _repair(b, "r", 200) is True and b.step("r") == 0   # a quiet minute starts over


def test_targets_assign_nested_children_to_their_apply_resource():
    seen = [targets.Seen("file", "/a/x", {}, False, changed=True),
            targets.Seen("file", "/c/child", {}, True),
            targets.Seen("apply", "/m/child.yaml", {}, False),
            targets.Seen("exec", "make", {"creates": "/b/out"}, False),
            targets.Seen("package", "zsh", {}, False), targets.Seen("service", "sshd", {}, False)]
    top = {"file#/a/x", "apply#/m/child.yaml", "exec#make", "package#zsh", "service#sshd"}
    p = targets.plan(seen, top)
    assert [(t.path, t.ref, t.noop) for t in p.targets] == [
        ("/a/x", "file#/a/x", False), ("/c/child", "apply#/m/child.yaml", True), ("/b/out", "exec#make", False)]
    assert p.noop_refs == {"apply#/m/child.yaml"} and p.packages == ["package#zsh"] and p.services == ["service#sshd"]


def test_spot_is_the_nearest_real_directory_and_never_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(str(tmp_path / "real"), str(tmp_path / "link"))
    t = targets.Target(str(tmp_path / "link" / "f"), "file#x", False)
    spot = targets.spot_of(t)
    assert spot == targets.Spot(str(tmp_path), "link")      # the symlink is watched as an entry only
    deep = targets.Target(str(tmp_path / "no" / "such" / "f"), "file#y", False)
    assert targets.spot_of(deep) == targets.Spot(str(tmp_path), "no")


def test_inotify_never_watches_through_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(str(tmp_path / "real"), str(tmp_path / "link"))
    ino = inotify.Inotify()
    try:
        ino.add_watch(str(tmp_path / "real"))
        try:
            ino.add_watch(str(tmp_path / "link"))
        except OSError as exc:
            assert exc.errno == 20   # ENOTDIR: IN_DONT_FOLLOW | IN_ONLYDIR
        else:
            raise AssertionError("a symlink was followed")
    finally:
        ino.close()


def _watch(**kw):
    got = threading.Event()
    w = ManifestWatch(log=Log(), request=got.set, service_poll=kw.pop("service_poll", 3600.0), **kw)
    w.start()
    return w, got


def test_events_during_an_apply_are_its_own_and_never_trigger(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    w, got = _watch()
    try:
        plan = targets.Plan([targets.Target(str(f), "file#f", False)], [], [], set())
        w.arm(plan)
        w.suspend()
        f.write_text("our own write")                 # the apply writing
        w.arm(plan)                                  # drained before watching again
        assert not got.wait(0.5)
        f.write_text("theirs")
        assert got.wait(2.0)
        assert w.take_ready() == {"file#f": str(f)}
    finally:
        w.stop()


def test_a_burst_of_changes_is_one_request_after_the_debounce(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    w, got = _watch()
    try:
        w.arm(targets.Plan([targets.Target(str(f), "file#f", False)], [], [], set()))
        started = time.monotonic()
        for i in range(5):
            f.write_text(str(i))
            time.sleep(0.02)
        assert got.wait(2.0)
        assert time.monotonic() - started >= 0.15
        assert w.take_ready() == {"file#f": str(f)} and w.take_ready() == {}
    finally:
        w.stop()


def test_services_are_polled_every_service_poll(tmp_path):
    w, got = _watch(service_poll=0.2)
    try:
        w.arm(targets.Plan([], [], ["service#a", "service#b"], set()))
        assert got.wait(2.0)
        assert w.take_ready() == {"service#a": "", "service#b": ""}
    finally:
        w.stop()


def test_select_resources_keeps_order_subscribers_and_requirements(tmp_path):
    from ccm.manager import build

    from tests.agent.helpers import GROUP, USER

    m = tmp_path / "m.yaml"
    own = {"owner": USER, "group": GROUP, "mode": "0644"}
    import yaml
    yaml.safe_dump({"ccm": {"resources": [
        {"file": {"name": str(tmp_path / "base"), "ensure": "directory", **own}},
        {"file": {"name": str(tmp_path / "other"), "ensure": "present", "content": "o", **own}},
        {"file": {"name": str(tmp_path / "conf"), "ensure": "present", "content": "c", **own,
                  "require": [f"file#{tmp_path / 'base'}"]}},
        {"exec": {"name": "reload", "command": "/bin/true", "refreshonly": True,
                  "subscribe": [f"file#{tmp_path / 'conf'}"]}},
    ]}}, open(m, "w"))
    from ccm.apply.engine import select_resources

    manager = build(facts={}, environ={})
    manifest = manager.load(str(m))
    chosen = select_resources(manifest, [f"file#{tmp_path / 'conf'}"])
    assert [e.props.resource_id for e in chosen] == [f"file#{tmp_path / 'base'}", f"file#{tmp_path / 'conf'}",
                                                     "exec#reload"]


def test_a_re_apply_that_could_not_run_is_tried_again(tmp_path):
    w, got = _watch()
    try:
        w.arm(targets.Plan([], [], [], set()))
        w.retry({"file#f": "/x/f"}, delay=0.2)
        started = time.monotonic()
        assert got.wait(2.0)
        assert time.monotonic() - started >= 0.2
        assert w.take_ready() == {"file#f": "/x/f"}
    finally:
        w.stop()
