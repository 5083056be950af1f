"""The agent's logfmt logger is a ``UserLogger``: same bind/capture API and the same syslog copy."""
from __future__ import annotations

import io
import socket

from ccm import log as ccmlog
from ccm.agent.log import LogfmtLogger, make_logger


def test_logfmt_lines_bind_and_levels():
    out = io.StringIO()
    log = make_logger("warn", stream=out)
    assert isinstance(log, LogfmtLogger)
    child = log.bind(worker="web")
    assert isinstance(child, LogfmtLogger)
    child.info("hidden")
    child.error("Apply failed", error='bad "quote"\nnext')
    lines = out.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("time=") and lines[0].endswith(
        ' level=ERROR msg="Apply failed" worker=web error="bad \\"quote\\"\\nnext"')


def test_syslog_gets_the_agent_lines_too(tmp_path, monkeypatch):
    path = str(tmp_path / "log.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(2)
    monkeypatch.setenv("CCM_SYSLOG_SOCKET", path)
    try:
        ccmlog.configure(syslog=True)
        out = io.StringIO()
        log = LogfmtLogger(stream=out, level=ccmlog.WARN).bind(worker="web")
        log.info("Executing manifest", resources=3)     # below the terminal level: syslog only
        got = sock.recv(4096).decode()
        assert got.startswith("<30>ccm[") and got.endswith("level=INFO msg=\"Executing manifest\" worker=web resources=3")
        assert out.getvalue() == ""
    finally:
        ccmlog.configure()
        sock.close()
