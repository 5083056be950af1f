"""Shared test set-up: make the source tree importable and expose common fixtures."""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def pytest_configure(config):
    # Keep the tests' schema-verdict cache away from the host's /var/cache/ccm.
    import tempfile

    os.environ.setdefault("CCM_CACHE_DIR", tempfile.mkdtemp(prefix="ccm-test-cache-"))


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _private_lock_dir(tmp_path_factory, monkeypatch):
    """Each test gets its own lock directory (run, package and service locks), so tests
    running in parallel never contend for the host's and never touch /run/ccm."""
    monkeypatch.setenv("CCM_LOCK_DIR", str(tmp_path_factory.mktemp("locks")))
