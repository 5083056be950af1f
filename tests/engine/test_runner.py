"""SubprocessRunner: fixed environment, exit codes, timeouts, redaction."""
from __future__ import annotations

import logging

from ccm.runner import SubprocessRunner, redact


def test_exit_code_is_not_an_error():
    r = SubprocessRunner().run(["/bin/sh", "-c", "echo out; echo err >&2; exit 4"])
    assert (r.stdout, r.stderr, r.exit_code, r.error) == ("out\n", "err\n", 4, None)


def test_not_found_and_timeout():
    r = SubprocessRunner().run(["definitely-not-a-command-ccm"])
    assert r.exit_code == -1 and "executable file not found" in r.error
    r = SubprocessRunner().run(["/bin/sleep", "5"], timeout=0.3)
    assert r.timed_out and r.exit_code == -1 and "timed out" in r.error


def test_killed_by_signal_reads_like_go():
    r = SubprocessRunner().run(["/bin/sh", "-c", "kill -9 $$"])
    assert r.error == "signal: killed" and r.exit_code == -1


def test_secrets_redacted_in_logs(caplog):
    assert redact(["curl", "-u", "bob:hunter2"], ["hunter2"]) == ["curl", "-u", "bob:******"]
    caplog.set_level(logging.DEBUG, logger="ccm.runner")
    logging.getLogger("ccm").propagate = True
    SubprocessRunner(secrets=["hunter2"]).run(["/bin/echo", "hunter2"])
    text = " ".join(str(getattr(r, "kv", "")) for r in caplog.records)
    assert "hunter2" not in text and "******" in text
