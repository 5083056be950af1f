"""Every download (archives, bundles, Hiera) goes through one client with caps and a deadline."""
from __future__ import annotations

import io
import time

import pytest

from ccm import httpget
from ccm.data import sources
from ccm.model.errors import ValidationError
from tests.reliability.hostile_http import HostileServer


@pytest.fixture
def servers():
    a, b = HostileServer(), HostileServer()
    yield a, b
    a.close()
    b.close()


def _get(url: str, **kw):
    out = io.BytesIO()
    start = time.monotonic()
    try:
        httpget.get(url, out, **kw)
    finally:
        kw["elapsed"] = time.monotonic() - start
    return out


def test_endless_body_hits_the_size_cap(servers):
    a, _ = servers
    with pytest.raises(httpget.HTTPGetError, match="exceeds the limit of 1048576 bytes"):
        _get(a.base + "/endless", timeout=10, max_bytes=1 << 20)


def test_slow_body_hits_the_overall_deadline(servers):
    a, _ = servers
    start = time.monotonic()
    with pytest.raises(httpget.HTTPGetError, match="timed out after 1.5s"):
        _get(a.base + "/slow", timeout=1.5)
    assert time.monotonic() - start < 4


def test_dripping_headers_hit_the_overall_deadline(servers):
    a, _ = servers
    start = time.monotonic()
    with pytest.raises(httpget.HTTPGetError, match="timed out after 1.5s"):
        _get(a.base + "/slowheaders", timeout=1.5)
    assert time.monotonic() - start < 4


@pytest.mark.parametrize("path, got, declared", [("/short", 50, 100), ("/long", 10, 10)])
def test_wrong_length_is_an_error_not_a_truncated_file(servers, path, got, declared):
    a, _ = servers
    if path == "/long":   # http.client stops at the declared length: the extra bytes are ignored
        assert _get(a.base + path, timeout=5).getvalue() == b"a: 1\na: 1\n"
        return
    with pytest.raises(httpget.HTTPGetError):
        _get(a.base + path, timeout=5)


def test_credentials_never_follow_a_redirect_to_another_origin(servers):
    a, b = servers
    url = f"http://user:s3cr%23t@127.0.0.1:{a.port}/redirect?to={b.base}/ok"
    assert _get(url, timeout=5).getvalue() == b"hello"
    assert "authorization" in a.requests[0][1]
    assert "authorization" not in b.requests[0][1]


def test_hiera_http_source_uses_the_same_client(servers, monkeypatch):
    a, b = servers
    url = f"http://user:s3cr#t/x?y@127.0.0.1:{a.port}/redirect?to={b.base}/ok"
    monkeypatch.setattr(sources, "HTTP_TIMEOUT", 1.5)
    assert sources._fetch_http(url) == "hello"
    assert "authorization" not in b.requests[0][1]
    with pytest.raises(ValidationError) as err:
        sources._fetch_http(f"http://user:s3cr#t/x?y@127.0.0.1:{a.port}/slow")
    assert "timed out" in str(err.value) and "s3cr" not in str(err.value)
    monkeypatch.setenv("CCM_MAX_DOCUMENT_BYTES", "4096")
    with pytest.raises(ValidationError, match="exceeds the limit of 4096 bytes"):
        sources._fetch_http(f"{a.base}/endless")


def test_passwords_with_unencoded_specials_never_leak(servers):
    a, _ = servers
    for url in (f"http://u:pa#ss@127.0.0.1:{a.port}/nope:bad", "http://u:p/a?s@127.0.0.1:1/x",
                "http://u:pa#ss@[::1/x"):
        try:
            _get(url, timeout=2)
        except httpget.HTTPGetError as exc:
            assert "pa#ss" not in str(exc) and "p/a?s" not in str(exc)
