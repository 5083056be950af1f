"""A test session leaves no ``ccm-test-cache-*`` directory behind (the conftest made one in
every process, controller and xdist workers alike, and removed none)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("workers", [["-p", "no:xdist"], ["-n", "2"]])
def test_a_test_session_leaves_no_cache_directory(tmp_path, workers):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CCM_CACHE_DIR" and not k.startswith("PYTEST_")}
    env.update(TMPDIR=str(tmp), PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", *workers, "tests/test_readfile.py", "-k", "not slow"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith("ccm-test-cache-")) == []
