"""Canary secrets planted in every credential channel, grepped for in every output channel."""
from __future__ import annotations

import os

import pytest

from tests.kit import ccm
from tests.reliability.cli import cli_env

CANARY = "Canary-S3cret-42"
URL_PW = "Canary#P/w?1"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "m.yaml").write_text(f"""
data:
  # @sensitive
  db_password: "{CANARY}"
  user: app
ccm:
  resources:
    - file:
        - {tmp_path}/conf:
            ensure: present
            content: "user={{{{ Data.user }}}} password={{{{ Data.db_password }}}}\\n"
            owner: root
            group: root
            mode: "0600"
    - exec:
        - /bin/false {{{{ Data.db_password }}}}:
            logoutput: true
    - archive:
        - {tmp_path}/a.tar.gz:
            ensure: present
            url: "http://user:{URL_PW}@127.0.0.1:1/a.tar.gz"
            owner: root
            group: root
""")
    store = tmp_path / "store"
    assert ccm("session", "new", "--directory", str(store), cwd=str(tmp_path),
               env=cli_env(str(tmp_path))).returncode == 0
    return tmp_path


def _scan(project, outputs):
    found = []
    for name, text in outputs:
        for secret in (CANARY, URL_PW, "Canary"):
            if secret in text:
                found.append((name, secret))
    for dirpath, _, files in os.walk(project / "store"):
        for f in files:
            with open(os.path.join(dirpath, f), errors="replace") as fh:
                text = fh.read()
            if "Canary" in text:
                found.append((f"event {f}", "canary"))
    return found


@pytest.mark.parametrize("flags", [[], ["--json"], ["--render"], ["--noop"], ["--debug"], ["--json", "--debug"]])
def test_no_canary_in_any_output(project, flags):
    res = ccm("apply", "m.yaml", *flags, cwd=str(project),
              env=cli_env(str(project), {"CCM_SESSION_STORE": str(project / "store")}))
    assert "--debug" in flags or "Traceback" not in res.stderr   # --debug prints tracebacks by design
    assert _scan(project, [("stdout", res.stdout), ("stderr", res.stderr)]) == []
    if not flags or flags == ["--debug"]:
        assert "REDACTED" in res.stdout + res.stderr


def test_url_passwords_with_specials_in_hiera_and_bundles(tmp_path):
    for args in (["hiera", "parse", f"http://u:{URL_PW}@127.0.0.1:1/x.yaml"],
                 ["apply", f"http://u:{URL_PW}@127.0.0.1:1/bundle.tar.gz"],
                 ["--debug", "hiera", "parse", f"https://u:{URL_PW}@127.0.0.1:1/x.yaml"],
                 ["ensure", "archive", str(tmp_path / "a.tar.gz"), "--url", "http://127.0.0.1:1/a.tar.gz",
                  "-H", f"Authorization Bearer {CANARY}"]):
        res = ccm(*args, cwd=str(tmp_path), env=cli_env(str(tmp_path)))
        assert res.returncode != 0
        assert "--debug" in args or "Traceback" not in res.stderr
        out = res.stdout + res.stderr
        assert "Canary" not in out, (args, out)
