"""A failure says why: the output tail in the message and the event, full output in the logs."""
from __future__ import annotations

import json

from tests.kit import ccm
from tests.operator.helpers import ccm_env

SCRIPT = ("/bin/sh -c 'for i in $(seq 1 30); do echo out$i; done; "
          "for i in $(seq 1 25); do echo err$i >&2; done; echo token=hunter2 >&2; exit 2'")


def test_failed_exec_carries_the_last_20_lines_stderr_first(tmp_path):
    r = ccm("ensure", "exec", SCRIPT, cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1
    text = r.stdout + r.stderr
    assert "exit code 2 not in allowed returns [0]" in text
    tail = text[text.index("stderr (last 10 of 26 lines):"):]
    lines = [ln.strip() for ln in tail.splitlines()]
    assert lines[1:11] == [f"err{i}" for i in range(17, 26)] + ["token=hunter2"]
    assert lines[11] == "stdout (last 10 of 30 lines):"
    assert lines[12:22] == [f"out{i}" for i in range(21, 31)]


def test_secrets_are_redacted_from_the_tail(tmp_path):
    from ccm.model.runner import CommandResult

    res = CommandResult(argv=["x"], stdout="user=bob\n", stderr="password=hunter2 rejected\n", exit_code=1,
                        redactions=("hunter2",))
    assert res.output_tail() == "stderr:\n  password=****** rejected\nstdout:\n  user=bob"
    assert "hunter2" not in res.with_output("failed")


def test_failure_tail_in_the_event_and_json(tmp_path):
    manifest = tmp_path / "m.yaml"
    manifest.write_text("""\
ccm:
  resources:
    - exec:
        name: broken
        command: "/bin/sh -c 'echo first; echo reason: disk full >&2; exit 3'"
""")
    r = ccm("apply", "--json", str(manifest), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    error = doc["events"][0]["error"][0]
    assert error.startswith("failed to reach desired state: exit code 3")
    assert error.endswith("stderr:\n  reason: disk full\nstdout:\n  first")


def test_full_output_logged_at_info_and_logoutput_shows_both_streams(tmp_path):
    cmd = "/bin/sh -c 'echo visible-out; echo visible-err >&2; exit 1'"
    r = ccm("--info", "ensure", "exec", cmd, cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1
    assert "command output" in r.stdout + r.stderr
    r = ccm("ensure", "exec", "/bin/sh -c 'echo hello-out; echo hello-err >&2'", "--logoutput", cwd=tmp_path,
            env=ccm_env(tmp_path))
    assert r.returncode == 0
    out = r.stdout + r.stderr
    assert "hello-out" in out and "hello-err" in out


def test_timed_out_exec_carries_its_output(tmp_path):
    r = ccm("ensure", "exec", "/bin/sh -c 'echo started-work >&2; sleep 30'", "--timeout", "1s", cwd=tmp_path,
            env=ccm_env(tmp_path))
    assert r.returncode == 1
    out = r.stdout + r.stderr
    assert "timed out after 1s" in out and "started-work" in out


def test_failed_health_check_carries_its_output(tmp_path):
    manifest = tmp_path / "m.yaml"
    manifest.write_text("""\
ccm:
  resources:
    - exec:
        name: /bin/true
        health_checks:
          - command: "/bin/sh -c 'echo CRITICAL - port closed; echo connect: refused >&2; exit 2'"
""")
    r = ccm("apply", "--json", str(manifest), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1
    assert "CRITICAL - port closed" in r.stdout and "connect: refused" in r.stdout
