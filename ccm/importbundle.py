"""Writing the import bundle the boot stub reads (``ccm/_bootstub.py``, "the import bundle").

What: at the end of a run from ccm.pyz that imported a ccm module its command's bundle
lacks (the first run of each command on a host, or a run that used a new resource type),
the bundle is written again: the modules already in it plus the new ones, each with the
code its loader gives (the tree's .pyc, or the source compiled), its path under
site-packages and whether it is a package. Written to a temp file in the tree's
``ccm/__pycache__`` (only when that is a directory of ours nobody else may write, reached
without a symlink), made durable, then renamed over the bundle: a reader sees the old
bundle or the new one, never part of one; two runs writing at once leave one of theirs.

Not: required. Any failure leaves things as they were (the next run imports normally).
"""
from __future__ import annotations

import os
import sys

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, Tuple

MAX_MODULES = 400   # more than every ccm module: a bundle never grows without bound


def save(stub: Any, path: str, site_packages: str, names: Iterable[str]) -> bool:
    """Write the bundle again with ``names``, ccm modules of this process it lacks
    (``stub.unbundled_modules()``); False when nothing was written."""
    from importlib.machinery import SourceFileLoader
    from importlib.util import MAGIC_NUMBER
    import marshal

    prefix = os.path.join(site_packages, "")
    new: Dict[str, Tuple[str, bool, Any]] = {}
    for name in names:
        spec = getattr(sys.modules.get(name), "__spec__", None)
        origin = getattr(spec, "origin", None) or ""
        if spec is None or not isinstance(spec.loader, SourceFileLoader) or not origin.startswith(prefix) \
                or not origin.endswith(".py"):
            continue   # not from the tree's sources (a namespace package, a test's stand-in)
        code = spec.loader.get_code(name)
        if code is not None:
            new[name] = (origin[len(prefix):], spec.submodule_search_locations is not None, code)
    if not new:
        return False
    codes = stub.read_import_bundle(path) or {}   # as it is now: another run may have added to it
    codes.update(new)
    if len(codes) > MAX_MODULES:
        return False
    data = stub.BUNDLE_HEADER + MAGIC_NUMBER + marshal.dumps(codes)
    if len(data) > stub.BUNDLE_LIMIT:
        return False
    return _write(path, data)


def _write(path: str, data: bytes) -> bool:
    """``data`` to ``path`` atomically and durably, inside a directory we own that nobody
    else may write (opened without following a symlink; the names used relative to it)."""
    import stat

    directory, name = os.path.split(path)
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    tmp = f"{name}.{os.getpid()}.tmp"
    try:
        st = os.fstat(dir_fd)
        if st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return False
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                     dir_fd=dir_fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            return False
        return True
    except OSError:
        return False
    finally:
        os.close(dir_fd)
