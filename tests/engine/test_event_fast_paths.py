"""The per-event fast paths (issue 16) give what the plain code gave: an event's
properties made on first read equal the ``to_dict()`` the flow used to store; the status
line rendered in one step equals ``event_line`` through the generic ``log``."""
from __future__ import annotations

import grp
import io
import json
import os
import pwd
import re
import socket

from ccm import log as ccmlog
from ccm.log import INFO, UserLogger
from ccm.model.events import TransactionEvent
from ccm.report import event_line, log_event, status_logger
from tests.kit_extra import build, make_manager

ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name


def _file_props(tmp_path, manager=None, **extra):
    target = tmp_path / "motd"
    target.write_text("hello\n")
    raw = {"name": str(target), "ensure": "present", "content": "hello\n", "mode": "0644", "owner": ME,
           "group": MYGROUP}
    raw.update(extra)
    return build(manager or make_manager(), "file", raw)


def test_properties_made_on_first_read_equal_the_eager_dict(tmp_path):
    manager = make_manager()
    _spec, props = _file_props(tmp_path, manager, alias="motd", content="changed\n")
    eager = props.to_dict()
    event = manager.apply_resource(props)
    assert event.changed and not event.failed
    assert vars(event)["_properties"] is None   # not made by the flow
    lazy = event.properties
    assert lazy == eager and lazy["alias"] == "motd"
    assert event.properties is lazy   # made once
    twin = TransactionEvent.from_dict(json.loads(json.dumps(event.to_dict())))
    assert twin.properties == eager and twin.to_dict() == event.to_dict()


def test_equality_repr_and_json_see_the_properties(tmp_path):
    _spec, props = _file_props(tmp_path)
    eager = TransactionEvent("file", props.name, event_id="x", timestamp_ns=1, properties=props.to_dict())
    lazy = TransactionEvent("file", props.name, event_id="x", timestamp_ns=1)
    lazy.properties_from(props)
    assert repr(lazy) == repr(eager) and lazy == eager
    other = TransactionEvent("file", props.name, event_id="x", timestamp_ns=1)
    other.properties_from(props)
    assert json.dumps(other.to_dict()) == json.dumps(eager.to_dict())


def test_redacted_values_stay_redacted():
    _spec, props = build(make_manager(), "archive", {
        "name": "/tmp/never/x.tgz", "ensure": "present", "url": "https://user:pw@example.com/x.tgz", "password": "pw",
        "username": "user", "checksum": "0" * 64, "owner": ME, "group": MYGROUP})
    event = TransactionEvent("archive", props.name)
    event.properties_from(props)
    assert event.properties == props.to_dict()
    assert event.properties["password"] == "REDACTED" and "pw@" not in event.properties["url"]


def test_assigning_properties_replaces_the_source(tmp_path):
    _spec, props = _file_props(tmp_path)
    event = TransactionEvent("file", props.name)
    assert event.properties == {}
    event.properties_from(props)
    event.properties = {"name": "given"}
    assert event.properties == {"name": "given"}
    event.properties_from(props)
    assert event.properties == props.to_dict()


def test_an_event_begun_by_the_flow_equals_the_one_init_makes(tmp_path):
    _spec, props = _file_props(tmp_path)
    for args in (("file", "/etc/motd", "", "present", False), ("exec", "x", "al", "", True)):
        begun = TransactionEvent.begin(*args, props)
        made = TransactionEvent(type=args[0], name=args[1], alias=args[2], requested_ensure=args[3],
                                health_check_only=args[4])
        made.properties_from(props)
        assert isinstance(begun._id_drawn[0], float) and len(begun._id_drawn[1]) == 16
        assert begun._id_drawn[1] != made._id_drawn[1]   # its own random part
        begun._id_drawn, begun.timestamp_ns = made._id_drawn, made.timestamp_ns
        assert begun == made and repr(begun) == repr(made) and begun.to_dict() == made.to_dict()
        assert begun.event_id == made.event_id
        assert [getattr(begun, f) for f in begun._value_fields] == [getattr(made, f) for f in made._value_fields]
    first, second = (TransactionEvent.begin("file", n, "", "", False, props) for n in "ab")
    first.fail("boom")
    first.unmet_requirements.append("exec#x")
    first.health_checks.append("check")
    first.changed = first.noop = True
    first.provider = "posix"
    assert (second.errors, second.unmet_requirements, second.health_checks) == ([], [], [])
    assert not second.changed and not second.noop and second.provider == "" and not second.failed


