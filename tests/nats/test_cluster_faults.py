"""A real 3-node JetStream cluster whose node leading the meta group and every stream in use
is SIGKILLed (once mid-run, then five times right before an obj:// apply), and
single-server faults.

``make test-nats-cluster`` (marker ``nats_cluster``, excluded from the default run).
"""
from __future__ import annotations

import json
import os
import socket
import threading
import time

import pytest
from natsfixture import Cluster, Server, run_js, write_context
from tests.kit import ROOT, ccm
from test_nats_features import GROUP, OWNER, bundle, kv_put, obj_put

pytestmark = pytest.mark.nats_cluster


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(str(tmp_path / "cluster"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def env_for(tmp_path, urls):
    cfg = str(tmp_path / "config")
    write_context(cfg, "CCM", {"url": urls})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "CCM_"))}
    env["XDG_CONFIG_HOME"] = cfg
    env["CCM_CACHE_DIR"] = str(tmp_path / "cache")
    if "CCM_LOCK_DIR" in os.environ:  # the test's private lock dir (tests/conftest.py), never /run/ccm
        env["CCM_LOCK_DIR"] = os.environ["CCM_LOCK_DIR"]
    return env


SITE = """
data:
  greeting: default
ccm:
  resources:
    - file:
        - {out}/out-{{{{ Facts.n }}}}.txt:
            ensure: present
            owner: {owner}
            group: {group}
            mode: "0644"
            content: "{{{{ kvGet('CFG', 'motd') }}}}/{{{{ Data.greeting }}}}"
            register_when_stable:
              - cluster: prod
                service: web
                protocol: http
                address: "10.2.0.{{{{ Facts.n }}}}"
                port: 8080
                priority: 1
                ttl: 1h
"""


def stream_leader(urls, stream):
    async def fn(nc):
        return await nc.jetstream().stream_info(stream)
    return run_js(urls, fn).cluster


def test_sigkill_of_the_meta_and_stream_leader_mid_run(tmp_path, cluster):
    env = env_for(tmp_path, cluster.urls)
    r = ccm("registration", "init", "--replicas", "3", "--max-age", "1h", env=env, cwd=ROOT)
    assert r.returncode == 0 and "replicas=3" in r.stdout, r.stderr
    out = tmp_path / "out"
    out.mkdir()
    kv_put(cluster.urls, "CFG", {"motd": "hello", "data": "data:\n  greeting: from-kv\n"}, replicas=3)
    obj_put(cluster.urls, "MANIFESTS", "site.tar.gz",
            bundle({"manifest.yaml": SITE.format(out=out, owner=OWNER, group=GROUP)}), replicas=3)

    def apply(n):
        started = time.monotonic()
        r = ccm("apply", "--no-report", "obj://MANIFESTS/site.tar.gz", "--hiera", "kv://CFG/data",
                "--publish-registrations", "jetstream", "--fact", f"n={n}", env=env, cwd=tmp_path, timeout=120)
        return r, time.monotonic() - started

    results = {}
    for n in range(1, 5):
        results[n] = apply(n)
    victim = cluster.meta_leader()                         # the node leading meta and every stream used
    cluster.lead_streams_from(victim, ["KV_CFG", "OBJ_MANIFESTS", "REGISTRATION"])
    victim.kill()                                          # SIGKILL, by PID
    for n in range(5, 11):
        results[n] = apply(n)
    survivors = ",".join(s.url for s in cluster.servers if s is not victim)
    survivor_env = env_for(tmp_path / "survivors", survivors)
    doc = json.loads(ccm("registration", "query", "prod", "http", "web", "--json", env=survivor_env, cwd=ROOT).stdout)
    assert sorted(d["address"] for d in doc) == sorted(f"10.2.0.{n}" for n in range(1, 11))

    victim.start()                                         # same port and store: it must catch up
    for n in range(11, 15):
        results[n] = apply(n)
    failures = {n: r.stdout + r.stderr for n, (r, _) in results.items() if r.returncode != 0}
    assert not failures
    for n in range(1, 15):
        assert (out / f"out-{n}.txt").read_text() == "hello/from-kv"
    deadline = time.monotonic() + 30
    caught_up = False
    while time.monotonic() < deadline and not caught_up:
        info = stream_leader(cluster.urls, "REGISTRATION")
        peers = {p.name: p for p in (info.replicas or [])}
        peer = peers.get(victim.name)
        caught_up = info.leader == victim.name or (peer is not None and peer.current and not peer.lag)
        time.sleep(0.3)
    assert caught_up, "restarted node did not catch up"
    doc = json.loads(ccm("registration", "query", "--json", env=env_for(tmp_path / "victim", victim.url),
                         cwd=ROOT).stdout)
    assert len(doc) == 14
    slowest = max(t for _, t in results.values())
    assert slowest < 40


