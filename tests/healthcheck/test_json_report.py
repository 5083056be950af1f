"""The one-document JSON report of a run (``ccm apply --json``, ``ccm session report --json``)."""
from __future__ import annotations

import json

from ccm.model.events import CRITICAL, HealthCheckResult, SessionStartEvent, SessionSummary, TransactionEvent
from ccm.report import json_report, json_report_text


def test_json_report_holds_every_event_and_the_summary():
    start = SessionStartEvent(timestamp_ns=1_700_000_000_000_000_000)
    ok = TransactionEvent(type="file", name="/etc/motd", provider="posix", requested_ensure="present",
                          final_ensure="present", changed=True, timestamp_ns=1_700_000_001_000_000_000)
    bad = TransactionEvent(type="exec", name="check", provider="posix", failed=True,
                           errors=['health check "check_x" status "CRITICAL": down'],
                           health_checks=[HealthCheckResult(status=CRITICAL, tries=2, output="down", name="check_x")],
                           timestamp_ns=1_700_000_002_500_000_000)
    events = [start, ok, bad]
    summary = SessionSummary.build(events)
    doc = json_report(events, summary)
    assert list(doc) == ["events", "summary"]
    assert [e["name"] for e in doc["events"]] == ["/etc/motd", "check"]
    assert doc["events"][1]["health_check"] == [{"status": 2, "tries": 2, "Output": "down"}]
    assert doc["events"][1]["error"] == ['health check "check_x" status "CRITICAL": down']
    assert doc["summary"] == summary.to_dict()
    assert doc["summary"]["total_duration"] == 2_500_000_000
    assert (doc["summary"]["changed_resources"], doc["summary"]["failed_resources"],
            doc["summary"]["health_check_critical_count"]) == (1, 1, 1)

    text = json_report_text(events, summary)
    assert text.endswith("}\n") and text.count("\n") > 10
    assert json.loads(text) == doc
    parsed = json.loads(text)
    assert [TransactionEvent.from_dict(e).to_dict() for e in parsed["events"]] == doc["events"]
