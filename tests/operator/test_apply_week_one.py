"""Issue 25 "Apply and validate" (part A) and the issue 24 sensitive diff, through the real ``ccm``."""
from __future__ import annotations

import os

from tests.kit import ccm, spawn
from tests.operator.helpers import ccm_env


def _manifest(tmp_path, body, data=""):
    m = tmp_path / "m.yaml"
    m.write_text(data + "ccm:\n  resources:\n" + body)
    return m


def _file(path, content, **extra):
    text = (f"    - file:\n        name: {path}\n        ensure: present\n        content: {content!r}\n"
            .replace("'", '"'))
    text += "        owner: root\n        group: root\n        mode: '0644'\n"
    return text + "".join(f"        {k}: {v}\n" for k, v in extra.items())


# --- 1. --diff on a real apply -------------------------------------------------------------

def test_diff_on_a_real_apply_shows_the_change_it_made(tmp_path):
    f = tmp_path / "app.conf"
    f.write_text("port=80\nworkers=2\n")
    os.chmod(f, 0o644)
    m = _manifest(tmp_path, _file(f, "port=8080\nworkers=2\n"))
    r = ccm("apply", "--diff", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f.read_text() == "port=8080\nworkers=2\n"
    assert f"--- {f}\n" in r.stdout and "-port=80\n" in r.stdout and "+port=8080\n" in r.stdout
    # stable on the second run: nothing to show
    r = ccm("apply", "--diff", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and "@@" not in r.stdout


def test_real_apply_diff_is_capped_and_refuses_binary(tmp_path):
    big = tmp_path / "big.conf"
    big.write_text("".join(f"old {i}\n" for i in range(500)))
    os.chmod(big, 0o644)
    src = tmp_path / "src.bin"
    src.write_bytes(b"\x00\x01binary\xff")
    dst = tmp_path / "dst.bin"
    dst.write_bytes(b"\x00\x02other\xfe")
    os.chmod(dst, 0o644)
    body = _file(big, "".join(f"new {i}\n" for i in range(500)))
    body += (f"    - file:\n        name: {dst}\n        ensure: present\n        source: {src}\n"
             "        owner: root\n        group: root\n        mode: '0644'\n")
    r = ccm("apply", "--diff", str(_manifest(tmp_path, body)), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "diff cut at 200 of" in r.stdout and r.stdout.count("\n+new ") < 200
    assert dst.read_bytes() == src.read_bytes()
    assert "\x00" not in r.stdout and f"--- {dst}" not in r.stdout


def test_real_apply_without_diff_prints_none(tmp_path):
    f = tmp_path / "app.conf"
    f.write_text("a\n")
    os.chmod(f, 0o644)
    r = ccm("apply", str(_manifest(tmp_path, _file(f, "b\n"))), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and "@@" not in r.stdout


# --- 2. (issue 24) no diff of content from # @sensitive data ------------------------------

SENSITIVE = "data:\n  # @sensitive\n  password: NEWSECRET1\n"


def _sensitive(tmp_path):
    f = tmp_path / "app.conf"
    f.write_text("password=OLDSECRET0\n")
    os.chmod(f, 0o644)
    return f, _manifest(tmp_path, _file(f, "password={{ Data.password }}\n"), SENSITIVE)


def test_noop_diff_of_sensitive_content_is_withheld(tmp_path):
    f, m = _sensitive(tmp_path)
    r = ccm("apply", "--noop", "--diff", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OLDSECRET0" not in r.stdout + r.stderr and "NEWSECRET1" not in r.stdout + r.stderr
    assert "@@" not in r.stdout and "password=" not in r.stdout
    withheld = [ln for ln in r.stdout.splitlines() if "withheld" in ln]
    assert withheld == [f"diff of file#{f} withheld: its content holds @sensitive data"], r.stdout


def test_real_diff_of_sensitive_content_is_withheld(tmp_path):
    f, m = _sensitive(tmp_path)
    r = ccm("apply", "--diff", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f.read_text() == "password=NEWSECRET1\n"
    assert "OLDSECRET0" not in r.stdout + r.stderr and "@@" not in r.stdout
    assert f"diff of file#{f} withheld: its content holds @sensitive data" in r.stdout


# --- 3. a templated require is rendered as subscribe is, and checked at load ---------------

def _dir(path):
    return (f"    - file:\n        name: \"{path}\"\n        ensure: directory\n"
            "        owner: root\n        group: root\n        mode: '0755'\n")


def test_templated_require_is_rendered(tmp_path):
    d = tmp_path / "d"
    body = _dir("{{ Data.dir }}") + _file(d / "x", "x\n", require='["file#{{ Data.dir }}"]')
    m = _manifest(tmp_path, body, f"data:\n  dir: {d}\n")
    r = ccm("apply", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (d / "x").read_text() == "x\n"


def test_templated_require_is_checked_at_load(tmp_path):
    d = tmp_path / "d"
    body = _file(d / "x", "x\n", require='["file#{{ Data.dir }}"]') + _dir("{{ Data.dir }}")
    m = _manifest(tmp_path, body, f"data:\n  dir: {d}\n")
    for command in ("validate", "apply"):
        r = ccm(command, str(m), cwd=tmp_path, env=ccm_env(tmp_path))
        assert r.returncode == 1, (command, r.stdout + r.stderr)
        assert (f"require: 'file#{d}' names a resource not declared earlier in this manifest "
                "(it is declared later, as resource 2: move it before this one)") in r.stdout + r.stderr
    assert not d.exists()


# --- 4. --quiet says nothing of a resource skipped by its own control ----------------------

def test_quiet_is_silent_about_control_skips(tmp_path):
    import json

    skipped = tmp_path / "skipped"
    made = tmp_path / "made"
    body = (_file(skipped, "x\n") + "        control:\n          if: 'false'\n" + _file(made, "x\n"))
    m = _manifest(tmp_path, body)
    last = tmp_path / "last.json"
    r = ccm("--quiet", "apply", "--last-run", str(last), str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "skipped" not in r.stdout + r.stderr
    assert f"file#{made} changed" in r.stdout   # changes are still reported
    assert json.loads(last.read_text())["resources"]["skipped"] == 1
    r = ccm("--quiet", "apply", str(m), cwd=tmp_path, env=ccm_env(tmp_path))   # stable now: nothing at all
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    # without --quiet the line is as before
    r = ccm("apply", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert f" WARN  file#{skipped} skipped ensure=present runtime=" in r.stdout
    assert "Skipped Resources: 1" in r.stdout


# --- 5. template('x.tmpl') of an existing file is refused, never rendered as its name ------

def test_template_of_a_file_with_another_extension_fails(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "app.tmpl").write_text("port={{ Data.port }}\n")
    (tmp_path / "templates" / "app.templ").write_text("port={{ Data.port }}\n")
    bad, good = tmp_path / "bad.conf", tmp_path / "good.conf"
    body = "".join(_file(path, "X").replace('"X"', f'"{{{{ template(\'{arg}\') }}}}"') for path, arg in (
        (bad, "templates/app.tmpl"), (good, "templates/app.templ"), (tmp_path / "inline.conf", "not/a/file.tmpl")))
    r = ccm("apply", str(_manifest(tmp_path, body, "data:\n  port: 80\n")), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert not bad.exists()
    assert (f'file#{bad} failed ensure=present' in r.stdout
            and 'template: "templates/app.tmpl" names a file, but template() reads only files ending .templ '
                '(rendered as {{ }}) or .jet (rendered as Jet)' in r.stdout), r.stdout
    assert good.read_text() == "port=80\n"
    assert (tmp_path / "inline.conf").read_text() == "not/a/file.tmpl"   # no such file: text, as upstream


# --- 6. hiera data without a top-level data: key: one warning naming the source -----------

NO_DATA_WARNING = "hiera source has no top-level data key, so its keys (x, y) are ignored: put them under data:"


def test_hiera_source_without_data_key_warns(tmp_path):
    from tests.httpfixture import Server

    h = tmp_path / "h.yaml"
    h.write_text("x: 1\ny: 2\n")
    r = ccm("hiera", "parse", str(h), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and r.stdout.strip() == "{}"
    lines = [ln for ln in r.stderr.splitlines() if "data key" in ln]
    assert len(lines) == 1 and NO_DATA_WARNING in lines[0] and f"source={h}" in lines[0], r.stderr
    # a --hiera source of a run, and an http:// one, alike
    m = _manifest(tmp_path, _file(tmp_path / "out", "x\n"))
    r = ccm("apply", "--hiera", str(h), str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and NO_DATA_WARNING in r.stderr, r.stderr
    with Server() as server:
        server.route("/h.yaml", body=b"x: 1\ny: 2\n")
        r = ccm("hiera", "parse", server.url("/h.yaml"), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and NO_DATA_WARNING in r.stderr and "/h.yaml" in r.stderr, r.stderr
    # with data: (or only hierarchy/overrides), nothing to say
    h.write_text("data:\n  x: 1\n")
    r = ccm("hiera", "parse", str(h), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and "data key" not in r.stderr and '"x": 1' in r.stdout
    h.write_text("hierarchy:\n  order: [default]\n")
    r = ccm("hiera", "parse", str(h), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0 and r.stderr == ""


# --- 7. the summary's Run Time is the wall time of the run ---------------------------------

def _run_time_ms(out):
    from ccm.model.durations import parse_duration_ns

    line = next(ln for ln in out.splitlines() if ln.strip().startswith("Run Time:"))
    return parse_duration_ns(line.split(":", 1)[1].strip()) / 1e6


def test_run_time_is_the_wall_time_of_a_short_run(tmp_path):
    body = "    - exec:\n        name: nap\n        command: /bin/sleep 0.3\n"
    r = ccm("apply", str(_manifest(tmp_path, body)), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert 300 <= _run_time_ms(r.stdout) < 5000, r.stdout


def test_run_time_is_the_wall_time_of_an_interrupted_run(tmp_path):
    import signal
    import time

    from tests.operator.helpers import wait_for

    mark = tmp_path / "started"
    body = (f"    - exec:\n        name: first\n        command: /bin/sleep 0.2\n"
            f"    - exec:\n        name: long\n        command: \"/bin/sh -c 'touch {mark}; sleep 300'\"\n")
    proc = spawn("apply", str(_manifest(tmp_path, body)), cwd=tmp_path, env=ccm_env(tmp_path))
    try:
        assert wait_for(mark.exists), "the long command never started"
        time.sleep(1.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, out + err
    assert _run_time_ms(out) >= 1700, out


# --- 8. errors inside a bundle name the bundle and member, never the temp dir --------------

def _bundle(tmp_path, name, files):
    import tarfile

    src = tmp_path / (name + ".src")
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    out = tmp_path / name
    with tarfile.open(out, "w:gz") as tar:
        tar.add(src / "site", arcname="site")
    return out


def test_bundle_errors_name_the_bundle_and_member(tmp_path):
    target = tmp_path / "out"
    broken = _bundle(tmp_path, "broken.tgz", {"site/manifest.yaml": "ccm:\n  resources:\n    - file:\n"
                                                                   "        name: x\n      ensure: [\n"})
    bad = _bundle(tmp_path, "bad.tgz", {"site/manifest.yaml": f"ccm:\n  resources:\n    - file:\n"
                                                            f"        name: {target}\n        ensure: bogus\n"})
    missing = _bundle(tmp_path, "missing.tgz", {
        "site/manifest.yaml": "ccm:\n  resources:\n    - apply:\n        name: child.yaml\n",
        "site/child.yaml": "ccm:\n  resources:\n" + _file(target, "{{ readFile('nope.txt') }}").replace(
            "\"{{ readFile(\"nope.txt\") }}\"", "\"{{ readFile('nope.txt') }}\"")})
    expected = {
        broken: f"invalid YAML: {broken}!/site/manifest.yaml:6:1: did not find expected node content",
        bad: f"{bad}!/site/manifest.yaml: invalid manifest resource 1 (file#{target}): ensure: invalid ensure",
        missing: f"working dir: \"{missing}!/site\": open {missing}!/site/nope.txt: no such file or directory",
    }
    for bundle, words in expected.items():
        for command in ("apply", "validate") if bundle is not missing else ("apply",):
            r = ccm(command, str(bundle), cwd=tmp_path, env=ccm_env(tmp_path))
            out = r.stdout + r.stderr
            assert r.returncode == 1, out
            assert words in out, (command, out)
            assert "manifest-" not in out and "/bundle/" not in out, out
    r = ccm("apply", str(missing), cwd=tmp_path, env=ccm_env(tmp_path))
    assert f"Executing manifest manifest=child.yaml manifest={missing}!/site/child.yaml" in r.stdout, r.stdout


# --- 9. the log line of an aliased resource shows the alias and the path -------------------

def test_alias_lines_show_the_path(tmp_path):
    f = tmp_path / "app.conf"
    r = ccm("apply", str(_manifest(tmp_path, _file(f, "x\n", alias="appconf"))), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f" WARN  file#appconf ({f}) changed ensure=present runtime=" in r.stdout, r.stdout
    body = "    - exec:\n        name: /bin/false\n        alias: fails\n"
    r = ccm("apply", str(_manifest(tmp_path, body)), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and " ERROR exec#fails (/bin/false) failed ensure=present" in r.stdout, r.stdout


# --- 10. a manifest without ccm.resources says that it must have them ----------------------

def test_manifest_without_ccm_key_says_what_it_needs(tmp_path):
    cases = {"data:\n  x: 1\n": "it has no ccm key", "": "it has no ccm key",
             "ccm:\n  fail_on_error: true\n": "ccm has no resources", "ccm:\n": "ccm has no resources"}
    m = tmp_path / "m.yaml"
    for text, found in cases.items():
        m.write_text(text)
        for command in ("apply", "validate"):
            r = ccm(command, str(m), cwd=tmp_path, env=ccm_env(tmp_path))
            out = r.stdout + r.stderr
            assert r.returncode == 1, out
            assert (f"{m}: a manifest must contain ccm.resources, the list of resources to manage ({found})"
                    in out), (text, command, out)
            assert "schema validation" not in out and "None is not of type" not in out
