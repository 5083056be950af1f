"""Owner, group, mode, checksum and atomic-write helpers shared by the file, archive and
scaffold types.

``atomic_replace`` is the one way these providers write a file: a temp file in the
target's directory, fsynced, chowned, chmodded, then renamed over the target, so readers
see the old or the new content and never a partial one; the temp file never survives.
"""
from __future__ import annotations

import grp
import os
import pwd
from _thread import allocate_lock   # threading.Lock, without importing threading
from contextlib import contextmanager

from ccm.model.errors import ProviderError, ValidationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, Callable, Dict, Iterator, Optional, Tuple, Union

CHUNK = 1 << 20


def parse_mode(mode: Union[str, int], *, field: str = "mode") -> int:
    """``"644"``, ``"0644"``, ``"0o644"`` and 644-as-YAML-int all mean 0o644."""
    if isinstance(mode, bool):
        raise ValidationError(f"mode {mode!r} is not a valid octal number", field=field)
    text = str(mode).strip()
    if text[:2] in ("0o", "0O"):
        text = text[2:]
    if not text or any(c not in "01234567" for c in text):
        raise ValidationError(f'mode "{mode}" is not a valid octal number', field=field)
    value = int(text, 8)
    if value > 0o777:
        raise ValidationError(f'mode "{mode}" exceeds maximum value 0777', field=field)
    return value


def format_mode(mode: int) -> str:
    return f"{mode & 0o777:04o}"


def directory_mode(mode: int) -> int:
    """Add the execute bit to each of user/group/other that has read or write."""
    for shift in (6, 3, 0):
        if mode & (0o6 << shift):
            mode |= 0o1 << shift
    return mode


class _IdCache:
    """Successful passwd/group lookups, remembered for one run (thousands of file resources
    share a handful of owners). Misses are not: an earlier resource may create the user.

    The manager clears it when a top-level run starts (``clear_id_cache``), so a
    long-running agent sees users and groups changed between runs; a lock keeps
    concurrent workers safe.
    """

    def __init__(self) -> None:
        self._lock = allocate_lock()
        self._maps: Dict[str, Dict[Any, Any]] = {"uid": {}, "gid": {}, "user": {}, "group": {}}

    def lookup(self, kind: str, key: Any, find: Callable[[Any], Any]) -> Any:
        with self._lock:
            cached = self._maps[kind].get(key)
        if cached is not None:
            return cached
        try:
            value = find(key)
        except KeyError:
            return None
        with self._lock:
            self._maps[kind][key] = value
        return value

    def clear(self) -> None:
        with self._lock:
            for m in self._maps.values():
                m.clear()


_ids = _IdCache()


def clear_id_cache() -> None:
    """Forget remembered owner/group lookups (start of a run)."""
    _ids.clear()


def uid_for(owner: str) -> Optional[int]:
    if (owner.isascii() and owner.isdigit()):
        return int(owner)
    uid: Optional[int] = _ids.lookup("uid", owner, lambda n: pwd.getpwnam(n).pw_uid)
    return uid


def gid_for(group: str) -> Optional[int]:
    if (group.isascii() and group.isdigit()):
        return int(group)
    gid: Optional[int] = _ids.lookup("gid", group, lambda n: grp.getgrnam(n).gr_gid)
    return gid


def user_name(uid: int) -> str:
    name = _ids.lookup("user", uid, lambda n: pwd.getpwuid(n).pw_name)
    return str(uid) if name is None else str(name)


def group_name(gid: int) -> str:
    name = _ids.lookup("group", gid, lambda n: grp.getgrgid(n).gr_name)
    return str(gid) if name is None else str(name)


def owner_matches(observed: str, desired: str) -> bool:
    if observed == desired:
        return True
    a, b = uid_for(observed) if observed else None, uid_for(desired) if desired else None
    return a is not None and a == b


def group_matches(observed: str, desired: str) -> bool:
    if observed == desired:
        return True
    a, b = gid_for(observed) if observed else None, gid_for(desired) if desired else None
    return a is not None and a == b


def resolve_ids(owner: str, group: str) -> Tuple[int, int]:
    """Numeric ids for a desired owner and group; a missing one is a run-time failure."""
    uid = uid_for(owner)
    if uid is None:
        raise ProviderError(f'owner "{owner}" does not exist')
    gid = gid_for(group)
    if gid is None:
        raise ProviderError(f'group "{group}" does not exist')
    return uid, gid


def sha256_file(path: str) -> str:
    from ccm.digest import sha256

    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)   # what open(path, "rb") does, unbuffered
    try:
        h = sha256(size_hint=os.fstat(fd).st_size)
        while True:
            chunk = os.read(fd, 1 << 16)   # below malloc's mmap threshold, unlike CHUNK
            if not chunk:
                break
            h.update(chunk)
    finally:
        os.close(fd)
    return str(h.hexdigest())


@contextmanager
def atomic_replace(path: str, *, mode: int, uid: Optional[int] = None, gid: Optional[int] = None,
                   prefix: Optional[str] = None) -> Iterator[IO[bytes]]:
    """Yield a binary file whose content replaces ``path`` atomically when the block ends.

    An exception in the block (or an OSError while finishing) leaves ``path`` untouched.
    The work is ``ccm.fsafe.atomic_replace`` (descriptor-relative, no symlink followed);
    ``prefix`` is kept for callers and ignored (temp names are ``fsafe.temp_name``).
    """
    from ccm import fsafe

    with fsafe.atomic_replace(path, mode=mode, uid=uid, gid=gid) as out:
        yield out
