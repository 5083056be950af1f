"""Prometheus metrics: upstream's exact names/types/labels in the text format, the outcome
priority, /metrics over real HTTP, the atomic textfile, and prometheus_client never imported."""
from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from ccm.metrics import DEFINITIONS, Metrics, outcome, serve, write_textfile
from ccm.model.events import CRITICAL, OK, HealthCheckResult, TransactionEvent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The table of events-and-observability.md §Prometheus metrics.
SPEC = [
    ("choria_ccm_manifest_apply_duration_seconds", "summary", "source"),
    ("choria_ccm_resource_apply_duration_seconds", "summary", "type provider name"),
    ("choria_ccm_resource_state_total_count", "counter", "type name"),
    ("choria_ccm_resource_state_noop_count", "counter", "type name"),
    ("choria_ccm_resource_state_changed_count", "counter", "type name"),
    ("choria_ccm_resource_state_skipped_count", "counter", "type name"),
    ("choria_ccm_resource_state_refreshed_count", "counter", "type name"),
    ("choria_ccm_resource_state_failed_count", "counter", "type name"),
    ("choria_ccm_resource_state_error_count", "counter", "type name"),
    ("choria_ccm_resource_state_stable_count", "counter", "type name"),
    ("choria_ccm_healthcheck_duration_seconds", "summary", "type name check"),
    ("choria_ccm_healthcheck_status_count", "counter", "type name status check"),
    ("choria_ccm_facts_gather_duration_seconds", "summary", ""),
    ("choria_ccm_agent_apply_duration_seconds", "summary", "manifest"),
    ("choria_ccm_agent_healthcheck_duration_seconds", "summary", "manifests"),
    ("choria_ccm_agent_healthcheck_remediations_count", "counter", "manifest"),
    ("choria_ccm_agent_data_resolve_duration_seconds", "summary", ""),
    ("choria_ccm_agent_data_resolve_error_count", "counter", "url"),
    ("choria_ccm_agent_facts_resolve_duration_seconds", "summary", ""),
    ("choria_ccm_agent_facts_resolve_error_count", "counter", ""),
    ("choria_ccm_agent_manifest_fetch_count", "counter", "manifest"),
    ("choria_ccm_agent_manifest_fetch_error_count", "counter", "manifest"),
    # ours (issue 14): last ccm apply's finish time and exit code, for stale/failed-run alerts
    ("choria_ccm_last_run_timestamp_seconds", "gauge", ""),
    ("choria_ccm_last_run_exit_code", "gauge", ""),
    # ours (issue 25): agent manifests that did not load (the last good version is kept)
    ("choria_ccm_agent_manifest_load_error_count", "counter", "manifest"),
    # ours (issue 29): the agent's drift watch
    ("choria_ccm_agent_drift_total", "counter", "manifest type"),
    ("choria_ccm_agent_watched_paths", "gauge", "manifest"),
]


def test_definitions_match_the_spec_table():
    assert [(d.name, d.kind, " ".join(d.labels)) for d in DEFINITIONS] == SPEC


def ev(**flags):
    e = TransactionEvent(type="file", name="/etc/motd")
    for k, v in flags.items():
        setattr(e, k, v)
    return e


@pytest.mark.parametrize("flags,expected", [
    ({"noop": True, "changed": True}, "noop"),
    ({"changed": True, "failed": True}, "changed"),
    ({"skipped": True, "failed": True}, "skipped"),
    ({"refreshed": True, "failed": True}, "refreshed"),
    ({"failed": True, "errors": ["x"]}, "failed"),
    ({"errors": ["x"]}, "error"),
    ({}, "stable"),
])
def test_outcome_priority(flags, expected):
    assert outcome(ev(**flags)) == expected


def full_run_metrics():
    m = Metrics()
    m.record_event(ev(changed=True))
    m.record_event(ev())
    e = ev(failed=True, errors=['health check "check_x" status "CRITICAL"'], alias="motd")
    e.health_checks = [HealthCheckResult(status=CRITICAL, output="bad", name="check_x"),
                       HealthCheckResult(status=OK, name="goss")]
    m.record_event(e)
    m.observe("resource_apply", 0.25, type="file", provider="posix", name="/etc/motd")
    m.observe("resource_apply", 0.5, type="file", provider="posix", name="/etc/motd")
    m.observe("facts_gather", 1.5)
    m.observe("manifest_apply", 2, source="/srv/site.yaml")
    m.observe("healthcheck", 0.125, type="file", name="/etc/motd", check="check_x")
    m.inc("agent_manifest_fetch_error", manifest='obj://B/"k"\n')
    return m


