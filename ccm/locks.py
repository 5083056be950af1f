"""Global package and service locks: one holder at a time, across threads and processes.

What: concurrent ``dpkg``/``apt-get``/``rpm`` runs corrupt (or refuse) their databases, and
concurrent ``systemctl``/init-script calls race each other, so every package-manager call
holds the *package* lock and every service-manager call the *service* lock.

Guarantees:
* within a process: a re-entrant ``threading.RLock`` (the agent runs several managers);
* across processes (a cron ``ccm apply`` next to the agent): an advisory ``flock`` on
  ``ccm-<name>.lock`` under ``/run/lock`` (root), else ``$XDG_RUNTIME_DIR``, else a private
  per-user directory in the temp dir (``CCM_LOCK_DIR`` overrides all three);
* waiting is bounded (``CCM_LOCK_TIMEOUT`` seconds or a duration like ``5m``, default 10
  minutes); on expiry ``LockTimeout`` names the holder: its pid, command line, since
  when and what it was doing, written into the lock file by whoever holds it (with
  ``/proc/locks`` as a fallback when the holder has not written yet);
* the kernel drops a dead holder's lock, so a stale file never blocks anyone.

Granularity (a product decision, upstream locks each command): providers take the lock
per *provider operation* -- one ``status``, ``install``, ``start``... -- covering all the
commands that operation runs (``apt-cache policy`` and the ``apt-get install`` of its
candidate are one unit), but not a whole resource (status, act, verify) or a whole run,
so another process can interleave between resources instead of waiting for a manifest.

Not: a replacement for dpkg's or rpm's own locks; it only keeps ccm processes polite.
"""
from __future__ import annotations

import errno
import fcntl
import os
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Dict, Iterator, Optional

from ccm.model.errors import LockTimeout

DEFAULT_TIMEOUT = 600.0
_POLL_MIN, _POLL_MAX = 0.02, 0.25


