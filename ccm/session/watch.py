"""Linux inotify on one directory, through ctypes: which entries were created, renamed
or removed since the last look, so the directory store can skip re-listing a directory
in which nothing but its own writes happened.

An event is queued by the kernel inside the call that changed the directory (before that
``rename``/``unlink`` returns), so "no foreign event queued" means exactly what an equal
listing meant. Anything unexpected (no inotify, a full queue, the directory itself
removed or renamed) makes ``changes`` answer ``None``: list the directory again.
"""
from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys
import threading
import weakref

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Optional, Tuple

IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000   # a symlink swapped in at the path is not watched through
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
WATCHED = IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
RESCAN = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
_HEADER = struct.Struct("iIII")   # wd, mask, cookie, len
READ_SIZE = 1 << 16

_libc: Any = None
_libc_lock = threading.Lock()
_watches: "weakref.WeakSet[DirWatch]" = weakref.WeakSet()


def _inotify() -> Any:
    global _libc
    with _libc_lock:
        if _libc is None:
            try:
                lib = ctypes.CDLL(None, use_errno=True)
                lib.inotify_init1.argtypes = [ctypes.c_int]
                lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
                _libc = lib
            except (OSError, AttributeError):
                _libc = False
        return _libc


class DirWatch:
    """One inotify instance watching one directory (``open`` it; ``close`` when done)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pid = os.getpid()
        self._finalizer = weakref.finalize(self, os.close, fd)
        _watches.add(self)

    @classmethod
    def open(cls, directory: str) -> Optional["DirWatch"]:
        """A watch on ``directory``, or None (not Linux, no inotify, limits reached...)."""
        if not sys.platform.startswith("linux"):
            return None
        lib = _inotify()
        if not lib:
            return None
        fd = lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return None
        if lib.inotify_add_watch(fd, os.fsencode(directory), WATCHED | IN_ONLYDIR | IN_DONT_FOLLOW) < 0:
            os.close(fd)
            return None
        return cls(fd)

    @property
    def alive(self) -> bool:
        return self._finalizer.alive and self._pid == os.getpid()

    def changes(self) -> Optional[List[Tuple[int, str]]]:
        """(mask, entry name) of every change queued since the last call, or None when the
        directory must be listed again (and this watch no longer serves)."""
        if not self.alive:
            return None
        out: List[Tuple[int, str]] = []
        while True:
            try:
                data = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                return out
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                self.close()
                return None
            pos = 0
            while pos + _HEADER.size <= len(data):
                _wd, mask, _cookie, size = _HEADER.unpack_from(data, pos)
                pos += _HEADER.size
                name = data[pos:pos + size].split(b"\0", 1)[0]
                pos += size
                if mask & RESCAN:
                    self.close()
                    return None
                out.append((mask, os.fsdecode(name)))

    def close(self) -> None:
        if self._pid == os.getpid():
            self._finalizer()


def _forget_in_child() -> None:
    """A forked child never reads the parent's queue: its copy of the descriptor goes."""
    for watch in list(_watches):
        if watch._finalizer.detach() is not None:
            try:
                os.close(watch._fd)
            except OSError:
                pass
        watch._pid = -1


os.register_at_fork(after_in_child=_forget_in_child)
