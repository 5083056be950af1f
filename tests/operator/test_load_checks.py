"""Mistakes caught before the run: duplicates, forward references, did-you-mean, indentation."""
from __future__ import annotations

from tests.kit import ccm
from tests.operator.helpers import ccm_env


def _file(path, **extra):
    lines = [f"    - file:\n        name: {path}\n        ensure: present\n        content: x\n"
             "        owner: root\n        group: root\n        mode: '0644'\n"]
    lines += [f"        {k}: {v}\n" for k, v in extra.items()]
    return "".join(lines)


def _apply(tmp_path, text, *args, **env):
    m = tmp_path / "m.yaml"
    m.write_text(text)
    return m, ccm("apply", *args, str(m), cwd=tmp_path, env=ccm_env(tmp_path, **env))


def test_duplicate_resource_after_templating_rejected_naming_both_lines(tmp_path):
    a = tmp_path / "a"
    text = ("data:\n  f: a\nccm:\n  resources:\n" + _file(a) + _file(tmp_path / "b")
            + _file(str(tmp_path) + "/{{ Data.f }}"))
    m, r = _apply(tmp_path, text)
    assert r.returncode == 1
    assert f"{m}: duplicate resource file#{a}: declared as resource 1 (line 5) and again as resource 3 (line 19)" \
        in r.stderr, r.stderr
    assert not a.exists()


def test_duplicate_via_defaults_list(tmp_path):
    text = ("ccm:\n  resources:\n    - exec:\n        - defaults: {returns: [0]}\n"
            "        - /bin/true: {}\n        - /bin/false: {}\n        - /bin/true: {}\n")
    m, r = _apply(tmp_path, text)
    assert r.returncode == 1
    assert "duplicate resource exec#/bin/true: declared as resource 1 (line 5) and again as resource 1 (line 7)" \
        in r.stderr, r.stderr


def test_require_of_a_later_resource_rejected_before_anything_runs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    text = "ccm:\n  resources:\n" + _file(a, require=f"[file#{b}]") + _file(b)
    m, r = _apply(tmp_path, text)
    assert r.returncode == 1
    assert f"require: 'file#{b}' names a resource not declared earlier in this manifest" in r.stderr
    assert "it is declared later, as resource 2: move it before this one" in r.stderr
    assert str(m) in r.stderr
    assert not a.exists() and not b.exists()


def test_subscribe_typo_gets_did_you_mean(tmp_path):
    a = tmp_path / "app.conf"
    text = ("ccm:\n  resources:\n" + _file(a)
            + f"    - exec:\n        name: /bin/true\n        refreshonly: true\n        subscribe: [file#{tmp_path}/app.cnf]\n")
    m, r = _apply(tmp_path, text)
    assert r.returncode == 1
    assert f"did you mean `file#{a}`?" in r.stderr


