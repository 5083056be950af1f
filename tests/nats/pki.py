"""A throwaway PKI made with the ``openssl`` CLI at test time: a CA, a server and a client cert.

``make_pki(dir)`` writes ``ca.pem``, ``server.pem``/``server.key`` (SAN 127.0.0.1 and
localhost), ``client.pem``/``client.key`` (signed by the same CA) and ``other-ca.pem`` (a
second, unrelated CA). EC P-256 keys keep it to a few tens of milliseconds. The certs
carry the extensions CPython's strict X.509 verification wants (basic constraints, key
usage, key identifiers), so they verify on every supported Python.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Dict, List

OPENSSL = shutil.which("openssl")

_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def _run(args: List[str], cwd: str) -> None:
    r = subprocess.run([str(OPENSSL), *args], cwd=cwd, capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args[:2])} failed: {r.stderr.strip()}")


def _ca(cwd: str, name: str, cn: str) -> None:
    _run(["req", "-x509", *_EC, "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={cn}",
          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
          "-addext", "subjectKeyIdentifier=hash"], cwd)


def _leaf(cwd: str, name: str, cn: str, usage: str, serial: int, san: str = "") -> None:
    ext = os.path.join(cwd, f"{name}.ext")
    with open(ext, "w") as fh:
        fh.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                 f"extendedKeyUsage={usage}\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n")
        if san:
            fh.write(f"subjectAltName={san}\n")
    _run(["req", *_EC, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}"], cwd)
    _run(["x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", str(serial),
          "-days", "2", "-extfile", ext, "-out", f"{name}.pem"], cwd)


def make_pki(directory: str) -> Dict[str, str]:
    """Create the PKI in ``directory``; return {'ca', 'other_ca', 'server_cert', ...: path}."""
    if OPENSSL is None:
        raise RuntimeError("the openssl CLI is needed for the NATS TLS tests (Debian: apt-get install openssl; "
                           "`make test` installs it as root)")
    os.makedirs(directory, exist_ok=True)
    _ca(directory, "ca", "ccm test CA")
    _ca(directory, "other-ca", "unrelated CA")
    _leaf(directory, "server", "localhost", "serverAuth", 1001, "IP:127.0.0.1,DNS:localhost")
    _leaf(directory, "client", "ccm-client", "clientAuth", 1002)
    for name in os.listdir(directory):
        if name.endswith(".key"):
            os.chmod(os.path.join(directory, name), 0o600)
    p = lambda n: os.path.join(directory, n)  # noqa: E731
    return {"ca": p("ca.pem"), "other_ca": p("other-ca.pem"), "server_cert": p("server.pem"),
            "server_key": p("server.key"), "client_cert": p("client.pem"), "client_key": p("client.key")}
