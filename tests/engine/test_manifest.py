"""``ccm apply``: manifest resolution, rejection before anything runs, execution, exit codes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ccm.cli.main import main
from ccm.registry import reset
from tests.kit import ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def _facts(monkeypatch, tmp_path):
    # Skip host fact gathering for speed: every test gets a small fixed fact set.
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"host": {"info": {"os": "linux", "platformFamily": "debian"}}}))
    monkeypatch.setattr("ccm.facts.gather", lambda **kw: {"host": {"info": {"os": "linux", "platformFamily": "debian"}}})
    monkeypatch.delenv("CCM_SESSION_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    reset()


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return str(path)


def apply(capsys, *argv):
    code = main(["apply", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def file_res(path, content="x", **extra):
    props = {"ensure": "present", "content": content, "owner": "root", "group": "root", "mode": "0644"}
    props.update(extra)
    lines = "\n".join(f"        {k}: {json.dumps(v)}" for k, v in props.items())
    return f"    - file:\n        name: {path}\n{lines}\n"


BAD = [
    ("malformed yaml", "ccm: [unclosed\n", "invalid YAML"),
    ("unknown top key", "datas: {}\nccm:\n  resources: []\n", "unknown top-level key 'datas'"),
    ("unknown ccm key", "ccm:\n  resource: []\n", "unknown key 'resource' in ccm"),
    ("unknown type", "ccm:\n  resources:\n    - pakage:\n        name: x\n        ensure: present\n", "unknown resource type 'pakage'"),
    ("unknown property", "ccm:\n  resources:\n    - exec:\n        name: /bin/true\n        refresh_only: true\n",
     "exec#/bin/true): unknown property 'refresh_only'"),
    ("bad ensure", "ccm:\n  resources:\n    - file:\n        name: /tmp/x\n        ensure: sideways\n        owner: root\n        group: root\n        mode: '0644'\n",
     "file#/tmp/x): ensure: invalid ensure value"),
    ("bad mode", "ccm:\n  resources:\n    - file:\n        name: /tmp/x\n        ensure: present\n        owner: root\n        group: root\n        mode: '0999'\n",
     "file#/tmp/x): mode: mode \"0999\" is not a valid octal number"),
    ("missing ensure", "ccm:\n  resources:\n    - file:\n        name: /tmp/x\n", "file#/tmp/x): ensure: ensure is required"),
    ("expression syntax error", "ccm:\n  resources:\n    - file:\n        name: /tmp/x\n        ensure: present\n        owner: root\n        group: root\n        mode: '0644'\n        content: '{{ 1 + }}'\n",
     "file#/tmp/x): content:"),
    ("unknown function in deferred field", "ccm:\n  resources:\n    - file:\n        name: /tmp/x\n        ensure: present\n        owner: root\n        group: root\n        mode: '0644'\n        content: '{{ lookupp(\"a\") }}'\n",
     "file#/tmp/x): content: unknown function lookupp"),
    ("unknown function in control", "ccm:\n  resources:\n    - exec:\n        name: /bin/true\n        control:\n          if: 'isFoo(Data.x)'\n",
     "exec#/bin/true): control.if: unknown function isFoo"),
    ("control syntax error", "ccm:\n  resources:\n    - exec:\n        name: /bin/true\n        control:\n          if: 'Data.x =='\n",
     "exec#/bin/true): control.if:"),
    ("bad reference", "ccm:\n  resources:\n    - exec:\n        name: /bin/true\n        require: [nohash]\n",
     "exec#/bin/true): require: invalid require properties: 'nohash' is not type#name (exactly one '#')"),
    ("wrong value type", "ccm:\n  resources:\n    - exec:\n        name: /bin/true\n        timeout: {a: 1}\n",
     "exec#/bin/true): timeout: expected a string, got a map"),
    ("fail_on_error not bool", "ccm:\n  fail_on_error: 'yes'\n  resources: []\n", "fail_on_error must be a boolean"),
    ("health check tries", "ccm:\n  resources:\n    - exec:\n        name: /bin/true\n        health_checks:\n          - command: /bin/true\n            tries: x\n",
     "health_checks[0].tries: expected an integer"),
    ("empty resources", "ccm:\n  resources: []\n", "must contain resources"),
    ("two type keys", "ccm:\n  resources:\n    - exec: {name: /bin/true}\n      file: {name: /tmp/x}\n", "exactly one type key"),
    ("multiple defaults", "ccm:\n  resources:\n    - exec:\n        - defaults: {}\n        - defaults: {}\n", "multiple defaults found"),
]


@pytest.mark.parametrize("label,body,message", BAD, ids=[b[0] for b in BAD])
def test_bad_manifest_rejected_before_anything_runs(tmp_path, capsys, label, body, message):
    first = tmp_path / "created-by-first-resource"
    text = "ccm:\n  resources:\n" + file_res(first).replace("    - ", "    - ", 1)
    if body.startswith("ccm:\n  resources:\n"):
        text = "ccm:\n  resources:\n" + file_res(first) + body[len("ccm:\n  resources:\n"):]
    else:
        text = body
    path = write(tmp_path / "m.yaml", text)
    code, out, err = apply(capsys, path)
    assert code == 1
    assert message in err, err
    assert not first.exists(), "nothing may change when the manifest is rejected"


def test_runtime_failures_fail_one_resource_and_continue(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    path = write(tmp_path / "m.yaml", "ccm:\n  resources:\n"
                 + file_res(a, owner="no-such-user-ccm")
                 + f"    - exec:\n        name: /bin/true\n        require: [file#{a}]\n"
                 + file_res(b))
    code, out, err = apply(capsys, path)
    assert code == 1
    assert 'could not lookup user "no-such-user-ccm": no such user' in out
    assert b.read_text() == "x" and not a.exists()
    assert "Failed Resources: 1" in out and "Unmet Requirements: 1" in out


def test_fail_on_error_stops_after_failed_entry(tmp_path, capsys):
    b = tmp_path / "b"
    path = write(tmp_path / "m.yaml", "ccm:\n  fail_on_error: true\n  resources:\n"
                 + "    - exec:\n        name: /bin/false\n" + file_res(b))
    code, out, _ = apply(capsys, path)
    assert code == 1 and "Terminating manifest execution due to failed resource" in out and not b.exists()


def test_defaults_flatten_and_detailed_exit_codes(tmp_path, capsys):
    d = tmp_path / "d"
    path = write(tmp_path / "m.yaml", f"""\
        data:
          files: [one, two]
        ccm:
          resources:
            - file:
                - defaults:
                    ensure: present
                    owner: root
                    group: root
                    mode: "0600"
                    content: "default {{{{ Data.files }}}}"
                - {d}-1: {{}}
                - {d}-2:
                    content: "own"
                - {d}-3:
        """)
    code, out, _ = apply(capsys, path, "--detailed-exit-codes")
    assert code == 2
    assert (tmp_path / "d-1").read_text() == "default [one two]"
    assert (tmp_path / "d-2").read_text() == "own"
    assert (tmp_path / "d-3").read_text() == "default [one two]", "a null element inherits defaults"
    assert oct((tmp_path / "d-3").stat().st_mode & 0o777) == "0o600"
    code, out, _ = apply(capsys, path, "--detailed-exit-codes")
    assert code == 0 and "Stable Resources: 3" in out
    code, out, _ = apply(capsys, path, "--detailed-exit-codes", "--noop")
    assert code == 0


def test_detailed_exit_codes_failures_and_both(tmp_path, capsys):
    ok = tmp_path / "ok"
    path = write(tmp_path / "m.yaml", "ccm:\n  resources:\n    - exec:\n        name: /bin/false\n" + file_res(ok))
    assert apply(capsys, path, "--detailed-exit-codes")[0] == 6
    assert apply(capsys, path, "--detailed-exit-codes")[0] == 4


def test_render_shows_resolved_manifest_and_changes_nothing(tmp_path, capsys):
    target = tmp_path / "r"
    path = write(tmp_path / "m.yaml", f"""\
        data:
          pkg: httpd
        hierarchy:
          order: ["os:{{{{ lookup('facts.host.info.os') }}}}"]
        overrides:
          "os:linux":
            pkg: apache2
        ccm:
          resources:
            - file:
                name: {target}
                ensure: present
                owner: root
                group: root
                mode: "0644"
                content: "{{{{ Data.pkg }}}}"
                alias: "{{{{ Data.pkg }}}}-conf"
        """)
    code, out, _ = apply(capsys, path, "--render")
    assert code == 0 and not target.exists()
    import yaml

    doc = yaml.safe_load(out)
    assert doc["data"] == {"pkg": "apache2"}
    res = doc["ccm"]["resources"][0]["file"]
    assert list(res)[:3] == ["name", "alias", "ensure"]
    # deferred fields too, as far as they render before the run (upstream leaves them as written)
    assert res["alias"] == "apache2-conf" and res["content"] == "apache2"


def test_messages_and_session_store_env(tmp_path, capsys, monkeypatch):
    sess = tmp_path / "sess"
    monkeypatch.setenv("CCM_SESSION_STORE", str(sess))
    path = write(tmp_path / "m.yaml", "ccm:\n  pre_message: 'hello {{ Facts.host.info.os }}'\n  post_message: bye\n  resources:\n"
                 + file_res(tmp_path / "f"))
    code, out, _ = apply(capsys, path)
    assert code == 0 and "hello linux" in out and "bye" in out
    files = os.listdir(sess)
    assert len(files) == 2 and all(f.endswith(".event") for f in files)


def test_hiera_overlay_and_annotations(tmp_path, capsys):
    overlay = write(tmp_path / "over.yaml", "data:\n  port: 9090\n")
    target = tmp_path / "p"
    path = write(tmp_path / "m.yaml", "data:\n  # @validate isInt(value)\n  port: 8080\nccm:\n  resources:\n"
                 + file_res(target, content="{{ Data.port }}"))
    assert apply(capsys, path, "--hiera", overlay)[0] == 0
    assert target.read_text() == "9090"
    bad = write(tmp_path / "over2.yaml", "data:\n  port: eighty\n")
    code, _, err = apply(capsys, path, "--hiera", bad)
    assert code == 1 and 'key "port" failed validation' in err


def test_relative_manifest_paths_and_source(tmp_path, capsys, monkeypatch):
    sub = tmp_path / "bundle"
    (sub / "files").mkdir(parents=True)
    (sub / "files" / "a.txt").write_text("from source")
    target = tmp_path / "copied"
    write(sub / "manifest.yaml", "ccm:\n  resources:\n    - file:\n        name: %s\n        ensure: present\n"
          "        owner: root\n        group: root\n        mode: '0644'\n        source: files/a.txt\n" % target)
    monkeypatch.chdir(tmp_path)
    code, out, _ = apply(capsys, "bundle/manifest.yaml")
    assert code == 0, out
    assert target.read_text() == "from source"


def test_python_m_ccm_and_help_do_not_import_engine():
    code = ("import sys; from ccm.cli.main import main; rc = main(['--help']);"
            "heavy = [m for m in ('ccm.manager', 'ccm.apply', 'ccm.resources.base', 'yaml', 'jsonschema', 'psutil',"
            " 'nats', 'prometheus_client') if m in sys.modules]; print(heavy); sys.exit(rc)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().endswith("[]"), r.stdout + r.stderr
    r = ccm("--version", cwd=ROOT)
    from ccm import __version__

    assert r.stdout.split()[0] == __version__


def test_resources_jet_file(tmp_path, capsys):
    write(tmp_path / "resources.jet", """\
        [[ range _, name := Data.files ]]
        - file:
            name: [[ .Data.dir ]]/[[ name ]]
            ensure: present
            owner: root
            group: root
            mode: "0644"
            content: "[[ name ]] {{ Data.dir }}"
        [[ end ]]
        """)
    path = write(tmp_path / "m.yaml", f"""\
        data:
          dir: {tmp_path}
          files: [alpha, beta]
        ccm:
          resources_jet_file: resources.jet
        """)
    code, out, err = apply(capsys, path)
    assert code == 0, out + err
    assert (tmp_path / "alpha").read_text() == f"alpha {tmp_path}"
    assert (tmp_path / "beta").read_text() == f"beta {tmp_path}"
    write(tmp_path / "resources.jet", "[[ if false ]]x[[ end ]]")
    code, _, err = apply(capsys, path)
    assert code == 1 and "produced no output" in err


def test_cli_facts_override_gathered_facts(tmp_path, capsys):
    facts_file = write(tmp_path / "f.yaml", "role: db\nhost:\n  info:\n    os: plan9\n")
    target = tmp_path / "t"
    path = write(tmp_path / "m.yaml", "ccm:\n  resources:\n"
                 + file_res(target, content="{{ Facts.role }} {{ Facts.host.info.os }} {{ Facts.host.info.platformFamily }} {{ Facts.extra }}"))
    code, out, err = apply(capsys, path, "--fact", "extra=1", "--fact", "role:web", "--facts", facts_file)
    assert code == 0, out + err
    assert target.read_text() == "db plan9 debian 1"


def test_unknown_command_and_usage_errors(capsys):
    assert main(["frobnicate"]) == 1
    assert "expected command" in capsys.readouterr().err
    assert main(["apply"]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and "manifest" in err


def test_json_output_is_one_document_and_metrics_file(tmp_path, capsys):
    metrics = tmp_path / "m" / "ccm.prom"
    metrics.parent.mkdir()
    path = write(tmp_path / "m.yaml", "ccm:\n  pre_message: hi\n  resources:\n" + file_res(tmp_path / "f")
                 + "    - exec:\n        name: /bin/false\n")
    code, out, err = apply(capsys, path, "--json", "--metrics-file", str(metrics))
    assert code == 1
    doc = json.loads(out)
    assert [e["type"] for e in doc["events"]] == ["file", "exec"]
    assert doc["summary"]["failed_resources"] == 1 and doc["summary"]["changed_resources"] == 1
    text = metrics.read_text()
    assert 'choria_ccm_resource_state_failed_count{name="/bin/false",type="exec"} 1' in text.replace(".0\n", "\n")
    assert "choria_ccm_resource_state_total_count" in text and "_total_count_total" not in text
    assert os.listdir(metrics.parent) == ["ccm.prom"]


def test_monitor_only_runs_checks_and_changes_nothing(tmp_path, capsys):
    target = tmp_path / "f"
    path = write(tmp_path / "m.yaml", "ccm:\n  resources:\n" + file_res(target)
                 + "        health_checks:\n          - command: /bin/sh -c 'exit 2'\n            name: always-critical\n")
    code, out, _ = apply(capsys, path, "--monitor-only")
    assert code == 1 and not target.exists()
    assert "healthcheck=true" in out and "CRITICAL" in out
    assert "Checked Resources: 1 (ok: 0, critical: 1, warning: 0 unknown: 0)" in out


def test_facts_are_gathered_only_when_something_reads_them(tmp_path):
    plain = write(tmp_path / "plain.yaml", "ccm:\n  resources:\n" + file_res(tmp_path / "a"))
    templated = write(tmp_path / "t.yaml", "ccm:\n  resources:\n" + file_res(tmp_path / "b", content="{{ Facts.host.info.os }}"))
    code = ("import sys; from ccm.cli.main import main; rc = main(['apply', '--no-report', sys.argv[1]]);"
            "print('psutil' in sys.modules)")
    for path, gathered in ((plain, "False"), (templated, "True")):
        r = subprocess.run([sys.executable, "-c", code, path], cwd=ROOT, capture_output=True, text=True,
                           env=dict(os.environ, NO_SCHEMA_VALIDATION="1"))
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip().splitlines()[-1] == gathered


def test_parsed_manifest_cache_returns_identical_values(tmp_path, monkeypatch):
    from ccm import yamlio

    monkeypatch.setenv("CCM_CACHE_DIR", str(tmp_path / "cache"))
    text = "data:\n  mode: 0644\n  flag: yes\n  n: 12\n" + "".join(f"  k{i}: [a, {i}, 1.5, ~]\n" for i in range(2000))
    first = yamlio.load_cached(text)
    assert len(os.listdir(tmp_path / "cache")) == 1
    second = yamlio.load_cached(text)
    assert second == first == yamlio.load(text)
    assert second["data"]["mode"] == 420 and second["data"]["mode"].text == "0644"
    assert second["data"]["flag"] == "yes"
    # a tampered, group-writable cache entry is ignored
    entry = tmp_path / "cache" / os.listdir(tmp_path / "cache")[0]
    entry.write_bytes(b"garbage")
    os.chmod(entry, 0o666)
    assert yamlio.load_cached(text) == first


def test_render_renders_deferred_fields_that_can_be_rendered_before_the_run(tmp_path, capsys):
    (tmp_path / "motd.txt").write_text("from a file")
    path = write(tmp_path / "m.yaml", f"""\
        data:
          name: world
        ccm:
          resources:
            - exec:
                name: greet
                command: "/bin/echo {{{{ Data.name }}}} {{{{ file('motd.txt') }}}}"
                environment: ["WHO={{{{ Data.name }}}}"]
                cwd: "{tmp_path}/{{{{ Data.name }}}}"
            - exec:
                name: later
                command: "/bin/echo {{{{ Data.missing }}}}"
                control:
                  if: "Data.name == 'nobody'"
            - exec:
                name: nats
                command: "/bin/echo {{{{ kvGet('CFG', 'x') }}}}"
        """)
    code, out, err = apply(capsys, path, "--render")
    assert code == 0, err
    import yaml

    res = [r["exec"] for r in yaml.safe_load(out)["ccm"]["resources"]]
    assert res[0]["command"] == "/bin/echo world from a file"
    assert res[0]["environment"] == ["WHO=world"] and res[0]["cwd"] == f"{tmp_path}/world"
    # not renderable before the run (a missing key control may skip; NATS): shown as written
    assert res[1]["command"] == "/bin/echo {{ Data.missing }}"
    assert res[2]["command"] == "/bin/echo {{ kvGet('CFG', 'x') }}"
