"""Health checks end to end: real plugin scripts through the real runner, retries, the
timeout killing the process group, templates, goss through run_checks, metrics, and the
event/summary a resource gets."""
from __future__ import annotations

import os
import time

import pytest

from ccm.healthcheck import run_checks
from ccm.healthcheck.nagios import default_name, status_for_exit, summary_line
from ccm.metrics import Metrics
from ccm.model.events import CRITICAL, OK, UNKNOWN, WARNING, SessionSummary
from ccm.model.resource import COMMON_FIELDS, Properties
from tests import kit


def script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def mgr():
    m = kit.manager(log_level=None, metrics=Metrics(), data={"port": 8080})
    return m


def props(name="web"):
    return Properties("file", {"name": name, "ensure": "present"}, COMMON_FIELDS)


def run(mgr, *checks):
    return run_checks(mgr, props(), list(checks), mgr.user_log.bind(type="file", name="web"))


def output(mgr):
    return kit.output(mgr).splitlines()


@pytest.mark.parametrize("code,status", [(0, OK), (1, WARNING), (2, CRITICAL), (3, UNKNOWN), (4, UNKNOWN), (255, UNKNOWN)])
def test_exit_code_mapping(code, status):
    assert status_for_exit(code) == status


def test_default_name_and_summary_line():
    assert default_name("/usr/lib/nagios/plugins/check_http -H 'a b'") == "check_http"
    assert default_name("check_disk") == "check_disk"
    assert summary_line("HTTP CRITICAL - 500 | time=0.1s;;\nlong text\n") == "HTTP CRITICAL - 500"


def test_ok_check(mgr, tmp_path):
    cmd = script(tmp_path, "check_ok", 'echo "  OK - all fine  "\necho ignored >&2\n')
    results, errors = run(mgr, {"command": cmd})
    assert errors == []
    [r] = results
    assert (r.status, r.tries, r.output, r.name) == (OK, 1, "OK - all fine", "check_ok")
    assert [l for l in output(mgr) if "Health check" in l] == []


def test_critical_check_puts_status_and_output_in_the_error(mgr, tmp_path):
    cmd = script(tmp_path, "check_http", 'echo "HTTP CRITICAL - 500 | time=0.2s"\nexit 2\n')
    results, errors = run(mgr, {"command": cmd + " -H localhost"})
    assert results[0].status == CRITICAL and results[0].output == "HTTP CRITICAL - 500 | time=0.2s"
    assert errors == ['health check "check_http" status "CRITICAL": HTTP CRITICAL - 500']
    assert output(mgr) == [" WARN  Health check failed type=file name=web format=nagios check=check_http "
                           "try=1 sleep=0s status=CRITICAL"]


def test_retries_until_ok_with_sleep(mgr, tmp_path):
    counter = tmp_path / "n"
    cmd = script(tmp_path, "check_flaky", f'n=$(($(cat {counter} 2>/dev/null || echo 0) + 1))\necho $n > {counter}\n'
                 'if [ $n -lt 3 ]; then echo "WARNING - warming up"; exit 1; fi\necho OK\n')
    started = time.monotonic()
    results, errors = run(mgr, {"command": cmd, "name": "warm", "tries": 5, "try_sleep": "100ms"})
    assert time.monotonic() - started >= 0.2
    assert errors == [] and (results[0].status, results[0].tries) == (OK, 3)
    assert output(mgr) == [
        f" WARN  Health check failed type=file name=web format=nagios check=warm try={n} sleep=100ms status=WARNING"
        for n in (1, 2)]
    assert mgr.metrics.value("healthcheck", type="file", name="web", check="warm")[1] == 3


def test_retries_exhausted_and_tries_below_one(mgr, tmp_path):
    cmd = script(tmp_path, "check_bad", 'echo "UNKNOWN - eh"\nexit 3\n')
    results, errors = run(mgr, {"command": cmd, "tries": 2}, {"command": cmd, "tries": 0})
    assert [(r.status, r.tries) for r in results] == [(UNKNOWN, 2), (UNKNOWN, 1)]
    assert errors == ['health check "check_bad" status "UNKNOWN": UNKNOWN - eh'] * 2


def test_timeout_kills_the_process_group_and_is_not_retried(mgr, tmp_path):
    pidfile = tmp_path / "child.pid"
    cmd = script(tmp_path, "check_hang", f"sleep 30 &\necho $! > {pidfile}\nwait\n")
    started = time.monotonic()
    results, errors = run(mgr, {"command": cmd, "timeout": "300ms", "tries": 3})
    assert time.monotonic() - started < 5
    [r] = results
    assert (r.status, r.tries) == (UNKNOWN, 1)
    assert "timed out" in r.output
    assert errors == [f'health check "check_hang" could not run: {r.output}']
    child = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the check's child process survived the timeout")


def test_checks_that_cannot_start_are_unknown_with_the_reason(mgr):
    results, errors = run(mgr, {"command": "/no/such/check_thing -v"}, {"command": "check_x 'unbalanced"},
                          {"command": "true", "format": "snmp"})
    assert [r.status for r in results] == [UNKNOWN] * 3
    assert all(r.output for r in results)
    assert errors[0] == 'health check "check_thing" could not run: fork/exec /no/such/check_thing: no such file or directory'
    assert errors[1].startswith('health check "check_x" could not run: could not parse command')
    assert errors[2] == 'health check "true" could not run: unknown health check format "snmp"'
    # the summary counts them (upstream crashed on the null it recorded instead)
    ev = fakes_event(results)
    s = SessionSummary.build([ev])
    assert (s.health_checked_count, s.health_check_unknown_count) == (3, 3)