# --- the status line of a resource --------------------------------------------------------

def _events():
    """One event of every outcome the status line tells apart."""
    def ev(**kw):
        base = {"type": "file", "name": "/etc/motd", "provider": "posix", "requested_ensure": "present"}
        base.update(kw)
        return TransactionEvent(**base)

    return [
        ev(), ev(changed=True), ev(refreshed=True, changed=True), ev(skipped=True), ev(alias="motd"),
        ev(duration_ns=1_234_567_890), ev(duration_ns=999_999), ev(duration_ns=1_000_000), ev(duration_ns=-5),
        ev(noop=True, changed=True, noop_message="would change content"), ev(noop=True),
        ev(failed=True, errors=["boom", "bang"]), ev(skipped=True, unmet_requirements=["exec#a", "file#b"]),
        ev(requested_ensure="", provider=""), ev(type="service", name="nginx", provider="systemd",
                                                requested_ensure="running", changed=True),
        # control characters in a name, an alias, an ensure (issue 24): escaped alike on both paths
        ev(name="/tmp/a\x1b[2J\rb\nc\x9b"), ev(alias="m\x07\n"), ev(type="package", name="zsh",
                                                                requested_ensure="5.9\x1b[31m"),
        ev(name="/tmp/\x1b[1A", failed=True, errors=["boom\x1b[2K\nstderr:\n  \x1b]0;x\x07"]),
    ]


def _loggers():
    from ccm.agent.log import LogfmtLogger
    from ccm.log import WARN

    def recording(**kw):
        log = UserLogger(stream=io.StringIO(), **kw)
        log.records = []
        return log

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    return {
        "plain": lambda: UserLogger(stream=io.StringIO()),
        "terminal": lambda: UserLogger(stream=Terminal()),
        "colour": lambda: UserLogger(stream=io.StringIO(), colour=True),
        "no colour": lambda: UserLogger(stream=io.StringIO(), colour=False),
        "records": lambda: recording(colour=False),
        "bound": lambda: recording().bind(manifest="m.yaml", depth=2),
        "quiet": lambda: recording(quiet=True),
        "warn level": lambda: UserLogger(stream=io.StringIO(), level=WARN),
        "logfmt": lambda: LogfmtLogger(stream=io.StringIO(), colour=False, level=0),
    }


def _seen(log):
    text = log.stream.getvalue()
    text = re.sub(r"time=\S+ ", "time=T ", text)
    return text, log.records


def test_status_lines_equal_the_generic_rendering_of_event_line():
    for label, make in _loggers().items():
        for event in _events():
            fast, plain = make(), make()
            log_event(fast, event)
            level, message, attrs = event_line(event)
            plain.log(level, message, *attrs)
            assert _seen(fast) == _seen(plain), (label, event)


def test_status_logger_lines_equal_the_generic_rendering_of_event_line():
    for label, make in _loggers().items():
        fast, plain = make(), make()
        log_status = status_logger(fast)   # once per run
        for event in _events():
            log_status(event)
            level, message, attrs = event_line(event)
            plain.log(level, message, *attrs)
        assert _seen(fast) == _seen(plain), label


