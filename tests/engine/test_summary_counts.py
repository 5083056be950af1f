"""The session summary counts what the events say, and timestamps print as Go prints them."""
from __future__ import annotations

from ccm.model.events import TransactionEvent


def _summary_by_attribute(events):
    """The summary as build() counted it before (an attribute per counter, one event at a time)."""
    from ccm.model.events import CRITICAL, OK, WARNING, SessionStartEvent, SessionSummary

    s = SessionSummary()
    unique = set()
    duration_sum = 0
    for ev in events:
        if isinstance(ev, SessionStartEvent):
            s.start_time_ns = ev.timestamp_ns
            continue
        s.total_resources += 1
        unique.add(ev.ref)
        duration_sum += ev.duration_ns
        s.end_time_ns = max(s.end_time_ns, ev.timestamp_ns)
        if ev.failed:
            s.failed_resources += 1
        elif ev.skipped:
            s.skipped_resources += 1
        elif ev.changed:
            s.changed_resources += 1
        else:
            s.stable_resources += 1
        if ev.refreshed:
            s.refreshed_count += 1
        s.requirements_unmet_count += len(ev.unmet_requirements)
        for h in ev.health_checks:
            s.health_checked_count += 1
            if h.status == OK:
                s.health_check_ok_count += 1
            elif h.status == WARNING:
                s.health_check_warning_count += 1
            elif h.status == CRITICAL:
                s.health_check_critical_count += 1
            else:
                s.health_check_unknown_count += 1
    s.unique_resources = len(unique)
    s.total_errors = s.failed_resources
    if s.start_time_ns and s.end_time_ns:
        s.total_duration_ns = max(0, s.end_time_ns - s.start_time_ns)
    else:
        s.total_duration_ns = duration_sum
    return s


def test_summary_counts_what_it_counted_before():
    import random

    from ccm.model.events import EventRecord, HealthCheckResult, SessionStartEvent, SessionSummary

    rng = random.Random(16)
    for trial in range(200):
        events = []
        if rng.random() < 0.7:
            events.append(SessionStartEvent("s", rng.choice([0, 1_000, 5_000_000_000])))
        for _i in range(rng.randint(0, 12)):
            ev = TransactionEvent(
                "file", rng.choice("abcd"), alias=rng.choice(["", "x"]), duration_ns=rng.randint(0, 10**9),
                timestamp_ns=rng.choice([0, 1, 2_000_000_000, 9_000_000_000]),
                failed=rng.random() < 0.2, skipped=rng.random() < 0.2, changed=rng.random() < 0.4,
                refreshed=rng.random() < 0.2,
                unmet_requirements=[f"exec#{n}" for n in range(rng.randint(0, 2))],
                health_checks=[HealthCheckResult(rng.choice([0, 1, 2, 3, 7])) for _ in range(rng.randint(0, 3))])
            events.append(EventRecord(ev) if rng.random() < 0.5 else ev)
        if rng.random() < 0.2:   # more start events, anywhere (the last one gives the start time)
            events.insert(rng.randint(0, len(events)), SessionStartEvent("t", rng.choice([0, 7_000])))
        assert SessionSummary.build(events) == _summary_by_attribute(events), trial
        assert SessionSummary.build(iter(events)) == _summary_by_attribute(events), trial


def test_rfc3339_fraction_as_the_format_spec_gave_it():
    import random

    from ccm.gocompat.rfc3339 import rfc3339

    rng = random.Random(3339)
    for ns in [1_735_787_045_000_000_000 + f for f in (1, 10, 100_000_000, 999_999_999, 120_000_000)] + [
            rng.randint(-10**19, 10**19) for _ in range(2000)] + [1.5e18, True]:
        secs, frac = divmod(int(ns), 10**9)
        want = rfc3339(secs * 10**9) if secs else "1970-01-01T00:00:00Z"
        want = want[:-1] + ("." + f"{frac:09d}".rstrip("0") if frac else "") + "Z"
        assert rfc3339(ns) == want, ns
