"""Reports that could not be delivered, kept under the state directory until a run reaches the server.

What: ``ReportQueue`` is the directory ``<state>/reports`` (``state_dir()``:
``$CCM_STATE_DIR``, else ``/var/lib/ccm`` as root, ``$XDG_STATE_HOME/ccm`` otherwise):
one file per report (``<ns>-<hex>.report``: subject, message id, body), read oldest
first; at most ``limit`` (``$CCM_REPORT_QUEUE_MAX``, default 100) are kept, the oldest
dropped first and counted in ``dropped``. ``locked()`` serialises the queue between a
cron run and the agent on one host.
Guarantees: the state directory and the queue directory are reached through
``ccm.fsafe.open_dir`` (no untrusted symlink) and must belong to us (or root) and not be
writable by group or others, else ``QueueError`` (root never queues into a directory
another user could fill or swap); files are written through ``fsafe.open_temp`` and
renamed relative to the checked directory's descriptor, mode 0600, durable before the
rename; every read is bounded. Not: delivery (``ccm.fleet.publish``).
"""
from __future__ import annotations

import os
import stat
import time

from ccm import fsafe
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Iterator, List, Mapping, Optional

DEFAULT_LIMIT = 100
MAX_FILE = 512 * 1024
MAGIC = b"CCMREPORT1\n"
SUFFIX = ".report"
LOCK_WAIT = 2.0
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


class QueueError(Exception):
    """The queue cannot be used; one line naming the directory and why."""


def state_dir(environ: Optional[Mapping[str, str]] = None) -> str:
    env = os.environ if environ is None else environ
    explicit = env.get("CCM_STATE_DIR", "")
    if explicit:
        return os.path.abspath(explicit)
    if os.geteuid() == 0:
        return "/var/lib/ccm"
    base = env.get("XDG_STATE_HOME", "") or os.path.join(env.get("HOME") or os.path.expanduser("~"),
                                                         ".local", "state")
    return os.path.join(os.path.abspath(base), "ccm")


