"""Session stores and the event wire format."""
from __future__ import annotations

import json
import os
import re

import pytest

from ccm.clock import is_ksuid, new_ksuid, now_ns
from ccm.gocompat.rfc3339 import rfc3339
from ccm.model.errors import SessionError
from ccm.model.events import HealthCheckResult, ResourceState, SessionStartEvent, SessionSummary, TransactionEvent
from ccm.session import MemoryStore
from ccm.session.directory import DirectoryStore


def event(name, **kw):
    """A new event, stamped as its maker stamps it (``ccm.clock``)."""
    kw.setdefault("requested_ensure", "present")
    kw.setdefault("event_id", new_ksuid())
    kw.setdefault("timestamp_ns", now_ns())
    return TransactionEvent(type="file", name=name, provider="posix", **kw)


def test_event_json_field_order_and_formats():
    ev = event("/etc/motd", alias="motd", duration_ns=1500, timestamp_ns=1_735_787_045_120_000_000)
    ev.status = ResourceState(type="file", name="/etc/motd", ensure="present", timestamp_ns=1_735_787_045_000_000_000,
                              extra={"metadata": {"name": "/etc/motd"}})
    ev.health_checks = [HealthCheckResult(status=2, tries=3, output="CRITICAL")]
    d = ev.to_dict()
    assert list(d) == ["protocol", "event_id", "timestamp", "type", "provider", "name", "alias",
                       "requested_ensure", "final_ensure", "duration", "properties", "status",
                       "health_check", "error", "changed", "refreshed", "failed", "skipped", "noop",
                       "unmet_requirements"]
    assert d["protocol"] == "io.choria.ccm.v1.transaction.event"
    assert d["timestamp"] == "2025-01-02T03:04:05.12Z"
    assert d["duration"] == 1500
    assert d["health_check"] == [{"status": 2, "tries": 3, "Output": "CRITICAL"}]
    assert d["status"]["timestamp"] == "2025-01-02T03:04:05Z"
    assert d["status"]["protocol"] == "io.choria.ccm.v1.resource.file.state"
    assert d["error"] == [] and d["unmet_requirements"] == []
    again = TransactionEvent.from_dict(json.loads(json.dumps(d)))
    assert again.to_dict() == d


def test_ksuid_shape():
    ids = {new_ksuid() for _ in range(100)}
    assert len(ids) == 100 and all(is_ksuid(i) for i in ids)
    assert rfc3339(0) == "0001-01-01T00:00:00Z"


def test_a_given_event_id_is_kept_and_can_be_replaced():
    from ccm.model.events import EventRecord

    given = event("b", event_id="2Mx7JmTQgpVXF3m9uCaG3oBrH3v")
    assert given.event_id == "2Mx7JmTQgpVXF3m9uCaG3oBrH3v" == EventRecord(given).event_id == given.record().event_id
    given.event_id = "x"
    assert given.event_id == "x" and given.to_dict()["event_id"] == "x"
    assert event("c").event_id != event("c").event_id
    assert TransactionEvent("file", "unstamped").to_dict()["event_id"] == ""   # the model draws no id itself


def test_memory_store_last_event_and_refresh():
    s = MemoryStore()
    s.start_session()
    s.record(event("a", changed=True))
    s.record(event("a", changed=False))
    s.record(event("b", alias="bee", failed=True))
    assert s.should_refresh(["file#a"]) is False
    assert s.is_failed("file#bee") is True
    with pytest.raises(SessionError, match="no events found for file#zzz"):
        s.is_failed("file#zzz")
    summary = s.summary()
    assert (summary.total_resources, summary.unique_resources, summary.failed_resources,
            summary.changed_resources, summary.stable_resources) == (3, 2, 1, 1, 1)


