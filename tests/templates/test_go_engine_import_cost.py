"""The Go engine, Sprig and Go's time machinery are loaded only when something uses them:
``ccm apply`` of a manifest with expressions but no Go-engine scaffold imports none of it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAZY = ("ccm.templates.gotmpl", "ccm.gocompat.time", "ccm.gocompat.timefmt", "ccm.gocompat.timeparse", "ccm.gocompat.duration",
        "ccm.gocompat.regexp", "ccm.gocompat.semver", "ccm.gocompat.url", "zoneinfo")


def _loaded_after_apply(tmp_path, content: str) -> list:
    target = tmp_path / "f.conf"
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text("data:\n  port: 8080\nccm:\n  resources:\n    - file:\n        - %s:\n"
                        "            ensure: present\n            content: %s\n            owner: \"%d\"\n"
                        "            group: \"%d\"\n            mode: \"0644\"\n"
                        % (target, json.dumps(content), os.getuid(), os.getgid()))
    env = dict(os.environ, HOME=str(tmp_path), CCM_CACHE_DIR=str(tmp_path / "cache"),
               CCM_LOCK_DIR=str(tmp_path / "locks"))
    code = ("import sys, json; from ccm.cli.main import main; rc = main(['apply', '--no-report', %r]);"
            "print(json.dumps([rc, sorted(sys.modules)]))" % str(manifest))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    rc, modules = json.loads(r.stdout.strip().splitlines()[-1])
    assert rc == 0, r.stderr
    return [m for m in modules if m.startswith(LAZY)]


def test_expressions_without_dates_load_no_go_engine(tmp_path):
    assert _loaded_after_apply(tmp_path, "port={{ Data.port + 1 }} {{ upper('x') }} {{ let y = 2; y }}\n") == []
    assert (tmp_path / "f.conf").read_text() == "port=8081 X 2\n"


def test_a_date_function_loads_only_the_time_modules(tmp_path):
    loaded = _loaded_after_apply(tmp_path, "{{ string(duration('90m')) }}\n")
    assert (tmp_path / "f.conf").read_text() == "1h30m0s\n"
    assert not any(m.startswith("ccm.templates.gotmpl") for m in loaded), loaded
