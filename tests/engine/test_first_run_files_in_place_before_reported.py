"""Batched durable writes (ccm.apply.batch, ccm.fsafe.DurableBatch) on real files.

A first run stages consecutive file writes and makes them durable together; these tests
check the outcomes stay those of the unbatched flow and that every boundary of issue 16
holds: anything that can read an earlier resource's outcome (an exec, a require or
subscribe, a health check, a template reading the file) sees the file in place.
"""
from __future__ import annotations

import grp
import os
import pwd
import re
import signal
import stat
import subprocess
import sys
import time

import pytest

from ccm import fsafe
from ccm.apply import load_manifest
from ccm.apply.batch import RunBatch
from ccm.model.events import TransactionEvent
from ccm.resources.file.posix import PosixFileProvider
from tests import twins   # an event's wire form without ids and times
from tests import kit
from tests.kit import output

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name
TEMP = re.compile(r"\.ccm-[0-9a-f]{12}\.tmp$")


def file_res(path, content, extra=""):
    return (f"    - file:\n        - {path}:\n            ensure: present\n"
            f"            content: \"{content}\"\n            owner: {ME}\n            group: {MYGROUP}\n"
            f"            mode: \"0644\"\n{extra}")


def exec_res(name, command, extra=""):
    return f"    - exec:\n        - {name}:\n            command: {command}\n{extra}"


def run_manifest(tmp_path, *resources, fail_on_error=False, name="m.yaml"):
    path = tmp_path / name
    path.write_text(f"ccm:\n  fail_on_error: {str(fail_on_error).lower()}\n  resources:\n" + "".join(resources))
    m = kit.manager()
    result = m.execute(load_manifest(str(path), m))
    return m, result


def temps(directory):
    return sorted(n for n in os.listdir(str(directory)) if TEMP.search(n))


BAD_OWNER = "            owner: ccm-no-such-user\n"


def _tree(root):
    """Every entry below ``root``: kind, bytes, mode, owner and group (temp files included)."""
    out = {}
    for directory, dirs, files in os.walk(str(root)):
        for name in dirs + files:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            data = open(path, "rb").read() if os.path.isfile(path) else None
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"
            out[os.path.relpath(path, str(root))] = (kind, data, st.st_mode & 0o7777, st.st_uid, st.st_gid)
    return out


