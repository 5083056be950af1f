"""The README's shell-session example, run exactly as written, against a real init script.

Marker ``sysv`` (root): installs /etc/init.d/demo running a tiny daemon, starts it, runs the
README block with ``ccm`` on PATH, and checks the changed file restarted the service.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.resources.service import initscript

pytestmark = pytest.mark.sysv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
NAME = "demo"
SCRIPT = f"/etc/init.d/{NAME}"
CONF = "/etc/demo.conf"


def readme_block():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text[text.index("### Shell scripts"):]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def demo_service(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    for path in (SCRIPT, CONF):
        assert not os.path.exists(path), f"{path} exists; refusing to touch it"
    pidfile, log = str(tmp_path / "demo.pid"), str(tmp_path / "calls.log")
    initscript.write(SCRIPT, NAME, pidfile, log)
    try:
        yield pidfile
    finally:
        initscript.kill(pidfile)
        subprocess.run(["update-rc.d", "-f", NAME, "remove"], capture_output=True)
        for path in (SCRIPT, CONF):
            if os.path.exists(path):
                os.unlink(path)


def test_readme_shell_example_restarts_service_on_change(tmp_path, demo_service):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "ccm"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m ccm "$@"\n')
    shim.chmod(0o755)
    script = tmp_path / "example.sh"
    script.write_text(readme_block())
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCM_")}
    env.update(PATH=f"{bindir}:{os.environ['PATH']}", TMPDIR=str(tmp_path))

    subprocess.run([SCRIPT, "start"], check=True, capture_output=True)
    before = initscript.read_pid(demo_service)
    r = subprocess.run(["sh", str(script)], cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    after = initscript.read_pid(demo_service)
    assert open(CONF).read() == "port=8080"
    assert before and after and before != after, "the file change restarted the service"
    assert "service#demo refreshed" in r.stdout
    assert "Refreshed Resources: 2" in r.stdout

    r = subprocess.run(["sh", str(script)], cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert initscript.read_pid(demo_service) == after, "nothing changed, nothing restarted"
    assert "service#demo stable" in r.stdout
