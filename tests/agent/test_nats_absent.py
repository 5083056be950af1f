"""Without the NATS layer in this build, obj:// sources, kv:// data and registration
publishing fail with one clear line, and never block the local manifests."""
from __future__ import annotations

import importlib.util

import pytest

from .helpers import file_manifest, wait_for, write_yaml
from .test_agent import Run

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ccm.nats") is not None,
                                reason="this build has the NATS layer (tests/agent/test_nats.py covers it)")


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setenv("CCM_AGENT_TEST_TIMESCALE", "0.01")


def test_obj_source_requires_the_nats_layer(tmp_path):
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    with Run(tmp_path, {"interval": "1h", "manifests": ["obj://MANIFESTS/app.tar.gz", m],
                        "registration": "jetstream"}) as r:
        wait_for(lambda: (tmp_path / "f0.txt").exists(), 10, what="local manifest applied")
        w = r.worker("obj://MANIFESTS/app.tar.gz")
        wait_for(lambda: w.status.last_error, 10, what="obj error")
        assert "obj:// sources need the NATS layer" in w.status.last_error
        assert r.messages("Registration publishing disabled")


def test_kv_data_requires_the_nats_layer(tmp_path):
    m = write_yaml(str(tmp_path / "m.yaml"), file_manifest(str(tmp_path)))
    with Run(tmp_path, {"interval": "1h", "manifests": [m], "external_data_url": "kv://DATA/common"}) as r:
        errors = r.messages("Could not resolve external data")
        assert errors and "need the NATS layer" in dict(errors[0]["attrs"])["error"]
        assert not (tmp_path / "f0.txt").exists()
