"""Acting on what was checked: descriptor-based file system primitives for root on shared hosts.

What: the file, archive and scaffold providers change files through these functions only.
A path is reached by opening each directory with ``O_NOFOLLOW | O_DIRECTORY`` relative to
the one before (``dir_fd``); a symlink on the way is followed only when it belongs to root
or to us (another user's symlink is refused, whatever ``fs.protected_symlinks`` says). The
last component is created, opened with ``O_NOFOLLOW`` and changed through the descriptor
(``fchown``, ``fchmod``, ``fstat``), so a symlink swapped in between a check and a change
makes the operation fail instead of changing the symlink's target.

Temp files are named ``.<name>.ccm-<hex>.tmp``; ``sweep_stale`` removes ours (that prefix,
owned by us, older than this process) the first time a run touches a directory, so
leftovers of a ``kill -9`` do not pile up.

``DurableBatch`` is ``atomic_replace`` split in three for many files at once: ``stage``
writes, chowns and chmods a temp file (the target is untouched); ``sync`` makes every
staged temp file durable in one pass (one ``syncfs`` per file system where Linux reports
its errors, else an ``fsync`` per file); ``install`` renames one over its target; ``close``
fsyncs the directories renamed into. Directory descriptors are opened once per parent and
batch. Renaming only what ``sync`` made durable keeps the guarantee of a single write: a
killed or powered-off host sees each target with its old or its new content, never a
partial one, and a temp file left by a kill is swept by the next run.

``DirectWrites`` (``DIRECT``) is the write sink of a run that batches nothing: every write
an ``atomic_replace`` of its own.
"""
from __future__ import annotations

import errno
import os
import stat
import time
from contextlib import contextmanager

from ccm.lazyre import LazyPattern
from ccm.model.errors import ProviderError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any, ContextManager, Dict, Iterator, List, Optional, Set, Tuple

RUN_START = time.time()
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_MAX_HOPS = 40
_TEMP = LazyPattern(r"^\..*\.ccm-[0-9a-f]{12}\.tmp$")
_swept: Set[Tuple[int, int, str]] = set()


def temp_name(name: str) -> str:
    return f".{name[:200]}.ccm-{os.urandom(6).hex()}.tmp"


def _trusted_link(st: os.stat_result) -> bool:
    return st.st_uid in (0, os.geteuid())


def open_dir(path: str, *, create: bool = False, create_mode: int = 0o755) -> int:
    """A descriptor on directory ``path``, reached without following untrusted symlinks.

    With ``create``, missing directories are made (``create_mode``, owned by us).
    """
    if not os.path.isabs(path):
        path = os.path.abspath(path)
    stack: List[int] = [os.open("/", _DIR_FLAGS)]
    todo = [p for p in path.split("/") if p]
    hops = 0
    try:
        while todo:
            part = todo.pop(0)
            if part == ".":
                continue
            if part == "..":
                if len(stack) > 1:
                    os.close(stack.pop())
                continue
            here = stack[-1]
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=here)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, create_mode, dir_fd=here)
                except FileExistsError:
                    pass
                todo.insert(0, part)
                continue
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                st = os.lstat(part, dir_fd=here)
                if not stat.S_ISLNK(st.st_mode):
                    raise
                if not _trusted_link(st):
                    raise ProviderError(f"refusing to follow symlink {part!r} in {path}: it belongs to "
                                        f"uid {st.st_uid}") from None
                hops += 1
                if hops > _MAX_HOPS:
                    raise OSError(errno.ELOOP, "too many levels of symbolic links", path) from None
                target = os.readlink(part, dir_fd=here)
                if target.startswith("/"):
                    while len(stack) > 1:
                        os.close(stack.pop())
                todo = [p for p in target.split("/") if p] + todo
                continue
            stack.append(fd)
        result = stack.pop()
        return result
    finally:
        for fd in stack:
            os.close(fd)


@contextmanager
def parent_of(path: str, *, create: bool = False) -> Iterator[Tuple[int, str]]:
    """``(dir_fd, name)`` for the directory holding ``path`` and its last component."""
    parent, name = os.path.split(path)
    if not name:
        raise ProviderError(f"{path}: no file name")
    dfd = open_dir(parent or "/", create=create)
    try:
        yield dfd, name
    finally:
        os.close(dfd)


