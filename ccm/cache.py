"""A private on-disk cache for work that repeats on every cron run.

What: small files under ``$CCM_CACHE_DIR``, else ``/var/cache/ccm`` for root, else
``$XDG_CACHE_HOME/ccm`` (``~/.cache/ccm``). Guarantees: the directory is used only when
it is ours and not writable by group or others, entries are only read when owned by us,
writes are atomic (``ccm.fsafe.atomic_replace``: temp file, fsync, rename, never through
a symlink), and any problem means "no cache" — callers then
do the work again. Not: a place for anything a run depends on for correctness.
"""
from __future__ import annotations

import os
import stat

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Optional


def directory() -> Optional[str]:
    if os.environ.get("CCM_CACHE_DIR"):
        base = os.environ["CCM_CACHE_DIR"]
    elif os.geteuid() == 0:
        base = "/var/cache/ccm"
    else:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(home, "ccm")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.lstat(base)   # a symlink is not our directory, whoever it points to
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return None
    except OSError:
        return None
    return base


def read(name: str) -> Optional[bytes]:
    base = directory()
    if not base:
        return None
    path = os.path.join(base, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read()
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def write(name: str, data: bytes, *, keep: Optional[int] = None, prefix: str = "") -> None:
    """Store ``data`` under ``name``; with ``keep``, only the newest ``keep`` entries whose
    names start with ``prefix`` survive."""
    from ccm.fsafe import atomic_replace
    from ccm.model.errors import CCMError

    base = directory()
    if not base:
        return
    try:
        with atomic_replace(os.path.join(base, name), mode=0o600) as fh:
            fh.write(data)
        if keep is not None:
            _prune(base, prefix, keep)
    except (OSError, CCMError):   # CCMError: fsafe refused a symlink on the way
        pass


def _prune(base: str, prefix: str, keep: int) -> None:
    entries = []
    for n in os.listdir(base):
        if n.startswith(prefix):
            try:
                entries.append((os.stat(os.path.join(base, n)).st_mtime, n))
            except OSError:
                continue
    entries.sort()
    for _mtime, n in entries[:-keep] if len(entries) > keep else []:
        try:
            os.unlink(os.path.join(base, n))
        except OSError:
            pass
