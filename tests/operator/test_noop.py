"""Noop you can trust: precise messages, --diff, requirements an earlier resource would change."""
from __future__ import annotations

import os

from tests.kit import ccm
from tests.operator.helpers import ccm_env


def _file(path, content=None, mode="0644", **extra):
    text = f"    - file:\n        name: {path}\n        ensure: present\n"
    if content is not None:
        text += f"        content: {content!r}\n".replace("'", '"') if "\n" not in content else \
            "        content: |\n" + "".join(f"          {ln}\n" for ln in content.splitlines())
    text += f"        owner: root\n        group: root\n        mode: '{mode}'\n"
    return text + "".join(f"        {k}: {v}\n" for k, v in extra.items())


def _noop(tmp_path, body, *args):
    m = tmp_path / "m.yaml"
    m.write_text("ccm:\n  resources:\n" + body)
    return ccm("apply", "--noop", *args, str(m), cwd=tmp_path, env=ccm_env(tmp_path))


def _snapshot(root):
    out = {}
    for p in sorted(root.rglob("*")):
        if "locks" in p.parts or p.name == "m.yaml":
            continue
        st = p.lstat()
        out[str(p)] = (st.st_mode, st.st_uid, p.read_bytes() if p.is_file() else None)
    return out


def test_precise_messages_and_nothing_changes(tmp_path):
    changed = tmp_path / "changed.conf"
    changed.write_text("".join(f"line {i}\n" for i in range(20)))
    os.chmod(changed, 0o644)
    moded = tmp_path / "moded.conf"
    moded.write_text("same\n")
    os.chmod(moded, 0o600)
    gone = tmp_path / "gone.conf"
    gone.write_text("x")
    new_content = "".join(f"line {i}\n" for i in range(20) if i not in (3, 4, 5)) + "".join(
        f"new {i}\n" for i in range(12))
    body = (_file(tmp_path / "new.conf", "hello\n")
            + _file(changed, new_content)
            + _file(moded, "same\n")
            + f"    - file:\n        name: {gone}\n        ensure: absent\n")
    before = _snapshot(tmp_path)
    r = _noop(tmp_path, body, "--no-diff")
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    lines = {ln.split()[1]: ln for ln in out.splitlines() if ln.split()[1:2] and ln.split()[1].startswith("file#")}
    assert "would create" in lines[f"file#{tmp_path}/new.conf"]
    assert "would change content (+12 -3 lines)" in lines[f"file#{changed}"]
    assert "would change mode 0600 -> 0644" in lines[f"file#{moded}"]
    assert "would change content" not in lines[f"file#{moded}"]
    assert "would remove" in lines[f"file#{gone}"]
    assert "Would have created the file" not in out
    assert "@@" not in out   # --no-diff
    assert _snapshot(tmp_path) == before


def test_owner_change_is_named(tmp_path):
    f = tmp_path / "owned.conf"
    f.write_text("x")
    os.chmod(f, 0o644)
    if os.geteuid() == 0:
        os.chown(f, 65534, 65534)
    r = _noop(tmp_path, _file(f, "x"), "--no-diff")
    assert r.returncode == 0
    if os.geteuid() == 0:
        assert "would change owner nobody -> root" in r.stdout or "would change owner 65534 -> root" in r.stdout


def test_diff_shows_a_capped_unified_diff(tmp_path):
    f = tmp_path / "app.conf"
    f.write_text("port=80\nworkers=2\n")
    os.chmod(f, 0o644)
    r = _noop(tmp_path, _file(f, "port=8080\nworkers=2\n"), "--diff")
    assert r.returncode == 0, r.stderr
    assert f"--- {f}\n" in r.stdout and "-port=80\n" in r.stdout and "+port=8080\n" in r.stdout
    big = tmp_path / "big.conf"
    big.write_text("".join(f"old {i}\n" for i in range(500)))
    os.chmod(big, 0o644)
    r = _noop(tmp_path, _file(big, "".join(f"new {i}\n" for i in range(500))), "--diff")
    assert "diff cut at 200 of" in r.stdout
    assert r.stdout.count("\n+new ") < 200


def test_no_diff_for_binary_content(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"\x00\x01binary\xff")
    dst = tmp_path / "dst.bin"
    dst.write_bytes(b"\x00\x02other\xfe")
    os.chmod(dst, 0o644)
    r = _noop(tmp_path, _file(dst, source=str(src)), "--diff")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "would change content (binary)" in r.stdout and "@@" not in r.stdout


def test_diff_off_when_not_a_terminal_by_default(tmp_path):
    f = tmp_path / "app.conf"
    f.write_text("a\n")
    os.chmod(f, 0o644)
    r = _noop(tmp_path, _file(f, "b\n"))
    assert "would change content (+1 -1 lines)" in r.stdout and "@@" not in r.stdout


def test_requirement_changed_earlier_reports_what_it_would_do_after(tmp_path):
    src = tmp_path / "generated.txt"
    dst = tmp_path / "copy.txt"
    body = (_file(src, "generated\n")
            + _file(dst, source=str(src), require=f"[file#{src}]"))
    r = _noop(tmp_path, body, "--no-diff")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"would create after file#{src}" in r.stdout
    assert not src.exists() and not dst.exists()
    # without --noop the same manifest works for real
    m = tmp_path / "m.yaml"
    r = ccm("apply", str(m), cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert dst.read_text() == "generated\n"


def test_a_real_failure_in_noop_still_fails(tmp_path):
    r = _noop(tmp_path, _file(tmp_path / "x", source=str(tmp_path / "nowhere")), "--no-diff")
    assert r.returncode == 1 and "cannot read source" in r.stdout


def test_no_diff_for_sensitive_content(tmp_path):
    """A content field marked sensitive (redacted in events) never has its diff computed."""
    from ccm.model.resource import Properties, ResourceContext
    from ccm.registry import default_registry
    from ccm.resources import properties as P
    from ccm.resources.file.logic import FileLogic
    from ccm.resources.file.posix import PosixFileProvider
    from ccm.runner import SubprocessRunner
    from tests import kit

    target = tmp_path / "secret.conf"
    target.write_text("password=old\n")
    os.chmod(target, 0o644)
    spec = default_registry().spec("file")
    plain = P.build(spec, {"name": str(target), "ensure": "present", "content": "password=new\n",
                           "owner": "root", "group": "root", "mode": "0644"})
    fields = tuple(f.replace(redact=lambda v: "******") if f.key == "content" else f
                   for f in plain.fields)
    secret = Properties("file", dict(plain.values), fields)
    log = kit.manager(log_level=None).user_log
    ctx = ResourceContext(noop=True, working_dir=str(tmp_path), log=log, runner=SubprocessRunner())
    provider = PosixFileProvider(SubprocessRunner())
    shown = FileLogic().status(provider, plain, ctx).internal["content_change"]
    assert "-password=old\n" in shown["diff"]
    hidden = FileLogic().status(provider, secret, ctx).internal["content_change"]
    assert "diff" not in hidden and hidden["sensitive"] is True
