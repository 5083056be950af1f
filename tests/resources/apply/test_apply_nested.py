"""Nested manifests through the real engine (ccm.apply), real files and real commands."""
from __future__ import annotations

import os

import pytest

from ccm.apply import load_manifest
from ccm.model.errors import ValidationError
from tests import kit
from tests.kit import build, output


def write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w") as fh:
        fh.write(text)
    return str(path)


def file_res(path, content):
    return (f"    - file:\n        - {path}:\n            ensure: present\n            content: \"{content}\"\n"
            f"            owner: root\n            group: root\n            mode: \"0644\"\n")


def apply_res(name, **props):
    lines = [f"    - apply:\n        - {name}:"]
    if not props:
        lines[0] += " {}"
    for k, v in props.items():
        lines.append(f"            {k}: {v}")
    return "\n".join(lines) + "\n"


def exec_res(name, command, **props):
    text = f"    - exec:\n        - {name}:\n            command: {command}\n"
    for k, v in props.items():
        text += f"            {k}: {v}\n"
    return text


def manifest(*resources, data=None, fail_on_error=False):
    head = ""
    if data:
        head = "data:\n" + "".join(f"  {k}: {v}\n" for k, v in data.items())
    return head + f"ccm:\n  fail_on_error: {str(fail_on_error).lower()}\n  resources:\n" + "".join(resources)


def apply_top(m, path):
    mf = load_manifest(str(path), m)
    return m.execute(mf)


def ev(result, type_name, name=None):
    found = [e for e in result.events if e.type == type_name and (name is None or e.name == name)]
    assert found, f"no {type_name} event in {[(e.type, e.name) for e in result.events]}"
    return found[-1]


def test_child_relative_to_each_level_shared_session_and_counts(tmp_path):
    out = tmp_path / "out"
    write(tmp_path / "site/main.yaml", manifest(apply_res("sub/child.yaml"), file_res(out / "top.txt", "top")))
    write(tmp_path / "site/sub/child.yaml",
          manifest(file_res(out / "a.txt", "a"), apply_res("deeper/grandchild.yaml")))
    write(tmp_path / "site/sub/deeper/grandchild.yaml", manifest(file_res(out / "b.txt", "b")))
    os.makedirs(out)
    m = kit.manager()
    result = apply_top(m, tmp_path / "site/main.yaml")
    assert not result.failed, [e.errors for e in result.events]
    assert (out / "a.txt").read_text() == "a" and (out / "b.txt").read_text() == "b"
    top = ev(result, "apply", "sub/child.yaml")
    assert top.changed
    assert top.status.extra == {"resource_count": 2, "changed_count": 2, "failed_count": 0}
    assert top.status.noop is False
    # the child's events live in the parent's session
    refs = [(e.type, e.name) for e in m.session.transaction_events()]
    assert ("file", str(out / "a.txt")) in refs and ("file", str(out / "b.txt")) in refs
    assert ("apply", "deeper/grandchild.yaml") in refs
    text = output(m)
    assert "manifest=sub/child.yaml" in text and "Child manifest had changes" in text
    # the manager's own settings untouched by the nested runs
    assert m.noop is False and m.working_dir == str(tmp_path / "site")
    # second run: nothing changes, apply not changed
    m2 = kit.manager()
    again = apply_top(m2, tmp_path / "site/main.yaml")
    assert not again.failed and not ev(again, "apply", "sub/child.yaml").changed


def test_subscribe_to_apply_fires_only_on_change(tmp_path):
    out = tmp_path / "out"
    os.makedirs(out)
    marker = out / "refreshed"
    write(tmp_path / "child.yaml", manifest(file_res(out / "a.txt", "a")))
    write(tmp_path / "main.yaml", manifest(
        apply_res("child.yaml"),
        exec_res("refresh", f"/bin/sh -c 'echo x >> {marker}'", refreshonly="true",
                 subscribe="[apply#child.yaml]")))
    r1 = apply_top(kit.manager(), tmp_path / "main.yaml")
    assert not r1.failed, [e.errors for e in r1.events]
    assert marker.read_text() == "x\n"
    r2 = apply_top(kit.manager(), tmp_path / "main.yaml")
    assert not r2.failed
    assert marker.read_text() == "x\n"  # child stable -> no refresh


def test_noop_strengthened_never_weakened(tmp_path):
    out = tmp_path / "out"
    os.makedirs(out)
    write(tmp_path / "child.yaml", manifest(file_res(out / "a.txt", "a")))
    write(tmp_path / "main.yaml", manifest(apply_res("child.yaml", noop="true"), file_res(out / "after.txt", "x")))
    m = kit.manager()
    r = apply_top(m, tmp_path / "main.yaml")
    assert not r.failed, [e.errors for e in r.events]
    assert not (out / "a.txt").exists()
    assert ev(r, "apply").status.extra["changed_count"] == 1  # would have changed
    assert (out / "after.txt").exists()  # the parent was not switched to noop
    assert m.noop is False
    write(tmp_path / "main2.yaml", manifest(apply_res("child.yaml", noop="false")))
    m = kit.manager(noop=True)
    r = apply_top(m, tmp_path / "main2.yaml")
    assert not r.failed
    assert not (out / "a.txt").exists()
    child_file = [e for e in m.session.transaction_events() if e.type == "file"][-1]
    assert child_file.noop and child_file.changed
    assert ev(r, "apply").status.noop is False


