"""Fixtures: a fresh ``nats-server -js`` per test, and a NATS context pointing at it."""
from __future__ import annotations

import os
import sys
from typing import Dict

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (HERE, os.path.dirname(HERE)):   # natsfixture, and tests/ for shared helpers
    if _p not in sys.path:
        sys.path.insert(0, _p)

from natsfixture import Server, write_context  # noqa: E402


@pytest.fixture
def nats_server(tmp_path):
    server = Server(str(tmp_path / "nats")).start()
    yield server
    server.stop()


@pytest.fixture
def nats_env(tmp_path, nats_server, monkeypatch) -> Dict[str, str]:
    """Process environment whose default context (CCM) points at the test server."""
    cfg = str(tmp_path / "config")
    write_context(cfg, "CCM", {"url": nats_server.url})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "CCM_"))}
    env["XDG_CONFIG_HOME"] = cfg
    env["CCM_CACHE_DIR"] = os.environ.get("CCM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", cfg)
    monkeypatch.delenv("NATS_CONTEXT", raising=False)
    return env

