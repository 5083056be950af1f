"""A typo cannot reach a config file: missing Data/Facts keys rendered into strings fail."""
from __future__ import annotations

import json

import pytest

from tests.kit import ccm
from tests.operator.helpers import ccm_env

DATA = """\
data:
  port: 8080
  nothing: null
  nested:
    listen: 0.0.0.0
"""


def _file(tmp_path, content, name="out.conf"):
    return f"""\
    - file:
        name: {tmp_path}/{name}
        ensure: present
        content: {json.dumps(content)}
        owner: root
        group: root
        mode: "0644"
"""


def _apply(tmp_path, *resources, args=()):
    m = tmp_path / "m.yaml"
    m.write_text(DATA + "ccm:\n  resources:\n" + "".join(resources))
    return ccm("apply", *args, str(m), "--fact", "role=web", cwd=tmp_path, env=ccm_env(tmp_path))


@pytest.mark.parametrize("expr,key,hint", [
    ("Data.prot", "'prot'", "`port`"),
    ("Data.nested.lisen", "'lisen'", "`listen`"),
    ("Facts.rol", "'rol'", "`role`"),
])
def test_missing_key_fails_the_resource_before_writing(tmp_path, expr, key, hint):
    r = _apply(tmp_path, _file(tmp_path, "v={{ %s }}\n" % expr), _file(tmp_path, "ok\n", "other.conf"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert not (tmp_path / "out.conf").exists()
    assert (tmp_path / "other.conf").read_text() == "ok\n"   # only that resource fails
    out = r.stdout
    assert f"file#{tmp_path}/out.conf failed" in out
    assert "{{ %s }}" % expr in out and f"has no key {key}" in out and f"did you mean {hint}?" in out


@pytest.mark.parametrize("content,expected", [
    ("v={{ Data.prot ?? 'dflt' }}", "v=dflt"),
    ("v={{ Data.prot == nil }}", "v=true"),
    ("v={{ lookup('data.prot', 'd') }}", "v=d"),
    ("v={{ Environ.CCM_SURELY_UNSET_VAR }}.", "v=."),
    ("v={{ Data.port }}", "v=8080"),
    ("v={{ Data.nested.listen }}", "v=0.0.0.0"),
])
def test_absence_tests_keep_working(tmp_path, content, expected):
    r = _apply(tmp_path, _file(tmp_path, content))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out.conf").read_text() == expected


def test_control_expression_absence_test(tmp_path):
    res = _file(tmp_path, "x") + "        control:\n          if: Data.prot == nil\n"
    r = _apply(tmp_path, res)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out.conf").read_text() == "x"


def test_present_null_renders_nil_with_a_warning(tmp_path):
    r = _apply(tmp_path, _file(tmp_path, "v={{ Data.nothing }}"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out.conf").read_text() == "v=<nil>"
    assert "Data.nothing is null and renders as <nil>" in r.stderr


def test_missing_key_in_a_parse_time_field_rejects_the_manifest(tmp_path):
    r = _apply(tmp_path, _file(tmp_path, "x", name="{{ Data.prot }}.conf"))
    assert r.returncode == 1
    assert "has no key 'prot'" in r.stderr and "did you mean `port`?" in r.stderr


def test_missing_key_in_a_jet_template_fails_too(tmp_path):
    r = _apply(tmp_path, _file(tmp_path, "{{ jet('v=[[ Data.prot ]]') }}"))
    assert r.returncode == 1
    assert not (tmp_path / "out.conf").exists()
    assert "Data has no key 'prot' (did you mean `port`?)" in r.stdout
    r = _apply(tmp_path, _file(tmp_path, "{{ jet('[[ isset(Data.prot) ? Data.prot : \"dflt\" ]]') }}"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out.conf").read_text() == "dflt"


def test_missing_key_in_the_template_function_fails_too(tmp_path):
    # a lone expression used to come back as nil from template() and render as <nil>
    for content in ("v={{ template('{{ Data.prot }}') }}", "{{ template('{{ Data.nested.lisen }}') }}"):
        r = _apply(tmp_path, _file(tmp_path, content), _file(tmp_path, "ok\n", "other.conf"))
        assert r.returncode == 1, r.stdout + r.stderr
        assert not (tmp_path / "out.conf").exists()
        assert (tmp_path / "other.conf").read_text() == "ok\n"
        assert "has no key" in r.stdout and "did you mean `" in r.stdout, r.stdout
    tpl = tmp_path / "t.templ"
    tpl.write_text("{{ Data.prot }}")
    r = _apply(tmp_path, _file(tmp_path, "v={{ template('%s') }}" % tpl))
    assert r.returncode == 1 and "Data has no key 'prot' (did you mean `port`?)" in r.stdout
    for content, expected in (("v={{ template('{{ Data.prot ?? 7 }}') }}", "v=7"),
                              ("v={{ template('{{ Data.port }}') }}", "v=8080")):
        r = _apply(tmp_path, _file(tmp_path, content))
        assert r.returncode == 0, r.stdout + r.stderr
        assert (tmp_path / "out.conf").read_text() == expected
    r = _apply(tmp_path, _file(tmp_path, "v={{ template('{{ Data.nothing }}') }}"))
    assert r.returncode == 0 and (tmp_path / "out.conf").read_text() == "v=<nil>"
    assert "Data.nothing is null and renders as <nil>" in r.stderr


def _scaffold(tmp_path, text):
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "app.conf").write_text(text)
    return f"""\
    - scaffold:
        name: {tmp_path}/target
        source: {src}
        ensure: present
        engine: go
"""


def test_missing_key_in_a_go_template_fails_the_scaffold(tmp_path):
    r = _apply(tmp_path, _scaffold(tmp_path, "port={{ .Data.prot }}\n"), _file(tmp_path, "ok\n", "other.conf"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert not (tmp_path / "target" / "app.conf").exists()
    assert (tmp_path / "other.conf").read_text() == "ok\n"
    assert ".Data has no key 'prot' (did you mean `port`?)" in r.stdout, r.stdout
    r = _apply(tmp_path, _scaffold(tmp_path, "{{ range .Data.nested }}{{ $.Data.nested.lisen }}{{ end }}"))
    assert r.returncode == 1 and "$.Data.nested has no key 'lisen' (did you mean `listen`?)" in r.stdout, r.stdout


def test_go_template_absence_tests_and_null_keep_working(tmp_path):
    text = ('a={{ .Data.prot | default "d" }} b={{ if .Data.prot }}y{{ else }}n{{ end }} '
            'c={{ .Data.nested.listen }} e={{ .Data.nothing }}')
    r = _apply(tmp_path, _scaffold(tmp_path, text))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "target" / "app.conf").read_text() == "a=d b=n c=0.0.0.0 e=<no value>"
    assert ".Data.nothing is null and renders as <no value>" in r.stderr
