"""``ccm report init|fleet|show|watch`` against a real nats-server: outputs, exit codes, errors."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from fleetreports import report
from natsfixture import free_port, run_js, write_context
from tests.kit import ROOT, ccm

from ccm.fleet import STREAM
from ccm.fleet.subjects import instance_token

pytestmark = pytest.mark.nats


def publish(url, *items):
    async def fn(nc):
        js = nc.jetstream()
        for subject, body in items:
            await js.publish(subject, body)
    run_js(url, fn)


@pytest.fixture
def fleet(env, nats_server):
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    publish(nats_server.url,
            report("web1", "failed", labels={"role": "web"}, age=60, error="disk full"),
            report("web2", "ok", labels={"role": "web"}, age=30),
            report("db1", "changed", labels={"role": "db"}, age=10),
            report("old1", "ok", labels={"role": "db"}, age=3 * 3600))
    return env


def test_init_is_idempotent_and_sets_the_stream_up(env, nats_server):
    for _ in range(2):
        r = ccm("report", "init", "--max-age", "2d", env=env, cwd=ROOT)
        assert r.returncode == 0 and "stream=CCM_REPORTS" in r.stdout, r.stderr

    async def fn(nc):
        return (await nc.jetstream().stream_info(STREAM)).config
    cfg = run_js(nats_server.url, fn)
    assert cfg.subjects == ["choria.ccm.reports.>"] and cfg.allow_direct is True
    assert cfg.max_age == 2 * 86400 and cfg.max_msgs_per_subject == -1 and cfg.duplicate_window == 600
    r = ccm("report", "init", "--replicas", "7", env=env, cwd=ROOT)
    assert r.returncode == 1 and "replicas must be between 1 and 5" in r.stderr


def test_fleet_listing_filters_and_summary(fleet):
    r = ccm("report", "fleet", "--stale", "2h", env=fleet, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [ln.split()[0] for ln in lines[1:-1]] == ["db1", "web2", "web1", "old1"]
    assert "failed" in lines[3] and lines[3].endswith("file#/etc/motd: disk full")
    assert lines[4].split()[3] == "stale"
    assert lines[-1] == "hosts=4 ok=1 changed=1 failed=1 stale=1"
    r = ccm("report", "fleet", "--failed", "--label", "role=web", env=fleet, cwd=ROOT)
    assert [ln.split()[0] for ln in r.stdout.splitlines()[1:-1]] == ["web1"]
    r = ccm("report", "fleet", "--changed", "--label", "role=web", env=fleet, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.splitlines() == ["No matching reports",
                                                           "hosts=0 ok=0 changed=0 failed=0 stale=0"]


def test_fleet_json_yaml_prometheus_and_html(fleet, tmp_path):
    doc = json.loads(ccm("report", "fleet", "--json", "--stale", "2h", env=fleet, cwd=ROOT).stdout)
    assert doc["summary"] == {"hosts": 4, "ok": 1, "changed": 1, "failed": 1, "stale": 1, "malformed": 0}
    web1 = next(h for h in doc["hosts"] if h["hostname"] == "web1")
    assert web1["instance"] == instance_token("web1") and web1["labels"] == {"role": "web"}
    assert web1["first_failed"] == {"resource": "file#/etc/motd", "error": "disk full"}
    assert web1["manifests"][0]["manifest"]["source"] == "/etc/ccm/site.yaml"
    import yaml

    ydoc = yaml.safe_load(ccm("report", "fleet", "--yaml", "--stale", "2h", env=fleet, cwd=ROOT).stdout)
    assert ydoc["summary"] == doc["summary"]
    assert [(h["hostname"], h["outcome"], h["first_failed"]) for h in ydoc["hosts"]] == \
        [(h["hostname"], h["outcome"], h["first_failed"]) for h in doc["hosts"]]
    prom = ccm("report", "fleet", "--prometheus", "--stale", "2h", env=fleet, cwd=ROOT).stdout
    assert 'choria_ccm_fleet_hosts{outcome="stale"} 1' in prom
    assert 'choria_ccm_fleet_label_hosts{label="role",value="web",outcome="failed"} 1' in prom
    page = tmp_path / "fleet.html"
    r = ccm("report", "fleet", "--html", str(page), env=fleet, cwd=ROOT)
    assert r.returncode == 0 and r.stdout == f"wrote {page}: hosts=4 ok=2 changed=1 failed=1 stale=0\n"
    assert "disk full" in page.read_text() and oct(os.stat(page).st_mode & 0o777) == "0o644"


def test_show_one_host_and_its_history(env, nats_server):
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    publish(nats_server.url, report("web1", "failed", age=30, error="first"),
            report("web1", "ok", age=20, source="/etc/ccm/app.yaml"), report("web1", "changed", age=10),
            report("web2", "failed", age=5))
    r = ccm("report", "show", "web1", env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    blocks = [b for b in r.stdout.split("\n\n") if b.strip()]
    assert len(blocks) == 2   # the last run of each of its two manifests, newest first
    assert "manifest: /etc/ccm/site.yaml" in blocks[0] and "outcome: changed" in blocks[0]
    assert "manifest: /etc/ccm/app.yaml" in blocks[1]
    doc = json.loads(ccm("report", "show", "web1", "--history", "10", "--json", env=env, cwd=ROOT).stdout)
    assert [d["resources"][-1]["outcome"] if d["resources"] else "ok" for d in doc["reports"]] == \
        ["changed", "ok", "failed"]
    assert doc["reports"][2]["resources"][0]["error"] == "first"
    doc = json.loads(ccm("report", "show", instance_token("web1"), "--history", "1", "--json", env=env,
                         cwd=ROOT).stdout)
    assert len(doc["reports"]) == 1 and doc["reports"][0]["hostname"] == "web1"
    r = ccm("report", "show", "nosuchhost", env=env, cwd=ROOT)
    assert r.returncode == 0 and r.stdout == "No reports for nosuchhost\n"


def test_malformed_messages_are_skipped_and_counted_by_every_reader(env, nats_server):
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    good = report("web1", "ok")
    publish(nats_server.url, good, ("choria.ccm.reports.%s.bad1" % instance_token("web1"), b"{not json"),
            ("choria.ccm.reports.%s.bad2" % instance_token("web1"), b'{"instance": 5}'),
            ("choria.ccm.reports.0000000000000000.x", good[1]))
    r = ccm("report", "fleet", env=env, cwd=ROOT)
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert r.stdout.splitlines()[-1] == "hosts=1 ok=1 changed=0 failed=0 stale=0 malformed=3 (skipped)"
    assert json.loads(ccm("report", "fleet", "--json", env=env, cwd=ROOT).stdout)["summary"]["malformed"] == 3
    assert "choria_ccm_fleet_malformed_reports 3" in ccm("report", "fleet", "--prometheus", env=env, cwd=ROOT).stdout
    r = ccm("report", "show", "web1", env=env, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.endswith("malformed=2 (skipped)\n"), r.stdout


def test_reading_fails_fast_naming_servers_and_context(env, tmp_path):
    down = dict(env)
    write_context(str(tmp_path / "down"), "CCM", {"url": f"nats://127.0.0.1:{free_port()}"})
    down["XDG_CONFIG_HOME"] = str(tmp_path / "down")
    for args in (["fleet"], ["show", "web1"], ["watch"], ["fleet", "--json"]):
        started = time.monotonic()
        r = ccm("report", *args, env=down, cwd=ROOT)
        assert time.monotonic() - started < 5
        assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr
        assert "nats://127.0.0.1:" in r.stderr and "context 'CCM'" in r.stderr and "Traceback" not in r.stderr
    r = ccm("report", "fleet", env=env, cwd=ROOT)   # the server is up, the stream is not there
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1
    assert "stream CCM_REPORTS not found" in r.stderr and "context 'CCM'" in r.stderr
    assert "ccm report init" in r.stderr


def test_watch_shows_reports_as_they_arrive(env, nats_server, tmp_path):
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    publish(nats_server.url, report("before", "failed"))
    proc = subprocess.Popen([sys.executable, "-m", "ccm", "report", "watch", "--failed"], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2.0)   # the consumer is in place
        publish(nats_server.url, report("ok1", "ok"), ("choria.ccm.reports.x.y", b"junk"),
                report("web9", "failed", error="no space"))
        line = proc.stdout.readline()
        assert " web9 " in line and "failed" in line and line.rstrip().endswith("file#/etc/motd: no space"), line
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and "before" not in out and "ok1" not in out
    assert "skipped a malformed report on choria.ccm.reports.x.y (1 so far)" in err and "Traceback" not in err


def test_the_fast_read_and_the_reference_read_agree(env, nats_server, monkeypatch):
    """One differential test: ``ccm.fleet.fastread`` against nats-py's consumer (the reference)."""
    from ccm.fleet import stream
    from ccm.nats.connection import Connection

    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    items = [report(f"h{i}", ("ok", "changed", "failed")[i % 3], labels={"n": str(i % 4)}, age=i,
                    source=f"/etc/ccm/m{i % 2}.yaml") for i in range(60)]
    items += [report("h1", "failed", age=500), ("choria.ccm.reports.%s.x" % instance_token("h2"), b"junk")]
    publish(nats_server.url, *items, *items[:5])   # re-sent messages too (new ids: the stream keeps them)

    def both(read):
        out = {}
        for client in ("wire", "nats-py"):
            monkeypatch.setenv("CCM_REPORT_CLIENT", client)
            conn = Connection("CCM")
            try:
                out[client] = read(conn)
            finally:
                conn.close()
        return out["wire"], out["nats-py"]

    now = time.time()
    fast, ref = both(lambda c: stream.read_fleet(c))
    rows = [r.to_dict() for r in fast.rows(now, stale=30)]
    assert rows == [r.to_dict() for r in ref.rows(now, stale=30)] and len(rows) == 60
    assert fast.malformed == ref.malformed == 1
    fast, ref = both(lambda c: stream.read_host(c, instance_token("h1"), 10))
    assert fast.reports() == ref.reports() and len(fast.reports()) == 3
    fast, ref = both(lambda c: stream.read_host(c, instance_token("h2")))
    assert fast.reports() == ref.reports() and fast.malformed == ref.malformed == 1
    monkeypatch.setenv("CCM_REPORT_CLIENT", "nats-py")
    nats_server.stop()
    errors = {}
    for client in ("wire", "nats-py"):
        monkeypatch.setenv("CCM_REPORT_CLIENT", client)
        r = ccm("report", "fleet", env=dict(env, CCM_REPORT_CLIENT=client), cwd=ROOT)
        errors[client] = r.stderr
        assert r.returncode == 1 and f"could not connect to {nats_server.url}" in r.stderr, r.stderr
        assert "context 'CCM'" in r.stderr and len(r.stderr.splitlines()) == 1