def test_status_logger_on_stdout_follows_the_stream_of_each_line(monkeypatch):
    """A logger without its own stream writes to the ``sys.stdout`` of each line, coloured
    as that stream asks (``colour_wanted``), like ``log``."""
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    log_status = status_logger(UserLogger())
    outs = [io.StringIO(), Terminal(), io.StringIO()]
    for out in outs:
        monkeypatch.setattr("sys.stdout", out)
        log_status(_events()[1])
    assert [o.getvalue() for o in outs] == [
        " WARN  file#/etc/motd changed ensure=present runtime=0s provider=posix\n",
        " \x1b[33mWARN \x1b[0m file#/etc/motd changed ensure=present runtime=0s provider=posix\n",
        " WARN  file#/etc/motd changed ensure=present runtime=0s provider=posix\n"]


def test_status_lines_of_threads_stay_whole_on_a_real_file(tmp_path):
    """The fast line writer takes no lock for a C text stream (one write() per line): the
    lines of threads writing at once to one file are all whole."""
    import threading

    path = tmp_path / "out.log"
    with open(path, "w", buffering=64) as out:   # small buffer: flushes while other threads write
        log_status = status_logger(UserLogger(stream=out))

        def work(n):
            for i in range(1500):
                log_status(TransactionEvent("file", f"/t{n}/{i}" + "x" * (i % 97), provider="posix",
                                            requested_ensure="present"))

        workers = [threading.Thread(target=work, args=(n,)) for n in range(6)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    lines = path.read_text().splitlines()
    want = {f" INFO  file#/t{n}/{i}{'x' * (i % 97)} stable ensure=present runtime=0s provider=posix"
            for n in range(6) for i in range(1500)}
    assert len(lines) == len(want) and set(lines) == want


def test_status_line_text():
    log = UserLogger(stream=io.StringIO(), colour=False)
    log.records = []
    ev = _events()
    for event in (ev[0], ev[1], ev[4], ev[5], ev[10], ev[12]):
        log_event(log, event)
    assert log.stream.getvalue().splitlines() == [
        " INFO  file#/etc/motd stable ensure=present runtime=0s provider=posix",
        " WARN  file#/etc/motd changed ensure=present runtime=0s provider=posix",
        " INFO  file#motd (alias) stable ensure=present runtime=0s provider=posix",
        " INFO  file#/etc/motd stable ensure=present runtime=1.234s provider=posix",
        " INFO  file#/etc/motd stable ensure=present runtime=0s provider=posix noop=true",
        " ERROR file#/etc/motd skipped due to unmet requirement ensure=present runtime=0s provider=posix"
        " unmet=exec#a unmet=file#b",
    ]
    assert log.records[0] == {"level": INFO, "message": "file#/etc/motd stable",
                              "attrs": [("ensure", "present"), ("runtime", "0s"), ("provider", "posix")]}


def test_status_lines_show_control_characters_escaped():
    log = UserLogger(stream=io.StringIO(), colour=False)
    for event in _events()[-4:]:
        log_event(log, event)
    assert log.stream.getvalue().splitlines() == [
        " INFO  file#/tmp/a\\x1b[2J\\rb\\nc\\x9b stable ensure=present runtime=0s provider=posix",
        " INFO  file#m\\x07\\n (alias) stable ensure=present runtime=0s provider=posix",
        " INFO  package#zsh stable ensure=5.9\\x1b[31m runtime=0s provider=posix",
        " ERROR file#/tmp/\\x1b[1A failed ensure=present runtime=0s provider=posix errors=boom\\x1b[2K",
        "stderr:",   # a failure's own structure keeps its lines; what a command printed is indented
        "  \\x1b]0;x\\x07",
    ]


def test_a_subclass_with_its_own_log_keeps_it():
    class Upper(UserLogger):
        def log(self, level, message, *pairs, **attrs):
            super().log(level, message.upper(), *pairs, **attrs)

    log = Upper(stream=io.StringIO(), colour=False)
    log_event(log, _events()[0])
    status_logger(log)(_events()[0])
    assert log.stream.getvalue() == " INFO  FILE#/ETC/MOTD STABLE ensure=present runtime=0s provider=posix\n" * 2


def test_status_lines_reach_syslog_as_before(tmp_path, monkeypatch):
    monkeypatch.setenv("CCM_SYSLOG_SOCKET", str(tmp_path / "log.sock"))
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as daemon:
        daemon.bind(os.environ["CCM_SYSLOG_SOCKET"])
        daemon.settimeout(2)
        ccmlog.configure(syslog=True, quiet=True)
        try:
            out = io.StringIO()
            log_event(UserLogger(stream=out), _events()[0])   # INFO with --quiet: syslog only
            got = daemon.recv(4096).decode()
            status_logger(UserLogger(stream=out))(_events()[0])
            assert daemon.recv(4096).decode()[got.index("]"):] == got[got.index("]"):]
        finally:
            ccmlog.configure()
    assert got.startswith("<30>ccm[") and got.endswith("]: file#/etc/motd stable ensure=present runtime=0s provider=posix")
    assert out.getvalue() == ""


def test_a_stream_known_not_to_be_a_terminal_is_coloured_only_when_always(monkeypatch):
    out = io.StringIO()
    log = UserLogger(stream=out)
    try:
        for mode, want in (("auto", " INFO  x\n"), ("always", " \x1b[32mINFO \x1b[0m x\n"), ("never", " INFO  x\n")):
            ccmlog.configure(color=mode)
            out.seek(0)
            out.truncate()
            log.info("x")
            log.info("x")   # the second line: the stream's answer is cached
            assert out.getvalue() == want * 2, mode
    finally:
        ccmlog.configure()


# --- event ids ----------------------------------------------------------------------------

def test_event_ids_are_unique_across_pool_refills_and_threads():
    import threading

    from ccm.model.events import EventRecord, is_ksuid

    made = []

    def make():
        made.extend(TransactionEvent("file", "x") for _ in range(700))   # > 2 pools of 256

    workers = [threading.Thread(target=make) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    ids = [EventRecord(e).event_id for e in made]
    assert len(set(ids)) == len(made) == 2800 and all(is_ksuid(i) for i in ids)
    assert [e.event_id for e in made] == ids   # the event and its record: the same id
    assert len({e._id_drawn[1] for e in made}) == 2800   # no random part handed out twice


def test_a_forked_child_draws_its_own_random_bytes():
    TransactionEvent("file", "warm")   # the parent's pool holds bytes now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: report the random part of its first event
        try:
            os.write(write, TransactionEvent("file", "child")._id_drawn[1])
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    parent_next = TransactionEvent("file", "parent")._id_drawn[1]
    assert len(child) == 16 and child != parent_next


def test_event_ids_encode_time_and_random_as_ksuid_does(monkeypatch):
    from ccm.model import events

    raw = bytes(range(16))
    monkeypatch.setattr(events.time, "time", lambda: 1_735_787_045.9)
    monkeypatch.setattr(events, "_random_chunks", [raw])   # the pool an event pops from
    monkeypatch.setattr(events, "_random_chunk", lambda: raw)
    assert TransactionEvent("file", "x").event_id == events.new_ksuid() == events.new_ksuid(1_735_787_045)


# --- the summary --------------------------------------------------------------------------

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
        for i in range(rng.randint(0, 12)):
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

    from ccm.model.events import rfc3339

    rng = random.Random(3339)
    for ns in [1_735_787_045_000_000_000 + f for f in (1, 10, 100_000_000, 999_999_999, 120_000_000)] + [
            rng.randint(-10**19, 10**19) for _ in range(2000)] + [1.5e18, True]:
        secs, frac = divmod(int(ns), 10**9)
        want = rfc3339(secs * 10**9) if secs else "1970-01-01T00:00:00Z"
        want = want[:-1] + ("." + f"{frac:09d}".rstrip("0") if frac else "") + "Z"
        assert rfc3339(ns) == want, ns
