"""The path primitives of ``ccm.fsafe``: directories reached descriptor by descriptor, temp
names and their sweep, attributes changed through descriptors, one atomic replace, removal.

See ``ccm.fsafe`` for the guarantees; callers import from there.
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
    from typing import IO, Iterator, List, Optional, Set, Tuple

RUN_START = time.time()
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_HOPS = 40
_TEMP = LazyPattern(r"^\..*\.ccm-[0-9a-f]{12}\.tmp$")
_swept: Set[Tuple[int, int, str]] = set()


def temp_name(name: str) -> str:
    return f".{name[:200]}.ccm-{os.urandom(6).hex()}.tmp"


def _trusted_link(st: os.stat_result) -> bool:
    return st.st_uid in (0, os.geteuid())


def _mkdir_at(part: str, mode: int, dir_fd: int) -> None:
    try:
        os.mkdir(part, mode, dir_fd=dir_fd)
    except FileExistsError:
        pass


def _followable_link(part: str, dir_fd: int, path: str) -> bool:
    """Is ``part`` (in ``dir_fd``, which ``os.open`` refused as a directory) a symlink we may
    follow? False when it is no symlink; ProviderError when someone else owns it."""
    st = os.lstat(part, dir_fd=dir_fd)
    if not stat.S_ISLNK(st.st_mode):
        return False
    if not _trusted_link(st):
        raise ProviderError(f"refusing to follow symlink {part!r} in {path}: it belongs to "
                            f"uid {st.st_uid}") from None
    return True


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
                _mkdir_at(part, create_mode, here)
                todo.insert(0, part)
                continue
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or not _followable_link(part, here, path):
                    raise
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
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ProviderError(f"{path} is a symlink; refusing to set attributes through it") from None
            if exc.errno != errno.EACCES:
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
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
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
