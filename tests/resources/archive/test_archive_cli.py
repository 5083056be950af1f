"""``ccm ensure archive``: flag mapping, and one real run of the CLI process against a real server."""
from __future__ import annotations

import argparse
import hashlib
import io
import os
import tarfile

import pytest

from ccm.cli.ensure_extra import add_archive_args, archive_properties
from ccm.model.errors import UsageError, ValidationError
from tests.httpfixture import Server
from tests.kit import ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def parse(argv, env=None, monkeypatch=None):
    p = argparse.ArgumentParser()
    add_archive_args(p)
    return archive_properties(p.parse_args(argv))


def test_flag_mapping(tmp_path, monkeypatch):
    monkeypatch.delenv("HTTP_PASSWORD", raising=False)
    props = parse([str(tmp_path / "a.tgz"), "https://h/a.tgz", "-H", "Authorization: Bearer x", "--header", "Accept=y",
                   "--username", "bob", "--password", "pw", "--checksum", "ab" * 32, "--extract", str(tmp_path),
                   "--creates", str(tmp_path / "c"), "--cleanup", "--owner", "daemon:adm"])
    assert props == {"name": str(tmp_path / "a.tgz"), "ensure": "present", "url": "https://h/a.tgz",
                     "headers": {"Authorization": "Bearer x", "Accept": "y"}, "username": "bob", "password": "pw",
                     "checksum": "ab" * 32, "extract_parent": str(tmp_path), "creates": str(tmp_path / "c"),
                     "cleanup": True, "owner": "daemon", "group": "adm"}


def test_defaults_and_password_env(monkeypatch, tmp_path):
    import grp
    import pwd

    monkeypatch.setenv("HTTP_PASSWORD", "from-env")
    monkeypatch.chdir(tmp_path)
    p = argparse.ArgumentParser()
    add_archive_args(p)  # the env default is read when the flags are built
    props = archive_properties(p.parse_args(["rel/a.zip", "http://h/a.zip"]))
    assert props["password"] == "from-env"
    assert props["name"] == str(tmp_path / "rel/a.zip")
    assert props["owner"] == pwd.getpwuid(os.getuid()).pw_name
    assert props["group"] == grp.getgrgid(os.getgid()).gr_name
    assert "cleanup" not in props and "headers" not in props


def test_extract_must_exist(tmp_path):
    with pytest.raises(ValidationError, match="does not exist"):
        parse([str(tmp_path / "a.tgz"), "http://h/a.tgz", "--extract", str(tmp_path / "nope")])
    with pytest.raises(UsageError):
        parse([str(tmp_path / "a.tgz"), "http://h/a.tgz", "-H", "novalue"])


def test_cli_process_end_to_end(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("app/VERSION")
        info.size = 3
        tf.addfile(info, io.BytesIO(b"v1\n"))
    body = buf.getvalue()
    (tmp_path / "x").mkdir()
    (tmp_path / "sess").mkdir()
    env = dict(os.environ, PYTHONPATH=ROOT, HTTP_PASSWORD="s3cret")
    with Server() as s:
        s.route("/a.tar.gz", body=body, auth=("bob", "s3cret"))
        args = ["ensure", "archive", str(tmp_path / "a.tar.gz"), s.url("/a.tar.gz"), "--username", "bob",
                "--checksum", hashlib.sha256(body).hexdigest(), "--extract", str(tmp_path / "x"), "--creates", str(tmp_path / "x/app/VERSION"), "--cleanup",
                "--session", str(tmp_path / "sess")]
        first = ccm(*args, env=env, cwd=tmp_path)
        assert first.returncode == 0, first.stdout + first.stderr
        assert "Archive downloaded bytes=" in first.stdout and "changed" in first.stdout
        second = ccm(*args, env=env, cwd=tmp_path)
        assert second.returncode == 0 and "stable" in second.stdout
    assert (tmp_path / "x/app/VERSION").read_text() == "v1\n"
    assert not (tmp_path / "a.tar.gz").exists()
    for f in (tmp_path / "sess").iterdir():
        assert "s3cret" not in f.read_text()
    assert "s3cret" not in first.stdout + first.stderr + second.stdout + second.stderr
