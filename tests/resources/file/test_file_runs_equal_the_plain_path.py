"""The file type's steady twin (``ccm.resources.file.steady``: metadata made when read)
against the plain one (``CCM_FILE_STEADY=0``: every state's metadata made at once).

One manifest holds every case the file type tells apart: content the same, changed,
longer, shorter, empty and templated, small and large sources, mode, owner and group
changes, a missing file, directories (wanted, and in the way), a symlink in the way of
content and of attributes, a file to remove. It runs first, steady and in noop (with
diffs) both ways, and everything but ids, times and durations must be equal: every
event's wire dict, the summary, the log and the files left behind.
"""
from __future__ import annotations

import grp
import os
import pwd
import subprocess
import sys

from ccm.apply import load_manifest
from ccm.resources.file import steady
from tests import twins
from tests import kit
from tests.kit import output

ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OTHER = "65534" if os.getuid() == 0 else ME   # an owner and group to change to (root can chown)


def _file(path, **values):
    values = {"ensure": "present", "owner": ME, "group": MYGROUP, "mode": '"0644"', **values}
    return f"    - file:\n        - {path}:\n" + "".join(f"            {k}: {v}\n" for k, v in values.items())


def _workspace(root):
    d = root / "d"
    d.mkdir(parents=True)
    files = {"same": "same\n", "changed": "old\n", "longer": "desired\nand more\n", "shorter": "des", "empty": "",
             "mode": "mode\n", "owner": "owner\n", "group": "group\n", "templated": "by ops\n", "gone": "bye\n",
             "small-src": "copied\n", "src-copy": "stale\n", "attrs-only": "kept\n"}
    for name, text in files.items():
        (d / name).write_text(text)
    os.chmod(d / "mode", 0o600)
    (d / "large-src").write_bytes(b"x" * 70000 + b"\n")
    (d / "in-the-way").mkdir()
    (d / "link-target").write_text("not mine\n")
    os.symlink(d / "link-target", d / "link-content")
    os.symlink(d / "link-target", d / "link-attrs")
    resources = [
        _file(d / "same", content='"same\\n"'),
        _file(d / "changed", content='"new\\n"'),
        _file(d / "longer", content='"desired\\n"'),
        _file(d / "shorter", content='"desired\\n"'),
        _file(d / "empty", content='""'),
        _file(d / "missing", content='"created\\n"'),
        _file(d / "mode", content='"mode\\n"'),
        _file(d / "owner", content='"owner\\n"', owner=OTHER),
        _file(d / "group", content='"group\\n"', group=OTHER),
        _file(d / "templated", content='"by {{ Data.who }}\\n"'),
        _file(d / "src-copy", source=d / "small-src"),
        _file(d / "large-copy", source=d / "large-src"),
        _file(d / "attrs-only", mode='"0640"'),
        _file(d / "sub", ensure="directory", mode='"0750"'),
        _file(d / "in-the-way", content='"x\\n"'),
        _file(d / "link-content", content='"replaced\\n"'),
        _file(d / "link-attrs", mode='"0600"'),
        _file(d / "gone", ensure="absent"),
        _file(d / "last", content='"last\\n"'),
    ]
    manifest = root / "m.yaml"
    manifest.write_text("data:\n  who: ops\nccm:\n  resources:\n" + "".join(resources))
    return manifest


def _files(root):
    out = {}
    for dirpath, dirs, names in os.walk(root / "d"):
        for name in sorted(dirs + names):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            body = b"" if os.path.isdir(path) or os.path.islink(path) else open(path, "rb").read()
            out[os.path.relpath(path, root)] = (st.st_mode, st.st_uid, st.st_gid, body)
    return out


def _runs(root, capsys):
    manifest = _workspace(root)
    out = []
    for noop in (True, False, False, True):   # noop before anything changed, first, steady, noop when steady
        m = kit.manager(noop=noop)
        result = m.execute(load_manifest(str(manifest), m), diff=noop)
        text = twins.log_text(root, output(m) + capsys.readouterr().out)   # and the diffs
        out.append(([twins.wire(root, e) for e in result.events], twins.summary(result), text, _files(root)))
    return out


def test_the_steady_twin_equals_the_plain_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(steady, "ENABLED", False)
    plain = _runs(tmp_path / "plain", capsys)
    monkeypatch.setattr(steady, "ENABLED", True)
    fast = _runs(tmp_path / "fast", capsys)
    for (p_events, p_summary, p_text, p_files), (f_events, f_summary, f_text, f_files) in zip(plain, fast):
        assert f_events == p_events
        assert f_summary == p_summary
        assert f_text == p_text
        assert f_files == p_files
    counts = [(run[1]["changed_resources"], run[1]["failed_resources"]) for run in plain]
    # noop: the directory in the way fails; for real the symlink in the way of attributes too
    assert counts == [(15, 1), (14, 2), (0, 2), (1, 1)] and len(plain[1][0]) == 19
    noop_text, first_events = plain[0][2], plain[1][0]
    assert "would change content (+1 -1 lines)" in noop_text and "+++ ROOT/d/changed (desired)" in noop_text
    assert '"content": "by ops\\n"' in first_events[9]


def test_the_switch_turns_the_twin_off():
    code = "import ccm.resources.file.steady as s; print(s.ENABLED, s.state_class().__name__)"
    for value, want in (("0", "False FileObservation"), ("", "True SteadyObservation"), ("1", "True SteadyObservation")):
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                           env=dict(os.environ, CCM_FILE_STEADY=value))
        assert r.stdout.strip() == want, (value, r.stderr)
