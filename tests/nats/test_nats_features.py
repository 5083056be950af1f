"""Contexts, connection, kv://, kvGet, obj:// and registration against a real nats-server."""
from __future__ import annotations

import json
import os
import socket
import threading
import time

import pytest
from natsfixture import run_js, write_context
from tests.kit import ROOT, ccm
from test_remote import bundle  # noqa: F401 - a gzipped tar from {name: text} (shared helper)

pytestmark = pytest.mark.nats


def _owner():
    import grp
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name


OWNER, GROUP = _owner()


def kv_put(server, bucket, values, *, replicas=1):
    async def fn(nc):
        js = nc.jetstream()
        kv = await js.create_key_value(bucket=bucket, replicas=replicas)
        for k, v in values.items():
            if v is None:
                await kv.delete(k)
            else:
                await kv.put(k, v.encode())
    run_js(server, fn)


def obj_put(server, bucket, name, data, *, replicas=1):
    async def fn(nc):
        js = nc.jetstream()
        import nats.js.api as api
        store = await js.create_object_store(bucket, config=api.ObjectStoreConfig(bucket=bucket, replicas=replicas))
        await store.put(name, data)
    run_js(server, fn)


# --- contexts and connection ------------------------------------------------------------

def test_context_resolution_rules(tmp_path):
    from ccm.nats import NatsError
    from ccm.nats.context import load

    cfg = str(tmp_path)
    env = {"XDG_CONFIG_HOME": cfg, "CREDS_DIR": "/etc/creds"}
    write_context(cfg, "CCM", {"url": "nats://a:4222, tls://b:4222", "creds": "$CREDS_DIR/ccm.creds",
                               "jetstream_domain": "hub", "inbox_prefix": "_I", "token": "s3cret"})
    ctx = load("CCM", env)
    assert ctx.servers == ["nats://a:4222", "tls://b:4222"]
    assert ctx.creds == "/etc/creds/ccm.creds" and ctx.api_prefix == "$JS.hub.API" and ctx.uses_tls
    assert "s3cret" not in repr(ctx)
    path = write_context(cfg, "other", {"jetstream_api_prefix": "$JS.x.API."})
    assert load(path, env).api_prefix == "$JS.x.API" and load(path, env).servers == ["nats://127.0.0.1:4222"]
    assert load("CCM", {"HOME": str(tmp_path / "nohome")}) if False else True
    for name, message in (("", "nats context not set"), ("../x", "invalid context name ../x"),
                          ("missing", 'unknown context "missing"')):
        with pytest.raises(NatsError, match=message.replace(".", r"\.")):
            load(name, env)
    bad = os.path.join(cfg, "nats", "context", "bad.json")
    with open(bad, "w") as fh:
        fh.write("{nope")
    with pytest.raises(NatsError, match='invalid nats context "bad"'):
        load("bad", env)
    write_context(cfg, "half", {"cert": "/c.pem"})
    with pytest.raises(NatsError, match="cert and key must be given together"):
        load("half", env)
    home = tmp_path / "home"
    write_context(str(home / ".config"), "CCM", {"url": "nats://h:1", "ca": "~/ca.pem"})
    ctx = load("CCM", {"HOME": str(home)})
    assert ctx.servers == ["nats://h:1"] and not ctx.ca.startswith("~")


def test_cli_fails_fast_with_one_line_when_server_is_down(tmp_path, nats_env):
    write_context(nats_env["XDG_CONFIG_HOME"], "down", {"url": "nats://127.0.0.1:1,nats://bob:hunter2@127.0.0.1:2"})
    started = time.monotonic()
    r = ccm("registration", "query", "--context", "down", env=nats_env, cwd=ROOT)
    assert time.monotonic() - started < 5
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "nats://127.0.0.1:1" in lines[0] and "'down'" in lines[0] and "hunter2" not in r.stderr + r.stdout


def test_server_that_never_answers_times_out(tmp_path, nats_env):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        write_context(nats_env["XDG_CONFIG_HOME"], "mute", {"url": f"nats://127.0.0.1:{sock.getsockname()[1]}"})
        started = time.monotonic()
        r = ccm("registration", "query", "--context", "mute", env=nats_env, cwd=ROOT)
        assert time.monotonic() - started < 5
        assert r.returncode == 1 and "timeout" in r.stderr and "'mute'" in r.stderr
    finally:
        sock.close()