def test_directory_store_order_within_one_second(tmp_path):
    s = DirectoryStore(str(tmp_path / "sess"))
    s.start_session()
    for i in range(50):
        s.record(event("same", changed=(i % 2 == 0), duration_ns=i))
    files = [f for f in os.listdir(tmp_path / "sess")]
    assert all(f.endswith(".event") for f in files) and len(files) == 51
    assert not any(f.startswith(".tmp") for f in files)
    replay = DirectoryStore(str(tmp_path / "sess")).transaction_events()
    assert [e.duration_ns for e in replay] == list(range(50))
    assert DirectoryStore(str(tmp_path / "sess")).last_event("file#same").duration_ns == 49


def test_directory_store_tolerates_torn_and_foreign_files(tmp_path, caplog):
    d = tmp_path / "sess"
    s = DirectoryStore(str(d))
    s.start_session()
    s.record(event("ok"))
    (d / "torn.event").write_text('{"protocol": "io.choria.ccm.v1.transa')
    (d / "foreign.event").write_text('{"protocol": "io.example.other"}')
    (d / "notes.txt").write_text("ignored")
    # a file written by upstream: plain <ksuid>.event, no ordering prefix
    upstream = event("from-go")
    (d / f"{upstream.event_id}.event").write_text(json.dumps(upstream.to_dict(), indent=2))
    names = [e.name for e in DirectoryStore(str(d)).transaction_events()]
    assert sorted(names) == ["from-go", "ok"]


def test_directory_store_rejects_bad_ids_and_missing_dir(tmp_path):
    s = DirectoryStore(str(tmp_path / "missing"))
    with pytest.raises(SessionError, match="does not exist"):
        s.record(event("a"))
    s2 = DirectoryStore(str(tmp_path))
    bad = event("a")
    bad.event_id = "../../etc/passwd"
    with pytest.raises(SessionError, match="invalid event ID"):
        s2.record(bad)
    with pytest.raises(SessionError):
        DirectoryStore("  ")


def test_summary_counts_by_priority():
    events = [SessionStartEvent(timestamp_ns=1_000_000_000),
              event("a", failed=True, changed=True, timestamp_ns=2_000_000_000),
              event("b", skipped=True, unmet_requirements=["x#y", "x#z"], timestamp_ns=2_000_000_000),
              event("c", changed=True, refreshed=True, timestamp_ns=2_000_000_000),
              event("d", timestamp_ns=3_000_000_000, duration_ns=500_000_000)]
    s = SessionSummary.build(events)
    assert (s.failed_resources, s.skipped_resources, s.changed_resources, s.stable_resources) == (1, 1, 1, 1)
    assert s.refreshed_count == 1 and s.requirements_unmet_count == 2 and s.total_errors == 1
    # upstream: end_time is the latest event timestamp (issue 15), not the end of its work
    assert s.end_time_ns == 3_000_000_000 and s.total_duration_ns == 2_000_000_000
    assert list(s.to_dict())[:3] == ["start_time", "end_time", "total_duration"]


def _same_answers(store, refs):
    """The indexed lookup against the scan over every event it replaced."""
    for ref in refs:
        t, n = ref.split("#", 1)
        scanned = store.events_for(t, n)
        if not scanned:
            for ask in (store.last_event, store.is_failed):
                with pytest.raises(SessionError, match=f"no events found for {re.escape(ref)}"):
                    ask(ref)
        else:
            assert store.last_event(ref).event_id == scanned[-1].event_id
            assert store.is_failed(ref) is (scanned[-1].failed or bool(scanned[-1].unmet_requirements))


def test_memory_store_index_matches_a_scan_and_resets():
    s = MemoryStore()
    s.start_session()
    s.record(event("a", alias="x", changed=True))
    s.record(event("b", alias="a"))  # alias of a later event shadows the earlier name
    s.record(event("x"))
    s.record(TransactionEvent(type="exec", name="a", provider="posix"))
    _same_answers(s, ["file#a", "file#x", "file#b", "exec#a", "exec#b", "file#zzz"])
    assert s.last_event("file#a").name == "b" and s.last_event("file#x").name == "x"
    s.start_session()
    _same_answers(s, ["file#a"])
    s.record(event("a"))
    s.stop(destroy=True)
    _same_answers(s, ["file#a"])


