"""``kill -9`` at random moments during an apply of 200 files replacing old content.

Each trial resets 200 files to their old content, starts ``ccm apply`` with a directory
session store, SIGKILLs it after a random delay within one full run's duration (seeded,
so a failure can be replayed) and checks: every file holds its old or its new content,
never a mix; the next run completes, leaves no temp file in the managed directory or the
store, and ``ccm session report`` still reads the store. ``CCM_KILL_TRIALS`` sets the
number of trials (``make test-reliability``: 100; ``.ci/run``: fewer).
"""
from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import time

import pytest

from tests.kit import ccm
from tests.reliability.cli import ROOT, cli_env, kill9_after

pytestmark = pytest.mark.reliability

FILES = 200
TRIALS = int(os.environ.get("CCM_KILL_TRIALS", "100"))
SEED = int(os.environ.get("CCM_KILL_SEED", "15"))
TEMP = re.compile(r"\.ccm-[0-9a-f]{12}\.tmp$|^\.ccm-extract-")


def _old(i: int) -> str:
    return f"old content of file {i}\n" * 200


def _new(i: int) -> str:
    return f"NEW content of file {i}\n" * 300


def _manifest(managed: str) -> str:
    out = ["ccm:", "  resources:", "    - file:"]
    for i in range(FILES):
        out += [f"        - {managed}/f{i:03d}:", "            ensure: present",
                f"            content: {_new(i)!r}".replace("'", '"').replace("\n", "\\n"),
                "            owner: root", "            group: root", '            mode: "0644"']
    return "\n".join(out) + "\n"


def _reset(managed: str) -> None:
    for i in range(FILES):
        with open(os.path.join(managed, f"f{i:03d}"), "w") as fh:
            fh.write(_old(i))


def _env(tmp_path, store: str):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT, "HOME": str(tmp_path),
           "CCM_CACHE_DIR": str(tmp_path / "cache"), "CCM_SESSION_STORE": store}
    if "CCM_LOCK_DIR" in os.environ:   # the test's private lock dir (tests/conftest.py), not /run/ccm
        env["CCM_LOCK_DIR"] = os.environ["CCM_LOCK_DIR"]
    return env


def _check_old_or_new(managed: str) -> int:
    changed = 0
    for i in range(FILES):
        with open(os.path.join(managed, f"f{i:03d}")) as fh:
            text = fh.read()
        assert text in (_old(i), _new(i)), f"f{i:03d} is torn ({len(text)} bytes)"
        changed += text == _new(i)
    return changed


def _temps(*dirs: str):
    return [os.path.join(d, n) for d in dirs for n in os.listdir(d) if TEMP.search(n)]


def test_kill9_trials(tmp_path):
    root_cwd = tmp_path / "work"
    root_cwd.mkdir()
    managed = str(tmp_path / "managed")
    os.mkdir(managed)
    (root_cwd / "m.yaml").write_text(_manifest(managed))
    store = str(tmp_path / "store")
    assert ccm("session", "new", "--directory", store, cwd=str(root_cwd), env=cli_env(str(root_cwd))).returncode == 0
    env = _env(tmp_path, store)
    argv = [sys.executable, "-m", "ccm", "apply", "m.yaml"]

    _reset(managed)
    full = subprocess.run(argv, cwd=str(root_cwd), env=env, capture_output=True, text=True, timeout=300)
    assert full.returncode == 0, full.stderr
    assert _check_old_or_new(managed) == FILES
    # timed like the trials run: from here on the manifest comes from the compiled plan
    _reset(managed)
    start = time.monotonic()
    full = subprocess.run(argv, cwd=str(root_cwd), env=env, capture_output=True, text=True, timeout=300)
    duration = time.monotonic() - start
    assert full.returncode == 0, full.stderr
    assert _check_old_or_new(managed) == FILES

    rng = random.Random(SEED)
    partial = 0
    trial = 0
    # until TRIALS are done and at least one kill landed half-way (a kill between two batch
    # renames is a narrow window with few trials): at most four times as many
    while trial < TRIALS or (partial == 0 and trial < 4 * TRIALS):
        trial += 1
        _reset(managed)
        delay = rng.uniform(0, duration)
        kill9_after(argv, str(root_cwd), env, delay)
        changed = _check_old_or_new(managed)
        partial += 0 < changed < FILES
        again = subprocess.run(argv, cwd=str(root_cwd), env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, (trial, delay, again.stderr)
        assert _check_old_or_new(managed) == FILES
        assert _temps(managed, store) == [], (trial, delay)
        report = ccm("session", "report", "--session", store, cwd=str(root_cwd), env=cli_env(str(root_cwd)))
        assert report.returncode == 0 and "Total Resources" in report.stdout, (trial, report.stderr)
        shutil.rmtree(store)   # a fresh store per trial keeps the report's cost flat
        os.mkdir(store, 0o700)
    # the trials must actually interrupt applies half-way, or they prove nothing
    assert TRIALS < 5 or partial > 0
    print(f"{trial} kill -9 trials (seed {SEED}), {partial} killed half-way, full run {duration:.2f}s")