def sweep_stale(dfd: int, *, prefix: Optional[str] = None) -> None:
    """Once per run and directory: remove our leftovers of an earlier, killed run.

    Temp files (``temp_name``) by default; with ``prefix``, directories named so (the
    extraction staging dirs). Only entries we own and older than this process go.
    """
    import shutil

    try:
        st = os.fstat(dfd)
    except OSError:
        return
    key = (st.st_dev, st.st_ino, prefix or "")
    if key in _swept:
        return
    _swept.add(key)
    me = os.geteuid()
    try:
        names = os.listdir(dfd)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) if prefix else _TEMP.match(name)):
            continue
        try:
            est = os.lstat(name, dir_fd=dfd)
            if est.st_uid != me or est.st_mtime >= RUN_START:
                continue
            if prefix is None and stat.S_ISREG(est.st_mode):
                os.unlink(name, dir_fd=dfd)
            elif prefix is not None and stat.S_ISDIR(est.st_mode):
                shutil.rmtree(os.path.join(f"/proc/self/fd/{dfd}", name), ignore_errors=True)
        except OSError:
            continue


def _apply(fd: int, uid: Optional[int], gid: Optional[int], mode: Optional[int]) -> None:
    if uid is not None or gid is not None:
        os.fchown(fd, -1 if uid is None else uid, -1 if gid is None else gid)
    if mode is not None:
        os.fchmod(fd, mode)  # after chown, which clears setuid bits


def ensure_directory(path: str, mode: Optional[int], uid: Optional[int], gid: Optional[int], *,
                     create_mode: int = 0o700) -> None:
    """Create ``path`` as a directory (a symlink there is replaced) and set its attributes.

    A new directory is made with ``create_mode`` (under the umask); ``mode``, ``uid`` and
    ``gid`` are then applied through a descriptor (None leaves that attribute alone).
    """
    with parent_of(path, create=True) as (dfd, name):
        try:
            st: Optional[os.stat_result] = os.lstat(name, dir_fd=dfd)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            os.unlink(name, dir_fd=dfd)
            st = None
        if st is None:
            try:
                os.mkdir(name, create_mode, dir_fd=dfd)
            except FileExistsError:
                pass
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=dfd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise ProviderError(f"cannot create directory {path}: it is not a directory "
                                    f"(replaced while being managed?)") from None
            raise
        try:
            _apply(fd, uid, gid, mode)
        finally:
            os.close(fd)


