"""Scaffold: validation, pure decisions, and real renders (Jet and Go) into real directories."""
from __future__ import annotations

import os
import stat

import pytest

from ccm.model.errors import ValidationError
from ccm.model.events import ResourceState
from ccm.resources.scaffold.choria import post_argv
from ccm.resources.scaffold.logic import ScaffoldLogic
from tests import kit
from tests.kit import build, output, run


def tree(root, files):
    for rel, text in files.items():
        path = os.path.join(str(root), rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
    return str(root)


def listing(root):
    out = []
    for dirpath, _dirs, files in os.walk(str(root)):
        for f in files:
            out.append(os.path.relpath(os.path.join(dirpath, f), str(root)))
    return sorted(out)


def read(path):
    with open(path) as fh:
        return fh.read()


@pytest.fixture
def dirs(tmp_path):
    return tmp_path / "src", tmp_path / "target"


# --- validation and pure logic ------------------------------------------------------------

@pytest.mark.parametrize("raw,message", [
    ({"name": "rel/target"}, "name must be an absolute path"),
    ({"name": "/opt/x/../y"}, "name must be a canonical path"),
    ({"source": ""}, "source cannot be empty"),
    ({"engine": "erb"}, 'engine must be one of "go" or "jet"'),
    ({"ensure": "latest"}, 'invalid ensure value: must be one of "present" or "absent"'),
    ({"post": [{"*.sh": ""}]}, 'post value for key "*.sh" cannot be empty'),
    ({"post": [{"": "chmod +x"}]}, "post keys cannot be empty"),
])
def test_validation(raw, message):
    base = {"name": "/opt/app", "ensure": "present", "source": "/srv/tpl"}
    base.update(raw)
    with pytest.raises(ValidationError) as exc:
        build(kit.manager(), "scaffold", base)
    assert message in str(exc.value)


def test_engine_defaults_to_jet_when_omitted():
    _spec, props = build(kit.manager(), "scaffold", {"name": "/opt/app", "ensure": "present", "source": "/x"})
    assert props.get("engine") == "jet"


def st(changed=(), stable=(), purged=(), exists=True):
    meta = {"name": "/t", "provider": "choria"}
    if exists:
        meta["target_exists"] = True
    for k, v in (("changed", changed), ("purged", purged), ("stable", stable)):
        if v:
            meta[k] = list(v)
    return ResourceState(type="scaffold", name="/t", ensure="present", extra={"metadata": meta})


@pytest.mark.parametrize("raw,state,actions,message", [
    ({}, st(stable=["/t/a"]), (), ""),
    ({}, st(changed=["/t/a", "/t/b"], stable=["/t/c"]), ("render",), "Would have changed 2 scaffold files"),
    ({}, st(stable=["/t/a"], purged=["/t/x"]), (), ""),
    ({"purge": True}, st(stable=["/t/a"], purged=["/t/x"]), ("render",), "Would have changed 1 scaffold files"),
    ({}, st(exists=False), (), ""),  # renders nothing and nothing to change: stable (upstream: never)
    ({"ensure": "absent"}, st(exists=False), (), ""),
    ({"ensure": "absent"}, st(stable=["/t/a"], changed=["/t/b"]), ("remove",), "Would have removed 2 scaffold files"),
])
def test_plan(raw, state, actions, message):
    props = build(kit.manager(), "scaffold", dict({"name": "/t", "ensure": "present", "source": "/s"}, **raw))[1]
    plan = ScaffoldLogic().plan(props, state)
    assert plan.actions == actions and plan.noop_message == message


def test_post_argv():
    assert post_argv("chmod +x {}", "/t/a.sh") == ["chmod", "+x", "/t/a.sh"]
    assert post_argv("gofmt -w", "/t/a.go") == ["gofmt", "-w", "/t/a.go"]
    assert post_argv("sh -c 'cat {} > {}.bak'", "/t/f") == ["sh", "-c", "cat /t/f > /t/f.bak"]


# --- real renders ---------------------------------------------------------------------

def scaffold(m, src, target, **kw):
    raw = {"name": str(target), "ensure": "present", "source": str(src)}
    raw.update(kw)
    return run(m, "scaffold", raw)


def test_jet_default_field_access_partials_write_and_convergence(dirs):
    src, target = dirs
    tree(src, {
        "app.conf": '[[ render("_partials/header.txt", .) ]]os=[[ facts.host.info.os ]] dot=[[ .facts.host.info.os ]] '
                    "port=[[ data.port ]] look=[[ lookup(\"data.port\") ]]\n"
                    '[[ range data.users ]]user=[[ . ]]\n[[ end ]][[ write("extra/gen.txt", "made by write") ]]',
        "_partials/header.txt": "# host [[ .facts.hostname ]]\n",
        "sub/dir/nested.txt": "nested [[ Data.port ]]",
    })
    m = kit.manager(data={"port": 8080, "users": ["alice", "bob"]})
    ev = scaffold(m, src, target)
    assert not ev.failed, ev.errors
    assert ev.changed
    assert read(target / "app.conf") == "# host web01\nos=linux dot=linux port=8080 look=8080\nuser=alice\nuser=bob\n"
    assert read(target / "extra/gen.txt") == "made by write"
    assert read(target / "sub/dir/nested.txt") == "nested 8080"
    assert listing(target) == ["app.conf", "extra/gen.txt", "sub/dir/nested.txt"]  # no _partials
    assert ev.status.metadata["engine"] == "jet"
    ev2 = scaffold(m, src, target)
    assert not ev2.failed and not ev2.changed and ev2.status.stable
    assert sorted(ev2.status.metadata["stable"]) == [str(target / p) for p in listing(target)]


def test_go_engine_field_access_range_with(dirs):
    src, target = dirs
    tree(src, {
        "svc.conf": "os={{ .facts.host.info.os }} port={{ .data.port }}\n"
                    "{{ range .data.users }}u={{ . }} {{ end }}\n"
                    "{{ with .data }}{{ .port }}{{ end }} {{ index .data \"port\" }} {{ .Data.port | printf \"%05d\" }}\n"
                    '{{ render "_partials/p.txt" .data }}',
        "_partials/p.txt": "partial port {{ .port }}",
    })
    m = kit.manager(data={"port": 8080, "users": ["alice", "bob"]})
    ev = scaffold(m, src, target, engine="go")
    assert not ev.failed, ev.errors
    assert read(target / "svc.conf") == "os=linux port=8080\nu=alice u=bob \n8080 8080 08080\npartial port 8080"


def test_custom_delimiters_both_engines(dirs, tmp_path):
    src, target = dirs
    tree(src, {"a.txt": "<< .data.x >> {{ not a template }} [[ neither ]]"})
    m = kit.manager(data={"x": "X"})
    assert not scaffold(m, src, target, engine="go", left_delimiter="<<", right_delimiter=">>").failed
    assert read(target / "a.txt") == "X {{ not a template }} [[ neither ]]"
    target2 = tmp_path / "t2"
    assert not scaffold(m, src, target2, engine="jet", left_delimiter="<<", right_delimiter=">>").failed
    assert read(target2 / "a.txt") == "X {{ not a template }} [[ neither ]]"


def test_data_property_replaces_hiera_data(dirs):
    src, target = dirs
    tree(src, {"a.txt": "[[ data.name ]]|[[ isset(data.hiera_only) ]]|[[ lookup(\"data.name\") ]]|[[ data.n + 1 ]]"})
    m = kit.manager(data={"name": "from-hiera", "hiera_only": 1, "n": 0})
    ev = scaffold(m, src, target, data={"name": "{{ Data.name }}-custom", "n": 41})
    assert not ev.failed, ev.errors
    assert read(target / "a.txt") == "from-hiera-custom|false|from-hiera-custom|42"


def test_skip_empty(dirs):
    src, target = dirs
    tree(src, {"empty.txt": "[[ if false ]]x[[ end ]]  \n", "full.txt": "x"})
    assert not scaffold(kit.manager(), src, target, skip_empty=True).failed
    assert listing(target) == ["full.txt"]


def test_purge_and_unrelated_files(dirs):
    src, target = dirs
    tree(src, {"a.txt": "a"})
    tree(target, {"old.txt": "stale", "keep/deep.txt": "x"})
    m = kit.manager()
    ev = scaffold(m, src, target)
    assert not ev.failed and listing(target) == ["a.txt", "keep/deep.txt", "old.txt"]
    ev = scaffold(m, src, target)
    assert ev.status.stable and not ev.changed  # extra files don't matter without purge
    assert sorted(ev.status.metadata["purged"]) == [str(target / "keep/deep.txt"), str(target / "old.txt")]
    ev = scaffold(m, src, target, purge=True)
    assert ev.changed and not ev.failed
    assert listing(target) == ["a.txt"]


def test_per_file_changed_detection_and_noop(dirs):
    src, target = dirs
    tree(src, {"a.txt": "a", "b.txt": "b", "c.txt": "c"})
    assert not scaffold(kit.manager(), src, target).failed
    (target / "b.txt").write_text("edited")
    m = kit.manager(noop=True)
    ev = scaffold(m, src, target)
    assert ev.noop and ev.changed and not ev.failed
    assert ev.status.metadata["changed"] == [str(target / "b.txt")]
    assert ev.status.noop_message == "Would have changed 1 scaffold files"
    assert read(target / "b.txt") == "edited"  # noop wrote nothing
    ev = scaffold(kit.manager(), src, target)
    assert ev.changed and read(target / "b.txt") == "b"


def test_post_commands_real_only_and_content_changing_post_converges(dirs, tmp_path):
    src, target = dirs
    log = tmp_path / "post.log"
    tree(src, {"run.sh": "echo foo\n", "conf.txt": "x\n"})
    post = [{"*.sh": "chmod +x {}"}, {"*.sh": "sed -i s/foo/bar/ {}"},
            {"*.sh": f"sh -c 'echo ran >> {log}'"}]
    m = kit.manager()
    ev = scaffold(m, src, target, post=post)
    assert not ev.failed, ev.errors
    assert read(target / "run.sh") == "echo bar\n"
    assert stat.S_IMODE(os.stat(target / "run.sh").st_mode) & 0o111
    assert stat.S_IMODE(os.stat(target / "conf.txt").st_mode) == 0o644
    runs = read(log).count("ran")
    assert runs == 1  # status dry-runs (before and verify) did not run post commands
    ev2 = scaffold(m, src, target, post=post)
    assert not ev2.failed and not ev2.changed and ev2.status.stable
    assert read(log).count("ran") == 1
    (target / "run.sh").write_text("tampered\n")
    ev3 = scaffold(m, src, target, post=post)
    assert ev3.changed and read(target / "run.sh") == "echo bar\n"


def test_post_failure_message(dirs):
    src, target = dirs
    tree(src, {"a.txt": "x"})
    ev = scaffold(kit.manager(), src, target, post=[{"*.txt": "sh -c 'echo broken; exit 3'"}])
    assert ev.failed
    assert "failed to post process" in ev.errors[0] and "exit status 3" in ev.errors[0]
    assert ev.errors[0].endswith("\nstdout:\n  broken")   # the output tail
    assert not target.exists()


def test_post_failure_output_is_scrubbed(dirs):
    """Issue 24: a failing command's carried output goes through the one scrubber."""
    src, target = dirs
    tree(src, {"a.txt": "x"})
    ev = scaffold(kit.manager(), src, target,
                  post=[{"*.txt": "sh -c 'echo fetch https://bot:Pw-Canary@git.example.com/x; exit 3'"}])
    assert ev.failed and "Pw-Canary" not in ev.errors[0]
    assert ev.errors[0].endswith("stdout:\n  fetch https://REDACTED@git.example.com/x")


def test_template_error_names_the_file(dirs):
    src, target = dirs
    tree(src, {"bad.txt": "[[ lookup(\"data.missing\") ]]"})
    ev = scaffold(kit.manager(), src, target)
    assert ev.failed and "bad.txt" in ev.errors[0]


def test_invalid_file_in_source(dirs):
    src, target = dirs
    tree(src, {"a.txt": "x"})
    os.mkfifo(str(src / "pipe"))
    ev = scaffold(kit.manager(), src, target)
    assert ev.failed and "invalid file in source: pipe" in ev.errors[0]


def test_relative_source_uses_working_dir(tmp_path):
    tree(tmp_path / "manifest" / "templates", {"x.txt": "rel"})
    m = kit.manager(working_dir=str(tmp_path / "manifest"))
    ev = scaffold(m, "templates", tmp_path / "out")
    assert not ev.failed, ev.errors
    assert read(tmp_path / "out/x.txt") == "rel"


def test_absent_removes_managed_files_and_empty_dirs_only(dirs):
    src, target = dirs
    tree(src, {"a.txt": "a", "d/e/f.txt": "f"})
    m = kit.manager()
    assert not scaffold(m, src, target).failed
    tree(target, {"d/mine.txt": "unrelated"})
    ev = scaffold(m, src, target, ensure="absent")
    assert not ev.failed and ev.changed, ev.errors
    assert listing(target) == ["d/mine.txt"]
    assert not (target / "d/e").exists()
    os.unlink(target / "d/mine.txt")
    assert not scaffold(m, src, target, ensure="absent").changed
    # target with nothing unrelated left is removed entirely
    assert not scaffold(m, src, target).failed
    ev = scaffold(m, src, target, ensure="absent")
    assert ev.changed and not target.exists()


def test_manifest_without_engine_renders_with_jet_and_noop_purge_logs(tmp_path):
    from ccm.apply import load_manifest

    tree(tmp_path / "tpl", {"a.txt": "x=[[ data.key ]]"})
    tree(tmp_path / "out", {"stale.txt": "old"})
    (tmp_path / "manifest.yaml").write_text(
        "data:\n  x: 1\nccm:\n  resources:\n    - scaffold:\n        - %s:\n            ensure: present\n"
        "            source: tpl\n            purge: true\n            data:\n              key: \"{{ Data.x + 1 }}\"\n"
        % (tmp_path / "out"))
    m = kit.manager(noop=True)
    result = m.execute(load_manifest(str(tmp_path / "manifest.yaml"), m))
    ev = result.events[0]
    assert not ev.failed, ev.errors
    assert ev.properties["engine"] == "jet"
    assert ev.status.noop_message == "Would have changed 2 scaffold files"
    assert "Would have removed file" in output(m) and "stale.txt" in output(m)
    assert listing(tmp_path / "out") == ["stale.txt"]
    m = kit.manager()
    result = m.execute(load_manifest(str(tmp_path / "manifest.yaml"), m))
    assert not result.failed
    assert listing(tmp_path / "out") == ["a.txt"] and read(tmp_path / "out/a.txt") == "x=2"


@pytest.mark.parametrize("template,message", [
    ('[[ write("../escape.txt", "x") ]]', "outside the target directory"),
    ('[[ write("/tmp/abs-escape.txt", "x") ]]', "outside the target directory"),
    ('[[ render("../secret.txt", .) ]]', "outside the source directory"),
])
def test_write_and_render_stay_inside(tmp_path, template, message):
    src, target = tmp_path / "src", tmp_path / "target"
    tree(src, {"a.txt": template})
    (tmp_path / "secret.txt").write_text("secret")
    ev = scaffold(kit.manager(), src, target)
    assert ev.failed and message in ev.errors[0]
    assert not (tmp_path / "escape.txt").exists() and not os.path.exists("/tmp/abs-escape.txt")
    assert not target.exists()
