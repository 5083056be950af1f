"""Manifest sources: local change detection, http(s) bundles with ETag / Last-Modified
(a 304 downloads nothing), validation before swap, object store without NATS."""
from __future__ import annotations

import os

import pytest

from ccm.agent.sources import HTTPSource, LocalSource, ObjectSource, SourceError, SourceUnavailable, clean_name
from ccm.agent.worker import Trigger

from .helpers import CondServer, bundle


def test_clean_name():
    assert clean_name("h:8443/m/web.tar.gz") == "h_8443_m_web"
    assert clean_name("apps/web.tgz") == "apps_web"


def test_local_source_detects_changes(tmp_path):
    m = tmp_path / "m.yaml"
    src = LocalSource(str(m), 1.0)
    with pytest.raises(SourceError, match="does not exist"):
        src.check()
    m.write_text("a")
    cand = src.check()
    assert cand is not None and cand.manifest_path == str(m)
    src.commit(cand)
    assert src.check() is None
    tmp = tmp_path / "m.new"
    tmp.write_text("bb")
    os.replace(tmp, m)
    assert src.check() is not None


@pytest.mark.parametrize("validators", ["etag", "lm", "etag lm"])
def test_http_conditional_requests(tmp_path, validators):
    srv = CondServer(validators)
    try:
        srv.set("/b/web.tar.gz", bundle({"web/manifest.yaml": "ccm: {resources: []}\n", "web/t.txt": "x"}))
        src = HTTPSource(srv.url("/b/web.tar.gz"), str(tmp_path), 30.0)
        cand = src.check()
        assert cand is not None and cand.manifest_path.endswith("web/manifest.yaml")
        assert src.manifest_path is None   # not current until committed
        src.commit(cand)
        final = os.path.join(str(tmp_path), f"http_127.0.0.1_{srv.httpd.server_address[1]}_b_web")
        assert src.manifest_path == os.path.join(final, "bundle", "web", "manifest.yaml")
        assert open(os.path.join(final, "bundle", "web", "t.txt")).read() == "x"
        assert src.check() is None
        assert srv.log[-1]["status"] == 304 and srv.log[-1]["bytes"] == 0   # nothing downloaded
        if "etag" in validators:
            assert "if-none-match" in srv.log[-1]["headers"]
        if "lm" in validators:
            assert "if-modified-since" in srv.log[-1]["headers"]
        srv.set("/b/web.tar.gz", bundle({"manifest.yaml": "ccm: {resources: []}\n# v2\n"}), mtime=1800000000)
        cand = src.check()
        assert cand is not None
        src.commit(cand)
        assert src.manifest_path == os.path.join(final, "bundle", "manifest.yaml")
        assert sorted(os.listdir(str(tmp_path))) == [os.path.basename(final)]   # old versions and temps gone
        assert src.fetches == 2
    finally:
        srv.close()


def test_http_without_validators_compares_the_body(tmp_path):
    srv = CondServer("")
    try:
        srv.set("/x.tgz", bundle({"manifest.yaml": "ccm: {}\n"}))
        src = HTTPSource(srv.url("/x.tgz"), str(tmp_path), 30.0)
        src.commit(src.check())
        assert src.check() is None              # same body
        srv.set("/x.tgz", bundle({"manifest.yaml": "ccm: {}\n#2\n"}))
        assert src.check() is not None
    finally:
        srv.close()


def test_http_failures_and_bad_bundles_keep_the_last_good(tmp_path):
    srv = CondServer("etag")
    try:
        srv.set("/x.tgz", bundle({"manifest.yaml": "ccm: {}\n"}))
        src = HTTPSource(srv.url("/x.tgz"), str(tmp_path), 30.0)
        src.commit(src.check())
        good = src.manifest_path
        srv.set("/x.tgz", bundle({"README": "no manifest here"}))
        with pytest.raises(SourceError, match="manifest.yaml not found"):
            src.check()
        srv.set("/x.tgz", b"not a tarball")
        with pytest.raises(SourceError, match="could not extract"):
            src.check()
        del srv.bodies["/x.tgz"]
        with pytest.raises(SourceError, match="404"):
            src.check()
        assert src.manifest_path == good and os.path.exists(good)
        assert len(os.listdir(str(tmp_path))) == 1   # no temp dirs left behind
    finally:
        srv.close()


def test_http_credentials_are_redacted(tmp_path):
    src = HTTPSource("http://user:s3cret@127.0.0.1:1/x.tgz", str(tmp_path), 30.0)
    assert "s3cret" not in src.shown
    with pytest.raises(SourceError) as err:
        src.check()
    assert "s3cret" not in str(err.value)


def test_object_source_without_nats_layer_is_a_clear_error(tmp_path):
    def factory():
        raise SourceUnavailable("obj:// sources need the NATS layer (ccm.nats), which this build does not have")

    src = ObjectSource("obj://bucket/app.tar.gz", str(tmp_path), 30.0, factory)
    with pytest.raises(SourceUnavailable, match="need the NATS layer"):
        src.check()


def test_trigger_coalesces_to_one():
    t = Trigger()
    assert t.request() is True
    assert t.request() is False and t.request() is False
    assert t.take() is True and t.take() is False


def test_bundles_and_the_cache_are_private(tmp_path):
    """Bundles hold Hiera data and templates: 0700 directories, never 0755 (issue 24)."""
    import stat

    from ccm.agent.sources import prepare_cache_dir

    cache = str(tmp_path / "cache")
    prepare_cache_dir(cache)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    srv = CondServer("etag")
    try:
        srv.set("/web.tar.gz", bundle({"web/manifest.yaml": "data: {pw: x}\nccm: {resources: []}\n"}))
        src = HTTPSource(srv.url("/web.tar.gz"), cache, 1.0)
        cand = src.check()
        src.commit(cand)
        for entry in os.listdir(cache):
            assert stat.S_IMODE(os.stat(os.path.join(cache, entry)).st_mode) == 0o700, entry
    finally:
        srv.close()


def test_a_cache_dir_others_may_write_is_refused(tmp_path):
    from ccm.agent.sources import prepare_cache_dir
    from ccm.model.errors import CCMError

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(CCMError, match=r"cache_dir .*/shared is writable by other users \(mode 1777\)"):
        prepare_cache_dir(str(shared))
    if os.geteuid() == 0:
        import pwd

        theirs = tmp_path / "theirs"
        theirs.mkdir()
        os.chown(theirs, pwd.getpwnam("nobody").pw_uid, -1)
        with pytest.raises(CCMError, match=r"cache_dir .*/theirs is owned by uid \d+, not by the agent's user"):
            prepare_cache_dir(str(theirs))
