"""Values marked ``# @sensitive`` never leave the host over NATS (issue 15 on issue 11's publishing).

A real subscriber on ``>`` sees every message the server carries while ``ccm apply
--publish-registrations`` runs; the entries holding a sensitive value are refused (the
resource fails, naming the field, not the value), the clean ones are published.
"""
from __future__ import annotations

import json

import pytest
from natsfixture import Sniffer, run_js
from tests.kit import ROOT, ccm

pytestmark = pytest.mark.nats

CANARY = "canary-Zq81xv"
HIDDEN_IP = "10.9.8.7"

MANIFEST = f"""
data:
  # @sensitive
  api_key: "{CANARY}"
  # @sensitive
  hidden_ip: "{HIDDEN_IP}"
  port: 8080
ccm:
  resources:
    - exec:
        - clean:
            command: /bin/true
            register_when_stable:
              - {{cluster: prod, service: web, protocol: http, address: 10.1.0.1, port: "{{{{ Data.port }}}}", priority: 1}}
        - in_annotation:
            command: /bin/true
            register_when_stable:
              - cluster: prod
                service: api
                protocol: http
                address: 10.1.0.2
                port: 443
                priority: 1
                annotations:
                  key: "prefix-{{{{ Data.api_key }}}}"
        - in_address:
            command: /bin/true
            register_when_stable:
              - {{cluster: prod, service: db, protocol: tcp, address: "{{{{ Data.hidden_ip }}}}", port: 5432, priority: 1}}
"""


def _leaks(text: str) -> bool:
    return CANARY in text or HIDDEN_IP in text or HIDDEN_IP.replace(".", "_") in text


@pytest.mark.parametrize("publisher", ["jetstream", "nats"])
def test_sensitive_values_are_never_published(tmp_path, nats_server, nats_env, publisher):
    assert ccm("registration", "init", env=nats_env, cwd=ROOT).returncode == 0
    manifest = tmp_path / "m.yaml"
    manifest.write_text(MANIFEST)
    with Sniffer(nats_server.url) as sniffer:
        r = ccm("apply", "--publish-registrations", publisher, str(manifest), env=nats_env, cwd=tmp_path)
        ccm("registration", "query", "--json", env=nats_env,
            cwd=ROOT)   # a round trip: everything published has arrived
    output = r.stdout + r.stderr
    assert r.returncode == 1, output
    assert "annotation 'key' holds a value marked @sensitive" in output, output
    assert "address holds a value marked @sensitive" in output, output
    assert not _leaks(output), output
    seen = sniffer.text()
    assert "choria.ccm.registration.v1.prod.http.web.10_1_0_1." in seen       # the sniffer sees publishing
    assert not _leaks(seen), [m for m in sniffer.messages if _leaks(repr(m))]
    doc = json.loads(ccm("registration", "query", "--json", env=nats_env, cwd=ROOT).stdout)
    assert [d["service"] for d in doc] == ["web"]

    async def count(nc):
        return (await nc.jetstream().stream_info("REGISTRATION")).state.messages
    assert run_js(nats_server.url, count) == 1


def test_registration_create_refuses_nothing_without_sensitive_data(nats_server, nats_env):
    # the CLI's create has no Hiera data: nothing is registered as sensitive, so nothing is refused
    assert ccm("registration", "init", env=nats_env, cwd=ROOT).returncode == 0
    r = ccm("registration", "create", "--cluster", "c", "--service", "s", "--protocol", "tcp", "--address", "10.0.0.1",
            "--port", "22", "-A", f"k={CANARY}", env=nats_env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
