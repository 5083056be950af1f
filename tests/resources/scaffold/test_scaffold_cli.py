"""``ccm ensure scaffold``: flag mapping and one real run of the CLI process."""
from __future__ import annotations

import argparse
import os

import pytest

from ccm.cli.ensure_extra import add_scaffold_args, scaffold_properties
from ccm.model.errors import UsageError, ValidationError
from tests.kit import ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def parse(argv):
    p = argparse.ArgumentParser()
    add_scaffold_args(p)
    return scaffold_properties(p.parse_args(argv))


def test_flag_mapping(tmp_path):
    props = parse([str(tmp_path / "t"), str(tmp_path), "absent", "--skip-empty", "--left-delimiter", "<<",
                   "--right-delimiter", ">>", "--engine", "go", "--post", "*.sh=chmod +x {}",
                   "--post", "*.go=gofmt -w", "--purge"])
    assert props == {"name": str(tmp_path / "t"), "ensure": "absent", "engine": "go", "source": str(tmp_path),
                     "skip_empty": True, "left_delimiter": "<<", "right_delimiter": ">>", "purge": True,
                     "post": [{"*.sh": "chmod +x {}"}, {"*.go": "gofmt -w"}]}


def test_defaults(tmp_path):
    props = parse([str(tmp_path / "t"), str(tmp_path), "--no-skip-empty"])
    assert props == {"name": str(tmp_path / "t"), "ensure": "present", "engine": "jet", "source": str(tmp_path)}
    assert parse([str(tmp_path / "t")])["source"] == ""  # validation reports it


def test_errors(tmp_path):
    with pytest.raises(ValidationError, match="does not exist"):
        parse([str(tmp_path / "t"), str(tmp_path / "missing")])
    with pytest.raises(UsageError):
        parse([str(tmp_path / "t"), str(tmp_path), "--post", "no-equals"])


def test_cli_process_end_to_end(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "run.sh").write_text("echo [[ 1 + 1 ]] [[ len(facts) > 0 ]]\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    args = ["ensure", "scaffold", str(tmp_path / "out"), "src", "--post", "*.sh=chmod +x {}"]
    first = ccm(*args, env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "changed" in first.stdout
    assert os.access(tmp_path / "out/run.sh", os.X_OK)
    assert (tmp_path / "out/run.sh").read_text() == "echo 2 true\n"
    second = ccm(*args, "--noop", env=env, cwd=tmp_path)
    assert second.returncode == 0 and "stable" in second.stdout, second.stdout + second.stderr
    missing = ccm(*args[:3], env=env, cwd=tmp_path)
    assert missing.returncode == 1 and "source cannot be empty" in missing.stderr
