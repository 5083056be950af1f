"""``ccm validate``: every load-time problem listed, nothing run, nothing changed."""
from __future__ import annotations

import json

from tests.kit import ccm
from tests.operator.helpers import ccm_env


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _file(path, **extra):
    text = (f"    - file:\n        name: {path}\n        ensure: present\n        content: x\n"
            "        owner: root\n        group: root\n        mode: '0644'\n")
    return text + "".join(f"        {k}: {v}\n" for k, v in extra.items())


def test_valid_manifest_exits_0_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    m = _write(tmp_path / "m.yaml", "ccm:\n  resources:\n" + _file(tmp_path / "a")
               + f"    - exec:\n        name: /bin/touch {marker}\n")
    r = ccm("validate", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{m}: valid (2 resources)"
    assert not (tmp_path / "a").exists() and not marker.exists()


def test_every_problem_listed_with_json(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    m = _write(tmp_path / "m.yaml", "data:\n  port: 1\nccm:\n  resources:\n"
               + _file(a, ownr="root")
               + f"    - exec:\n        name: /bin/true\n        require: [file#{b}]\n"
               + _file(b)
               + _file(b)
               + "    - exec:\n        name: /bin/true\n        control:\n          if: 'isFoo(Data.port)'\n"
               + _file(tmp_path / "c").replace("content: x", "content: '{{ 1 + }}'"))
    r = ccm("validate", "--json", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["valid"] is False
    text = "\n".join(doc["problems"])
    assert all(p.startswith(str(m)) for p in doc["problems"])
    assert "unknown property 'ownr' (did you mean `owner`?)" in text
    assert f"duplicate resource file#{b}" in text
    assert "unknown function isFoo" in text
    assert "expr compile error" in text
    assert f"require: 'file#{b}' names a resource not declared earlier" in text
    assert len(doc["problems"]) == 5
    assert not a.exists() and not b.exists()


def test_text_output_lists_problems_and_a_count(tmp_path):
    m = _write(tmp_path / "m.yaml", "ccm:\n  resources:\n    - pakage:\n        name: x\n        ensure: present\n")
    r = ccm("validate", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1
    assert "unknown resource type 'pakage' (did you mean `package`?)" in r.stderr
    assert r.stderr.strip().endswith("invalid: 1 problem")


def test_yaml_and_missing_file_problems(tmp_path):
    m = _write(tmp_path / "m.yaml", "ccm:\n  resources: [\n")
    r = ccm("validate", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and str(m) in r.stderr and "YAML" in r.stderr
    r = ccm("validate", str(tmp_path / "missing.yaml"), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and "missing.yaml" in r.stderr


def test_nested_apply_children_are_checked(tmp_path):
    child = _write(tmp_path / "sub" / "child.yaml", "ccm:\n  resources:\n"
                   "    - exec:\n        name: /bin/true\n        require: [exec#/bin/parent]\n"
                   "    - exec:\n        name: /bin/false\n        refresh_only: true\n")
    m = _write(tmp_path / "m.yaml", "ccm:\n  resources:\n    - exec:\n        name: /bin/parent\n"
               "    - apply:\n        name: sub/child.yaml\n")
    r = ccm("validate", "--json", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1
    problems = json.loads(r.stdout)["problems"]
    # the child may require what its parent declared before the apply
    assert len(problems) == 1, problems
    assert problems[0].startswith(str(child)) and "unknown property 'refresh_only'" in problems[0]


def test_validate_is_listed_in_help_and_readme(tmp_path):
    import os

    r = ccm("--help", cwd=tmp_path, env=ccm_env(tmp_path))
    assert "validate" in r.stdout
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    quick = readme[:readme.index("## Using it")]
    assert "ccm validate" in quick


def test_deferred_fields_that_every_run_would_fail_on_are_problems(tmp_path):
    """exec ``command``/``environment`` and file ``content`` are rendered only when the
    resource runs: validate renders them once (nothing runs) and lists what would fail."""
    marker = tmp_path / "ran"
    m = _write(tmp_path / "m.yaml", "data:\n  port: 1\nccm:\n  resources:\n"
               + f"    - exec:\n        name: touch-it\n        command: '/bin/touch {marker} {{{{ Data.missing }}}}'\n"
               + "        environment: ['X={{ Foo.bar }}']\n"
               + _file(tmp_path / "a").replace("content: x", "content: '{{ Data.prot }}'"))
    r = ccm("validate", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1, r.stdout
    lines = r.stderr.splitlines()
    assert any("resource 1 (exec#touch-it): apply would fail: resolving field command:" in x
               and "Data has no key 'missing'" in x for x in lines), r.stderr
    assert any("resource 1 (exec#touch-it): apply would fail: resolving field environment[0]: unknown name Foo" in x
               for x in lines), r.stderr
    assert any(f"resource 2 (file#{tmp_path}/a): apply would fail: resolving field content:" in x
               and "Data has no key 'prot' (did you mean `port`?)" in x for x in lines), r.stderr
    assert not marker.exists() and not (tmp_path / "a").exists()


def test_deferred_fields_that_need_the_run_or_are_skipped_by_control_stay_valid(tmp_path):
    """A value only a run can know (a file read, NATS) is not judged, nor is a resource
    that ``control`` skips on this host; ``??`` defaults and present keys render."""
    m = _write(tmp_path / "m.yaml", "data:\n  port: 1\nccm:\n  resources:\n"
               + "    - exec:\n        name: a\n        command: \"/bin/echo {{ file('later.txt') }}\"\n"
               + "    - exec:\n        name: b\n        command: '/bin/echo {{ Data.nope ?? 2 }} {{ Data.port }}'\n"
               + "    - exec:\n        name: c\n        command: '/bin/echo {{ Data.nope }}'\n"
               + "        control:\n          if: 'Data.port == 2'\n")
    r = ccm("validate", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{m}: valid (3 resources)"


def test_missing_file_source_is_a_problem_unless_an_earlier_resource_makes_it(tmp_path):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "there.conf").write_text("x\n")
    body = "ccm:\n  resources:\n"
    for name, source in (("a", "files/there.conf"), ("b", "files/gone.conf"), ("c", str(tmp_path / "made.conf"))):
        body += _file(tmp_path / name).replace("content: x", f"source: {source}")
    body = body.replace(_file(tmp_path / "c").replace("content: x", f"source: {tmp_path}/made.conf"),
                        _file(tmp_path / "made.conf")
                        + _file(tmp_path / "c").replace("content: x", f"source: {tmp_path}/made.conf"))
    m = _write(tmp_path / "m.yaml", body)
    r = ccm("validate", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1, r.stdout
    assert r.stderr.splitlines()[0] == (f"{m}: resource 2 (file#{tmp_path}/b): source: 'files/gone.conf' does not "
                                        f"exist ({tmp_path}/files/gone.conf): apply would fail")
    assert r.stderr.splitlines()[1:] == [f"{m}: invalid: 1 problem"]
    # after an exec without ``creates`` (it may make the file), a warning only
    m.write_text(m.read_text().replace("ccm:\n  resources:\n",
                                       "ccm:\n  resources:\n    - exec:\n        name: /bin/true\n", 1))
    r = ccm("validate", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "warning: resource 3 (file#" in r.stderr and "fine only if exec#/bin/true creates it" in r.stderr
