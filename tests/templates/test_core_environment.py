"""The template environment: variables, lookup(), readFile/file, template(), jet()."""
from __future__ import annotations

import os
import sys
import types

import pytest

from ccm.expr import ExprError, evaluate
from ccm.model.errors import TemplateError
from ccm.templates import Environ, hiera_environment, make_environment, render_string, render_typed

FACTS = {"host": {"info": {"platformFamily": "debian", "hostname": "web1"}}, "env": "prod"}
DATA = {"port": 8080, "ratio": 1.5, "whole": 2.0,
        "users": [{"name": "alice", "uid": 1}, {"name": "bob", "uid": 2}]}


@pytest.fixture
def env(tmp_path):
    return make_environment(facts=FACTS, data=DATA, environ={"HOME": "/root", "X": "1"},
                            working_dir=str(tmp_path))


def test_variables(env, tmp_path):
    assert evaluate("Facts.host.info.platformFamily", env) == "debian"
    assert evaluate("Data.port", env) == 8080
    assert evaluate("Environ.HOME", env) == "/root"
    assert evaluate("Environ.MISSING", env) == ""
    assert evaluate("Environ['ALSO_MISSING']", env) == ""
    assert evaluate("Data.nokey", env) is None
    assert evaluate("WorkingDir", env) == str(tmp_path)
    assert isinstance(env["Environ"], Environ)
    for name in ("lookup", "readFile", "file", "template", "jet"):
        assert callable(env[name])
    assert "kvGet" not in env and "registrations" not in env


def test_extra_functions_and_unknown_function(tmp_path):
    env = make_environment(facts={}, data={}, environ={}, working_dir=None,
                           functions={"kvGet": lambda b, k: f"{b}/{k}"})
    assert evaluate("kvGet('B', 'K')", env) == "B/K"
    with pytest.raises(ExprError, match="unknown function registrations"):
        evaluate("registrations('a', 'b', 'c', 'd')", env)


@pytest.mark.parametrize("source, expected", [
    ("lookup('facts.host.info.platformFamily')", "debian"),
    ("lookup('data.port')", 8080),
    ("lookup('data.ratio')", 1.5),
    ("lookup('data.whole')", 2.0),
    ("lookup('data.users.#')", 2),
    ("lookup('data.users.#.name')", ["alice", "bob"]),
    ("lookup('data.users.#(name==\"bob\").uid')", 2),
    ("lookup('data.users.#(uid>0)#.name')", ["alice", "bob"]),
    ("lookup('environ.HOME')", "/root"),
    ("lookup('env.HOME')", "/root"),
    ("lookup('data.missing', 'dflt')", "dflt"),
    ("lookup('data.missing', 0)", 0),
    ("lookup('data.users.#(name==\"carol\").uid', -1)", -1),
    ("lookup('data.port', 1)", 8080),
])
def test_lookup(env, source, expected):
    result = evaluate(source, env)
    assert result == expected
    assert type(result) is type(expected)


def test_lookup_missing_errors(env):
    with pytest.raises(TemplateError) as info:
        evaluate("lookup('data.missing')", env)
    assert str(info.value) == "missing key 'data.missing' in environment"
    with pytest.raises(TemplateError, match="missing key 'data.missing'"):
        evaluate("lookup('data.missing', nil)", env)


def test_lookup_snapshot_taken_once():
    data = {"v": 1}
    env = make_environment(facts={}, data=data, environ={}, working_dir=None)
    assert evaluate("lookup('data.v')", env) == 1
    data["v"] = 2
    assert evaluate("lookup('data.v')", env) == 1  # snapshot reused
    assert evaluate("Data.v", env) == 2
    fresh = make_environment(facts={}, data=data, environ={}, working_dir=None)
    assert evaluate("lookup('data.v')", fresh) == 2


def test_lookup_number_rules():
    env = make_environment(facts={}, data={"e": 1e3, "big": 10 ** 20}, environ={}, working_dir=None)
    assert evaluate("lookup('data.big')", env) == 10 ** 20
    assert type(evaluate("lookup('data.e')", env)) is float  # JSON "1000.0" has a "."


def test_hiera_environment():
    env = hiera_environment({"env": "prod"})
    assert evaluate("lookup('facts.env')", env) == "prod"
    assert evaluate("lookup('facts.role')", env) == ""
    assert evaluate("lookup('facts.role', 'web')", env) == "web"
    assert evaluate("Data", env) == {}
    assert evaluate("Environ.X", env) == ""
    with pytest.raises(ExprError, match="unknown function file"):
        evaluate("file('/etc/hostname')", env)


