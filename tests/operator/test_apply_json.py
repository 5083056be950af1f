"""``ccm apply --json`` prints one JSON document on stdout even when no run happens."""
from __future__ import annotations

import json

from ccm.locks import EXIT_LOCKED, GlobalLock
from tests.kit import ccm
from tests.operator.helpers import ccm_env


def test_rejected_manifest_prints_a_json_error_document(tmp_path):
    m = tmp_path / "m.yaml"
    m.write_text("ccm:\n  resources:\n    - exec:\n        name: /bin/true\n        nope: 1\n"
                 "    - exec:\n        name: /bin/false\n        require: ['exec#later']\n")
    r = ccm("apply", "--json", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["rejected"] is True and doc["skipped"] is False and doc["events"] == []
    assert doc["manifest"] == str(m) and len(doc["problems"]) == 2
    assert "unknown property 'nope'" in doc["problems"][0] and "exec#later" in doc["problems"][1]
    assert doc["error"] == "\n".join(doc["problems"])
    assert "unknown property 'nope'" in r.stderr   # the error line still goes to stderr
    m.write_text("ccm: [\n")
    doc = json.loads(ccm("apply", "--json", str(m), cwd=tmp_path, env=ccm_env(tmp_path)).stdout)
    assert doc["rejected"] is True and doc["error"].startswith("invalid YAML: ")
    doc = json.loads(ccm("apply", "--json", str(tmp_path / "gone.yaml"), cwd=tmp_path, env=ccm_env(tmp_path)).stdout)
    assert doc["rejected"] is True and "gone.yaml" in doc["error"]


def test_run_skipped_for_the_lock_prints_a_json_document(tmp_path):
    m = tmp_path / "m.yaml"
    m.write_text("ccm:\n  resources:\n    - exec:\n        name: /bin/true\n")
    with GlobalLock("run", directory=str(tmp_path / "locks")).hold("a cron run"):
        r = ccm("apply", "--json", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == EXIT_LOCKED
    doc = json.loads(r.stdout)
    assert doc["skipped"] is True and doc["rejected"] is False and "holds the run lock" in doc["error"]