KILLS = 5
STREAMS = ["KV_CFG", "OBJ_BUNDLES", "REGISTRATION"]


def _fresh_pyz():
    """``CCM_TEST_PYZ``, else ``dist/ccm.pyz`` when it is newer than every source file."""
    from natsfixture import ROOT

    pyz = os.environ.get("CCM_TEST_PYZ") or os.path.join(ROOT, "dist", "ccm.pyz")
    if not os.path.isfile(pyz):
        return ""
    if not os.environ.get("CCM_TEST_PYZ"):
        newest = max(os.path.getmtime(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(ROOT, "ccm"))
                     for f in fs if f.endswith(".py"))
        if os.path.getmtime(pyz) < newest:
            return ""
    return pyz


def _appliers():
    """How the applies run: this interpreter, and alternately the shipped ccm.pyz on the
    system python3 when a fresh one exists (Python 3.11+ there, where asyncio's and
    concurrent.futures' TimeoutError are one class: the case that failed in week one)."""
    pyz = _fresh_pyz()
    if pyz and os.access("/usr/bin/python3", os.X_OK):
        return [None, ["/usr/bin/python3", pyz]]
    return [None]


def test_obj_apply_survives_sigkill_of_the_meta_and_stream_leader_repeatedly(tmp_path, cluster):
    """Issue 25: the node leading the meta group and every stream in use (KV_CFG, OBJ_BUNDLES,
    REGISTRATION) is SIGKILLed, and the apply starts at once, during the elections: object
    gets retry through them as KV gets do. Five times, each time the new leader."""
    import subprocess

    env = env_for(tmp_path, cluster.urls)
    r = ccm("registration", "init", "--replicas", "3", "--max-age", "1h", env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    out.mkdir()
    kv_put(cluster.urls, "CFG", {"motd": "hello", "hiera": "data:\n  greeting: from-kv\n"}, replicas=3)
    obj_put(cluster.urls, "BUNDLES", "site.tar.gz",
            bundle({"manifest.yaml": SITE.format(out=out, owner=OWNER, group=GROUP)}), replicas=3)
    appliers = _appliers()
    results = []
    for n in range(1, KILLS + 1):
        victim = cluster.meta_leader()
        cluster.lead_streams_from(victim, STREAMS)
        assert cluster.meta_leader() is victim
        victim.kill()                                           # SIGKILL, by PID
        args = ["apply", "obj://BUNDLES/site.tar.gz", "--hiera", "kv://CFG/hiera",
                "--publish-registrations", "jetstream", "--fact", f"n={n}"]
        command = appliers[n % len(appliers)]
        started = time.monotonic()
        if command is None:
            r = ccm(*args, env=env, cwd=tmp_path, timeout=120)
        else:
            r = subprocess.run(command + args, env=env, cwd=str(tmp_path), capture_output=True, text=True,
                               timeout=120, stdin=subprocess.DEVNULL)
        results.append((n, victim.name, command is not None, r.returncode, time.monotonic() - started,
                        r.stdout + r.stderr))
        assert r.returncode == 0, results[-1]
        assert (out / f"out-{n}.txt").read_text() == "hello/from-kv"
        victim.start()                                          # same port and store: it catches up
        cluster.wait_current(victim, STREAMS)
    assert len({name for _, name, *_ in results}) >= 2   # leadership really moved between kills
    doc = json.loads(ccm("registration", "query", "prod", "http", "web", "--json", env=env, cwd=ROOT).stdout)
    assert sorted(d["address"] for d in doc) == sorted(f"10.2.0.{n}" for n in range(1, KILLS + 1))
    for n, name, pyz, rc, spent, _ in results:
        print(f"kill {n}: {name} (meta and {len(STREAMS)} stream leader), apply {'pyz' if pyz else 'venv'} "
              f"rc={rc} in {spent:.1f}s")
    assert max(spent for *_, spent, _ in results) < 40


def test_single_server_stopped_and_restarted_mid_run(tmp_path):
    server = Server(str(tmp_path / "nats")).start()
    try:
        env = env_for(tmp_path, server.url)
        env["CCM_NATS_RETRY_SECONDS"] = "3"
        kv_put(server.url, "APP", {"k": "v"})
        flags = tmp_path / "flags"
        flags.mkdir()

        def controller():
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if (flags / "stop-now").exists() and not (flags / "stopped").exists():
                    server.stop()
                    (flags / "stopped").touch()
                if (flags / "start-now").exists() and not (flags / "started").exists():
                    server.start()
                    (flags / "started").touch()
                    return
                time.sleep(0.05)

        thread = threading.Thread(target=controller, daemon=True)
        thread.start()

        def wait(flag, done):
            return f"/bin/sh -c 'touch {flags}/{flag}-now; while [ ! -e {flags}/{done} ]; do sleep 0.05; done; sleep 1.5'"
        files = {n: tmp_path / f"{n}.txt" for n in ("before", "during", "plain", "after")}

        def f(name, content):
            return (f"        - {files[name]}:\n            ensure: present\n            owner: {OWNER}\n"
                    f"            group: {GROUP}\n            mode: \"0644\"\n            content: \"{content}\"\n")
        manifest = tmp_path / "m.yaml"
        manifest.write_text(
            "ccm:\n  resources:\n    - file:\n" + f("before", "{{ kvGet('APP', 'k') }}")
            + f"    - exec:\n        - stop:\n            command: \"{wait('stop', 'stopped')}\"\n"
            + "    - file:\n" + f("during", "{{ kvGet('APP', 'k') }}") + f("plain", "plain")
            + f"    - exec:\n        - start:\n            command: \"{wait('start', 'started')}\"\n"
            + "    - file:\n" + f("after", "{{ kvGet('APP', 'k') }}"))
        r = ccm("apply", str(manifest), env=env, cwd=tmp_path, timeout=60)
        thread.join(5)
        assert files["before"].read_text() == "v" and files["after"].read_text() == "v"
        assert files["plain"].read_text() == "plain" and not files["during"].exists()
        assert r.returncode == 1
        text = r.stdout + r.stderr
        assert "Failed Resources: 1" in text, text
        assert 'could not get key "k" from bucket "APP": NATS not connected: ' in text, text
        assert f"servers {server.url}, context 'CCM'" in text
    finally:
        server.stop()


def test_mute_server_gives_bounded_failures_in_an_apply(tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        env = env_for(tmp_path, f"nats://127.0.0.1:{sock.getsockname()[1]}")
        ok = tmp_path / "ok.txt"
        manifest = tmp_path / "m.yaml"
        manifest.write_text(
            f"ccm:\n  resources:\n    - file:\n        - {tmp_path}/bad.txt:\n            ensure: present\n"
            f"            owner: {OWNER}\n            group: {GROUP}\n            mode: \"0644\"\n"
            "            content: \"{{ registrations('a', 'b', 'c', '*') }}\"\n"
            f"        - {ok}:\n            ensure: present\n            owner: {OWNER}\n            group: {GROUP}\n"
            "            mode: \"0644\"\n            content: fine\n")
        started = time.monotonic()
        r = ccm("apply", str(manifest), env=env, cwd=tmp_path, timeout=60)
        assert time.monotonic() - started < 10
        assert r.returncode == 1 and ok.read_text() == "fine"
        assert "timeout" in r.stdout + r.stderr
    finally:
        sock.close()
