"""Every connection key of a context that matters, against a real nats-server (issue 11).

TLS with a CA, a wrong CA, client certificates (mTLS), ``tls_first`` (the server's
``handshake_first``), token auth, user/password in the URL, and creds/nkey contexts,
which need the ``nkeys`` package that ccm.pyz does not bundle. The PKI is made at test
time with the ``openssl`` CLI (``pki.py``).
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import time
from typing import Dict, Iterator, List

import pytest
from natsfixture import Server, write_context
from tests.kit import ROOT, ccm
from pki import make_pki

pytestmark = pytest.mark.nats


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Dict[str, str]:
    return make_pki(str(tmp_path_factory.mktemp("pki")))


@contextlib.contextmanager
def _server(tmp_path, name: str, config: str) -> Iterator[Server]:
    """A nats-server with ``config``, stopped by PID when the block ends."""
    server = Server(str(tmp_path / name), name, config=config).start()
    try:
        yield server
    finally:
        server.stop()


def _tls_server(tmp_path, pki: Dict[str, str], name: str, extra: str = "") -> "contextlib.AbstractContextManager[Server]":
    conf = ("tls {\n  cert_file: \"%s\"\n  key_file: \"%s\"\n  ca_file: \"%s\"\n  timeout: 2\n%s}\n"
            % (pki["server_cert"], pki["server_key"], pki["ca"], extra))
    return _server(tmp_path, name, conf)


def _round_trip(env: Dict[str, str], context: str) -> None:
    """init + create + query through ``context``: the connection works end to end."""
    r = ccm("registration", "init", "--context", context, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    r = ccm("registration", "create", "--context", context, "--cluster", "c", "--service", "s", "--protocol", "tcp",
            "--address", "10.0.0.1", "--port", "22", env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    doc = json.loads(ccm("registration", "query", "--context", context, "--json", env=env, cwd=ROOT).stdout)
    assert [(d["service"], d["port"]) for d in doc] == [("s", 22)]


def _fails_with_one_line(env: Dict[str, str], context: str, *, must: List[str], never: List[str] = ()) -> str:
    started = time.monotonic()
    r = ccm("registration", "query", "--context", context, env=env, cwd=ROOT)
    took = time.monotonic() - started
    assert r.returncode == 1, r.stdout + r.stderr
    assert took < 5, f"took {took:.1f}s"
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    for text in [f"'{context}'", *must]:
        assert text in lines[0], lines[0]
    for text in never:
        assert text not in r.stderr + r.stdout
    return lines[0]


# --- TLS ---------------------------------------------------------------------------------

def test_tls_with_the_context_ca_connects_and_a_wrong_ca_fails_clearly(tmp_path, nats_env, pki):
    with _tls_server(tmp_path, pki, "tls") as server:
        cfg = nats_env["XDG_CONFIG_HOME"]
        for name, url in (("tlsca", server.url), ("tlsurl", f"tls://127.0.0.1:{server.port}")):
            write_context(cfg, name, {"url": url, "ca": pki["ca"]})
            _round_trip(nats_env, name)
        # without the CA the server's certificate is not trusted: TLS really is in use
        write_context(cfg, "noca", {"url": f"tls://127.0.0.1:{server.port}"})
        _fails_with_one_line(nats_env, "noca", must=[f"127.0.0.1:{server.port}", "certificate"])
        write_context(cfg, "wrongca", {"url": server.url, "ca": pki["other_ca"]})
        _fails_with_one_line(nats_env, "wrongca", must=[server.url, "TLS certificate verify failed", "unable to get local issuer"])
        # a CA file that is not there: named, before any network traffic
        write_context(cfg, "missingca", {"url": server.url, "ca": str(tmp_path / "nope.pem")})
        _fails_with_one_line(nats_env, "missingca", must=["nope.pem"])


def test_mutual_tls_with_client_cert_and_key(tmp_path, nats_env, pki):
    with _tls_server(tmp_path, pki, "mtls", "  verify: true\n") as server:
        cfg = nats_env["XDG_CONFIG_HOME"]
        write_context(cfg, "mtls", {"url": server.url, "ca": pki["ca"], "cert": pki["client_cert"],
                                    "key": pki["client_key"]})
        _round_trip(nats_env, "mtls")
        write_context(cfg, "nocert", {"url": server.url, "ca": pki["ca"]})
        _fails_with_one_line(nats_env, "nocert", must=[server.url, "client certificate"])
        # the server's key is no client key for the CA's client cert: a clear setup error
        write_context(cfg, "badkey", {"url": server.url, "ca": pki["ca"], "cert": pki["client_cert"],
                                      "key": pki["server_key"]})
        line = _fails_with_one_line(nats_env, "badkey", must=["TLS setup failed: key values mismatch"])
        assert "_ssl.c" not in line


def test_tls_first_handshake(tmp_path, nats_env, pki):
    with _tls_server(tmp_path, pki, "tlsfirst", "  handshake_first: true\n") as server:
        cfg = nats_env["XDG_CONFIG_HOME"]
        write_context(cfg, "first", {"url": server.url, "ca": pki["ca"], "tls_first": True})
        _round_trip(nats_env, "first")
        # a client that waits for the server's INFO first never gets one: bounded, one line
        write_context(cfg, "notfirst", {"url": server.url, "ca": pki["ca"]})
        _fails_with_one_line(nats_env, "notfirst", must=[server.url, "tls_first"])
    # and tls_first against a server that sends INFO first: bounded, one line
    with _tls_server(tmp_path, pki, "tlsplain") as plain:
        write_context(cfg, "firstplain", {"url": plain.url, "ca": pki["ca"], "tls_first": True})
        _fails_with_one_line(nats_env, "firstplain", must=[plain.url, "handshake_first"])


# --- token, user/password in the URL --------------------------------------------------------

def test_token_auth(tmp_path, nats_env):
    with _server(tmp_path, "tok", 'authorization { token: "t0ken-right" }\n') as server:
        cfg = nats_env["XDG_CONFIG_HOME"]
        write_context(cfg, "tok", {"url": server.url, "token": "t0ken-right"})
        _round_trip(nats_env, "tok")
        write_context(cfg, "badtok", {"url": server.url, "token": "t0ken-wrong"})
        _fails_with_one_line(nats_env, "badtok", must=["authorization"], never=["t0ken-wrong", "t0ken-right"])
        write_context(cfg, "notok", {"url": server.url})
        _fails_with_one_line(nats_env, "notok", must=["authorization"])


def test_user_and_password_in_the_url(tmp_path, nats_env):
    with _server(tmp_path, "up", 'authorization { user: carol, password: "pw-right" }\n') as server:
        cfg = nats_env["XDG_CONFIG_HOME"]
        write_context(cfg, "urlpw", {"url": f"nats://carol:pw-right@127.0.0.1:{server.port}"})
        _round_trip(nats_env, "urlpw")
        write_context(cfg, "urlbad", {"url": f"nats://carol:pw-wrong@127.0.0.1:{server.port}"})
        line = _fails_with_one_line(nats_env, "urlbad", must=["authorization", f"REDACTED@127.0.0.1:{server.port}"],
                                    never=["pw-wrong", "pw-right", "carol"])
        assert "nats://REDACTED@" in line


def test_inbox_prefix_is_honoured_and_a_refused_inbox_fails_fast(tmp_path, nats_env):
    conf = ('authorization { users = [ {user: ib, password: "ib-pw", permissions: '
            '{ subscribe: { allow: ["_CCM_IN.>"] }, publish: { allow: [">"] } } } ] }\n')
    with _server(tmp_path, "ib", conf) as server:
        cfg = nats_env["XDG_CONFIG_HOME"]
        write_context(cfg, "inbox", {"url": server.url, "user": "ib", "password": "ib-pw", "inbox_prefix": "_CCM_IN"})
        _round_trip(nats_env, "inbox")
        # the default _INBOX prefix is refused: that refusal is the error, not a 15 s retry of timeouts
        write_context(cfg, "noinbox", {"url": server.url, "user": "ib", "password": "ib-pw"})
        line = _fails_with_one_line(nats_env, "noinbox", must=["permissions violation", "inbox_prefix"],
                                    never=["ib-pw"])
        assert line.startswith("ccm: error: could not query registrations: ")


# --- creds and nkey -------------------------------------------------------------------------

def test_creds_and_nkey_need_the_nkeys_package_and_say_so(tmp_path, nats_env, nats_server):
    assert importlib.util.find_spec("nkeys") is None, (
        "nkeys is installed: ccm can now do nkey/creds auth, replace this test with a real nkey login")
    cfg = nats_env["XDG_CONFIG_HOME"]
    seed = tmp_path / "user.nk"
    seed.write_text("SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU\n")
    creds = tmp_path / "user.creds"
    creds.write_text("-----BEGIN NATS USER JWT-----\neyJhbGciOi.e30.sig\n------END NATS USER JWT------\n\n"
                     "-----BEGIN USER NKEY SEED-----\nSUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU\n"
                     "------END USER NKEY SEED------\n")
    write_context(cfg, "nk", {"url": nats_server.url, "nkey": str(seed)})
    write_context(cfg, "cr", {"url": nats_server.url, "creds": str(creds)})
    for name, kind in (("nk", "nkey"), ("cr", "creds")):
        line = _fails_with_one_line(nats_env, name, must=[f"{kind} authentication", "nkeys"],
                                    never=["SUAMLK2ZNL35", "eyJhbGciOi"])
        assert "bundle" in line
    # the file is checked first: a missing one is named
    write_context(cfg, "nofile", {"url": nats_server.url, "creds": str(tmp_path / "gone.creds")})
    _fails_with_one_line(nats_env, "nofile", must=["gone.creds", "does not exist"])


def test_a_refused_publish_fails_the_resource_with_both_publishers(tmp_path, nats_env):
    conf = ('authorization { users = [ {user: pub, password: "pub-pw", permissions: '
            '{ publish: { deny: ["choria.ccm.registration.v1.prod.>"] } } } ] }\n')
    with _server(tmp_path, "deny", conf) as server:
        cfg = nats_env["XDG_CONFIG_HOME"]
        write_context(cfg, "CCM", {"url": server.url, "user": "pub", "password": "pub-pw"})
        assert ccm("registration", "init", env=nats_env, cwd=ROOT).returncode == 0
        manifest = tmp_path / "m.yaml"
        manifest.write_text("ccm:\n  resources:\n    - exec:\n        - denied:\n            command: /bin/true\n"
                            "            register_when_stable:\n              - {cluster: prod, service: web, "
                            "protocol: http, address: 10.0.0.1, port: 80, priority: 1}\n"
                            "        - allowed:\n            command: /bin/true\n"
                            "            register_when_stable:\n              - {cluster: dev, service: web, "
                            "protocol: http, address: 10.0.0.2, port: 80, priority: 1}\n")
        for publisher in ("nats", "jetstream"):
            started = time.monotonic()
            r = ccm("apply", "--publish-registrations", publisher, str(manifest), env=nats_env, cwd=tmp_path)
            assert time.monotonic() - started < 10
            assert r.returncode == 1, r.stdout + r.stderr
            assert "exec#denied failed" in r.stdout and "exec#allowed failed" not in r.stdout, r.stdout
            assert "permissions violation for publish to" in r.stdout, r.stdout
            assert "pub-pw" not in r.stdout + r.stderr
        doc = json.loads(ccm("registration", "query", "--json", env=nats_env, cwd=ROOT).stdout)
        assert [d["cluster"] for d in doc] == ["dev"]
