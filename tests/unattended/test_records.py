"""--last-run JSON record and the last-run gauges of --metrics-file, from real runs."""
from __future__ import annotations

import json
import os
import time

from tests.kit import ccm
from tests.unattended.helpers import FAILING, file_manifest, manifest


def _load(path):
    return json.loads(path.read_text())


def test_last_run_of_a_changing_then_stable_run(tmp_path):
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    record = tmp_path / "state" / "last_run.json"
    record.parent.mkdir()
    before = time.time()
    res = ccm("apply", "--quiet", "--detailed-exit-codes", "--last-run", str(record), str(m))
    assert res.returncode == 2, res.stderr
    doc = _load(record)
    assert doc["exit_code"] == 2 and doc["manifest"] == str(m) and doc["noop"] is False
    assert doc["resources"]["changed"] == 1 and doc["resources"]["total"] == 1
    assert doc["failed_resources"] == [] and doc["rejected"] is False
    assert before - 1 <= doc["start_timestamp"] <= doc["end_timestamp"] <= time.time() + 1
    assert doc["start_time"].endswith("Z") and doc["duration_seconds"] >= 0
    res = ccm("apply", "--quiet", "--detailed-exit-codes", "--last-run", str(record), str(m))
    doc = _load(record)
    assert (res.returncode, doc["exit_code"], doc["resources"]["stable"], doc["resources"]["changed"]) == (0, 0, 1, 0)
    # atomic: only the record itself is in its directory, no temp files left
    assert os.listdir(record.parent) == ["last_run.json"]


def test_last_run_lists_failed_resources_with_messages(tmp_path):
    m = manifest(tmp_path / "m.yaml", FAILING)
    record = tmp_path / "last_run.json"
    res = ccm("apply", "--noop", "--last-run", str(record), str(m))
    doc = _load(record)
    assert res.returncode == doc["exit_code"]
    assert doc["noop"] is True
    res = ccm("apply", "--last-run", str(record), str(m))
    doc = _load(record)
    assert res.returncode == doc["exit_code"] == 1
    assert doc["resources"]["failed"] == 1
    [failed] = doc["failed_resources"]
    assert failed["resource"] == "exec#/bin/false"
    assert "exit code 1 not in allowed returns [0]" in failed["errors"][0]


def test_last_run_of_a_rejected_manifest(tmp_path):
    m = manifest(tmp_path / "m.yaml", "ccm:\n  resources:\n    - nosuchtype:\n        - x: {}\n")
    record = tmp_path / "last_run.json"
    metrics = tmp_path / "ccm.prom"
    res = ccm("apply", "--last-run", str(record), "--metrics-file", str(metrics), str(m))
    assert res.returncode == 1 and res.stderr.startswith("ccm: error: ")
    doc = _load(record)
    assert doc["exit_code"] == 1 and doc["rejected"] is True and doc["error"]
    assert doc["error"] in res.stderr and doc["resources"] == {}
    assert "choria_ccm_last_run_exit_code 1\n" in metrics.read_text()


def test_last_run_replaces_a_symlink_instead_of_following_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    record = tmp_path / "last_run.json"
    record.symlink_to(victim)
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    assert ccm("apply", "--quiet", "--last-run", str(record), str(m)).returncode == 0
    assert victim.read_text() == "keep me\n" and not record.is_symlink()
    assert _load(record)["exit_code"] == 0


def test_last_run_credentials_never_recorded(tmp_path):
    record = tmp_path / "last_run.json"
    res = ccm("apply", "--last-run", str(record), "http://bob:s3cret@127.0.0.1:9/none.tar.gz")
    assert res.returncode == 1
    text = record.read_text()
    assert "s3cret" not in text and "REDACTED" in text


def test_metrics_file_gains_last_run_gauges(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    m = manifest(tmp_path / "m.yaml", FAILING)
    path = tmp_path / "ccm.prom"
    before = time.time()
    res = ccm("apply", "--detailed-exit-codes", "--metrics-file", str(path), str(m))
    assert res.returncode == 4
    families = {f.name: f for f in text_string_to_metric_families(path.read_text())}
    ts = families["choria_ccm_last_run_timestamp_seconds"]
    code = families["choria_ccm_last_run_exit_code"]
    assert ts.type == code.type == "gauge"
    assert before - 1 <= ts.samples[0].value <= time.time() + 1
    assert code.samples[0].value == 4
    # the existing metrics are still there, in the same namespace
    assert "choria_ccm_resource_state_failed_count" in families


def test_gauges_not_exposed_until_set():
    from ccm.metrics import Metrics

    m = Metrics()
    assert "last_run" not in m.exposition()
    m.set("last_run_exit_code", 2)
    assert "choria_ccm_last_run_exit_code 2\n" in m.exposition()
    m.set("choria_ccm_resource_state_total_count", 1)  # a counter: refused, logged, not raised
    assert "choria_ccm_resource_state_total_count" not in m.exposition()


def test_unwritable_record_is_one_clear_error(tmp_path):
    m = file_manifest(tmp_path / "m.yaml", tmp_path / "out.txt")
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = ccm("apply", "--quiet", "--last-run", str(blocker / "last_run.json"), str(m))
    assert res.returncode == 1
    assert res.stderr.splitlines() == [f"ccm: error: cannot write --last-run {blocker / 'last_run.json'}: "
                                       "Not a directory"]
    assert (tmp_path / "out.txt").exists()  # the run itself happened
