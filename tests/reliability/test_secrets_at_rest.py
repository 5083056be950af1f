"""Secrets never kept at rest: the compiled-plan cache, ``--last-run``, ``--render``.

Each canary sits in one credential channel (URL user info, an archive's ``password`` and
``headers``, data marked ``# @sensitive``); after the run no file ccm wrote holds it, and
``--render`` shows it redacted. A manifest without secrets is still cached (the check
that caching happens at all).
"""
from __future__ import annotations

import json
import os

import pytest

from tests.kit import ccm
from tests.reliability.cli import cli_env

pytestmark = pytest.mark.reliability

CANARY = "Canary-AtRest-7"

ARCHIVE = """ccm:
  resources:
    - archive:
        - {work}/a.tar.gz:
            ensure: present
            url: {url}
            owner: root
            group: root
{extra}"""
MANIFESTS = {
    "url-userinfo": ARCHIVE.format(work="{work}", url=f"http://deploy:{CANARY}@127.0.0.1:1/a.tar.gz", extra=""),
    "password": ARCHIVE.format(work="{work}", url="http://127.0.0.1:1/a.tar.gz",
                               extra=f"            username: deploy\n            password: {CANARY}\n"),
    "headers": ARCHIVE.format(work="{work}", url="http://127.0.0.1:1/a.tar.gz",
                              extra=f"            headers:\n              Authorization: Bearer {CANARY}\n"),
    "sensitive-data": f"""data:
  # @sensitive
  db_password: "{CANARY}"
ccm:
  resources:
    - file:
        - {{work}}/plain:
            ensure: present
            content: "no template here\\n"
            owner: root
            group: root
            mode: "0644"
""",
}


def _files_holding(root: str, needle: str):
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as fh:
                if needle.encode() in fh.read():
                    found.append(os.path.join(dirpath, name))
    return found


def _plans(cache: str):
    return [n for n in os.listdir(cache) if n.startswith("plan-")] if os.path.isdir(cache) else []


@pytest.mark.parametrize("kind", sorted(MANIFESTS))
def test_plan_cache_never_stores_a_secret(tmp_path, kind):
    """Issue 24: the plan cache held URL credentials, archive passwords, header values and
    # @sensitive data in plain text, long after the run."""
    work = tmp_path / "w"
    work.mkdir()
    cache = str(tmp_path / "cache")
    manifest = work / "m.yaml"
    manifest.write_text(MANIFESTS[kind].format(work=work))
    for _ in range(2):   # a second run would read a stored plan
        ccm("apply", str(manifest), cwd=str(work), env=cli_env(str(work), {"CCM_CACHE_DIR": cache}))
    assert _files_holding(cache, CANARY) == [] and _plans(cache) == []
    # the same resource without the secret is cached: the check above is not vacuous
    plain = (ARCHIVE.format(work=work, url="http://127.0.0.1:1/a.tar.gz", extra="") if kind != "sensitive-data"
             else MANIFESTS[kind].format(work=work).replace("# @sensitive\n", ""))
    manifest.write_text(plain)
    ccm("apply", str(manifest), cwd=str(work), env=cli_env(str(work), {"CCM_CACHE_DIR": cache}))
    assert len(_plans(cache)) == 1


def test_last_run_record_is_scrubbed_without_a_session_store(tmp_path):
    """Issue 24: with no session store, failed_resources[].errors held the # @sensitive value
    (an exec's stderr, its command line) while the console showed REDACTED."""
    (tmp_path / "m.yaml").write_text(f"""data:
  # @sensitive
  token: "{CANARY}"
ccm:
  resources:
    - exec:
        - leak:
            command: "/bin/sh -c 'echo using {{{{ Data.token }}}} >&2; exit 4'"
""")
    last = tmp_path / "last.json"
    res = ccm("apply", "m.yaml", "--last-run", str(last), cwd=str(tmp_path),
              env=cli_env(str(tmp_path), {"CCM_SESSION_STORE": None}))
    assert res.returncode == 1 and "REDACTED" in res.stdout and CANARY not in res.stdout + res.stderr
    record = json.loads(last.read_text())
    assert record["failed_resources"] and CANARY not in last.read_text()
    assert "using REDACTED" in record["failed_resources"][0]["errors"][0]


def test_render_redacts_url_userinfo_in_data(tmp_path):
    """Issue 24: --render printed url: http://u:PASSWORD@... held in data:."""
    (tmp_path / "m.yaml").write_text(f"""data:
  mirror: "http://svc:{CANARY}@mirror.example.com/debian"
  nested:
    - "git clone https://bot:{CANARY}@git.example.com/repo.git"
ccm:
  resources:
    - exec:
        - /bin/true: {{}}
""")
    res = ccm("apply", "m.yaml", "--render", cwd=str(tmp_path), env=cli_env(str(tmp_path)))
    assert res.returncode == 0, res.stderr
    assert CANARY not in res.stdout and "http://REDACTED@mirror.example.com/debian" in res.stdout
    assert "https://REDACTED@git.example.com/repo.git" in res.stdout
