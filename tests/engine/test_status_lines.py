"""A resource's status line: the one-step writers (``log_event``, ``status_logger``) give
what ``event_line`` rendered through the generic ``log`` gives, on every logger."""
from __future__ import annotations

import io
import os
import re
import socket

from ccm import log as ccmlog
from ccm.log import INFO, UserLogger
from ccm.model.events import TransactionEvent
from ccm.report import event_line, log_event, status_logger


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
        " INFO  file#motd (/etc/motd) stable ensure=present runtime=0s provider=posix",
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
        " INFO  file#m\\x07\\n (/etc/motd) stable ensure=present runtime=0s provider=posix",
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
