"""Remote manifest bundles fetched from a real HTTP server on 127.0.0.1."""
from __future__ import annotations

import io
import os
import stat
import tarfile
import tempfile

import pytest

from ccm.model.errors import ManifestError
from ccm.remote import fetch_bundle, redact_url
from tests.httpfixture import Server

MANIFEST = """
data:
  greeting: hello
ccm:
  resources:
    - file:
        - {target}:
            ensure: present
            content: "{{{{ Data.greeting }}}} from {{{{ WorkingDir }}}}"
            owner: root
            group: root
            mode: "0644"
"""


def bundle(files, links=(), gz=True):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tf.addfile(info)
    return buf.getvalue()


@pytest.fixture
def tmpbase(tmp_path, monkeypatch):
    base = tmp_path / "tmpbase"
    base.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    return base


@pytest.fixture
def server(tmp_path):
    with Server() as s:
        s.route("/b.tar.gz", body=bundle({"site/manifest.yaml": MANIFEST.format(target=tmp_path / "out.txt"),
                                          "site/files/x.txt": "x"}), auth=("bob", "s3cret"))
        s.route("/open.tar.gz", body=bundle({"manifest.yaml": "ccm: {}\n"}))
        s.route("/moved.tar.gz", redirect="/open.tar.gz")
        s.route("/evil.tar.gz", body=bundle({"manifest.yaml": "x", "../evil": "pwned"}))
        s.route("/link.tar.gz", body=bundle({"manifest.yaml": "x"}, links=[("l", "manifest.yaml")]))
        s.route("/plain.tar.gz", body=bundle({"manifest.yaml": "x"}, gz=False))
        s.route("/none.tar.gz", body=bundle({"other.yaml": "x"}))
        s.route("/slow.tar.gz", body=b"", delay=3)
        yield s


def test_redact_url():
    assert redact_url("https://bob:pw@host:8443/a/b.tgz?x=1") == "https://REDACTED@host:8443/a/b.tgz?x=1"
    assert redact_url("https://host/a") == "https://host/a"
    assert redact_url("/local/manifest.yaml") == "/local/manifest.yaml"


def test_fetch_with_url_credentials_private_dir_and_nested_manifest(server, tmpbase):
    path, tmpdir = fetch_bundle(server.url("/b.tar.gz", userinfo="bob:s3cret"))
    try:
        assert path == os.path.join(tmpdir, "bundle", "site", "manifest.yaml")
        assert os.path.dirname(tmpdir) == str(tmpbase) and os.path.basename(tmpdir).startswith("manifest-")
        assert stat.S_IMODE(os.stat(tmpdir).st_mode) == 0o700
        assert open(os.path.join(os.path.dirname(path), "files", "x.txt")).read() == "x"
        assert not os.path.exists(os.path.join(tmpdir, "bundle.tar.gz"))
    finally:
        import shutil
        shutil.rmtree(tmpdir)


def test_redirect_followed(server, tmpbase):
    path, tmpdir = fetch_bundle(server.url("/moved.tar.gz"))
    assert os.path.basename(path) == "manifest.yaml"


@pytest.mark.parametrize("route,userinfo,message", [
    ("/b.tar.gz", "bob:wrong", "HTTP request failed with status 401: Unauthorized"),
    ("/missing.tar.gz", None, "HTTP request failed with status 404: Not Found"),
    ("/evil.tar.gz", None, "invalid tar file detected"),
    ("/link.tar.gz", "bob:s3cret", "only regular files and directories are supported"),
    ("/plain.tar.gz", None, "unzip failed"),
    ("/none.tar.gz", None, "manifest.yaml not found in archive"),
])
def test_failures_clean_up_and_never_leak_credentials(server, tmpbase, route, userinfo, message):
    with pytest.raises(ManifestError) as exc:
        fetch_bundle(server.url(route, userinfo=userinfo))
    assert message in str(exc.value)
    assert "wrong" not in str(exc.value) and "s3cret" not in str(exc.value)
    assert os.listdir(tmpbase) == []  # temp dir removed
    assert not os.path.exists(os.path.join(os.path.dirname(str(tmpbase)), "evil"))


def test_timeout(server, tmpbase):
    with pytest.raises(ManifestError, match="timed out"):
        fetch_bundle(server.url("/slow.tar.gz", userinfo="u:p"), timeout=1.0)
    assert os.listdir(tmpbase) == []


def test_load_manifest_from_http_runs_with_bundle_working_dir(server, tmpbase, tmp_path):
    from ccm.apply import load_manifest
    from tests import kit

    m = kit.manager()
    manifest = load_manifest(server.url("/b.tar.gz", userinfo="bob:s3cret"), m)
    try:
        assert manifest.source == server.url("/b.tar.gz", userinfo="REDACTED")
        result = m.execute(manifest)
        assert not result.failed, [e.errors for e in result.events]
        text = (tmp_path / "out.txt").read_text()
        assert text.startswith("hello from " + str(tmpbase))
        assert text.endswith(os.path.join("bundle", "site"))
    finally:
        manifest.cleanup()
    assert os.listdir(tmpbase) == []  # the whole temp dir, not just the manifest's directory


def test_connection_refused_names_the_url_once_in_words(tmpbase):
    import socket

    with socket.socket() as s:   # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ManifestError) as exc:
        fetch_bundle(f"http://bob:s3cret@127.0.0.1:{port}/site.tar.gz")
    assert str(exc.value) == (f"failed to fetch manifest from URL http://REDACTED@127.0.0.1:{port}/site.tar.gz: "
                              "connection refused")
    assert os.listdir(tmpbase) == []
