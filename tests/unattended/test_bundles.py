"""Bundles without a network: local .tar.gz/.tgz, directories, file:// URLs, --checksum for
local and http bundles, and one clean line for every bad input. Real runs of python -m ccm."""
from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile

import pytest

from tests.httpfixture import Server
from tests.kit import ccm, clean_env


def site_manifest(target) -> str:
    return f"""\
ccm:
  resources:
    - file:
        - {target}:
            ensure: present
            source: files/motd
            owner: {os.getuid()}
            group: {os.getgid()}
            mode: "0644"
"""


def make_bundle(path, target, extra=()):
    """site/manifest.yaml and site/files/motd (resolved against the manifest's directory)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        members = [("site/manifest.yaml", site_manifest(target).encode(), tarfile.REGTYPE, ""),
                   ("site/files/motd", b"from the bundle\n", tarfile.REGTYPE, ""), *extra]
        for name, data, kind, link in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mode, info.size = kind, link, 0o644, len(data)
            tf.addfile(info, io.BytesIO(data) if data else None)
    path.write_bytes(buf.getvalue())
    return path


def sha(path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def env(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return clean_env(TMPDIR=str(tmp))


@pytest.mark.parametrize("name", ["site.tar.gz", "site.tgz", "site.bundle"])
def test_local_bundle(tmp_path, env, name):
    target = tmp_path / "motd"
    bundle = make_bundle(tmp_path / name, target)
    res = ccm("apply", "--quiet", str(bundle), env=env)
    assert res.returncode == 0, res.stderr
    assert target.read_text() == "from the bundle\n"
    assert os.listdir(env["TMPDIR"]) == []  # the extraction is removed after the run


def test_file_urls_and_directories(tmp_path, env):
    target = tmp_path / "motd"
    bundle = make_bundle(tmp_path / "site.tgz", target)
    assert ccm("apply", "--quiet", f"file://{bundle}", env=env).returncode == 0
    assert target.read_text() == "from the bundle\n"
    site = tmp_path / "unpacked"
    site.mkdir()
    with tarfile.open(bundle) as tf:
        tf.extractall(site)
    target.unlink()
    res = ccm("apply", "--quiet", str(site / "site"), env=env)
    assert res.returncode == 0, res.stderr
    assert target.read_text() == "from the bundle\n"
    target.unlink()
    assert ccm("apply", "--quiet", f"file://{site}/site/", env=env).returncode == 0
    assert target.exists()
    # relative directory, from its parent
    target.unlink()
    assert ccm("apply", "--quiet", "site", env=env, cwd=site).returncode == 0
    assert target.exists()


def test_checksum_of_a_local_bundle(tmp_path, env):
    target = tmp_path / "motd"
    bundle = make_bundle(tmp_path / "site.tgz", target)
    res = ccm("apply", "--quiet", "--checksum", sha(bundle).upper().replace("SHA256", "sha256"), str(bundle),
              env=env)
    assert res.returncode == 0, res.stderr
    assert target.exists()


def test_checksum_mismatch_refuses_before_extracting(tmp_path, env):
    target = tmp_path / "motd"
    # an unsafe member too: a checksum refusal must come first, before the extractor looks
    bundle = make_bundle(tmp_path / "site.tgz", target, extra=[("site/evil", b"", tarfile.SYMTYPE, "/etc/passwd")])
    wrong = "sha256:" + "0" * 64
    res = ccm("apply", "--checksum", wrong, str(bundle), env=env)
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.splitlines() == [
        f"ccm: error: checksum mismatch for {bundle}: expected {wrong}, got {sha(bundle)}; "
        "bundle refused, nothing extracted"]
    assert not target.exists() and os.listdir(env["TMPDIR"]) == []
    # with the right checksum the unsafe member is what refuses it
    res = ccm("apply", "--checksum", sha(bundle), str(bundle), env=env)
    assert res.returncode == 1 and "invalid tar file detected" in res.stderr


def test_checksum_of_http_bundles(tmp_path, env):
    target = tmp_path / "motd"
    bundle = make_bundle(tmp_path / "site.tgz", target)
    with Server() as server:
        server.route("/site.tgz", body=bundle.read_bytes(), auth=("bob", "s3cret"))
        url = server.url("/site.tgz", userinfo="bob:s3cret")
        res = ccm("apply", "--checksum", "sha256:" + "1" * 64, url, env=env)
        assert res.returncode == 1 and "checksum mismatch for http://REDACTED@" in res.stderr
        assert "s3cret" not in res.stderr and not target.exists()
        res = ccm("apply", "--quiet", "--checksum", sha(bundle), url, env=env)
        assert res.returncode == 0, res.stderr
    assert target.read_text() == "from the bundle\n"
    assert os.listdir(env["TMPDIR"]) == []


def test_checksum_of_a_plain_manifest_and_a_directory(tmp_path, env):
    m = tmp_path / "m.yaml"
    m.write_text(site_manifest(tmp_path / "motd").replace("source: files/motd", "content: x"))
    assert ccm("apply", "--quiet", "--checksum", sha(m), str(m), env=env).returncode == 0
    res = ccm("apply", "--checksum", "sha256:" + "2" * 64, str(m), env=env)
    assert res.returncode == 1 and "checksum mismatch" in res.stderr
    res = ccm("apply", "--checksum", sha(m), str(tmp_path), env=env)
    assert res.returncode == 1 and "--checksum needs a bundle file" in res.stderr


@pytest.mark.parametrize("value", ["md5:abc", "sha256:xyz", "sha256:" + "a" * 63, ""])
def test_bad_checksum_values(tmp_path, value, env):
    res = ccm("apply", "--checksum", value, str(tmp_path / "x.tgz"), env=env)
    assert res.returncode == 1
    assert res.stderr.startswith("ccm: error: invalid checksum") and len(res.stderr.splitlines()) == 1


def _bad_inputs(tmp_path):
    """name -> a path (or URL) that is not a usable manifest."""
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(bytes(range(256)) * 4)
    gz_not_tar = tmp_path / "notar.tgz"
    import gzip

    gz_not_tar.write_bytes(gzip.compress(b"plain text, not a tar"))
    truncated = tmp_path / "trunc.tar.gz"
    make_bundle(tmp_path / "whole.tgz", tmp_path / "motd")
    truncated.write_bytes((tmp_path / "whole.tgz").read_bytes()[:60])
    empty_tgz = tmp_path / "empty.tgz"
    empty_tgz.write_bytes(b"")
    no_manifest = tmp_path / "nomanifest.tgz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("readme.txt")
        tf.addfile(info, io.BytesIO(b""))
    no_manifest.write_bytes(buf.getvalue())
    fifo = tmp_path / "fifo.tgz"
    os.mkfifo(fifo)
    (tmp_path / "emptydir").mkdir()
    listdoc = tmp_path / "list.yaml"
    listdoc.write_text("- a\n- b\n")
    badyaml = tmp_path / "bad.yaml"
    badyaml.write_text("ccm: [unclosed\n")
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("ccm:\n  pre_message: caf\xe9\n".encode("latin-1"))
    return {
        "binary": str(binary), "gzip-not-tar": str(gz_not_tar), "truncated": str(truncated),
        "empty-tgz": str(empty_tgz), "no-manifest": str(no_manifest), "fifo": str(fifo),
        "empty-dir": str(tmp_path / "emptydir"), "missing": str(tmp_path / "missing.yaml"),
        "missing-tgz": str(tmp_path / "missing.tgz"), "list": str(listdoc), "bad-yaml": str(badyaml),
        "latin1": str(latin1), "file-url-remote-host": "file://otherhost/etc/motd",
        "unknown-scheme": "gopher://example/site.tgz", "dev-null": "/dev/null",
    }


def test_no_raw_exception_from_any_input(tmp_path, env):
    for name, source in _bad_inputs(tmp_path).items():
        res = ccm("apply", source, env=env, timeout=30)
        assert res.returncode == 1, (name, res.stdout, res.stderr)
        lines = res.stderr.splitlines()
        # one line, except a YAML parser's own report, which points at line and column
        assert (len(lines) == 1 or name == "bad-yaml") and lines[0].startswith("ccm: error: "), (name, res.stderr)
        assert "Traceback" not in res.stderr and "Error:" not in lines[0].split(": ", 2)[1], (name, lines)
    assert os.listdir(env["TMPDIR"]) == []


def test_binary_manifest_message(tmp_path, env):
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(64))
    res = ccm("apply", str(binary), env=env)
    assert res.stderr == f"ccm: error: manifest {binary} is not valid UTF-8 (byte offset 0)\n"


def test_binary_input_to_other_commands_is_one_line(tmp_path, env):
    binary = tmp_path / "rnd.bin"
    binary.write_bytes(b"ok\x8d\xff\xfe" + bytes(range(128, 256)))
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"ccm:\n  resources:\n    - exec:\n        - {tmp_path}/never: {{}}\n")
    for args in (["hiera", "parse", str(binary)], ["apply", "--facts", str(binary), str(manifest)],
                 ["ensure", "file", str(tmp_path / "t"), "--content-file", str(binary)],
                 ["apply", "--hiera", str(binary), str(manifest)], ["hiera", "facts", "--facts", str(binary)]):
        res = ccm(*args, env=env)
        lines = res.stderr.splitlines()
        assert res.returncode == 1 and len(lines) == 1 and lines[0].startswith("ccm: error: "), (args, res.stderr)
        assert "Error:" not in lines[0], (args, lines)  # no exception class names
    res = subprocess.run([sys.executable, "-m", "ccm", "ensure", "api", "pipe"], input=binary.read_bytes(),
                         env=env, capture_output=True, timeout=60)
    assert res.returncode == 0 and b'"error": "invalid request: request on stdin is not valid UTF-8 (byte offset 2)"' \
        in res.stdout
