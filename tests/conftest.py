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