def test_memory_store_is_failed_answers_as_the_generic_lookup():
    """MemoryStore.is_failed reads its index directly for a well-formed ref: the answers
    and errors of SessionStore's last_event-based one."""
    from ccm.model.errors import ValidationError
    from ccm.session import SessionStore

    s = MemoryStore()
    s.start_session()
    failed, unmet, fine = event("f", alias="af"), event("u"), event("ok")
    failed.fail("boom")
    unmet.unmet_requirements = ["file#x"]
    for ev in (failed, unmet, fine):
        s.record(ev)
    for ref in ("file#f", "file#af", "file#u", "file#ok"):
        assert s.is_failed(ref) is SessionStore.is_failed(s, ref)
    assert [s.is_failed(r) for r in ("file#f", "file#af", "file#u", "file#ok")] == [True, True, True, False]
    refs = ["file#ok", "file#u", "file#af", "file#ok", "file#f"]
    assert s.failed_refs(refs) == SessionStore.failed_refs(s, refs) == ["file#u", "file#af", "file#f"]
    with pytest.raises(SessionError, match="no events found for file#none"):
        s.failed_refs(["file#ok", "file#none"])
    for bad in ("file", "file#", "#x", "a#b#c", 7):
        with pytest.raises(ValidationError) as fast:
            s.is_failed(bad)   # type: ignore[arg-type]
        with pytest.raises(ValidationError) as generic:
            SessionStore.is_failed(s, bad)   # type: ignore[arg-type]
        assert str(fast.value) == str(generic.value)


@pytest.mark.parametrize("built_first", [False, True])
def test_memory_store_never_answers_a_reference_with_two_hashes(built_first):
    """A name holding "#" is filed under no reference (a reference has exactly one "#"),
    whether the index files it as it is recorded or builds itself later."""
    from ccm.model.errors import ValidationError

    s = MemoryStore()
    s.start_session()
    if built_first:
        s.record(event("first"))
        assert s.failed_refs(["file#first"]) == []   # builds the index: later events are filed as recorded
    s.record(event("a#b", alias="c"))
    s.record(event("d", alias="e#f"))
    assert s.last_event("file#c").name == "a#b" and s.last_event("file#d").name == "d"
    for bad in ("file#a#b", "file#e#f", ["file#d"]):
        with pytest.raises(ValidationError):
            s.failed_refs([bad])   # type: ignore[list-item]
    with pytest.raises(SessionError, match="no events found for file#a"):
        s.failed_refs(["file#a"])


def test_memory_store_index_built_by_the_first_lookup_then_kept_up_to_date():
    """The index is made when first asked (a run without require/subscribe never asks),
    from what was recorded so far; records after that update it."""
    import random

    rng = random.Random(7)
    refs = [f"{t}#{n}" for t in ("file", "exec") for n in "abcxyz"]
    for keep in (True, False):
        s = MemoryStore()
        s.keep_events = keep
        s.start_session()
        for step in range(300):
            if rng.random() < 0.6:
                t = rng.choice(["file", "exec"])
                ev = event(rng.choice("abcxy"), alias=rng.choice(["", "", "z", "a", "x"]))
                ev.type = t
                s.record(ev)
            else:
                _same_answers(s, [rng.choice(refs)])
            if step == 100:
                s.stop(destroy=True)
            elif step == 200:
                s.start_session()
        _same_answers(s, refs)


