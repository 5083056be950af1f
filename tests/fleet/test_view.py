"""Folding reports into hosts, and the listings built from them (no server)."""
from __future__ import annotations

import json
import time

from fleetreports import report

from ccm.fleet import view
from ccm.fleet.html import page
from ccm.fleet.prom import textfile


def fleet_of(*items):
    fleet = view.Fleet()
    for subject, body in items:
        fleet.add(subject, body)
    return fleet


def test_hosts_fold_their_manifests_worst_outcome_and_newest_first():
    fleet = fleet_of(report("web1", "ok", labels={"role": "web"}, age=30),
                     report("web1", "failed", labels={"role": "web"}, source="/etc/ccm/app.yaml", age=20),
                     report("db1", "changed", labels={"role": "db"}, age=10),
                     report("old1", "ok", age=7200))
    rows = fleet.rows(time.time())
    assert [r.host.hostname for r in rows] == ["db1", "web1", "old1"]
    assert [r.outcome for r in rows] == ["changed", "failed", "ok"]
    assert rows[1].host.first_failed() == ("file#/etc/motd", "it broke")
    assert rows[1].host.total("total") == 3 and rows[1].host.total("failed") == 1
    stale = fleet.rows(time.time(), stale=3600)
    assert [r.outcome for r in stale] == ["changed", "failed", "stale"]
    assert [r.host.hostname for r in fleet.rows(time.time(), outcome="failed")] == ["web1"]
    assert [r.host.hostname for r in fleet.rows(time.time(), labels={"role": "db"})] == ["db1"]
    assert fleet.rows(time.time(), labels={"role": "db", "dc": "x"}) == []
    assert view.summary(stale) == {"hosts": 3, "ok": 0, "changed": 1, "failed": 1, "stale": 1, "malformed": 0}


def test_an_older_report_never_replaces_a_newer_one():
    new, old = report("web1", "ok", age=1), report("web1", "failed", age=100)
    for order in ((new, old), (old, new)):
        rows = fleet_of(*order).rows(time.time())
        assert [r.outcome for r in rows] == ["ok"]


def test_malformed_messages_are_counted_never_raised():
    subject, body = report("web1")
    doc = json.loads(body)
    bad = [b"", b"not json", b"[1,2]", b"{\"instance\": 1}", b"\xff\xfe", b"[" * 100000,
           json.dumps(dict(doc, end="yesterday")).encode(), json.dumps(dict(doc, instance="0" * 16)).encode()]
    fleet = fleet_of((subject, body), *[(subject, b) for b in bad], ("choria.ccm.reports.x", body))
    assert fleet.malformed == len(bad) + 1
    assert len(fleet.rows(time.time())) == 1
    assert "malformed=9 (skipped)" in view.text(fleet.rows(time.time()), view.summary([], fleet.malformed))


def test_text_listing():
    fleet = fleet_of(report("web1", "failed", labels={"role": "web"}, age=125), report("db1", "ok", age=4000))
    out = view.text(fleet.rows(time.time()), view.summary(fleet.rows(time.time())))
    lines = out.splitlines()
    assert lines[0].split() == ["HOST", "LABELS", "AGE", "OUTCOME", "COUNTS", "FIRST", "FAILURE"]
    assert lines[1].split()[:4] == ["web1", "role=web", "2m", "failed"]
    assert lines[1].endswith("file#/etc/motd: it broke")
    assert lines[2].split()[:4] == ["db1", "-", "1h6m", "ok"]
    assert lines[-1] == "hosts=2 ok=1 changed=0 failed=1 stale=0"
    assert view.text([], view.summary([])) == "No matching reports\nhosts=0 ok=0 changed=0 failed=0 stale=0\n"
    assert [view.age_text(s) for s in (5, 65, 3600, 3660, 86400, 90000)] == ["5s", "1m", "1h", "1h1m", "1d", "1d1h"]


def test_html_escapes_every_text_and_loads_nothing():
    hostile = '<script>alert("x")</script>'
    fleet = fleet_of(report("evil<b>", "failed", labels={"role": "<i>&"}, error=hostile, resource="/x<y"),
                     report("ok1", "ok"))
    rows = fleet.rows(time.time(), stale=3600)
    html = page(rows, view.summary(rows, 2), generated="now<", stale="1h<")
    assert "<script" not in html and "alert(" not in html.replace("alert(&quot;", "")
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "evil&lt;b&gt;" in html and "role=&lt;i&gt;&amp;" in html and "file#/x&lt;y" in html
    assert "now&lt;" in html and "1h&lt;" in html
    for needle in ("http://", "https://", "src=", "href=", "@import", "url("):
        assert needle not in html
    assert "default-src 'none'" in html
    assert html.index("evil&lt;b&gt;") < html.index(">ok1<")   # failed rows first


