"""Global locks: threads and real processes contending for the same lock file."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from ccm.locks import GlobalLock, lock_directory, named, package_lock, service_lock
from ccm.model.errors import LockTimeout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HOLDER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from ccm.locks import GlobalLock
    lock = GlobalLock("contended", directory={directory!r})
    lock.acquire("holding for the test")
    print("held", flush=True)
    sys.stdin.readline()          # release when the test says so
    lock.release()
    print("released", flush=True)
    time.sleep(30)
""")


@pytest.fixture
def holder(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER.format(root=ROOT, directory=str(tmp_path))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_second_process_times_out_naming_the_holder(holder, tmp_path):
    lock = GlobalLock("contended", directory=str(tmp_path))
    started = time.monotonic()
    with pytest.raises(LockTimeout) as err:
        lock.acquire("apt-get install sl", timeout=0.6)
    waited = time.monotonic() - started
    msg = str(err.value)
    assert waited >= 0.55
    assert f"pid {holder.pid}" in msg
    assert "holding for the test" in msg
    assert "sys.path.insert" not in msg   # the command name only, never its arguments
    assert str(tmp_path / "ccm-contended.lock") in msg
    assert "timed out after 0.6s waiting for the contended lock" in msg


def test_second_process_waits_then_gets_the_lock(holder, tmp_path):
    lock = GlobalLock("contended", directory=str(tmp_path))
    got = []
    done = threading.Event()
    notes = []

    def waiter():
        lock.acquire("waiter", timeout=20)
        got.append(time.monotonic())
        # while we hold it, the note in the file names us
        with open(tmp_path / "ccm-contended.lock") as fh:
            notes.append(fh.read())
        done.wait(10)
        lock.release()

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.5)
    assert not got, "the lock must not be granted while the other process holds it"
    released_at = time.monotonic()
    holder.stdin.write("go\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "released"
    for _ in range(100):
        if got:
            break
        time.sleep(0.05)
    assert got and got[0] >= released_at
    assert f"pid={os.getpid()}" in notes[0] and "operation=waiter" in notes[0]
    done.set()
    t.join(10)
    assert os.path.getsize(tmp_path / "ccm-contended.lock") == 0


def test_dead_holder_does_not_block(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER.format(root=ROOT, directory=str(tmp_path))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    proc.kill()
    proc.wait()
    lock = GlobalLock("contended", directory=str(tmp_path))
    lock.acquire(timeout=2)   # the stale note remains, the kernel lock is gone
    lock.release()


def test_threads_are_serialised_and_in_process_timeout_names_the_thread(tmp_path):
    lock = GlobalLock("threads", directory=str(tmp_path))
    inside = []
    overlap = []

    def worker(i):
        with lock.hold(f"op {i}", timeout=10):
            if inside:
                overlap.append(i)
            inside.append(i)
            time.sleep(0.02)
            inside.remove(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlap == []

    release = threading.Event()
    held = threading.Event()

    def hog():
        with lock.hold("dpkg work"):
            held.set()
            release.wait(10)

    t = threading.Thread(target=hog, name="hog-thread")
    t.start()
    held.wait(5)
    try:
        with pytest.raises(LockTimeout) as err:
            lock.acquire(timeout=0.2)
        assert "thread hog-thread (dpkg work)" in str(err.value)
        assert f"pid {os.getpid()}" in str(err.value)
    finally:
        release.set()
        t.join()


def test_reentrant_in_one_thread(tmp_path):
    lock = GlobalLock("re", directory=str(tmp_path))
    with lock.hold("outer"):
        with lock.hold("inner", timeout=0.1):
            pass
        # still held after the inner release: another process cannot take it
        probe = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            import sys; sys.path.insert(0, {ROOT!r})
            from ccm.locks import GlobalLock
            from ccm.model.errors import LockTimeout
            try:
                GlobalLock("re", directory={str(tmp_path)!r}).acquire(timeout=0.2)
            except LockTimeout as e:
                print("TIMEOUT", e)
        """)], capture_output=True, text=True, timeout=30)
        assert "TIMEOUT" in probe.stdout and f"pid {os.getpid()}" in probe.stdout and "outer" in probe.stdout
    with pytest.raises(RuntimeError):
        lock.release()


def test_lock_directory_choice(monkeypatch, tmp_path):
    monkeypatch.setenv("CCM_LOCK_DIR", str(tmp_path / "x"))
    assert lock_directory() == str(tmp_path / "x")
    assert oct(os.stat(tmp_path / "x").st_mode & 0o777) == "0o700"
    monkeypatch.delenv("CCM_LOCK_DIR")
    if os.geteuid() == 0:
        return   # /run/ccm: checked in a subprocess below, not on the shared host here
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert lock_directory() == str(tmp_path / "ccm")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    d = lock_directory()
    assert os.path.isdir(d) and os.access(d, os.W_OK) and d.endswith(f"ccm-locks-{os.geteuid()}")


def test_timeout_from_environment(monkeypatch, tmp_path):
    from ccm.locks import default_timeout

    monkeypatch.setenv("CCM_LOCK_TIMEOUT", "2m")
    assert default_timeout() == 120
    monkeypatch.setenv("CCM_LOCK_TIMEOUT", "7.5")
    assert default_timeout() == 7.5


def test_named_locks_are_process_singletons():
    assert package_lock() is named("package") is package_lock()
    assert service_lock() is not package_lock()


def test_provider_operation_blocked_by_another_process_fails_naming_it(holder, tmp_path):
    """An apt status read while another process holds the package lock: the resource fails
    with the holder's pid and command line; nothing was run."""
    from ccm.registry import Registry
    from ccm.resources import BUILTIN_TYPES
    from ccm.resources import properties as P
    from ccm.resources.package.apt import AptProvider
    from tests import kit
    from tests.resources.package.replay import ReplayRunner

    runner = ReplayRunner({"DEBIAN_FRONTEND": "noninteractive", "APT_LISTBUGS_FRONTEND": "none",
                           "APT_LISTCHANGES_FRONTEND": "none"})
    provider = AptProvider(runner, None, lock=GlobalLock("contended", directory=str(tmp_path), timeout=0.3))
    reg = Registry(BUILTIN_TYPES)
    reg.register(kit.StaticFactory("package", "apt", provider))
    m = kit.manager(log_level=None, registry=reg)
    spec = reg.spec("package")
    props = P.build(spec, {"name": "zsh", "ensure": "present"})
    P.validate(spec, props)
    ev = m.apply_resource(props)
    assert ev.failed and runner.calls == []
    assert ev.errors[0].startswith("timed out after 0.3s waiting for the contended lock")
    assert f"held by pid {holder.pid}" in ev.errors[0] and "holding for the test" in ev.errors[0]


# --- the lock cannot be held hostage ------------------------------------------------------


def test_lock_directory_that_is_a_symlink_is_refused(monkeypatch, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.symlink(target, tmp_path / "locks")
    monkeypatch.setenv("CCM_LOCK_DIR", str(tmp_path / "locks"))
    with pytest.raises(LockTimeout) as err:
        GlobalLock("pkg").acquire(timeout=0.1)
    assert "it is a symlink" in str(err.value) and str(tmp_path / "locks") in str(err.value)
    assert list(target.iterdir()) == []


def test_lock_file_that_is_a_symlink_is_refused(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.symlink(victim, tmp_path / "ccm-pkg.lock")
    with pytest.raises(LockTimeout) as err:
        GlobalLock("pkg", directory=str(tmp_path)).acquire(timeout=0.1)
    assert "lock file" in str(err.value) and "symlink" in str(err.value)
    assert victim.read_text() == "precious\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create another user's files")
def test_lock_directory_or_file_owned_by_another_user_is_refused(tmp_path):
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    os.chown(other, 65534, 65534)
    with pytest.raises(LockTimeout) as err:
        GlobalLock("pkg", directory=str(other)).acquire(timeout=0.1)
    assert "owned by uid 65534" in str(err.value)
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    (mine / "ccm-pkg.lock").write_text("")
    os.chown(mine / "ccm-pkg.lock", 65534, 65534)
    with pytest.raises(LockTimeout) as err:
        GlobalLock("pkg", directory=str(mine)).acquire(timeout=0.1)
    assert "lock file" in str(err.value) and "owned by uid 65534" in str(err.value)


@pytest.mark.skipif(os.geteuid() != 0, reason="root's default lock directory")
def test_root_uses_a_root_only_run_directory(tmp_path):
    """Without CCM_LOCK_DIR root's locks live in /run/ccm (0700), not world-writable /run/lock."""
    probe = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import os, sys; sys.path.insert(0, {ROOT!r})
        os.environ.pop("CCM_LOCK_DIR", None)
        from ccm.locks import lock_directory
        d = lock_directory()
        print(d, oct(os.stat(d).st_mode & 0o777), os.stat(d).st_uid)
    """)], capture_output=True, text=True, timeout=30)
    assert probe.stdout.split() == ["/run/ccm", "0o700", "0"], probe.stderr


def test_lock_file_is_private_and_records_no_arguments(tmp_path):
    """The note holds pid, command name, start time and operation: no credentials from argv."""
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {ROOT!r})
        sys.argv = ["ccm", "apply", "https://bob:s3cr3t@example.com/b.tgz", "--fact", "x=y"]
        from ccm.locks import GlobalLock
        lock = GlobalLock("package", directory={str(tmp_path)!r})
        lock.acquire("apt-get install sl")
        print("held", flush=True)
        sys.stdin.readline()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        path = tmp_path / "ccm-package.lock"
        note = path.read_text()
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
        assert "s3cr3t" not in note and "example.com" not in note
        assert f"pid={proc.pid}" in note and "command=ccm apply" in note and "since=" in note
    finally:
        proc.kill()
        proc.wait()
    # after kill -9 the note stays but holds nothing secret, and the lock is free
    assert "s3cr3t" not in (tmp_path / "ccm-package.lock").read_text()
    lock = GlobalLock("package", directory=str(tmp_path))
    lock.acquire(timeout=1)
    lock.release()


def test_existing_world_readable_lock_file_is_tightened(tmp_path):
    path = tmp_path / "ccm-x.lock"
    path.write_text("pid=1\n")
    os.chmod(path, 0o666)
    lock = GlobalLock("x", directory=str(tmp_path))
    lock.acquire(timeout=1)
    try:
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    finally:
        lock.release()


def test_shared_lock_directory_keeps_its_mode_and_gets_a_private_subdirectory(tmp_path):
    d = tmp_path / "locks"
    d.mkdir()
    os.chmod(d, 0o1777)
    lock = GlobalLock("x", directory=str(d))
    lock.acquire(timeout=1)
    lock.release()
    assert oct(os.stat(d).st_mode & 0o7777) == "0o1777"   # never changed: not ours
    assert lock.path == str(d / "ccm" / "ccm-x.lock") and os.path.isfile(lock.path)
    assert oct(os.stat(d / "ccm").st_mode & 0o7777) == "0o700"


def test_run_lock_note_never_holds_url_credentials(tmp_path):
    from ccm.locks import acquire_run_lock, redact_userinfo, run_lock

    assert redact_userinfo("https://bob:p/a#s?s@repo.example/b.tgz") == "https://REDACTED@repo.example/b.tgz"
    assert redact_userinfo("/srv/manifest.yaml") == "/srv/manifest.yaml"
    lock = acquire_run_lock("https://bob:hunter2@repo.example/b.tgz")
    try:
        note = open(run_lock().path).read()
        assert "hunter2" not in note and "operation=https://REDACTED@repo.example/b.tgz" in note
    finally:
        lock.release()