def set_attributes(path: str, uid: Optional[int], gid: Optional[int], mode: Optional[int]) -> None:
    """Owner, group and mode of the file or directory at ``path``, never through a symlink."""
    with parent_of(path) as (dfd, name):
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(name, flags, dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ProviderError(f"{path} is a symlink; refusing to set attributes through it") from None
            if exc.errno != errno.EACCES or not hasattr(os, "O_PATH"):
                raise
            fd = os.open(name, os.O_PATH | os.O_NOFOLLOW, dir_fd=dfd)
            try:
                if stat.S_ISLNK(os.fstat(fd).st_mode):
                    raise ProviderError(f"{path} is a symlink; refusing to set attributes through it")
                proc = f"/proc/self/fd/{fd}"   # the magic link names this very inode
                if uid is not None or gid is not None:
                    os.chown(proc, -1 if uid is None else uid, -1 if gid is None else gid)
                if mode is not None:
                    os.chmod(proc, mode)
            finally:
                os.close(fd)
            return
        try:
            _apply(fd, uid, gid, mode)
        finally:
            os.close(fd)


def open_temp(dfd: int, name: str) -> Tuple[str, int]:
    """A new temp file for ``name`` in the directory ``dfd``: ``O_EXCL | O_NOFOLLOW``, 0600
    (its name and a write descriptor)."""
    tmp = temp_name(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    return tmp, os.open(tmp, flags, 0o600, dir_fd=dfd)


@contextmanager
def atomic_replace(path: str, *, mode: int, uid: Optional[int] = None, gid: Optional[int] = None,
                   ) -> Iterator[IO[bytes]]:
    """Yield a binary file whose content replaces ``path`` atomically when the block ends.

    The temp file is created ``O_EXCL | O_NOFOLLOW`` in the target's directory (reached
    through ``open_dir``), chowned and chmodded through its descriptor and renamed
    relative to the same directory descriptor. An exception in the block leaves ``path``
    untouched and removes the temp file.
    """
    with parent_of(path) as (dfd, name):
        sweep_stale(dfd)
        tmp, fd = open_temp(dfd, name)
        done = False
        try:
            with os.fdopen(fd, "wb") as out:
                yield out
                out.flush()
                os.fsync(out.fileno())
                _apply(out.fileno(), uid, gid, mode)
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            done = True
        finally:
            if not done:
                try:
                    os.unlink(tmp, dir_fd=dfd)
                except OSError:
                    pass


def remove(path: str, *, force: bool = False) -> None:
    """Remove a file, symlink or (empty unless ``force``) directory, never following a link."""
    import shutil

    with parent_of(path) as (dfd, name):
        st = os.lstat(name, dir_fd=dfd)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=dfd)
        elif force:
            shutil.rmtree(path)  # the fd-based rmtree: compares lstat and fstat, never follows links
        else:
            os.rmdir(name, dir_fd=dfd)


class StagedWrite:
    """One temp file of a ``DurableBatch``: written, owned and moded, not yet renamed."""

    __slots__ = ("path", "dfd", "name", "tmp", "fd", "stat", "checksum", "synced", "error")

    def __init__(self, path: str, dfd: int, name: str, tmp: str, fd: int):
        self.path, self.dfd, self.name, self.tmp, self.fd = path, dfd, name, tmp, fd
        self.stat: Optional[os.stat_result] = None   # fstat after fchown/fchmod (what rename publishes)
        self.checksum = ""                           # sha256 of the bytes written
        self.synced = False
        self.error: Optional[OSError] = None         # from the durability pass


class _HashingWriter:
    """The file object ``DurableBatch.stage`` yields: unbuffered writes, hashed on the way."""

    def __init__(self, fd: int):
        import hashlib

        self._fd = fd
        self._hash = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self._hash.update(data)
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        return len(data)

    def finish(self) -> str:
        return self._hash.hexdigest()


_SYNCFS_MIN = 16   # below this many files, fsync each one (no ctypes import, no fs-wide sync)
_syncfs: Any = None


def _syncfs_call() -> Any:
    """libc ``syncfs(2)`` where its result can be trusted, else False.

    ``os`` has no syncfs (ctypes then). Linux reports writeback errors from syncfs only
    since 5.8 (the error of the file system since the descriptor was opened); before, it
    always returns 0, so per-descriptor ``fsync`` is used. ``CCM_SYNC_MODE=fsync`` forces
    that (a host whose file systems hold much unrelated dirty data).
    """
    global _syncfs
    if _syncfs is None:
        _syncfs = False
        if os.environ.get("CCM_SYNC_MODE", "") != "fsync" and _kernel_at_least(5, 8):
            try:
                import ctypes

                _syncfs = ctypes.CDLL(None, use_errno=True).syncfs
            except (ImportError, OSError, AttributeError):
                _syncfs = False
    return _syncfs


def _kernel_at_least(major: int, minor: int) -> bool:
    import re

    uname = os.uname()
    if uname.sysname != "Linux":
        return False
    found = re.match(r"(\d+)\.(\d+)", uname.release)
    return found is not None and (int(found.group(1)), int(found.group(2))) >= (major, minor)


class DurableBatch:
    """Temp files staged now, made durable together (``sync``) and renamed in order later.

    Directory descriptors are opened once per parent (``open_dir``: no untrusted symlink
    followed) and kept until ``close``; every temp file is created ``O_EXCL | O_NOFOLLOW``
    relative to one of them, so the safe-fs guarantees of ``atomic_replace`` hold. At most
    ``limit`` writes are held (their descriptors stay open until ``close``).
    """

    def __init__(self, limit: int = 64):
        try:   # glibc answers with the soft RLIMIT_NOFILE, without loading the resource module
            soft = os.sysconf("SC_OPEN_MAX")
        except (OSError, ValueError):
            soft = 1024
        soft = 1 << 20 if soft < 0 else soft   # RLIM_INFINITY
        self.limit = max(2, min(limit, (soft - 64) // 2))   # half the free descriptors at most
        self.writes: List[StagedWrite] = []
        self._by_path: Dict[str, StagedWrite] = {}
        self._ancestors: Set[str] = set()
        self._dirs: Dict[str, int] = {}
        self._renamed_in: Set[int] = set()

    def __len__(self) -> int:
        return len(self.writes)

    @property
    def full(self) -> bool:
        return len(self.writes) >= self.limit

    @property
    def has_open_dirs(self) -> bool:
        return bool(self._dirs)

    def staged(self, path: str) -> Optional[StagedWrite]:
        return self._by_path.get(path)

    def conflicts(self, path: str) -> bool:
        """Whether ``path`` is, holds or lies under a staged target (order would show)."""
        if not self._by_path:   # nothing staged (every resource of a steady run)
            return False
        if path in self._by_path or path in self._ancestors:
            return True
        parent = os.path.dirname(path)
        while parent and parent != "/" and parent not in self._ancestors:   # those hold no target
            if parent in self._by_path:
                return True
            parent = os.path.dirname(parent)
        return False

    def _dir(self, parent: str) -> int:
        dfd = self._dirs.get(parent)
        if dfd is None:
            dfd = self._dirs[parent] = open_dir(parent)
            sweep_stale(dfd)
        return dfd

    @contextmanager
    def stage(self, path: str, *, mode: int, uid: Optional[int] = None, gid: Optional[int] = None,
              ) -> Iterator[_HashingWriter]:
        """Yield a writer whose bytes become ``path``'s content when the batch is installed.

        An exception in the block removes the temp file and stages nothing.
        """
        parent, name = os.path.split(path)
        if not name:
            raise ProviderError(f"{path}: no file name")
        if path in self._by_path:
            raise ProviderError(f"{path}: already staged in this batch")
        dfd = self._dir(parent or "/")
        tmp, fd = open_temp(dfd, name)
        write = StagedWrite(path, dfd, name, tmp, fd)
        ok = False
        try:
            out = _HashingWriter(fd)
            yield out
            write.checksum = out.finish()
            _apply(fd, uid, gid, mode)
            write.stat = os.fstat(fd)
            ok = True
        finally:
            if not ok:
                _drop(write)
        self.writes.append(write)
        self._by_path[path] = write
        while parent and parent != "/" and parent not in self._ancestors:
            self._ancestors.add(parent)
            parent = os.path.dirname(parent)

    def sync(self) -> None:
        """Make every staged temp file durable; a failure is kept on its write (``error``).

        Many files: one ``syncfs`` per file system, given the descriptor of the first temp
        file staged there (opened before any of their data was written, so a writeback
        error of any of them is reported); a failed syncfs falls back to an ``fsync`` per
        file, which tells which one failed. Few files: an ``fsync`` each.
        """
        todo = [w for w in self.writes if not w.synced and w.error is None]
        if len(todo) >= _SYNCFS_MIN and _syncfs_call():
            devices: Dict[int, List[StagedWrite]] = {}
            for w in todo:
                devices.setdefault(w.stat.st_dev if w.stat is not None else -1, []).append(w)
            todo = []
            for dev, group in devices.items():
                if dev != -1 and _syncfs(group[0].fd) == 0:
                    for w in group:
                        w.synced = True
                else:
                    todo += group
        for w in todo:
            try:
                os.fsync(w.fd)
                w.synced = True
            except OSError as exc:
                w.error = exc

    def install(self, write: StagedWrite) -> None:
        """Rename one synced temp file over its target (raises the OSError of a failure)."""
        if write.error is not None:
            raise write.error
        if not write.synced:
            raise OSError(errno.EIO, "staged file was not made durable")
        os.rename(write.tmp, write.name, src_dir_fd=write.dfd, dst_dir_fd=write.dfd)
        write.tmp = ""
        self._renamed_in.add(write.dfd)

    def close(self) -> None:
        """Make the renames durable (fsync of each directory), remove every temp file not
        installed, close all descriptors; the batch is empty and reusable afterwards."""
        error: Optional[OSError] = None
        for dfd in self._renamed_in:
            try:
                os.fsync(dfd)
            except OSError as exc:
                error = error or exc
        for w in self.writes:
            _drop(w)
        for dfd in self._dirs.values():
            try:
                os.close(dfd)
            except OSError:
                pass
        self.writes, self._by_path, self._ancestors = [], {}, set()
        self._dirs, self._renamed_in = {}, set()
        if error is not None:
            raise error


def _drop(write: StagedWrite) -> None:
    """Close a staged write's descriptor and remove its temp file unless it was renamed."""
    if write.fd >= 0:
        try:
            os.close(write.fd)
        except OSError:
            pass
        write.fd = -1
    if write.tmp:
        try:
            os.unlink(write.tmp, dir_fd=write.dfd)
        except OSError:
            pass
        write.tmp = ""


class DirectWrites:
    """The write sink (``ccm.model.run.RunSink``) of a run that batches nothing: each
    ``stage`` is an ``atomic_replace``, durable and renamed when its block ends, so nothing
    is ever held (``staged`` is None), every event settles as it comes and there is
    nothing to commit. The reference the batching sink (``ccm.apply.batch``) is held to."""

    __slots__ = ()
    pending: Tuple[()] = ()

    def stage(self, path: str, *, mode: int, uid: Optional[int] = None,
              gid: Optional[int] = None) -> ContextManager[IO[bytes]]:
        return atomic_replace(path, mode=mode, uid=uid, gid=gid)

    def staged(self, path: str) -> None:
        return None

    def admit(self, entry: Any) -> bool:
        return True

    def take(self, event: Any, props: Any, interrupted: bool) -> None:
        return None

    def commit(self) -> Tuple[()]:
        return ()

    def discard(self) -> None:
        pass


DIRECT = DirectWrites()
