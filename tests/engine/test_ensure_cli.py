"""``ccm ensure`` from shell scripts, ``ccm session``, ``ccm status`` and the pipe API."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from tests.kit import ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ccm_env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCM_")}
    env["PYTHONPATH"] = ROOT
    env["TMPDIR"] = str(tmp_path)
    env.update(extra)
    return env


def test_shell_session_script(tmp_path):
    script = tmp_path / "setup.sh"
    script.write_text(textwrap.dedent(f"""\
        set -e
        ccm() {{ {sys.executable} -m ccm "$@"; }}
        eval "$(ccm session new)"
        ccm ensure file {tmp_path}/app.conf --content "port=8080" --owner root:root --mode 0640
        ccm ensure exec "/bin/sh -c 'echo reloaded >> {tmp_path}/reloads'" --refresh-only --subscribe file#{tmp_path}/app.conf
        ccm ensure file {tmp_path}/app.conf --content "port=8080" --owner root:root --mode 0640
        ccm ensure exec "/bin/sh -c 'echo reloaded >> {tmp_path}/reloads'" --refresh-only --subscribe file#{tmp_path}/app.conf
        ccm session report --remove
        test ! -d "$CCM_SESSION_STORE"
        """))
    r = subprocess.run(["bash", str(script)], cwd=str(tmp_path), env=ccm_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "app.conf").read_text() == "port=8080"
    assert oct((tmp_path / "app.conf").stat().st_mode & 0o777) == "0o640"
    assert (tmp_path / "reloads").read_text() == "reloaded\n", "refreshed once, when the file changed"
    assert "exec#/bin/sh -c 'echo reloaded" in r.stdout and "refreshed" in r.stdout
    assert "Total Resources: 4" in r.stdout and "Changed Resources: 2" in r.stdout


def test_ensure_exits_1_when_resource_failed(tmp_path):
    r = ccm("ensure", "exec", "/bin/false", cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and "exec#/bin/false failed" in r.stdout
    r = ccm("ensure", "exec", "/bin/true", cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and "exec#/bin/true changed" in r.stdout


def test_ensure_checks_before_running(tmp_path):
    r = ccm("ensure", "exec", "/bin/true", "--require", "file#/x", cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and "session store should be set when using requires" in r.stderr
    r = ccm("ensure", "--session", "", "exec", "/bin/true", cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and "session store should not be empty" in r.stderr
    r = ccm("ensure", "file", "/tmp/x", "--content", "a", "--source", "/etc/hostname", cwd=tmp_path,
            env=ccm_env(tmp_path))
    assert r.returncode == 1 and "cannot specify both source and contents" in r.stderr


def test_session_new_directory_is_created(tmp_path):
    target = tmp_path / "deep" / "sess"
    r = ccm("session", "new", "--directory", str(target), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and r.stdout.strip() == f"export CCM_SESSION_STORE={target}"
    assert target.is_dir()
    r = ccm("session", "new", "--directory", str(target), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and "already exists" in r.stderr


def test_pipe_api_json_and_yaml(tmp_path):
    target = tmp_path / "piped"
    req = {"protocol": "io.choria.ccm.v1.resource.ensure.request", "type": "file",
           "properties": {"name": str(target), "ensure": "present", "content": "via pipe",
                          "owner": "root", "group": "root", "mode": "0644"}}
    r = ccm("ensure", "api", "pipe", cwd=tmp_path, env=ccm_env(tmp_path), stdin=json.dumps(req))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["protocol"] == "io.choria.ccm.v1.resource.ensure.response"
    assert doc["state"]["changed"] is True and doc["state"]["type"] == "file"
    assert target.read_text() == "via pipe"
    yaml_req = "protocol: io.choria.ccm.v1.resource.ensure.request\ntype: file\nproperties:\n" \
               f"  - {target}:\n      ensure: present\n      content: via pipe\n      owner: root\n      group: root\n      mode: '0644'\n"
    r = ccm("ensure", "api", "pipe", "--yaml", cwd=tmp_path, env=ccm_env(tmp_path), stdin=yaml_req)
    import yaml

    doc = yaml.safe_load(r.stdout)
    assert r.returncode == 0 and doc["state"]["changed"] is False
    for bad, message in [("{}", 'invalid protocol ""'),
                         (json.dumps({"protocol": req["protocol"], "type": "nope", "properties": {"name": "x"}}),
                          "unknown resource type nope"),
                         (json.dumps({"protocol": req["protocol"], "type": "file"}), "missing properties in request"),
                         (json.dumps({"protocol": req["protocol"], "type": "file", "properties": {"name": "rel", "ensure": "present"}}),
                          "file path must be absolute")]:
        r = ccm("ensure", "api", "pipe", cwd=tmp_path, env=ccm_env(tmp_path), stdin=bad)
        assert r.returncode == 0 and message in json.loads(r.stdout)["error"], r.stdout


def test_pipe_records_in_session(tmp_path):
    sess = tmp_path / "s"
    sess.mkdir()
    req = {"protocol": "io.choria.ccm.v1.resource.ensure.request", "type": "exec", "properties": {"name": "/bin/true"}}
    r = ccm("ensure", "api", "pipe", cwd=tmp_path, env=ccm_env(tmp_path, CCM_SESSION_STORE=str(sess)),
            stdin=json.dumps(req))
    assert r.returncode == 0 and len(os.listdir(sess)) == 1


def test_status_file_json(tmp_path):
    f = tmp_path / "f"
    f.write_text("abc")
    os.chmod(f, 0o600)
    r = ccm("status", "file", str(f), "--json", cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stderr
    meta = json.loads(r.stdout)
    assert meta["mode"] == "0600" and meta["checksum"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    r = ccm("status", "exec", "x", cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and "not supported yet" in r.stdout


def test_status_package_and_service_json(tmp_path):
    import shutil

    if not shutil.which("dpkg-query"):
        import pytest

        pytest.skip("no dpkg on this host")
    r = ccm("status", "package", "bash", "--json", cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stderr
    meta = json.loads(r.stdout)
    assert meta["name"] == "bash" and meta["provider"] == "apt" and meta["version"][0].isdigit()
    r = ccm("status", "package", "ccm-not-installed-xyz", "--json", cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and json.loads(r.stdout)["version"] == "absent"
    r = ccm("status", "scaffold", "/x", cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and "unsupported resource type scaffold" in r.stderr
