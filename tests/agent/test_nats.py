"""obj:// manifests, kv:// external data and registration publishing through the NATS
layer, against a real nats-server (``.venv/bin/nats-server``)."""
from __future__ import annotations

import json
import os
import sys

import pytest

pytest.importorskip("ccm.nats.connection")
NATS_TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "nats")
if NATS_TESTS not in sys.path:
    sys.path.insert(0, NATS_TESTS)

from natsfixture import Server, Sniffer, run_js, write_context  # noqa: E402
from tests.kit import ROOT, ccm  # noqa: E402

from .helpers import GROUP, USER, AgentProcess, bundle, file_manifest, free_port, wait_for, write_yaml  # noqa: E402

pytestmark = pytest.mark.nats


@pytest.fixture
def nats(tmp_path):
    server = Server(str(tmp_path / "nats")).start()
    home = str(tmp_path / "home")
    write_context(home, "CCM", {"url": server.url})
    env = {k: v for k, v in os.environ.items() if not k.startswith("NATS_")}
    env["XDG_CONFIG_HOME"] = home
    yield server, env
    server.stop()


def obj_put(server, name, data):
    async def fn(nc):
        import nats.js.api as api

        js = nc.jetstream()
        store = await js.create_object_store("MANIFESTS", config=api.ObjectStoreConfig(bucket="MANIFESTS"))
        await store.put(name, data)
    run_js(server.url, fn)


def obj_delete(server, name):
    async def fn(nc):
        store = await nc.jetstream().object_store("MANIFESTS")
        await store.delete(name)
    run_js(server.url, fn)


def kv_put(server, key, value):
    async def fn(nc):
        kv = await nc.jetstream().create_key_value(bucket="DATA")
        await kv.put(key, value.encode())
    run_js(server.url, fn)


def test_obj_source_fetches_updates_and_stops_on_delete(tmp_path, nats):
    server, env = nats
    out = tmp_path / "out"
    out.mkdir()

    def version(text):
        return bundle({"site/manifest.yaml": open(write_yaml(str(tmp_path / "v.yaml"),
                                                             file_manifest(str(out), content=text))).read()})
    obj_put(server, "web.tar.gz", version("v1"))
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "1h", "manifests": ["obj://MANIFESTS/web.tar.gz"],
                                                     "monitor_port": port, "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path), port, env=env)
    try:
        wait_for(lambda: (out / "f0.txt").exists() and (out / "f0.txt").read_text() == "v1", 30, what="v1")
        assert os.path.isdir(tmp_path / "cache" / "MANIFESTS_web")
        obj_put(server, "web.tar.gz", version("v2"))
        wait_for(lambda: (out / "f0.txt").read_text() == "v2", 30, what="v2 (object updated)")
        obj_delete(server, "web.tar.gz")
        st = agent.wait_status(lambda s: s["manifests"][0]["state"] == "stopped", 30)
        assert st["manifests"][0]["stopped_reason"] == "file deleted from bucket"
        assert "file deleted from bucket" in agent.output()
        metrics = agent.get("/metrics")
        assert 'choria_ccm_agent_manifest_fetch_count{manifest="obj://MANIFESTS/web.tar.gz"} 2' in metrics
    finally:
        assert agent.stop() == 0


def test_kv_external_data_and_registration_publishing(tmp_path, nats):
    server, env = nats
    assert ccm("registration", "init", env=env, cwd=ROOT).returncode == 0
    kv_put(server, "common", json.dumps({"data": {"word": "from-kv"}}))
    out = tmp_path / "out"
    out.mkdir()
    m = write_yaml(str(tmp_path / "m.yaml"), {"data": {"word": "default"}, "ccm": {"resources": [
        {"file": {"name": str(out / "f.txt"), "ensure": "present", "content": "{{ Data.word }}", "owner": USER,
                  "group": GROUP, "mode": "0644",
                  "register_when_stable": [{"cluster": "prod", "service": "web", "protocol": "http",
                                            "address": "10.0.0.9", "port": 80, "priority": 1}]}}]}})
    cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "1h", "manifests": [m],
                                                     "external_data_url": "kv://DATA/common",
                                                     "registration": "jetstream", "cache_dir": str(tmp_path / "c")})
    agent = AgentProcess(cfg, str(tmp_path), env=env)
    try:
        try:
            wait_for(lambda: (out / "f.txt").exists(), 30, what="applied with kv data")
        except AssertionError:
            raise AssertionError(agent.output()) from None
        assert (out / "f.txt").read_text() == "from-kv"
        agent.wait_log("Session:")

        def registered():
            r = ccm("registration", "query", "--json", env=env, cwd=ROOT)
            return r.returncode == 0 and r.stdout.strip().startswith("[") and json.loads(r.stdout)
        doc = wait_for(registered, 30, step=0.5, what="registration published")
        assert doc[0]["address"] == "10.0.0.9" and doc[0]["service"] == "web"
    finally:
        assert agent.stop() == 0


