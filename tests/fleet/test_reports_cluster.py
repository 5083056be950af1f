"""Reports into a real 3-node JetStream cluster (R3 stream) with the stream leader SIGKILLed while
1,000 hosts publish: no report lost (queued ones included), none duplicated.

``make test-nats-cluster`` (marker ``nats_cluster``). Every host is the real publishing code
(``loadgen``: ``ReportPublisher.finished`` with its own on-disk queue, a fresh connection a
run, as a cron run has); a host whose report cannot be delivered within its budget queues
it, and its next run delivers it first.
"""
from __future__ import annotations

import json
import os
import threading
import time

import pytest
from fleetreports import make_env
from loadgen import Fleet, hostname
from natsfixture import run_js
from tests.kit import ROOT, ccm
import test_cluster_faults  # noqa: E402  (its 3-node cluster fixture, reused)

from ccm.fleet import STREAM
from ccm.fleet.subjects import instance_token

pytestmark = pytest.mark.nats_cluster
cluster = test_cluster_faults.cluster

HOSTS = int(os.environ.get("CCM_REPORT_CLUSTER_HOSTS", "1000"))


def all_messages(urls):
    """(subject, Nats-Msg-Id, document) of every message in the stream, from an ordered consumer."""
    async def fn(nc):
        import asyncio

        import nats.js.api as api

        js = nc.jetstream()
        total = (await js.stream_info(STREAM)).state.messages
        out = []
        done = asyncio.get_running_loop().create_future()

        async def cb(msg):
            out.append((msg.subject, (msg.headers or {}).get("Nats-Msg-Id", ""), json.loads(msg.data)))
            if len(out) >= total and not done.done():
                done.set_result(None)
        sub = await js.subscribe("choria.ccm.reports.>", stream=STREAM, ordered_consumer=True, cb=cb,
                                 deliver_policy=api.DeliverPolicy.ALL)
        if total:
            await asyncio.wait_for(done, 120)
        await sub.unsubscribe()
        return out
    return run_js(urls, fn, timeout=180)


def stream_leader(urls):
    async def fn(nc):
        return (await nc.jetstream().stream_info(STREAM)).cluster.leader
    return run_js(urls, fn)


def test_a_node_killed_while_1000_hosts_publish_loses_and_duplicates_nothing(tmp_path, cluster):
    env = make_env(tmp_path, cluster.urls, str(tmp_path / "state"))
    r = ccm("report", "init", "--replicas", "3", env=env, cwd=ROOT)
    assert r.returncode == 0 and "replicas=3" in r.stdout, r.stderr
    fleet = Fleet(HOSTS, 1, failing=HOSTS // 20, state_root=str(tmp_path / "hosts"), environ=env)
    victim = next(s for s in cluster.servers if s.name == stream_leader(cluster.urls))

    def kill_mid_round() -> None:
        while len(fleet.deliveries) < HOSTS // 3:
            time.sleep(0.05)
        victim.kill()                                     # SIGKILL, by PID
    killer = threading.Thread(target=kill_mid_round, daemon=True)
    killer.start()
    first = fleet.run(range(HOSTS), workers=8)
    killer.join(30)
    assert victim.proc is not None and victim.proc.poll() is not None, "the leader was not killed mid-round"
    round1 = {i: ds[0] for i, ds in fleet.deliveries.items()}
    queued_hosts = [i for i, d in round1.items() if not d.delivered]
    fleet.deliveries.clear()
    second = fleet.run(range(HOSTS), workers=8)            # every host's next run: its queue first
    assert all(d.delivered for ds in fleet.deliveries.values() for d in ds), fleet.warnings[-5:]
    assert all(len(fleet.queue_of(i)) == 0 for i in range(HOSTS))

    survivors = ",".join(s.url for s in cluster.servers if s is not victim)
    msgs = all_messages(survivors)
    by_host = {}
    for subject, msg_id, doc in msgs:
        by_host.setdefault(doc["hostname"], []).append(msg_id)
    duplicates = sum(len(ids) - len(set(ids)) for ids in by_host.values())
    assert sorted(by_host) == sorted(hostname(i) for i in range(HOSTS))
    assert all(len(set(ids)) == 2 for ids in by_host.values()), "every run's report, queued ones included"
    assert duplicates == 0

    out = ccm("report", "fleet", "--json", env=make_env(tmp_path / "survivors", survivors, str(tmp_path / "s2")),
              cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    names = [h["hostname"] for h in doc["hosts"]]
    assert len(names) == len(set(names)) == HOSTS
    assert doc["summary"]["failed"] == HOSTS // 20 and doc["summary"]["malformed"] == 0
    latest = {h["instance"]: h["manifests"][0]["start"] for h in doc["hosts"]}
    newest = {}
    for subject, _id, d in msgs:
        newest[d["instance"]] = max(newest.get(d["instance"], ""), d["start"])
    assert latest == newest and set(latest) == {instance_token(hostname(i)) for i in range(HOSTS)}
    print(f"\n{HOSTS} hosts: round 1 {first:.1f} s with the leader killed ({len(queued_hosts)} reports queued), "
          f"round 2 {second:.1f} s; {len(msgs)} messages, {duplicates} duplicates")