def fakes_event(results):
    from ccm.model.events import TransactionEvent

    return TransactionEvent(type="file", name="web", health_checks=list(results), failed=True)


def test_commands_are_rendered_through_templates(mgr, tmp_path):
    cmd = script(tmp_path, "check_echo", 'echo "OK $1 $2"\n')
    results, errors = run(mgr, {"command": cmd + " {{ Facts.host.info.os }} ${ Data.port }"})
    assert errors == [] and results[0].output == "OK linux 8080"


def test_goss_check_critical_lists_failures(mgr, tmp_path):
    good = tmp_path / "good"
    good.write_text("x")
    rules = {"file": {str(good): {"exists": True}, str(tmp_path / "missing"): {"exists": True}},
             "command": {"exit 0": {"exit-status": 0}}}
    results, errors = run(mgr, {"goss_rules": rules})
    [r] = results
    assert (r.status, r.tries, r.name) == (CRITICAL, 1, "goss")
    failure = f"File: {tmp_path}/missing: exists: doesn't match, expect: true found: false"
    assert r.output.splitlines()[0] == failure
    assert r.output.splitlines()[1].startswith("Count: 3, Failed: 1, Duration: ")
    assert errors[0].startswith(f'health check "goss" status "CRITICAL": {failure}; Count: 3, Failed: 1, Duration: ')
    out = output(mgr)
    assert f" ERROR {failure} type=file name=web format=goss check=goss" in out
    assert any(l.startswith(" ERROR Health check failed type=file name=web format=goss check=goss failed=1 msg=Count: 3")
               for l in out)
    assert not [l for l in out if l.startswith(" WARN ")]   # the verdict line is enough on the last try


def test_goss_text_rules_are_rendered_then_validated(mgr, tmp_path):
    target = tmp_path / "f"
    target.write_text("port 8080\n")
    text = f"file:\n  {target}:\n    exists: true\n    contents: ['port {{{{ Data.port }}}}']\n"
    results, errors = run(mgr, {"goss_rules": text, "name": "cfg"})
    assert errors == [] and results[0].status == OK and results[0].name == "cfg"
    assert results[0].output.startswith("Count: 2, Failed: 0")

    results, errors = run(mgr, {"goss_rules": "{{ Data.port }}:\n  x: {}\n"})
    assert results[0].status == UNKNOWN
    assert errors == ['health check "goss" could not run: goss_rules: unknown goss resource type "8080" '
                      '(supported: addr, command, dns, file, group, http, kernel-param, matching, mount, package, '
                      'port, process, service, user)']


def test_goss_retries(mgr, tmp_path):
    target = tmp_path / "appears"
    cmd = f"test -e {target}.seen && touch {target}; touch {target}.seen; true"
    rules = {"command": {cmd: {"exit-status": 0}}, "file": {str(target): {"exists": True}}}
    results, errors = run(mgr, {"goss_rules": rules, "tries": 3})
    assert errors == [] and (results[0].status, results[0].tries) == (OK, 2)
    assert [l for l in output(mgr) if not l.startswith(" DEBUG")] == [
        " WARN  Health check failed type=file name=web format=goss check=goss try=1 sleep=0s status=CRITICAL"]


def test_event_and_summary_through_the_resource_flow(tmp_path):
    from ccm.resources import properties as P

    mgr = kit.manager(log_level=None, metrics=Metrics())
    spec = mgr.registry.spec("file")
    path = tmp_path / "motd"
    bad = script(tmp_path, "check_motd", 'echo "CRITICAL - motd is stale"\nexit 2\n')
    raw = {"name": str(path), "ensure": "present", "content": "hi\n", "owner": "root", "group": "root",
           "mode": "0644", "health_checks": [
               {"command": bad},
               {"goss_rules": {"file": {str(path): {"exists": True, "contents": ["hi"]}}}},
               {"command": "/no/such/plugin"}]}
    p = P.build(spec, raw)
    P.validate(spec, p)
    ev = mgr.apply_resource(p)
    mgr.record(ev)
    assert path.read_text() == "hi\n"
    assert ev.failed and ev.status is not None and ev.changed
    assert ev.errors == ['health check "check_motd" status "CRITICAL": CRITICAL - motd is stale',
                         'health check "plugin" could not run: fork/exec /no/such/plugin: no such file or directory']
    d = ev.to_dict()
    assert [h["status"] for h in d["health_check"]] == [2, 0, 3]
    assert d["health_check"][2]["Output"] == "fork/exec /no/such/plugin: no such file or directory"
    s = mgr.session.summary()
    assert (s.health_checked_count, s.health_check_ok_count, s.health_check_critical_count,
            s.health_check_unknown_count, s.failed_resources) == (3, 1, 1, 1, 1)
    text = mgr.metrics.exposition()
    assert f'choria_ccm_healthcheck_status_count{{check="check_motd",name="{path}",status="CRITICAL",type="file"}} 1' \
        in text.splitlines()
    assert f'choria_ccm_resource_state_changed_count{{name="{path}",type="file"}} 1' in text.splitlines()
