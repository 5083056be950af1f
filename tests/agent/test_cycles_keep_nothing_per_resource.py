"""What an agent keeps of its runs between cycles: nothing per resource. A worker's
cycles go through ``ccm.agent.runner`` (``run_manager``, ``apply``, ``forget_run``), as
``Worker.run`` does; each cycle applies a real manifest of real files."""
from __future__ import annotations

import gc
import os
import threading

from ccm.agent import runner
from ccm.log import UserLogger
from ccm.metrics import Metrics
from ccm.session import MemoryStore

from .helpers import file_manifest, write_yaml

RESOURCES = 300


def cycle(manager, path):
    result = runner.apply(manager, path, external_data={"cycle": "x"}, health_check_only=False,
                          stop=threading.Event())
    summary = result.summary
    del result
    runner.forget_run(manager)
    gc.collect()
    return summary


def test_cycles_keep_nothing_per_resource(tmp_path, monkeypatch):
    monkeypatch.setenv("CCM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CCM_LOCK_DIR", str(tmp_path / "locks"))
    out = tmp_path / "out"
    out.mkdir()
    path = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(out), count=RESOURCES))
    log = UserLogger()
    log.quiet = True
    metrics = Metrics()
    root = runner.root_manager(environ=dict(os.environ), metrics=metrics, user_log=log, nats_context="CCM")
    root.set_facts({})
    manager = runner.run_manager(root, log)
    assert manager.session is root.session and manager.session.keep_events is False

    first = cycle(manager, path)
    assert first.changed_resources == RESOURCES and first.failed_resources == 0
    counts = []
    for _ in range(7):
        summary = cycle(manager, path)
        assert summary.stable_resources == RESOURCES and summary.failed_resources == 0
        assert manager.session.all_events() == []   # the finished run's records are gone
        counts.append(len(gc.get_objects()))
    # one object kept per resource and cycle would add 6 * 300 here; the cycles after the
    # second (plan cache warm) must not grow the heap at all beyond noise
    assert counts[-1] - counts[0] < 50, counts
    # the metrics hold one series per resource and outcome, not one per cycle
    assert metrics.value("resource_state_total", type="file", name=str(out / "f0.txt")) == 8.0
    series = sum(len(v) for v in metrics._values.values())
    cycle(manager, path)
    assert sum(len(v) for v in metrics._values.values()) == series


def test_forget_run_leaves_a_directory_store_alone(tmp_path, monkeypatch):
    """A shell session's store (``CCM_SESSION_STORE``) is never the agent's to remove."""
    from ccm.session.directory import DirectoryStore

    monkeypatch.setenv("CCM_LOCK_DIR", str(tmp_path / "locks"))
    store_dir = tmp_path / "session"
    manager = runner.root_manager(environ={}, metrics=None, user_log=UserLogger(), nats_context="CCM")
    manager.session = DirectoryStore(str(store_dir))
    manager.session.start_session("m")
    runner.forget_run(manager)
    assert store_dir.is_dir() and len(manager.session.all_events()) == 1
    memory = runner.root_manager(environ={}, metrics=None, user_log=UserLogger(), nats_context="CCM")
    assert isinstance(memory.session, MemoryStore)
    memory.session.start_session("m")
    runner.forget_run(memory)
    assert memory.session.all_events() == []