@pytest.mark.parametrize("fail_on_error", [False, True])
def test_batched_runs_equal_the_direct_sink(tmp_path, monkeypatch, fail_on_error):
    """The differential test of the write sink seam: a first run through the batching sink
    (``RunBatch``, batches of 8: several commits; 64: one syncfs pass) against the same run
    through the direct sink (``CCM_WRITE_BATCH=0``: ``fsafe.DirectWrites``, every write in
    place as it ends), then a steady run of each: the same events (wire dicts), summary,
    log lines and files, and no temp file left."""
    runs, syncs = {}, []
    real_sync = fsafe.DurableBatch.sync
    monkeypatch.setattr(fsafe.DurableBatch, "sync", lambda batch: syncs.append(len(batch)) or real_sync(batch))
    commits = {}
    for setting in ("0", "8", "64"):
        monkeypatch.setenv("CCM_WRITE_BATCH", setting)
        del syncs[:]
        work = tmp_path / f"w{setting}"
        (work / "d").mkdir(parents=True)
        for i in range(0, 40, 2):   # half replace old content, half are new files
            (work / "d" / f"f{i}").write_text(f"old {i}\n")
        resources = [file_res(work / "d" / f"f{i}", f"new {i}") for i in range(40)]
        resources.append(exec_res("/bin/true", "/bin/true"))
        resources += [file_res(work / "d" / f"g{i}", f"g {i}") for i in range(20)]
        resources[50] = resources[50].replace(f"            owner: {ME}\n", BAD_OWNER)   # fails: no such user
        resources += [
            f"    - file:\n        - {work / 'd' / 'copy'}:\n            ensure: present\n"
            f"            source: {work / 'd' / 'f1'}\n            owner: {ME}\n            group: {MYGROUP}\n"
            f"            mode: \"0600\"\n",   # a source copy of a file written in this run
            f"    - file:\n        - {work / 'd' / 'sub'}:\n            ensure: directory\n"
            f"            owner: {ME}\n            group: {MYGROUP}\n            mode: \"0750\"\n",
            file_res(work / "d" / "sub" / "x", "x"), file_res(work / "d" / "sub" / "y", "{{ 2 + 3 }}"),
            file_res(work / "d" / "req", "req", f'            require: ["file#{work / "d" / "sub" / "x"}"]\n'),
            file_res(work / "d" / "last", "last")]
        path = work / "m.yaml"
        path.write_text(f"ccm:\n  fail_on_error: {str(fail_on_error).lower()}\n  resources:\n" + "".join(resources))
        outcomes = []
        for _ in range(2):   # first, then steady
            m = kit.manager()
            result = m.execute(load_manifest(str(path), m))
            outcomes.append(([twins.wire(work, e) for e in result.events], twins.summary(result),
                             twins.log_text(work, output(m)), result.terminated, _tree(work / "d")))
        runs[setting] = outcomes
        commits[setting] = list(syncs)
    for phase in (0, 1):
        plain, small, large = (runs[s][phase] for s in ("0", "8", "64"))
        assert small[0] == plain[0] and large[0] == plain[0], "events differ"
        assert small[1] == plain[1] and large[1] == plain[1], "summaries differ"
        assert small[2] == plain[2] and large[2] == plain[2], "log lines differ"
        assert small[3] == plain[3] == large[3] == fail_on_error
        assert small[4] == plain[4] and large[4] == plain[4], "files differ"
        assert not any(TEMP.search(name) for name in plain[4])
    assert commits["0"] == [], "the direct sink holds nothing"
    assert len(commits["8"]) >= 5 and max(commits["8"]) == 8 and max(commits["64"]) > 8, commits
    first = runs["8"][0]
    assert len(first[0]) == (51 if fail_on_error else 67)
    assert first[1]["failed_resources"] == 1 and first[4]["f3"][1] == b"new 3"
    assert ("g10" in first[4]) is not fail_on_error
    if not fail_on_error:
        assert first[4]["copy"][1] == b"new 1" and first[4]["sub/y"][1] == b"5"
        assert runs["8"][1][1]["changed_resources"] == 1, "steady: only the exec"