def test_require_known_to_the_session_store_is_allowed(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    a = tmp_path / "a"
    r = ccm("ensure", "file", str(a), "--content", "x", "--owner", "root:root", "--mode", "0644", cwd=tmp_path,
            env=ccm_env(tmp_path, CCM_SESSION_STORE=str(store)))
    assert r.returncode == 0, r.stderr
    text = f"ccm:\n  resources:\n    - exec:\n        name: /bin/true\n        require: [file#{a}]\n"
    m, r = _apply(tmp_path, text, CCM_SESSION_STORE=str(store))
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_problem_is_listed_and_the_file_named(tmp_path):
    text = ("ccm:\n  resources:\n"
            "    - file:\n        name: /tmp/x\n        ensure: present\n        ownr: root\n"
            "    - exec:\n        name: /bin/true\n        refresh_only: true\n")
    m, r = _apply(tmp_path, text)
    assert r.returncode == 1
    assert f"{m}: invalid manifest resource 1 (file#/tmp/x): unknown property 'ownr' (did you mean `owner`?)" in r.stderr
    assert f"{m}: invalid manifest resource 2 (exec#/bin/true): unknown property 'refresh_only' (did you mean `refreshonly`?)" \
        in r.stderr


def test_unknown_type_and_ccm_key_get_did_you_mean(tmp_path):
    m, r = _apply(tmp_path, "ccm:\n  resources:\n    - pakage:\n        name: x\n        ensure: present\n")
    assert r.returncode == 1 and "unknown resource type 'pakage' (did you mean `package`?)" in r.stderr
    assert str(m) in r.stderr
    m, r = _apply(tmp_path, "ccm:\n  fail_on_eror: true\n  resources: []\n")
    assert r.returncode == 1 and "(did you mean `fail_on_error`?)" in r.stderr
    m, r = _apply(tmp_path, "datas: {}\nccm:\n  resources: []\n")
    assert r.returncode == 1 and "(did you mean `data`?)" in r.stderr


def test_unknown_function_gets_did_you_mean(tmp_path):
    text = "ccm:\n  resources:\n" + _file(tmp_path / "a").replace("content: x", "content: '{{ lookupp(\"a\") }}'")
    m, r = _apply(tmp_path, text)
    assert r.returncode == 1 and "unknown function lookupp (did you mean `lookup`?)" in r.stderr


def test_property_at_resource_level_gets_an_indentation_hint(tmp_path):
    text = "ccm:\n  resources:\n    - file:\n        name: /tmp/x\n      ensure: present\n"
    m, r = _apply(tmp_path, text)
    assert r.returncode == 1
    assert "hint: 'ensure' is a property of file: indent it under file" in r.stderr
    text = "ccm:\n  resources:\n    - package:\n        - zsh:\n          ensure: present\n"
    m, r = _apply(tmp_path, text)
    assert r.returncode == 1
    assert "hint: 'ensure' is a property of 'zsh': indent it under 'zsh'" in r.stderr


def test_subscribe_with_two_hashes_and_alias_with_a_hash_rejected_at_load_naming_their_fields(tmp_path):
    """One reference check for every type: a service's ``subscribe: [file#a#b]`` used to pass
    validation and fail each run naming ``require``; an alias no reference can name was kept."""
    text = ("ccm:\n  resources:\n" + _file(tmp_path / "a", alias="'a#b'")
            + "    - service:\n        name: foo\n        ensure: running\n        subscribe: ['file#a#b']\n")
    m = tmp_path / "m.yaml"
    m.write_text(text)
    r = ccm("validate", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"{m}: invalid manifest resource 1 (file#{tmp_path}/a): alias: 'a#b' must not contain '#': a reference "
        "(type#alias) could not name it",
        f"{m}: invalid manifest resource 2 (service#foo): subscribe: invalid subscribe format file#a#b: expected "
        "type#name (exactly one '#')",
        f"{m}: invalid: 2 problems"]
    _m, r = _apply(tmp_path, text, "--noop")
    assert r.returncode == 1 and "subscribe: invalid subscribe format file#a#b" in r.stderr, r.stderr


def test_every_type_checks_every_reference_field_the_same_way():
    import pytest

    from ccm.model.errors import ValidationError
    from ccm.model.resource import REFERENCE_FIELDS, Properties
    from ccm.registry import default_registry
    from ccm.resources import properties as P

    registry = default_registry()
    checked = []
    for type_name in registry.types_in_order():
        spec = registry.spec(type_name)
        for key in (f.key for f in spec.all_fields if f.key in REFERENCE_FIELDS):
            for bad in ("file#a#b", "nohash", "file#"):
                props = Properties(type_name, {"name": "x", "ensure": "present", key: [bad]}, spec.all_fields)
                with pytest.raises(ValidationError) as err:
                    P.validate(spec, props)
                assert err.value.field == key and bad in str(err.value), (type_name, key, str(err.value))
            checked.append(f"{type_name}.{key}")
        props = Properties(type_name, {"name": "x", "ensure": "present", "alias": "a#b"}, spec.all_fields)
        with pytest.raises(ValidationError) as err:
            P.validate(spec, props)
        assert err.value.field == "alias", (type_name, str(err.value))
    assert {"service.subscribe", "exec.subscribe", "file.require"} <= set(checked)