EXPECTED = '''\
# HELP choria_ccm_agent_data_resolve_duration_seconds Time taken to resolve external data
# TYPE choria_ccm_agent_data_resolve_duration_seconds summary
choria_ccm_agent_data_resolve_duration_seconds_sum 0
choria_ccm_agent_data_resolve_duration_seconds_count 0
# HELP choria_ccm_agent_facts_resolve_duration_seconds Time taken to resolve facts in the agent
# TYPE choria_ccm_agent_facts_resolve_duration_seconds summary
choria_ccm_agent_facts_resolve_duration_seconds_sum 0
choria_ccm_agent_facts_resolve_duration_seconds_count 0
# HELP choria_ccm_agent_facts_resolve_error_count Number of failed fact resolutions in the agent
# TYPE choria_ccm_agent_facts_resolve_error_count counter
choria_ccm_agent_facts_resolve_error_count 0
# HELP choria_ccm_agent_manifest_fetch_error_count Number of failed remote manifest checks or downloads
# TYPE choria_ccm_agent_manifest_fetch_error_count counter
choria_ccm_agent_manifest_fetch_error_count{manifest="obj://B/\\"k\\"\\n"} 1
# HELP choria_ccm_facts_gather_duration_seconds Time taken to gather facts
# TYPE choria_ccm_facts_gather_duration_seconds summary
choria_ccm_facts_gather_duration_seconds_sum 1.5
choria_ccm_facts_gather_duration_seconds_count 1
# HELP choria_ccm_healthcheck_duration_seconds Time taken by each health check attempt
# TYPE choria_ccm_healthcheck_duration_seconds summary
choria_ccm_healthcheck_duration_seconds_sum{check="check_x",name="/etc/motd",type="file"} 0.125
choria_ccm_healthcheck_duration_seconds_count{check="check_x",name="/etc/motd",type="file"} 1
# HELP choria_ccm_healthcheck_status_count Final status of each health check
# TYPE choria_ccm_healthcheck_status_count counter
choria_ccm_healthcheck_status_count{check="check_x",name="/etc/motd",status="CRITICAL",type="file"} 1
choria_ccm_healthcheck_status_count{check="goss",name="/etc/motd",status="OK",type="file"} 1
# HELP choria_ccm_manifest_apply_duration_seconds Time taken to apply a manifest
# TYPE choria_ccm_manifest_apply_duration_seconds summary
choria_ccm_manifest_apply_duration_seconds_sum{source="/srv/site.yaml"} 2
choria_ccm_manifest_apply_duration_seconds_count{source="/srv/site.yaml"} 1
# HELP choria_ccm_resource_apply_duration_seconds Time taken to apply a resource
# TYPE choria_ccm_resource_apply_duration_seconds summary
choria_ccm_resource_apply_duration_seconds_sum{name="/etc/motd",provider="posix",type="file"} 0.75
choria_ccm_resource_apply_duration_seconds_count{name="/etc/motd",provider="posix",type="file"} 2
# HELP choria_ccm_resource_state_changed_count Number of resources that changed
# TYPE choria_ccm_resource_state_changed_count counter
choria_ccm_resource_state_changed_count{name="/etc/motd",type="file"} 1
# HELP choria_ccm_resource_state_failed_count Number of resources that failed
# TYPE choria_ccm_resource_state_failed_count counter
choria_ccm_resource_state_failed_count{name="motd",type="file"} 1
# HELP choria_ccm_resource_state_stable_count Number of resources that were stable
# TYPE choria_ccm_resource_state_stable_count counter
choria_ccm_resource_state_stable_count{name="/etc/motd",type="file"} 1
# HELP choria_ccm_resource_state_total_count Total number of resource events recorded
# TYPE choria_ccm_resource_state_total_count counter
choria_ccm_resource_state_total_count{name="/etc/motd",type="file"} 2
choria_ccm_resource_state_total_count{name="motd",type="file"} 1
'''