def test_directory_store_index_sees_other_writers(tmp_path):
    """Events another process adds, back-dates or deletes are seen by the next lookup."""
    mine, theirs = DirectoryStore(str(tmp_path)), DirectoryStore(str(tmp_path))
    mine.start_session()
    mine.record(event("a", changed=False))
    assert mine.should_refresh(["file#a"]) is False
    theirs.record(event("a", changed=True))  # a later event written by someone else
    assert mine.should_refresh(["file#a"]) is True
    mine.record(event("b", alias="bee", failed=True))
    _same_answers(mine, ["file#a", "file#b", "file#bee", "file#zzz"])
    # an upstream-style file (no ordering prefix) dated before everything else
    old = event("c", timestamp_ns=1_000_000_000)
    (tmp_path / f"{old.event_id}.event").write_text(json.dumps(old.to_dict()))
    assert mine.last_event("file#c").event_id == old.event_id
    newest_a = [p for p in os.listdir(tmp_path) if p.endswith(".event")
                and json.loads((tmp_path / p).read_text()).get("changed") is True]
    assert len(newest_a) == 1
    newest_a = newest_a[0]
    os.unlink(tmp_path / newest_a)  # deleting the newest "a" brings back the older one
    assert mine.should_refresh(["file#a"]) is False
    _same_answers(mine, ["file#a", "file#b", "file#c"])
    (tmp_path / "junk.event").write_text("{not json")
    _same_answers(mine, ["file#a", "file#b", "file#c"])


def test_ksuid_encoding_is_base62_of_time_and_random(monkeypatch):
    from ccm import clock

    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    for raw in (bytes(16), b"\xff" * 16, bytes(range(16)), os.urandom(16)):
        monkeypatch.setattr(clock, "random16", lambda raw=raw: raw)
        for ts in (1_400_000_000, 1_735_787_045, 1_400_000_000 + 2**32 - 1):
            n = int.from_bytes((ts - 1_400_000_000).to_bytes(4, "big") + raw, "big")
            digits = ""
            while n:
                digits = alphabet[n % 62] + digits
                n //= 62
            assert clock.new_ksuid(ts) == digits.rjust(27, "0")
            assert clock.ksuid_text((ts * 10**9 + 999_999_999, raw)) == digits.rjust(27, "0")