def test_auth_failure_names_context_not_credentials(tmp_path, nats_env):
    from natsfixture import Server

    server = Server(str(tmp_path / "auth"), "auth", config='authorization { user: alice, password: "rightpw" }\n').start()
    try:
        write_context(nats_env["XDG_CONFIG_HOME"], "auth", {"url": server.url, "user": "alice", "password": "wrongpw"})
        r = ccm("registration", "query", "--context", "auth", env=nats_env, cwd=ROOT)
        assert r.returncode == 1
        assert "authorization" in r.stderr.lower() and "'auth'" in r.stderr
        assert "wrongpw" not in r.stderr + r.stdout and "alice" not in r.stderr
        write_context(nats_env["XDG_CONFIG_HOME"], "good", {"url": server.url, "user": "alice", "password": "rightpw"})
        ok = ccm("registration", "init", "--context", "good", env=nats_env, cwd=ROOT)
        assert ok.returncode == 0, ok.stderr
    finally:
        server.stop()


def test_an_outage_names_its_cause_servers_context_and_the_time_spent(nats_server, nats_env, monkeypatch):
    """kvGet while the server is down said only ``timeout after 2.5s (context 'CCM')``."""
    from ccm.nats import NatsError, kv
    from ccm.nats.connection import Connection

    monkeypatch.setenv("CCM_NATS_RETRY_SECONDS", "1")
    kv_put(nats_server.url, "APP", {"k": "v"})
    conn = Connection("CCM")
    try:
        assert kv.get(conn, "APP", "k") == b"v"
        nats_server.stop()
        started = time.monotonic()
        with pytest.raises(NatsError) as err:
            kv.get(conn, "APP", "k")
        spent = time.monotonic() - started
    finally:
        conn.close()
    text = str(err.value)
    assert text.startswith('could not get key "k" from bucket "APP": NATS not connected: '), text
    assert f"servers {nats_server.url}, context 'CCM'" in text
    shown = float(text.split("gave up after ")[1].split("s,")[0])
    assert abs(shown - spent) < 0.5, (shown, spent)


def test_a_timeout_inside_an_operation_is_retried_like_any_other(nats_server, nats_env, monkeypatch):
    """On Python 3.11+ asyncio's, nats-py's and concurrent.futures' TimeoutError are one class:
    an operation's own timeout (a JetStream request during an election) was taken for the
    bridge's wait expiring, and failed at once (``timeout after 60.5s``, seconds in) instead
    of being retried. The same identity is made here on older Pythons."""
    import asyncio

    from ccm.nats import connection

    monkeypatch.setattr(connection, "FutureTimeout", asyncio.TimeoutError)
    calls = []

    async def op(js):
        calls.append(1)
        if len(calls) < 3:
            raise asyncio.TimeoutError()
        return "ok"

    conn = connection.Connection("CCM")
    try:
        assert conn.jetstream(op, "an operation") == "ok" and len(calls) == 3
    finally:
        conn.close()


def test_importing_and_plain_runs_do_not_import_nats(tmp_path, nats_env):
    import subprocess
    import sys

    manifest = tmp_path / "m.yaml"
    manifest.write_text("ccm:\n  resources:\n    - exec:\n        - hi:\n            command: /bin/true\n")
    code = ("import sys, runpy; sys.argv=['ccm','apply','--no-report',%r];"
            "from ccm.cli.main import main; rc=main(sys.argv[1:]);"
            "print('NATS' if any(m=='nats' or m.startswith('nats.') for m in sys.modules) else 'CLEAN')" % str(manifest))
    r = subprocess.run([sys.executable, "-c", code], env=nats_env, capture_output=True, text=True, cwd=str(tmp_path))
    assert r.stdout.strip().splitlines()[-1] == "CLEAN", r.stdout + r.stderr


# --- registration ------------------------------------------------------------------------

