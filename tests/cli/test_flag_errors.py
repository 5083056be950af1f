"""Errors of a file given by a flag name the flag (``--hiera``, ``--facts``), in apply,
validate and ensure, whatever went wrong with the file."""
from __future__ import annotations

import pytest

from tests.kit import ccm as run, clean_env


def ccm_in(cwd, *args, **env):
    return run(*args, cwd=cwd, env=clean_env(cwd, **env), timeout=60)


@pytest.fixture
def work(tmp_path):
    (tmp_path / "m.yaml").write_text("ccm:\n  resources:\n    - exec:\n        name: /bin/true\n")
    (tmp_path / "bad.yaml").write_text("data: [\n")
    (tmp_path / "list.yaml").write_text("- 1\n")
    return tmp_path


@pytest.mark.parametrize("command", [["apply", "--noop"], ["validate"]])
@pytest.mark.parametrize("flag,file,starts", [
    ("--hiera", "nope.yaml", "--hiera nope.yaml: file not found: "),
    ("--hiera", "bad.yaml", "--hiera bad.yaml: failed to parse "),
    ("--hiera", "list.yaml", "--hiera list.yaml: "),
    ("--facts", "nope.yaml", "--facts: path 'nope.yaml' does not exist"),
    ("--facts", "bad.yaml", "failed to parse --facts file bad.yaml:2:1: "),
    ("--facts", "list.yaml", "--facts file list.yaml must contain a map, got list"),
])
def test_file_flag_errors_name_the_flag(work, command, flag, file, starts):
    r = ccm_in(work, *command, flag, file, "m.yaml")
    assert r.returncode == 1
    line = r.stderr.splitlines()[0]
    line = line[len("ccm: error: "):] if line.startswith("ccm: error: ") else line[len("m.yaml: "):]
    assert line.startswith(starts), r.stderr


def test_hiera_from_the_environment_names_the_variable(work):
    r = ccm_in(work, "apply", "--noop", "m.yaml", CCM_HIERA_DATA="nope.yaml")
    assert r.returncode == 1
    assert r.stderr.startswith("ccm: error: --hiera (CCM_HIERA_DATA) nope.yaml: file not found: "), r.stderr


def test_ensure_hiera_error_names_the_flag(work):
    r = ccm_in(work, "ensure", "exec", "/bin/true", "--noop", "--hiera", "bad.yaml")
    assert r.returncode == 1
    assert r.stderr.startswith("ccm: error: --hiera bad.yaml: failed to parse "), r.stderr
