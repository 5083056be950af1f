"""``ccm apply --checksum`` for obj:// bundles against a real nats-server: the object is
checked after the download and before anything is extracted (issue 14)."""
from __future__ import annotations

import hashlib
import os

from tests.kit import ccm
from test_nats_features import OWNER, GROUP, obj_put
from test_remote import bundle


def test_obj_bundle_checksum(tmp_path, nats_server, nats_env):
    out = tmp_path / "from-obj.txt"
    data = bundle({"site/manifest.yaml": "ccm:\n  resources:\n    - file:\n        - %s:\n"
                   "            ensure: present\n            owner: %s\n            group: %s\n"
                   "            mode: \"0644\"\n            content: obj\n" % (out, OWNER, GROUP)})
    obj_put(nats_server.url, "MANIFESTS", "site.tgz", data)
    wrong = "sha256:" + "0" * 64
    # a private TMPDIR: another test run on the host may extract bundles into /tmp meanwhile
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(nats_env, TMPDIR=str(scratch))
    before = set(os.listdir(scratch))
    r = ccm("apply", "--checksum", wrong, "obj://MANIFESTS/site.tgz", env=env, cwd=tmp_path)
    assert r.returncode == 1 and "checksum mismatch for obj://MANIFESTS/site.tgz" in r.stderr, r.stderr
    assert not out.exists()
    assert not [n for n in set(os.listdir(scratch)) - before if n.startswith("manifest-")]
    right = "sha256:" + hashlib.sha256(data).hexdigest()
    r = ccm("apply", "--quiet", "--checksum", right, "obj://MANIFESTS/site.tgz", env=nats_env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_text() == "obj"