def test_agent_never_publishes_a_sensitive_value(tmp_path, nats):
    server, env = nats
    canary = "agent-canary-7Qx2"
    assert ccm("registration", "init", env=env, cwd=ROOT).returncode == 0
    m = tmp_path / "m.yaml"
    m.write_text(f"""data:
  # @sensitive
  token: "{canary}"
ccm:
  resources:
    - exec:
        - clean:
            command: /bin/true
            register_when_stable:
              - {{cluster: prod, service: web, protocol: http, address: 10.0.0.9, port: 80, priority: 1}}
        - leaky:
            command: /bin/true
            register_when_stable:
              - {{cluster: prod, service: api, protocol: http, address: 10.0.0.8, port: 80, priority: 1,
                  annotations: {{auth: "{{{{ Data.token }}}}"}}}}
        - fails:
            command: "/bin/sh -c 'echo token={{{{ Data.token }}}} >&2; exit 3'"
""")
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {"interval": "1h", "manifests": [str(m)], "monitor_port": port,
                                                     "registration": "nats", "cache_dir": str(tmp_path / "c")})
    with Sniffer(server.url) as sniffer:
        agent = AgentProcess(cfg, str(tmp_path), port, env=env)
        try:
            agent.wait_log("Session:", timeout=30)
            wait_for(lambda: "choria.ccm.registration.v1.prod.http.web." in sniffer.text(), 15, what="clean entry")
            status = json.dumps(agent.status()) + agent.get("/metrics")
        finally:
            assert agent.stop() == 0
    output = agent.output()
    assert "annotation 'auth' holds a value marked @sensitive" in output, output
    for text in (output, sniffer.text(), status):
        assert canary not in text
    doc = json.loads(ccm("registration", "query", "--json", env=env, cwd=ROOT).stdout)
    assert [d["service"] for d in doc] == ["web"]


def test_manifest_set_from_the_object_store(tmp_path, nats):
    server, env = nats
    out = tmp_path / "out"
    out.mkdir()
    a = write_yaml(str(tmp_path / "a.yaml"), file_manifest(str(out), prefix="a"))
    obj_put(server, "set.yaml", f"manifests: [{{name: a, source: {a}}}]\n".encode())
    port = free_port()
    cfg = write_yaml(str(tmp_path / "config.yaml"), {
        "interval": "1h", "manifest_set": {"source": "obj://MANIFESTS/set.yaml", "interval": "0.5s"},
        "monitor_port": port, "cache_dir": str(tmp_path / "cache")})
    agent = AgentProcess(cfg, str(tmp_path), port, env=env)
    try:
        wait_for(lambda: (out / "a0.txt").exists(), 30, what="set member applied")
        st = agent.status()["manifest_set"]
        assert st["mode"] == "obj" and st["source"] == "obj://MANIFESTS/set.yaml" and st["last_error"] is None
        obj_put(server, "set.yaml", b"manifests: [{name: a, source: relative.yaml}]\n")
        st = agent.wait_status(lambda s: s["manifest_set"]["last_error"], 30)
        assert "absolute path" in st["manifest_set"]["last_error"]
        assert [m["name"] for m in st["manifests"]] == ["a"]   # the last good set keeps running
    finally:
        assert agent.stop() == 0
