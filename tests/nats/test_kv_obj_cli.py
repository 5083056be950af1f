"""``ccm kv`` and ``ccm obj`` against a real nats-server: seeding what kvGet, kv:// and obj:// read."""
from __future__ import annotations

import os

import pytest
from natsfixture import ROOT, run_js
from test_remote import bundle  # noqa: F401 - a gzipped tar from {name: text} (shared helper)
from tests.kit import ccm

pytestmark = pytest.mark.nats


def _stream_replicas(server, stream):
    async def fn(nc):
        info = await nc.jetstream().stream_info(stream)
        return info.config.num_replicas
    return run_js(server.url, fn)


def test_kv_put_get_rm_and_what_the_templates_then_read(nats_server, nats_env, tmp_path):
    value = tmp_path / "motd.txt"
    value.write_text("hello from kv\n")
    r = ccm("kv", "put", "CONFIG", "motd", str(value), env=nats_env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "created KV bucket CONFIG with 1 replica\nput CONFIG motd: revision 1, 14 bytes\n"
    assert _stream_replicas(nats_server, "KV_CONFIG") == 1
    r = ccm("kv", "put", "CONFIG", "motd", "-", env=nats_env, cwd=ROOT, stdin="second\n")
    assert (r.returncode, r.stdout) == (0, "put CONFIG motd: revision 2, 7 bytes\n"), r.stderr
    r = ccm("kv", "get", "CONFIG", "motd", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stdout) == (0, "second\n")
    out = tmp_path / "got.txt"
    assert ccm("kv", "get", "CONFIG", "motd", str(out), env=nats_env, cwd=ROOT).returncode == 0
    assert out.read_text() == "second\n" and oct(os.stat(out).st_mode & 0o777) == "0o600"
    # what a manifest sees through kvGet
    target = tmp_path / "motd"
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"ccm:\n  resources:\n    - file:\n        - {target}:\n            ensure: present\n"
                        f"            owner: root\n            group: root\n            mode: '0644'\n"
                        "            content: \"{{ kvGet('CONFIG', 'motd') }}\"\n")
    r = ccm("apply", str(manifest), env=nats_env, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert target.read_text() == "second\n"
    r = ccm("kv", "rm", "CONFIG", "motd", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stdout) == (0, "deleted CONFIG motd\n")
    r = ccm("kv", "get", "CONFIG", "motd", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stderr) == (1, "ccm: error: kv CONFIG#motd is not a put operation\n")


def test_kv_bucket_creation_with_replicas_and_errors(nats_server, nats_env, tmp_path):
    r = ccm("kv", "put", "BIG", "k", "-", "--replicas", "6", env=nats_env, cwd=ROOT, stdin="x")
    assert (r.returncode, r.stderr) == (1, "ccm: error: replicas must be between 1 and 5, got 6\n")
    r = ccm("kv", "get", "NOPE", "k", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stderr) == (1, 'ccm: error: could not access KV bucket "NOPE": bucket not found\n')
    assert ccm("kv", "put", "DATA", "a", "-", env=nats_env, cwd=ROOT, stdin="1").returncode == 0
    r = ccm("kv", "rm", "DATA", "b", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stderr) == (1, 'ccm: error: could not delete key "b" from bucket "DATA": key not found\n')
    r = ccm("kv", "get", "DATA", "a", "--context", "NOSUCH", env=nats_env, cwd=ROOT)
    assert r.returncode == 1 and "NOSUCH" in r.stderr and "Traceback" not in r.stderr


def test_kv_hiera_source(nats_server, nats_env, tmp_path):
    data = tmp_path / "data.yaml"
    data.write_text("data:\n  port: 8080\n")
    assert ccm("kv", "put", "HIERA", "web", str(data), env=nats_env, cwd=ROOT).returncode == 0
    r = ccm("hiera", "parse", "kv://HIERA/web", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stdout) == (0, '{\n  "port": 8080\n}\n'), r.stderr


def test_kv_hiera_source_without_data_key_warns(nats_server, nats_env, tmp_path):
    """Issue 25: keys with no ``data:`` above them are ignored, and ccm says so, naming the key."""
    data = tmp_path / "flat.yaml"
    data.write_text("port: 8080\n")
    assert ccm("kv", "put", "HIERA", "flat", str(data), env=nats_env, cwd=ROOT).returncode == 0
    r = ccm("hiera", "parse", "kv://HIERA/flat", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stdout) == (0, "{}\n"), r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "data key" in ln]
    assert len(lines) == 1 and "source=kv://HIERA/flat" in lines[0], r.stderr
    assert "hiera source has no top-level data key, so its keys (port) are ignored: put them under data:" in lines[0]


def test_obj_put_apply_get_rm(nats_server, nats_env, tmp_path):
    target = tmp_path / "from-obj.txt"
    manifest = (f"ccm:\n  resources:\n    - file:\n        - {target}:\n            ensure: present\n"
                f"            owner: root\n            group: root\n            mode: '0644'\n"
                "            content: obj\n")
    site = tmp_path / "site.tgz"
    site.write_bytes(bundle({"manifest.yaml": manifest}))
    r = ccm("obj", "put", "MANIFESTS", str(site), env=nats_env,
            cwd=ROOT)   # NAME is the file: stored under its base name
    assert r.returncode == 0, r.stderr
    assert r.stdout == (f"created object store bucket MANIFESTS with 1 replica\n"
                        f"put obj://MANIFESTS/site.tgz: {site.stat().st_size} bytes\n")
    r = ccm("apply", "obj://MANIFESTS/site.tgz", env=nats_env, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert target.read_text() == "obj"
    copy = tmp_path / "copy.tgz"
    assert ccm("obj", "get", "MANIFESTS", "site.tgz", str(copy), env=nats_env, cwd=ROOT).returncode == 0
    assert copy.read_bytes() == site.read_bytes()
    r = ccm("obj", "put", "MANIFESTS", "other", "-", "--replicas", "1", env=nats_env, cwd=ROOT, stdin="stdin data")
    assert (r.returncode, r.stdout) == (0, "put obj://MANIFESTS/other: 10 bytes\n"), r.stderr
    assert ccm("obj", "get", "MANIFESTS", "other", env=nats_env, cwd=ROOT).stdout == "stdin data"
    r = ccm("obj", "rm", "MANIFESTS", "other", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stdout) == (0, "deleted obj://MANIFESTS/other\n")
    r = ccm("obj", "get", "MANIFESTS", "other", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stderr) == (1, "ccm: error: could not get obj://MANIFESTS/other: object 'other' not found\n")
    r = ccm("obj", "rm", "NOPE", "x", env=nats_env, cwd=ROOT)
    assert (r.returncode, r.stderr) == (1, "ccm: error: could not delete obj://NOPE/x: object store bucket 'NOPE' "
                                           "not found\n")
