"""Shared test set-up: make the source tree importable and expose common fixtures."""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


_OWN_CACHE_DIR = []   # the cache directory this process made (and so removes)


def pytest_configure(config):
    # Keep the tests' schema-verdict cache away from the host's /var/cache/ccm. Made once,
    # by the process that finds none (xdist workers inherit the controller's), and removed
    # by it at the end: ``setdefault(..., mkdtemp())`` made one in every process and
    # removed none, leaving /tmp/ccm-test-cache-* behind after every run.
    if not os.environ.get("CCM_CACHE_DIR"):
        import tempfile

        path = tempfile.mkdtemp(prefix="ccm-test-cache-")
        _OWN_CACHE_DIR.append(path)
        os.environ["CCM_CACHE_DIR"] = path


def pytest_unconfigure(config):
    import shutil

    while _OWN_CACHE_DIR:
        path = _OWN_CACHE_DIR.pop()
        shutil.rmtree(path, ignore_errors=True)
        if os.environ.get("CCM_CACHE_DIR") == path:
            del os.environ["CCM_CACHE_DIR"]


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _private_lock_dir(tmp_path_factory, monkeypatch):
    """Each test gets its own lock directory (run, package and service locks), so tests
    running in parallel never contend for the host's and never touch /run/ccm."""
    monkeypatch.setenv("CCM_LOCK_DIR", str(tmp_path_factory.mktemp("locks")))
