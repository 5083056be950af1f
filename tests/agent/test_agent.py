"""The scheduler in-process, with real manifests, files and HTTP servers and the
test time scale (every fixed period x0.01)."""
from __future__ import annotations

import io
import os
import time

import pytest

from ccm.agent.agent import Agent
from ccm.agent.config import parse_config
from ccm.agent.log import LogfmtLogger

from .helpers import GROUP, USER, CondServer, bundle, file_manifest, free_port, wait_for, write_yaml


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setenv("CCM_AGENT_TEST_TIMESCALE", "0.01")


class Run:
    def __init__(self, tmp_path, doc):
        doc.setdefault("cache_dir", str(tmp_path / "cache"))
        self.cfg = parse_config(doc, str(tmp_path / "config.yaml"))
        self.stream = io.StringIO()
        self.log = LogfmtLogger(stream=self.stream, colour=False)
        self.log.records = []
        self.agent = Agent(self.cfg, self.log)

    def __enter__(self):
        self.agent.start()
        return self

    def __exit__(self, *exc):
        assert self.agent.shutdown(timeout=10)

    def messages(self, text=None):
        return [r for r in list(self.log.records) if text is None or text in r["message"]]

    def worker(self, ident):
        return next(w for w in self.agent.workers() if w.ident == ident)


def sh_exec(command):
    return {"exec": {"name": f"/bin/sh -c '{command}'"}}


@pytest.mark.agent_slow
def test_one_apply_loop_never_runs_two_manifests_at_once(tmp_path):
    trace = tmp_path / "trace"
    paths = []
    for name in ("a", "b"):
        doc = {"ccm": {"resources": [sh_exec(f"echo start {name} >> {trace}; sleep 0.2; echo end {name} >> {trace}")]}}
        paths.append(write_yaml(str(tmp_path / f"{name}.yaml"), doc))
    with Run(tmp_path, {"interval": "0.5s", "manifests": paths}) as r:
        wait_for(lambda: trace.exists() and trace.read_text().count("end") >= 6, 20, what="six applies")
        assert r.agent.scheduled_runs >= 1
    lines = trace.read_text().split("\n")[:-1]
    lines = lines[: len(lines) - len(lines) % 2]
    for start, end in zip(lines[::2], lines[1::2]):
        assert start.startswith("start") and end == "end" + start[len("start"):], lines


@pytest.mark.agent_slow
def test_interval_is_honoured(tmp_path):
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    with Run(tmp_path, {"interval": "0.4s", "manifests": [m]}) as r:
        time.sleep(2.2)
        runs = r.agent.scheduled_runs
    assert 3 <= runs <= 6, runs   # every 0.4 s, not every (scaled) 5 minutes


