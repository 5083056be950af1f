"""Output that cannot be forged, and command output that keeps secrets.

A command (and a resource name) prints what a hostile author would: cursor moves and
colour (ESC, CSI as a C1 byte), carriage returns, NUL, BEL, a line dressed up as a ccm
status line, a syslog line as ccm would send it, and a URL with a password. In every
channel (plain and coloured console, ``--json``, syslog, session event files,
``--last-run``) control characters arrive escaped, command output is marked as output
(``output=``, or indented under ``stderr:``/``stdout:``), and the password never appears.
"""
from __future__ import annotations

import json
import os
import re
import socket
import stat

import pytest

from tests.kit import ccm
from tests.reliability.cli import cli_env
from tests.unattended.test_output import _datagrams

pytestmark = pytest.mark.reliability

SECRET = "Pa55word-Canary"
EVIL_OUT = ("ok\n\x1b[2K\r INFO  file#/etc/shadow stable ensure=present\nccm[1]: FAKE root login accepted\n"
            "\x9b31mC1\x07bell\x00nul\x7fdel\n")
EVIL_ERR = f"https://deploy:{SECRET}@git.example.com/repo\n\x1b]0;owned\x07\n"
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
CCM_COLOURS = re.compile(r"\x1b\[(?:3[0-7]|0)m")
FORGED = (" INFO  file#/etc/shadow", "ccm[1]: FAKE", "FAKE root login")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "out.bin").write_bytes(EVIL_OUT.encode())
    (tmp_path / "err.bin").write_bytes(EVIL_ERR.encode())
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ncat {tmp_path}/out.bin\ncat {tmp_path}/err.bin >&2\nexit \"$CODE\"\n")
    script.chmod(0o755)

    def write(code: int) -> str:
        env = [f"CODE={code}"]
        path = tmp_path / f"m{code}.yaml"
        path.write_text(json.dumps({"ccm": {"resources": [
            {"exec": [{str(script): {"logoutput": True, "environment": env}}]},
            {"file": [{str(tmp_path / "name\x1b[31mred\rX\x9b2J"): {
                "ensure": "present", "content": "x\n", "owner": "root", "group": "root", "mode": "0644"}}]},
        ]}}))
        return str(path)
    return tmp_path, write


def _assert_clean_console(text: str) -> None:
    assert not CONTROLS.search(text), [ln for ln in text.splitlines() if CONTROLS.search(ln)]
    assert SECRET not in text
    for line in text.splitlines():
        if any(f in line for f in FORGED):
            # what the command printed is either an output= value or indented in a failure's tail
            assert "output=" in line or line.startswith("  "), line
            assert not line.startswith((" INFO  file#/etc/shadow", "ccm["))


@pytest.mark.parametrize("code", [0, 3])
def test_console_plain(project, code):
    work, write = project
    res = ccm("apply", write(code), cwd=str(work), env=cli_env(str(work)))
    assert res.returncode == (0 if code == 0 else 1), res.stdout + res.stderr
    _assert_clean_console(res.stdout + res.stderr)
    assert "output=ccm[1]: FAKE root login accepted" in res.stdout
    assert "output=\\x9b31mC1\\x07bell\\x00nul\\x7fdel" in res.stdout
    assert "name\\x1b[31mred\\rX\\x9b2J changed" in res.stdout   # the resource's own line, escaped


def test_console_colour(project):
    work, write = project
    res = ccm("--color", "always", "apply", write(3), cwd=str(work), env=cli_env(str(work)))
    assert res.returncode == 1
    assert CCM_COLOURS.search(res.stdout), "no colour at all"
    _assert_clean_console(CCM_COLOURS.sub("", res.stdout) + res.stderr)


def test_json_stays_valid_and_escaped(project):
    work, write = project
    res = ccm("apply", "--json", write(3), cwd=str(work), env=cli_env(str(work)))
    assert res.returncode == 1
    assert not CONTROLS.search(res.stdout), "raw control characters in --json"
    doc = json.loads(res.stdout)
    assert SECRET not in res.stdout and "https://REDACTED@git.example.com/repo" in res.stdout
    exec_event = doc["events"][0]
    assert exec_event["failed"] and "stderr:\n  https://REDACTED@git.example.com/repo" in exec_event["error"][0]


@pytest.fixture
def syslog(tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "log.sock"))
    sock.settimeout(0)
    yield str(tmp_path / "log.sock"), sock
    sock.close()


def test_syslog_records_are_escaped_marked_and_scrubbed(project, syslog):
    work, write = project
    path, sock = syslog
    res = ccm("--info", "--syslog", "apply", write(3), cwd=str(work),
              env=cli_env(str(work), {"CCM_SYSLOG_SOCKET": path}))
    assert res.returncode == 1
    got = _datagrams(sock)
    assert any("output=ccm[1]: FAKE root login accepted" in g for g in got), got
    for record in got:
        assert not CONTROLS.search(record), record
        assert SECRET not in record, record
        message = record.split("]: ", 1)[1]   # after "<pri>ccm[pid]: "
        assert not message.startswith(("ccm[", "FAKE", "INFO", " INFO")), record


def test_records_at_rest_hold_no_secret_from_command_output(project):
    work, write = project
    store = work / "store"
    assert ccm("session", "new", "--directory", str(store), cwd=str(work), env=cli_env(str(work))).returncode == 0
    last = work / "state" / "last.json"
    res = ccm("apply", write(3), "--last-run", str(last), cwd=str(work),
              env=cli_env(str(work), {"CCM_SESSION_STORE": str(store)}))
    assert res.returncode == 1
    record = last.read_text()
    assert SECRET not in record and "https://REDACTED@git.example.com/repo" in record
    for name in os.listdir(store):
        assert SECRET not in (store / name).read_text(errors="replace"), name
    assert stat.S_IMODE(os.stat(last).st_mode) == 0o644