def test_prometheus_textfile():
    fleet = fleet_of(report("web1", "failed", labels={"role": "web"}), report("web2", "ok", labels={"role": "web"}),
                     report("db1", "ok", labels={"role": 'd"b\\'}))
    text = textfile(fleet.rows(time.time()), malformed=2)
    from prometheus_client.parser import text_string_to_metric_families

    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for fam in text_string_to_metric_families(text) for s in fam.samples}
    assert samples[("choria_ccm_fleet_hosts", (("outcome", "ok"),))] == 2
    assert samples[("choria_ccm_fleet_hosts", (("outcome", "failed"),))] == 1
    assert samples[("choria_ccm_fleet_hosts", (("outcome", "stale"),))] == 0
    assert samples[("choria_ccm_fleet_label_hosts", (("label", "role"), ("outcome", "failed"), ("value", "web")))] == 1
    assert samples[("choria_ccm_fleet_label_hosts", (("label", "role"), ("outcome", "ok"), ("value", 'd"b\\')))] == 1
    assert samples[("choria_ccm_fleet_malformed_reports", ())] == 2


def test_streamed_json_and_yaml_are_the_documents():
    import io

    import yaml

    from ccm.cli.common import to_yaml
    from ccm.cli.report_cmd import write_json, write_yaml

    for items in ([], [report("web1", "failed", labels={"role": "web"}), report("db1", "ok")]):
        rows = fleet_of(*items).rows(time.time())
        counts = view.summary(rows)
        doc = {"hosts": [r.to_dict() for r in rows], "summary": counts}
        out = io.StringIO()
        write_json(out, rows, counts)
        assert json.loads(out.getvalue()) == doc
        assert len(out.getvalue().splitlines()) == len(rows) + (3 if rows else 2)   # one host a line
        out = io.StringIO()
        write_yaml(out, rows, counts)
        assert out.getvalue() == to_yaml(doc) and yaml.safe_load(out.getvalue()) == doc


def test_the_fast_json_lines_and_json_dumps_agree(monkeypatch):
    """One differential test: ``ccm.fleet.rowjson`` against ``json.dumps(row.to_dict())``."""
    import io

    from ccm.cli.report_cmd import write_json
    from ccm.fleet import subjects

    items = [report(f"h{i}", ("ok", "changed", "failed")[i % 3], labels={"n": str(i % 4), "é\"x": "ü\\\n\t"},
                    age=i * 7.25, source=f"/etc/ccm/m{i % 2}.yaml", error=f"bad \"{i}\" ünïcödé \u2028 \x01")
             for i in range(30)]
    odd = json.loads(items[0][1])
    odd.update(duration=float("inf"), exit_code=-3, noop=True, hostname="ho\"st\\", start="2020-01-01T00:00:00Z")
    odd["summary"]["total"] = 10**20
    odd["manifest"]["sha256"] = "\x7f\"\u00ff"
    rejected = json.loads(items[1][1])
    rejected.update(resources=[], error="invalid YAML: \"x\" \U0001F600")
    weird = dict(json.loads(items[2][1]), duration=float("nan"), labels={}, summary={})
    for doc, source in ((odd, "/a"), (rejected, "/b"), (weird, "/c")):
        doc["manifest"]["source"] = source
        items.append((subjects.report_subject(doc["instance"], subjects.manifest_id(source)), json.dumps(doc).encode()))
    rows = fleet_of(*items).rows(time.time(), stale=60)
    counts = view.summary(rows)
    out = {}
    for client in ("wire", "nats-py"):
        monkeypatch.setenv("CCM_REPORT_CLIENT", client)
        buf = io.StringIO()
        write_json(buf, rows, counts)
        out[client] = buf.getvalue()
    assert out["wire"] == out["nats-py"] and len(rows) == 30
    assert "NaN" in out["wire"] and "Infinity" in out["wire"] and '"error":"invalid YAML' in out["wire"]