def test_registration_cli_round_trip(nats_server, nats_env):
    assert ccm("registration", "init", "--replicas", "6", env=nats_env, cwd=ROOT).stderr.strip().endswith(
        "replicas must be between 1 and 5")
    r = ccm("registration", "init", "--max-age", "5m", env=nats_env, cwd=ROOT)
    assert r.returncode == 0 and "Registration stream ready stream=REGISTRATION" in r.stdout, r.stderr
    assert ccm("registration", "init", "--max-age", "5m", env=nats_env, cwd=ROOT).returncode == 0   # idempotent

    async def info(nc):
        return await nc.jetstream().stream_info("REGISTRATION")
    cfg = run_js(nats_server.url, info).config
    assert cfg.allow_direct and cfg.allow_rollup_hdrs and cfg.allow_msg_ttl and cfg.deny_delete and not cfg.deny_purge
    assert cfg.max_msgs_per_subject == 1 and cfg.max_age == 300 and cfg.subject_delete_marker_ttl == 300
    assert cfg.subjects == ["choria.ccm.registration.v1.>"]

    assert ccm("r", "q", env=nats_env, cwd=ROOT).stdout == "No results found\n"
    for addr, port in (("10.0.0.6", 80), ("10.0.0.5", 8080), ("10.0.0.5", 443)):
        r = ccm("reg", "create", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", addr,
                "--port", str(port), "-A", "version=1.2.3", "--ttl", "1h", env=nats_env, cwd=ROOT)
        assert r.returncode == 0 and "Registration entry created cluster=prod" in r.stdout, r.stderr
    r = ccm("registration", "c", "--cluster", "dev", "--service", "db", "--protocol", "tcp", "--address", "::1",
            "--port", "5432", "--ttl", "never", env=nats_env, cwd=ROOT)
    assert r.returncode == 0, r.stderr

    async def last(nc):
        return await nc.jetstream().get_last_msg("REGISTRATION", "choria.ccm.registration.v1.dev.tcp.db.::1.7e9c4a879bdd2158")
    msg = run_js(nats_server.url, last)
    assert msg.headers["Nats-Rollup"] == "sub" and msg.headers["Nats-TTL"] == "never"
    assert json.loads(msg.data) == {"cluster": "dev", "service": "db", "protocol": "tcp", "address": "::1",
                                    "port": 5432, "priority": 100, "ttl": "never"}

    doc = json.loads(ccm("registration", "query", "prod", "*", "web", "--json", env=nats_env, cwd=ROOT).stdout)
    assert [(d["address"], d["port"]) for d in doc] == [("10.0.0.5", 443), ("10.0.0.5", 8080), ("10.0.0.6", 80)]
    assert doc[0]["ttl"] == "1h0m0s" and doc[0]["annotations"] == {"version": "1.2.3"}
    text = ccm("registration", "query", env=nats_env, cwd=ROOT).stdout
    assert text.count("Service: web @ prod") == 1 and text.count("Service: db @ dev") == 1
    assert "   Annotations:\n                version: 1.2.3\n" in text
    assert "- address: 10.0.0.5" in ccm("registration", "query", "--yaml", env=nats_env, cwd=ROOT).stdout

    rm = ["registration", "rm", "--cluster", "prod", "--service", "web", "--protocol", "http",
          "--address", "10.0.0.6", "--port", "80"]
    r = ccm(*rm, env=nats_env, cwd=ROOT)
    assert r.returncode == 1 and "not removed" in r.stderr
    assert len(json.loads(ccm("registration", "query", "--json", env=nats_env, cwd=ROOT).stdout)) == 4
    r = ccm(*(rm + ["--force"]), env=nats_env, cwd=ROOT)
    assert r.returncode == 0 and "Registration entry removed" in r.stdout, r.stderr
    doc = json.loads(ccm("registration", "query", "--json", env=nats_env, cwd=ROOT).stdout)
    assert len(doc) == 3 and "10.0.0.6" not in [d["address"] for d in doc]
    # removed already, or never there: not found, exit 1 (it used to say "removed", exit 0)
    for args in (rm, rm[:-1] + ["81"]):
        r = ccm(*(args + ["--force"]), env=nats_env, cwd=ROOT)
        assert (r.returncode, r.stdout) == (1, ""), r.stdout + r.stderr
        assert r.stderr == (f"ccm: error: registration entry prod/web/http at 10.0.0.6:{args[-1]} not found "
                            "in stream REGISTRATION\n")
    assert len(json.loads(ccm("registration", "query", "--json", env=nats_env, cwd=ROOT).stdout)) == 3
    r = ccm(*(rm + ["--force", "-R", "NOSUCH"]), env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stderr) == (1, "ccm: error: could not remove registration: stream NOSUCH not found\n")


