"""The fast path (``ccm.fleet.wire``, ``ccm.fleet.fastread``) with every context key it serves,
against real nats-servers: TLS with a CA (``nats://`` and ``tls://``), mutual TLS, ``tls_first``,
a token, user/password (in the URL and as keys), ``inbox_prefix`` under permissions; and the
failures: a refused login queues the report (one line, no secret), a refused subject drops it."""
from __future__ import annotations

import contextlib
import json
import os
from typing import Dict, Iterator

import pytest
from natsfixture import Server, write_context
from tests.kit import ROOT, ccm
from pki import make_pki

pytestmark = pytest.mark.nats


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Dict[str, str]:
    return make_pki(str(tmp_path_factory.mktemp("pki")))


@contextlib.contextmanager
def server(tmp_path, name: str, config: str) -> Iterator[Server]:
    s = Server(str(tmp_path / name), name, config=config).start()
    try:
        yield s
    finally:
        s.stop()


def tls(pki: Dict[str, str], extra: str = "") -> str:
    return ('tls {\n  cert_file: "%s"\n  key_file: "%s"\n  ca_file: "%s"\n  timeout: 2\n%s}\n'
            % (pki["server_cert"], pki["server_key"], pki["ca"], extra))


def round_trip(tmp_path, env: Dict[str, str], context: str) -> None:
    """init (nats-py), a run's report (the fast path), then the fleet read (the fast path)."""
    assert ccm("report", "init", "--context", context, env=env, cwd=ROOT).returncode == 0
    manifest = tmp_path / "m.yaml"
    manifest.write_text("ccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n")
    r = ccm("apply", "--no-report", str(manifest), "--context", context, "--publish-report", "jetstream", env=env,
            cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    doc = json.loads(ccm("report", "fleet", "--json", "--context", context, env=env, cwd=ROOT).stdout)
    assert [h["hostname"] for h in doc["hosts"]] == [os.uname().nodename]


def test_tls_contexts(tmp_path, env, pki):
    cfg = env["XDG_CONFIG_HOME"]
    with server(tmp_path, "tls", tls(pki)) as s:
        write_context(cfg, "ca", {"url": s.url, "ca": pki["ca"]})
        round_trip(tmp_path, env, "ca")
        write_context(cfg, "tlsurl", {"url": f"tls://127.0.0.1:{s.port}", "ca": pki["ca"]})
        round_trip(tmp_path, env, "tlsurl")
    with server(tmp_path, "mtls", tls(pki, "  verify: true\n")) as s:
        write_context(cfg, "mtls", {"url": s.url, "ca": pki["ca"], "cert": pki["client_cert"],
                                    "key": pki["client_key"]})
        round_trip(tmp_path, env, "mtls")
    with server(tmp_path, "first", tls(pki, "  handshake_first: true\n")) as s:
        write_context(cfg, "first", {"url": s.url, "ca": pki["ca"], "tls_first": True})
        round_trip(tmp_path, env, "first")


def test_token_and_password_contexts_and_a_refused_login(tmp_path, env, state_dir):
    cfg = env["XDG_CONFIG_HOME"]
    with server(tmp_path, "tok", 'authorization { token: "t0ken-right" }\n') as s:
        write_context(cfg, "tok", {"url": s.url, "token": "t0ken-right"})
        round_trip(tmp_path, env, "tok")
    with server(tmp_path, "up", 'authorization { user: carol, password: "pw-right" }\n') as s:
        write_context(cfg, "upurl", {"url": f"nats://carol:pw-right@127.0.0.1:{s.port}"})
        round_trip(tmp_path, env, "upurl")
        write_context(cfg, "upkeys", {"url": s.url, "user": "carol", "password": "pw-right"})
        round_trip(tmp_path, env, "upkeys")
        write_context(cfg, "bad", {"url": s.url, "user": "carol", "password": "pw-wrong"})
        manifest = tmp_path / "m.yaml"
        r = ccm("apply", "--no-report", str(manifest), "--context", "bad", "--publish-report", "jetstream", env=env,
                cwd=tmp_path)
        assert r.returncode == 0 and len(r.stderr.splitlines()) == 1, r.stderr
        assert "report queued" in r.stderr and "uthorization" in r.stderr and "pw-" not in r.stderr
        assert len(os.listdir(os.path.join(state_dir, "reports"))) >= 1


def test_inbox_prefix_under_permissions_and_a_refused_subject(tmp_path, env, state_dir):
    conf = ('authorization { users = [\n'
            '  {user: ib, password: "ib-pw", permissions: { subscribe: { allow: ["_CCM_IN.>"] }, '
            'publish: { allow: [">"] } } }\n'
            '  {user: deny, password: "deny-pw", permissions: { publish: { deny: ["choria.ccm.reports.>"] } } }\n'
            '] }\n')
    cfg = env["XDG_CONFIG_HOME"]
    with server(tmp_path, "ib", conf) as s:
        write_context(cfg, "inbox", {"url": s.url, "user": "ib", "password": "ib-pw", "inbox_prefix": "_CCM_IN"})
        round_trip(tmp_path, env, "inbox")
        write_context(cfg, "deny", {"url": s.url, "user": "deny", "password": "deny-pw"})
        r = ccm("apply", "--no-report", str(tmp_path / "m.yaml"), "--context", "deny", "--publish-report", "jetstream",
                env=env, cwd=tmp_path)
        assert r.returncode == 0 and len(r.stderr.splitlines()) == 1, r.stderr
        assert "report refused" in r.stderr and "ermissions" in r.stderr and "deny-pw" not in r.stderr
        assert not [n for n in os.listdir(os.path.join(state_dir, "reports")) if n.endswith(".report")]
