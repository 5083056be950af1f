"""The bundled demo refuses to start without its environment inputs (make run sets them)."""
from __future__ import annotations

import os
import shutil

from tests.kit import ccm
from tests.operator.helpers import ROOT, ccm_env


def test_demo_without_its_inputs_refuses_to_start(tmp_path):
    demo = tmp_path / "demo"
    shutil.copytree(os.path.join(ROOT, "demo"), demo)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    r = ccm("apply", "manifest.yaml", cwd=demo,
            env=ccm_env(demo, CCM_DEMO_OWNER="root", CCM_DEMO_GROUP="root", CCM_LOCK_DIR=str(tmp_path / "locks")))
    assert r.returncode == 1
    assert "CCM_DEMO_ROOT, CCM_DEMO_OWNER and CCM_DEMO_GROUP must be set" in r.stderr
    assert f"{demo}/manifest.yaml: invalid pre_message template" in r.stderr
    assert "Executing manifest" not in r.stdout
    assert sorted(p.name for p in tmp_path.rglob("*") if "lock" not in str(p)) == before


def test_demo_with_its_inputs_runs(tmp_path):
    demo = tmp_path / "demo"
    shutil.copytree(os.path.join(ROOT, "demo"), demo)
    root = tmp_path / "root"
    root.mkdir()
    owner = __import__("pwd").getpwuid(os.getuid()).pw_name
    group = __import__("grp").getgrgid(os.getgid()).gr_name
    r = ccm("apply", "manifest.yaml", cwd=demo,
            env=ccm_env(demo, CCM_DEMO_ROOT=str(root), CCM_DEMO_OWNER=owner, CCM_DEMO_GROUP=group))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"Deploying demo-app into {root}" in r.stdout
    assert (root / "etc" / "demo-app" / "app.conf").exists()
