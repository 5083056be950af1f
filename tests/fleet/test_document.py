"""The report document: exactly the issue's fields, redacted, nothing of stable resources or content."""
from __future__ import annotations

import json

import pytest

from ccm import redact
from ccm.fleet import document
from ccm.fleet.subjects import fnv1a64_hex, instance_token, manifest_id
from ccm.model.events import SessionSummary, TransactionEvent


def event(name, *, changed=False, failed=False, errors=None, unmet=None, skipped=False):
    return TransactionEvent("file", name, provider="posix", requested_ensure="present", changed=changed,
                            failed=failed, errors=errors, unmet_requirements=unmet, skipped=skipped,
                            properties={"content": "SECRET-CONTENT", "owner": "root"})


def build(events, **kw):
    args = dict(instance="0123456789abcdef", hostname="web1", labels={"role": "web"}, source="/etc/ccm/site.yaml",
                sha256="ab" * 32, start_ns=1_700_000_000_000_000_000, end_ns=1_700_000_001_500_000_000,
                exit_code=1, noop=False)
    args.update(kw)
    return document.build(events, SessionSummary.build(events), **args)


def test_exactly_the_fields_of_the_issue_in_order():
    doc = build([event("/a", changed=True), event("/b"), event("/c", failed=True, errors=["boom"])])
    assert list(doc) == list(document.KEYS)
    assert doc["manifest"] == {"source": "/etc/ccm/site.yaml", "sha256": "ab" * 32}
    assert doc["start"] == "2023-11-14T22:13:20Z" and doc["end"] == "2023-11-14T22:13:21.5Z"
    assert doc["duration"] == 1.5 and doc["exit_code"] == 1 and doc["noop"] is False
    assert doc["summary"]["total"] == 3 and doc["summary"]["changed"] == 1 and doc["summary"]["failed"] == 1
    # failed first, then changed; the stable /b is not there; no properties, content or diff
    assert doc["resources"] == [{"resource": "file#/c", "outcome": "failed", "error": "boom"},
                                {"resource": "file#/a", "outcome": "changed", "error": ""}]
    assert "SECRET-CONTENT" not in json.dumps(doc) and "/b" not in json.dumps(doc["resources"])
    assert document.check(doc) is None


def test_errors_are_one_redacted_line_and_sensitive_values_never_appear():
    redact.register("hunter2-sensitive")
    try:
        doc = build([event("/etc/app.conf", failed=True,
                           errors=["cannot fetch https://bob:pw@repo.example/x\nsecond line hunter2-sensitive",
                                   "x" * 1000])],
                    labels={"role": "hunter2-sensitive"}, source="https://alice:pw@repo.example/site.tgz")
    finally:
        redact._SECRETS.discard("hunter2-sensitive")
    text = json.dumps(doc)
    assert "hunter2-sensitive" not in text and "bob:pw" not in text and "alice:pw" not in text
    error = doc["resources"][0]["error"]
    assert "\n" not in error and len(error) <= document.MAX_ERROR and error.endswith("...")
    assert error.startswith("cannot fetch https://REDACTED@repo.example/x second line REDACTED;")
    assert doc["manifest"]["source"] == "https://REDACTED@repo.example/site.tgz"
    assert doc["labels"] == {"role": "REDACTED"}


def test_unmet_requirements_are_failures_with_their_reason_and_the_list_is_capped():
    events = [event(f"/f{i}", changed=True) for i in range(150)] + [event("/u", failed=True, unmet=["file#/x"])]
    doc = build(events)
    assert len(doc["resources"]) == document.MAX_RESOURCES
    assert doc["resources"][0] == {"resource": "file#/u", "outcome": "failed", "error": "unmet requirements: file#/x"}
    assert doc["summary"]["changed"] == 150   # the counts stay whole


@pytest.mark.parametrize("events,outcome", [
    ([], "ok"), ([event("/a")], "ok"), ([event("/a", changed=True)], "changed"),
    ([event("/a", changed=True), event("/b", failed=True, errors=["x"])], "failed"),
])
def test_host_outcome(events, outcome):
    assert document.outcome(build(events)) == outcome


@pytest.mark.parametrize("mutate,problem", [
    (lambda d: d.pop("instance"), "instance"), (lambda d: d.update(labels={"a": 1}), "labels"),
    (lambda d: d.update(summary={"total": "3"}), "summary"), (lambda d: d.update(resources=[1]), "resources"),
    (lambda d: d.update(end="yesterday"), "end"), (lambda d: d.update(manifest=None), "manifest"),
    (lambda d: d.update(duration=True), "duration"),
])
def test_check_names_what_is_wrong(mutate, problem):
    doc = build([])
    mutate(doc)
    assert problem in document.check(doc)
    assert document.check([1]) == "not a JSON object"


@pytest.mark.parametrize("text,expected", [
    ("2023-11-14T22:13:20Z", 1_700_000_000.0), ("2023-11-14T22:13:21.5Z", 1_700_000_001.5),
    ("2023-11-14T22:13:20+01:00", None), ("2023-13-14T22:13:20Z", None), ("2023-11-14 22:13:20Z", None),
    ("2023-11-14T22:13:20.Z", None), ("x" * 100, None),
])
def test_parse_time(text, expected):
    assert document.parse_time(text) == expected


def test_instance_tokens_are_registrations_ids():
    from ccm.registration.subjects import fnv1a64

    for text in ("a", "foobar", "web1.example.net", "ünïcode"):
        assert fnv1a64_hex(text) == format(fnv1a64(text.encode()), "016x")
    assert fnv1a64_hex("a") == "af63dc4c8601ec8c" and fnv1a64_hex("foobar") == "85944171f73967e8"
    assert instance_token("web1") == fnv1a64_hex("web1") and manifest_id("/x") == fnv1a64_hex("/x")


def test_a_rejected_manifest_is_a_failed_report_with_its_one_line_error():
    doc = build([], exit_code=1, error="invalid YAML:\n  line 3 https://bob:hunter2@example.com/x")
    assert list(doc) == list(document.KEYS) + ["error"] and doc["resources"] == []
    assert doc["error"].startswith("invalid YAML: line 3 http")
    assert "\n" not in doc["error"] and "hunter2" not in doc["error"]
    assert document.check(doc) is None and document.outcome(doc) == "failed"
    assert document.check(dict(doc, error=5)) == "error is not text"
    assert "error" not in build([])
