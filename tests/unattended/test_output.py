"""--quiet, --log-level, colour policy and --syslog, through real ``python -m ccm`` runs."""
from __future__ import annotations

import os
import pty
import select
import socket
import subprocess
import sys

import pytest

from tests.kit import ccm, clean_env
from tests.unattended.helpers import FAILING, ROOT, file_manifest, manifest

ESC = "\x1b["


def test_quiet_prints_nothing_when_nothing_changed(tmp_path):
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    first = ccm("apply", "--quiet", str(m))
    assert first.returncode == 0, first.stderr
    # the change is a warning, so it still shows; no INFO lines, no summary
    assert first.stdout.startswith(" WARN  file#") and "changed" in first.stdout
    assert "INFO" not in first.stdout and "Manifest Run Summary" not in first.stdout
    second = ccm("apply", "--quiet", str(m))
    assert (second.returncode, second.stdout, second.stderr) == (0, "", "")


def test_quiet_keeps_exit_codes_and_shows_summary_on_failure(tmp_path):
    m = manifest(tmp_path / "m.yaml", FAILING)
    loud = ccm("apply", "--detailed-exit-codes", str(m))
    quiet = ccm("--quiet", "apply", "--detailed-exit-codes", str(m))  # global flag before the command
    assert loud.returncode == quiet.returncode == 4
    assert quiet.stdout.startswith(" ERROR exec#/bin/false failed")
    assert "Manifest Run Summary" in quiet.stdout and "Failed Resources: 1" in quiet.stdout
    assert "Executing manifest" in loud.stdout and "Executing manifest" not in quiet.stdout


def test_quiet_changed_exit_code_2(tmp_path):
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    assert ccm("apply", str(m), "--quiet", "--detailed-exit-codes").returncode == 2
    assert ccm("apply", str(m), "--quiet", "--detailed-exit-codes").returncode == 0


@pytest.mark.parametrize("level,shown,hidden", [
    ("error", [], ["WARN", "INFO"]),
    ("warn", ["WARN"], ["INFO"]),
    ("info", ["WARN", "INFO"], ["DEBUG"]),
    ("debug", ["WARN", "INFO"], []),
])
def test_log_level(tmp_path, level, shown, hidden):
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    res = ccm("apply", f"--log-level={level}", "--no-report", str(m))
    assert res.returncode == 0, res.stderr
    for tag in shown:
        assert f" {tag}" in res.stdout, (level, res.stdout)
    for tag in hidden:
        assert f" {tag}" not in res.stdout, (level, res.stdout)


@pytest.mark.parametrize("kwargs,user,internal", [
    ({}, "INFO", "WARN"),
    ({"debug": True}, "DEBUG", "DEBUG"),
    ({"info": True}, "INFO", "INFO"),
    ({"level": "debug"}, "DEBUG", "DEBUG"),
    ({"level": "info", "info": True}, "INFO", "INFO"),
    ({"level": "warn"}, "WARN", "WARN"),
    ({"level": "error"}, "ERROR", "ERROR"),
    ({"quiet": True}, "WARN", "WARN"),
    ({"quiet": True, "level": "error"}, "ERROR", "ERROR"),
    ({"quiet": True, "debug": True}, "WARN", "DEBUG"),
])
def test_configure_levels(kwargs, user, internal, capsys):
    import logging

    from ccm import log

    names = {"DEBUG": 10, "INFO": 20, "WARN": 30, "ERROR": 40}
    try:
        log.configure(**kwargs)
        out = log.UserLogger(colour=False)
        for name in names:
            out.log(names[name], f"user-{name}")
        for name, level in names.items():
            logging.getLogger("ccm.test").log(level, f"internal-{name}")
        captured = capsys.readouterr()
        assert [n for n in names if f"user-{n}" in captured.out] == [n for n in names if names[n] >= names[user]]
        assert [n for n in names if f"internal-{n}" in captured.err] == [
            n for n in names if names[n] >= names[internal]]
    finally:
        log.configure()


def test_bad_global_values_are_usage_errors():
    res = ccm("--log-level", "loud", "facts")
    assert res.returncode == 1
    assert res.stderr.startswith("error: enum value must be one of debug,info,warn,error, got 'loud'")
    res = ccm("facts", "--color")
    assert res.returncode == 1 and "expected argument for flag '--color'" in res.stderr