def test_exposition_text_is_exact():
    assert full_run_metrics().exposition() == EXPECTED


def test_exposition_parses_as_prometheus_text():
    from prometheus_client.parser import text_string_to_metric_families

    text = full_run_metrics().exposition()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["choria_ccm_resource_state_total_count"].type == "counter"
    assert families["choria_ccm_resource_apply_duration_seconds"].type == "summary"
    # (the parser itself renames counter samples to *_total; our text does not)
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
    assert samples[("choria_ccm_resource_state_total_count_total", (("name", "/etc/motd"), ("type", "file")))] == 2
    assert samples[("choria_ccm_agent_manifest_fetch_error_count_total", (("manifest", 'obj://B/"k"\n'),))] == 1
    names = {line.split("{")[0].split(" ")[0] for line in text.splitlines() if not line.startswith("#")}
    assert not any(n.endswith(("_total", "_created")) for n in names)
    assert "choria_ccm_resource_state_total_count" in names


def test_unknown_or_mistyped_metrics_are_dropped_not_raised():
    m = Metrics()
    m.observe("no_such_metric", 1.0)
    m.inc("resource_apply")          # a summary, not a counter
    m.observe("resource_apply", 1.0, type="file")   # missing labels become ""
    assert m.value("resource_apply", type="file") == (1.0, 1)


def test_manager_records_into_metrics():
    from tests import kit

    metrics = Metrics()
    mgr = kit.manager(log_level=None, metrics=metrics)
    mgr.record(ev(noop=True, changed=True))
    assert metrics.value("resource_state_noop", type="file", name="/etc/motd") == 1
    assert metrics.value("resource_state_changed", type="file", name="/etc/motd") == 0
    assert metrics.value("resource_state_total", type="file", name="/etc/motd") == 1


def test_serve_over_http():
    m = full_run_metrics()
    server = serve(m, 0)
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
            assert resp.read().decode() == EXPECTED
        m.inc("agent_facts_resolve_error")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            assert "choria_ccm_agent_facts_resolve_error_count 1\n" in resp.read().decode()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=5)
        assert err.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


def test_write_textfile_is_atomic_and_leaves_nothing_behind(tmp_path):
    target = tmp_path / "ccm.prom"
    target.write_text("old\n")
    m = full_run_metrics()
    write_textfile(m, str(target))
    assert target.read_text() == EXPECTED
    assert oct(target.stat().st_mode & 0o777) == "0o644"
    assert sorted(os.listdir(tmp_path)) == ["ccm.prom"]


def test_write_textfile_failure_cleans_up(tmp_path):
    target = tmp_path / "adir"
    target.mkdir()   # os.replace cannot put a file over a directory
    from ccm.model.errors import CCMError

    with pytest.raises(CCMError, match="cannot write metrics file .*Is a directory"):
        write_textfile(Metrics(), str(target))
    assert sorted(os.listdir(tmp_path)) == ["adir"]
    with pytest.raises(CCMError, match="cannot write metrics file"):
        write_textfile(Metrics(), str(tmp_path / "missing-dir" / "x.prom"))


def test_prometheus_client_is_never_imported():
    code = (
        "import sys, io, contextlib\n"
        "from ccm.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "from ccm.manager import Manager\n"
        "Manager(facts={})\n"
        "from ccm.metrics import Metrics, write_textfile\n"
        "m = Metrics(); m.observe('facts_gather', 1.0); m.exposition()\n"
        "print('prometheus_client' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "False"


def test_label_values_never_hold_url_credentials_or_sensitive_values():
    from ccm import redact

    m = Metrics()
    m.inc("agent_manifest_fetch", manifest="http://svcuser:Pw-1234@h:8080/web.tar.gz")
    m.observe("manifest_apply", 0.5, source="https://u:Pw-1234@h/b.tar.gz")
    redact.register("Sens-9876")
    try:
        m.inc("resource_state_total", type="exec", name="/usr/bin/login --password Sens-9876")
        text = m.exposition()
    finally:
        redact._SECRETS.discard("Sens-9876")
    assert "Pw-1234" not in text and "svcuser" not in text and "Sens-9876" not in text
    assert 'manifest="http://REDACTED@h:8080/web.tar.gz"' in text
    assert 'name="/usr/bin/login --password REDACTED"' in text