def test_watch_reports_register_and_remove(nats_server, nats_env):
    import subprocess
    import sys

    assert ccm("registration", "init", env=nats_env, cwd=ROOT).returncode == 0
    create = ["registration", "create", "--cluster", "dev", "--service", "web", "--protocol", "http",
              "--address", "10.0.0.9", "--port", "80"]
    assert ccm(*create, env=nats_env, cwd=ROOT).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "ccm", "registration", "watch", "--json"], env=nats_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
        reader.start()
        deadline = time.monotonic() + 10
        while not lines and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ccm(*(create[:-1] + ["81"]), env=nats_env, cwd=ROOT).returncode == 0
        assert ccm(*(["registration", "rm", "--force"] + create[2:]), env=nats_env, cwd=ROOT).returncode == 0
        while len(lines) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait(5)
    events = [json.loads(line) for line in lines]
    assert events[0]["action"] == "register" and events[0]["entry"]["port"] == 80
    assert events[1]["action"] == "register" and events[1]["entry"]["port"] == 81
    assert events[2]["action"] == "remove" and events[2]["reason"] == "Purge"
    assert events[2]["entry"]["address"] == "10.0.0.9"


# --- data and manifests ------------------------------------------------------------------

def test_kv_hiera_source_for_hiera_parse_and_apply(tmp_path, nats_server, nats_env):
    kv_put(nats_server.url, "CFG", {
        "yaml": "data:\n  # @require\n  port: 8080\n  name: web\n",
        "json": '{"data": {"port": 9090}}',
        "invalid": "data:\n  # @validate value == \"10\"\n  port: 5\n",
        "gone": "x: 1",
    })
    kv_put(nats_server.url, "CFG", {"gone": None})
    r = ccm("hiera", "parse", "kv://CFG/yaml", env=nats_env, cwd=ROOT)
    assert r.returncode == 0 and json.loads(r.stdout) == {"name": "web", "port": 8080}, r.stderr
    assert json.loads(ccm("hiera", "parse", "kv://CFG/json", env=nats_env, cwd=ROOT).stdout) == {"port": 9090}
    r = ccm("hiera", "parse", "kv://CFG/invalid", env=nats_env, cwd=ROOT)
    assert r.returncode == 1 and 'key "port" failed validation' in r.stderr
    for src, message in (("kv://CFG/gone", "kv CFG#gone is not a put operation"),
                         ("kv://CFG/nokey", 'could not get key "nokey" from bucket "CFG"'),
                         ("kv://NOPE/x", 'could not access KV bucket "NOPE"')):
        r = ccm("hiera", "parse", src, env=nats_env, cwd=ROOT)
        assert r.returncode == 1 and message in r.stderr, r.stderr

    out = tmp_path / "out.txt"
    manifest = tmp_path / "m.yaml"
    manifest.write_text("data:\n  port: 1\nccm:\n  resources:\n    - file:\n        - %s:\n"
                        "            ensure: present\n            owner: %s\n            group: %s\n            mode: \"0644\"\n            content: \"port={{ Data.port }}\"\n" % (out, OWNER, GROUP))
    r = ccm("apply", "--no-report", "--hiera", "kv://CFG/yaml", str(manifest), env=nats_env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_text() == "port=8080"
    r = ccm("ensure", "file", str(out), "--hiera", "kv://CFG/json", "--content", "p={{ Data.port }}", env=nats_env,
            cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_text() == "p=9090"


def test_kvget_in_expressions_jet_and_go_templates_missing_key_fails_one_resource(tmp_path, nats_server, nats_env):
    kv_put(nats_server.url, "APP", {"motd": "hello fleet", "port": "8080"})
    (tmp_path / "t.jet").write_text('jet=[[ kvGet("APP", "motd") ]]')
    d = tmp_path / "scaffold-src"
    d.mkdir()
    (d / "go.txt").write_text('go={{ kvGet "APP" "port" }}')
    f1, f2, f3, f4 = (tmp_path / n for n in ("expr.txt", "jet.txt", "bad.txt", "after.txt"))
    target = tmp_path / "scaffold-out"
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"""
ccm:
  resources:
    - file:
        - {f1}:
            ensure: present
            owner: {OWNER}
            group: {GROUP}
            mode: "0644"
            content: "expr={{{{ kvGet('APP', 'motd') }}}}"
        - {f2}:
            ensure: present
            owner: {OWNER}
            group: {GROUP}
            mode: "0644"
            content: "{{{{ jet('t.jet') }}}}"
        - {f3}:
            ensure: present
            owner: {OWNER}
            group: {GROUP}
            mode: "0644"
            content: "{{{{ kvGet('APP', 'missing') }}}}"
        - {f4}:
            ensure: present
            owner: {OWNER}
            group: {GROUP}
            mode: "0644"
            content: after
    - scaffold:
        - {target}:
            ensure: present
            source: {d}
            engine: go
""")
    r = ccm("apply", str(manifest), env=nats_env, cwd=tmp_path)
    assert f1.read_text() == "expr=hello fleet"
    assert f2.read_text() == "jet=hello fleet"
    assert (target / "go.txt").read_text() == "go=8080"
    assert f4.read_text() == "after" and not f3.exists()
    assert r.returncode == 1
    assert 'could not get key "missing" from bucket "APP"' in r.stdout + r.stderr


def test_apply_obj_bundle(tmp_path, nats_server, nats_env):
    out = tmp_path / "from-bundle.txt"
    data = bundle({"site/manifest.yaml": "data:\n  who: bundle\nccm:\n  resources:\n    - file:\n        - %s:\n"
                   "            ensure: present\n            owner: %s\n            group: %s\n            mode: \"0644\"\n            content: \"{{ readFile('extra.txt') }} {{ Data.who }}\"\n"
                   % (out, OWNER, GROUP), "site/extra.txt": "from"})
    obj_put(nats_server.url, "MANIFESTS", "web.tar.gz", data)
    before = set(os.listdir("/tmp"))
    r = ccm("apply", "obj://MANIFESTS/web.tar.gz", env=nats_env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_text() == "from bundle"
    assert not [n for n in set(os.listdir("/tmp")) - before if n.startswith("manifest-")]
    r = ccm("apply", "obj://MANIFESTS/none.tar.gz", env=nats_env, cwd=tmp_path)
    assert r.returncode == 1 and "object 'none.tar.gz' not found" in r.stderr
    r = ccm("apply", "obj://NOBUCKET/web.tar.gz", env=nats_env, cwd=tmp_path)
    assert r.returncode == 1 and "bucket 'NOBUCKET' not found" in r.stderr
    obj_put(nats_server.url, "MANIFESTS", "plain.tar.gz", b"not a tarball")
    r = ccm("apply", "obj://MANIFESTS/plain.tar.gz", env=nats_env, cwd=tmp_path)
    assert r.returncode == 1 and "unzip failed" in r.stderr


REG_MANIFEST = """
data:
  web_port: 8080
ccm:
  resources:
    - exec:
        - ok:
            command: /bin/true
            register_when_stable:
              - cluster: prod
                service: web
                protocol: http
                address: 10.1.0.{n}
                port: "{{{{ Data.web_port }}}}"
                priority: 10
                ttl: 1h
                annotations:
                  host: "{{{{ Data.web_port }}}}-{n}"
        - unhealthy:
            command: /bin/true
            health_checks:
              - command: /bin/false
            register_when_stable:
              - {{cluster: prod, service: sick, protocol: http, address: 10.1.1.{n}, port: 80, priority: 1}}
        - broken:
            command: /bin/false
            register_when_stable:
              - {{cluster: prod, service: broken, protocol: http, address: 10.1.2.{n}, port: 80, priority: 1}}
"""


def test_apply_publish_registrations_gate_and_wire_format(tmp_path, nats_server, nats_env):
    assert ccm("registration", "init", env=nats_env, cwd=ROOT).returncode == 0
    manifest = tmp_path / "m.yaml"
    manifest.write_text(REG_MANIFEST.format(n=1))
    r = ccm("apply", str(manifest), env=nats_env, cwd=tmp_path)          # no flag: nothing published
    assert ccm("registration", "query", env=nats_env, cwd=ROOT).stdout == "No results found\n"
    ccm("apply", "--noop", "--publish-registrations", "jetstream", str(manifest), env=nats_env, cwd=tmp_path)
    assert ccm("registration", "query", env=nats_env, cwd=ROOT).stdout == "No results found\n"
    r = ccm("apply", "--publish-registrations", "jetstream", str(manifest), env=nats_env, cwd=tmp_path)
    assert r.returncode == 1   # the broken exec failed
    doc = json.loads(ccm("registration", "query", "--json", env=nats_env, cwd=ROOT).stdout)
    assert doc == [{"cluster": "prod", "service": "web", "protocol": "http", "address": "10.1.0.1", "port": 8080,
                    "priority": 10, "annotations": {"host": "8080-1"}, "ttl": "1h0m0s"}]

    async def last(nc):
        return await nc.jetstream().get_last_msg("REGISTRATION", "choria.ccm.registration.v1.prod.http.web.10_1_0_1.>")
    msg = run_js(nats_server.url, last)
    assert msg.headers["Nats-TTL"] == "1h0m0s" and msg.headers["Nats-Rollup"] == "sub"
    assert msg.headers["Nats-Expected-Stream"] == "REGISTRATION"

    manifest.write_text(REG_MANIFEST.format(n=2))
    r = ccm("apply", "--publish-registrations", "nats", str(manifest), env=nats_env, cwd=tmp_path)
    doc = json.loads(ccm("registration", "query", "prod", "http", "web", "--json", env=nats_env, cwd=ROOT).stdout)
    assert [d["address"] for d in doc] == ["10.1.0.1", "10.1.0.2"]


@pytest.mark.parametrize("port,message", [
    ('"{{ Data.text_port }}"', 'port must be an integer number, not string ("8080")'),
    ('"{{ Data.web_port / 2 }}"', "port must be an integer number, not float (4040)"),
    ("70000", "port '70000' must be between 1 and 65535"),
])
def test_bad_entries_reject_the_manifest_before_anything_runs(tmp_path, nats_env, port, message):
    marker = tmp_path / "ran"
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"""
data:
  web_port: 8080
  text_port: "8080"
ccm:
  resources:
    - exec:
        - first:
            command: /usr/bin/touch {marker}
    - exec:
        - second:
            command: /bin/true
            register_when_stable:
              - {{cluster: prod, service: web, protocol: http, address: 10.0.0.1, port: {port}, priority: 1}}
""")
    r = ccm("apply", "--publish-registrations", "jetstream", str(manifest), env=nats_env, cwd=tmp_path)
    assert r.returncode == 1 and not marker.exists()
    assert "registration is invalid: " + message in r.stderr, r.stderr
    assert "exec#second" in r.stderr


def test_registrations_template_function_and_file_sd(tmp_path, nats_server, nats_env):
    assert ccm("registration", "init", env=nats_env, cwd=ROOT).returncode == 0
    for addr, port, svc in (("10.0.0.2", 9090, "prometheus"), ("10.0.0.1", 8080, "prometheus"), ("10.0.0.3", 80, "web")):
        assert ccm("registration", "create", "--cluster", "dev", "--service", svc, "--protocol", "tcp", "--address",
                   addr, "--port", str(port), "--priority", "6", env=nats_env, cwd=ROOT).returncode == 0
    (tmp_path / "lb.jet").write_text('[[ range _, e := registrations("dev", "tcp", "*", "*") ]]'
                                     "[[ e.Address ]]:[[ e.Port ]] w[[ 256 - e.Priority ]]\n[[ end ]]")
    sd, lb, n = (tmp_path / x for x in ("sd.json", "lb.txt", "n.txt"))
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"""
ccm:
  resources:
    - file:
        - {sd}:
            ensure: present
            owner: {OWNER}
            group: {GROUP}
            mode: "0644"
            content: "{{{{ registrations('dev', 'tcp', 'prometheus', '*').PrometheusFileSD() }}}}"
        - {lb}:
            ensure: present
            owner: {OWNER}
            group: {GROUP}
            mode: "0644"
            content: "{{{{ jet('lb.jet') }}}}"
        - {n}:
            ensure: present
            owner: {OWNER}
            group: {GROUP}
            mode: "0644"
            content: "{{{{ len(registrations('*', '*', '*', '*')) }}}}"
""")
    r = ccm("apply", str(manifest), env=nats_env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(sd.read_text()) == [{"labels": {"cluster": "dev", "protocol": "tcp", "service": "prometheus"},
                                           "targets": ["10.0.0.1:8080", "10.0.0.2:9090"]}]
    assert lb.read_text() == "10.0.0.1:8080 w250\n10.0.0.2:9090 w250\n10.0.0.3:80 w250\n"
    assert n.read_text() == "3"


def test_only_nats_resources_fail_when_the_server_is_down(tmp_path, nats_env):
    write_context(nats_env["XDG_CONFIG_HOME"], "CCM", {"url": "nats://127.0.0.1:1"})
    ok, bad = tmp_path / "ok.txt", tmp_path / "bad.txt"
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"""
ccm:
  resources:
    - file:
        - {bad}:
            ensure: present
            owner: {OWNER}
            group: {GROUP}
            mode: "0644"
            content: "{{{{ kvGet('APP', 'x') }}}}"
        - {ok}:
            ensure: present
            owner: {OWNER}
            group: {GROUP}
            mode: "0644"
            content: fine
""")
    started = time.monotonic()
    r = ccm("apply", str(manifest), env=nats_env, cwd=tmp_path)
    assert time.monotonic() - started < 8
    assert r.returncode == 1 and ok.read_text() == "fine" and not bad.exists()
    assert "nats://127.0.0.1:1" in r.stdout + r.stderr and "'CCM'" in r.stdout + r.stderr


