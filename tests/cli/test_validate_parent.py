"""``ccm validate`` of a child manifest that refers to its parent's resources."""
from __future__ import annotations

import json
import os

import pytest
from tests.kit import bare_env, ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PARENT = """\
ccm:
  resources:
    - exec:
        name: /bin/parent
        alias: first
    - apply:
        name: sub/child.yaml
    - exec:
        name: /bin/after
"""


def child(tmp_path, *requires):
    (tmp_path / "sub").mkdir(exist_ok=True)
    text = "ccm:\n  resources:\n"
    for i, ref in enumerate(requires):
        text += f"    - exec:\n        name: /bin/c{i}\n        require: [{ref}]\n"
    text += "    - exec:\n        name: /bin/later\n"
    (tmp_path / "sub" / "child.yaml").write_text(text)
    (tmp_path / "parent.yaml").write_text(PARENT)


def warning(tmp_path, index, ref):
    return (f"{tmp_path}/sub/child.yaml: warning: resource {index} (exec#/bin/c{index - 1}): require: {ref!r} is not "
            "declared in this manifest: fine for a child manifest whose parent declares it before applying it "
            "(check with --parent PARENT); ccm apply of this file alone refuses it")


def test_without_parent_references_outside_the_file_are_warnings_and_exit_0(tmp_path):
    child(tmp_path, "exec#/bin/parent", "exec#first")
    r = ccm("validate", "sub/child.yaml", cwd=tmp_path, env=bare_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "sub/child.yaml: valid (3 resources, 2 warnings)\n"
    assert r.stderr.splitlines() == [warning(tmp_path, 1, "exec#/bin/parent"), warning(tmp_path, 2, "exec#first")]
    doc = json.loads(ccm("validate", "--json", "sub/child.yaml", cwd=tmp_path, env=bare_env(tmp_path)).stdout)
    assert doc["valid"] is True and doc["problems"] == [] and len(doc["warnings"]) == 2


def test_with_parent_its_names_are_known_and_anything_else_is_a_problem(tmp_path):
    child(tmp_path, "exec#/bin/parent", "exec#first")
    r = ccm("validate", "sub/child.yaml", "--parent", "parent.yaml", cwd=tmp_path, env=bare_env(tmp_path))
    assert (r.returncode, r.stdout, r.stderr) == (0, "sub/child.yaml: valid (3 resources)\n", "")
    child(tmp_path, "exec#/bin/after")   # declared by the parent after the apply: not there yet
    r = ccm("validate", "sub/child.yaml", "--parent", "parent.yaml", cwd=tmp_path, env=bare_env(tmp_path))
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"{tmp_path}/sub/child.yaml: invalid manifest resource 1 (exec#/bin/c0): require: 'exec#/bin/after' "
        "names a resource not declared earlier in this manifest",
        "sub/child.yaml: invalid: 1 problem"]


def test_a_reference_declared_later_in_the_same_file_stays_a_problem(tmp_path):
    child(tmp_path, "exec#/bin/later")
    r = ccm("validate", "sub/child.yaml", cwd=tmp_path, env=bare_env(tmp_path))
    assert r.returncode == 1
    assert "require: 'exec#/bin/later' names a resource not declared earlier in this manifest (it is declared " \
           "later, as resource 2: move it before this one)" in r.stderr


def test_the_parent_itself_checks_its_children_strictly(tmp_path):
    child(tmp_path, "exec#/bin/after")
    r = ccm("validate", "parent.yaml", cwd=tmp_path, env=bare_env(tmp_path))
    assert r.returncode == 1 and "'exec#/bin/after' names a resource not declared earlier" in r.stderr
    child(tmp_path, "exec#first")
    assert ccm("validate", "parent.yaml", cwd=tmp_path, env=bare_env(tmp_path)).returncode == 0


@pytest.mark.parametrize("args,message", [
    (["--parent", "nope.yaml"], "ccm: error: --parent nope.yaml: cannot read manifest"),
])
def test_a_parent_that_does_not_load_is_an_error(tmp_path, args, message):
    child(tmp_path, "exec#/bin/parent")
    r = ccm("validate", "sub/child.yaml", *args, cwd=tmp_path, env=bare_env(tmp_path))
    assert r.returncode == 1 and r.stderr.startswith(message), r.stderr
