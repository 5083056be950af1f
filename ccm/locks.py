"""Global package and service locks: one holder at a time, across threads and processes.

What: concurrent ``dpkg``/``apt-get``/``rpm`` runs corrupt (or refuse) their databases, and
concurrent ``systemctl``/init-script calls race each other, so every package-manager call
holds the *package* lock and every service-manager call the *service* lock.

Guarantees:
* within a process: a re-entrant ``threading.RLock`` (the agent runs several managers);
* across processes (a cron ``ccm apply`` next to the agent): an advisory ``flock`` on
  ``ccm-<name>.lock`` (mode 0600) under ``$CCM_LOCK_DIR`` when set, else ``/run/ccm``
  (root, 0700), else ``$XDG_RUNTIME_DIR/ccm``, else a private per-user directory in the
  temp dir; a lock directory or file that is a symlink or another user's is refused, so
  nobody else can hold root's locks hostage; a shared directory (``/tmp``, ``/run/lock``)
  is used through a private ``ccm`` subdirectory, and its own mode is never changed;
* waiting is bounded (``CCM_LOCK_TIMEOUT`` seconds or a duration like ``5m``, default 10
  minutes); on expiry ``LockTimeout`` names the holder: its pid, command name (never its
  arguments, which may hold credentials), since when and what it was doing, written into
  the lock file by whoever holds it (with ``/proc/locks`` as a fallback when the holder
  has not written yet);
* the *run* lock (``acquire_run_lock``) serialises whole ``ccm apply`` runs host-wide;
  a second run is skipped at once (``RunLockHeld``, exit ``EXIT_LOCKED``, 8) unless told to wait;
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
import stat
import sys
import time
from contextlib import contextmanager
from _thread import RLock, allocate_lock

from ccm.model.errors import LockTimeout
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, Iterator, Optional

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


ROOT_LOCK_DIR = "/run/ccm"


class LockDirectoryError(LockTimeout):
    """The lock directory or file is unsafe to use (a symlink, another user's, not a directory)."""


def _checked_directory(path: str, create: bool = True) -> str:
    """Where lock files go for ``path``: ``path`` itself when it is a private directory of
    ours (created 0700 when missing), else, for a shared directory (``/tmp``, ``/run/lock``:
    writable by group or others) that belongs to us or to root, a private ``ccm``
    subdirectory inside it (created 0700).

    A planted symlink or another user's directory would let that user hold our locks
    hostage (or make us write where they choose): both are refused, with one line saying
    why. The mode of a directory ccm did not create is never changed (a world-writable
    ``/run/lock`` stays usable by everyone else).
    """
    uid = os.geteuid()
    st = _directory_status(path, create)
    if st.st_mode & 0o022:
        if st.st_uid not in (0, uid):
            raise LockDirectoryError(f"refusing lock directory {path}: owned by uid {st.st_uid} and writable "
                                     f"by others")
        path = os.path.join(path, "ccm")
        st = _directory_status(path, True)
        if st.st_mode & 0o022:
            raise LockDirectoryError(f"refusing lock directory {path}: writable by group or others")
    if st.st_uid != uid:
        raise LockDirectoryError(f"refusing lock directory {path}: owned by uid {st.st_uid}, not {uid}")
    return path


def _directory_status(path: str, create: bool) -> os.stat_result:
    """``lstat`` of ``path`` (made 0700 first when ``create`` and missing): a real directory."""
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise LockDirectoryError(f"cannot create lock directory {path}: {exc.strerror or exc}") from None
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise LockDirectoryError(f"cannot use lock directory {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise LockDirectoryError(f"refusing lock directory {path}: it is a symlink")
    if not stat.S_ISDIR(st.st_mode):
        raise LockDirectoryError(f"refusing lock directory {path}: not a directory")
    return st


def lock_directory(override: Optional[str] = None) -> str:
    """Where lock files live: ``$CCM_LOCK_DIR``, else ``/run/ccm`` (root, 0700), else
    ``$XDG_RUNTIME_DIR/ccm``, else a private per-user directory in the temp dir."""
    chosen = override or os.environ.get("CCM_LOCK_DIR")
    if chosen:
        return _checked_directory(chosen)
    if os.geteuid() == 0:
        if not os.path.isdir("/run"):
            os.makedirs("/run", 0o755, exist_ok=True)
        return _checked_directory(ROOT_LOCK_DIR)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        try:
            return _checked_directory(os.path.join(runtime, "ccm"))
        except LockDirectoryError:
            pass
    import tempfile

    return _checked_directory(os.path.join(tempfile.gettempdir(), f"ccm-locks-{os.geteuid()}"))


def _own_command_name() -> str:
    """``ccm apply`` style: the program and its subcommand, never the arguments (credentials)."""
    argv = list(sys.argv) or ["ccm"]
    prog = os.path.basename(argv[0]) or "ccm"
    if prog in ("__main__.py", "-c", "-m") or prog.startswith("python"):
        prog = "ccm"
    if prog.endswith(".pyz"):
        prog = "ccm"
    words = [prog]
    for a in argv[1:]:
        if a.startswith("-"):
            continue
        if a.isidentifier() and len(a) <= 20:
            words.append(a)
        break
    return " ".join(words)


def redact_userinfo(text: str) -> str:
    """Drop URL credentials from ``text`` (``https://u:p@host`` -> ``https://REDACTED@host``),
    even when the password holds unencoded ``/``, ``#`` or ``?``: the one scrubber's rule."""
    from ccm.redact import scrub_text

    return scrub_text(text)


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


def _thread_name() -> str:
    threading = sys.modules.get("threading")   # not loaded: no thread was started, this is the main one
    return threading.current_thread().name if threading is not None else "MainThread"


class GlobalLock:
    """A named lock held by at most one thread of one process at a time."""

    def __init__(self, name: str, *, directory: Optional[str] = None, timeout: Optional[float] = None):
        self.name = name
        self._directory = directory
        self.timeout = timeout
        self._rlock = RLock()   # threading.RLock's C implementation, without importing threading
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
            fd = _open_lock_file(path, self.name)
        except BaseException:
            self._rlock.release()
            raise
        try:
            self._wait_for_flock(fd, path, deadline, timeout)
            self._write_holder(fd, operation)
        except BaseException:
            os.close(fd)
            self._rlock.release()
            raise
        self._fd = fd
        self._depth = 1
        self._holder = f"thread {_thread_name()}" + (f" ({operation})" if operation else "")

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
                holder = self._holder_info(fd)
                raise LockTimeout(f"timed out after {timeout:g}s waiting for the {self.name} lock {path}: "
                                  f"held by {_describe(holder)}", holder)
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, _POLL_MAX)

    def _write_holder(self, fd: int, operation: str) -> None:
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        text = (f"pid={os.getpid()}\nsince={since}\noperation={_one_line(redact_userinfo(operation))}\n"
                f"command={_own_command_name()}\n")
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, text.encode("utf-8", "replace"), 0)
        except OSError:
            pass   # the lock is what matters; the note is a courtesy

    def _holder_info(self, fd: int) -> Dict[str, str]:
        """The holder's note (pid, since, operation, command), checked against ``/proc/locks``."""
        info: Dict[str, str] = {}
        try:
            raw = os.pread(fd, 4096, 0).decode("utf-8", "replace")
            for line in raw.splitlines():
                k, sep, v = line.partition("=")
                if sep:
                    info[k] = v
        except OSError:
            pass
        kernel_pid = _pid_from_proc_locks(os.fstat(fd).st_ino)
        if kernel_pid is not None and str(kernel_pid) != info.get("pid"):
            # the holder has not written its note yet (or the note is stale)
            return {"pid": str(kernel_pid), "command": _command_of(kernel_pid)}
        if info.get("pid", "").isdigit() and not _pid_alive(int(info["pid"])):
            info["dead"] = "1"
        return info