def test_local_change_triggers_a_priority_apply(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    m = str(tmp_path / "m.yaml")
    write_yaml(m, file_manifest(str(out), content="one"))
    with Run(tmp_path, {"interval": "1h", "manifests": [m]}) as r:
        wait_for(lambda: (out / "f0.txt").exists(), 10, what="first apply")
        write_yaml(m, file_manifest(str(out), content="two"))
        wait_for(lambda: (out / "f0.txt").read_text() == "two", 10, what="re-apply on change")
        # the file is written before the worker records the apply's outcome
        wait_for(lambda: r.worker(m).status.applies == 2, 10, what="the second apply recorded")
        st = r.worker(m).status
        assert st.applies == 2 and st.outcome == "changed" and st.summary["changed_resources"] == 1


def test_critical_health_check_queues_a_remediation_after_all_checks(tmp_path):
    target = tmp_path / "needed"
    doc = {"ccm": {"resources": [{"file": {
        "name": str(target), "ensure": "present", "content": "x", "owner": USER, "group": GROUP, "mode": "0644",
        "health_checks": [{"command": f"/bin/sh -c 'test -e {target} || exit 2'", "name": "needed"}]}}]}}
    m = write_yaml(str(tmp_path / "m.yaml"), doc)
    other = write_yaml(str(tmp_path / "other.yaml"), file_manifest(str(tmp_path), prefix="o"))
    port = free_port()
    with Run(tmp_path, {"interval": "1h", "health_check_interval": "0.3s", "manifests": [m, other],
                        "monitor_port": port}) as r:
        wait_for(lambda: target.exists(), 10, what="first apply")
        wait_for(lambda: r.agent.health_runs >= 1, 10, what="a health run")
        target.unlink()
        wait_for(lambda: target.exists(), 10, what="remediation apply")
        value = r.agent.metrics.value("agent_healthcheck_remediations", manifest=m)
        assert value >= 1
        assert r.agent.metrics.value("agent_healthcheck", manifests=f"{m},{other}")[1] >= 1
    recs = [(x["message"], dict(x["attrs"]).get("manifest")) for x in r.log.records]
    crit = next(i for i, (msg, _) in enumerate(recs) if msg.startswith("Healthcheck reported critical"))
    # the other manifest's check ran before the remediation apply started
    after = [msg for msg, _ in recs[crit:]]
    first_apply = next(i for i, msg in enumerate(after) if msg == "Executing manifest")
    assert "Executing manifest health checks" in after[:first_apply]


def test_a_never_working_source_does_not_block_the_others(tmp_path):
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    dead = "http://127.0.0.1:1/never.tar.gz"
    port = free_port()
    with Run(tmp_path, {"interval": "1h", "manifests": [dead, m], "monitor_port": port}) as r:
        wait_for(lambda: (tmp_path / "f0.txt").exists(), 10, what="local apply")
        wait_for(lambda: r.agent.metrics.value("agent_manifest_fetch_error", manifest=dead) >= 2, 10,
                 what="fetch errors counted")
        st = r.worker(dead).status
        assert st.last_apply is None and "could not fetch" in st.last_error
        # the file is written before the worker records the apply's outcome
        wait_for(lambda: r.worker(m).status.outcome is not None, 10, what="the local apply recorded")
        assert r.worker(m).status.outcome == "changed"


def test_http_bundle_is_fetched_validated_and_swapped(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    srv = CondServer("etag")
    try:
        manifest = lambda text: write_yaml(str(tmp_path / "tmp.yaml"), file_manifest(str(out), content=text))  # noqa
        srv.set("/web.tar.gz", bundle({"manifest.yaml": open(manifest("v1")).read()}))
        url = srv.url("/web.tar.gz")
        port = free_port()
        with Run(tmp_path, {"interval": "1h", "manifests": [url], "monitor_port": port}) as r:
            wait_for(lambda: (out / "f0.txt").exists() and (out / "f0.txt").read_text() == "v1", 10, what="v1")
            srv.set("/web.tar.gz", bundle({"manifest.yaml": "ccm: {resources: [{file: {}}]}\n"}))   # does not validate
            wait_for(lambda: r.agent.metrics.value("agent_manifest_fetch_error", manifest=url) >= 1, 10,
                     what="rejected bundle")
            st = r.worker(url).status
            assert "does not validate" in st.last_error and st.applies == 1
            fetches = r.agent.metrics.value("agent_manifest_fetch", manifest=url)
            wait_for(lambda: r.agent.metrics.value("agent_manifest_fetch", manifest=url) > fetches, 10,
                     what="a rejected bundle is fetched again")
            assert r.worker(url).status.applies == 1 and (out / "f0.txt").read_text() == "v1"
            srv.set("/web.tar.gz", bundle({"manifest.yaml": open(manifest("v2")).read()}))
            wait_for(lambda: (out / "f0.txt").read_text() == "v2", 10, what="v2")
            assert r.agent.metrics.value("agent_manifest_fetch", manifest=url) >= 3   # the bad one is retried
            before = len(srv.log)
            wait_for(lambda: len(srv.log) >= before + 2, 10, what="more checks")
            assert all(e["status"] == 304 and e["bytes"] == 0 for e in srv.log[before:])
    finally:
        srv.close()


def test_external_data_each_cycle_with_last_good_fallback(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    data = tmp_path / "data.yaml"
    doc = file_manifest(str(out), content="{{ Data.word }}")
    doc["data"] = {"word": "manifest"}
    m = write_yaml(str(tmp_path / "m.yaml"), doc)
    port = free_port()
    with Run(tmp_path, {"interval": "0.4s", "manifests": [m], "external_data_url": str(data),
                        "monitor_port": port}) as r:
        # no external data yet: nothing is applied, and nothing hangs
        wait_for(lambda: r.messages("No external data resolved yet"), 10, what="no-data message")
        assert not (out / "f0.txt").exists()
        write_yaml(str(data), {"data": {"word": "external"}})
        wait_for(lambda: (out / "f0.txt").exists() and (out / "f0.txt").read_text() == "external", 10, what="data")
        write_yaml(str(data), {"data": {"word": "changed"}})
        wait_for(lambda: (out / "f0.txt").read_text() == "changed", 10, what="data re-resolved")
        data.write_text("data: [broken\n")
        wait_for(lambda: r.messages("Using previously resolved external data"), 10, what="fallback")
        runs = r.worker(m).status.applies
        wait_for(lambda: r.worker(m).status.applies > runs, 10, what="applies continue on last good data")
        assert (out / "f0.txt").read_text() == "changed"
        assert r.agent.metrics.value("agent_data_resolve_error", url=str(data)) >= 10


@pytest.mark.agent_slow
def test_facts_refreshed_at_most_every_two_minutes(tmp_path):
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    port = free_port()
    with Run(tmp_path, {"interval": "0.3s", "manifests": [m], "monitor_port": port}) as r:
        time.sleep(2.0)   # floor is 1.2 s at this scale
        gathers = r.agent.metrics.value("agent_facts_resolve")[1]
        runs = r.agent.scheduled_runs
    assert runs >= 5 and gathers <= 2, (runs, gathers)


def test_manifest_set_diffs_by_name_every_pass(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    ms = {n: write_yaml(str(tmp_path / f"{n}.yaml"), file_manifest(str(out), prefix=n)) for n in ("a", "b", "b2", "c")}
    set_file = str(tmp_path / "set" / "manifests.yaml")
    os.makedirs(os.path.dirname(set_file))
    write_yaml(set_file, {"manifests": [{"name": "a", "source": ms["a"]}, {"name": "b", "source": ms["b"]}]})
    with Run(tmp_path, {"interval": "1h", "manifest_set": {"source": set_file, "interval": "1h"}}) as r:
        wait_for(lambda: (out / "a0.txt").exists() and (out / "b0.txt").exists(), 10, what="a and b")
        wait_for(lambda: r.agent.members["b"].status.applies == 1, 10, what="b applied")
        old_b = r.agent.members["b"]
        write_yaml(set_file, {"manifests": [{"name": "b", "source": ms["b2"]}, {"name": "c", "source": ms["c"]}]})
        r.agent.set_pass()
        assert sorted(r.agent.members) == ["b", "c"]
        assert old_b.stopped and r.agent.members["b"] is not old_b
        wait_for(lambda: (out / "b20.txt").exists() and (out / "c0.txt").exists(), 10, what="b2 and c")
        wait_for(lambda: r.agent.members["b"].status.applies == 2, 10, what="status kept across the replace")
        # a broken set keeps the running one
        with open(set_file, "w") as fh:
            fh.write("manifests: [{name: c}]\n")
        r.agent.set_pass()
        assert sorted(r.agent.members) == ["b", "c"]
        st = r.agent.status()
        assert "source: is required" in st["manifest_set"]["last_error"] and st["manifest_set"]["mode"] == "path"
        # a pass re-creates what is missing even though the set did not change
        write_yaml(set_file, {"manifests": [{"name": "c", "source": ms["c"]}]})
        r.agent.set_pass()
        assert sorted(r.agent.members) == ["c"] and r.agent.status()["manifest_set"]["last_error"] is None
        del r.agent.members["c"]
        r.agent.set_pass()
        assert sorted(r.agent.members) == ["c"]


def test_reload_resolves_external_data_now(tmp_path):
    data = write_yaml(str(tmp_path / "data.yaml"), {"data": {"word": "one"}})
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    with Run(tmp_path, {"interval": "1h", "manifests": [m], "external_data_url": data}) as r:
        wait_for(lambda: r.worker(m).status.applies == 1, 10, what="the first apply (it resolves data too)")
        assert r.agent.data == {"word": "one"}
        write_yaml(data, {"data": {"word": "two"}})
        time.sleep(0.3)
        assert r.agent.data == {"word": "one"}   # the next cycle is an hour away
        r.agent.reload()
        wait_for(lambda: r.agent.data == {"word": "two"}, 10, what="data re-resolved on reload")


def test_removed_member_stops_and_status_says_why(tmp_path):
    a = write_yaml(str(tmp_path / "a.yaml"), file_manifest(str(tmp_path), prefix="a"))
    set_file = write_yaml(str(tmp_path / "set.yaml"), {"manifests": [{"name": "a", "source": a}]})
    with Run(tmp_path, {"interval": "1h", "manifest_set": {"source": set_file, "interval": "1h"}}) as r:
        wait_for(lambda: r.agent.members.get("a") and r.agent.members["a"].status.applies == 1, 10, what="a")
        gone = r.agent.members["a"]
        write_yaml(set_file, {"manifests": []})
        r.agent.set_pass()
        assert r.agent.members == {} and gone.stopped
        assert gone.status.state == "stopped" and gone.status.stopped_reason == "removed from the manifest set"
        assert r.agent.status()["manifests"] == []


def test_unforced_applies_respect_the_30s_floor(tmp_path):
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    with Run(tmp_path, {"interval": "1h", "manifests": [m]}) as r:
        w = r.worker(m)
        wait_for(lambda: w.status.applies == 1, 10, what="first apply")
        with r.agent.apply_lock:
            assert w.run(force=True) is not None     # a full apply starts the floor
            assert w.run() is None                   # right after it: skipped
            assert w.run(force=True) is not None     # priority applies are never skipped
            assert w.run(health_check_only=True) is not None
        skipped = r.messages("Skipping apply due to minimum configured apply interval")
        assert skipped and dict(skipped[-1]["attrs"])["min"] == "300ms"


def test_scheduled_runs_never_suppress_each_other(tmp_path):
    """The floor is for triggered applies only: a scheduled run right after another runs
    (it used to be skipped, so a 30 s interval applied every 60 s)."""
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    with Run(tmp_path, {"interval": "1h", "manifests": [m]}) as r:
        w = r.worker(m)
        wait_for(lambda: w.status.applies == 1, 10, what="first apply")
        with r.agent.apply_lock:
            time.sleep(0.3)                         # the floor (300 ms at this scale) since the triggered one
            assert w.run() is not None
            assert w.run() is not None              # 0 s after a scheduled run: it runs
        assert not r.messages("Skipping apply due to minimum configured apply interval")


@pytest.mark.agent_slow
def test_an_interval_equal_to_the_floor_applies_every_interval(tmp_path):
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    with Run(tmp_path, {"interval": "0.3s", "manifests": [m]}) as r:   # the floor: 30 s x 0.01
        time.sleep(3.2)
        runs, applies = r.agent.scheduled_runs, r.worker(m).status.applies
    assert not r.messages("Skipping apply"), [x["attrs"] for x in r.messages("Skipping apply")]
    assert runs >= 6 and applies >= runs, (runs, applies)


def test_applies_take_the_host_run_lock(tmp_path):
    from ccm.locks import acquire_run_lock

    out = tmp_path / "out"
    out.mkdir()
    m = str(tmp_path / "m.yaml")
    write_yaml(m, file_manifest(str(out), content="one"))
    held = acquire_run_lock("cron run")
    try:
        with Run(tmp_path, {"interval": "1h", "manifests": [m]}) as r:
            wait_for(lambda: r.messages("Skipping apply: another ccm run holds the run lock"), 10, what="lock wait")
            assert not (out / "f0.txt").exists() and "holds the run lock" in r.worker(m).status.last_error
            held.release()
            held = None
            write_yaml(m, file_manifest(str(out), content="two"))
            wait_for(lambda: (out / "f0.txt").exists() and (out / "f0.txt").read_text() == "two", 10,
                     what="apply once the lock is free")
    finally:
        if held is not None:
            held.release()