def default_timeout() -> float:
    text = os.environ.get("CCM_LOCK_TIMEOUT", "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        return float(text)
    except ValueError:
        pass
    from ccm.model.durations import parse_duration

    try:
        return float(parse_duration(text))
    except ValueError:
        return DEFAULT_TIMEOUT


def lock_directory(override: Optional[str] = None) -> str:
    """Where lock files live (see the module docstring for the order)."""
    chosen = override or os.environ.get("CCM_LOCK_DIR")
    if chosen:
        os.makedirs(chosen, mode=0o755, exist_ok=True)
        return chosen
    if os.geteuid() == 0 and os.path.isdir("/run/lock") and os.access("/run/lock", os.W_OK):
        return "/run/lock"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        return runtime
    private = os.path.join(tempfile.gettempdir(), f"ccm-locks-{os.geteuid()}")
    try:
        os.mkdir(private, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(private)
    if not os.path.isdir(private) or os.path.islink(private) or st.st_uid != os.geteuid():
        raise LockTimeout(f"refusing to use lock directory {private}: not a directory owned by uid {os.geteuid()}")
    return private


def _own_command_line() -> str:
    try:
        with open("/proc/self/cmdline", "rb") as fh:
            parts = [p.decode("utf-8", "replace") for p in fh.read().split(b"\0") if p]
    except OSError:
        parts = [sys.executable] + sys.argv
    return _one_line(" ".join(parts))


def _one_line(text: str, limit: int = 300) -> str:
    """Control characters (newlines in a ``-c`` script) would break the note's lines."""
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _pid_from_proc_locks(inode: int) -> Optional[int]:
    """The pid the kernel lists for a FLOCK on ``inode`` (``/proc/locks``), if any."""
    try:
        with open("/proc/locks", "r") as fh:
            for line in fh:
                parts = line.split()
                # "1: FLOCK  ADVISORY  WRITE 1234 00:2b:5678 0 EOF" ("->" marks waiters)
                if len(parts) >= 6 and parts[1] == "FLOCK" and parts[2] != "->":
                    dev_inode = parts[5].rsplit(":", 1)
                    if len(dev_inode) == 2 and dev_inode[1] == str(inode):
                        return int(parts[4])
    except (OSError, ValueError):
        return None
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class GlobalLock:
    """A named lock held by at most one thread of one process at a time."""

    def __init__(self, name: str, *, directory: Optional[str] = None, timeout: Optional[float] = None):
        self.name = name
        self._directory = directory
        self.timeout = timeout
        self._rlock = threading.RLock()
        self._depth = 0
        self._fd: Optional[int] = None
        self._holder = ""   # what the in-process holder is doing (for in-process waiters)

    @property
    def path(self) -> str:
        return os.path.join(lock_directory(self._directory), f"ccm-{self.name}.lock")

    @contextmanager
    def hold(self, operation: str = "", timeout: Optional[float] = None) -> Iterator[None]:
        self.acquire(operation, timeout)
        try:
            yield
        finally:
            self.release()

    def acquire(self, operation: str = "", timeout: Optional[float] = None) -> None:
        if timeout is None:
            timeout = self.timeout if self.timeout is not None else default_timeout()
        deadline = time.monotonic() + max(0.0, timeout)
        if not self._rlock.acquire(timeout=max(0.0, timeout)):
            holder = self._holder or "another thread"
            raise LockTimeout(f"timed out after {timeout:g}s waiting for the {self.name} lock: held in this "
                              f"process (pid {os.getpid()}) by {holder}")
        if self._depth > 0:   # re-entrant use by the thread that already holds the file lock
            self._depth += 1
            return
        try:
            path = self.path
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            self._rlock.release()
            raise LockTimeout(f"cannot open the {self.name} lock file: {exc}") from None
        try:
            self._wait_for_flock(fd, path, deadline, timeout)
            self._write_holder(fd, operation)
        except BaseException:
            os.close(fd)
            self._rlock.release()
            raise
        self._fd = fd
        self._depth = 1
        self._holder = f"thread {threading.current_thread().name}" + (f" ({operation})" if operation else "")

    def release(self) -> None:
        if self._depth <= 0:
            raise RuntimeError(f"release of the unheld {self.name} lock")
        self._depth -= 1
        if self._depth == 0:
            fd, self._fd = self._fd, None
            self._holder = ""
            if fd is not None:
                try:
                    os.ftruncate(fd, 0)
                except OSError:
                    pass
                os.close(fd)   # closing the descriptor drops the flock
        self._rlock.release()

    # --- internals -------------------------------------------------------------------

    def _wait_for_flock(self, fd: int, path: str, deadline: float, timeout: float) -> None:
        delay = _POLL_MIN
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise LockTimeout(f"cannot lock {path}: {exc.strerror or exc}") from None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LockTimeout(f"timed out after {timeout:g}s waiting for the {self.name} lock {path}: "
                                  f"held by {self._describe_holder(fd)}")
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, _POLL_MAX)

    def _write_holder(self, fd: int, operation: str) -> None:
        since = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        text = (f"pid={os.getpid()}\nsince={since}\noperation={_one_line(operation)}\n"
                f"command={_own_command_line()}\n")
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, text.encode("utf-8", "replace"), 0)
        except OSError:
            pass   # the lock is what matters; the note is a courtesy

    def _describe_holder(self, fd: int) -> str:
        info: Dict[str, str] = {}
        try:
            raw = os.pread(fd, 4096, 0).decode("utf-8", "replace")
            for line in raw.splitlines():
                k, sep, v = line.partition("=")
                if sep:
                    info[k] = v
        except OSError:
            pass
        pid: Optional[int] = None
        if info.get("pid", "").isdigit():
            pid = int(info["pid"])
        kernel_pid = _pid_from_proc_locks(os.fstat(fd).st_ino)
        if kernel_pid is not None and kernel_pid != pid:
            # the holder has not written its note yet (or the note is stale)
            return f"pid {kernel_pid}" + (f" ({_command_of(kernel_pid)})" if _command_of(kernel_pid) else "")
        if pid is None:
            return "an unknown process"
        text = f"pid {pid}"
        if info.get("command"):
            text += f" ({info['command']})"
        if info.get("since"):
            text += f" since {info['since']}"
        if info.get("operation"):
            text += f", doing: {info['operation']}"
        if not _pid_alive(pid):
            text += " [pid no longer running]"
        return text


def _command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return _one_line(" ".join(p.decode("utf-8", "replace") for p in fh.read().split(b"\0") if p))
    except OSError:
        return ""


_named: Dict[str, GlobalLock] = {}
_named_guard = threading.Lock()


def named(name: str) -> GlobalLock:
    """The process-wide lock called ``name`` (created on first use)."""
    with _named_guard:
        lock = _named.get(name)
        if lock is None:
            lock = _named[name] = GlobalLock(name)
        return lock


def package_lock() -> GlobalLock:
    return named("package")


def service_lock() -> GlobalLock:
    return named("service")
