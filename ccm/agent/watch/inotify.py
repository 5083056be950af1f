"""inotify(7) through libc (ctypes): ``Inotify`` with add/remove watch and event reads.

Every watch is added with ``IN_DONT_FOLLOW | IN_ONLYDIR``: only directories are watched
(a directory watch reports its entries' changes, so a file is watched through its
parent, which also sees it replaced by rename), and a symlink is never followed.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

# what a managed path's drift looks like from its directory
DIR_MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
_HEADER = struct.Struct("iIII")   # wd, mask, cookie, len
READ_SIZE = 64 * 1024

_libc: Any = None


def libc() -> Any:
    global _libc
    if _libc is None:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        _libc = lib
    return _libc


def _oserror(what: str, path: str = "") -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}", path or None)


class Inotify:
    """One inotify instance (non-blocking, close-on-exec)."""

    def __init__(self) -> None:
        fd = libc().inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise _oserror("inotify_init1")
        self.fd: int = fd

    def fileno(self) -> int:
        return self.fd

    def add_watch(self, path: str, mask: int = DIR_MASK) -> int:
        """The watch descriptor of directory ``path``; ``OSError`` (ENOSPC: out of
        watches; ENOTDIR: not a directory, a symlink included; ENOENT)."""
        wd = libc().inotify_add_watch(self.fd, os.fsencode(path), mask)
        if wd < 0:
            raise _oserror("inotify_add_watch", path)
        return int(wd)

    def rm_watch(self, wd: int) -> None:
        if libc().inotify_rm_watch(self.fd, wd) < 0 and ctypes.get_errno() != errno.EINVAL:
            raise _oserror("inotify_rm_watch")

    def read(self) -> List[Tuple[int, int, str]]:
        """The queued events as (wd, mask, name); [] when none is queued."""
        try:
            data = os.read(self.fd, READ_SIZE)
        except BlockingIOError:
            return []
        return parse(data)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def parse(data: bytes) -> List[Tuple[int, int, str]]:
    """The events in ``data``, each (wd, mask, name) once: a write loop queues the same
    few events thousands of times, and a directory watch only needs to know that an
    entry changed (the masks of repeats are merged)."""
    merged: Dict[Tuple[int, bytes], int] = {}
    offset, size, end, unpack = 0, _HEADER.size, len(data), _HEADER.unpack_from
    while offset + size <= end:
        wd, mask, _cookie, length = unpack(data, offset)
        key = (wd, data[offset + size:offset + size + length].rstrip(b"\0"))
        merged[key] = merged.get(key, 0) | mask
        offset += size + length
    return [(wd, mask, os.fsdecode(raw)) for (wd, raw), mask in merged.items()]


def max_user_watches() -> Optional[int]:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None