def queue_limit(environ: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if environ is None else environ
    try:
        return max(1, int(env.get("CCM_REPORT_QUEUE_MAX", "") or DEFAULT_LIMIT))
    except ValueError:
        return DEFAULT_LIMIT


def _check_owned(fd: int, shown: str) -> None:
    st = os.fstat(fd)
    if st.st_uid not in (0, os.geteuid()):
        raise QueueError(f"state directory {shown} belongs to uid {st.st_uid}, not to this user: not queueing there")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise QueueError(f"state directory {shown} is writable by other users (mode {stat.S_IMODE(st.st_mode):04o}): "
                         "not queueing there")


class Queued:
    __slots__ = ("name", "subject", "msg_id", "body")

    def __init__(self, name: str, subject: str, msg_id: str, body: bytes):
        self.name, self.subject, self.msg_id, self.body = name, subject, msg_id, body


class ReportQueue:
    def __init__(self, directory: str, limit: int = DEFAULT_LIMIT):
        self.state = directory
        self.path = os.path.join(directory, "reports")
        self.limit = limit
        self._dfd = -1

    @classmethod
    def default(cls, environ: Optional[Mapping[str, str]] = None) -> "ReportQueue":
        return cls(state_dir(environ), queue_limit(environ))

    # --- opening and locking ------------------------------------------------------------

    def open(self) -> int:
        """The checked queue directory's descriptor (created 0700 when missing)."""
        if self._dfd >= 0:
            return self._dfd
        try:
            sfd = fsafe.open_dir(self.state, create=True, create_mode=0o700)
        except Exception as exc:   # OSError, or fsafe's refusal of an untrusted symlink
            raise QueueError(f"cannot open state directory {self.state}: {_text(exc)}") from None
        try:
            _check_owned(sfd, self.state)
            try:
                os.mkdir("reports", 0o700, dir_fd=sfd)
            except FileExistsError:
                pass
            try:
                dfd = os.open("reports", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=sfd)
            except OSError as exc:
                raise QueueError(f"cannot open {self.path}: {_text(exc)}") from None
        except OSError as exc:
            raise QueueError(f"cannot use state directory {self.state}: {_text(exc)}") from None
        finally:
            os.close(sfd)
        try:
            _check_owned(dfd, self.path)
        except QueueError:
            os.close(dfd)
            raise
        self._dfd = dfd
        return dfd

    def close(self) -> None:
        if self._dfd >= 0:
            os.close(self._dfd)
            self._dfd = -1

    def locked(self) -> "_Lock":
        return _Lock(self)

    # --- the files --------------------------------------------------------------------------

    def names(self) -> List[str]:
        """Queued file names, oldest first (names start with a zero-padded ns timestamp)."""
        return sorted(n for n in os.listdir(self.open()) if n.endswith(SUFFIX) and not n.startswith("."))

    def __len__(self) -> int:
        try:
            return len(self.names())
        except (QueueError, OSError):
            return 0

    def read(self, name: str) -> Optional[Queued]:
        """The queued report ``name``, or None when it is unreadable or malformed."""
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=self.open())
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = os.read(fd, MAX_FILE + 1)
        finally:
            os.close(fd)
        if len(data) > MAX_FILE or not data.startswith(MAGIC):
            return None
        parts = data[len(MAGIC):].split(b"\n", 2)
        if len(parts) != 3 or not parts[0]:
            return None
        return Queued(name, parts[0].decode("utf-8", "replace"), parts[1].decode("utf-8", "replace"), parts[2])

    def pending(self) -> Iterator[Queued]:
        """Every queued report, oldest first; malformed files are dropped (and counted)."""
        for name in self.names():
            item = self.read(name)
            if item is None:
                self.remove(name)
                self.count_dropped(1)
                continue
            yield item

    def add(self, subject: str, msg_id: str, body: bytes) -> int:
        """Queue one report; returns how many old ones were dropped to stay within ``limit``."""
        dfd = self.open()
        names = self.names()
        excess = names[:max(0, len(names) - self.limit + 1)]
        for name in excess:
            self.remove(name)
        if excess:
            self.count_dropped(len(excess))
        name = f"{time.time_ns():020d}-{os.urandom(4).hex()}{SUFFIX}"
        self._write(dfd, name, MAGIC + subject.encode("utf-8") + b"\n" + msg_id.encode("utf-8") + b"\n" + body)
        return len(excess)

    def remove(self, name: str) -> None:
        try:
            os.unlink(name, dir_fd=self.open())
        except FileNotFoundError:
            pass

    def dropped(self) -> int:
        try:
            fd = os.open("dropped", _FILE_FLAGS, dir_fd=self.open())
        except (OSError, QueueError):
            return 0
        try:
            text = os.read(fd, 32).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
        return int(text) if text.isdigit() else 0

    def count_dropped(self, n: int) -> None:
        self._write(self.open(), "dropped", f"{self.dropped() + n}\n".encode("ascii"))

    @staticmethod
    def _write(dfd: int, name: str, data: bytes) -> None:
        tmp, fd = fsafe.open_temp(dfd, name)   # O_EXCL | O_NOFOLLOW, 0600
        done = False
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            os.close(fd)
            fd = -1
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            done = True
        finally:
            if fd >= 0:
                os.close(fd)
            if not done:
                try:
                    os.unlink(tmp, dir_fd=dfd)
                except OSError:
                    pass


class _Lock:
    """``flock`` on ``<queue>/.lock`` for a drain or an add, waited for at most ``LOCK_WAIT``."""

    def __init__(self, queue: ReportQueue):
        self.queue = queue
        self.fd = -1

    def __enter__(self) -> ReportQueue:
        import fcntl

        dfd = self.queue.open()
        self.fd = os.open(".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                          dir_fd=dfd)
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self.queue
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(self.fd)
                    self.fd = -1
                    raise QueueError(f"{self.queue.path} is locked by another ccm run") from None
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)   # releases the lock
            self.fd = -1


def _text(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__
