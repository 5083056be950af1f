"""Fixtures of the fleet report tests: a private state directory for every test, a real
``nats-server -js`` and a NATS context pointing at it (``tests/nats/natsfixture.py``)."""
from __future__ import annotations

import os
import sys
from typing import Dict

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
for _p in (os.path.join(TESTS, "nats"), TESTS, HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from fleetreports import make_env  # noqa: E402
from natsfixture import Server  # noqa: E402


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch) -> str:
    """Queued reports go to the test's directory, never /var/lib/ccm."""
    path = str(tmp_path / "state")
    monkeypatch.setenv("CCM_STATE_DIR", path)
    monkeypatch.delenv("CCM_REPORT_CLIENT", raising=False)
    return path


@pytest.fixture
def nats_server(tmp_path):
    server = Server(str(tmp_path / "nats")).start()
    yield server
    server.stop()


@pytest.fixture
def env(tmp_path, nats_server, state_dir, monkeypatch) -> Dict[str, str]:
    """A subprocess environment (and this process's) whose context CCM is the test server."""
    e = make_env(tmp_path, nats_server.url, state_dir)
    monkeypatch.setenv("XDG_CONFIG_HOME", e["XDG_CONFIG_HOME"])
    monkeypatch.delenv("NATS_CONTEXT", raising=False)
    return e
