"""fisk's command-line forms: ``--help-long``, and ``--flag=false`` on a boolean refused (never true)."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from ccm.cli import docgen
from tests.kit import bare_env, ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_help_long_lists_every_command_with_its_flags():
    r = ccm("--help-long", env=bare_env())
    assert r.returncode == 0, r.stderr
    root = docgen.tree()
    for node in docgen.walk(root)[1:]:
        assert f"\n  ccm {' '.join(node.path)}" in r.stdout, node.path
    section = r.stdout.split("\n  ccm ensure file ", 1)[1].split("\n\n", 1)[0]
    for flag in ("--owner=USER:GROUP", "--mode=MODE", "--content=CONTENT", "--require=type#name"):
        assert flag in section
    assert "--help-long" in ccm("--help", env=bare_env()).stdout


def _bool_flags():
    """Every (command words, flag) of a store_true/store_false flag in the CLI's parsers."""
    out = []
    for node in docgen.walk(docgen.tree())[1:]:
        for action in docgen.flags(node):
            if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
                out.append((node.path, action.option_strings[-1]))
    return out


BOOL_FLAGS = _bool_flags()


def test_there_are_boolean_flags_to_check():
    assert len(BOOL_FLAGS) > 20 and (("apply",), "--noop") in BOOL_FLAGS


DRIVER = """
import contextlib, io, json, sys
from ccm.cli.main import main
out = []
for args in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(args)
        except SystemExit as exc:
            rc = exc.code
    out.append([args, rc, err.getvalue()])
print(json.dumps(out))
"""


@pytest.mark.parametrize("value", ["false", "true", "0", ""])
def test_a_value_given_to_a_boolean_flag_is_a_usage_error(tmp_path, value):
    """``--noop=false`` is refused (fisk refuses it too), and never taken as ``--noop``: every
    boolean flag of every command, through ccm's own entry point."""
    import json

    positional = {"apply": ["m.yaml"], "validate": ["m.yaml"], "ensure file": ["/tmp/x"], "ensure exec": ["/bin/true"],
                  "ensure package": ["zsh"], "ensure service": ["sshd"], "ensure archive": ["/tmp/a", "http://x/a"],
                  "ensure scaffold": ["/tmp/s"], "hiera parse": ["h.yaml"], "status": ["file", "/tmp"]}
    cases = [list(path) + positional.get(" ".join(path), []) + [f"{flag}={value}"] for path, flag in BOOL_FLAGS]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT, "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "CCM_LOCK_DIR": str(tmp_path / "locks")}
    r = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(cases)], env=env, capture_output=True, text=True,
                       timeout=120, cwd=str(tmp_path), stdin=subprocess.DEVNULL)
    results = json.loads(r.stdout.splitlines()[-1])
    assert len(results) == len(cases)
    failures = [(args, rc, err[:200]) for args, rc, err in results
                if rc != 1 or not err.startswith("error: ") or "\nusage: ccm" not in err]
    assert not failures
    assert os.listdir(tmp_path) == []   # nothing ran


@pytest.mark.parametrize("flag", ["--debug", "--quiet", "--syslog", "--info"])
def test_a_value_given_to_a_global_boolean_flag_is_a_usage_error(flag):
    for args in ([f"{flag}=false", "facts"], ["facts", f"{flag}=false"]):
        r = ccm(*args, env=bare_env())
        assert r.returncode == 1 and r.stderr.startswith("error: "), (args, r.stderr)
        assert r.stdout == ""


def test_kv_put_without_a_file_does_not_wait_on_a_terminal():
    import pty

    master, slave = pty.openpty()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT, "HOME": "/nonexistent",
           "XDG_CONFIG_HOME": "/nonexistent/xdg"}
    try:
        r = subprocess.run([sys.executable, "-m", "ccm", "kv", "put", "CONFIG", "motd"], env=env, stdin=slave,
                           capture_output=True, text=True, timeout=60)
    finally:
        os.close(master)
        os.close(slave)
    assert (r.returncode, r.stderr) == (1, "error: nothing to store: give a FILE, or pipe the data in (- reads "
                                           "standard input)\n")
