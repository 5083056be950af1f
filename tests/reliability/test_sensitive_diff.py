"""A diff never shows content from ``# @sensitive`` data (issue 24): not the new secret, and
not the old one still on disk, in noop and in a real run; one line says it was withheld.
The same manifest without the annotation shows its diff (the check that diffs happen)."""
from __future__ import annotations

import os

import pytest

from tests.kit import ccm
from tests.reliability.cli import cli_env

pytestmark = pytest.mark.reliability

OLD, NEW = "Canary-OldOnDisk-3", "Canary-NewInData-4"

MANIFEST = """data:
  # @sensitive
  password: {new}
  port: 8080
ccm:
  resources:
    - file:
        name: {target}
        ensure: present
        content: "port={{{{ Data.port }}}}\\npassword={{{{ Data.password }}}}\\n"
        owner: root
        group: root
        mode: "0600"
"""


def _setup(tmp_path, sensitive=True):
    target = tmp_path / "app.conf"
    target.write_text(f"port=80\npassword={OLD}\n")
    os.chmod(target, 0o600)
    text = MANIFEST.format(new=NEW, target=target)
    if not sensitive:
        text = text.replace("  # @sensitive\n", "")
    m = tmp_path / "m.yaml"
    m.write_text(text)
    return target, m


@pytest.mark.parametrize("mode", [["--noop"], []], ids=["noop", "real"])
def test_diff_of_sensitive_content_is_withheld(tmp_path, mode):
    target, m = _setup(tmp_path)
    r = ccm("apply", "--diff", *mode, str(m), cwd=str(tmp_path), env=cli_env(str(tmp_path)))
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert OLD not in out and NEW not in out, out
    assert "@@" not in out and "-port=80" not in out   # withheld whole, not line by line
    assert [ln for ln in r.stdout.splitlines() if "withheld" in ln] == [
        f"diff of file#{target} withheld: its content holds @sensitive data"]
    assert (NEW in target.read_text()) == (not mode)


def test_diff_without_the_annotation_is_shown(tmp_path):
    _target, m = _setup(tmp_path, sensitive=False)
    r = ccm("apply", "--noop", "--diff", str(m), cwd=str(tmp_path), env=cli_env(str(tmp_path)))
    assert r.returncode == 0 and "-port=80" in r.stdout and "+port=8080" in r.stdout, r.stdout
    assert "withheld" not in r.stdout
