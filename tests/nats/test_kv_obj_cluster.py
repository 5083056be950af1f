"""``ccm kv``/``ccm obj`` create replicated buckets on a real 3-node JetStream cluster.

``make test-nats-cluster`` (marker ``nats_cluster``, excluded from the default run).
"""
from __future__ import annotations

import pytest
from natsfixture import Cluster, run_js
from tests.kit import ROOT, ccm
from test_cluster_faults import env_for

pytestmark = pytest.mark.nats_cluster


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(str(tmp_path / "cluster"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def test_put_creates_buckets_with_the_replicas_asked_for(cluster, tmp_path):
    cluster.wait_meta_leader()
    env = env_for(tmp_path, cluster.urls)
    value = tmp_path / "v.txt"
    value.write_text("replicated")
    r = ccm("kv", "put", "CFG", "motd", str(value), "--replicas", "3", env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("created KV bucket CFG with 3 replicas\n")
    r = ccm("obj", "put", "SITES", "v", str(value), "--replicas", "3", env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr

    async def replicas(nc):
        js = nc.jetstream()
        return [(await js.stream_info(s)).config.num_replicas for s in ("KV_CFG", "OBJ_SITES")]

    assert run_js(cluster.urls, replicas) == [3, 3]
    assert ccm("kv", "get", "CFG", "motd", env=env, cwd=ROOT).stdout == "replicated"
