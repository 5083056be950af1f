"""``kill -9`` at random moments during a batched first run of 200 files replacing old
content (issue 16): the batch makes its temp files durable together and renames them only
afterwards, so a killed run must still leave every file with its old or its new bytes,
exactly, and the next run must converge and leave no temp file behind.

``CCM_CRASH_TRIALS`` trials in all (default 100), split between two batch sizes: the
default one and batches of 16 (``CCM_WRITE_BATCH``), where a run is made durable and
renamed in 13 steps, so many kills land between two flushes. Kill moments are uniform
over one full run's duration, from a seeded generator (``CCM_CRASH_SEED``): a failure
names its trial and delay and can be replayed. ``make test-crash``; ``.ci/run`` runs it.
"""
from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from typing import Dict, List, Tuple

import pytest

from tests.reliability.cli import kill9_after

pytestmark = pytest.mark.crash

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = 200
TRIALS = int(os.environ.get("CCM_CRASH_TRIALS", "100"))
SEED = int(os.environ.get("CCM_CRASH_SEED", "16"))
TEMP = re.compile(r"\.ccm-[0-9a-f]{12}\.tmp$")


def _old(i: int) -> bytes:
    return f"old content of file {i}\n".encode() * 150


def _new(i: int) -> bytes:
    return f"NEW content of file {i}, longer\n".encode() * 250


def _manifest(managed: str) -> str:
    out = ["ccm:", "  resources:", "    - file:", "        - defaults:", "            ensure: present",
           f"            owner: \"{os.getuid()}\"", f"            group: \"{os.getgid()}\"",
           '            mode: "0640"']
    for i in range(FILES):
        text = _new(i).decode().replace("\n", "\\n")
        out += [f"        - {managed}/f{i:03d}:", f'            content: "{text}"']
    return "\n".join(out) + "\n"


def _reset(managed: str) -> None:
    for i in range(FILES):
        with open(os.path.join(managed, f"f{i:03d}"), "wb") as fh:
            fh.write(_old(i))


def _states(managed: str) -> Tuple[int, int]:
    """(old, new) counts; fails on any file that is neither, byte for byte."""
    old = new = 0
    for i in range(FILES):
        with open(os.path.join(managed, f"f{i:03d}"), "rb") as fh:
            data = fh.read()
        if data == _old(i):
            old += 1
        elif data == _new(i):
            new += 1
        else:
            raise AssertionError(f"f{i:03d} is neither old nor new: {len(data)} bytes")
    return old, new


def _temps(directory: str) -> List[str]:
    return [n for n in os.listdir(directory) if TEMP.search(n)]


@pytest.mark.parametrize("batch", ["default", "16"])
def test_kill9_during_a_batched_first_run(tmp_path, batch):
    managed = str(tmp_path / "managed")
    os.mkdir(managed)
    (tmp_path / "m.yaml").write_text(_manifest(managed))
    env: Dict[str, str] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT,
                           "HOME": str(tmp_path), "CCM_CACHE_DIR": str(tmp_path / "cache"),
                           "CCM_LOCK_DIR": os.environ["CCM_LOCK_DIR"]}
    if batch != "default":
        env["CCM_WRITE_BATCH"] = batch
    argv = [sys.executable, "-m", "ccm", "apply", "--no-report", "m.yaml"]

    def full_run() -> float:
        started = time.monotonic()
        done = subprocess.run(argv, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return time.monotonic() - started

    _reset(managed)
    duration = full_run()
    assert _states(managed) == (0, FILES)

    trials = TRIALS // 2 + (TRIALS % 2 if batch == "default" else 0)
    rng = random.Random(f"{SEED}-{batch}")
    seen = {"all old": 0, "half-way": 0, "all new": 0}
    for trial in range(trials):
        _reset(managed)
        delay = rng.uniform(0, duration)
        kill9_after(argv, str(tmp_path), env, delay)
        try:
            old, new = _states(managed)
        except AssertionError as exc:
            raise AssertionError(f"trial {trial} (batch {batch}, kill after {delay:.3f}s): {exc}") from None
        seen["all old" if new == 0 else "all new" if old == 0 else "half-way"] += 1
        full_run()   # the next run converges and sweeps what the killed one left
        assert _states(managed) == (0, FILES), (trial, delay)
        assert _temps(managed) == [], (trial, delay, _temps(managed))
    # a steady run after all that: nothing left to change
    steady = subprocess.run(argv, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert steady.returncode == 0 and " changed " not in steady.stdout, steady.stdout[-2000:]
    if trials >= 20 and batch != "default":   # kills must land between flushes, or this proves little
        assert seen["half-way"] > 0, seen
    print(f"batch {batch}: {trials} kill -9 trials (seed {SEED}), full run {duration:.2f}s: {seen}")
