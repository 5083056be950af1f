"""The write sinks of ``ccm.fsafe``: ``DurableBatch`` (stage, sync, install, close) and
``DirectWrites`` (``DIRECT``, every write an ``atomic_replace`` of its own).

See ``ccm.fsafe`` for the guarantees; callers import from there.
"""
from __future__ import annotations

import errno
import os
from contextlib import contextmanager

from ccm.fsafe.paths import _apply, atomic_replace, open_dir, open_temp, sweep_stale
from ccm.model.errors import ProviderError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any, ContextManager, Dict, Iterator, List, Optional, Set, Tuple


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