def test_read_file(env, tmp_path):
    (tmp_path / "x.txt").write_text("hello\n")
    assert evaluate("readFile('x.txt')", env) == "hello\n"
    assert evaluate("file('x.txt')", env) == "hello\n"
    assert evaluate(f"file('{tmp_path / 'x.txt'}')", env) == "hello\n"
    with pytest.raises(TemplateError) as info:
        evaluate("file('nope.txt')", env)
    assert str(info.value) == (
        f'failed to read file "nope.txt": working dir: "{tmp_path}": '
        f"open {tmp_path / 'nope.txt'}: no such file or directory")


def test_read_file_relative_to_cwd_without_working_dir(tmp_path, monkeypatch):
    (tmp_path / "y.txt").write_text("cwd")
    monkeypatch.chdir(tmp_path)
    env = make_environment(facts={}, data={}, environ={}, working_dir=None)
    assert evaluate("readFile('y.txt')", env) == "cwd"


def test_template_function(env, tmp_path):
    (tmp_path / "t.templ").write_text("{{ Data.port + 1 }}")
    (tmp_path / "mixed.templ").write_text("port={{ Data.port }}")
    assert evaluate("template('t.templ')", env) == 8081
    assert evaluate("template('mixed.templ')", env) == "port=8080"
    assert evaluate("template('{{ Data.port }}')", env) == 8080
    assert evaluate("template('plain')", env) == "plain"
    with pytest.raises(TemplateError, match='failed to read file "missing.templ"'):
        evaluate("template('missing.templ')", env)
    assert render_typed("{{ template('t.templ') }}", env) == 8081


@pytest.fixture
def fake_jet(monkeypatch):
    calls = []

    def render_jet(source, variables, *, functions, left="[[", right="]]", context=None):
        calls.append((source, variables, functions, left, right, context))
        return f"jet:{source}"

    module = types.ModuleType("ccm.templates.jet")
    module.render_jet = render_jet
    monkeypatch.setitem(sys.modules, "ccm.templates.jet", module)
    return calls


def test_jet_function(env, tmp_path, fake_jet):
    (tmp_path / "t.jet").write_text("[[ data.port ]]")
    assert evaluate("jet('[[ 1 ]]')", env) == "jet:[[ 1 ]]"
    source, variables, functions, left, right, context = fake_jet[-1]
    assert (left, right) == ("[[", "]]")
    assert context is env
    for name in ("Facts", "Data", "Environ", "WorkingDir", "lookup", "readFile", "file", "template"):
        assert variables[name] is env[name]
        assert functions[name] is env[name]
    assert variables["facts"] is env["Facts"] and variables["data"] is env["Data"]
    assert variables["environ"] is env["Environ"]
    assert "jet" not in variables and "jet" not in functions
    assert evaluate("jet('<< x >>', '<<', '>>')", env) == "jet:<< x >>"
    assert fake_jet[-1][3:5] == ("<<", ">>")
    assert evaluate("jet('t.jet')", env) == "jet:[[ data.port ]]"
    assert evaluate("template('t.jet')", env) == "jet:[[ data.port ]]"
    with pytest.raises(TemplateError, match="jet requires 1 or 3 arguments"):
        evaluate("jet('a', 'b')", env)


def test_render_string_uses_environment(env):
    assert render_string("{{ Facts.host.info.hostname }}:{{ lookup('data.port') }}", env) == "web1:8080"


def test_environment_module_does_not_import_jet():
    import subprocess
    code = ("import sys; import ccm.templates, ccm.expr; "
            "print('ccm.templates.jet' in sys.modules, 'ccm.templates.gotmpl' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.stdout.strip() == "False False", out.stderr


@pytest.mark.parametrize("call,what,got", [
    ("jet(1)", "template body", "integer"),
    ("jet(1, '<<', '>>')", "template body", "integer"),
    ("jet('x', true, '>>')", "left delimiter", "boolean"),
    ("jet('x', '<<', [1])", "right delimiter", "list"),
])
def test_jet_argument_errors_start_with_upstreams_words(env, call, what, got):
    with pytest.raises(TemplateError) as err:
        evaluate(call, env)
    assert str(err.value).endswith(f"jet requires a string argument for {what}, not {got}")
