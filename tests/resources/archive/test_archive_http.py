"""The http archive provider and the whole archive flow against a real HTTP server."""
from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import zipfile

import pytest

from ccm.model.errors import ProviderError
from ccm.resources.archive.http import HttpArchiveProvider
from tests.httpfixture import Server
from tests import kit
from tests.kit import output, run


def tgz(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name.endswith(".sh") else 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zipped(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def evil_tgz():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        good = tarfile.TarInfo("app/ok.txt")
        good.size = 2
        tf.addfile(good, io.BytesIO(b"ok"))
        link = tarfile.TarInfo("app/etc")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc"
        tf.addfile(link)
    return buf.getvalue()


APP = tgz({"app/bin/run.sh": b"#!/bin/sh\necho hi\n", "app/VERSION": b"1.0\n"})
APP_SUM = hashlib.sha256(APP).hexdigest()


@pytest.fixture
def server():
    with Server() as s:
        s.route("/dl/app.tar.gz", body=APP)
        s.route("/private/app.tar.gz", body=APP, auth=("bob", "s3cret"))
        s.route("/token/app.tar.gz", body=APP, header=("Authorization", "Bearer tok123"))
        s.route("/moved/app.tar.gz", redirect="/dl/app.tar.gz")
        s.route("/slow/app.tar.gz", body=APP, delay=3)
        s.route("/trickle/app.tar.gz", body=APP, trickle=0.2)
        s.route("/dl/app.zip", body=zipped({"z/readme.txt": b"zip!"}))
        s.route("/dl/evil.tar.gz", body=evil_tgz())
        yield s


def provider(timeout=5.0):
    return HttpArchiveProvider(None, None, timeout=timeout)


def dl(tmp_path, url, **kw):
    args = dict(checksum=None, username="", password="", headers={}, owner="root", group="root")
    args.update(kw)
    target = str(tmp_path / "app.tar.gz")
    size = provider(args.pop("timeout", 5.0)).download(target, url, **args)
    return target, size


def test_download_atomic_mode_and_checksum(server, tmp_path):
    target, size = dl(tmp_path, server.url("/dl/app.tar.gz"), checksum=APP_SUM)
    assert size == len(APP)
    assert open(target, "rb").read() == APP
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    assert sorted(os.listdir(tmp_path)) == ["app.tar.gz"]  # no temp file left behind


def test_checksum_mismatch_leaves_no_file_and_keeps_existing(server, tmp_path):
    with pytest.raises(ProviderError) as exc:
        dl(tmp_path, server.url("/dl/app.tar.gz"), checksum="0" * 64)
    assert 'checksum mismatch, expected "' + "0" * 64 + f'" got "{APP_SUM}"' in str(exc.value)
    assert os.listdir(tmp_path) == []
    (tmp_path / "app.tar.gz").write_bytes(b"previous")
    with pytest.raises(ProviderError):
        dl(tmp_path, server.url("/dl/app.tar.gz"), checksum="0" * 64)
    assert (tmp_path / "app.tar.gz").read_bytes() == b"previous"
    assert os.listdir(tmp_path) == ["app.tar.gz"]


def test_basic_auth_from_properties_and_from_url(server, tmp_path):
    with pytest.raises(ProviderError, match="status 401"):
        dl(tmp_path, server.url("/private/app.tar.gz"))
    dl(tmp_path, server.url("/private/app.tar.gz"), username="bob", password="s3cret")
    dl(tmp_path, server.url("/private/app.tar.gz", userinfo="bob:s3cret"))
    # the URL sent on the wire never carries the user info
    assert all("s3cret" not in path for path, _ in server.requests)


def test_explicit_authorization_header_wins(server, tmp_path):
    dl(tmp_path, server.url("/token/app.tar.gz"), username="bob", password="s3cret",
       headers={"Authorization": "Bearer tok123"})
    assert server.requests[-1][1]["authorization"] == "Bearer tok123"


def test_redirect_followed(server, tmp_path):
    target, _ = dl(tmp_path, server.url("/moved/app.tar.gz"), checksum=APP_SUM)
    assert [p for p, _ in server.requests] == ["/moved/app.tar.gz", "/dl/app.tar.gz"]


def test_redirect_to_other_host_drops_credentials(tmp_path):
    with Server() as a, Server() as b:
        b.route("/dl/app.tar.gz", body=APP)
        a.route("/moved/app.tar.gz", redirect=b.url("/dl/app.tar.gz").replace("127.0.0.1", "localhost"))
        dl(tmp_path, a.url("/moved/app.tar.gz"), username="bob", password="s3cret")
        assert a.requests[0][1].get("authorization")
        assert "authorization" not in b.requests[0][1]


def test_404_and_error_text(server, tmp_path):
    with pytest.raises(ProviderError) as exc:
        dl(tmp_path, server.url("/nope/app.tar.gz"))
    assert str(exc.value) == "download failed: HTTP request failed with status 404: Not Found"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("path", ["/slow/app.tar.gz", "/trickle/app.tar.gz"])
def test_timeouts_are_overall(server, tmp_path, path):
    with pytest.raises(ProviderError, match="timed out"):
        dl(tmp_path, server.url(path, userinfo="bob:s3cret"), timeout=1.0)
    assert os.listdir(tmp_path) == []


def test_errors_never_show_credentials(tmp_path):
    # nothing listens on port 9 (discard): a connection error names the redacted URL
    with pytest.raises(ProviderError) as exc:
        dl(tmp_path, "http://bob:s3cret@127.0.0.1:9/app.tar.gz", timeout=2.0)
    assert "s3cret" not in str(exc.value) and "REDACTED@127.0.0.1:9" in str(exc.value)


def test_missing_owner(server, tmp_path):
    with pytest.raises(ProviderError, match='could not lookup user "no-such-user-x": no such user'):
        dl(tmp_path, server.url("/dl/app.tar.gz"), owner="no-such-user-x")


# --- whole flow through the shared base (real Manager, real server) -------------------------

def raw(server, tmp_path, **kw):
    r = {"name": str(tmp_path / "app.tar.gz"), "ensure": "present", "url": server.url("/dl/app.tar.gz"),
         "owner": "root", "group": "root"}
    r.update(kw)
    return r


def test_flow_download_extract_cleanup_then_stable(server, tmp_path):
    m = kit.manager()
    dest = tmp_path / "opt"
    r = raw(server, tmp_path, checksum=APP_SUM, extract_parent=str(dest), creates=str(dest / "app/VERSION"),
            cleanup=True)
    ev = run(m, "archive", r)
    assert not ev.failed, ev.errors
    assert ev.changed and ev.status.stable
    assert (dest / "app/VERSION").read_text() == "1.0\n"
    assert os.access(dest / "app/bin/run.sh", os.X_OK)
    assert not (tmp_path / "app.tar.gz").exists()  # cleaned up
    assert "Archive downloaded" in output(m)
    ev2 = run(m, "archive", r)
    assert not ev2.failed and not ev2.changed and ev2.status.stable
    assert len(server.requests) == 1  # second run downloaded nothing


def test_flow_zip_extraction_without_unzip(server, tmp_path):
    m = kit.manager()
    dest = tmp_path / "z"
    ev = run(m, "archive", raw(server, tmp_path, name=str(tmp_path / "a.zip"), url=server.url("/dl/app.zip"),
                              extract_parent=str(dest), creates=str(dest / "z/readme.txt")))
    assert not ev.failed, ev.errors
    assert (dest / "z/readme.txt").read_bytes() == b"zip!"


def test_flow_noop_changes_nothing(server, tmp_path):
    m = kit.manager(noop=True)
    ev = run(m, "archive", raw(server, tmp_path, extract_parent=str(tmp_path / "x"), creates=str(tmp_path / "x/app")))
    assert ev.changed and ev.noop and not ev.failed
    assert ev.status.noop_message == "Would have downloaded. Would have extracted"
    assert os.listdir(tmp_path) == [] and server.requests == []


def test_flow_malicious_archive_fails_and_writes_nothing_outside(server, tmp_path):
    m = kit.manager()
    dest = tmp_path / "dest"
    ev = run(m, "archive", raw(server, tmp_path, name=str(tmp_path / "evil.tar.gz"), url=server.url("/dl/evil.tar.gz"),
                              extract_parent=str(dest), creates=str(dest / "app/ok.txt")))
    assert ev.failed
    assert "symlink 'app/etc' points outside the destination" in ev.errors[0]
    assert not (dest / "app").exists()


def test_flow_secrets_never_in_event_or_log(server, tmp_path):
    m = kit.manager()
    ev = run(m, "archive", raw(server, tmp_path, url=server.url("/private/app.tar.gz", userinfo="bob:wrongpass"),
                              password="hunter2", username="alice"))
    assert ev.failed  # explicit credentials are used (and are wrong)
    blob = json.dumps(ev.to_dict()) + output(m) + json.dumps(m.user_log.records, default=str)
    for secret in ("wrongpass", "hunter2"):
        assert secret not in blob
    assert "status 401" in ev.errors[0]


def test_flow_absent_removes_archive_only(server, tmp_path):
    m = kit.manager()
    r = raw(server, tmp_path, extract_parent=str(tmp_path / "x"), creates=str(tmp_path / "x/app/VERSION"))
    assert not run(m, "archive", r).failed
    ev = run(m, "archive", dict(r, ensure="absent"))
    assert not ev.failed and ev.changed
    assert not (tmp_path / "app.tar.gz").exists()
    assert (tmp_path / "x/app/VERSION").exists()  # extracted content is left alone


def test_flow_checksum_mismatch_fails_resource(server, tmp_path):
    m = kit.manager()
    ev = run(m, "archive", raw(server, tmp_path, checksum="1" * 64))
    assert ev.failed and "checksum mismatch" in ev.errors[0]
    assert os.listdir(tmp_path) == []


def test_tls_certificates_are_verified(tmp_path):
    """A real HTTPS server with a self-signed certificate is refused (verification is on)."""
    import shutil
    import ssl
    import subprocess

    if not shutil.which("openssl"):
        pytest.skip("openssl not available to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
    with Server() as s:
        s.route("/dl/app.tar.gz", body=APP)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(cert), str(key))
        s.httpd.socket = ctx.wrap_socket(s.httpd.socket, server_side=True)
        out = tmp_path / "dl"
        out.mkdir()
        with pytest.raises(ProviderError) as exc:
            dl(out, s.url("/dl/app.tar.gz").replace("http://", "https://"))
        assert "CERTIFICATE_VERIFY_FAILED" in str(exc.value) or "certificate verify failed" in str(exc.value)
        assert os.listdir(out) == []