def test_allow_apply_false_fails_before_any_child_resource(tmp_path):
    out = tmp_path / "out"
    os.makedirs(out)
    write(tmp_path / "grand.yaml", manifest(file_res(out / "g.txt", "g")))
    write(tmp_path / "child.yaml", manifest(file_res(out / "first.txt", "1"), apply_res("grand.yaml")))
    write(tmp_path / "main.yaml", manifest(apply_res("child.yaml", allow_apply="false"), file_res(out / "next.txt", "n")))
    r = apply_top(kit.manager(), tmp_path / "main.yaml")
    a = ev(r, "apply")
    assert a.failed and "apply resources are denied" in a.errors[0]
    assert not (out / "first.txt").exists() and not (out / "g.txt").exists()
    assert (out / "next.txt").exists()  # a failed child does not abort the parent run


def test_data_inherited_merged_replaced_and_cli_data_wins(tmp_path):
    out = tmp_path / "out"
    os.makedirs(out)
    write(tmp_path / "child.yaml", manifest(
        file_res(out / "c.txt", "{{ Data.color }}/{{ Data.own }}/{{ Data.cli }}"), data={"color": "child", "own": "mine"}))
    write(tmp_path / "main.yaml", manifest(apply_res("child.yaml"), data={"color": "parent", "cli": "p"}))
    m = kit.manager()
    m.external_data = {"cli": "from-cli"}
    r = apply_top(m, tmp_path / "main.yaml")
    assert not r.failed, [e.errors for e in r.events]
    assert (out / "c.txt").read_text() == "parent/mine/from-cli"
    # data property: replaces the parent's data as the overriding data
    write(tmp_path / "main2.yaml", manifest(apply_res("child.yaml", data="{color: given}"),
                                            data={"color": "parent", "cli": "p"}))
    m = kit.manager()
    m.external_data = {"cli": "from-cli"}
    r = apply_top(m, tmp_path / "main2.yaml")
    assert not r.failed, [e.errors for e in r.events]
    assert (out / "c.txt").read_text() == "given/mine/from-cli"
    assert m.data()["color"] == "parent"  # parent data restored


def test_self_applying_manifest_stops_at_depth_10_with_chain(tmp_path):
    path = write(tmp_path / "loop.yaml", manifest(apply_res("loop.yaml")))
    m = kit.manager()
    r = apply_top(m, path)
    top = ev(r, "apply")
    assert top.failed
    msg = top.errors[0]
    assert msg.startswith("maximum apply depth of 10 exceeded: ")
    assert msg.count(str(tmp_path / "loop.yaml")) == 11  # the top-level manifest, then 10 nested levels
    applies = [e for e in m.session.transaction_events() if e.type == "apply"]
    assert len(applies) == 10  # depth 0..9 each recorded one failed apply event, then it stopped
    assert m.user_log.attrs == [], "nothing of a nested run stays on the manager"


def test_failures_propagate_and_child_fail_on_error(tmp_path):
    out = tmp_path / "out"
    os.makedirs(out)
    write(tmp_path / "child.yaml", manifest(exec_res("fails", "/bin/false"), file_res(out / "after.txt", "x"),
                                            fail_on_error=True))
    write(tmp_path / "main.yaml", manifest(apply_res("child.yaml"), file_res(out / "parent.txt", "p")))
    m = kit.manager()
    r = apply_top(m, tmp_path / "main.yaml")
    a = ev(r, "apply")
    assert a.failed and a.errors == ["child manifest had 1 failed resources"]
    assert a.status is None  # the shared flow drops the state of a failed resource
    assert "Child manifest had failures" in output(m) and "failed=1" in output(m)
    assert not (out / "after.txt").exists()  # the child's fail_on_error stopped the child
    assert (out / "parent.txt").exists()     # ... but not the parent


def test_missing_child_manifest_fails_resource(tmp_path):
    write(tmp_path / "main.yaml", manifest(apply_res("nope.yaml")))
    r = apply_top(kit.manager(), tmp_path / "main.yaml")
    a = ev(r, "apply")
    assert a.failed and "nope.yaml" in a.errors[0]


@pytest.mark.parametrize("raw,message", [
    ({"name": "https://example.com/m.yaml"}, "name must be a file path, not a URL"),
    ({"name": "foo:bar"}, "name must be a file path, not a URL"),
    ({"name": "m.yaml", "ensure": "absent"}, 'invalid ensure value: must be "present"'),
])
def test_validation(raw, message):
    with pytest.raises(ValidationError) as exc:
        build(kit.manager(), "apply", raw)
    assert message in str(exc.value)


def test_defaults():
    _spec, props = build(kit.manager(), "apply", {"name": "m.yaml"})
    assert props.ensure == "present" and props.get("allow_apply") is True


def test_monitor_only_runs_child_health_checks_and_changes_nothing(tmp_path):
    target = tmp_path / "child-file"
    write(tmp_path / "child.yaml", manifest(
        file_res(target, "x")
        + "            health_checks:\n              - command: /bin/sh -c 'exit 2'\n                name: child-check\n"))
    top = write(tmp_path / "top.yaml", manifest(apply_res("child.yaml")))
    m = kit.manager()
    mf = load_manifest(top, m)
    result = m.execute(mf, health_check_only=True)
    assert not target.exists(), "health-check-only never changes anything"
    child_events = [e for e in m.session.transaction_events() if e.type == "file"]
    assert len(child_events) == 1 and child_events[0].health_check_only
    assert child_events[0].health_checks[0].status == 2
    assert not hasattr(m, "health_check_only"), "the mode is the run's, never the manager's"
    assert result.failed