def _run_on_pty(args, env):
    """Run ccm with stdout on a pseudo-terminal; return what it printed there."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "ccm", *args], stdout=slave, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    proc.wait(60)
    return out.decode()


@pytest.mark.parametrize("extra_env,flags,coloured", [
    ({}, [], True),
    ({"NO_COLOR": "1"}, [], False),
    ({"NO_COLOR": ""}, [], False),           # any value, even empty
    ({"TERM": "dumb"}, [], False),
    ({"NO_COLOR": "1"}, ["--color=always"], True),
    ({}, ["--color", "never"], False),
])
def test_colour_on_a_terminal(tmp_path, extra_env, flags, coloured):
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    env = clean_env(**dict({"TERM": "xterm"}, **extra_env))
    out = _run_on_pty(["apply", "--no-report", *flags, str(m)], env)
    assert "changed" in out
    assert (ESC in out) is coloured, repr(out)


def test_colour_off_on_a_pipe_unless_always(tmp_path):
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    assert ESC not in ccm("apply", str(m), env=clean_env(TERM="xterm")).stdout
    assert f"{ESC}32mINFO" in ccm("--color=always", "apply", str(m)).stdout


@pytest.fixture
def syslog_socket(tmp_path):
    path = str(tmp_path / "log.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0)
    yield path, sock
    sock.close()


def _datagrams(sock):
    out = []
    while True:
        try:
            out.append(sock.recv(65536).decode())
        except BlockingIOError:
            return out


def test_syslog_copy_of_a_quiet_run(tmp_path, syslog_socket):
    path, sock = syslog_socket
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    res = ccm("apply", "--quiet", "--syslog", str(m), env=clean_env(CCM_SYSLOG_SOCKET=path))
    assert res.returncode == 0 and res.stderr == ""
    got = _datagrams(sock)
    # facility daemon (3): <24+severity>; ident ccm with the pid; INFO kept in syslog under --quiet
    assert any(g.startswith("<30>ccm[") and "]: Executing manifest" in g for g in got), got
    changed = [g for g in got if "changed" in g]
    assert len(changed) == 1 and changed[0].startswith("<28>ccm[") and "file#" in changed[0]
    assert not any(ESC in g for g in got)
    # the terminal stayed quiet about INFO
    assert "Executing manifest" not in res.stdout


def test_syslog_errors_and_internal_warnings(tmp_path, syslog_socket):
    path, sock = syslog_socket
    m = manifest(tmp_path / "m.yaml", FAILING)
    res = ccm("apply", "--syslog", str(m), env=clean_env(CCM_SYSLOG_SOCKET=path))
    assert res.returncode == 1
    got = _datagrams(sock)
    assert any(g.startswith("<27>ccm[") and "exec#/bin/false failed" in g for g in got), got


def test_missing_syslog_socket_is_one_warning(tmp_path):
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    res = ccm("apply", "--syslog", str(m), env=clean_env(CCM_SYSLOG_SOCKET=str(tmp_path / "nope")))
    assert res.returncode == 0
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccm: warning: syslog unavailable at ")
    assert "changed" in res.stdout


def test_real_dev_log_when_present(tmp_path):
    if not os.path.exists("/dev/log"):
        pytest.skip("no /dev/log on this host (the socket path is covered above)")
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    res = ccm("apply", "--syslog", "--quiet", str(m))
    assert res.returncode == 0 and "syslog unavailable" not in res.stderr


def test_help_lists_the_global_flags():
    res = ccm("--help")
    assert res.returncode == 0
    for flag in ("--quiet", "--log-level=LEVEL", "--color=WHEN", "--syslog", "--version"):
        assert flag in res.stdout
    assert "--help-man" not in res.stdout  # hidden, as upstream


assert ROOT.is_dir()


def test_quiet_ensure(tmp_path):
    target = tmp_path / "f"
    args = ["ensure", "file", str(target), "--content", "x", "--quiet"]
    first = ccm(*args)
    assert first.returncode == 0 and first.stdout.startswith(" WARN  file#") and "changed" in first.stdout
    second = ccm(*args)
    assert (second.returncode, second.stdout, second.stderr) == (0, "", "")


def test_a_stuck_syslog_never_hangs_a_run(tmp_path, syslog_socket):
    """Nobody reads the socket: its queue fills, ccm warns once and finishes."""
    path, _sock = syslog_socket
    lines = "".join(f"        - {tmp_path}/f{i}:\n            ensure: present\n            content: x\n"
                    f"            owner: \"{os.getuid()}\"\n            group: \"{os.getgid()}\"\n"
                    "            mode: \"0644\"\n" for i in range(40))
    m = manifest(tmp_path / "m.yaml", "ccm:\n  resources:\n    - file:\n" + lines)
    env = clean_env(CCM_SYSLOG_SOCKET=path)
    for _ in range(2):  # the second run starts with the queue already full
        res = ccm("apply", "--syslog", "--quiet", str(m), env=env, timeout=60)
        assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines() == [
        f"ccm: warning: syslog unavailable at {path}: not accepting messages; logging to the terminal only"]