def _describe(info: Dict[str, str]) -> str:
    if not info.get("pid", "").isdigit():
        return "an unknown process"
    text = f"pid {info['pid']}"
    if info.get("command"):
        text += f" ({info['command']})"
    if info.get("since"):
        text += f" since {info['since']}"
    if info.get("operation"):
        text += f", doing: {info['operation']}"
    if info.get("dead"):
        text += " [pid no longer running]"
    return text


def _command_of(pid: int) -> str:
    """The kernel's short name of ``pid`` (``/proc/PID/comm``), never its arguments."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as fh:
            return _one_line(fh.read(64).decode("utf-8", "replace"))
    except OSError:
        return ""


def _open_lock_file(path: str, name: str) -> int:
    """Open (or create, 0600) the lock file: never through a symlink, never another user's
    file, only in the directory ``lock_directory`` checked (opened without following a
    link and checked again through its descriptor, then the file is created in it)."""
    directory, base = os.path.split(path)
    try:
        dfd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise LockDirectoryError(f"cannot use lock directory {directory}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(dfd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise LockDirectoryError(f"refusing lock directory {directory}: it changed while being opened")
        fd = os.open(base, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600,
                     dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LockDirectoryError(f"refusing the {name} lock file {path}: it is a symlink") from None
        raise LockTimeout(f"cannot open the {name} lock file {path}: {exc.strerror or exc}") from None
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise LockDirectoryError(f"refusing the {name} lock file {path}: not a regular file")
        if st.st_uid != os.geteuid():
            raise LockDirectoryError(f"refusing the {name} lock file {path}: owned by uid {st.st_uid}, "
                                     f"not {os.geteuid()}")
        if stat.S_IMODE(st.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd


_named: Dict[str, GlobalLock] = {}
_named_guard = allocate_lock()


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


# The exit code of a run skipped because another run holds the lock: it sets neither the
# 2 (changed) nor the 4 (failed) bit of ``--detailed-exit-codes`` (0/2/4/6), nor 1.
EXIT_LOCKED = 8


class RunLockHeld(LockTimeout):
    """Another ccm run holds the host-wide run lock (exit code ``EXIT_LOCKED``)."""


def run_lock() -> GlobalLock:
    return named("run")


def acquire_run_lock(manifest: str, wait: float = 0.0) -> GlobalLock:
    """Take the host-wide run lock for applying ``manifest``, waiting up to ``wait`` seconds.

    Raises ``RunLockHeld`` with one line naming the holder (pid, manifest, since when).
    """
    lock = run_lock()
    try:
        lock.acquire(redact_userinfo(manifest), timeout=wait)
    except RunLockHeld:
        raise
    except LockDirectoryError:
        raise
    except LockTimeout as exc:
        info = exc.holder
        who = f"pid {info['pid']}" if info.get("pid") else "another process"
        if info.get("operation"):
            who += f" applying {info['operation']}"
        elif info.get("command"):
            who += f" ({info['command']})"
        if info.get("since"):
            who += f" since {info['since']}"
        waited = f" (waited {wait:g}s)" if wait > 0 else ""
        raise RunLockHeld(f"another ccm run holds the run lock {lock.path}: {who}{waited}; nothing was changed "
                          f"(use --wait-lock DURATION to wait for it)") from None
    return lock