def test_rfc3339_matches_datetime_formatting():
    from datetime import datetime, timezone

    for ns in (1, 10**9, 1_735_787_045_120_000_000, 1_735_787_045_000_000_001, -1,
               -55_813_925_109_364_697_046, 253_402_300_799 * 10**9):
        secs, frac = divmod(ns, 10**9)
        want = datetime.fromtimestamp(secs, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        want += ("." + f"{frac:09d}".rstrip("0") if frac else "") + "Z"
        assert rfc3339(ns) == want and rfc3339(ns) == want  # again: from the one-entry cache


@pytest.mark.parametrize("kind", ["memory", "directory"])
def test_stores_keeping_records_answer_as_with_whole_events(tmp_path, kind):
    """``keep_events = False`` (``ccm apply`` without ``--json``): the store keeps each
    event's flags, counters and errors only, and every lookup, the summary and the
    --last-run failures are what they are with the whole events kept."""
    from ccm.lastrun import LastRun

    def recorded():
        return [event("a", alias="x", changed=True, timestamp_ns=2_000_000_000),
                event("b", failed=True, errors=["boom"], properties={"content": "big" * 1000},
                      health_checks=[HealthCheckResult(status=2, output="crit"), HealthCheckResult(status=0)],
                      timestamp_ns=2_000_000_001),
                event("c", skipped=True, unmet_requirements=["file#b"], timestamp_ns=2_000_000_002),
                event("d", refreshed=True, noop=True, changed=True, duration_ns=5, timestamp_ns=2_000_000_003)]

    answers = []
    for keep in (True, False):
        store = (MemoryStore() if kind == "memory"
                 else DirectoryStore(str(tmp_path / f"store-{keep}")))
        store.keep_events = keep
        store.start_session()
        kept = [store.record(e) for e in recorded()]
        assert all(isinstance(k, TransactionEvent) == keep for k in kept)
        summary = store.summary().to_dict()
        summary.pop("start_time"), summary.pop("total_duration")
        run = LastRun(manifest="m")
        run.finish(1, events=store.transaction_events() if kind == "memory" else kept)
        answers.append((summary, run.failed,
                        [store.is_failed(r) for r in ("file#a", "file#x", "file#b", "file#c", "file#d")],
                        store.should_refresh(["file#a"]), store.should_refresh(["file#b"]),
                        [(e.name, e.noop, e.changed) for e in store.events_for("file", "x")],
                        [k.label for k in kept], [k.ref for k in kept]))
    assert answers[0] == answers[1]
    assert answers[1][0]["health_check_critical_count"] == 1
    assert answers[1][1] == [{"resource": "file#b", "errors": ["boom"]}]


def test_directory_store_lists_again_only_after_foreign_changes(tmp_path, monkeypatch):
    """With an inotify watch, lookups after this store's own writes answer from the index;
    a file another writer adds, a torn file, a deletion or the directory being replaced
    make the next lookup list the directory (and see the change)."""
    import ccm.session.directory as d
    from ccm.session.watch import DirWatch

    if DirWatch.open(str(tmp_path)) is None:
        pytest.skip("no inotify here")
    listings = []
    real = os.listdir
    store_dir = str(tmp_path / "s")
    monkeypatch.setattr(d.os, "listdir", lambda p: (p == store_dir and listings.append(p)) or real(p))
    mine, theirs = DirectoryStore(str(tmp_path / "s")), DirectoryStore(str(tmp_path / "s"))
    mine.start_session()
    mine.record(event("a"))
    assert mine.should_refresh(["file#a"]) is False and len(listings) == 1
    for name in "bcd":
        mine.record(event(name, changed=True))
        assert mine.should_refresh([f"file#{name}"]) is True
    assert len(listings) == 1   # only our own writes since: no listing
    theirs.record(event("a", changed=True))
    assert mine.should_refresh(["file#a"]) is True and len(listings) == 2
    torn = tmp_path / "s" / f"{new_ksuid()}.event"
    torn.write_text("{")
    assert mine.should_refresh(["file#b"]) is True and len(listings) == 3
    assert mine.should_refresh(["file#b"]) is True and len(listings) == 4   # retried while torn
    torn.unlink()
    newest_a = [p for p in (tmp_path / "s").iterdir() if '"changed": true' in p.read_text()
                and '"name": "a"' in p.read_text()]
    newest_a[0].unlink()
    assert mine.should_refresh(["file#a"]) is False and len(listings) == 5
    assert mine.should_refresh(["file#a"]) is False and len(listings) == 5
    for p in (tmp_path / "s").iterdir():
        p.unlink()
    (tmp_path / "s").rmdir()
    with pytest.raises(SessionError, match="no events found for file#a"):
        mine.last_event("file#a")
    (tmp_path / "s").mkdir()
    theirs.record(event("a", changed=True))
    assert mine.should_refresh(["file#a"]) is True


def test_ksuid_same_encoding_before_and_after_the_pair_table(monkeypatch):
    """The first ids of a process are encoded digit by digit, later ones two digits per
    step from a table: the same ids either way."""
    from ccm import clock

    raws = [bytes(16), b"\xff" * 16, bytes(range(16))] + [os.urandom(16) for _ in range(5)]
    ts = 1_735_787_045

    def ids():
        out = []
        for raw in raws:
            monkeypatch.setattr(clock, "random16", lambda raw=raw: raw)
            out.append(clock.new_ksuid(ts))
        return out

    monkeypatch.setattr(clock, "_PAIRS", [])
    monkeypatch.setattr(clock, "_encoded", [0])
    digit_by_digit = ids()
    assert clock._PAIRS == []
    monkeypatch.setattr(clock, "_encoded", [clock._PAIRS_AFTER])
    paired = ids()
    assert len(clock._PAIRS) == 62 * 62
    assert paired == digit_by_digit and all(clock.is_ksuid(i) for i in paired)