def test_connection_is_shared_and_recovers_after_restart(tmp_path, nats_server, nats_env, monkeypatch):
    from ccm.manager import Manager
    from ccm.nats import NatsError, kv

    kv_put(nats_server.url, "APP", {"k": "v1"})
    monkeypatch.setenv("CCM_NATS_RETRY_SECONDS", "1")
    m = Manager(nats_context="CCM", facts={})
    conn = m.nats_connection()
    try:
        assert kv.get(conn, "APP", "k") == b"v1"
        assert m.nats_connection() is conn
        nats_server.stop()
        started = time.monotonic()
        with pytest.raises(NatsError):
            kv.get(conn, "APP", "k")
        assert time.monotonic() - started < 6
        nats_server.start()
        deadline = time.monotonic() + 10
        value = None
        while time.monotonic() < deadline and value is None:
            try:
                value = kv.get(conn, "APP", "k")
            except NatsError:
                time.sleep(0.2)
        assert value == b"v1"
    finally:
        conn.close()


def test_jetstream_domain_from_the_context_is_honoured(tmp_path, nats_env):
    from natsfixture import Server

    server = Server(str(tmp_path / "dom"), "dom", config="jetstream { domain: hub }\n").start()
    try:
        write_context(nats_env["XDG_CONFIG_HOME"], "hub", {"url": server.url, "jetstream_domain": "hub"})
        assert ccm("registration", "init", "--context", "hub", env=nats_env, cwd=ROOT).returncode == 0
        r = ccm("registration", "create", "--context", "hub", "--cluster", "c", "--service", "s", "--protocol", "p",
                "--address", "10.0.0.1", "--port", "1", env=nats_env, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        assert json.loads(ccm("registration", "query", "--context", "hub", "--json", env=nats_env,
                              cwd=ROOT).stdout)[0]["port"] == 1

        async def via_domain(nc):
            return await nc.jetstream(domain="hub").stream_info("REGISTRATION")
        assert run_js(server.url, via_domain).state.messages == 1
        write_context(nats_env["XDG_CONFIG_HOME"], "wrong", {"url": server.url, "jetstream_domain": "elsewhere"})
        env = dict(nats_env, CCM_NATS_RETRY_SECONDS="1")
        r = ccm("registration", "query", "--context", "wrong", env=env, cwd=ROOT)
        assert r.returncode == 1 and "could not query registrations" in r.stderr
    finally:
        server.stop()


def test_watch_reports_max_age_expiry(nats_server, nats_env):
    import subprocess
    import sys

    assert ccm("registration", "init", "--max-age", "1s", env=nats_env, cwd=ROOT).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "ccm", "registration", "watch", "--json"], env=nats_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    lines = []
    try:
        reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
        reader.start()
        time.sleep(1.0)
        assert ccm("registration", "create", "--cluster", "dev", "--service", "tmp", "--protocol", "tcp", "--address",
                   "10.0.0.7", "--port", "7", env=nats_env, cwd=ROOT).returncode == 0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not any('"remove"' in x for x in lines):
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(5)
    events = [json.loads(x) for x in lines]
    assert events[0]["action"] == "register"
    assert events[-1] == {"action": "remove", "reason": "MaxAge",
                          "entry": {"cluster": "dev", "service": "tmp", "protocol": "tcp", "address": "10.0.0.7",
                                    "port": None, "priority": 0}}
    assert ccm("registration", "query", env=nats_env, cwd=ROOT).stdout == "No results found\n"