def test_an_exec_sees_the_files_written_before_it(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("old")
    _, result = run_manifest(tmp_path, file_res(a, "NEW a"), file_res(b, "NEW b"),
                             exec_res("check", f"/bin/sh -c 'grep -q NEW {a} && grep -q NEW {b}'"))
    assert [e.failed for e in result.events] == [False, False, False], [e.errors for e in result.events]


def test_require_and_subscribe_read_the_recorded_outcome(tmp_path):
    a, b, marker = tmp_path / "a", tmp_path / "b", tmp_path / "refreshed"
    _, result = run_manifest(
        tmp_path, file_res(a, "A"), file_res(b, "B", '            require: ["file#%s"]\n' % a),
        exec_res("refresh", f"/bin/sh -c 'cat {b} > {marker}'",
                 f'            refreshonly: true\n            subscribe: ["file#{b}"]\n'))
    assert [(e.changed, e.failed) for e in result.events] == [(True, False), (True, False), (True, False)]
    assert result.events[2].refreshed and marker.read_text() == "B"


def test_a_health_check_reads_the_file_in_place(tmp_path):
    a = tmp_path / "a"
    a.write_text("old")
    check = f"            health_checks:\n              - command: /bin/grep -q NEW {a}\n"
    _, result = run_manifest(tmp_path, file_res(tmp_path / "before", "x"), file_res(a, "NEW", check))
    assert not any(e.failed for e in result.events), [e.errors for e in result.events]


def test_a_template_reading_an_earlier_file_sees_its_new_content(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("old")
    _, result = run_manifest(tmp_path, file_res(a, "NEW a"), file_res(b, "{{ readFile('%s') }}" % a))
    assert not any(e.failed for e in result.events)
    assert b.read_text() == "NEW a"


def test_a_source_copy_of_a_staged_file_copies_the_new_content(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("old")
    copy = (f"    - file:\n        - {b}:\n            ensure: present\n            source: {a}\n"
            f"            owner: {ME}\n            group: {MYGROUP}\n            mode: \"0644\"\n")
    _, result = run_manifest(tmp_path, file_res(a, "NEW a"), copy)
    assert not any(e.failed for e in result.events)
    assert b.read_text() == "NEW a"


def test_a_directory_resource_after_a_staged_file_below_it(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    directory = (f"    - file:\n        - {d}:\n            ensure: directory\n"
                 f"            owner: {ME}\n            group: {MYGROUP}\n            mode: \"0700\"\n")
    _, result = run_manifest(tmp_path, file_res(d / "x", "x"), directory)
    assert not any(e.failed for e in result.events)
    assert (d / "x").read_text() == "x" and temps(d) == []


def _staged_batch(tmp_path, n, limit=64):
    """A RunBatch holding n staged writes (events as the flow leaves them) over old files."""
    provider = PosixFileProvider()
    batch = RunBatch([], str(tmp_path), limit)
    provider.use_write_sink(batch)
    batch._staging = True   # as admit() leaves it for an admitted resource
    for i in range(n):
        path = str(tmp_path / f"f{i}")
        with open(path, "w") as fh:
            fh.write(f"old {i}")
        provider.store(path, content=f"new {i}".encode(), source=None, owner=ME, group=MYGROUP, mode=0o640)
        event = TransactionEvent(type="file", name=path)
        event.changed = True
        props = type("P", (), {"name": path, "type_name": "file", "alias": ""})()
        assert batch.hold(event, props, False)
    return provider, batch


def test_staged_status_is_what_the_rename_publishes(tmp_path):
    provider, batch = _staged_batch(tmp_path, 1)
    path = str(tmp_path / "f0")
    staged = provider.status(path)
    assert open(path).read() == "old 0", "the target is untouched until the flush"
    batch.commit(False)
    provider.use_write_sink(fsafe.DIRECT)
    assert provider.status(path).extra == staged.extra
    assert open(path).read() == "new 0" and temps(tmp_path) == []


def test_a_failed_rename_fails_its_resource_and_fail_on_error_drops_the_rest(tmp_path):
    for fail_on_error in (False, True):
        work = tmp_path / str(fail_on_error)
        work.mkdir()
        _, batch = _staged_batch(work, 20)
        os.unlink(str(work / "f5"))
        os.mkdir(str(work / "f5"))   # renaming a file over a directory fails
        (work / "f5" / "keep").write_text("")
        settled = batch.commit(fail_on_error)
        failed = [h.props.name for h in settled if h.event.failed]
        assert failed == [str(work / "f5")]
        assert "cannot write" in settled[5].event.errors[0] and not settled[5].event.changed
        assert len(settled) == (6 if fail_on_error else 20)
        for i in range(20):
            if i != 5:
                want = "new" if i < 5 or not fail_on_error else "old"
                assert open(str(work / f"f{i}")).read() == f"{want} {i}"
        assert temps(work) == []


def test_discard_removes_the_temp_files_and_keeps_the_old_content(tmp_path):
    _, batch = _staged_batch(tmp_path, 3)
    assert len(temps(tmp_path)) == 3
    batch.discard()
    assert temps(tmp_path) == []
    assert [open(str(tmp_path / f"f{i}")).read() for i in range(3)] == ["old 0", "old 1", "old 2"]


def test_a_full_batch_ends_at_its_limit(tmp_path):
    provider = PosixFileProvider()
    batch = RunBatch([], str(tmp_path), 4)
    provider.use_write_sink(batch)
    batch._staging = True   # as admit() leaves it for an admitted resource
    held = []
    for i in range(4):
        path = str(tmp_path / f"f{i}")
        provider.store(path, content=b"x", source=None, owner=ME, group=MYGROUP, mode=0o644)
        props = type("P", (), {"name": path, "type_name": "file", "alias": ""})()
        held.append(batch.hold(TransactionEvent(type="file", name=path), props, False))
    assert held == [True, True, True, False]
    assert len(batch.commit(False)) == 4 and len(batch.fs) == 0


def test_depended_on_resources_end_the_batch(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("ccm:\n  resources:\n" + file_res(tmp_path / "a", "a") + file_res(tmp_path / "b", "b")
                    + exec_res("x", "/bin/true", f'            subscribe: ["file#{tmp_path / "a"}"]\n'))
    m = kit.manager()
    manifest = load_manifest(str(path), m)
    batch = RunBatch.for_run(manifest, m.working_dir, noop=False, health_check_only=False)
    assert batch is not None
    provider = PosixFileProvider()
    provider.use_write_sink(batch)
    batch._staging = True   # as admit() leaves it for an admitted resource
    a, b, x = manifest.resources
    assert batch.admit(a) and batch.admit(b) and not batch.admit(x)
    assert batch.admit(a)
    provider.store(a.props.name, content=b"a", source=None, owner=ME, group=MYGROUP, mode=0o644)
    assert len(batch.fs) == 1, "staged, not written"
    assert not batch.hold(TransactionEvent(type="file", name=a.props.name), a.props, False)
    batch.discard()


def test_no_batch_in_noop_or_health_check_only_runs(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("ccm:\n  resources:\n" + file_res(tmp_path / "a", "a"))
    for noop, hc in ((True, False), (False, True)):
        m = kit.manager(noop=noop)
        assert RunBatch.for_run(load_manifest(str(path), m), m.working_dir, noop=noop, health_check_only=hc) is None
    m = kit.manager()
    assert RunBatch.for_run(load_manifest(str(path), m), m.working_dir, noop=False, health_check_only=False) is not None


def test_conflicting_paths():
    batch = fsafe.DurableBatch(8)
    batch._by_path["/a/b/c"] = None   # type: ignore[assignment]
    batch._ancestors.update({"/a/b", "/a"})
    assert batch.conflicts("/a/b/c") and batch.conflicts("/a/b") and batch.conflicts("/a")
    assert batch.conflicts("/a/b/c/d") and batch.conflicts("/a/b/c/d/e")
    assert not batch.conflicts("/a/b/d") and not batch.conflicts("/x") and not batch.conflicts("/a/bc")


def test_sigterm_during_a_batched_run_leaves_every_reported_change_in_place(tmp_path):
    managed = tmp_path / "managed"
    managed.mkdir()
    n = 600
    for i in range(n):
        (managed / f"f{i:03d}").write_text(f"old {i}")
    (tmp_path / "m.yaml").write_text("ccm:\n  resources:\n" + "".join(
        file_res(managed / f"f{i:03d}", f"new {i}") for i in range(n)))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT, "HOME": str(tmp_path),
           "CCM_CACHE_DIR": str(tmp_path / "cache"), "CCM_LOCK_DIR": os.environ["CCM_LOCK_DIR"],
           "NO_COLOR": "1", "CCM_WRITE_BATCH": "16"}
    proc = subprocess.Popen([sys.executable, "-m", "ccm", "apply", "m.yaml"], cwd=str(tmp_path), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if " changed " in line:
            time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            break
    rest, _ = proc.communicate(timeout=120)
    lines += rest.splitlines(True)
    assert proc.returncode == 128 + signal.SIGTERM, "".join(lines[-5:])
    reported = {m.group(1) for m in (re.search(r"file#(\S+) changed", ln) for ln in lines) if m}
    assert reported
    for i in range(n):
        path = str(managed / f"f{i:03d}")
        text = open(path).read()
        assert text in (f"old {i}", f"new {i}")
        if path in reported:
            assert text == f"new {i}", f"{path} reported changed but not in place"
    assert temps(managed) == []
    assert len(reported) < n, "the signal came too late to interrupt anything"


@pytest.mark.skipif(not hasattr(os, "sync"), reason="no os.sync")
def test_syncfs_pass_for_many_files(tmp_path):
    _, batch = _staged_batch(tmp_path, fsafe._SYNCFS_MIN + 4)
    batch.fs.sync()
    assert all(w.synced and w.error is None for w in batch.fs.writes)
    batch.commit(False)
    assert all(open(str(tmp_path / f"f{i}")).read() == f"new {i}" for i in range(fsafe._SYNCFS_MIN + 4))


@pytest.mark.parametrize("mode", ["", "fsync"])
def test_sync_mode_fsync_makes_each_staged_file_durable_with_its_own_fsync(tmp_path, monkeypatch, mode):
    """``CCM_SYNC_MODE=fsync`` (the plain twin of the syncfs pass): an fsync per staged
    file and no syncfs; the files left are those of the default pass."""
    monkeypatch.setenv("CCM_SYNC_MODE", mode)
    monkeypatch.setattr(fsafe, "_syncfs", None)   # chosen again, under the switch
    fsyncs = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: fsyncs.append(fd) or real_fsync(fd))
    n = fsafe._SYNCFS_MIN + 4
    _, batch = _staged_batch(tmp_path, n)
    staged = [w.fd for w in batch.fs.writes]
    batch.fs.sync()
    assert all(w.synced and w.error is None for w in batch.fs.writes)
    per_file = [fd for fd in fsyncs if fd in staged]
    if mode == "fsync":
        assert fsafe._syncfs is False and sorted(per_file) == sorted(staged)
    elif fsafe._syncfs:   # a kernel whose syncfs reports writeback errors (5.8+): one pass
        assert per_file == []
    batch.commit(False)
    assert [open(str(tmp_path / f"f{i}")).read() for i in range(n)] == [f"new {i}" for i in range(n)]
    assert temps(tmp_path) == []


def test_a_staged_write_replaces_a_symlink_at_the_target_and_never_follows_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.symlink(str(victim), str(tmp_path / "f0"))
    provider = PosixFileProvider()
    batch = RunBatch([], str(tmp_path), 8)
    provider.use_write_sink(batch)
    batch._staging = True   # as admit() leaves it for an admitted resource
    provider.store(str(tmp_path / "f0"), content=b"new", source=None, owner=ME, group=MYGROUP, mode=0o600)
    props = type("P", (), {"name": str(tmp_path / "f0"), "type_name": "file", "alias": ""})()
    batch.hold(TransactionEvent(type="file", name=props.name), props, False)
    batch.commit(False)
    assert not os.path.islink(str(tmp_path / "f0")) and (tmp_path / "f0").read_text() == "new"
    assert victim.read_text() == "keep"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a symlink to another user")
def test_staging_refuses_a_parent_reached_through_another_users_symlink(tmp_path):
    from ccm.model.errors import ProviderError

    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    os.symlink(str(real), str(link))
    os.lchown(str(link), 65534, 65534)
    provider = PosixFileProvider()
    batch = RunBatch([], str(tmp_path), 8)
    provider.use_write_sink(batch)
    batch._staging = True   # as admit() leaves it for an admitted resource
    with pytest.raises(ProviderError, match="refusing to follow symlink"):
        provider.store(str(link / "f"), content=b"x", source=None, owner=ME, group=MYGROUP, mode=0o644)
    assert os.listdir(str(real)) == [] and len(batch.fs) == 0
    batch.discard()


def test_resources_that_publish_or_check_or_gate_are_not_batched(tmp_path):
    reg = ("            register_when_stable:\n              - cluster: c\n                service: s\n"
           "                protocol: http\n                address: 10.0.0.5\n                port: 80\n"
           "                priority: 1\n")
    extras = [reg, "            health_checks:\n              - command: /bin/true\n",
              "            control:\n              if: \"true\"\n", ""]
    path = tmp_path / "m.yaml"
    path.write_text("ccm:\n  resources:\n" + "".join(
        file_res(tmp_path / f"f{i}", "x", extra) for i, extra in enumerate(extras)))
    m = kit.manager()
    manifest = load_manifest(str(path), m)
    batch = RunBatch.for_run(manifest, m.working_dir, noop=False, health_check_only=False)
    assert [batch.admit(e) for e in manifest.resources] == [False, False, False, True]


@pytest.mark.parametrize("template_free", [True, False])
def test_each_unbatched_property_keeps_a_resource_out_only_when_it_is_not_empty(tmp_path, template_free):
    """``admit`` tests every key of ``_UNBATCHED`` on its own (not through the set)."""
    from types import SimpleNamespace

    from ccm.apply.batch import _UNBATCHED
    from ccm.model.resource import Properties

    m = kit.manager()
    fields = m.spec("file").all_fields
    set_values = {"require": ["file#/x"], "subscribe": ["exec#y"], "control": {"if": "true"},
                  "health_checks": [{"command": "/bin/true"}],
                  "register_when_stable": [{"cluster": "c", "service": "s"}]}
    empty_values = {"require": [], "subscribe": [], "control": {}, "health_checks": [], "register_when_stable": []}
    assert set(set_values) == set(empty_values) == set(_UNBATCHED)

    def entry(**extra):
        values = {"name": str(tmp_path / "f"), "ensure": "present", "content": "x", **extra}
        return SimpleNamespace(props=Properties("file", values, fields))

    plain = entry()
    batch = RunBatch([plain], str(tmp_path), template_free=template_free)
    assert batch.admit(plain)
    for key in sorted(_UNBATCHED):
        assert not batch.admit(entry(**{key: set_values[key]})), key
        assert batch.admit(entry(**{key: empty_values[key]})), key
    batch.discard()


def test_a_template_free_manifest_admits_what_the_full_test_admits(tmp_path):
    """The template-free shortcut of ``admit`` against the full test, entry by entry, with
    nothing staged and with a staged write the later paths lie under or beside."""
    src = tmp_path / "src.txt"
    src.write_text("s")
    owned = f"            owner: {ME}\n            group: {MYGROUP}\n            mode: \"0755\"\n"
    resources = [file_res(tmp_path / "a", "a"), file_res(tmp_path / "d" / "x", "x"),
                 f"    - file:\n        - {tmp_path / 'd'}:\n            ensure: directory\n{owned}",
                 f"    - file:\n        - {tmp_path / 'gone'}:\n            ensure: absent\n{owned}",
                 f"    - file:\n        - {tmp_path / 'empty'}:\n            ensure: present\n{owned}",
                 f"    - file:\n        - {tmp_path / 'copy'}:\n            ensure: present\n"
                 f"            source: {src}\n{owned}",
                 file_res(tmp_path / "r", "r", f'            require: ["file#{tmp_path / "a"}"]\n'),
                 exec_res("x", "/bin/true")]
    path = tmp_path / "m.yaml"
    path.write_text("ccm:\n  resources:\n" + "".join(resources))
    m = kit.manager()
    manifest = load_manifest(str(path), m)
    assert manifest.template_free
    fast = RunBatch.for_run(manifest, m.working_dir, noop=False, health_check_only=False)
    manifest.template_free = False
    full = RunBatch.for_run(manifest, m.working_dir, noop=False, health_check_only=False)
    assert fast is not None and full is not None and fast._template_free and not full._template_free
    expected = [True, True, False, False, True, True, False, False]
    assert [fast.admit(e) for e in manifest.resources] == [full.admit(e) for e in manifest.resources] == expected
    for batch in (fast, full):   # a staged write under d: d/x conflicts now
        provider = PosixFileProvider()
        provider.use_write_sink(batch)
        batch._staging = True   # as admit() leaves it for an admitted resource
        (tmp_path / "d").mkdir(exist_ok=True)
        provider.store(str(tmp_path / "d" / "x"), content=b"x", source=None, owner=ME, group=MYGROUP, mode=0o644)
    assert [fast.admit(e) for e in manifest.resources] == [full.admit(e) for e in manifest.resources]
    assert not fast.admit(manifest.resources[1]) and fast.admit(manifest.resources[0])
    fast.discard()
    full.discard()


def test_template_free_is_known_at_load_and_from_the_plan_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CCM_CACHE_DIR", str(tmp_path / "cache"))
    plain = tmp_path / "plain.yaml"
    plain.write_text("ccm:\n  resources:\n" + file_res(tmp_path / "a", "a"))
    templated = tmp_path / "t.yaml"
    templated.write_text("ccm:\n  resources:\n" + file_res(tmp_path / "b", "{{ 1 + 1 }}"))
    for _ in range(2):   # a full load, then the plan cache
        m = kit.manager()
        assert load_manifest(str(plain), m, plan_cache=True).template_free
        m = kit.manager()
        assert not load_manifest(str(templated), m, plan_cache=True).template_free
